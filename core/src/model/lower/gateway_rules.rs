//! The Gateway API CRDs' own limits and validation rules (standard channel,
//! `apis/v1` of gateway-api), transcribed as data and checked on lowered
//! values: `maxItems` per list, the 128-match total of an HTTPRoute, the
//! rule-level CEL rules (a filter type at most once, RequestRedirect never
//! with backendRefs, `ReplacePrefixMatch` only with one `PathPrefix`
//! match), header names, and the characters an `Exact`/`PathPrefix` path
//! may hold. Each check returns the API server's message; the caller
//! locates it. Decides nothing about routing.

use crate::model::routing::{Filter, PathMatch, PathModifier, RouteRule};

/// `maxItems` of the lists kpv reads, from the CRDs' schema.
pub(super) mod max {
    pub const LISTENERS: usize = 64;
    pub const ADDRESSES: usize = 16;
    pub const CERTIFICATE_REFS: usize = 64;
    pub const PARENT_REFS: usize = 32;
    pub const HOSTNAMES: usize = 16;
    pub const RULES: usize = 16;
    pub const MATCHES: usize = 64;
    /// Matches over all rules of one HTTPRoute (a CEL rule on `rules`).
    pub const MATCHES_TOTAL: usize = 128;
    pub const FILTERS: usize = 16;
    pub const BACKEND_REFS: usize = 16;
    /// `headers` and `queryParams` of a match.
    pub const VALUE_MATCHES: usize = 16;
    /// `set`, `add` and `remove` of a header modifier.
    pub const HEADER_MODS: usize = 16;
}

/// The filter types a filter list may hold at most once (CEL rules on both
/// a rule's and a backendRef's `filters`), with the API server's message.
const ONCE: [(&str, &str); 5] = [
    ("CORS", "CORS filter cannot be repeated"),
    (
        "RequestHeaderModifier",
        "RequestHeaderModifier filter cannot be repeated",
    ),
    (
        "ResponseHeaderModifier",
        "ResponseHeaderModifier filter cannot be repeated",
    ),
    (
        "RequestRedirect",
        "RequestRedirect filter cannot be repeated",
    ),
    ("URLRewrite", "URLRewrite filter cannot be repeated"),
];

/// `HTTPHeaderName`'s pattern and length limit.
const HEADER_NAME_PATTERN: &str = "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$";
const HEADER_NAME_MAX: usize = 256;

/// The characters an `Exact` or `PathPrefix` path may hold.
const PATH_PATTERN: &str = "^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$";

/// The API type name of a filter.
pub(super) fn filter_type(f: &Filter) -> &str {
    match f {
        Filter::RequestHeaderModifier(_) => "RequestHeaderModifier",
        Filter::ResponseHeaderModifier(_) => "ResponseHeaderModifier",
        Filter::RequestRedirect { .. } => "RequestRedirect",
        Filter::UrlRewrite { .. } => "URLRewrite",
        Filter::RequestMirror { .. } => "RequestMirror",
        Filter::Cors(_) => "CORS",
        Filter::Other(t) => t,
    }
}

/// The "cannot be repeated" messages a filter list breaks.
pub(super) fn repeated_filters(filters: &[Filter]) -> Vec<&'static str> {
    ONCE.iter()
        .filter(|(ty, _)| filters.iter().filter(|f| filter_type(f) == *ty).count() > 1)
        .map(|(_, msg)| *msg)
        .collect()
}

fn replaces_prefix(f: &Filter) -> Option<&'static str> {
    match f {
        Filter::RequestRedirect {
            path: Some(PathModifier::ReplacePrefixMatch(_)),
            ..
        } => Some("RequestRedirect"),
        Filter::UrlRewrite {
            path: Some(PathModifier::ReplacePrefixMatch(_)),
            ..
        } => Some("URLRewrite"),
        _ => None,
    }
}

/// The CEL rules of one HTTPRoute rule (on its lowered values; a missing
/// match list is the API's default, one `PathPrefix /` match).
pub(super) fn rule_problems(rule: &RouteRule) -> Vec<String> {
    let mut out = Vec::new();
    let redirect = |fs: &[Filter]| {
        fs.iter()
            .any(|f| matches!(f, Filter::RequestRedirect { .. }))
    };
    if !rule.backends.is_empty() && redirect(&rule.filters) {
        out.push("RequestRedirect filter must not be used together with backendRefs".to_string());
    }
    let one_prefix =
        matches!(rule.matches.as_slice(), [m] if matches!(m.path, PathMatch::Prefix(_)));
    if !one_prefix {
        for ty in rule.filters.iter().filter_map(replaces_prefix) {
            out.push(format!("When using {ty} filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified"));
        }
        for ty in rule
            .backends
            .iter()
            .flat_map(|b| b.filters.iter().filter_map(replaces_prefix))
        {
            out.push(format!("Within backendRefs, when using {ty} filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified"));
        }
    }
    out
}

/// The API server's message for a header name (`HTTPHeaderName`), or
/// `None` when it is valid.
pub(super) fn header_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("Required value".into());
    }
    if name.len() > HEADER_NAME_MAX {
        return Some(format!(
            "Too long: may not be more than {HEADER_NAME_MAX} bytes"
        ));
    }
    let ok = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    (!name.bytes().all(ok))
        .then(|| format!("Invalid value: \"{name}\": should match '{HEADER_NAME_PATTERN}'"))
}

/// A header value a proxy could not send as one header line: it holds a
/// line break or another control character (tab aside).
pub(super) fn header_value_breaks_line(value: &str) -> bool {
    value.chars().any(|c| c.is_control() && c != '\t')
}

/// The Gateway API's extra rules for an `Exact` or `PathPrefix` path value
/// (beyond the absolute-path rules it shares with Ingress): no `#`, and
/// only URI path characters or `%XX` escapes.
pub(super) fn gateway_path_problem(path: &str) -> Option<String> {
    if path.contains('#') {
        return Some("must not contain '#' when type one of ['Exact', 'PathPrefix']".into());
    }
    let b = path.as_bytes();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        let ok = if c == b'%' {
            let hex = |j: usize| b.get(j).is_some_and(u8::is_ascii_hexdigit);
            let escaped = hex(i + 1) && hex(i + 2);
            i += 2;
            escaped
        } else {
            c.is_ascii_alphanumeric() || b"-/._~!$&'()*+,;=:@".contains(&c)
        };
        if !ok {
            return Some(format!(
                "must only contain valid characters (matching {PATH_PATTERN}) for types ['Exact', 'PathPrefix']"
            ));
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::routing::{BackendRef, HeaderModifier, ObjectRef, RouteMatch};

    fn backend() -> BackendRef {
        BackendRef {
            target: ObjectRef {
                group: String::new(),
                kind: "Service".into(),
                namespace: None,
                name: "web".into(),
            },
            port: Some(80),
            weight: 1,
            filters: Vec::new(),
        }
    }

    fn redirect(path: Option<PathModifier>) -> Filter {
        Filter::RequestRedirect {
            scheme: None,
            hostname: None,
            path,
            port: None,
            status: 302,
        }
    }

    #[test]
    fn header_names_as_the_schema_reads_them() {
        for (name, ok) in [
            ("X-Env", true),
            ("authorization", true),
            ("x_a.b~c|d", true),
            ("Bad Name", false),
            (":method", false),
            ("/invalid", false),
            ("", false),
            ("é", false),
        ] {
            assert_eq!(header_name_problem(name).is_none(), ok, "{name:?}");
        }
        assert!(header_name_problem(&"a".repeat(256)).is_none());
        assert!(header_name_problem(&"a".repeat(257)).is_some());
    }

    #[test]
    fn gateway_paths_as_the_schema_reads_them() {
        for (path, ok) in [
            ("/cart", true),
            ("/a%20b", true),
            ("/a:b@c;d=e,f", true),
            ("/cart#x", false),
            ("/cart x", false),
            ("/a%2", false),
            ("/a%zz", false),
            ("/é", false),
            ("/a\"b", false),
        ] {
            assert_eq!(gateway_path_problem(path).is_none(), ok, "{path:?}");
        }
        assert_eq!(
            gateway_path_problem("/cart#x y").as_deref(),
            Some("must not contain '#' when type one of ['Exact', 'PathPrefix']")
        );
    }

    #[test]
    fn a_filter_type_at_most_once() {
        let m = Filter::RequestHeaderModifier(HeaderModifier::default());
        assert!(repeated_filters(&[m.clone(), redirect(None)]).is_empty());
        assert_eq!(
            repeated_filters(&[m.clone(), m]),
            ["RequestHeaderModifier filter cannot be repeated"]
        );
        // RequestMirror may repeat.
        let mirror = Filter::RequestMirror {
            target: backend().target,
            port: Some(80),
            numerator: 1,
            denominator: 1,
        };
        assert!(repeated_filters(&[mirror.clone(), mirror]).is_empty());
    }

    #[test]
    fn redirects_and_prefix_replacements_as_the_cel_rules_allow() {
        let mut rule = RouteRule {
            matches: vec![RouteMatch::default()],
            filters: vec![redirect(None)],
            backends: vec![backend()],
        };
        assert_eq!(
            rule_problems(&rule),
            ["RequestRedirect filter must not be used together with backendRefs"]
        );
        rule.backends.clear();
        rule.filters = vec![redirect(Some(PathModifier::ReplacePrefixMatch(
            "/x".into(),
        )))];
        assert!(rule_problems(&rule).is_empty());
        rule.matches[0].path = PathMatch::Exact("/a".into());
        assert_eq!(rule_problems(&rule).len(), 1);
        rule.matches = vec![RouteMatch::default(), RouteMatch::default()];
        assert_eq!(rule_problems(&rule).len(), 1);
        rule.filters.clear();
        let mut b = backend();
        b.filters = vec![Filter::UrlRewrite {
            hostname: None,
            path: Some(PathModifier::ReplacePrefixMatch("/y".into())),
        }];
        rule.backends = vec![b];
        assert!(rule_problems(&rule)[0].starts_with("Within backendRefs"));
    }
}
