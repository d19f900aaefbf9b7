//! What a Gateway controller writes into status: which listeners accept
//! each HTTPRoute's parentRef (allowedRoutes namespaces and kinds, section
//! name, port, hostname intersection), the route's Accepted and
//! ResolvedRefs conditions with the API's reasons, and each listener's
//! attachedRoutes. Typed values only; the CLI words them.

use super::matching::intersect_hostnames;
use super::objects::*;
use crate::model::{Cluster, NamespacedName};
use serde::Serialize;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Condition {
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub status: &'static str,
    pub reason: &'static str,
}

fn cond(kind: &'static str, ok: bool, reason: &'static str) -> Condition {
    Condition {
        kind,
        status: if ok { "True" } else { "False" },
        reason,
    }
}

/// One parentRef's outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ParentStatus {
    pub route: NamespacedName,
    /// The Gateway named.
    pub gateway: NamespacedName,
    pub section: Option<String>,
    pub conditions: Vec<Condition>,
    /// (listener index, the hostnames the route serves there; empty: any).
    pub listeners: Vec<(usize, Vec<String>)>,
    /// The parentRef's index in the route (for the diagnostic's field).
    #[serde(skip)]
    pub parent_index: usize,
    /// The field of the first backendRef that does not resolve.
    #[serde(skip)]
    pub unresolved: Option<String>,
}

/// A RequestMirror filter's backend, as a backendRef (weight 1, no
/// filters), if `f` is one.
pub fn mirror_ref(f: &Filter) -> Option<BackendRef> {
    match f {
        Filter::RequestMirror { target, port, .. } => Some(BackendRef {
            target: target.clone(),
            port: *port,
            weight: 1,
            filters: Vec::new(),
        }),
        _ => None,
    }
}

/// Every object reference a route's rules make, with its field: the
/// backendRefs and the RequestMirror filters' backendRefs (rule-level and
/// per-backendRef), in rule order. All of them decide ResolvedRefs.
fn route_refs(r: &HttpRoute) -> Vec<(String, BackendRef)> {
    let mut out = Vec::new();
    let mirrors = |filters: &[Filter], at: &str, out: &mut Vec<(String, BackendRef)>| {
        for (k, f) in filters.iter().enumerate() {
            if let Some(b) = mirror_ref(f) {
                out.push((
                    format!("{at}.filters[{k}].requestMirror.backendRef.name"),
                    b,
                ));
            }
        }
    };
    for (i, rule) in r.rules.iter().enumerate() {
        let at = format!("spec.rules[{i}]");
        mirrors(&rule.filters, &at, &mut out);
        for (j, b) in rule.backends.iter().enumerate() {
            let bat = format!("{at}.backendRefs[{j}]");
            out.push((format!("{bat}.name"), b.clone()));
            mirrors(&b.filters, &bat, &mut out);
        }
    }
    out
}

/// Why a backendRef cannot be used (ResolvedRefs False), if it cannot.
pub fn backend_problem(
    objects: &Objects,
    exists: &dyn Fn(&NamespacedName, u16) -> bool,
    route_ns: &str,
    b: &BackendRef,
) -> Option<&'static str> {
    if !(b.target.group.is_empty() || b.target.group == "core") || b.target.kind != "Service" {
        return Some("InvalidKind");
    }
    let ns = b.target.namespace.as_deref().unwrap_or(route_ns);
    if ns != route_ns && !granted(objects, route_ns, ns, &b.target.name) {
        return Some("RefNotPermitted");
    }
    let id = NamespacedName::new(ns, b.target.name.clone());
    match b.port {
        Some(p) if exists(&id, p) => None,
        _ => Some("BackendNotFound"),
    }
}

/// Does a ReferenceGrant in `to_ns` let HTTPRoutes of `from_ns` refer to
/// Service `name`?
pub fn granted(objects: &Objects, from_ns: &str, to_ns: &str, name: &str) -> bool {
    objects.grants.iter().any(|g| {
        g.meta.id.namespace == to_ns
            && g.from.iter().any(|(grp, kind, ns)| {
                grp == "gateway.networking.k8s.io" && kind == "HTTPRoute" && ns == from_ns
            })
            && g.to.iter().any(|(grp, kind, n)| {
                grp.is_empty() && kind == "Service" && n.as_deref().is_none_or(|n| n == name)
            })
    })
}

const GATEWAY_GROUP: &str = "gateway.networking.k8s.io";

/// The route kinds a listener's protocol carries (`None`: a protocol the
/// Gateway API does not define, so the listener is not accepted).
fn protocol_kinds(p: &ListenerProtocol) -> Option<&'static [&'static str]> {
    match p {
        ListenerProtocol::Http | ListenerProtocol::Https => Some(&["HTTPRoute", "GRPCRoute"]),
        ListenerProtocol::Other(x) => match x.as_str() {
            "TLS" => Some(&["TLSRoute"]),
            "TCP" => Some(&["TCPRoute"]),
            "UDP" => Some(&["UDPRoute"]),
            _ => None,
        },
    }
}

/// The listener's `supportedKinds` (each in the Gateway API group): the
/// protocol's kinds, or those of `allowedRoutes.kinds` the protocol
/// carries; and whether `allowedRoutes.kinds` named any other
/// (ResolvedRefs False, InvalidRouteKinds).
pub fn supported_kinds(l: &Listener) -> (Vec<&'static str>, bool) {
    let carried = protocol_kinds(&l.protocol).unwrap_or(&[]);
    if l.kinds.is_empty() {
        return (carried.to_vec(), false);
    }
    let mut out = Vec::new();
    let mut invalid = false;
    for (g, k) in &l.kinds {
        match carried.iter().find(|c| **c == k.as_str()) {
            Some(c) if g == GATEWAY_GROUP => {
                if !out.contains(c) {
                    out.push(*c);
                }
            }
            _ => invalid = true,
        }
    }
    (out, invalid)
}

/// A listener's status as the controller writes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ListenerStatus {
    pub supported_kinds: Vec<&'static str>,
    /// Accepted, Conflicted, ResolvedRefs, Programmed.
    pub conditions: Vec<Condition>,
}

impl ListenerStatus {
    /// Is the listener programmed (does it take traffic)?
    pub fn programmed(&self) -> bool {
        self.conditions
            .iter()
            .any(|c| c.kind == "Programmed" && c.status == "True")
    }
}

/// A listener's conditions with the API's reasons: Accepted (False:
/// UnsupportedProtocol), Conflicted (True: HostnameConflict), ResolvedRefs
/// (False: the certificate's reason, else InvalidRouteKinds), Programmed
/// (False, Invalid, unless accepted, unconflicted and the certificate
/// resolves).
pub fn listener_status(
    l: &Listener,
    conflict: Option<&'static str>,
    certificate_problem: Option<&'static str>,
) -> ListenerStatus {
    let conflicted = conflict.is_some();
    let (supported_kinds, invalid_kinds) = supported_kinds(l);
    let accepted = protocol_kinds(&l.protocol).is_some();
    let resolved = match (certificate_problem, invalid_kinds) {
        (Some(p), _) => cond("ResolvedRefs", false, p),
        (None, true) => cond("ResolvedRefs", false, "InvalidRouteKinds"),
        (None, false) => cond("ResolvedRefs", true, "ResolvedRefs"),
    };
    let programmed = accepted && !conflicted && certificate_problem.is_none();
    ListenerStatus {
        supported_kinds,
        conditions: vec![
            if accepted {
                cond("Accepted", true, "Accepted")
            } else {
                cond("Accepted", false, "UnsupportedProtocol")
            },
            Condition {
                kind: "Conflicted",
                status: if conflicted { "True" } else { "False" },
                reason: conflict.unwrap_or("NoConflicts"),
            },
            resolved,
            if programmed {
                cond("Programmed", true, "Programmed")
            } else {
                cond("Programmed", false, "Invalid")
            },
        ],
    }
}

/// A Gateway's own conditions: without its GatewayClass no controller
/// writes any (the API's defaults, Unknown and Pending, stay); with an
/// `infrastructure.parametersRef` the controller cannot use, Accepted
/// False (InvalidParameters) and not Programmed; else Accepted (True, or
/// True/False with ListenersNotValid when some/all listeners are not
/// accepted) and Programmed (True when any listener is).
pub fn gateway_conditions(
    served: bool,
    invalid_parameters: bool,
    listeners: &[ListenerStatus],
) -> Vec<Condition> {
    if !served {
        return ["Accepted", "Programmed"]
            .map(|kind| Condition {
                kind,
                status: "Unknown",
                reason: "Pending",
            })
            .to_vec();
    }
    let accepted = |s: &ListenerStatus| {
        s.conditions
            .iter()
            .any(|c| c.kind == "Accepted" && c.status == "True")
    };
    if invalid_parameters {
        return vec![
            cond("Accepted", false, "InvalidParameters"),
            cond("Programmed", false, "Invalid"),
        ];
    }
    let valid = listeners.iter().filter(|s| accepted(s)).count();
    let gateway_accepted = if valid == listeners.len() {
        cond("Accepted", true, "Accepted")
    } else {
        cond("Accepted", valid > 0, "ListenersNotValid")
    };
    let programmed = if listeners.iter().any(ListenerStatus::programmed) {
        cond("Programmed", true, "Programmed")
    } else {
        cond("Programmed", false, "Invalid")
    };
    vec![gateway_accepted, programmed]
}

/// Fold what `spec.addresses` asks into a Gateway's conditions: an
/// unsupported address type makes it not Accepted (UnsupportedAddress), an
/// address the controller cannot give leaves it Accepted but not
/// Programmed (AddressNotUsable).
pub fn address_conditions(conditions: &mut [Condition], problem: Option<&'static str>) {
    for c in conditions.iter_mut() {
        match (c.kind, problem) {
            ("Accepted", Some("UnsupportedAddress")) if c.status == "True" => {
                *c = cond("Accepted", false, "UnsupportedAddress");
            }
            ("Programmed", Some("UnsupportedAddress")) if c.status == "True" => {
                *c = cond("Programmed", false, "Invalid");
            }
            ("Programmed", Some("AddressNotUsable")) => {
                *c = cond("Programmed", false, "AddressNotUsable");
            }
            _ => {}
        }
    }
}

/// Is the listener willing to take an HTTPRoute from `ns`?
fn allows(objects: &Objects, gw_ns: &str, l: &Listener, ns: &str) -> bool {
    let ns_ok = match &l.from {
        FromNamespaces::Same => ns == gw_ns,
        FromNamespaces::All => true,
        FromNamespaces::Selector(sel) => sel.matches(&objects.namespace_labels(ns)),
    };
    ns_ok && supported_kinds(l).0.contains(&"HTTPRoute")
}

/// Every HTTPRoute parentRef's status, in route then parentRef order.
pub fn route_status(objects: &Objects, cluster: &Cluster) -> Vec<ParentStatus> {
    let exists = |id: &NamespacedName, port: u16| {
        cluster
            .service(id)
            .is_some_and(|s| s.ports.iter().any(|p| p.port == port))
    };
    let mut out = Vec::new();
    for r in &objects.routes {
        let ns = &r.meta.id.namespace;
        let (unresolved, resolved) = route_refs(r)
            .iter()
            .find_map(|(at, b)| backend_problem(objects, &exists, ns, b).map(|p| (at.clone(), p)))
            .map_or((None, None), |(at, p)| (Some(at), Some(p)));
        let resolved_cond = cond(
            "ResolvedRefs",
            resolved.is_none(),
            resolved.unwrap_or("ResolvedRefs"),
        );
        for (parent_index, p) in r.parents.iter().enumerate() {
            if p.kind != "Gateway" || p.group != "gateway.networking.k8s.io" {
                continue;
            }
            let gw_id = NamespacedName::new(
                p.namespace.clone().unwrap_or_else(|| ns.clone()),
                p.name.clone(),
            );
            let Some(gw) = objects.gateways.iter().find(|g| g.meta.id == gw_id) else {
                out.push(ParentStatus {
                    route: r.meta.id.clone(),
                    gateway: gw_id,
                    section: p.section.clone(),
                    conditions: vec![
                        cond("Accepted", false, "NoMatchingParent"),
                        resolved_cond.clone(),
                    ],
                    listeners: Vec::new(),
                    parent_index,
                    unresolved: unresolved.clone(),
                });
                continue;
            };
            let named: Vec<(usize, &Listener)> = gw
                .listeners
                .iter()
                .enumerate()
                .filter(|(_, l)| p.section.as_deref().is_none_or(|s| s == l.name))
                .filter(|(_, l)| p.port.is_none_or(|port| port == l.port))
                .collect();
            let allowed: Vec<(usize, &Listener)> = named
                .iter()
                .copied()
                .filter(|(_, l)| allows(objects, &gw.meta.id.namespace, l, ns))
                .collect();
            let listeners: Vec<(usize, Vec<String>)> = allowed
                .iter()
                .filter_map(|(i, l)| {
                    intersect_hostnames(l.hostname.as_deref(), &r.hostnames).map(|h| (*i, h))
                })
                .collect();
            let accepted = if named.is_empty() {
                cond("Accepted", false, "NoMatchingParent")
            } else if allowed.is_empty() {
                cond("Accepted", false, "NotAllowedByListeners")
            } else if listeners.is_empty() {
                cond("Accepted", false, "NoMatchingListenerHostname")
            } else {
                cond("Accepted", true, "Accepted")
            };
            out.push(ParentStatus {
                route: r.meta.id.clone(),
                gateway: gw_id,
                section: p.section.clone(),
                conditions: vec![accepted, resolved_cond.clone()],
                listeners,
                parent_index,
                unresolved: unresolved.clone(),
            });
        }
    }
    out
}

/// A listener's attachedRoutes: routes accepted on it.
pub fn attached_routes(statuses: &[ParentStatus], gw: &NamespacedName, listener: usize) -> usize {
    let mut routes: Vec<&NamespacedName> = statuses
        .iter()
        .filter(|s| &s.gateway == gw && s.listeners.iter().any(|(i, _)| *i == listener))
        .map(|s| &s.route)
        .collect();
    routes.dedup();
    routes.len()
}

/// A listener's ResolvedRefs: its certificate Secret exists, is a TLS
/// Secret, and is in the Gateway's namespace or granted to it.
pub fn listener_certificate(
    objects: &Objects,
    gw_ns: &str,
    l: &Listener,
) -> Result<Option<NamespacedName>, &'static str> {
    if l.protocol != ListenerProtocol::Https {
        return Ok(None);
    }
    let Some(r) = l.certificate_refs.first() else {
        return Err("InvalidCertificateRef");
    };
    if !(r.group.is_empty() || r.group == "core") || r.kind != "Secret" {
        return Err("InvalidCertificateRef");
    }
    let ns = r.namespace.as_deref().unwrap_or(gw_ns);
    if ns != gw_ns
        && !objects.grants.iter().any(|g| {
            g.meta.id.namespace == ns
                && g.from
                    .iter()
                    .any(|(grp, k, f)| grp == GATEWAY_GROUP && k == "Gateway" && f == gw_ns)
                && g.to.iter().any(|(grp, k, n)| {
                    grp.is_empty() && k == "Secret" && n.as_deref().is_none_or(|n| n == r.name)
                })
        })
    {
        return Err("RefNotPermitted");
    }
    let id = NamespacedName::new(ns, r.name.clone());
    match objects.secrets.get(&id) {
        Some(true) => Ok(Some(id)),
        _ => Err("InvalidCertificateRef"),
    }
}

/// Ingress backends that name a Service, or a port of it, that does not
/// exist (the API server accepts them; the controller finds no endpoints
/// and answers 503 for those paths), as warnings at the backend's
/// `service.name`. [`crate::model::locate_diagnostics`] places them.
pub fn ingress_diagnostics(
    objects: &Objects,
    cluster: &Cluster,
) -> Vec<crate::util::diag::Diagnostic> {
    use crate::model::routing::IngressBackend;
    use crate::model::PortRef;
    use crate::util::diag::Diagnostic;
    let mut out = Vec::new();
    for ing in &objects.ingresses {
        let ns = &ing.meta.id.namespace;
        let paths = ing
            .rules
            .iter()
            .flat_map(|r| &r.paths)
            .map(|p| (&p.backend, p.backend_field.clone(), "path"));
        let default = ing
            .default_backend
            .as_ref()
            .map(|b| (b, "spec.defaultBackend".to_string(), "defaultBackend"));
        for (b, field, what) in paths.chain(default) {
            let IngressBackend::Service { name, port } = b else {
                continue;
            };
            let id = NamespacedName::new(ns.clone(), name.clone());
            let problem = match cluster.service(&id) {
                None => format!("backend Service {id} does not exist"),
                Some(s) => {
                    let has = s.ports.iter().any(|p| match port {
                        PortRef::Number(n) => p.port == *n,
                        PortRef::Name(n) => p.name == *n,
                    });
                    if has {
                        continue;
                    }
                    format!("backend Service {id} has no port {port}")
                }
            };
            let mut d = Diagnostic::warning(format!(
                "{problem}: the controller answers 503 for this {what}"
            ))
            .with_hint("name an existing Service and one of its ports");
            d.object = Some(format!("Ingress/{}", ing.meta.id));
            d.field = Some(field);
            out.push(d);
        }
    }
    out
}
