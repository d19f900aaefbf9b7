//! An HTTP request as the app sends it and replays it: a method, a URL and
//! header lines read into a typed [`HttpRequest`] (or a located
//! [`RequestError`]); the request carried in a trace's destination
//! ([`HttpSend`], `Dest::Http`); and a [`Journey`] laid out as one
//! [`Trace`] whose proxy hops are the proxy's own pipeline — listener →
//! route → rule → filters → backend ([`ProxyHop`]) — so the timeline, the
//! pipeline strip and the event list treat it like any packet.
//!
//! Pure and deterministic: a request's trace depends only on the cluster,
//! the mode, the time it was sent and its seed, never on the packets sent
//! before it (the journey starts from an empty world state). Typed values
//! only; never words anything.

use super::journey::{Journey, JourneyHop, ProxyStep};
use super::values::{Decision, Scheme};
pub use super::values::{
    EntryPoint, HttpRequest, HttpSend, ProxyHop, ProxyStage, RequestError, RequestField,
    RequestProblem, TlsEnd,
};
use crate::model::NamespacedName;
use crate::net::trace::{Hop, HopKind, Request, Trace};
use serde::Serialize;

impl HttpRequest {
    /// The request a URL (`http(s)://[USER@]HOST[:PORT]/PATH[?QUERY][#FRAGMENT]`),
    /// a method and headers describe, as curl sends it: a `Host` header
    /// overrides the Host (DNS still resolves the URL's host); the SNI is
    /// `sni`, else the URL's host. A header with a line break in it is
    /// refused (it would forge another header). The error says what cannot
    /// be read.
    pub fn from_url(
        url: &str,
        method: &str,
        headers: &[(String, String)],
        sni: Option<&str>,
    ) -> Result<HttpRequest, String> {
        let broken = headers
            .iter()
            .position(|(k, v)| k.contains(['\r', '\n']) || v.contains(['\r', '\n']));
        if let Some(n) = broken {
            let e = RequestError {
                field: RequestField::Header(n + 1),
                column: 1,
                problem: RequestProblem::HeaderBadValue,
            };
            return Err(e.describe(url, method, headers));
        }
        let lines: String = headers.iter().map(|(k, v)| format!("{k}: {v}\n")).collect();
        let mut r =
            parse_request(method, url, &lines).map_err(|e| e.describe(url, method, headers))?;
        if let (Some(sni), Scheme::Https) = (sni, r.scheme) {
            r.sni = Some(sni.to_string());
        }
        Ok(r)
    }
}

/// Read a request form: `method`, `url` (see [`super::url::parse`]: the
/// fragment is dropped, a userinfo becomes curl's Basic `Authorization`,
/// IDN hosts are sent as A-labels) and `headers`, one `Name: value` per
/// line (blank lines skipped; `Host:` overrides the Host header as curl's
/// `-H` does; a second `Host:` is kept, for the proxy to refuse). The TLS
/// server name is the URL's host.
pub fn parse_request(method: &str, url: &str, headers: &str) -> Result<HttpRequest, RequestError> {
    let err = |field, column, problem| RequestError {
        field,
        column,
        problem,
    };
    let method = method.trim();
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Err(err(RequestField::Method, 1, RequestProblem::BadMethod));
    }
    let lead = url.len() - url.trim_start().len();
    let url = url.trim();
    let col = |byte: usize| url.get(..byte).map_or(0, |s| s.chars().count()) + lead + 1;
    if let Some(i) = url.find(|c: char| c.is_whitespace() || c.is_control()) {
        return Err(err(RequestField::Url, col(i), RequestProblem::BadCharacter));
    }
    let parts = super::url::parse(url).map_err(|(at, p)| err(RequestField::Url, col(at), p))?;
    let mut out_headers = Vec::new();
    let (mut host_name, mut host_port, mut host_given) = (parts.host.clone(), None, false);
    for (n, line) in headers.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let field = RequestField::Header(n + 1);
        let Some((k, v)) = line.split_once(':') else {
            let c = line.chars().count() + 1;
            return Err(err(field, c, RequestProblem::HeaderNoColon));
        };
        let name = k.trim();
        if name.is_empty() || name.contains(char::is_whitespace) {
            let c = line.len() - line.trim_start().len() + 1;
            return Err(err(field, c, RequestProblem::HeaderBadName));
        }
        if let Some(i) = v.find(|c: char| c.is_control() && c != '\t') {
            let c = k.chars().count() + 1 + v.get(..i).map_or(0, |s| s.chars().count()) + 1;
            return Err(err(field, c, RequestProblem::HeaderBadValue));
        }
        let name = name.to_ascii_lowercase();
        let value = v.trim().to_string();
        if name == "host" && !host_given {
            let (hn, hp) = super::url::split_host_port(&value).ok_or(err(
                field,
                k.chars().count() + 2,
                RequestProblem::BadHostHeader,
            ))?;
            host_name = hn;
            host_port = hp;
            host_given = true;
        } else {
            out_headers.push((name, value));
        }
    }
    if let Some(u) = &parts.userinfo {
        if !out_headers.iter().any(|(k, _)| k == "authorization") {
            out_headers.push(("authorization".into(), super::url::basic_credentials(u)));
        }
    }
    let scheme = parts.scheme;
    Ok(HttpRequest {
        scheme,
        port: parts.port.unwrap_or(scheme.default_port()),
        sni: (scheme == Scheme::Https).then(|| parts.host.clone()),
        authority: parts.host,
        host: host_name,
        host_port,
        method: method.to_string(),
        path: parts.path,
        query: parts.query,
        headers: out_headers,
    })
}

impl HttpRequest {
    /// The URL the request was written as (`https://host[:port]/path?query`).
    pub fn url(&self) -> String {
        let port = if self.port == self.scheme.default_port() {
            String::new()
        } else {
            format!(":{}", self.port)
        };
        let host = super::url::host_in_url(&self.authority);
        let query = if self.query.is_empty() {
            String::new()
        } else {
            format!("?{}", self.query)
        };
        format!(
            "{}://{host}{port}{}{query}",
            self.scheme.as_str(),
            self.path
        )
    }
}

/// A journey as one trace: the client's connection up to the proxy Pod,
/// the proxy's steps, its new connection to the backend, then the reply.
/// `request` is the packet as sent (its destination a `Dest::Http`).
pub fn journey_trace(j: &Journey, request: &Request) -> Trace {
    let t1 = &j.to_proxy;
    let mut trace = Trace {
        request: request.clone(),
        mode: t1.mode,
        node: t1.node.clone(),
        verdict: t1.verdict.clone(),
        endpoints: t1.endpoints.clone(),
        masquerade: t1.masquerade,
        rules_compared: t1.rules_compared + j.to_backend.as_ref().map_or(0, |t| t.rules_compared),
        outcome: match (&j.to_backend, &j.proxy_pod, &j.decision) {
            (Some(t2), _, _) => t2.outcome.clone(),
            // The proxy answered itself (or not at all): not a delivery.
            (None, Some(pod), Some(d)) => crate::net::trace::Outcome::Answered {
                pod: pod.clone(),
                status: d.status,
            },
            _ => t1.outcome.clone(),
        },
        hops: Vec::with_capacity(j.hops.len() + 4),
        established: false,
    };
    let http_req = match &request.dst {
        crate::net::trace::Dest::Http(h) => h.request.clone(),
        _ => return trace,
    };
    let mut last_packet = None;
    let mut tls: Option<TlsEnd> = None;
    let mut respond: Option<u16> = None;
    let mut connect = None;
    // The net hops before the proxy, then the proxy's steps at the first
    // proxy hop, then the rest.
    let mut proxy_done = false;
    // The proxy Pod's node: where the pod network took the connection, else
    // the node whose rules handled it last.
    let proxy_node = t1
        .hops
        .iter()
        .rev()
        .find_map(|h| match &h.what {
            HopKind::PodNetwork { to, .. } => Some(to.clone()),
            _ => None,
        })
        .or_else(|| t1.hops.iter().rev().find_map(|h| h.node.clone()));
    let mut pending: Vec<Hop> = Vec::new();
    for h in &j.hops {
        match h {
            JourneyHop::Net(hop) => {
                last_packet = Some(hop.after);
                if proxy_done || j.decision.is_none() {
                    pending.push(hop.clone());
                } else {
                    trace.hops.push(hop.clone());
                }
            }
            JourneyHop::Proxy { step, .. } => match step {
                ProxyStep::TlsTerminate { sni, certificate } => {
                    tls = Some(TlsEnd {
                        sni: sni.clone(),
                        certificate: certificate.clone(),
                    })
                }
                ProxyStep::Route { .. } => {}
                ProxyStep::Connect {
                    from,
                    to,
                    via_cluster_ip,
                } => {
                    connect = Some((*from, *to, *via_cluster_ip));
                    proxy_done = true;
                }
                ProxyStep::Respond { status } => {
                    respond = Some(*status);
                    proxy_done = true;
                }
            },
        }
    }
    let (Some(d), Some(pod), Some(packet)) = (&j.decision, &j.proxy_pod, last_packet) else {
        trace.hops.extend(pending);
        return trace;
    };
    // The packet as it arrived at the proxy (before the second leg).
    let at_proxy = trace.hops.last().map_or(packet, |h| h.after);
    let mut stages = vec![ProxyStage::Listener];
    if d.route.is_some() {
        stages.push(ProxyStage::Route);
        stages.push(ProxyStage::Rule);
    }
    if !d.filters.is_empty() {
        stages.push(ProxyStage::Filters);
    }
    stages.push(ProxyStage::Backend);
    for stage in stages {
        let backend = stage == ProxyStage::Backend;
        let after = match (backend, connect) {
            (true, Some((from, to, _))) => {
                crate::model::packet::Packet::new(from, to, at_proxy.protocol)
            }
            _ => at_proxy,
        };
        trace.hops.push(Hop {
            place: crate::net::trace::Place::Pod(pod.clone()),
            what: HopKind::Http(Box::new(ProxyHop {
                stage,
                proxy: pod.clone(),
                request: http_req.clone(),
                tls: if stage == ProxyStage::Listener {
                    tls.clone()
                } else {
                    None
                },
                connect: if backend { connect } else { None },
                respond: if backend { respond } else { None },
                decision: d.clone(),
            })),
            before: at_proxy,
            after,
            step: None,
            node: proxy_node.clone(),
        });
    }
    // The second connection's own Send repeats the proxy's connect, and its
    // reply goes back to the proxy, not the client: only the client's reply
    // (the last hop) is kept.
    let last = pending.len().saturating_sub(1);
    trace
        .hops
        .extend(pending.into_iter().enumerate().filter_map(|(i, h)| {
            let drop = (i == 0 && connect.is_some() && matches!(h.what, HopKind::Send))
                || (i != last && matches!(h.what, HopKind::Reply { .. }));
            (!drop).then_some(h)
        }));
    trace
}

/// The proxy steps of a trace's hops, by hop index.
pub fn proxy_hops(trace: &Trace) -> impl Iterator<Item = (usize, &ProxyHop)> {
    trace
        .hops
        .iter()
        .enumerate()
        .filter_map(|(i, h)| match &h.what {
            HopKind::Http(p) => Some((i, p.as_ref())),
            _ => None,
        })
}

/// The routing decision of an HTTP request's trace.
pub fn decision(trace: &Trace) -> Option<&Decision> {
    proxy_hops(trace).next().map(|(_, p)| &p.decision)
}

/// A URL that reaches something through `entry`, for the app's request
/// form: HTTPS to the first host with a certificate, else HTTP to the
/// first host named, else to the entry point's address.
pub fn default_url(prepared: &super::Prepared, entry: &EntryPoint) -> String {
    use super::table::Table;
    let address = || {
        prepared
            .proxies
            .iter()
            .find(|p| &p.entry == entry)
            .and_then(|p| p.address)
            .map_or_else(|| "localhost".to_string(), |a| a.to_string())
    };
    let concrete = |h: &str| {
        h.strip_prefix("*.")
            .map_or(h.to_string(), |r| format!("www.{r}"))
    };
    // (host, TLS, port): the port only when it is not the scheme's own.
    let pick = match prepared.table.tables.get(entry) {
        Some(Table::Ingress(t)) => t
            .hosts
            .iter()
            .filter_map(|h| Some((h.host.as_deref()?, h.tls_secret.is_some())))
            .max_by_key(|(_, tls)| *tls)
            .map(|(h, tls)| (concrete(h), tls, None)),
        // A listener that routes something, TLS first; the host a route
        // names (concrete, and served), else the listener's own; its port.
        Some(Table::Gateway(g)) => g
            .listeners
            .iter()
            .filter(|l| !l.conflicted)
            .map(|l| {
                let tls = l.certificate.is_some();
                let routed = !l.matches.is_empty();
                let host = l
                    .matches
                    .iter()
                    .find_map(|m| m.hostnames.first().map(String::as_str))
                    .or(l.listener.hostname.as_deref())
                    .map_or_else(address, concrete);
                ((routed, tls), (host, tls, Some(l.listener.port)))
            })
            .max_by_key(|(rank, _)| *rank)
            .map(|(_, pick)| pick),
        None => None,
    };
    let port = |tls: bool, port: Option<u16>| match port {
        Some(p) if p != if tls { 443 } else { 80 } => format!(":{p}"),
        _ => String::new(),
    };
    match pick {
        Some((host, true, p)) => format!("https://{host}{}/", port(true, p)),
        Some((host, false, p)) => format!("http://{host}{}/", port(false, p)),
        None => format!("http://{}/", address()),
    }
}

/// The packet that sends `request` through `entry` from `origin`.
pub fn request_packet(
    entry: EntryPoint,
    request: HttpRequest,
    origin: crate::net::trace::Origin,
) -> Request {
    Request {
        origin,
        port: request.port,
        dst: crate::net::trace::Dest::Http(Box::new(HttpSend { entry, request })),
        protocol: crate::model::packet::Protocol::Tcp,
        src_port: 40000,
        keep_open: false,
    }
}

/// One row of an entry point's routing table as the app lists it, in the
/// order the controller evaluates it. The texts are the API's own words and
/// object names (`PathPrefix /store header:env=canary`, `default/home:80
/// w=1`), the same in every language.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RoutingRow {
    /// The listener (Gateway: `https HTTPS:443`) or host (Ingress) section.
    pub section: String,
    /// The section's TLS Secret, if any.
    pub tls: Option<NamespacedName>,
    /// Hostnames the row applies to (`*`: any).
    pub hosts: String,
    /// The match (`Prefix /api`, `PathPrefix /store header:env=canary`).
    pub matching: String,
    /// Backends with weights, then filters.
    pub to: String,
    /// Which rule this is (`None`: a default backend row).
    pub route: Option<super::walk::RouteRef>,
}

impl RoutingRow {
    /// Is this the row that decided `d`?
    pub fn decided(&self, d: &Decision) -> bool {
        match (&self.route, &d.route) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        }
    }
}

/// The rows of `entry`'s routing table, in evaluation order.
pub fn table_rows(prepared: &super::Prepared, entry: &EntryPoint) -> Vec<RoutingRow> {
    use super::render::{
        backend_text, denied_path_text, filter_text, ingress_backend_text, ingress_path_text,
        listener_protocol, match_text, service_target_text,
    };
    use super::table::Table;
    use super::walk::RouteRef;
    let mut out = Vec::new();
    match prepared.table.tables.get(entry) {
        Some(Table::Ingress(t)) => {
            for h in &t.hosts {
                let host = h.host.clone().unwrap_or_else(|| "*".into());
                for p in &h.paths {
                    out.push(RoutingRow {
                        section: format!("host {host}"),
                        tls: h.tls_secret.clone(),
                        hosts: host.clone(),
                        matching: ingress_path_text(h, p),
                        to: ingress_backend_text(p),
                        route: Some(RouteRef {
                            kind: "Ingress",
                            name: p.ingress.clone(),
                            rule: p.rule,
                            index: p.index,
                        }),
                    });
                }
            }
            let default = t
                .default_backend
                .as_ref()
                .map_or_else(|| "404".to_string(), |(_, b)| service_target_text(b));
            out.push(RoutingRow {
                section: "defaultBackend".into(),
                tls: None,
                hosts: "*".into(),
                matching: "*".into(),
                to: default,
                route: None,
            });
            for d in &t.denied {
                for (rule, index, path, ty) in &d.paths {
                    out.push(RoutingRow {
                        section: "denied by the admission webhook".into(),
                        tls: None,
                        hosts: "—".into(),
                        matching: denied_path_text(path, *ty),
                        to: "—".into(),
                        route: Some(RouteRef {
                            kind: "Ingress",
                            name: d.ingress.clone(),
                            rule: *rule,
                            index: *index,
                        }),
                    });
                }
            }
        }
        Some(Table::Gateway(g)) => {
            for l in &g.listeners {
                let proto = listener_protocol(&l.listener.protocol);
                for m in &l.matches {
                    let rule = prepared.table.rule_of(m);
                    let mut to: Vec<String> = rule
                        .map(|r| {
                            r.backends
                                .iter()
                                .map(|b| backend_text(b, &m.route.namespace))
                                .collect()
                        })
                        .unwrap_or_default();
                    to.extend(rule.iter().flat_map(|r| r.filters.iter().map(filter_text)));
                    out.push(RoutingRow {
                        section: format!("{} {proto}:{}", l.listener.name, l.listener.port),
                        tls: l.certificate.clone(),
                        hosts: if m.hostnames.is_empty() {
                            "*".into()
                        } else {
                            m.hostnames.join(",")
                        },
                        matching: match_text(&m.matching),
                        to: if to.is_empty() {
                            "—".into()
                        } else {
                            to.join(", ")
                        },
                        route: Some(RouteRef {
                            kind: "HTTPRoute",
                            name: m.route.clone(),
                            rule: m.rule,
                            index: m.index,
                        }),
                    });
                }
            }
        }
        None => {}
    }
    out
}

pub use super::names_host;

/// The entry point a request for `host` goes to (see
/// [`super::proxy_for_host`]).
pub fn entry_for_host(prepared: &super::Prepared, host: &str) -> Option<EntryPoint> {
    super::proxy_for_host(&prepared.table, &prepared.proxies, host).map(|p| p.entry.clone())
}
