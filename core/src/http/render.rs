//! `kpv routes`: each entry point's routing table in the order the
//! controller evaluates it (listener/host → path/match → backends with
//! weights → filters), as text and as JSON. The only place routing tables
//! become text.

use super::objects::{BackendRef, Filter, ListenerProtocol, PathMatch, PathType, RouteMatch};
use super::table::{HostEntry, IngressPathEntry, RoutingTable, ServiceTarget, Table};
use std::fmt::Write as _;

/// An Ingress path's type as the API writes it.
pub fn path_type(t: PathType) -> &'static str {
    match t {
        PathType::Exact => "Exact",
        PathType::Prefix => "Prefix",
        PathType::ImplementationSpecific => "ImplementationSpecific",
    }
}

/// An Ingress path as its controller matches it: `Prefix /api`, or on an
/// ingress-nginx host with regular expressions nginx's own
/// `~* ^/api(/|$)(.*)`.
pub fn ingress_path_text(h: &HostEntry, p: &IngressPathEntry) -> String {
    if h.regex_by.is_some() {
        format!("~* ^{}", p.path)
    } else {
        format!("{} {}", path_type(p.path_type), p.path)
    }
}

/// An Ingress path's backend, with ingress-nginx's rewrite if any.
pub fn ingress_backend_text(p: &IngressPathEntry) -> String {
    let backend = p
        .backend
        .as_ref()
        .map_or_else(|| "(resource)".into(), service_target_text);
    match &p.rewrite {
        Some(t) => format!("{backend} · rewrite {t}"),
        None => backend,
    }
}

/// What ingress-nginx's admission webhook answers for a denied path.
pub fn denied_path_text(path: &str, t: PathType) -> String {
    format!("path {path} cannot be used with pathType {}", path_type(t))
}

/// A listener's protocol as the API writes it.
pub fn listener_protocol(p: &ListenerProtocol) -> &str {
    match p {
        ListenerProtocol::Http => "HTTP",
        ListenerProtocol::Https => "HTTPS",
        ListenerProtocol::Other(p) => p,
    }
}

/// An Ingress backend: `ns/name:port`.
pub fn service_target_text(b: &ServiceTarget) -> String {
    format!("{}:{}", b.service, b.port)
}

/// A route's backendRef as `ns/name:port` (in the route's namespace
/// `route_ns` when it names none; no port when it gives none).
fn backend_ref_text(b: &BackendRef, route_ns: &str) -> String {
    format!(
        "{}/{}:{}",
        b.target.namespace.as_deref().unwrap_or(route_ns),
        b.target.name,
        b.port.map(|p| p.to_string()).unwrap_or_default()
    )
}

/// A route's backendRef with its weight: `ns/name:port w=N`.
pub fn backend_text(b: &BackendRef, route_ns: &str) -> String {
    format!("{} w={}", backend_ref_text(b, route_ns), b.weight)
}

/// One match as `PathPrefix /foo method=GET header:x=y query:a=b`.
pub fn match_text(m: &RouteMatch) -> String {
    let mut s = match &m.path {
        PathMatch::Exact(p) => format!("Exact {p}"),
        PathMatch::Prefix(p) => format!("PathPrefix {p}"),
        PathMatch::Regex(p) => format!("RegularExpression {p}"),
    };
    if let Some(x) = &m.method {
        let _ = write!(s, " method={x}");
    }
    for h in &m.headers {
        let _ = write!(s, " header:{}={}", h.name, h.value);
    }
    for q in &m.query {
        let _ = write!(s, " query:{}={}", q.name, q.value);
    }
    s
}

pub fn filter_text(f: &Filter) -> String {
    match f {
        Filter::RequestHeaderModifier(_) => "RequestHeaderModifier".into(),
        Filter::ResponseHeaderModifier(_) => "ResponseHeaderModifier".into(),
        Filter::RequestRedirect {
            scheme,
            hostname,
            port,
            status,
            ..
        } => {
            let mut s = format!("RequestRedirect {status}");
            if let Some(x) = scheme {
                let _ = write!(s, " scheme={x}");
            }
            if let Some(x) = hostname {
                let _ = write!(s, " hostname={x}");
            }
            if let Some(x) = port {
                let _ = write!(s, " port={x}");
            }
            s
        }
        Filter::UrlRewrite { .. } => "URLRewrite".into(),
        Filter::RequestMirror {
            target,
            port,
            numerator,
            denominator,
        } => {
            let mut s = match &target.namespace {
                Some(ns) => format!("RequestMirror to {ns}/{}", target.name),
                None => format!("RequestMirror to {}", target.name),
            };
            if let Some(p) = port {
                let _ = write!(s, ":{p}");
            }
            if numerator < denominator {
                let _ = write!(s, " ({numerator}/{denominator} of requests)");
            }
            s
        }
        Filter::Cors(c) => format!("CORS from {}", c.allow_origins.join(" ")),
        Filter::Other(x) => x.clone(),
    }
}

/// `kpv routes` as text.
pub fn render_text(rt: &RoutingTable) -> String {
    let mut s = String::new();
    for (entry, table) in &rt.tables {
        match table {
            Table::Ingress(t) => {
                let _ = writeln!(s, "{entry}  (controller {})", t.controller);
                for h in &t.hosts {
                    let tls = h
                        .tls_secret
                        .as_ref()
                        .map(|x| format!("  tls {x}"))
                        .unwrap_or_default();
                    let redirect = if h.ssl_redirect {
                        "  http→https 308"
                    } else {
                        ""
                    };
                    let _ = writeln!(
                        s,
                        "  host {}{tls}{redirect}",
                        h.host.as_deref().unwrap_or("*")
                    );
                    if let Some(by) = &h.regex_by {
                        let _ = writeln!(
                            s,
                            "    (every path is a case-insensitive regular expression, in nginx's order: Ingress {by} sets use-regex or rewrite-target)"
                        );
                    }
                    for p in &h.paths {
                        let _ = writeln!(
                            s,
                            "    {} → {}  [Ingress {} rule {} path {}]",
                            ingress_path_text(h, p),
                            ingress_backend_text(p),
                            p.ingress,
                            p.rule,
                            p.index
                        );
                    }
                    if let Some((_, b)) = &h.default_backend {
                        let _ = writeln!(
                            s,
                            "    (no path) → {}  [defaultBackend]",
                            service_target_text(b)
                        );
                    }
                }
                match &t.default_backend {
                    Some((ing, b)) => {
                        let _ = writeln!(
                            s,
                            "  default → {}  [Ingress {ing} defaultBackend]",
                            service_target_text(b)
                        );
                    }
                    None => {
                        let _ = writeln!(s, "  default → 404 (the controller's default backend)");
                    }
                }
                for d in &t.denied {
                    for (_, _, path, ty) in &d.paths {
                        let _ = writeln!(
                            s,
                            "  denied by the admission webhook: Ingress {}: {}",
                            d.ingress,
                            denied_path_text(path, *ty)
                        );
                    }
                }
            }
            Table::Gateway(t) => {
                let _ = writeln!(
                    s,
                    "{entry}  (class {}, controller {})",
                    t.class, t.controller
                );
                for l in &t.listeners {
                    let proto = listener_protocol(&l.listener.protocol);
                    let cert = l
                        .certificate
                        .as_ref()
                        .map(|c| format!("  tls {c}"))
                        .unwrap_or_default();
                    let _ = writeln!(
                        s,
                        "  listener {} {proto}:{} host {}{cert}  ({} route(s))",
                        l.listener.name,
                        l.listener.port,
                        l.listener.hostname.as_deref().unwrap_or("*"),
                        l.attached_routes
                    );
                    for m in &l.matches {
                        let hosts = if m.hostnames.is_empty() {
                            "*".to_string()
                        } else {
                            m.hostnames.join(",")
                        };
                        let rule = rt.rule_of(m);
                        let backends = rule
                            .map(|r| {
                                r.backends
                                    .iter()
                                    .map(|b| backend_text(b, &m.route.namespace))
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            })
                            .unwrap_or_default();
                        let filters = rule
                            .map(|r| {
                                r.filters
                                    .iter()
                                    .map(filter_text)
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            })
                            .unwrap_or_default();
                        let _ = writeln!(
                            s,
                            "    {hosts} {} → {}{}  [HTTPRoute {} rule {} match {}]",
                            match_text(&m.matching),
                            if backends.is_empty() {
                                "(no backends)".into()
                            } else {
                                backends
                            },
                            if filters.is_empty() {
                                String::new()
                            } else {
                                format!("  filters: {filters}")
                            },
                            m.route,
                            m.rule,
                            m.index
                        );
                    }
                }
            }
        }
    }
    if s.is_empty() {
        s.push_str("no Ingress or Gateway in the input\n");
    }
    s
}

/// `kpv routes --format json`.
#[cfg(feature = "json")]
pub fn render_json(rt: &RoutingTable) -> serde_json::Value {
    use serde_json::json;
    let tables: Vec<serde_json::Value> = rt
        .tables
        .iter()
        .map(|(entry, table)| match table {
            Table::Ingress(t) => json!({
                "entry": entry.to_string(),
                "kind": "ingressclass",
                "controller": t.controller,
                "hosts": t.hosts.iter().map(|h| json!({
                    "host": h.host,
                    "tls_certificate": h.tls_secret.as_ref().map(|x| x.to_string()),
                    "https_redirect": h.ssl_redirect,
                    "paths": h.paths.iter().map(|p| json!({
                        "path": p.path,
                        "path_type": path_type(p.path_type),
                        "backend": p.backend.as_ref().map(service_target_text),
                        "ingress": p.ingress.to_string(),
                        "rule": p.rule,
                        "path_index": p.index,
                        "regex": h.regex_by.is_some(),
                        "rewrite_target": p.rewrite,
                    })).collect::<Vec<_>>(),
                    "default_backend": h.default_backend.as_ref().map(|(_, b)| service_target_text(b)),
                })).collect::<Vec<_>>(),
                "default_backend": t.default_backend.as_ref().map(|(_, b)| service_target_text(b)),
                "denied": t.denied.iter().flat_map(|d| d.paths.iter().map(|(rule, index, path, ty)| json!({
                    "ingress": d.ingress.to_string(),
                    "rule": rule,
                    "path_index": index,
                    "message": denied_path_text(path, *ty),
                }))).collect::<Vec<_>>(),
            }),
            Table::Gateway(t) => json!({
                "entry": entry.to_string(),
                "kind": "gateway",
                "class": t.class,
                "controller": t.controller,
                "listeners": t.listeners.iter().map(|l| json!({
                    "name": l.listener.name,
                    "port": l.listener.port,
                    "protocol": listener_protocol(&l.listener.protocol),
                    "hostname": l.listener.hostname,
                    "tls_certificate": l.certificate.as_ref().map(|c| c.to_string()),
                    "attached_routes": l.attached_routes,
                    "matches": l.matches.iter().map(|m| {
                        let rule = rt.rule_of(m);
                        json!({
                            "route": m.route.to_string(),
                            "rule": m.rule,
                            "match": m.index,
                            "hostnames": m.hostnames,
                            "condition": match_text(&m.matching),
                            "backends": rule.map(|r| r.backends.iter().map(|b| json!({
                                "backend": backend_ref_text(b, &m.route.namespace),
                                "weight": b.weight,
                            })).collect::<Vec<_>>()).unwrap_or_default(),
                            "filters": rule.map(|r| r.filters.iter().map(filter_text).collect::<Vec<_>>()).unwrap_or_default(),
                        })
                    }).collect::<Vec<_>>(),
                })).collect::<Vec<_>>(),
            }),
        })
        .collect();
    json!({ "entry_points": tables })
}
