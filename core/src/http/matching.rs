//! The small matching rules both APIs are built from: host names against
//! wildcards (one label for Ingress, one or more for the Gateway API),
//! paths (Exact, element-wise Prefix, ImplementationSpecific as kpv's
//! chosen controller reads it), hostname intersection between a listener
//! and a route, and the prefix rewrite. Pure functions over strings; no
//! allocation of decisions, no text for people.

/// Ingress host match: exact, or `*.foo.com` covering exactly one label
/// (`bar.foo.com`, not `baz.bar.foo.com` nor `foo.com`).
pub fn ingress_host_matches(rule: &str, host: &str) -> bool {
    match rule.strip_prefix("*.") {
        Some(suffix) => host
            .split_once('.')
            .is_some_and(|(first, rest)| !first.is_empty() && rest == suffix),
        None => rule == host,
    }
}

/// Gateway API host match: exact, or `*.example.com` covering one or more
/// labels (`foo.example.com`, `a.b.example.com`, not `example.com`).
pub fn gateway_host_matches(pattern: &str, host: &str) -> bool {
    match pattern.strip_prefix('*') {
        Some(suffix) => {
            host.len() > suffix.len() && host.ends_with(suffix) && {
                let label = &host[..host.len() - suffix.len()];
                !label.is_empty() && !label.starts_with('.')
            }
        }
        None => pattern == host,
    }
}

/// The hostnames a route serves on a listener: the intersection of the
/// listener's hostname (`None`: any) with the route's (`[]`: any). `None`
/// means they do not intersect; `Some([])` means any host.
pub fn intersect_hostnames(listener: Option<&str>, route: &[String]) -> Option<Vec<String>> {
    let Some(l) = listener else {
        return Some(route.to_vec());
    };
    if route.is_empty() {
        return Some(vec![l.to_string()]);
    }
    let mut out = Vec::new();
    for r in route {
        let got = match (l.starts_with('*'), r.starts_with('*')) {
            (false, false) => (l == r).then(|| r.clone()),
            (false, true) => gateway_host_matches(r, l).then(|| l.to_string()),
            (true, false) => gateway_host_matches(l, r).then(|| r.clone()),
            (true, true) => {
                if r.ends_with(&l[1..]) {
                    Some(r.clone())
                } else if l.ends_with(&r[1..]) {
                    Some(l.to_string())
                } else {
                    None
                }
            }
        };
        if let Some(h) = got {
            if !out.contains(&h) {
                out.push(h);
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

/// Element-wise prefix match on `/`, case-sensitive, a trailing slash in
/// either ignored: `/foo` matches `/foo`, `/foo/`, `/foo/bar`, not `/foobar`.
pub fn prefix_matches(prefix: &str, path: &str) -> bool {
    let p = prefix.trim_end_matches('/');
    if p.is_empty() {
        return true;
    }
    match path.strip_prefix(p) {
        Some(rest) => rest.is_empty() || rest.starts_with('/'),
        None => false,
    }
}

/// Ingress `ImplementationSpecific` as kpv's chosen controller,
/// ingress-nginx without `use-regex`, reads it: an nginx prefix
/// `location`, compared character by character (so `/foo` also matches
/// `/foobar`). A trailing `/*` is read as GCE's and AWS's glob for
/// "everything under" (the form the older manifests were written for).
pub fn implementation_specific_matches(path: &str, request: &str) -> bool {
    match path.strip_suffix('*') {
        Some(glob) => request.starts_with(glob) || request == glob.trim_end_matches('/'),
        None => request.starts_with(path),
    }
}

/// The length that ranks a path rule (longest wins): a glob's `*` does not
/// count, a trailing slash of a Prefix does not either.
pub fn rank_len(path: &str) -> usize {
    path.trim_end_matches('*').trim_end_matches('/').len()
}

/// `ReplacePrefixMatch`: swap the matched prefix (element-wise, trailing
/// slashes ignored) for `replacement`, as the Gateway API's table says.
pub fn replace_prefix(path: &str, prefix: &str, replacement: &str) -> String {
    let p = prefix.trim_end_matches('/');
    let rest = path.strip_prefix(p).unwrap_or(path);
    let r = replacement.trim_end_matches('/');
    let out = format!("{r}{rest}");
    if out.is_empty() {
        "/".into()
    } else if !out.starts_with('/') {
        format!("/{out}")
    } else {
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Ingress documentation's "Examples" table for pathType.
    #[test]
    fn ingress_docs_path_type_examples() {
        let exact = |p: &str, r: &str| p == r;
        for (kind, path, request, want) in [
            ("Prefix", "/", "/anything/at/all", true),
            ("Exact", "/foo", "/foo", true),
            ("Exact", "/foo", "/bar", false),
            ("Exact", "/foo", "/foo/", false),
            ("Exact", "/foo/", "/foo", false),
            ("Prefix", "/foo", "/foo", true),
            ("Prefix", "/foo", "/foo/", true),
            ("Prefix", "/foo/", "/foo", true),
            ("Prefix", "/foo/", "/foo/", true),
            ("Prefix", "/aaa/bb", "/aaa/bbb", false),
            ("Prefix", "/aaa/bbb", "/aaa/bbb", true),
            ("Prefix", "/aaa/bbb/", "/aaa/bbb", true),
            ("Prefix", "/aaa/bbb", "/aaa/bbb/", true),
            ("Prefix", "/aaa/bbb", "/aaa/bbb/ccc", true),
            ("Prefix", "/aaa/bbb", "/aaa/bbbxyz", false),
            ("Prefix", "/aaa", "/ccc", false),
            ("Prefix", "/Foo", "/foo", false),
        ] {
            let got = if kind == "Exact" {
                exact(path, request)
            } else {
                prefix_matches(path, request)
            };
            assert_eq!(got, want, "{kind} {path} vs {request}");
        }
    }

    /// The Ingress documentation's hostname wildcard table.
    #[test]
    fn ingress_wildcard_covers_one_label() {
        for (rule, host, want) in [
            ("*.foo.com", "bar.foo.com", true),
            ("*.foo.com", "baz.bar.foo.com", false),
            ("*.foo.com", "foo.com", false),
            ("foo.bar.com", "foo.bar.com", true),
            ("foo.bar.com", "bar.foo.com", false),
        ] {
            assert_eq!(ingress_host_matches(rule, host), want, "{rule} vs {host}");
        }
    }

    /// Gateway wildcards cover one or more labels (httproute-listener-hostname-matching).
    #[test]
    fn gateway_wildcard_covers_one_or_more_labels() {
        for (pat, host, want) in [
            ("*.example.com", "foo.example.com", true),
            ("*.example.com", "foo.bar.example.com", true),
            ("*.example.com", "example.com", false),
            ("*.example.com", "fooexample.com", false),
            ("*.foo.example.com", "bar.example.com", false),
            ("bar.com", "bar.com", true),
        ] {
            assert_eq!(gateway_host_matches(pat, host), want, "{pat} vs {host}");
        }
    }

    /// httproute-hostname-intersection: listener × route hostnames.
    #[test]
    fn hostname_intersection() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            intersect_hostnames(
                Some("very.specific.com"),
                &s(&["non.matching.com", "*.specific.com"])
            ),
            Some(s(&["very.specific.com"]))
        );
        assert_eq!(
            intersect_hostnames(
                Some("*.wildcard.io"),
                &s(&["bar.wildcard.io", "foo.bar.wildcard.io", "wildcard.io"])
            ),
            Some(s(&["bar.wildcard.io", "foo.bar.wildcard.io"]))
        );
        assert_eq!(
            intersect_hostnames(Some("*.anotherwildcard.io"), &s(&["*.anotherwildcard.io"])),
            Some(s(&["*.anotherwildcard.io"]))
        );
        assert_eq!(
            intersect_hostnames(Some("*.io"), &s(&["*.wildcard.io"])),
            Some(s(&["*.wildcard.io"]))
        );
        assert_eq!(intersect_hostnames(Some("foo.com"), &s(&["bar.com"])), None);
        assert_eq!(intersect_hostnames(None, &[]), Some(vec![]));
    }

    /// The ReplacePrefixMatch table of the Gateway API's HTTPPathModifier.
    #[test]
    fn replace_prefix_match_table() {
        for (path, prefix, repl, want) in [
            ("/foo/bar", "/foo", "/xyz", "/xyz/bar"),
            ("/foo/bar", "/foo", "/xyz/", "/xyz/bar"),
            ("/foo/bar", "/foo/", "/xyz", "/xyz/bar"),
            ("/foo/bar", "/foo/", "/xyz/", "/xyz/bar"),
            ("/foo", "/foo", "/xyz", "/xyz"),
            ("/foo/", "/foo", "/xyz", "/xyz/"),
            ("/foo/bar", "/foo", "", "/bar"),
            ("/foo/", "/foo", "", "/"),
            ("/foo", "/foo", "", "/"),
            ("/foo/", "/foo", "/", "/"),
            ("/foo", "/foo", "/", "/"),
        ] {
            assert_eq!(
                replace_prefix(path, prefix, repl),
                want,
                "{path} {prefix} {repl}"
            );
        }
    }

    #[test]
    fn implementation_specific_is_nginx_prefix_and_reads_the_glob() {
        assert!(implementation_specific_matches("/*", "/anything"));
        assert!(implementation_specific_matches("/*", "/"));
        assert!(implementation_specific_matches("/foo", "/foobar"));
        assert!(implementation_specific_matches("/api/*", "/api"));
        assert!(!implementation_specific_matches("/api/*", "/apis"));
    }
}
