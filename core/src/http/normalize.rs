//! What a proxy does to a request before it matches any rule, per
//! implementation:
//!
//! - **ingress-nginx** (nginx): matches `location`s on the normalised URI —
//!   every `%XX` decoded, `.` and `..` segments resolved, runs of `/`
//!   merged (`merge_slashes on`) — and refuses with 400 a path that climbs
//!   above the root; the request goes upstream as the client wrote it
//!   (`proxy_pass` without a URI). A Host ending in one dot is matched
//!   without it.
//! - **Envoy Gateway** (Envoy with `normalize_path` and `merge_slashes`):
//!   RFC 3986 normalisation — `%XX` of unreserved characters decoded, other
//!   escapes upper-cased, dot segments removed (never above the root),
//!   slashes merged — and the normalised path is what the backend gets. A
//!   trailing-dot Host is kept (Envoy's `strip_trailing_host_dot` is off),
//!   so it matches no hostname.
//! - **Both** answer 400 to a request with two Host headers (RFC 9112
//!   §3.2: a server must).
//!
//! Other controllers get nginx's rules. Pure; typed values only.

use super::table::Implementation;
use super::values::HttpRequest;
use crate::util::percent;

/// A request as a proxy read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Read {
    /// The request rules are compared with.
    pub matched: HttpRequest,
    /// The path the backend gets unless a filter rewrites it (the client's,
    /// for nginx; the normalised one, for Envoy).
    pub forwarded_path: String,
    /// The path as the client sent it.
    pub client_path: String,
}

/// Read `req` as `imp`'s proxy does; `None` when the proxy refuses it
/// (400 Bad Request, before any rule is compared).
pub fn read(imp: &Implementation, req: &HttpRequest) -> Option<Read> {
    if req.headers.iter().any(|(k, _)| k == "host") {
        return None;
    }
    let mut matched = req.clone();
    match imp {
        Implementation::EnvoyGateway => {
            let path = envoy_path(&req.path)?;
            matched.path = path.clone();
            Some(Read {
                matched,
                forwarded_path: path,
                client_path: req.path.clone(),
            })
        }
        Implementation::IngressNginx | Implementation::Other(_) => {
            let path = nginx_uri(&req.path)?;
            matched.path = path;
            if let Some(h) = matched.host.strip_suffix('.') {
                matched.host = h.to_string();
            }
            Some(Read {
                matched,
                forwarded_path: req.path.clone(),
                client_path: req.path.clone(),
            })
        }
    }
}

/// Merge runs of `/` and resolve `.` and `..` segments; `None` when a `..`
/// climbs above the root and `strict` (nginx) is set, else such a `..` is
/// dropped (RFC 3986 section 5.2.4).
fn resolve(path: &str, strict: bool) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = path.split('/').skip(1).collect();
    let last = segments.len().saturating_sub(1);
    let mut trailing = false;
    for (i, seg) in segments.iter().enumerate() {
        match *seg {
            "" | "." => trailing = i == last,
            ".." => {
                if out.pop().is_none() && strict {
                    return None;
                }
                trailing = i == last;
            }
            s => {
                out.push(s);
                trailing = false;
            }
        }
    }
    let mut s = format!("/{}", out.join("/"));
    if trailing && !out.is_empty() {
        s.push('/');
    }
    Some(s)
}

/// nginx's normalised URI (see the module's comment).
pub fn nginx_uri(path: &str) -> Option<String> {
    resolve(&percent::decode(path, false), true)
}

/// Envoy's normalised path (see the module's comment).
pub fn envoy_path(path: &str) -> Option<String> {
    let b = path.as_bytes();
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if let Some(byte) = percent::escape_at(b, i) {
            let ch = char::from(byte);
            if ch.is_ascii_alphanumeric() || "-._~".contains(ch) {
                out.push(ch);
            } else {
                out.push_str(&format!("%{byte:02X}"));
            }
            i += 3;
        } else {
            out.push(char::from(c));
            i += 1;
        }
    }
    // Non-ASCII bytes were pushed one by one above; the path is ASCII on
    // the wire (curl escapes the rest), so rebuild from the original when
    // it is not.
    if !path.is_ascii() {
        out = path.to_string();
    }
    resolve(&out, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nginx_matches_the_decoded_resolved_merged_uri() {
        for (path, want) in [
            ("/api/x", Some("/api/x")),
            ("/public/../api/x", Some("/api/x")),
            ("//api//x", Some("/api/x")),
            ("/%61pi/x", Some("/api/x")),
            ("/a/./b/", Some("/a/b/")),
            ("/a/b/..", Some("/a/")),
            ("/", Some("/")),
            ("/..", None),
            ("/a/../../b", None),
        ] {
            assert_eq!(nginx_uri(path).as_deref(), want, "{path}");
        }
    }

    #[test]
    fn envoy_normalises_as_rfc_3986_says() {
        for (path, want) in [
            ("/public/../api/x", "/api/x"),
            ("//api/x", "/api/x"),
            ("/%61pi/x", "/api/x"),
            ("/a%2fb", "/a%2Fb"),
            ("/a%20b", "/a%20b"),
            ("/../x", "/x"),
        ] {
            assert_eq!(envoy_path(path).as_deref(), Some(want), "{path}");
        }
    }
}
