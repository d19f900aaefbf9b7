//! The HTTP routing kinds as typed values: Ingress and IngressClass,
//! GatewayClass, Gateway, HTTPRoute, ReferenceGrant, Secrets (name and type
//! only: no key material is read), Namespaces with labels, and the markers
//! by which a controller's own Deployment and Service are recognised.
//!
//! Lowered and validated with the other kinds (`lower/routing.rs`,
//! `lower/ingress.rs`, `lower/gateway.rs`); [`crate::http`] decides where
//! requests go. Nothing here decides anything.

use crate::model::{Labels, NamespacedName, PortRef};
use serde::Serialize;

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
    /// The field that names the backend's Service, as written
    /// (`spec.rules[0].http.paths[1].backend.service.name`), for diagnostics.
    #[serde(skip)]
    pub backend_field: String,
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
    /// Cluster-scoped: the namespace is empty.
    pub meta: Meta,
    pub controller: String,
    /// `ingressclass.kubernetes.io/is-default-class: "true"`.
    pub is_default: bool,
}

impl IngressClass {
    pub fn name(&self) -> &str {
        &self.meta.id.name
    }
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
    /// `spec.infrastructure.parametersRef` (group, kind, name; in the
    /// Gateway's namespace).
    pub parameters_ref: Option<(String, String, String)>,
    /// `spec.addresses` as (type, value): the type defaults to
    /// `IPAddress`; the value may be left for the controller to choose.
    pub addresses: Vec<(String, Option<String>)>,
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
    /// RequestMirror: a copy of the request goes to `target` too (its
    /// answer is dropped), for `numerator / denominator` of the requests.
    RequestMirror {
        target: ObjectRef,
        port: Option<u16>,
        numerator: u32,
        denominator: u32,
    },
    /// CORS: answers preflight requests from allowed origins itself and
    /// adds the CORS headers to other requests' answers.
    Cors(Cors),
    /// ExtensionRef and others: named, not simulated.
    Other(String),
}

/// A CORS filter's policy (`*` in methods or headers: any).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Cors {
    /// Origins as `scheme://host[:port]`, `scheme://*.domain`, or `*`.
    pub allow_origins: Vec<String>,
    pub allow_methods: Vec<String>,
    pub allow_headers: Vec<String>,
    pub expose_headers: Vec<String>,
    pub allow_credentials: bool,
    /// Seconds a browser may cache the preflight answer (the API's default
    /// is 5).
    pub max_age: u32,
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
pub struct RoutingObjects {
    pub ingresses: Vec<Ingress>,
    pub ingress_classes: Vec<IngressClass>,
    pub gateway_classes: Vec<GatewayClass>,
    pub gateways: Vec<Gateway>,
    pub routes: Vec<HttpRoute>,
    pub grants: Vec<ReferenceGrant>,
    /// Secrets by id: `true` when of type `kubernetes.io/tls`.
    pub secrets: crate::util::vecmap::VecMap<NamespacedName, bool>,
    pub namespaces: crate::util::vecmap::VecMap<String, Labels>,
    pub markers: Vec<ControllerMarker>,
    /// `EnvoyProxy` objects with `spec.routingType: Service`.
    pub envoy_service_routing: Vec<NamespacedName>,
    /// Every `EnvoyProxy` object (what a Gateway's parametersRef may name).
    pub envoy_proxies: Vec<NamespacedName>,
    /// The input has Ingress, Gateway or HTTPRoute objects that were not
    /// lowered because the parse was not handed HTTP routing's lowering
    /// ([`crate::model::RoutingLowerer`]; the web app loads it on first
    /// use): every field above is empty, and a parse with it fills them.
    /// Never true where the caller hands in everything (the CLI, the tests).
    #[serde(skip)]
    pub awaiting_code: bool,
}

impl RoutingObjects {
    /// No Ingress, Gateway or HTTPRoute: nothing for HTTP routing to do.
    /// False while [`Self::awaiting_code`]: what the input holds is not
    /// known yet.
    pub fn is_empty(&self) -> bool {
        !self.awaiting_code
            && self.ingresses.is_empty()
            && self.gateways.is_empty()
            && self.routes.is_empty()
    }

    /// A namespace's labels; a namespace not in the input has only its
    /// `kubernetes.io/metadata.name` label, as the API server sets.
    pub fn namespace_labels(&self, ns: &str) -> Labels {
        let mut l = self.namespaces.get(ns).cloned().unwrap_or_default();
        l.insert("kubernetes.io/metadata.name".into(), ns.into());
        l
    }
}

/// The routing kinds the model lowers.
pub const ROUTING_KINDS: &[&str] = &[
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
