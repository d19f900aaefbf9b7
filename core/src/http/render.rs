//! `kpv routes`: each entry point's routing table in the order the
//! controller evaluates it (listener/host → path/match → backends with
//! weights → filters), as text and as JSON. The only place routing tables
//! become text.

use super::model::{RoutingTable, Table};
use super::objects::{Filter, PathMatch, PathType, RouteMatch};
use std::fmt::Write as _;

fn path_type(t: PathType) -> &'static str {
    match t {
        PathType::Exact => "Exact",
        PathType::Prefix => "Prefix",
        PathType::ImplementationSpecific => "ImplementationSpecific",
    }
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
                    for p in &h.paths {
                        let backend = p
                            .backend
                            .as_ref()
                            .map(|b| format!("{}:{}", b.service, b.port))
                            .unwrap_or_else(|| "(resource)".into());
                        let _ = writeln!(
                            s,
                            "    {} {} → {backend}  [Ingress {} rule {} path {}]",
                            path_type(p.path_type),
                            p.path,
                            p.ingress,
                            p.rule,
                            p.index
                        );
                    }
                    if let Some((_, b)) = &h.default_backend {
                        let _ = writeln!(
                            s,
                            "    (no path) → {}:{}  [defaultBackend]",
                            b.service, b.port
                        );
                    }
                }
                match &t.default_backend {
                    Some((ing, b)) => {
                        let _ = writeln!(
                            s,
                            "  default → {}:{}  [Ingress {ing} defaultBackend]",
                            b.service, b.port
                        );
                    }
                    None => {
                        let _ = writeln!(s, "  default → 404 (the controller's default backend)");
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
                    let proto = match &l.listener.protocol {
                        super::objects::ListenerProtocol::Http => "HTTP".to_string(),
                        super::objects::ListenerProtocol::Https => "HTTPS".to_string(),
                        super::objects::ListenerProtocol::Other(p) => p.clone(),
                    };
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
                        let rule = rt
                            .objects
                            .routes
                            .iter()
                            .find(|r| r.meta.id == m.route)
                            .and_then(|r| r.rules.get(m.rule));
                        let backends = rule
                            .map(|r| {
                                r.backends
                                    .iter()
                                    .map(|b| {
                                        format!(
                                            "{}/{}:{} w={}",
                                            b.target
                                                .namespace
                                                .as_deref()
                                                .unwrap_or(&m.route.namespace),
                                            b.target.name,
                                            b.port.map(|p| p.to_string()).unwrap_or_default(),
                                            b.weight
                                        )
                                    })
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
                        "backend": p.backend.as_ref().map(|b| format!("{}:{}", b.service, b.port)),
                        "ingress": p.ingress.to_string(),
                        "rule": p.rule,
                        "path_index": p.index,
                    })).collect::<Vec<_>>(),
                    "default_backend": h.default_backend.as_ref().map(|(_, b)| format!("{}:{}", b.service, b.port)),
                })).collect::<Vec<_>>(),
                "default_backend": t.default_backend.as_ref().map(|(_, b)| format!("{}:{}", b.service, b.port)),
            }),
            Table::Gateway(t) => json!({
                "entry": entry.to_string(),
                "kind": "gateway",
                "class": t.class,
                "controller": t.controller,
                "listeners": t.listeners.iter().map(|l| json!({
                    "name": l.listener.name,
                    "port": l.listener.port,
                    "protocol": match &l.listener.protocol {
                        super::objects::ListenerProtocol::Http => "HTTP".to_string(),
                        super::objects::ListenerProtocol::Https => "HTTPS".to_string(),
                        super::objects::ListenerProtocol::Other(p) => p.clone(),
                    },
                    "hostname": l.listener.hostname,
                    "tls_certificate": l.certificate.as_ref().map(|c| c.to_string()),
                    "attached_routes": l.attached_routes,
                    "matches": l.matches.iter().map(|m| {
                        let rule = rt.objects.routes.iter().find(|r| r.meta.id == m.route).and_then(|r| r.rules.get(m.rule));
                        json!({
                            "route": m.route.to_string(),
                            "rule": m.rule,
                            "match": m.index,
                            "hostnames": m.hostnames,
                            "condition": match_text(&m.matching),
                            "backends": rule.map(|r| r.backends.iter().map(|b| json!({
                                "backend": format!("{}/{}:{}", b.target.namespace.as_deref().unwrap_or(&m.route.namespace), b.target.name, b.port.map(|p| p.to_string()).unwrap_or_default()),
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
