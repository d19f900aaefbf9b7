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
//! in `validate`.

mod alloc;
mod endpoints;
mod gateway;
mod ingress;
mod nodes;
mod routing;
mod services;
mod validate;
mod workloads;

pub(crate) use alloc::name_suffix;
use validate::{valid_dns_label_ish, Ctx};

use super::*;
use crate::diag::Diagnostic;
use crate::yaml::{parse_stream, Limits, Node as Y, Value};
use std::collections::BTreeSet;

/// One input file.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    pub text: &'a str,
}

/// Parse one YAML stream into a cluster.
pub fn parse(text: &str) -> (Cluster, Vec<Diagnostic>) {
    parse_files(&[Input { text }])
}

/// Parse several YAML streams (as `kpv rules a.yaml b.yaml`) into one cluster.
pub fn parse_files(inputs: &[Input<'_>]) -> (Cluster, Vec<Diagnostic>) {
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
    };
    b.build(&raw);
    let Builder {
        mut diags, cluster, ..
    } = b;
    crate::order::sort_by_key(&mut diags, |d| (d.file, d.document, d.span));
    (cluster, diags)
}

struct RawObject {
    file: usize,
    doc: usize,
    /// Prefix of field paths (`items[3].` for `kind: List` members).
    prefix: String,
    kind: String,
    node: Y,
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

struct Builder {
    diags: Vec<Diagnostic>,
    cluster: Cluster,
    seen: BTreeSet<(String, String, String)>,
}

impl Builder {
    fn ctx<'a>(&'a mut self, o: &'a RawObject, object: String) -> Ctx<'a> {
        Ctx {
            diags: &mut self.diags,
            file: o.file,
            doc: o.doc,
            prefix: &o.prefix,
            object,
            errors: 0,
        }
    }

    fn build(&mut self, raw: &[RawObject]) {
        // Order matters: configuration first, then what later objects refer to.
        let order = [
            "KubeProxyConfiguration",
            "ServiceCIDR",
            "Node",
            "Deployment",
            "Pod",
            "Service",
            "Endpoints",
            "EndpointSlice",
        ];
        let mut services = Vec::new();
        let mut endpoints = Vec::new();
        let mut deployments_raw = Vec::new();
        for kind in order {
            for o in raw.iter().filter(|o| o.kind == kind) {
                match kind {
                    "KubeProxyConfiguration" => self.proxy_config(o),
                    "ServiceCIDR" => self.service_cidr(o),
                    "Node" => self.node(o),
                    "Deployment" => {
                        if let Some(d) = self.deployment(o) {
                            deployments_raw.push(d);
                        }
                    }
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
                    _ => {}
                }
            }
        }
        self.routing(raw);
        for o in raw.iter().filter(|o| {
            !order.contains(&o.kind.as_str())
                && !crate::model::routing::ROUTING_KINDS.contains(&o.kind.as_str())
        }) {
            let name = o
                .node
                .get("metadata")
                .and_then(|m| m.get("name"))
                .and_then(Y::as_str)
                .unwrap_or("?")
                .to_string();
            let obj = format!("{}/{}", o.kind, name);
            let kind = o.kind.clone();
            let mut c = self.ctx(o, obj);
            c.warn(&o.node, "kind", format!("kind `{kind}` is not modelled and is skipped"), "supported kinds: Node, Pod, Deployment, Service, Endpoints, EndpointSlice, ServiceCIDR, KubeProxyConfiguration, Ingress, IngressClass, GatewayClass, Gateway, HTTPRoute, ReferenceGrant, Secret, Namespace");
        }
        self.finish_nodes();
        for d in deployments_raw {
            self.expand_deployment(d);
        }
        self.place_pods();
        self.allocate_services(services);
        self.mirror_endpoints(endpoints);
        self.check_selectors();
        self.check_userspace_sources();
        let c = &mut self.cluster;
        crate::order::sort_by(&mut c.nodes, |a, b| a.name.cmp(&b.name));
        crate::order::sort_by(&mut c.pods, |a, b| a.id.cmp(&b.id));
        crate::order::sort_by(&mut c.deployments, |a, b| a.id.cmp(&b.id));
        crate::order::sort_by(&mut c.services, |a, b| a.id.cmp(&b.id));
        crate::order::sort_by(&mut c.endpoint_slices, |a, b| a.id.cmp(&b.id));
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
        if !valid_dns_label_ish(&name) {
            let mut c = self.ctx(o, object.clone());
            let n = meta.and_then(|m| m.get("name")).unwrap_or(&o.node);
            c.err(n, "metadata.name", format!("`{name}` is not a valid object name"), "use lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters");
            return None;
        }
        if !self.seen.insert((kind.clone(), ns.clone(), name.clone())) {
            let mut c = self.ctx(o, object);
            let n = meta.and_then(|m| m.get("name")).unwrap_or(&o.node);
            c.err(
                n,
                "metadata.name",
                format!("duplicate {kind} `{name}`; this one is ignored"),
                "object names must be unique per kind and namespace",
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
