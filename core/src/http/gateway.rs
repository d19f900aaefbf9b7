//! Gateway API semantics for one request: the listener (port and
//! protocol, then the most specific hostname; on HTTPS by SNI, with 421
//! when the Host header belongs to another listener), the attached
//! HTTPRoute matches in the API's precedence (hostname specificity first,
//! then the order compiled in [`super::table`]), path/method/headers/query
//! AND'ed within a match, the rule's filters in order, and a weighted
//! backend (weight 0 never chosen; none or all-zero: 500; an invalid ref:
//! 500; no ready endpoints: 503). Decides only; no text.

use super::matching::{gateway_host_matches, prefix_matches, replace_prefix};
use super::objects::Objects;
use super::objects::{
    Cors, Filter, HeaderModifier, ListenerProtocol, PathMatch, PathModifier, RouteMatch,
};
use super::status::{backend_problem, mirror_ref};
use super::table::{CompiledMatch, GatewayTable, ListenerTable, RoutingTable, ServiceTarget};
use super::values::{
    BackendView, Compared, Decision, EntryPoint, Headers, HttpRequest, Mirror, Reason, Redirect,
    RouteRef, Scheme,
};
use crate::model::{NamespacedName, PortRef};
use crate::util::choose::Chooser;

/// How specifically a listener's hostname matches `name` (lower is more).
fn listener_rank(l: &ListenerTable, name: &str) -> Option<(u8, std::cmp::Reverse<usize>)> {
    match &l.listener.hostname {
        None => Some((2, std::cmp::Reverse(0))),
        Some(h) if !h.starts_with('*') => (h == name).then_some((0, std::cmp::Reverse(h.len()))),
        Some(h) => gateway_host_matches(h, name).then_some((1, std::cmp::Reverse(h.len()))),
    }
}

fn pick_listener<'t>(ls: &[&'t ListenerTable], name: &str) -> Option<&'t ListenerTable> {
    ls.iter()
        .filter_map(|l| listener_rank(l, name).map(|r| (r, *l)))
        .min_by_key(|(r, _)| *r)
        .map(|(_, l)| l)
}

/// The route hostname specificity for `host`: (characters of a matching
/// exact hostname, characters of any matching hostname).
fn host_rank(m: &CompiledMatch, host: &str) -> Option<(usize, usize)> {
    if m.hostnames.is_empty() {
        return Some((0, 0));
    }
    m.hostnames
        .iter()
        .filter_map(|h| {
            if h.starts_with('*') {
                gateway_host_matches(h, host).then_some((0, h.len()))
            } else {
                (h == host).then_some((h.len(), h.len()))
            }
        })
        .max()
}

fn query_pairs(q: &str) -> Vec<(&str, &str)> {
    q.split('&')
        .filter(|x| !x.is_empty())
        .map(|kv| kv.split_once('=').unwrap_or((kv, "")))
        .collect()
}

/// Does one match accept the request? `None`: it cannot be evaluated.
fn matches(m: &RouteMatch, req: &HttpRequest) -> Option<bool> {
    let path_ok = match &m.path {
        PathMatch::Exact(p) => *p == req.path,
        PathMatch::Prefix(p) => prefix_matches(p, &req.path),
        PathMatch::Regex(_) => return None,
    };
    if m.headers.iter().chain(&m.query).any(|h| h.regex) {
        return None;
    }
    let method_ok = m.method.as_deref().is_none_or(|x| x == req.method);
    let headers_ok = m.headers.iter().all(|h| {
        // The first value of a header with that name, compared exactly.
        req.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(&h.name))
            .is_some_and(|(_, v)| *v == h.value)
    });
    let pairs = query_pairs(&req.query);
    let query_ok = m.query.iter().all(|q| {
        pairs
            .iter()
            .find(|(k, _)| *k == q.name)
            .is_some_and(|(_, v)| *v == q.value)
    });
    Some(path_ok && method_ok && headers_ok && query_ok)
}

pub(super) fn modify(headers: &mut Headers, m: &HeaderModifier) {
    for (k, v) in &m.set {
        headers.insert(k.to_ascii_lowercase(), v.clone());
    }
    for (k, v) in &m.add {
        let k = k.to_ascii_lowercase();
        let nv = match headers.get(&k) {
            Some(x) => format!("{x},{v}"),
            None => v.clone(),
        };
        headers.insert(k, nv);
    }
    for k in &m.remove {
        headers.remove(&k.to_ascii_lowercase());
    }
}

fn new_path(path: &str, m: &RouteMatch, modifier: &PathModifier) -> String {
    match modifier {
        PathModifier::ReplaceFullPath(p) => p.clone(),
        PathModifier::ReplacePrefixMatch(r) => match &m.path {
            PathMatch::Prefix(p) => replace_prefix(path, p, r),
            _ => path.to_string(),
        },
    }
}

/// Does a CORS `allowOrigins` entry admit `origin`? `*` admits any;
/// `scheme://*.domain` any host under the domain (one or more labels); any
/// other entry only itself (scheme and host compared case-insensitively).
pub fn cors_origin_allowed(patterns: &[String], origin: &str) -> bool {
    let origin = origin.to_ascii_lowercase();
    patterns.iter().any(|p| {
        let p = p.to_ascii_lowercase();
        if p == "*" {
            return true;
        }
        match p.split_once("://*.") {
            Some((scheme, domain)) => {
                origin
                    .strip_prefix(&format!("{scheme}://"))
                    .is_some_and(|rest| {
                        rest.strip_suffix(domain)
                            .is_some_and(|left| left.len() > 1 && left.ends_with('.'))
                    })
            }
            None => p == origin,
        }
    })
}

/// The request's first value of header `name` (lower case).
fn header<'r>(req: &'r HttpRequest, name: &str) -> Option<&'r str> {
    req.headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// The CORS headers for a request from an allowed `origin`: a preflight's
/// full answer, or what an actual request's answer gains. The origin is
/// always echoed (valid for `*` too); `*` among methods or headers echoes
/// what the preflight asks for.
fn cors_headers(c: &Cors, origin: &str, req: &HttpRequest, preflight: bool) -> HeaderModifier {
    let mut set = vec![(
        "access-control-allow-origin".to_string(),
        origin.to_string(),
    )];
    if c.allow_credentials {
        set.push(("access-control-allow-credentials".into(), "true".into()));
    }
    if !c.expose_headers.is_empty() {
        set.push((
            "access-control-expose-headers".into(),
            c.expose_headers.join(", "),
        ));
    }
    if preflight {
        let echo = |list: &[String], asked: Option<&str>| -> Option<String> {
            if list.iter().any(|x| x == "*") {
                asked.map(str::to_string)
            } else if list.is_empty() {
                None
            } else {
                Some(list.join(", "))
            }
        };
        if let Some(m) = echo(
            &c.allow_methods,
            header(req, "access-control-request-method"),
        ) {
            set.push(("access-control-allow-methods".into(), m));
        }
        if let Some(h) = echo(
            &c.allow_headers,
            header(req, "access-control-request-headers"),
        ) {
            set.push(("access-control-allow-headers".into(), h));
        }
        set.push(("access-control-max-age".into(), c.max_age.to_string()));
    }
    HeaderModifier {
        set,
        ..HeaderModifier::default()
    }
}

/// A filter that answers the request itself.
enum Early {
    Redirect(Redirect),
    CorsPreflight,
}

/// Apply filters; `Some` when a redirect or a CORS preflight answers the
/// request.
fn apply(
    d: &mut Decision,
    filters: &[Filter],
    m: &RouteMatch,
    req: &HttpRequest,
    listener_port: u16,
) -> Option<Early> {
    for f in filters {
        match f {
            Filter::RequestHeaderModifier(x) => {
                d.filters.push("RequestHeaderModifier");
                modify(&mut d.request.headers, x);
            }
            Filter::ResponseHeaderModifier(x) => {
                d.filters.push("ResponseHeaderModifier");
                d.response_modifiers.push(x.clone());
            }
            Filter::UrlRewrite { hostname, path } => {
                d.filters.push("URLRewrite");
                if let Some(h) = hostname {
                    d.request.host = h.clone();
                }
                if let Some(p) = path {
                    d.request.path = new_path(&req.path, m, p);
                }
            }
            Filter::RequestRedirect {
                scheme,
                hostname,
                path,
                port,
                status,
            } => {
                d.filters.push("RequestRedirect");
                let sch = scheme.clone().unwrap_or_else(|| req.scheme.as_str().into());
                let port = port.unwrap_or(match scheme.as_deref() {
                    Some("http") => 80,
                    Some("https") => 443,
                    _ => listener_port,
                });
                let default = matches!((sch.as_str(), port), ("http", 80) | ("https", 443));
                let host = super::url::host_in_url(hostname.as_deref().unwrap_or(&req.host));
                let p = path
                    .as_ref()
                    .map_or(req.path.clone(), |x| new_path(&req.path, m, x));
                let q = if req.query.is_empty() {
                    String::new()
                } else {
                    format!("?{}", req.query)
                };
                let location = if default {
                    format!("{sch}://{host}{p}{q}")
                } else {
                    format!("{sch}://{host}:{port}{p}{q}")
                };
                return Some(Early::Redirect(Redirect {
                    status: *status,
                    location,
                }));
            }
            Filter::Cors(c) => {
                d.filters.push("CORS");
                let Some(origin) = header(req, "origin") else {
                    continue;
                };
                if !cors_origin_allowed(&c.allow_origins, origin) {
                    continue;
                }
                let preflight = req.method == "OPTIONS"
                    && header(req, "access-control-request-method").is_some();
                d.response_modifiers
                    .push(cors_headers(c, origin, req, preflight));
                if preflight {
                    return Some(Early::CorsPreflight);
                }
            }
            Filter::RequestMirror { .. } => d.filters.push("RequestMirror"),
            Filter::Other(_) => {}
        }
    }
    None
}

/// End with a filter's own answer.
fn answer_early(mut d: Decision, early: Early) -> Decision {
    match early {
        Early::Redirect(redirect) => {
            let status = redirect.status;
            d.redirect = Some(redirect);
            d.answer(status, Reason::Redirect)
        }
        Early::CorsPreflight => d.answer(200, Reason::CorsPreflight),
    }
}

/// The RequestMirror filters' copies: each resolved as a backendRef is
/// (an invalid one sends nothing), and a partial share drawn from the
/// seed after the backend's own pick (so mirrors never change which
/// backend a seed chooses).
fn mirrors<'f>(
    objects: &Objects,
    exists: &dyn Fn(&NamespacedName, u16) -> bool,
    ns: &str,
    filters: impl Iterator<Item = &'f Filter>,
    chooser: &mut Chooser,
) -> Vec<Mirror> {
    let mut out = Vec::new();
    for f in filters {
        let (
            Some(b),
            Filter::RequestMirror {
                numerator,
                denominator,
                ..
            },
        ) = (mirror_ref(f), f)
        else {
            continue;
        };
        let problem = backend_problem(objects, exists, ns, &b);
        let share = problem.is_none() && *numerator > 0;
        let sent = share
            && (numerator >= denominator
                || (chooser.below(*denominator as usize) as u32) < *numerator);
        out.push(Mirror {
            service: NamespacedName::new(
                b.target.namespace.clone().unwrap_or_else(|| ns.to_string()),
                b.target.name.clone(),
            ),
            port: b.port.unwrap_or(0),
            fraction: (*numerator, *denominator),
            sent,
            problem,
        });
    }
    out
}

pub(super) fn walk(
    table: &RoutingTable,
    t: &GatewayTable,
    entry: &EntryPoint,
    read: &super::normalize::Read,
    view: &dyn BackendView,
    chooser: &mut Chooser,
) -> Decision {
    let req = &read.matched;
    let mut d = Decision::read(entry.clone(), read);
    // A Gateway its controller does not program (not accepted, or without
    // the address it asks for): nothing listens for it.
    if t.conditions
        .iter()
        .any(|c| (c.kind == "Accepted" && c.status == "False") || c.reason == "AddressNotUsable")
    {
        d.reason = Reason::NoListener;
        return d;
    }
    let want = match req.scheme {
        Scheme::Http => ListenerProtocol::Http,
        Scheme::Https => ListenerProtocol::Https,
    };
    let on_port: Vec<&ListenerTable> = t
        .listeners
        .iter()
        .filter(|l| l.listener.port == req.port && l.listener.protocol == want && !l.conflicted)
        .collect();
    if on_port.is_empty() {
        d.reason = Reason::NoListener;
        return d;
    }
    let name = match req.scheme {
        Scheme::Https => req.sni.as_deref().unwrap_or(&req.host),
        Scheme::Http => &req.host,
    };
    let Some(l) = pick_listener(&on_port, name) else {
        if req.scheme == Scheme::Https {
            d.reason = Reason::TlsHandshakeFailed;
            return d;
        }
        return d.answer(404, Reason::NoMatchingRoute);
    };
    d.listener = Some((t.gateway.clone(), l.listener.name.clone()));
    if req.scheme == Scheme::Https {
        let Some(cert) = &l.certificate else {
            d.reason = Reason::TlsHandshakeFailed;
            return d;
        };
        d.tls_certificate = Some(cert.clone());
        if let Some(by_host) = pick_listener(&on_port, &req.host) {
            if by_host.listener.name != l.listener.name {
                return d.answer(421, Reason::Misdirected);
            }
        }
    }
    let mut candidates: Vec<(std::cmp::Reverse<(usize, usize)>, &CompiledMatch)> = l
        .matches
        .iter()
        .filter_map(|m| host_rank(m, &req.host).map(|r| (std::cmp::Reverse(r), m)))
        .collect();
    crate::util::order::sort_by_key(&mut candidates, |(r, _)| *r);
    let mut unsupported = false;
    let mut chosen = None;
    for (_, m) in candidates {
        let route = RouteRef {
            kind: "HTTPRoute",
            name: m.route.clone(),
            rule: m.rule,
            index: m.index,
        };
        let ok = matches(&m.matching, req);
        unsupported |= ok.is_none();
        let ok = ok.unwrap_or(false);
        d.compared.push(Compared {
            route: route.clone(),
            matched: ok,
        });
        if ok {
            chosen = Some((route, m));
            break;
        }
    }
    let Some((route, m)) = chosen else {
        let why = if unsupported {
            Reason::UnsupportedMatch
        } else {
            Reason::NoMatchingRoute
        };
        return d.answer(404, why);
    };
    d.route = Some(route);
    let Some(rule) = table.rule_of(m) else {
        return d.answer(500, Reason::NoBackends);
    };
    if let Some(early) = apply(&mut d, &rule.filters, &m.matching, req, l.listener.port) {
        return answer_early(d, early);
    }
    // At most 16 backendRefs of at most 1,000,000 each (the CRD's limits,
    // checked when lowering): the sum fits, and saturates if it ever did not.
    let total: u32 = rule
        .backends
        .iter()
        .fold(0u32, |sum, b| sum.saturating_add(b.weight));
    if total == 0 {
        return d.answer(500, Reason::NoBackends);
    }
    let mut pick = chooser.below(total as usize) as u32;
    let Some(b) = rule.backends.iter().find(|b| {
        if pick < b.weight {
            true
        } else {
            pick -= b.weight;
            false
        }
    }) else {
        return d.answer(500, Reason::NoBackends);
    };
    // The route's own namespace (`rule_of` found it by this id).
    let ns = &m.route.namespace;
    let exists =
        |id: &NamespacedName, port: u16| view.service_port(id, &PortRef::Number(port)).is_some();
    if let Some(problem) = backend_problem(&table.objects, &exists, ns, b) {
        return d.answer(500, Reason::InvalidBackend { reason: problem });
    }
    if let Some(early) = apply(&mut d, &b.filters, &m.matching, req, l.listener.port) {
        return answer_early(d, early);
    }
    d.mirrors = mirrors(
        &table.objects,
        &exists,
        ns,
        rule.filters.iter().chain(&b.filters),
        chooser,
    );
    let target = ServiceTarget {
        service: NamespacedName::new(
            b.target.namespace.clone().unwrap_or_else(|| ns.clone()),
            b.target.name.clone(),
        ),
        port: PortRef::Number(b.port.unwrap_or(0)),
    };
    d.send_to(
        view,
        &target,
        (b.weight, total),
        t.service_routing,
        Reason::Routed,
    )
}
