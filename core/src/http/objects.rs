//! The HTTP routing kinds as typed values: Ingress and IngressClass
//! (`networking.k8s.io/v1`, and the removed `extensions/v1beta1` /
//! `networking.k8s.io/v1beta1` read as v1 with a warning), GatewayClass,
//! Gateway, HTTPRoute (`gateway.networking.k8s.io/v1`), ReferenceGrant
//! (`v1beta1`), Secrets (name and type only: no key material is read),
//! Namespaces with labels, and the markers by which a controller's own
//! Deployment and Service are recognised.
//!
//! Lowering validates as the API server (and the Gateway API CRDs' schema)
//! does and reports each problem as a located [`Diagnostic`]; it never fails
//! and never panics on input. Nothing here decides where a request goes.

use super::validate::{self as v, Ctx};
use crate::diag::Diagnostic;
use crate::model::{Labels, NamespacedName, PortRef};
use crate::yaml::{parse_stream, Limits, Node as Y};
use serde::Serialize;
use std::collections::BTreeMap;

/// Metadata the routing semantics read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Meta {
    pub id: NamespacedName,
    pub labels: Labels,
    pub annotations: Labels,
    /// `metadata.creationTimestamp` as written (RFC 3339 sorts as text).
    pub created: Option<String>,
    /// Position in the input (file, document, item): the creation order
    /// when no timestamp is given.
    pub order: (usize, usize, usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum PathType {
    Exact,
    Prefix,
    ImplementationSpecific,
}

/// An Ingress backend: a Service port, or another resource (which kpv
/// cannot send traffic to).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum IngressBackend {
    Service { name: String, port: PortRef },
    Resource { kind: String, name: String },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IngressPath {
    pub path: String,
    pub path_type: PathType,
    pub backend: IngressBackend,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IngressRule {
    /// `None`: every host.
    pub host: Option<String>,
    pub paths: Vec<IngressPath>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IngressTls {
    pub hosts: Vec<String>,
    pub secret: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Ingress {
    pub meta: Meta,
    /// `spec.ingressClassName`.
    pub class_name: Option<String>,
    /// The legacy `kubernetes.io/ingress.class` annotation.
    pub class_annotation: Option<String>,
    pub default_backend: Option<IngressBackend>,
    pub tls: Vec<IngressTls>,
    pub rules: Vec<IngressRule>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IngressClass {
    pub name: String,
    pub controller: String,
    /// `ingressclass.kubernetes.io/is-default-class: "true"`.
    pub is_default: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GatewayClass {
    pub name: String,
    pub controller: String,
    /// `spec.parametersRef` naming an Envoy Gateway `EnvoyProxy`.
    pub envoy_proxy: Option<NamespacedName>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum ListenerProtocol {
    Http,
    Https,
    /// TLS, TCP, UDP, or another: not routed by HTTPRoutes.
    Other(String),
}

/// A label selector (matchLabels and matchExpressions).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LabelSelector {
    pub match_labels: Labels,
    /// (key, operator, values).
    pub match_expressions: Vec<(String, String, Vec<String>)>,
}

impl LabelSelector {
    pub fn matches(&self, labels: &Labels) -> bool {
        self.match_labels
            .iter()
            .all(|(k, val)| labels.get(k) == Some(val))
            && self
                .match_expressions
                .iter()
                .all(|(k, op, vals)| match op.as_str() {
                    "In" => labels.get(k).is_some_and(|x| vals.contains(x)),
                    "NotIn" => labels.get(k).is_none_or(|x| !vals.contains(x)),
                    "Exists" => labels.contains_key(k),
                    "DoesNotExist" => !labels.contains_key(k),
                    _ => false,
                })
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum FromNamespaces {
    Same,
    All,
    Selector(LabelSelector),
}

/// A reference to an object by group, kind, namespace and name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ObjectRef {
    pub group: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Listener {
    pub name: String,
    pub hostname: Option<String>,
    pub port: u16,
    pub protocol: ListenerProtocol,
    pub certificate_refs: Vec<ObjectRef>,
    pub from: FromNamespaces,
    /// `allowedRoutes.kinds` as (group, kind); empty: the protocol's default.
    pub kinds: Vec<(String, String)>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Gateway {
    pub meta: Meta,
    pub class: String,
    pub listeners: Vec<Listener>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ParentRef {
    pub group: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    pub section: Option<String>,
    pub port: Option<u16>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum PathMatch {
    Exact(String),
    Prefix(String),
    /// Precedence and syntax are implementation-specific; kpv does not
    /// evaluate regular expressions and reports the rule instead.
    Regex(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ValueMatch {
    pub name: String,
    pub value: String,
    pub regex: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RouteMatch {
    pub path: PathMatch,
    pub headers: Vec<ValueMatch>,
    pub query: Vec<ValueMatch>,
    pub method: Option<String>,
}

impl Default for RouteMatch {
    fn default() -> Self {
        RouteMatch {
            path: PathMatch::Prefix("/".into()),
            headers: Vec::new(),
            query: Vec::new(),
            method: None,
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct HeaderModifier {
    pub set: Vec<(String, String)>,
    pub add: Vec<(String, String)>,
    pub remove: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum PathModifier {
    ReplaceFullPath(String),
    ReplacePrefixMatch(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Filter {
    RequestHeaderModifier(HeaderModifier),
    ResponseHeaderModifier(HeaderModifier),
    RequestRedirect {
        scheme: Option<String>,
        hostname: Option<String>,
        path: Option<PathModifier>,
        port: Option<u16>,
        status: u16,
    },
    UrlRewrite {
        hostname: Option<String>,
        path: Option<PathModifier>,
    },
    /// RequestMirror, CORS, ExtensionRef…: named, not simulated.
    Other(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BackendRef {
    pub target: ObjectRef,
    pub port: Option<u16>,
    pub weight: u32,
    pub filters: Vec<Filter>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RouteRule {
    pub matches: Vec<RouteMatch>,
    pub filters: Vec<Filter>,
    pub backends: Vec<BackendRef>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HttpRoute {
    pub meta: Meta,
    pub parents: Vec<ParentRef>,
    pub hostnames: Vec<String>,
    pub rules: Vec<RouteRule>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReferenceGrant {
    pub meta: Meta,
    /// (group, kind, namespace).
    pub from: Vec<(String, String, String)>,
    /// (group, kind, name): `None` for every name.
    pub to: Vec<(String, String, Option<String>)>,
}

/// A controller's own workload found in the input by its markers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum ControllerMarker {
    /// An ingress-nginx Deployment: `--controller-class=` (default
    /// `k8s.io/ingress-nginx`) and `--ingress-class=` (default `nginx`).
    IngressNginx {
        deployment: NamespacedName,
        controller_class: String,
        ingress_class: String,
        pod_labels: Labels,
    },
    /// An Envoy Gateway proxy Deployment or Service, labelled with the
    /// Gateway it serves.
    EnvoyProxy {
        object: NamespacedName,
        is_service: bool,
        gateway: NamespacedName,
    },
}

/// Every routing object of the input.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Objects {
    pub ingresses: Vec<Ingress>,
    pub ingress_classes: Vec<IngressClass>,
    pub gateway_classes: Vec<GatewayClass>,
    pub gateways: Vec<Gateway>,
    pub routes: Vec<HttpRoute>,
    pub grants: Vec<ReferenceGrant>,
    /// Secrets by id: `true` when of type `kubernetes.io/tls`.
    pub secrets: BTreeMap<NamespacedName, bool>,
    pub namespaces: BTreeMap<String, Labels>,
    pub markers: Vec<ControllerMarker>,
    /// `EnvoyProxy` objects with `spec.routingType: Service`.
    pub envoy_service_routing: Vec<NamespacedName>,
}

impl Objects {
    pub fn is_empty(&self) -> bool {
        self.ingresses.is_empty() && self.gateways.is_empty() && self.routes.is_empty()
    }

    /// A namespace's labels; a namespace not in the input has only its
    /// `kubernetes.io/metadata.name` label, as the API server sets.
    pub fn namespace_labels(&self, ns: &str) -> Labels {
        let mut l = self.namespaces.get(ns).cloned().unwrap_or_default();
        l.insert("kubernetes.io/metadata.name".into(), ns.into());
        l
    }
}

/// The kinds this module lowers (kind, apiVersions).
pub const KINDS: &[&str] = &[
    "Ingress",
    "IngressClass",
    "GatewayClass",
    "Gateway",
    "HTTPRoute",
    "ReferenceGrant",
    "Secret",
    "Namespace",
    "EnvoyProxy",
];

/// Lower the routing objects of some YAML streams (the other kinds are the
/// model's; Deployments and Services are only read for controller markers).
pub fn parse_files(texts: &[&str]) -> (Objects, Vec<Diagnostic>) {
    let mut out = Objects::default();
    let mut diags = Vec::new();
    let limits = Limits::default();
    for (file, text) in texts.iter().enumerate() {
        let (docs, _) = parse_stream(text, &limits);
        for doc in docs {
            let items: Vec<(usize, &Y, String)> = match doc.root.get("items").and_then(Y::as_seq) {
                Some(items)
                    if doc
                        .root
                        .get("kind")
                        .and_then(Y::as_str)
                        .is_some_and(|k| k.ends_with("List")) =>
                {
                    items
                        .iter()
                        .enumerate()
                        .map(|(i, n)| (i, n, format!("items[{i}].")))
                        .collect()
                }
                _ => vec![(0, &doc.root, String::new())],
            };
            for (i, node, prefix) in items {
                let kind = node.get("kind").and_then(Y::as_str).unwrap_or("");
                let mut c = Ctx::new(&mut diags, file, doc.index, &prefix, kind, node);
                let order = (file, doc.index, i);
                lower(&mut c, node, kind, order, &mut out);
            }
        }
    }
    crate::order::sort_by_key(&mut diags, |d| (d.file, d.document, d.span));
    (out, diags)
}

/// Parse one text.
pub fn parse(text: &str) -> (Objects, Vec<Diagnostic>) {
    parse_files(&[text])
}

fn lower(c: &mut Ctx<'_>, n: &Y, kind: &str, order: (usize, usize, usize), out: &mut Objects) {
    let api = n.get("apiVersion").and_then(Y::as_str).unwrap_or("");
    match kind {
        "Ingress" => {
            if let Some(ing) = super::ingress_objects::ingress(c, n, api, order) {
                out.ingresses.push(ing);
            }
        }
        "IngressClass" => {
            let meta = meta(c, n, false, order);
            let spec = n.get("spec");
            let controller = c
                .string(spec.and_then(|s| s.get("controller")), "spec.controller")
                .unwrap_or_default();
            if controller.is_empty() {
                c.err(n, "spec.controller", "Required value", "");
            }
            let is_default = meta
                .annotations
                .get("ingressclass.kubernetes.io/is-default-class")
                .is_some_and(|x| x == "true");
            out.ingress_classes.push(IngressClass {
                name: meta.id.name,
                controller,
                is_default,
            });
        }
        "GatewayClass" => {
            let meta = meta(c, n, false, order);
            let spec = n.get("spec");
            let controller = c
                .string(
                    spec.and_then(|s| s.get("controllerName")),
                    "spec.controllerName",
                )
                .unwrap_or_default();
            if controller.is_empty() {
                c.err(n, "spec.controllerName", "Required value", "");
            }
            let envoy_proxy = spec.and_then(|s| s.get("parametersRef")).and_then(|p| {
                (p.get("kind").and_then(Y::as_str) == Some("EnvoyProxy")).then(|| {
                    NamespacedName::new(
                        p.get("namespace").and_then(Y::as_str).unwrap_or("default"),
                        p.get("name").and_then(Y::as_str).unwrap_or(""),
                    )
                })
            });
            out.gateway_classes.push(GatewayClass {
                name: meta.id.name,
                controller,
                envoy_proxy,
            });
        }
        "Gateway" => {
            if let Some(g) = super::gateway_objects::gateway(c, n, order) {
                out.gateways.push(g);
            }
        }
        "HTTPRoute" => {
            if let Some(r) = super::gateway_objects::route(c, n, order) {
                out.routes.push(r);
            }
        }
        "ReferenceGrant" => {
            if let Some(g) = super::gateway_objects::grant(c, n, order) {
                out.grants.push(g);
            }
        }
        "Secret" => {
            let meta = meta(c, n, true, order);
            let tls = n.get("type").and_then(Y::as_str) == Some("kubernetes.io/tls");
            out.secrets.insert(meta.id, tls);
        }
        "Namespace" => {
            let meta = meta(c, n, false, order);
            out.namespaces.insert(meta.id.name, meta.labels);
        }
        "EnvoyProxy" => {
            let meta = meta(c, n, true, order);
            let service = n
                .get("spec")
                .and_then(|s| s.get("routingType"))
                .and_then(Y::as_str)
                == Some("Service");
            if service {
                out.envoy_service_routing.push(meta.id);
            }
        }
        "Deployment" | "Service" => markers(n, kind, out),
        _ => {}
    }
}

/// Read `metadata`: name (required), namespace (default `default`),
/// labels, annotations, creationTimestamp.
pub(super) fn meta(c: &mut Ctx<'_>, n: &Y, namespaced: bool, order: (usize, usize, usize)) -> Meta {
    let m = n.get("metadata");
    let name = m
        .and_then(|m| m.get("name"))
        .and_then(Y::as_str)
        .unwrap_or("")
        .to_string();
    if name.is_empty() {
        c.err(
            n,
            "metadata.name",
            "Required value: name or generateName is required",
            "",
        );
    }
    let namespace = if namespaced {
        m.and_then(|m| m.get("namespace"))
            .and_then(Y::as_str)
            .unwrap_or("default")
            .to_string()
    } else {
        String::new()
    };
    c.set_object(&namespace, &name);
    Meta {
        id: NamespacedName::new(namespace, name),
        labels: v::string_map(m.and_then(|m| m.get("labels"))),
        annotations: v::string_map(m.and_then(|m| m.get("annotations"))),
        created: m
            .and_then(|m| m.get("creationTimestamp"))
            .and_then(Y::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string),
        order,
    }
}

/// The controllers' own markers on Deployments and Services.
fn markers(n: &Y, kind: &str, out: &mut Objects) {
    let m = n.get("metadata");
    let id = NamespacedName::new(
        m.and_then(|m| m.get("namespace"))
            .and_then(Y::as_str)
            .unwrap_or("default"),
        m.and_then(|m| m.get("name"))
            .and_then(Y::as_str)
            .unwrap_or(""),
    );
    let labels = v::string_map(m.and_then(|m| m.get("labels")));
    let gw_name = labels.get("gateway.envoyproxy.io/owning-gateway-name");
    let gw_ns = labels.get("gateway.envoyproxy.io/owning-gateway-namespace");
    if let (Some(name), Some(ns)) = (gw_name, gw_ns) {
        out.markers.push(ControllerMarker::EnvoyProxy {
            object: id.clone(),
            is_service: kind == "Service",
            gateway: NamespacedName::new(ns.clone(), name.clone()),
        });
    }
    if kind != "Deployment" {
        return;
    }
    let template = n.get("spec").and_then(|s| s.get("template"));
    let containers = template
        .and_then(|t| t.get("spec"))
        .and_then(|s| s.get("containers"))
        .and_then(Y::as_seq)
        .unwrap_or(&[]);
    for ctr in containers {
        let args: Vec<&str> = ["args", "command"]
            .iter()
            .filter_map(|k| ctr.get(k).and_then(Y::as_seq))
            .flatten()
            .filter_map(Y::as_str)
            .collect();
        if !args.iter().any(|a| a.ends_with("nginx-ingress-controller")) {
            continue;
        }
        let flag = |name: &str| {
            args.iter()
                .find_map(|a| a.strip_prefix(name))
                .map(str::to_string)
        };
        out.markers.push(ControllerMarker::IngressNginx {
            deployment: id.clone(),
            controller_class: flag("--controller-class=")
                .unwrap_or_else(|| "k8s.io/ingress-nginx".into()),
            ingress_class: flag("--ingress-class=").unwrap_or_else(|| "nginx".into()),
            pod_labels: v::string_map(
                template
                    .and_then(|t| t.get("metadata"))
                    .and_then(|m| m.get("labels")),
            ),
        });
    }
}
