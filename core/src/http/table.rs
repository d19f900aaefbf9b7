//! The routing table, compiled once from the routing objects: one table
//! per entry point (an IngressClass, a Gateway), with rules in the order
//! the controller evaluates them. The walk reads it; nothing here looks at
//! a request. Stable order throughout (sorted `Vec`s, `BTreeMap`).

use super::matching::rank_len;
use super::objects::*;
use super::status::{self, ParentStatus};
pub use super::values::EntryPoint;
use crate::model::{Cluster, NamespacedName, PortRef};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// A Service port a rule sends to.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ServiceTarget {
    pub service: NamespacedName,
    pub port: PortRef,
}

/// Which implementation serves an entry point (changes its defaults).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Implementation {
    /// ingress-nginx: `k8s.io/ingress-nginx`.
    IngressNginx,
    /// Envoy Gateway: `gateway.envoyproxy.io/gatewayclass-controller`.
    EnvoyGateway,
    /// Any other controller name (its proxy is modelled as a generic one).
    Other(String),
}

impl Implementation {
    pub fn of(controller: &str) -> Implementation {
        match controller {
            "k8s.io/ingress-nginx" => Implementation::IngressNginx,
            "gateway.envoyproxy.io/gatewayclass-controller" => Implementation::EnvoyGateway,
            other => Implementation::Other(other.to_string()),
        }
    }
}

/// One Ingress path rule in evaluation order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IngressPathEntry {
    pub path: String,
    pub path_type: PathType,
    /// `None` for a `resource` backend (not a Service).
    pub backend: Option<ServiceTarget>,
    pub ingress: NamespacedName,
    pub rule: usize,
    pub index: usize,
    /// ingress-nginx `service-upstream: "true"`: to the ClusterIP.
    pub service_upstream: bool,
    /// ingress-nginx `rewrite-target`, when set and not the path itself.
    pub rewrite: Option<String>,
    /// ingress-nginx `use-regex: "true"` on this path's Ingress.
    pub use_regex: bool,
    /// On a host with regular expressions, this path's location and
    /// rewrite, compiled once.
    #[serde(skip)]
    pub regex: Option<super::nginx_regex::Location>,
}

/// The rules of one host (`None`: rules without a host).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HostEntry {
    pub host: Option<String>,
    pub paths: Vec<IngressPathEntry>,
    /// The defaultBackend of the (oldest) Ingress that names this host.
    pub default_backend: Option<(NamespacedName, ServiceTarget)>,
    /// The TLS Secret for this host, when an Ingress lists it under `tls`.
    pub tls_secret: Option<NamespacedName>,
    /// ingress-nginx redirects HTTP to HTTPS for hosts with TLS (308).
    pub ssl_redirect: bool,
    /// ingress-nginx: the Ingress whose `use-regex` or `rewrite-target`
    /// makes every path of this host a regular expression
    /// ([`super::nginx_regex`]); the paths are then in nginx's order.
    pub regex_by: Option<NamespacedName>,
}

/// An Ingress ingress-nginx's admission webhook denies: its `Exact` or
/// `Prefix` paths that are not plain paths, as (rule, path index, path,
/// type). A denied Ingress is not created, so it routes nothing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct DeniedIngress {
    pub ingress: NamespacedName,
    pub paths: Vec<(usize, usize, String, PathType)>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IngressTable {
    pub class: String,
    /// Does any controller serve this class? (An IngressClass object, an
    /// ingress-nginx Deployment for it, or the legacy annotation naming a
    /// class the cloud's or ingress-nginx's controller answers to.) An
    /// Ingress of a class nobody serves gets no address and no traffic.
    pub served: bool,
    pub controller: String,
    pub implementation: Implementation,
    /// Exact hosts, then wildcards, then the host-less rules.
    pub hosts: Vec<HostEntry>,
    /// The catch-all defaultBackend (oldest Ingress that sets one).
    pub default_backend: Option<(NamespacedName, ServiceTarget)>,
    pub ingresses: Vec<NamespacedName>,
    /// Ingresses of this class the controller's admission webhook denies.
    pub denied: Vec<DeniedIngress>,
}

/// One HTTPRoute match as attached to a listener.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CompiledMatch {
    pub route: NamespacedName,
    pub rule: usize,
    pub index: usize,
    /// The hostnames the route serves on this listener (empty: any).
    pub hostnames: Vec<String>,
    pub matching: RouteMatch,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ListenerTable {
    pub listener: Listener,
    /// The TLS certificate (HTTPS listeners whose reference resolves).
    pub certificate: Option<NamespacedName>,
    /// Why the certificate does not resolve (ResolvedRefs False).
    pub certificate_problem: Option<&'static str>,
    pub attached_routes: usize,
    /// Another listener has the same port, protocol and hostname
    /// (Conflicted: HostnameConflict); a conflicted listener is not
    /// programmed, so no request reaches it.
    pub conflicted: bool,
    /// The listener's status: supportedKinds and conditions.
    pub status: status::ListenerStatus,
    /// Sorted by the API's precedence except the hostname's (which depends
    /// on the request's host and is applied first by the walk).
    pub matches: Vec<CompiledMatch>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GatewayTable {
    pub gateway: NamespacedName,
    pub class: String,
    /// Is there a GatewayClass of that name? Without one no controller
    /// programs the Gateway: no address, no traffic.
    pub served: bool,
    pub controller: String,
    pub implementation: Implementation,
    pub listeners: Vec<ListenerTable>,
    /// The Gateway's Accepted and Programmed conditions.
    pub conditions: Vec<status::Condition>,
    /// The address `spec.addresses` asks for, when the controller can give
    /// it (the proxy's load balancer then has it).
    pub static_address: Option<std::net::IpAddr>,
    /// Envoy Gateway `routingType: Service`: to the ClusterIP.
    pub service_routing: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Table {
    Ingress(IngressTable),
    Gateway(GatewayTable),
}

impl Table {
    /// Does a controller serve this entry point?
    pub fn served(&self) -> bool {
        match self {
            Table::Ingress(t) => t.served,
            Table::Gateway(g) => g.served,
        }
    }
}

/// Every entry point's table, the routes' status, and the objects.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RoutingTable {
    pub tables: BTreeMap<EntryPoint, Table>,
    pub route_status: Vec<ParentStatus>,
    pub objects: Objects,
}

impl RoutingTable {
    /// The HTTPRoute rule a listener's match belongs to.
    pub fn rule_of(&self, m: &CompiledMatch) -> Option<&RouteRule> {
        self.objects
            .routes
            .iter()
            .find(|r| r.meta.id == m.route)
            .and_then(|r| r.rules.get(m.rule))
    }
}

/// The IngressClass an Ingress belongs to: `spec.ingressClassName`, else
/// the legacy annotation, else the one default IngressClass.
pub fn ingress_class_of(objects: &Objects, ing: &Ingress) -> Option<String> {
    if let Some(c) = ing.class_name.as_ref().or(ing.class_annotation.as_ref()) {
        return Some(c.clone());
    }
    default_ingress_class(objects).map(|c| c.name().to_string())
}

/// The class the DefaultIngressClass admission plugin gives an Ingress
/// that names none: the default class; of several, the newest (then the
/// lowest name), as the plugin has chosen since Kubernetes 1.25.
pub fn default_ingress_class(objects: &Objects) -> Option<&IngressClass> {
    objects
        .ingress_classes
        .iter()
        .filter(|c| c.is_default)
        .max_by_key(|c| (created_key(&c.meta), std::cmp::Reverse(c.name())))
}

fn created_key(m: &Meta) -> (Option<String>, (usize, usize, usize)) {
    // An object without a timestamp counts as created in input order,
    // after any that has one.
    // Equal timestamps tie, and `namespace/name` decides.
    match &m.created {
        Some(t) => (Some(t.clone()), (0, 0, 0)),
        None => (Some("~".into()), m.order),
    }
}

fn target(ns: &str, b: &IngressBackend) -> Option<ServiceTarget> {
    match b {
        IngressBackend::Service { name, port } => Some(ServiceTarget {
            service: NamespacedName::new(ns, name.clone()),
            port: port.clone(),
        }),
        IngressBackend::Resource { .. } => None,
    }
}

fn ingress_controller(objects: &Objects, class: &str) -> String {
    if let Some(c) = objects.ingress_classes.iter().find(|c| c.name() == class) {
        return c.controller.clone();
    }
    for m in &objects.markers {
        if let ControllerMarker::IngressNginx {
            controller_class,
            ingress_class,
            ..
        } = m
        {
            if ingress_class == class {
                return controller_class.clone();
            }
        }
    }
    match class {
        "nginx" => "k8s.io/ingress-nginx".into(),
        "gce" => "k8s.io/ingress-gce".into(),
        other => format!("unknown/{other}"),
    }
}

fn compile_ingress(objects: &Objects, class: &str) -> IngressTable {
    let controller = ingress_controller(objects, class);
    let implementation = Implementation::of(&controller);
    let nginx = implementation == Implementation::IngressNginx;
    let mut ings: Vec<&Ingress> = objects
        .ingresses
        .iter()
        .filter(|i| ingress_class_of(objects, i).as_deref() == Some(class))
        .collect();
    crate::util::order::sort_by_key(&mut ings, |i| (created_key(&i.meta), i.meta.id.clone()));
    let mut denied = Vec::new();
    if nginx {
        ings.retain(|i| match strict_denial(i) {
            Some(d) => {
                denied.push(d);
                false
            }
            None => true,
        });
    }
    let mut hosts: Vec<HostEntry> = Vec::new();
    let mut default_backend = None;
    for ing in &ings {
        add_ingress(&mut hosts, &mut default_backend, ing, nginx);
    }
    for h in &mut hosts {
        order_paths(h);
    }
    crate::util::order::sort_by_key(&mut hosts, |h| match &h.host {
        Some(x) if !x.starts_with('*') => (0, std::cmp::Reverse(x.len())),
        Some(x) => (1, std::cmp::Reverse(x.len())),
        None => (2, std::cmp::Reverse(0)),
    });
    let served = objects.ingress_classes.iter().any(|c| c.name() == class)
        || objects.markers.iter().any(|m| {
            matches!(m, ControllerMarker::IngressNginx { ingress_class, .. } if ingress_class == class)
        })
        || (matches!(class, "nginx" | "gce")
            && ings
                .iter()
                .any(|i| i.class_name.is_none() && i.class_annotation.as_deref() == Some(class)));
    IngressTable {
        class: class.to_string(),
        served,
        controller,
        implementation,
        hosts,
        default_backend,
        ingresses: ings.iter().map(|i| i.meta.id.clone()).collect(),
        denied,
    }
}

/// One Ingress's rules, TLS and defaultBackend merged into the class's
/// hosts (the first, oldest, Ingress to claim a host and path keeps it).
fn add_ingress(
    hosts: &mut Vec<HostEntry>,
    default_backend: &mut Option<(NamespacedName, ServiceTarget)>,
    ing: &Ingress,
    nginx: bool,
) {
    let ns = &ing.meta.id.namespace;
    let upstream = ing
        .meta
        .annotations
        .get("nginx.ingress.kubernetes.io/service-upstream")
        .is_some_and(|v| v == "true")
        && nginx;
    let redirect = ing
        .meta
        .annotations
        .get("nginx.ingress.kubernetes.io/ssl-redirect")
        .is_none_or(|v| v != "false")
        && nginx;
    let nginx_annotation = |k: &str| {
        ing.meta
            .annotations
            .get(&format!("nginx.ingress.kubernetes.io/{k}"))
    };
    let use_regex = nginx
        && super::nginx_regex::annotation_true(nginx_annotation(super::nginx_regex::USE_REGEX));
    let rewrite_target =
        nginx_annotation(super::nginx_regex::REWRITE_TARGET).filter(|t| nginx && !t.is_empty());
    let own_default = ing
        .default_backend
        .as_ref()
        .and_then(|b| target(ns, b))
        .map(|t| (ing.meta.id.clone(), t));
    if default_backend.is_none() {
        *default_backend = own_default.clone();
    }
    for (ri, r) in ing.rules.iter().enumerate() {
        let i = match hosts.iter().position(|h| h.host == r.host) {
            Some(i) => i,
            None => {
                hosts.push(HostEntry {
                    host: r.host.clone(),
                    paths: Vec::new(),
                    default_backend: None,
                    tls_secret: None,
                    ssl_redirect: false,
                    regex_by: None,
                });
                hosts.len() - 1
            }
        };
        let h = &mut hosts[i];
        if h.default_backend.is_none() {
            h.default_backend = own_default.clone();
        }
        for (pi, p) in r.paths.iter().enumerate() {
            // The first (oldest) Ingress to claim a host and path keeps it.
            if h.paths
                .iter()
                .any(|x| x.path == p.path && x.path_type == p.path_type)
            {
                continue;
            }
            h.paths.push(IngressPathEntry {
                path: p.path.clone(),
                path_type: p.path_type,
                backend: target(ns, &p.backend),
                ingress: ing.meta.id.clone(),
                rule: ri,
                index: pi,
                service_upstream: upstream,
                rewrite: rewrite_target
                    .filter(|t| {
                        **t != if p.path.is_empty() {
                            "/"
                        } else {
                            p.path.as_str()
                        }
                    })
                    .cloned(),
                use_regex,
                regex: None,
            });
        }
    }
    for t in &ing.tls {
        // Without a secretName the host is served with the
        // controller's own certificate, and still redirected to HTTPS.
        let secret = t.secret.as_ref();
        // No hosts: the certificate serves every host of this Ingress's
        // rules (the API's "wildcard host setting" of the controller).
        let own: Vec<Option<String>> = ing.rules.iter().map(|r| r.host.clone()).collect();
        for h in hosts.iter_mut() {
            let listed = match &h.host {
                Some(x) if t.hosts.is_empty() => own.contains(&h.host) && !x.is_empty(),
                Some(x) => t.hosts.contains(x),
                None => false,
            };
            match secret {
                Some(secret) if listed && h.tls_secret.is_none() => {
                    h.tls_secret = Some(NamespacedName::new(ns.clone(), secret.clone()));
                    h.ssl_redirect = redirect;
                }
                None if listed => h.ssl_redirect |= redirect,
                _ => {}
            }
        }
    }
}

/// A host's paths in the order its controller tries them: nginx's
/// regular-expression order on a host with regular expressions, else
/// longest first with Exact before Prefix.
fn order_paths(h: &mut HostEntry) {
    h.regex_by = h
        .paths
        .iter()
        .find(|p| p.use_regex || p.rewrite.is_some())
        .map(|p| p.ingress.clone());
    if h.regex_by.is_some() {
        crate::util::order::sort_by_key(&mut h.paths, |p| {
            super::nginx_regex::location_order(&p.path)
        });
        for p in &mut h.paths {
            p.regex = Some(super::nginx_regex::Location::new(
                &p.path,
                p.rewrite.as_deref(),
            ));
        }
        return;
    }
    // Longest path first; at equal length Exact before Prefix; then
    // the oldest Ingress (stable sort keeps that order).
    crate::util::order::sort_by_key(&mut h.paths, |p| {
        (
            std::cmp::Reverse(rank_len(&p.path)),
            p.path_type != PathType::Exact,
        )
    });
}

/// The paths ingress-nginx's admission webhook refuses in `ing`, if any.
fn strict_denial(ing: &Ingress) -> Option<DeniedIngress> {
    let paths: Vec<(usize, usize, String, PathType)> = ing
        .rules
        .iter()
        .enumerate()
        .flat_map(|(ri, r)| {
            r.paths
                .iter()
                .enumerate()
                .filter(|(_, p)| !super::nginx_regex::strict_path_ok(&p.path, p.path_type))
                .map(move |(pi, p)| (ri, pi, p.path.clone(), p.path_type))
        })
        .collect();
    (!paths.is_empty()).then(|| DeniedIngress {
        ingress: ing.meta.id.clone(),
        paths,
    })
}

/// The precedence of a match within a listener, hostname aside: Exact
/// path, longest prefix, method, most headers, most query parameters,
/// oldest route, `namespace/name`, rule order, match order.
type MatchKey = (
    u8,
    std::cmp::Reverse<usize>,
    bool,
    std::cmp::Reverse<usize>,
    std::cmp::Reverse<usize>,
    (Option<String>, (usize, usize, usize)),
    NamespacedName,
    usize,
    usize,
);

fn match_key(r: &HttpRoute, m: &CompiledMatch) -> MatchKey {
    let (kind, len) = match &m.matching.path {
        PathMatch::Exact(p) => (0, p.len()),
        PathMatch::Prefix(p) => (1, p.trim_end_matches('/').len()),
        PathMatch::Regex(p) => (2, p.len()),
    };
    (
        kind,
        std::cmp::Reverse(len),
        m.matching.method.is_none(),
        std::cmp::Reverse(m.matching.headers.len()),
        std::cmp::Reverse(m.matching.query.len()),
        created_key(&r.meta),
        r.meta.id.clone(),
        m.rule,
        m.index,
    )
}

/// Does the Gateway's `infrastructure.parametersRef` name something its
/// controller cannot use? Envoy Gateway takes an `EnvoyProxy` of its own
/// namespace; what another controller takes kpv does not know, so it does
/// not judge.
fn invalid_parameters(objects: &Objects, gw: &Gateway, imp: &Implementation) -> bool {
    let Some((group, kind, name)) = &gw.parameters_ref else {
        return false;
    };
    match imp {
        Implementation::EnvoyGateway => {
            !(group == "gateway.envoyproxy.io"
                && kind == "EnvoyProxy"
                && objects.envoy_proxies.contains(&NamespacedName::new(
                    gw.meta.id.namespace.clone(),
                    name.clone(),
                )))
        }
        _ => false,
    }
}

/// What `spec.addresses` asks of the controller: an address type it does
/// not support (Accepted False, UnsupportedAddress), an address it cannot
/// give (Programmed False, AddressNotUsable), or the address it gives.
/// kpv's controllers take IP addresses from the load-balancer range; an
/// entry without a value lets them choose.
fn static_address(
    gw: &Gateway,
    cluster: &Cluster,
) -> (Option<std::net::IpAddr>, Option<&'static str>) {
    let mut chosen = None;
    let mut problem = None;
    for (ty, value) in &gw.addresses {
        if ty != "IPAddress" {
            return (None, Some("UnsupportedAddress"));
        }
        let Some(v) = value else { continue };
        match v.parse::<std::net::IpAddr>() {
            Ok(ip) if super::addresses::usable_static_address(cluster, ip) => {
                chosen = chosen.or(Some(ip));
            }
            _ => problem = Some("AddressNotUsable"),
        }
    }
    (chosen, problem)
}

/// Why listener `li` conflicts with another of its Gateway (the
/// Conflicted condition's reason), if it does: a protocol that cannot share
/// its port (HTTP beside HTTPS or TLS; HTTPS and TLS both end in TLS and
/// may), else the same port, protocol and hostname.
fn listener_conflict(gw: &Gateway, li: usize) -> Option<&'static str> {
    let l = gw.listeners.get(li)?;
    let tls = |p: &ListenerProtocol| match p {
        ListenerProtocol::Https => true,
        ListenerProtocol::Other(x) => x == "TLS",
        ListenerProtocol::Http => false,
    };
    let others = || {
        gw.listeners
            .iter()
            .enumerate()
            .filter(move |(j, o)| *j != li && o.port == l.port)
            .map(|(_, o)| o)
    };
    if others().any(|o| o.protocol != l.protocol && !(tls(&o.protocol) && tls(&l.protocol))) {
        return Some("ProtocolConflict");
    }
    others()
        .any(|o| o.protocol == l.protocol && o.hostname == l.hostname)
        .then_some("HostnameConflict")
}

fn compile_gateway(
    objects: &Objects,
    cluster: &Cluster,
    gw: &Gateway,
    statuses: &[ParentStatus],
) -> GatewayTable {
    let class = objects.gateway_classes.iter().find(|c| c.name == gw.class);
    let controller = class.map(|c| c.controller.clone()).unwrap_or_default();
    let implementation = Implementation::of(&controller);
    let service_routing = implementation == Implementation::EnvoyGateway
        && class
            .and_then(|c| c.envoy_proxy.as_ref())
            .is_some_and(|p| objects.envoy_service_routing.contains(p));
    // Looked up once per status, not searched: 10,000 routes compile in
    // linear-logarithmic time.
    let routes: BTreeMap<&NamespacedName, &HttpRoute> =
        objects.routes.iter().map(|r| (&r.meta.id, r)).collect();
    let mine: Vec<&ParentStatus> = statuses
        .iter()
        .filter(|s| s.gateway == gw.meta.id)
        .collect();
    let mut listeners = Vec::new();
    for (li, l) in gw.listeners.iter().enumerate() {
        let (certificate, certificate_problem) =
            match status::listener_certificate(objects, &gw.meta.id.namespace, l) {
                Ok(c) => (c, None),
                Err(e) => (None, Some(e)),
            };
        let mut keyed: Vec<(MatchKey, CompiledMatch)> = Vec::new();
        let mut seen: BTreeSet<&NamespacedName> = BTreeSet::new();
        for s in &mine {
            let Some((_, hostnames)) = s.listeners.iter().find(|(i, _)| *i == li) else {
                continue;
            };
            let Some(r) = routes.get(&s.route) else {
                continue;
            };
            if !seen.insert(&r.meta.id) {
                continue; // two parentRefs to the same listener
            }
            for (ri, rule) in r.rules.iter().enumerate() {
                for (mi, m) in rule.matches.iter().enumerate() {
                    let cm = CompiledMatch {
                        route: r.meta.id.clone(),
                        rule: ri,
                        index: mi,
                        hostnames: hostnames.clone(),
                        matching: m.clone(),
                    };
                    keyed.push((match_key(r, &cm), cm));
                }
            }
        }
        crate::util::order::sort_by_key(&mut keyed, |(k, _)| k.clone());
        let conflict = listener_conflict(gw, li);
        let conflicted = conflict.is_some();
        listeners.push(ListenerTable {
            listener: l.clone(),
            certificate,
            certificate_problem,
            attached_routes: status::attached_routes(statuses, &gw.meta.id, li),
            conflicted,
            status: status::listener_status(l, conflict, certificate_problem),
            matches: keyed.into_iter().map(|(_, m)| m).collect(),
        });
    }
    let listener_status: Vec<status::ListenerStatus> =
        listeners.iter().map(|l| l.status.clone()).collect();
    let (static_address, address_problem) = static_address(gw, cluster);
    let mut conditions = status::gateway_conditions(
        class.is_some(),
        invalid_parameters(objects, gw, &implementation),
        &listener_status,
    );
    if class.is_some() {
        status::address_conditions(&mut conditions, address_problem);
    }
    GatewayTable {
        gateway: gw.meta.id.clone(),
        class: gw.class.clone(),
        served: class.is_some(),
        conditions,
        static_address,
        controller,
        implementation,
        listeners,
        service_routing,
    }
}

/// Compile every entry point's table.
pub fn compile(objects: &Objects, cluster: &Cluster) -> RoutingTable {
    let route_status = status::route_status(objects, cluster);
    let mut tables = BTreeMap::new();
    let mut classes: Vec<String> = objects
        .ingresses
        .iter()
        .filter_map(|i| ingress_class_of(objects, i))
        .chain(objects.ingress_classes.iter().map(|c| c.name().to_string()))
        .collect();
    crate::util::order::sort(&mut classes);
    classes.dedup();
    for c in classes {
        tables.insert(
            EntryPoint::IngressClass(c.clone()),
            Table::Ingress(compile_ingress(objects, &c)),
        );
    }
    for gw in &objects.gateways {
        tables.insert(
            EntryPoint::Gateway(gw.meta.id.clone()),
            Table::Gateway(compile_gateway(objects, cluster, gw, &route_status)),
        );
    }
    RoutingTable {
        tables,
        route_status,
        objects: objects.clone(),
    }
}
