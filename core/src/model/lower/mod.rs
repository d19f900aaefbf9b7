//! Lowering: YAML documents → typed, complete Kubernetes objects.
//!
//! Every value is validated once here (IPs, CIDRs, ports, enums) and gets a
//! diagnostic with document, object path, field and position when it is bad.
//! What the API server would fill in is filled in deterministically: Cluster
//! IPs and NodePorts by a hash of the object's name (stable when other objects
//! are added), Pods of Deployments with kube-style names, Pod IPs from the node's
//! podCIDR. This module never panics on input.
//!
//! The driver lives here: documents → raw objects → each kind in dependency
//! order, then what controllers and allocators would fill in. Each kind family
//! is lowered in its own module; the shared field readers and name rules are
//! in `validate`; `locate` gives relation diagnostics (found after lowering)
//! their object's position.

mod alloc;
mod cilium;
mod cloud;
mod endpoints;
mod families;
mod gateway;
mod gateway_rules;
mod ingress;
mod kinds;
mod locate;
mod nodes;
mod pod_dns;
mod routing;
mod services;
mod validate;
mod workloads;

pub(crate) use alloc::name_suffix;
pub use cloud::ASSUMED_POOLS;
pub use locate::locate_diagnostics;
use services::PendingService;
use validate::{Ctx, NameRule};

use super::*;
use crate::util::diag::Diagnostic;
use crate::yaml::{parse_stream, Limits, Node as Y, Value};
use std::collections::BTreeSet;

/// One input file.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    pub text: &'a str,
}

/// The lowering of HTTP routing's kinds (Ingress, the Gateway API kinds,
/// their classes, Secrets, Namespaces, the controllers' markers), handed in
/// by the caller: its code lives with the rest of HTTP routing, which the
/// web app loads on first use.
#[derive(Clone, Copy)]
pub struct RoutingLowerer(fn(&mut Builder, &[RawObject]));

impl RoutingLowerer {
    /// The lowering itself. Naming this links it in.
    pub const LINKED: RoutingLowerer = RoutingLowerer(routing::lower);
}

impl std::fmt::Debug for RoutingLowerer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RoutingLowerer")
    }
}

/// Parse one YAML stream into a cluster. Without `routing` the routing
/// objects are left unlowered and the cluster says so
/// ([`RoutingObjects::awaiting_code`](super::routing::RoutingObjects::awaiting_code)).
pub fn parse(text: &str, routing: Option<RoutingLowerer>) -> (Cluster, Vec<Diagnostic>) {
    parse_files(&[Input { text }], routing)
}

/// Parse several YAML streams (as `kpv rules a.yaml b.yaml`) into one cluster.
pub fn parse_files(
    inputs: &[Input<'_>],
    routing: Option<RoutingLowerer>,
) -> (Cluster, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let mut raw: Vec<RawObject> = Vec::new();
    let limits = Limits::default();
    for (file, input) in inputs.iter().enumerate() {
        let (docs, mut d) = parse_stream(input.text, &limits);
        for x in &mut d {
            x.file = file;
        }
        diags.extend(d);
        for doc in docs {
            collect_objects(file, doc.index, doc.root, "", &mut raw, &mut diags);
        }
    }
    let mut b = Builder {
        diags,
        cluster: Cluster::default(),
        seen: BTreeSet::new(),
        node_bound_by_controller: BTreeSet::new(),
        pod_origin: BTreeMap::new(),
        workload_origin: BTreeMap::new(),
        service_subnet: Vec::new(),
        service_port_paths: BTreeMap::new(),
        routing,
        objects: super::routing::RoutingObjects::default(),
    };
    b.build(&raw);
    let Builder {
        mut diags,
        mut cluster,
        objects,
        ..
    } = b;
    cluster.routing = std::sync::Arc::new(objects);
    locate::locate(&raw, &mut diags);
    crate::util::order::sort_by_key(&mut diags, |d| (d.file, d.document, d.span));
    (cluster, diags)
}

pub(crate) struct RawObject {
    file: usize,
    doc: usize,
    /// Prefix of field paths (`items[3].` for `kind: List` members).
    prefix: String,
    kind: String,
    node: Y,
}

impl RawObject {
    /// `metadata.name`, or `?` when there is none (to name it in a warning).
    fn name_or_unknown(&self) -> &str {
        self.node
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Y::as_str)
            .unwrap_or("?")
    }

    /// Where this object's diagnostics go, as `object`.
    fn ctx<'a>(&'a self, diags: &'a mut Vec<Diagnostic>, object: String) -> Ctx<'a> {
        Ctx {
            diags,
            file: self.file,
            doc: self.doc,
            prefix: &self.prefix,
            object,
            errors: 0,
        }
    }
}

/// The objects of one document (a `kind: List`'s items, or itself), moved
/// into `out` (no copy of the parsed tree: 10,000 objects were copied once).
fn collect_objects(
    file: usize,
    doc: usize,
    root: Y,
    prefix: &str,
    out: &mut Vec<RawObject>,
    diags: &mut Vec<Diagnostic>,
) {
    if root.is_null() {
        return; // an empty document between `---` lines
    }
    let Some(_) = root.as_map() else {
        let mut d = Diagnostic::error(format!(
            "expected a Kubernetes object (a mapping), found a {}",
            root.kind_name()
        ))
        .at(root.span)
        .with_hint("each YAML document must be one object with apiVersion, kind and metadata");
        d.file = file;
        d.document = doc;
        diags.push(d);
        return;
    };
    let kind = root
        .get("kind")
        .and_then(Y::as_str)
        .unwrap_or("")
        .to_string();
    if kind == "List" || kind.ends_with("List") && root.get("items").is_some() {
        match root.take("items") {
            Some(Y {
                value: Value::Seq(items),
                ..
            }) => {
                for (i, item) in items.into_iter().enumerate() {
                    collect_objects(file, doc, item, &format!("{prefix}items[{i}]."), out, diags);
                }
            }
            Some(i) if !i.is_null() => {
                let mut d = Diagnostic::error("`items` of a List must be a list").at(i.span);
                d.file = file;
                d.document = doc;
                d.field = Some(format!("{prefix}items"));
                diags.push(d);
            }
            _ => {}
        }
        return;
    }
    if kind.is_empty() {
        let mut d = Diagnostic::error("object has no `kind`")
            .at(root.span)
            .with_hint("add e.g. `kind: Service`");
        d.file = file;
        d.document = doc;
        diags.push(d);
        return;
    }
    out.push(RawObject {
        file,
        doc,
        prefix: prefix.to_string(),
        kind,
        node: root,
    });
}

pub(crate) struct Builder {
    diags: Vec<Diagnostic>,
    /// HTTP routing's lowering, when the caller handed it in.
    routing: Option<RoutingLowerer>,
    cluster: Cluster,
    seen: BTreeSet<(String, String, String)>,
    /// Pods a controller bound to a node itself (a DaemonSet's): when the
    /// node is full they stay Pending instead of being rejected.
    node_bound_by_controller: BTreeSet<NamespacedName>,
    /// Where each Pod came from (its own document, or its workload's), for
    /// the notes scheduling writes about it.
    pod_origin: BTreeMap<NamespacedName, (usize, usize, crate::util::diag::Span)>,
    workload_origin:
        BTreeMap<(WorkloadKind, NamespacedName), (usize, usize, crate::util::diag::Span)>,
    /// kubeadm's `networking.serviceSubnet`: the service CIDRs when no
    /// ServiceCIDR object is given.
    service_subnet: Vec<IpNet>,
    /// Each accepted Service's ports' field paths (`spec.ports[i]`), in the
    /// order of its `ports` (a port refused on the way shifts the rest).
    service_port_paths: BTreeMap<NamespacedName, Vec<String>>,
    /// The routing objects as they are lowered (the cluster shares them
    /// once lowering is done).
    objects: super::routing::RoutingObjects,
}

impl Builder {
    fn ctx<'a>(&'a mut self, o: &'a RawObject, object: String) -> Ctx<'a> {
        o.ctx(&mut self.diags, object)
    }

    fn build(&mut self, raw: &[RawObject]) {
        // Order matters: configuration first, then what later objects refer to.
        let mut services = Vec::new();
        let mut endpoints = Vec::new();
        let mut workloads = Vec::new();
        for &kind in kinds::ORDER {
            for o in raw.iter().filter(|o| o.kind == kind) {
                if !self.api_version_ok(o) {
                    continue;
                }
                let workload = |k| match k {
                    "Deployment" => Some(WorkloadKind::Deployment),
                    "ReplicaSet" => Some(WorkloadKind::ReplicaSet),
                    "StatefulSet" => Some(WorkloadKind::StatefulSet),
                    "DaemonSet" => Some(WorkloadKind::DaemonSet),
                    "Job" => Some(WorkloadKind::Job),
                    _ => None,
                };
                match kind {
                    "KubeProxyConfiguration" => self.proxy_config(o),
                    "ConfigMap" if cilium::is_cilium_config(o) => self.cilium_config(o),
                    "ConfigMap" => {}
                    "ClusterConfiguration" => self.cluster_configuration(o),
                    "ServiceCIDR" => self.service_cidr(o),
                    "Node" => self.node(o),
                    "Pod" => self.pod(o),
                    "Service" => {
                        if let Some(s) = self.service(o) {
                            services.push(s);
                        }
                    }
                    "Endpoints" => {
                        if let Some(e) = self.endpoints(o) {
                            endpoints.push(e);
                        }
                    }
                    "EndpointSlice" => self.endpoint_slice(o),
                    k => {
                        if let Some(w) = workload(k).and_then(|wk| self.workload(o, wk)) {
                            workloads.push(w);
                        }
                    }
                }
            }
        }
        // HTTP routing's kinds are lowered by its own code, which the web
        // app loads on first use: until then they wait (see
        // `RoutingObjects::awaiting_code`).
        match self.routing {
            Some(RoutingLowerer(f)) => f(self, raw),
            None => {
                self.objects.awaiting_code = raw
                    .iter()
                    .any(|o| matches!(o.kind.as_str(), "Ingress" | "Gateway" | "HTTPRoute"))
            }
        }
        self.skip_unmodelled(raw);
        let reserved: BTreeSet<IpAddr> = services
            .iter()
            .flat_map(|p: &PendingService| {
                p.svc
                    .cluster_ips
                    .iter()
                    .chain(&p.svc.external_ips)
                    .chain(p.svc.load_balancer_addresses())
                    .copied()
            })
            .collect();
        if self.cluster.service_cidrs.is_empty() {
            self.cluster.service_cidrs = std::mem::take(&mut self.service_subnet);
        }
        self.finish_nodes(&reserved);
        self.expand_workloads(workloads);
        self.place_pods();
        self.allocate_services(services);
        self.mirror_endpoints(endpoints);
        self.check_slice_services();
        self.check_statefulset_services();
        self.check_selectors();
        self.check_userspace_sources();
        let c = &mut self.cluster;
        crate::util::order::sort_by(&mut c.nodes, |a, b| a.name.cmp(&b.name));
        crate::util::order::sort_by(&mut c.pods, |a, b| a.id.cmp(&b.id));
        crate::util::order::sort_by(&mut c.workloads, |a, b| {
            (a.kind, &a.id).cmp(&(b.kind, &b.id))
        });
        crate::util::order::sort_by(&mut c.services, |a, b| a.id.cmp(&b.id));
        crate::util::order::sort_by(&mut c.endpoint_slices, |a, b| a.id.cmp(&b.id));
    }

    /// One warning per kind kpv does not model, naming every object of that
    /// kind it skips (a chart's eleven ServiceAccounts are one line, not
    /// eleven); the list of kinds it does model is said once, on the first.
    fn skip_unmodelled(&mut self, raw: &[RawObject]) {
        let mut groups: Vec<(&str, Vec<&RawObject>)> = Vec::new();
        // Of ConfigMaps only Cilium's settings are read.
        for o in raw.iter().filter(|o| {
            !kinds::modelled().any(|k| k == o.kind)
                || (o.kind == "ConfigMap" && !cilium::is_cilium_config(o))
        }) {
            match groups.iter_mut().find(|(k, _)| *k == o.kind) {
                Some((_, objs)) => objs.push(o),
                None => groups.push((o.kind.as_str(), vec![o])),
            }
        }
        for (i, (kind, objs)) in groups.into_iter().enumerate() {
            let Some(first) = objs.first() else { continue };
            let message = match objs.len() {
                1 => format!("kind `{kind}` is not modelled and is skipped"),
                n => format!(
                    "kind `{kind}` is not modelled: {n} objects skipped ({})",
                    name_list(objs.iter().map(|o| o.name_or_unknown()))
                ),
            };
            let hint = if i == 0 {
                format!(
                    "supported kinds: {}",
                    kinds::modelled()
                        .map(|k| match k {
                            "ConfigMap" => "ConfigMap (kube-system/cilium-config)",
                            k => k,
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            } else {
                String::new()
            };
            let obj = match objs.len() {
                1 => format!("{kind}/{}", first.name_or_unknown()),
                _ => kind.to_string(),
            };
            let mut c = self.ctx(first, obj);
            c.warn(&first.node, "kind", message, &hint);
        }
    }

    /// Is the object's `apiVersion` the API kpv models for its kind? Warns
    /// about removed versions (read as the current one) and a missing one;
    /// skips, with the reason, a kind of the same name from another API.
    fn api_version_ok(&mut self, o: &RawObject) -> bool {
        let version = o
            .node
            .get("apiVersion")
            .and_then(Y::as_str)
            .unwrap_or("")
            .to_string();
        let Some(check) = kinds::check(&o.kind, &version) else {
            return true;
        };
        let name = o.name_or_unknown().to_string();
        let kind = o.kind.clone();
        let at = o.node.get("apiVersion").unwrap_or(&o.node);
        let mut c = self.ctx(o, format!("{kind}/{name}"));
        match check {
            kinds::ApiVersionCheck::Current => true,
            kinds::ApiVersionCheck::Missing { current } => {
                c.warn(
                    at,
                    "apiVersion",
                    format!("{kind} has no apiVersion (kubectl refuses it: \"apiVersion not set\"); read as {current}"),
                    &format!("add `apiVersion: {current}`"),
                );
                true
            }
            kinds::ApiVersionCheck::Removed {
                current,
                removed_in,
            } => {
                c.warn(
                    at,
                    "apiVersion",
                    format!("{version} {kind} was removed in Kubernetes {removed_in}; read as {current}"),
                    &format!("write `apiVersion: {current}`"),
                );
                true
            }
            kinds::ApiVersionCheck::Foreign { expected } => {
                c.warn(
                    at,
                    "apiVersion",
                    format!(
                        "{kind} `{name}` of {version} is not the Kubernetes {kind} ({}) and is skipped: kpv models only the built-in kind",
                        expected.join(" or ")
                    ),
                    "a custom resource's controller (e.g. Knative) makes its own built-in objects; paste those instead",
                );
                false
            }
        }
    }

    /// Metadata: returns (namespace, name) or reports and returns None.
    fn meta(&mut self, o: &RawObject, namespaced: bool) -> Option<(NamespacedName, Labels, bool)> {
        let kind = o.kind.clone();
        let meta = o.node.get("metadata");
        let name = meta
            .and_then(|m| m.get("name"))
            .and_then(Y::as_str)
            .map(str::to_string);
        let ns = if namespaced {
            meta.and_then(|m| m.get("namespace"))
                .and_then(Y::as_str)
                .filter(|s| !s.is_empty())
                .unwrap_or("default")
                .to_string()
        } else {
            String::new()
        };
        let Some(name) = name.filter(|n| !n.is_empty()) else {
            let mut c = self.ctx(o, kind.clone());
            c.err(
                meta.unwrap_or(&o.node),
                "metadata.name",
                format!("{kind} has no metadata.name"),
                "give every object a name",
            );
            return None;
        };
        let object = if namespaced {
            format!("{kind}/{ns}/{name}")
        } else {
            format!("{kind}/{name}")
        };
        // The API server refuses the object: say so in its words.
        let rule = NameRule::for_kind(&kind);
        if let Some(msg) = rule.invalid(&name) {
            let mut c = self.ctx(o, object.clone());
            let n = meta.and_then(|m| m.get("name")).unwrap_or(&o.node);
            c.err(n, "metadata.name", msg, rule.hint());
            return None;
        }
        if namespaced {
            if let Some(msg) = NameRule::Dns1123Label.invalid(&ns) {
                let mut c = self.ctx(o, object.clone());
                let n = meta.and_then(|m| m.get("namespace")).unwrap_or(&o.node);
                c.err(n, "metadata.namespace", msg, NameRule::Dns1123Label.hint());
                return None;
            }
        }
        if !self.seen.insert((kind.clone(), ns.clone(), name.clone())) {
            let mut c = self.ctx(o, object);
            let n = meta.and_then(|m| m.get("name")).unwrap_or(&o.node);
            c.err(
                n,
                "metadata.name",
                format!("duplicate {kind} `{name}`: the API server refuses a second object of the same name and namespace (kubectl apply would replace the first with it)"),
                "rename one of them, or delete the one you do not want",
            );
            return None;
        }
        let mut c = self.ctx(o, object);
        let labels = c.labels(meta.and_then(|m| m.get("labels")), "metadata.labels");
        let deleting = meta
            .and_then(|m| m.get("deletionTimestamp"))
            .is_some_and(|d| !d.is_null());
        Some((NamespacedName::new(ns, name), labels, deleting))
    }

    fn object_name(o: &RawObject, id: &NamespacedName) -> String {
        if id.namespace.is_empty() {
            format!("{}/{}", o.kind, id.name)
        } else {
            format!("{}/{}/{}", o.kind, id.namespace, id.name)
        }
    }
}

/// Up to eight names, then how many more: enough to find the objects
/// without a warning that fills the screen.
fn name_list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    const SHOWN: usize = 8;
    let names: Vec<&str> = names.collect();
    let mut out = names
        .iter()
        .take(SHOWN)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if let Some(more) = names.len().checked_sub(SHOWN).filter(|&m| m > 0) {
        out.push_str(&format!(" and {more} more"));
    }
    out
}
