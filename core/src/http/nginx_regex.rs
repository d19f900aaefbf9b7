//! ingress-nginx's regular-expression paths and `rewrite-target`, as its
//! controller and template write them:
//!
//! - When any path of a host, from any Ingress, sets `use-regex: "true"` or
//!   a `rewrite-target` other than its own path, **every** location of that
//!   host is written `location ~* "^PATH"`: a case-insensitive regular
//!   expression anchored at the start only, so `Exact` and `Prefix` lose
//!   their meaning on that host. nginx tries them in the controller's
//!   order: longest path first, at equal length the greater path in byte
//!   order first, then as listed.
//! - A location with a rewrite target adds `rewrite "(?i)PATH" TARGET
//!   break;`: the first match of PATH in the normalised URI, `$1`…`$9`
//!   replaced by its groups. The client's query is kept, after TARGET's own
//!   if it has one, and dropped if TARGET ends in `?`; the new path goes
//!   upstream escaped as nginx escapes a URI.
//! - Its admission webhook (`strict-validate-path-type`, on by default)
//!   denies an Ingress whose `Exact` or `Prefix` path is anything but `/`
//!   followed by letters, digits, `.`, `_`, `-` and `/`: a regular
//!   expression needs `ImplementationSpecific`.
//!
//! Pure; decides only, in typed values.

use crate::util::regex::{Regex, RegexError};

/// The annotations' names (after `nginx.ingress.kubernetes.io/`).
pub const USE_REGEX: &str = "use-regex";
pub const REWRITE_TARGET: &str = "rewrite-target";

/// A boolean annotation as the controller parses it (Go's `ParseBool`;
/// anything else is ignored, so false).
pub fn annotation_true(value: Option<&String>) -> bool {
    matches!(
        value.map(String::as_str),
        Some("1" | "t" | "T" | "true" | "TRUE" | "True")
    )
}

/// The location a path becomes on a host with regular expressions.
pub fn location(path: &str) -> Result<Regex, RegexError> {
    Regex::new(&format!("^{path}"), true).map_err(|mut e| {
        e.at = e.at.saturating_sub(1);
        e
    })
}

/// One path of a host with regular expressions, compiled once when its
/// routing table is built: its location and, with a target, its rewrite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// `location ~* "^PATH"`, or why kpv cannot read it.
    pub matcher: Result<Regex, RegexError>,
    /// `rewrite "(?i)PATH" TARGET break;` (`None` without a target, or
    /// when PATH cannot be read).
    rewrite: Option<(Regex, String)>,
}

impl Location {
    pub fn new(path: &str, target: Option<&str>) -> Location {
        Location {
            matcher: location(path),
            rewrite: target.and_then(|t| Some((Regex::new(path, true).ok()?, t.to_string()))),
        }
    }

    /// Does `uri` (normalised) match? A path kpv cannot read never matches
    /// (`kpv check` says why).
    pub fn matches(&self, uri: &str) -> bool {
        self.matcher
            .as_ref()
            .is_ok_and(|r| r.is_match(uri.as_bytes(), true))
    }

    /// The request line after the rewrite, applied to `uri` (normalised)
    /// with the client's `query`; `None` without a target or when PATH
    /// does not match (nginx then forwards the request unchanged).
    pub fn rewrite(&self, uri: &str, query: &str) -> Option<Rewritten> {
        let (re, target) = self.rewrite.as_ref()?;
        rewrite(re, target, uri, query)
    }
}

/// The order nginx tries a regex host's locations in, as a sort key.
pub fn location_order(path: &str) -> (std::cmp::Reverse<usize>, std::cmp::Reverse<String>) {
    (
        std::cmp::Reverse(path.len()),
        std::cmp::Reverse(path.to_string()),
    )
}

/// The request line's path and query after a rewrite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rewritten {
    pub path: String,
    pub query: String,
}

/// `rewrite "(?i)PATH" TARGET break;` with PATH compiled as `re`.
fn rewrite(re: &Regex, target: &str, uri: &str, query: &str) -> Option<Rewritten> {
    let groups = re.captures(uri.as_bytes(), false)?;
    let mut out: Vec<u8> = Vec::new();
    let t = target.as_bytes();
    let mut i = 0;
    while let Some(&b) = t.get(i) {
        let digit = t.get(i + 1).filter(|d| (b'1'..=b'9').contains(d));
        match (b, digit) {
            (b'$', Some(d)) => {
                let g = usize::from(d - b'0');
                if let Some(Some((a, z))) = groups.get(g) {
                    out.extend_from_slice(uri.as_bytes().get(*a..*z).unwrap_or_default());
                }
                i += 2;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    let text = String::from_utf8_lossy(&out).into_owned();
    let (p, own) = match text.split_once('?') {
        Some((p, a)) => (p.to_string(), Some(a.to_string())),
        None => (text, None),
    };
    let query = match own {
        None => query.to_string(),
        Some(a) if a.ends_with('?') || target.ends_with('?') => a.trim_end_matches('?').to_string(),
        Some(a) if query.is_empty() => a,
        Some(a) if a.is_empty() => query.to_string(),
        Some(a) => format!("{a}&{query}"),
    };
    Some(Rewritten {
        path: escape_uri(&p),
        query,
    })
}

/// nginx's URI escaping of a path it builds itself: space, `#`, `%`, `?`,
/// control bytes and bytes above 0x7e become `%XX`.
fn escape_uri(path: &str) -> String {
    let mut s = String::with_capacity(path.len());
    for b in path.bytes() {
        if b <= 0x20 || b >= 0x7f || matches!(b, b'#' | b'%' | b'?') {
            s.push_str(&format!("%{b:02X}"));
        } else {
            s.push(char::from(b));
        }
    }
    s
}

/// The nginx variables (`$host`, `$args`…) a target names, which kpv does
/// not expand.
pub fn variables(target: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = target;
    while let Some(i) = rest.find('$') {
        let after = rest.get(i + 1..).unwrap_or_default();
        let name_len = after
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        let name = after.get(..name_len).unwrap_or_default();
        // `$` and a digit is a group (`$10` is group 1, then `0`).
        if name.bytes().next().is_some_and(|b| !b.is_ascii_digit()) {
            out.push(name);
        }
        rest = after;
    }
    out
}

/// Would ingress-nginx's admission webhook accept this path for its type?
pub fn strict_path_ok(path: &str, path_type: super::objects::PathType) -> bool {
    path_type == super::objects::PathType::ImplementationSpecific
        || path.is_empty()
        || (path.starts_with('/')
            && path
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-' | b'/')))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::objects::PathType;

    fn rewrite(path: &str, target: &str, uri: &str, query: &str) -> Option<Rewritten> {
        Location::new(path, Some(target)).rewrite(uri, query)
    }

    fn location_matches(path: &str, uri: &str) -> bool {
        Location::new(path, None).matches(uri)
    }

    /// The rewrite example of ingress-nginx's documentation:
    /// `/something(/|$)(.*)` with `rewrite-target: /$2`.
    #[test]
    fn the_documented_rewrite() {
        for (uri, want) in [
            ("/something", "/"),
            ("/something/", "/"),
            ("/something/new", "/new"),
            ("/SOMETHING/New", "/New"),
        ] {
            let got = rewrite("/something(/|$)(.*)", "/$2", uri, "");
            assert_eq!(got.map(|r| r.path).as_deref(), Some(want), "{uri}");
        }
        assert!(location_matches("/something(/|$)(.*)", "/Something/x"));
        assert!(!location_matches("/something(/|$)(.*)", "/x/something"));
        // Anchored at the start only: a regex host's `/foo` matches `/foobar`.
        assert!(location_matches("/foo", "/foobar"));
    }

    /// The query: kept after a target without one, after the target's own,
    /// and dropped by a target ending in `?`.
    #[test]
    fn the_query_as_nginx_keeps_it() {
        let q = |target: &str, query: &str| {
            rewrite("/a/(.*)", target, "/a/b", query).map(|r| (r.path, r.query))
        };
        assert_eq!(q("/$1", "x=1"), Some(("/b".into(), "x=1".into())));
        assert_eq!(q("/$1?y=2", "x=1"), Some(("/b".into(), "y=2&x=1".into())));
        assert_eq!(q("/$1?y=2", ""), Some(("/b".into(), "y=2".into())));
        assert_eq!(q("/$1?", "x=1"), Some(("/b".into(), String::new())));
        assert_eq!(q("/$1$9", ""), Some(("/b".into(), String::new())));
        assert_eq!(
            rewrite("/a/(.*)", "/$1", "/a/b c#d", "").map(|r| r.path),
            Some("/b%20c%23d".into())
        );
        assert_eq!(rewrite("/z/(.*)", "/$1", "/a/b", ""), None);
    }

    /// ingress-nginx's own inspector test table (`TestValidatePathType`),
    /// and the characters it allows.
    #[test]
    fn strict_path_validation() {
        for (path, ty, ok) in [
            ("/test", PathType::ImplementationSpecific, true),
            ("/xpto/ab0/x_ss-9", PathType::Prefix, true),
            ("/bla/", PathType::Exact, true),
            ("", PathType::Exact, true),
            ("/foo.+", PathType::ImplementationSpecific, true),
            ("xpto/lala", PathType::ImplementationSpecific, true),
            ("/foo.+", PathType::Exact, false),
            ("xpto/lala", PathType::Exact, false),
            ("/xpto/lala", PathType::Exact, true),
            ("/foo/bar/[a-z]{3}", PathType::Prefix, false),
            ("/lala/xp\ntest", PathType::Prefix, false),
            ("/index.html", PathType::Prefix, true),
            ("/something(/|$)(.*)", PathType::Prefix, false),
        ] {
            assert_eq!(strict_path_ok(path, ty), ok, "{path:?} {ty:?}");
        }
    }

    #[test]
    fn annotations_and_variables() {
        for (v, want) in [
            ("true", true),
            ("True", true),
            ("1", true),
            ("yes", false),
            ("false", false),
        ] {
            assert_eq!(annotation_true(Some(&v.to_string())), want, "{v}");
        }
        assert!(!annotation_true(None));
        assert_eq!(variables("/$1/$host?$args"), vec!["host", "args"]);
        assert_eq!(location("/a(b").map_err(|e| e.at), Err(2));
    }
}
