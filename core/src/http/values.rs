//! HTTP's values: the request, where it enters, the routing decision, a
//! request form's errors and the proxy's steps, as plain data. The trace
//! carries them (`Dest::Http`, `HopKind::Http`) without knowing how they
//! are decided; [`super::walk`] decides, [`super::send`] reads forms and
//! lays journeys out as traces. This module imports only the model and
//! decides nothing.

use crate::model::routing::HeaderModifier;
use crate::model::{NamespacedName, PortRef};
use serde::Serialize;
use std::net::SocketAddr;

/// Where a request enters HTTP routing.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "lowercase")]
pub enum EntryPoint {
    Gateway(NamespacedName),
    #[serde(rename = "ingressclass")]
    IngressClass(String),
}

impl std::fmt::Display for EntryPoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EntryPoint::Gateway(id) => write!(f, "gateway/{id}"),
            EntryPoint::IngressClass(n) => write!(f, "ingressclass/{n}"),
        }
    }
}

impl EntryPoint {
    /// Parse `gateway/NAMESPACE/NAME` or `ingressclass/NAME`.
    pub fn parse(s: &str) -> Option<EntryPoint> {
        if let Some(rest) = s.strip_prefix("gateway/") {
            let (ns, name) = rest.split_once('/')?;
            return (!ns.is_empty() && !name.is_empty())
                .then(|| EntryPoint::Gateway(NamespacedName::new(ns, name)));
        }
        s.strip_prefix("ingressclass/")
            .filter(|n| !n.is_empty() && !n.contains('/'))
            .map(|n| EntryPoint::IngressClass(n.to_string()))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scheme {
    Http,
    Https,
}

impl Scheme {
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::Http => "http",
            Scheme::Https => "https",
        }
    }

    pub fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
}

/// A request as the proxy receives it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct HttpRequest {
    pub scheme: Scheme,
    /// The connection's destination port.
    pub port: u16,
    /// The URL's host: what DNS resolves (the Host header unless `-H Host:`).
    pub authority: String,
    /// The Host header's name (lower case) and its port, if written.
    pub host: String,
    pub host_port: Option<u16>,
    /// The TLS server name (HTTPS only).
    pub sni: Option<String>,
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The query string, without `?` (empty when none).
    pub query: String,
    /// Headers with lower-case names, in the order given (repeats kept).
    pub headers: Vec<(String, String)>,
}

impl HttpRequest {
    /// The Host header as sent.
    pub fn host_header(&self) -> String {
        match self.host_port {
            Some(p) => format!("{}:{p}", self.host),
            None => self.host.clone(),
        }
    }
}

/// Which rule decided, by position in its object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RouteRef {
    /// `Ingress` or `HTTPRoute`.
    pub kind: &'static str,
    pub name: NamespacedName,
    pub rule: usize,
    /// The path (Ingress) or match (HTTPRoute) within the rule.
    pub index: usize,
}

/// A rule compared while deciding, and whether it matched.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Compared {
    pub route: RouteRef,
    pub matched: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Redirect {
    pub status: u16,
    pub location: String,
}

/// The Service port chosen, and how it was chosen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ChosenBackend {
    pub service: NamespacedName,
    /// The Service's port number.
    pub port: u16,
    pub weight: u32,
    pub total_weight: u32,
    /// To the ClusterIP through kube-proxy instead of straight to a Pod
    /// (ingress-nginx `service-upstream`, Envoy Gateway Service routing).
    pub via_cluster_ip: bool,
}

/// A copy of the request a RequestMirror filter sends to another Service:
/// the copy's answer is dropped, so the client never sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mirror {
    pub service: NamespacedName,
    /// The Service port number named by the filter.
    pub port: u16,
    /// The share of requests mirrored: numerator / denominator.
    pub fraction: (u32, u32),
    /// Is this request's copy sent? (Drawn from the seed when the share is
    /// partial; never when the reference does not resolve.)
    pub sent: bool,
    /// Why the mirror's backendRef does not resolve (ResolvedRefs' reason).
    pub problem: Option<&'static str>,
}

/// Why the decision is what it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Reason {
    /// A rule matched and a backend was chosen.
    Routed,
    /// An Ingress `defaultBackend` took the request.
    DefaultBackend,
    /// No rule and no defaultBackend: the controller's own default backend.
    ControllerDefaultBackend,
    /// No listener on the port for the scheme (the connection is refused).
    NoListener,
    /// No listener for the TLS server name, or its certificate does not
    /// resolve: the TLS handshake fails.
    TlsHandshakeFailed,
    /// The Host header belongs to another listener than the SNI's.
    Misdirected,
    /// No route rule matched.
    NoMatchingRoute,
    /// A RequestRedirect filter answered.
    Redirect,
    /// A CORS filter answered a preflight request from an allowed origin
    /// (the backend never sees it).
    CorsPreflight,
    /// ingress-nginx's default redirect of HTTP to HTTPS for a TLS host.
    HttpsRedirect,
    /// The rule has no backends, or all weigh 0.
    NoBackends,
    /// The chosen backendRef is invalid (with ResolvedRefs' reason).
    InvalidBackend { reason: &'static str },
    /// The backend Service (or its port) does not exist.
    ServiceNotFound,
    /// The backend has no ready endpoints.
    NoReadyEndpoints,
    /// A match kpv cannot evaluate (a regular expression) was skipped.
    UnsupportedMatch,
    /// The proxy refuses the request before routing: two Host headers, or
    /// a path above the root (400).
    BadRequest,
}

/// What the backend receives.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ForwardedRequest {
    pub method: String,
    pub host: String,
    pub path: String,
    pub query: String,
    /// Lower-case names; repeated values comma-joined.
    pub headers: Headers,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub entry: EntryPoint,
    /// The HTTP status the client gets (`None`: no HTTP answer at all).
    pub status: Option<u16>,
    pub reason: Reason,
    /// (Gateway, listener name).
    pub listener: Option<(NamespacedName, String)>,
    /// The TLS Secret presented.
    pub tls_certificate: Option<NamespacedName>,
    /// HTTPS with no Secret for the name: the controller's own certificate.
    pub default_certificate: bool,
    pub route: Option<RouteRef>,
    pub redirect: Option<Redirect>,
    pub backend: Option<ChosenBackend>,
    /// Filters applied, by type name, in order.
    pub filters: Vec<&'static str>,
    /// RequestMirror copies, in filter order (rule's, then backendRef's);
    /// only when the request is forwarded (not on a redirect or a 500).
    pub mirrors: Vec<Mirror>,
    pub request: ForwardedRequest,
    /// ResponseHeaderModifier filters (and a CORS filter's headers) applied
    /// to the backend's reply.
    pub response_modifiers: Vec<HeaderModifier>,
    pub compared: Vec<Compared>,
    /// The path rules were compared with, when the proxy's normalisation
    /// changed it (see [`super::normalize`]).
    pub matched_path: Option<String>,
}

/// What the walk needs to know about Services: a port by number or name
/// (the Service port number), and how many ready endpoints it has.
pub trait BackendView {
    fn service_port(&self, service: &NamespacedName, port: &PortRef) -> Option<u16>;
    fn ready_endpoints(&self, service: &NamespacedName, port: u16) -> usize;
}

/// Header names (lower case) and values, in name order.
pub type Headers = crate::util::vecmap::VecMap<String, String>;

/// An HTTP request sent through an entry point (what `Dest::Http` carries).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct HttpSend {
    pub entry: EntryPoint,
    pub request: HttpRequest,
}

/// The parts of a request form, for a [`RequestError`]'s location.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RequestField {
    Method,
    Url,
    /// A header line (numbered from 1).
    Header(usize),
}

/// What is wrong with a request form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RequestProblem {
    /// The method is empty or not letters only.
    BadMethod,
    /// The URL does not start with `http://` or `https://`.
    NoScheme,
    /// The URL has no host, or its port is not 1–65535.
    BadAuthority,
    /// The URL contains a space or a control character.
    BadCharacter,
    /// A header line without `:`.
    HeaderNoColon,
    /// A header line whose name is empty or has a space.
    HeaderBadName,
    /// `Host:` whose value is not `NAME[:PORT]`.
    BadHostHeader,
    /// A header value with a line break or another control character.
    HeaderBadValue,
}

/// A request form's error: which part, at which column (from 1, in
/// characters), and what is wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct RequestError {
    pub field: RequestField,
    pub column: usize,
    pub problem: RequestProblem,
}

impl RequestError {
    /// The error in the CLI's words (`kpv http`, lessons): what is wrong
    /// with which part of `method`, `url` and `headers`.
    pub fn describe(&self, url: &str, method: &str, headers: &[(String, String)]) -> String {
        let header = |n: usize| {
            headers
                .get(n.saturating_sub(1))
                .map(|(k, v)| format!("-H '{k}: {v}'"))
                .unwrap_or_default()
        };
        match (self.problem, self.field) {
            (RequestProblem::BadMethod, _) => format!("-X `{method}` is not an HTTP method"),
            (RequestProblem::NoScheme, _) => {
                format!("`{url}`: the URL must start with http:// or https://")
            }
            (RequestProblem::BadAuthority, _) => {
                format!("`{url}`: cannot read HOST[:PORT] after the scheme")
            }
            (RequestProblem::BadCharacter, _) => format!(
                "`{url}`: a space or control character at column {}",
                self.column
            ),
            (RequestProblem::BadHostHeader, RequestField::Header(n)) => {
                format!("{}: not a host", header(n))
            }
            (RequestProblem::HeaderBadValue, RequestField::Header(n)) => format!(
                "header {n}: a line break or control character in a header would forge another header; give each header its own -H",
            ),
            (_, RequestField::Header(n)) => {
                format!("{}: the header name is empty or has a space", header(n))
            }
            (RequestProblem::HeaderNoColon, _) => "a header line has no `:`".to_string(),
            (
                RequestProblem::HeaderBadName
                | RequestProblem::BadHostHeader
                | RequestProblem::HeaderBadValue,
                _,
            ) => {
                "a header cannot be read".to_string()
            }
        }
    }
}

/// The proxy's pipeline steps, in order (stable names: `data-step` in the app).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProxyStage {
    /// The listener (Gateway) or the controller's port (Ingress) took the
    /// connection; on HTTPS, TLS ends here.
    Listener,
    /// The route object (HTTPRoute or Ingress) chosen for the host.
    Route,
    /// The rule and match that decided (with how many were compared).
    Rule,
    /// The filters applied (header modifiers, rewrites).
    Filters,
    /// The new connection to the backend, or the proxy's own answer.
    Backend,
}

impl ProxyStage {
    pub fn key(self) -> &'static str {
        match self {
            ProxyStage::Listener => "listener",
            ProxyStage::Route => "route",
            ProxyStage::Rule => "rule",
            ProxyStage::Filters => "filters",
            ProxyStage::Backend => "backend",
        }
    }
}

/// TLS as it ended at the proxy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TlsEnd {
    pub sni: String,
    /// The Secret presented (`None`: the controller's own certificate).
    pub certificate: Option<NamespacedName>,
}

/// One step inside the proxy Pod (a hop of kind `HopKind::Http`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProxyHop {
    pub stage: ProxyStage,
    /// The proxy Pod.
    pub proxy: NamespacedName,
    /// The request as the client sent it.
    pub request: HttpRequest,
    /// On the listener step of an HTTPS request.
    pub tls: Option<TlsEnd>,
    /// On the backend step: the proxy's new connection (from, to, through
    /// the ClusterIP).
    pub connect: Option<(SocketAddr, SocketAddr, bool)>,
    /// On the backend step without a connection: the status the proxy
    /// answers with itself.
    pub respond: Option<u16>,
    pub decision: Decision,
}
