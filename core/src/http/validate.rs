//! Located diagnostics for the routing kinds and the API server's checks
//! they share: DNS names and wildcards, HTTP paths, string maps.
//!
//! Messages follow the API server's own wording (`Required value`,
//! `Invalid value: …`) so a learner sees what `kubectl apply` would say.
//! Nothing here panics on input or decides routing.

use crate::diag::{Diagnostic, Severity};
use crate::model::Labels;
use crate::yaml::Node as Y;

/// Where diagnostics for the object being lowered go.
pub struct Ctx<'a> {
    diags: &'a mut Vec<Diagnostic>,
    file: usize,
    doc: usize,
    prefix: String,
    kind: String,
    object: String,
    pub errors: usize,
}

impl<'a> Ctx<'a> {
    pub fn new(
        diags: &'a mut Vec<Diagnostic>,
        file: usize,
        doc: usize,
        prefix: &str,
        kind: &str,
        _node: &Y,
    ) -> Ctx<'a> {
        Ctx {
            diags,
            file,
            doc,
            prefix: prefix.to_string(),
            kind: kind.to_string(),
            object: kind.to_string(),
            errors: 0,
        }
    }

    pub fn set_object(&mut self, namespace: &str, name: &str) {
        self.object = if namespace.is_empty() {
            format!("{}/{name}", self.kind)
        } else {
            format!("{}/{namespace}/{name}", self.kind)
        };
    }

    fn push(&mut self, sev: Severity, node: &Y, field: &str, msg: String, hint: &str) {
        if sev == Severity::Error {
            self.errors += 1;
        }
        self.diags.push(Diagnostic {
            severity: sev,
            file: self.file,
            document: self.doc,
            object: Some(self.object.clone()),
            field: (!field.is_empty()).then(|| format!("{}{field}", self.prefix)),
            span: Some(node.span),
            message: msg,
            hint: (!hint.is_empty()).then(|| hint.to_string()),
        });
    }

    pub fn err(&mut self, node: &Y, field: &str, msg: impl Into<String>, hint: &str) {
        self.push(Severity::Error, node, field, msg.into(), hint);
    }

    pub fn warn(&mut self, node: &Y, field: &str, msg: impl Into<String>, hint: &str) {
        self.push(Severity::Warning, node, field, msg.into(), hint);
    }

    /// A string field (`None` when absent or null; an error when not a scalar).
    pub fn string(&mut self, node: Option<&Y>, field: &str) -> Option<String> {
        let n = node?;
        if n.is_null() {
            return None;
        }
        match n.as_str() {
            Some(s) => Some(s.to_string()),
            None => {
                self.err(
                    n,
                    field,
                    format!("expected a string, found a {}", n.kind_name()),
                    "",
                );
                None
            }
        }
    }

    /// A whole number in `min..=max`.
    pub fn int(&mut self, node: Option<&Y>, field: &str, min: i64, max: i64) -> Option<i64> {
        let n = node?;
        if n.is_null() {
            return None;
        }
        match n.as_str().and_then(|s| s.parse::<i64>().ok()) {
            Some(x) if (min..=max).contains(&x) => Some(x),
            Some(x) => {
                self.err(
                    n,
                    field,
                    format!("Invalid value: {x}: must be between {min} and {max}, inclusive"),
                    "",
                );
                None
            }
            None => {
                self.err(
                    n,
                    field,
                    format!(
                        "Invalid value: \"{}\": must be a whole number",
                        n.as_str().unwrap_or(n.kind_name())
                    ),
                    "",
                );
                None
            }
        }
    }

    /// A list field (empty when absent; an error when not a list).
    pub fn seq<'y>(&mut self, node: Option<&'y Y>, field: &str) -> &'y [Y] {
        match node {
            None => &[],
            Some(n) if n.is_null() => &[],
            Some(n) => match n.as_seq() {
                Some(s) => s,
                None => {
                    self.err(
                        n,
                        field,
                        format!("expected a list, found a {}", n.kind_name()),
                        "",
                    );
                    &[]
                }
            },
        }
    }
}

/// A mapping of strings (labels, annotations); other values are skipped.
pub fn string_map(n: Option<&Y>) -> Labels {
    let mut out = Labels::new();
    for (k, val) in n.and_then(Y::as_map).unwrap_or(&[]) {
        if let (Some(k), Some(val)) = (k.as_str(), val.as_str()) {
            out.insert(k.to_string(), val.to_string());
        }
    }
    out
}

/// Is `s` a lowercase RFC 1123 subdomain?
pub fn is_dns_subdomain(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}

/// The API server's message for a bad host (Ingress `host`, Gateway
/// `hostname`), or `None` when it is valid: not an IP address, and `*` only
/// as the whole first label.
pub fn host_problem(host: &str) -> Option<String> {
    if crate::model::parse_ip_sloppy(host).is_some() || host.parse::<std::net::IpAddr>().is_ok() {
        return Some(format!(
            "Invalid value: \"{host}\": must be a DNS name, not an IP address"
        ));
    }
    if let Some(rest) = host.strip_prefix("*.") {
        if is_dns_subdomain(rest) {
            return None;
        }
        return Some(format!("Invalid value: \"{host}\": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"));
    }
    if is_dns_subdomain(host) {
        return None;
    }
    Some(format!("Invalid value: \"{host}\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"))
}

/// The API server's message for an `Exact` or `Prefix` path, or `None`.
/// (`ImplementationSpecific` paths are only required to be absolute.)
pub fn strict_path_problem(path: &str) -> Option<String> {
    if !path.starts_with('/') {
        return Some(format!(
            "Invalid value: \"{path}\": must be an absolute path"
        ));
    }
    for bad in ["//", "/./", "/../", "%2f", "%2F"] {
        if path.contains(bad) {
            return Some(format!(
                "Invalid value: \"{path}\": must not contain '{bad}'"
            ));
        }
    }
    for bad in ["/..", "/."] {
        if path.ends_with(bad) {
            return Some(format!(
                "Invalid value: \"{path}\": cannot end with '{bad}'"
            ));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_as_the_api_server_checks_them() {
        for (host, ok) in [
            ("testhost.com", true),
            ("foo.bar.com", true),
            ("*.foo.com", true),
            ("*", false),
            ("foo.*.com", false),
            ("*foo.com", false),
            ("1.2.3.4", false),
            ("::1", false),
            ("Foo.com", false),
            ("-a.com", false),
        ] {
            assert_eq!(host_problem(host).is_none(), ok, "{host}");
        }
        assert!(host_problem("10.0.0.1")
            .unwrap_or_default()
            .contains("not an IP address"));
    }

    #[test]
    fn exact_and_prefix_paths_as_the_api_server_checks_them() {
        for (path, ok) in [
            ("/", true),
            ("/foo", true),
            ("/foo/", true),
            ("/*", true),
            ("foo", false),
            ("/foo//bar", false),
            ("/foo/./bar", false),
            ("/foo/../bar", false),
            ("/foo%2fbar", false),
            ("/foo/..", false),
            ("/foo/.", false),
        ] {
            assert_eq!(strict_path_problem(path).is_none(), ok, "{path}");
        }
    }
}
