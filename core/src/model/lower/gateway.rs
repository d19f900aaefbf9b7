//! Lowering the Gateway API kinds (Gateway, HTTPRoute, ReferenceGrant) with
//! the checks the CRDs' schema and validation rules make, filling their
//! defaults (parentRef group/kind, match path `PathPrefix /`, weight 1,
//! redirect status 302 as the API defaults it). Never panics on input;
//! decides no routing.

use super::gateway_rules::{
    gateway_path_problem, header_name_problem, header_value_breaks_line, max, repeated_filters,
    rule_problems,
};
use super::validate::{host_problem, strict_path_problem, string_map, Ctx};
use crate::model::routing::*;
use crate::yaml::Node as Y;

const GROUP: &str = "gateway.networking.k8s.io";

pub(super) fn gateway(c: &mut Ctx<'_>, n: &Y, meta: Meta) -> Option<Gateway> {
    let spec = n.get("spec");
    let class = c
        .string(
            spec.and_then(|s| s.get("gatewayClassName")),
            "spec.gatewayClassName",
        )
        .unwrap_or_default();
    if class.is_empty() {
        c.err(n, "spec.gatewayClassName", "Required value", "");
    }
    let mut listeners: Vec<Listener> = Vec::new();
    let nodes = c.seq_max(
        spec.and_then(|s| s.get("listeners")),
        "spec.listeners",
        max::LISTENERS,
    );
    if nodes.is_empty() {
        c.err(n, "spec.listeners", "Required value", "");
    }
    for (i, l) in nodes.iter().enumerate() {
        if let Some(listener) = listener(c, l, &format!("spec.listeners[{i}]"), &listeners) {
            listeners.push(listener);
        }
    }
    let parameters_ref = spec
        .and_then(|s| s.get("infrastructure"))
        .and_then(|i| i.get("parametersRef"))
        .map(|p| {
            let get = |k: &str| p.get(k).and_then(Y::as_str).unwrap_or("").to_string();
            (get("group"), get("kind"), get("name"))
        });
    let addresses = c
        .seq_max(
            spec.and_then(|s| s.get("addresses")),
            "spec.addresses",
            max::ADDRESSES,
        )
        .iter()
        .map(|a| {
            (
                a.get("type")
                    .and_then(Y::as_str)
                    .unwrap_or("IPAddress")
                    .to_string(),
                a.get("value")
                    .and_then(Y::as_str)
                    .filter(|v| !v.is_empty())
                    .map(str::to_string),
            )
        })
        .collect();
    Some(Gateway {
        meta,
        class,
        listeners,
        parameters_ref,
        addresses,
    })
}

/// One of a Gateway's listeners, at `f` (`spec.listeners[i]`); `None`
/// when it is refused (reported in `c`).
fn listener(c: &mut Ctx<'_>, l: &Y, f: &str, earlier: &[Listener]) -> Option<Listener> {
    let name = c
        .string(l.get("name"), &format!("{f}.name"))
        .unwrap_or_default();
    if earlier.iter().any(|x| x.name == name) {
        c.err(
            l,
            &format!("{f}.name"),
            "Listener name must be unique within the Gateway",
            "",
        );
        return None;
    }
    let Some(port) = c.int(l.get("port"), &format!("{f}.port"), 1, 65535) else {
        c.err(l, &format!("{f}.port"), "Required value", "");
        return None;
    };
    let protocol = match c.string(l.get("protocol"), &format!("{f}.protocol")) {
        Some(p) if p == "HTTP" => ListenerProtocol::Http,
        Some(p) if p == "HTTPS" => ListenerProtocol::Https,
        Some(p) => ListenerProtocol::Other(p),
        None => {
            c.err(l, &format!("{f}.protocol"), "Required value", "");
            return None;
        }
    };
    let hostname = c.string(l.get("hostname"), &format!("{f}.hostname"));
    if let (Some(h), Some(at)) = (&hostname, l.get("hostname")) {
        if let Some(p) = host_problem(h) {
            c.err(at, &format!("{f}.hostname"), p, "");
            return None;
        }
    }
    let tls = l.get("tls");
    let mut certificate_refs = Vec::new();
    for r in c.seq_max(
        tls.and_then(|t| t.get("certificateRefs")),
        &format!("{f}.tls.certificateRefs"),
        max::CERTIFICATE_REFS,
    ) {
        certificate_refs.push(ObjectRef {
            group: r.get("group").and_then(Y::as_str).unwrap_or("").into(),
            kind: r.get("kind").and_then(Y::as_str).unwrap_or("Secret").into(),
            namespace: r.get("namespace").and_then(Y::as_str).map(str::to_string),
            name: r.get("name").and_then(Y::as_str).unwrap_or("").into(),
        });
    }
    if protocol == ListenerProtocol::Https && tls.is_none() {
        c.err(
            l,
            &format!("{f}.tls"),
            "tls must be specified for protocols ['HTTPS', 'TLS']",
            "",
        );
    }
    if protocol == ListenerProtocol::Http && tls.is_some() {
        c.err(
            l,
            &format!("{f}.tls"),
            "tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
            "",
        );
    }
    let ar = l.get("allowedRoutes");
    let from = allowed_namespaces(c, l, ar.and_then(|a| a.get("namespaces")), f);
    let kinds = ar
        .and_then(|a| a.get("kinds"))
        .and_then(Y::as_seq)
        .unwrap_or(&[])
        .iter()
        .map(|k| {
            (
                k.get("group").and_then(Y::as_str).unwrap_or(GROUP).into(),
                k.get("kind").and_then(Y::as_str).unwrap_or("").into(),
            )
        })
        .collect();
    Some(Listener {
        name,
        hostname,
        port: port as u16,
        protocol,
        certificate_refs,
        from,
        kinds,
    })
}

/// A listener's `allowedRoutes.namespaces` (absent: the Gateway's own).
fn allowed_namespaces(c: &mut Ctx<'_>, l: &Y, ns: Option<&Y>, f: &str) -> FromNamespaces {
    match ns.and_then(|n| n.get("from")).and_then(Y::as_str) {
        None | Some("Same") => FromNamespaces::Same,
        Some("All") => FromNamespaces::All,
        Some("Selector") => {
            FromNamespaces::Selector(label_selector(ns.and_then(|n| n.get("selector"))))
        }
        Some(other) => {
            c.err(
                ns.unwrap_or(l),
                &format!("{f}.allowedRoutes.namespaces.from"),
                format!("Unsupported value: \"{other}\": supported values: \"All\", \"Selector\", \"Same\""),
                "",
            );
            FromNamespaces::Same
        }
    }
}

/// A `metav1.LabelSelector`: its labels and its expressions as written.
fn label_selector(sel: Option<&Y>) -> LabelSelector {
    LabelSelector {
        match_labels: string_map(sel.and_then(|s| s.get("matchLabels"))),
        match_expressions: sel
            .and_then(|s| s.get("matchExpressions"))
            .and_then(Y::as_seq)
            .unwrap_or(&[])
            .iter()
            .map(|e| {
                (
                    e.get("key").and_then(Y::as_str).unwrap_or("").into(),
                    e.get("operator").and_then(Y::as_str).unwrap_or("").into(),
                    e.get("values")
                        .and_then(Y::as_seq)
                        .unwrap_or(&[])
                        .iter()
                        .filter_map(Y::as_str)
                        .map(str::to_string)
                        .collect(),
                )
            })
            .collect(),
    }
}

pub(super) fn route(c: &mut Ctx<'_>, n: &Y, meta: Meta) -> Option<HttpRoute> {
    let spec = n.get("spec");
    let mut parents = Vec::new();
    for (i, p) in c
        .seq_max(
            spec.and_then(|s| s.get("parentRefs")),
            "spec.parentRefs",
            max::PARENT_REFS,
        )
        .iter()
        .enumerate()
    {
        let f = format!("spec.parentRefs[{i}]");
        let name = c
            .string(p.get("name"), &format!("{f}.name"))
            .unwrap_or_default();
        if name.is_empty() {
            c.err(p, &format!("{f}.name"), "Required value", "");
            continue;
        }
        parents.push(ParentRef {
            group: p.get("group").and_then(Y::as_str).unwrap_or(GROUP).into(),
            kind: p
                .get("kind")
                .and_then(Y::as_str)
                .unwrap_or("Gateway")
                .into(),
            namespace: p.get("namespace").and_then(Y::as_str).map(str::to_string),
            name,
            section: p.get("sectionName").and_then(Y::as_str).map(str::to_string),
            port: c
                .int(p.get("port"), &format!("{f}.port"), 1, 65535)
                .map(|x| x as u16),
        });
    }
    let mut hostnames = Vec::new();
    for (i, h) in c
        .seq_max(
            spec.and_then(|s| s.get("hostnames")),
            "spec.hostnames",
            max::HOSTNAMES,
        )
        .iter()
        .enumerate()
    {
        if let Some(s) = h.as_str() {
            if let Some(p) = host_problem(s) {
                c.err(h, &format!("spec.hostnames[{i}]"), p, "");
                continue;
            }
            hostnames.push(s.to_string());
        }
    }
    let mut rules = Vec::new();
    let rules_at = spec.and_then(|s| s.get("rules"));
    let rule_nodes = c.seq_max(rules_at, "spec.rules", max::RULES);
    let total: usize = rule_nodes
        .iter()
        .filter_map(|r| r.get("matches").and_then(Y::as_seq))
        .map(<[Y]>::len)
        .sum();
    if let (true, Some(at)) = (total > max::MATCHES_TOTAL, rules_at) {
        c.err(at, "spec.rules", "While 16 rules and 64 matches per rule are allowed, the total number of matches across all rules in a route must be less than 128", "");
    }
    for (i, r) in rule_nodes.iter().enumerate() {
        let f = format!("spec.rules[{i}]");
        let mut matches = Vec::new();
        for (j, m) in c
            .seq_max(r.get("matches"), &format!("{f}.matches"), max::MATCHES)
            .iter()
            .enumerate()
        {
            if let Some(rm) = route_match(c, m, &format!("{f}.matches[{j}]")) {
                matches.push(rm);
            }
        }
        if matches.is_empty() {
            matches.push(RouteMatch::default());
        }
        let rule_filters = filters(c, r.get("filters"), &format!("{f}.filters"));
        let mut backends = Vec::new();
        for (j, b) in c
            .seq_max(
                r.get("backendRefs"),
                &format!("{f}.backendRefs"),
                max::BACKEND_REFS,
            )
            .iter()
            .enumerate()
        {
            let bf = format!("{f}.backendRefs[{j}]");
            let kind: String = b
                .get("kind")
                .and_then(Y::as_str)
                .unwrap_or("Service")
                .into();
            let port = c.int(b.get("port"), &format!("{bf}.port"), 1, 65535);
            if port.is_none() && kind == "Service" {
                c.err(
                    b,
                    &format!("{bf}.port"),
                    "Must have port for Service reference",
                    "",
                );
            }
            backends.push(BackendRef {
                target: ObjectRef {
                    group: b.get("group").and_then(Y::as_str).unwrap_or("").into(),
                    kind,
                    namespace: b.get("namespace").and_then(Y::as_str).map(str::to_string),
                    name: b.get("name").and_then(Y::as_str).unwrap_or("").into(),
                },
                port: port.map(|p| p as u16),
                weight: c
                    .int(b.get("weight"), &format!("{bf}.weight"), 0, 1_000_000)
                    .unwrap_or(1) as u32,
                filters: filters(c, b.get("filters"), &format!("{bf}.filters")),
            });
        }
        let rule = RouteRule {
            matches,
            filters: rule_filters,
            backends,
        };
        for problem in rule_problems(&rule) {
            c.err(r, &f, problem, "");
        }
        rules.push(rule);
    }
    if rule_nodes.is_empty() {
        // An HTTPRoute without rules has one rule matching everything, with
        // no backends (so requests get 500).
        rules.push(RouteRule {
            matches: vec![RouteMatch::default()],
            filters: Vec::new(),
            backends: Vec::new(),
        });
    }
    Some(HttpRoute {
        meta,
        parents,
        hostnames,
        rules,
    })
}

fn route_match(c: &mut Ctx<'_>, m: &Y, f: &str) -> Option<RouteMatch> {
    let mut out = RouteMatch::default();
    if let Some(p) = m.get("path") {
        let ty = p.get("type").and_then(Y::as_str).unwrap_or("PathPrefix");
        let value = p
            .get("value")
            .and_then(Y::as_str)
            .unwrap_or("/")
            .to_string();
        out.path = match ty {
            "Exact" | "PathPrefix" => {
                let problem = strict_path_problem(&value)
                    .map(|p| format!("{p} when type one of ['Exact', 'PathPrefix']"))
                    .or_else(|| gateway_path_problem(&value));
                if let Some(problem) = problem {
                    c.err(p, &format!("{f}.path.value"), problem, "");
                    return None;
                }
                if ty == "Exact" {
                    PathMatch::Exact(value)
                } else {
                    PathMatch::Prefix(value)
                }
            }
            "RegularExpression" => {
                c.warn(
                    p,
                    &format!("{f}.path.type"),
                    "RegularExpression matches are implementation-specific; kpv does not evaluate them (requests skip this match)",
                    "",
                );
                PathMatch::Regex(value)
            }
            other => {
                c.err(
                    p,
                    &format!("{f}.path.type"),
                    format!("Unsupported value: \"{other}\": supported values: \"Exact\", \"PathPrefix\", \"RegularExpression\""),
                    "",
                );
                return None;
            }
        };
    }
    for (key, into_query) in [("headers", false), ("queryParams", true)] {
        let items = c.seq_max(m.get(key), &format!("{f}.{key}"), max::VALUE_MATCHES);
        for (k, h) in items.iter().enumerate() {
            let name = h.get("name").and_then(Y::as_str).unwrap_or("").to_string();
            if let Some(problem) = header_name_problem(&name) {
                c.err(h, &format!("{f}.{key}[{k}].name"), problem, "");
                continue;
            }
            let value = h.get("value").and_then(Y::as_str).unwrap_or("").to_string();
            let regex = h.get("type").and_then(Y::as_str) == Some("RegularExpression");
            let list = if into_query {
                &mut out.query
            } else {
                &mut out.headers
            };
            let dup = if into_query {
                list.iter().any(|x| x.name == name)
            } else {
                list.iter().any(|x| x.name.eq_ignore_ascii_case(&name))
            };
            if dup {
                // Only the first entry with an equivalent name counts.
                c.warn(
                    h,
                    &format!("{f}.{key}[{k}]"),
                    format!("a second match on `{name}` is ignored"),
                    "",
                );
                continue;
            }
            list.push(ValueMatch { name, value, regex });
        }
    }
    out.method = m.get("method").and_then(Y::as_str).map(str::to_string);
    Some(out)
}

/// A header modifier's `set`, `add` and `remove`, each as the schema
/// allows: at most 16 entries, valid names; a value with a line break is
/// dropped with a warning (no proxy sends it as one header).
fn header_mod(c: &mut Ctx<'_>, n: Option<&Y>, f: &str) -> HeaderModifier {
    let mut out = HeaderModifier::default();
    for key in ["set", "add", "remove"] {
        let field = format!("{f}.{key}");
        let items = c.seq_max(n.and_then(|n| n.get(key)), &field, max::HEADER_MODS);
        for (i, h) in items.iter().enumerate() {
            let at = format!("{field}[{i}]");
            let (name, value) = if key == "remove" {
                (h.as_str().unwrap_or(""), "")
            } else {
                let get = |k: &str| h.get(k).and_then(Y::as_str).unwrap_or("");
                (get("name"), get("value"))
            };
            if let Some(problem) = header_name_problem(name) {
                let at = if key == "remove" {
                    at
                } else {
                    format!("{at}.name")
                };
                c.err(h, &at, problem, "");
                continue;
            }
            if header_value_breaks_line(value) {
                c.warn(
                    h,
                    &format!("{at}.value"),
                    format!("the value of `{name}` holds a line break or control character: the experimental CRDs refuse it and no proxy sends it, so kpv leaves this header out"),
                    "write the value on one line",
                );
                continue;
            }
            match key {
                "set" => out.set.push((name.to_string(), value.to_string())),
                "add" => out.add.push((name.to_string(), value.to_string())),
                _ => out.remove.push(name.to_string()),
            }
        }
    }
    out
}

/// A filter's `hostname` (`PreciseHostname`: a DNS name, no wildcard, at
/// least one character), or the API server's error.
fn precise_host(c: &mut Ctx<'_>, n: &Y, field: &str) -> Option<String> {
    let host = c.string(Some(n), field)?;
    let problem = if host.is_empty() {
        Some(format!(
            "Invalid value: \"\": {field} in body should be at least 1 chars long"
        ))
    } else if host.starts_with("*.") {
        Some(format!(
            "Invalid value: \"{host}\": a wildcard is not allowed here"
        ))
    } else {
        host_problem(&host)
    };
    match problem {
        Some(p) => {
            c.err(n, field, p, "");
            None
        }
        None => Some(host),
    }
}

fn path_mod(c: &mut Ctx<'_>, n: Option<&Y>, f: &str) -> Option<PathModifier> {
    let n = n?;
    match n.get("type").and_then(Y::as_str) {
        Some("ReplaceFullPath") => Some(PathModifier::ReplaceFullPath(
            n.get("replaceFullPath")
                .and_then(Y::as_str)
                .unwrap_or("/")
                .into(),
        )),
        Some("ReplacePrefixMatch") => Some(PathModifier::ReplacePrefixMatch(
            n.get("replacePrefixMatch")
                .and_then(Y::as_str)
                .unwrap_or("")
                .into(),
        )),
        other => {
            c.err(
                n,
                &format!("{f}.type"),
                format!("Unsupported value: \"{}\": supported values: \"ReplaceFullPath\", \"ReplacePrefixMatch\"", other.unwrap_or("")),
                "",
            );
            None
        }
    }
}

fn filters(c: &mut Ctx<'_>, n: Option<&Y>, f: &str) -> Vec<Filter> {
    let mut out = Vec::new();
    let nodes = c.seq_max(n, f, max::FILTERS);
    for (i, x) in nodes.iter().enumerate() {
        let ff = format!("{f}[{i}]");
        let ty = x.get("type").and_then(Y::as_str).unwrap_or("");
        out.push(match ty {
            "RequestHeaderModifier" => Filter::RequestHeaderModifier(header_mod(
                c,
                x.get("requestHeaderModifier"),
                &format!("{ff}.requestHeaderModifier"),
            )),
            "ResponseHeaderModifier" => Filter::ResponseHeaderModifier(header_mod(
                c,
                x.get("responseHeaderModifier"),
                &format!("{ff}.responseHeaderModifier"),
            )),
            "RequestRedirect" => {
                let r = x.get("requestRedirect");
                let status = c
                    .int(
                        r.and_then(|r| r.get("statusCode")),
                        &format!("{ff}.requestRedirect.statusCode"),
                        300,
                        399,
                    )
                    .unwrap_or(302) as u16;
                if ![301, 302, 303, 307, 308].contains(&status) {
                    c.err(x, &format!("{ff}.requestRedirect.statusCode"), format!("Unsupported value: {status}: supported values: \"301\", \"302\", \"303\", \"307\", \"308\""), "");
                }
                Filter::RequestRedirect {
                    scheme: r
                        .and_then(|r| r.get("scheme"))
                        .and_then(Y::as_str)
                        .map(str::to_string),
                    hostname: r
                        .and_then(|r| r.get("hostname"))
                        .and_then(|h| precise_host(c, h, &format!("{ff}.requestRedirect.hostname"))),
                    path: path_mod(
                        c,
                        r.and_then(|r| r.get("path")),
                        &format!("{ff}.requestRedirect.path"),
                    ),
                    port: c
                        .int(
                            r.and_then(|r| r.get("port")),
                            &format!("{ff}.requestRedirect.port"),
                            1,
                            65535,
                        )
                        .map(|p| p as u16),
                    status,
                }
            }
            "URLRewrite" => {
                let r = x.get("urlRewrite");
                Filter::UrlRewrite {
                    hostname: r
                        .and_then(|r| r.get("hostname"))
                        .and_then(|h| precise_host(c, h, &format!("{ff}.urlRewrite.hostname"))),
                    path: path_mod(
                        c,
                        r.and_then(|r| r.get("path")),
                        &format!("{ff}.urlRewrite.path"),
                    ),
                }
            }
            "RequestMirror" => mirror(c, x, &ff),
            "CORS" => cors(c, x, &ff),
            other => Filter::Other(other.to_string()),
        });
    }
    if let Some(at) = n {
        for problem in repeated_filters(&out) {
            c.err(at, f, problem, "");
        }
    }
    let has = |p: fn(&Filter) -> bool| out.iter().any(p);
    if has(|f| matches!(f, Filter::RequestRedirect { .. }))
        && has(|f| matches!(f, Filter::UrlRewrite { .. }))
    {
        if let Some(at) = n {
            c.err(
                at,
                f,
                "May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both",
                "",
            );
        }
    }
    out
}

/// A CORS filter's policy.
fn cors(c: &mut Ctx<'_>, x: &Y, ff: &str) -> Filter {
    let n = x.get("cors");
    let list = |key: &str| -> Vec<String> {
        n.and_then(|n| n.get(key))
            .and_then(Y::as_seq)
            .map(|s| s.iter().filter_map(Y::as_str).map(str::to_string).collect())
            .unwrap_or_default()
    };
    Filter::Cors(Cors {
        allow_origins: list("allowOrigins"),
        allow_methods: list("allowMethods"),
        allow_headers: list("allowHeaders"),
        expose_headers: list("exposeHeaders"),
        allow_credentials: n
            .and_then(|n| n.get("allowCredentials"))
            .and_then(Y::as_bool)
            .unwrap_or(false),
        max_age: c
            .int(
                n.and_then(|n| n.get("maxAge")),
                &format!("{ff}.cors.maxAge"),
                1,
                i64::from(i32::MAX),
            )
            .unwrap_or(5) as u32,
    })
}

/// A RequestMirror filter: its backendRef and the share of requests
/// mirrored (`percent`, or `fraction` numerator/denominator; default all).
fn mirror(c: &mut Ctx<'_>, x: &Y, ff: &str) -> Filter {
    let r = x.get("requestMirror");
    let f = format!("{ff}.requestMirror");
    let b = r.and_then(|r| r.get("backendRef"));
    let name = b
        .and_then(|b| b.get("name"))
        .and_then(Y::as_str)
        .unwrap_or("");
    if name.is_empty() {
        c.err(x, &format!("{f}.backendRef.name"), "Required value", "");
    }
    let kind: String = b
        .and_then(|b| b.get("kind"))
        .and_then(Y::as_str)
        .unwrap_or("Service")
        .into();
    let port = c.int(
        b.and_then(|b| b.get("port")),
        &format!("{f}.backendRef.port"),
        1,
        65535,
    );
    if port.is_none() && kind == "Service" {
        c.err(
            x,
            &format!("{f}.backendRef.port"),
            "Must have port for Service reference",
            "",
        );
    }
    let percent = r.and_then(|r| r.get("percent"));
    let fraction = r.and_then(|r| r.get("fraction"));
    let (numerator, denominator) = match (percent, fraction) {
        (Some(_), Some(_)) => {
            c.err(
                x,
                &f,
                "Only one of percent or fraction may be specified in HTTPRequestMirrorFilter",
                "",
            );
            (100, 100)
        }
        (Some(p), None) => (
            c.int(Some(p), &format!("{f}.percent"), 0, 100)
                .unwrap_or(100) as u32,
            100,
        ),
        (None, Some(fr)) => {
            let num = c
                .int(
                    fr.get("numerator"),
                    &format!("{f}.fraction.numerator"),
                    0,
                    i64::from(i32::MAX),
                )
                .unwrap_or(0) as u32;
            let den = c
                .int(
                    fr.get("denominator"),
                    &format!("{f}.fraction.denominator"),
                    1,
                    i64::from(i32::MAX),
                )
                .unwrap_or(100) as u32;
            if num > den {
                c.err(
                    x,
                    &format!("{f}.fraction"),
                    "numerator must be less than or equal to denominator",
                    "",
                );
                (den, den)
            } else {
                (num, den)
            }
        }
        (None, None) => (100, 100),
    };
    Filter::RequestMirror {
        target: ObjectRef {
            group: b
                .and_then(|b| b.get("group"))
                .and_then(Y::as_str)
                .unwrap_or("")
                .into(),
            kind,
            namespace: b
                .and_then(|b| b.get("namespace"))
                .and_then(Y::as_str)
                .map(str::to_string),
            name: name.into(),
        },
        port: port.map(|p| p as u16),
        numerator,
        denominator,
    }
}

pub(super) fn grant(c: &mut Ctx<'_>, n: &Y, meta: Meta) -> Option<ReferenceGrant> {
    let spec = n.get("spec");
    let from = c
        .seq(spec.and_then(|s| s.get("from")), "spec.from")
        .iter()
        .map(|x| {
            (
                x.get("group").and_then(Y::as_str).unwrap_or("").to_string(),
                x.get("kind").and_then(Y::as_str).unwrap_or("").to_string(),
                x.get("namespace")
                    .and_then(Y::as_str)
                    .unwrap_or("")
                    .to_string(),
            )
        })
        .collect();
    let to = c
        .seq(spec.and_then(|s| s.get("to")), "spec.to")
        .iter()
        .map(|x| {
            (
                x.get("group").and_then(Y::as_str).unwrap_or("").to_string(),
                x.get("kind").and_then(Y::as_str).unwrap_or("").to_string(),
                x.get("name").and_then(Y::as_str).map(str::to_string),
            )
        })
        .collect();
    Some(ReferenceGrant { meta, from, to })
}
