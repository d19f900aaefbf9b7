//! One HTTP request through one entry point's routing table: the decision
//! (status, listener, certificate, route/rule/match, filters, backend) and
//! every rule compared on the way, as typed values. The Ingress and Gateway
//! API halves are in [`super::ingress`] and [`super::gateway`]; this file
//! holds the request, the decision and what both share (headers, backends,
//! the forwarded-for headers). Pure: weighted picks use the caller's
//! seeded chooser; endpoint readiness comes from a [`BackendView`].

use super::model::{EntryPoint, Implementation, RoutingTable, ServiceTarget, Table};
use crate::choose::Chooser;
use crate::model::{NamespacedName, PortRef};
use serde::Serialize;
use std::net::IpAddr;

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
    /// The request a URL (`http(s)://HOST[:PORT]/PATH[?QUERY]`), a method
    /// and headers describe, as curl sends it: a `Host` header overrides
    /// the Host (DNS still resolves the URL's host); the SNI is `sni`, else
    /// the URL's host. The error says what cannot be read.
    pub fn from_url(
        url: &str,
        method: &str,
        headers: &[(String, String)],
        sni: Option<&str>,
    ) -> Result<HttpRequest, String> {
        let lines: String = headers.iter().map(|(k, v)| format!("{k}: {v}\n")).collect();
        let mut r = super::send::parse_request(method, url, &lines)
            .map_err(|e| e.describe(url, method, headers))?;
        if let (Some(sni), Scheme::Https) = (sni, r.scheme) {
            r.sni = Some(sni.to_string());
        }
        Ok(r)
    }

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
    pub response_modifiers: Vec<super::objects::HeaderModifier>,
    pub compared: Vec<Compared>,
}

/// What the walk needs to know about Services: a port by number or name
/// (the Service port number), and how many ready endpoints it has.
pub trait BackendView {
    fn service_port(&self, service: &NamespacedName, port: &PortRef) -> Option<u16>;
    fn ready_endpoints(&self, service: &NamespacedName, port: u16) -> usize;
}

/// Header names (lower case) and values, in name order.
pub type Headers = crate::vecmap::VecMap<String, String>;

/// The request's headers as the backend gets them (names lower case,
/// repeats comma-joined).
pub fn header_map(headers: &[(String, String)]) -> Headers {
    let mut out = Headers::new();
    for (k, v) in headers {
        let k = k.to_ascii_lowercase();
        if k == "host" {
            continue;
        }
        match out.get_mut(&k) {
            Some(x) => {
                x.push(',');
                x.push_str(v);
            }
            None => {
                out.insert(k, v.clone());
            }
        }
    }
    out
}

impl Decision {
    pub(super) fn new(entry: EntryPoint, req: &HttpRequest) -> Decision {
        Decision {
            entry,
            status: None,
            reason: Reason::NoMatchingRoute,
            listener: None,
            tls_certificate: None,
            default_certificate: false,
            route: None,
            redirect: None,
            backend: None,
            filters: Vec::new(),
            mirrors: Vec::new(),
            request: ForwardedRequest {
                method: req.method.clone(),
                host: req.host_header(),
                path: req.path.clone(),
                query: req.query.clone(),
                headers: header_map(&req.headers),
            },
            response_modifiers: Vec::new(),
            compared: Vec::new(),
        }
    }

    /// The headers the client gets: the redirect's `location`, or the
    /// backend's reply headers through the ResponseHeaderModifier filters.
    pub fn response_headers(&self, backend: &[(String, String)]) -> Headers {
        if let Some(r) = &self.redirect {
            return Headers::from([("location".to_string(), r.location.clone())]);
        }
        if self.status != Some(200) {
            return Headers::new();
        }
        // A preflight answered by the proxy carries only the CORS headers.
        let mut h = if self.reason == Reason::CorsPreflight {
            Headers::new()
        } else {
            header_map(backend)
        };
        for m in &self.response_modifiers {
            super::gateway::modify(&mut h, m);
        }
        h
    }

    /// End with `status` and `reason`.
    pub(super) fn answer(mut self, status: u16, reason: Reason) -> Decision {
        self.status = Some(status);
        self.reason = reason;
        self
    }

    /// Send to a Service port: 503 without ready endpoints (and, for an
    /// Ingress, without the Service or port, as ingress-nginx answers).
    pub(super) fn send_to(
        mut self,
        view: &dyn BackendView,
        target: &ServiceTarget,
        weights: (u32, u32),
        via_cluster_ip: bool,
        reason: Reason,
    ) -> Decision {
        let Some(port) = view.service_port(&target.service, &target.port) else {
            return self.answer(503, Reason::ServiceNotFound);
        };
        self.backend = Some(ChosenBackend {
            service: target.service.clone(),
            port,
            weight: weights.0,
            total_weight: weights.1,
            via_cluster_ip,
        });
        if view.ready_endpoints(&target.service, port) == 0 {
            return self.answer(503, Reason::NoReadyEndpoints);
        }
        self.answer(200, reason)
    }
}

/// The forwarded-for headers the proxy adds, from the address it saw the
/// connection come from: ingress-nginx (without `use-forwarded-headers`)
/// sets `X-Forwarded-For` and `X-Real-IP` to it; Envoy appends it to
/// `X-Forwarded-For`. Both set `X-Forwarded-Proto`.
pub fn add_forwarded(d: &mut Decision, imp: &Implementation, peer: IpAddr, scheme: Scheme) {
    let h = &mut d.request.headers;
    match imp {
        Implementation::IngressNginx | Implementation::Other(_) => {
            h.insert("x-forwarded-for".into(), peer.to_string());
            h.insert("x-real-ip".into(), peer.to_string());
        }
        Implementation::EnvoyGateway => {
            let v = match h.get("x-forwarded-for") {
                Some(x) => format!("{x},{peer}"),
                None => peer.to_string(),
            };
            h.insert("x-forwarded-for".into(), v);
        }
    }
    h.insert("x-forwarded-proto".into(), scheme.as_str().into());
}

/// Decide where `req` goes through `entry`'s table.
pub fn walk(
    table: &RoutingTable,
    entry: &EntryPoint,
    req: &HttpRequest,
    view: &dyn BackendView,
    chooser: &mut Chooser,
) -> Option<Decision> {
    match table.tables.get(entry)? {
        Table::Ingress(t) => Some(super::ingress::walk(table, t, entry, req, view)),
        Table::Gateway(t) => Some(super::gateway::walk(table, t, entry, req, view, chooser)),
    }
}
