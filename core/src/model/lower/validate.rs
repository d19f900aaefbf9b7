//! Shared field readers and rules for lowering: typed values (strings,
//! integers in a range, ports, IPs, CIDRs, booleans, labels, protocols, port
//! references) read from YAML nodes, each bad value reported as a located
//! diagnostic through [`Ctx`], and the API server's name rules.
//!
//! Nothing here decides what an object means; it must never panic on input.

use super::*;
use crate::diag::Severity;

/// Where diagnostics for the object being lowered go.
pub(super) struct Ctx<'a> {
    pub(super) diags: &'a mut Vec<Diagnostic>,
    pub(super) file: usize,
    pub(super) doc: usize,
    pub(super) prefix: &'a str,
    pub(super) object: String,
    pub(super) errors: usize,
}

impl Ctx<'_> {
    pub(super) fn push(
        &mut self,
        sev: Severity,
        node: &Y,
        field: &str,
        msg: String,
        hint: Option<&str>,
    ) {
        if sev == Severity::Error {
            self.errors += 1;
        }
        self.diags.push(Diagnostic {
            severity: sev,
            file: self.file,
            document: self.doc,
            object: Some(self.object.clone()),
            field: if field.is_empty() {
                None
            } else {
                Some(format!("{}{}", self.prefix, field))
            },
            span: Some(node.span),
            message: msg,
            hint: hint.map(str::to_string),
        });
    }

    pub(super) fn err(&mut self, node: &Y, field: &str, msg: impl Into<String>, hint: &str) {
        self.push(
            Severity::Error,
            node,
            field,
            msg.into(),
            Some(hint).filter(|h| !h.is_empty()),
        );
    }

    pub(super) fn warn(&mut self, node: &Y, field: &str, msg: impl Into<String>, hint: &str) {
        self.push(
            Severity::Warning,
            node,
            field,
            msg.into(),
            Some(hint).filter(|h| !h.is_empty()),
        );
    }

    /// Warn about keys of a mapping this model does not know.
    pub(super) fn unknown_keys(&mut self, node: &Y, path: &str, known: &[&str]) {
        if let Some(entries) = node.as_map() {
            for (k, _) in entries {
                let name = k.as_str().unwrap_or("?");
                if !known.contains(&name) {
                    let field = join(path, name);
                    self.warn(
                        k,
                        &field,
                        format!("unknown field `{name}` is ignored"),
                        "check the spelling against the Kubernetes API reference",
                    );
                }
            }
        }
    }

    pub(super) fn string(&mut self, node: Option<&Y>, field: &str) -> Option<String> {
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

    pub(super) fn int(&mut self, node: Option<&Y>, field: &str, min: i64, max: i64) -> Option<i64> {
        let n = node?;
        if n.is_null() {
            return None;
        }
        let parsed = match &n.value {
            Value::Scalar {
                text,
                quoted: false,
            } => text.parse::<i64>().ok(),
            _ => None,
        };
        match parsed {
            Some(v) if (min..=max).contains(&v) => Some(v),
            Some(v) => {
                self.err(
                    n,
                    field,
                    format!("{v} is out of range {min}–{max}"),
                    &format!("use a value from {min} to {max}"),
                );
                None
            }
            None => {
                self.err(
                    n,
                    field,
                    format!(
                        "expected a whole number, found `{}`",
                        n.as_str().unwrap_or(n.kind_name())
                    ),
                    &format!("use a number from {min} to {max} without quotes"),
                );
                None
            }
        }
    }

    pub(super) fn port(&mut self, node: Option<&Y>, field: &str) -> Option<u16> {
        self.int(node, field, 1, 65535).map(|v| v as u16)
    }

    /// `hints: {forZones: [{name}], forNodes: [{name}]}`.
    pub(super) fn hints(&mut self, node: Option<&Y>, field: &str) -> Hints {
        let mut out = Hints::default();
        let Some(n) = node.filter(|n| !n.is_null()) else {
            return out;
        };
        self.unknown_keys(n, field, &["forZones", "forNodes"]);
        for (key, list) in [
            ("forZones", &mut out.for_zones),
            ("forNodes", &mut out.for_nodes),
        ] {
            let path = format!("{field}.{key}");
            for (i, x) in self.seq(n.get(key), &path).iter().enumerate() {
                if let Some(name) = self.string(x.get("name"), &format!("{path}[{i}].name")) {
                    list.push(name);
                }
            }
        }
        out
    }

    pub(super) fn boolean(&mut self, node: Option<&Y>, field: &str) -> Option<bool> {
        let n = node?;
        if n.is_null() {
            return None;
        }
        match n.as_str() {
            Some("true") | Some("True") | Some("TRUE") => Some(true),
            Some("false") | Some("False") | Some("FALSE") => Some(false),
            _ => {
                self.err(n, field, "expected true or false", "");
                None
            }
        }
    }

    pub(super) fn ip(&mut self, node: &Y, field: &str) -> Option<IpAddr> {
        let s = node.as_str().unwrap_or("");
        match parse_ip_sloppy(s) {
            Some(ip) => Some(ip),
            None => {
                self.err(
                    node,
                    field,
                    format!("`{s}` is not a valid IP address"),
                    "write an IPv4 address like 10.96.0.10 or an IPv6 address like fd00::10",
                );
                None
            }
        }
    }

    pub(super) fn cidr(&mut self, node: &Y, field: &str) -> Option<IpNet> {
        let s = node.as_str().unwrap_or("");
        match parse_cidr_sloppy(s) {
            Some(c) => Some(c),
            None => {
                self.err(
                    node,
                    field,
                    format!("`{s}` is not a valid CIDR"),
                    "write a network like 10.0.0.0/8 or fd00::/64",
                );
                None
            }
        }
    }

    pub(super) fn seq<'y>(&mut self, node: Option<&'y Y>, field: &str) -> &'y [Y] {
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

    pub(super) fn labels(&mut self, node: Option<&Y>, field: &str) -> Labels {
        let mut out = Labels::new();
        let Some(n) = node else { return out };
        if n.is_null() {
            return out;
        }
        let Some(entries) = n.as_map() else {
            self.err(
                n,
                field,
                format!("expected a mapping of labels, found a {}", n.kind_name()),
                "write labels as `key: value` lines",
            );
            return out;
        };
        for (k, v) in entries {
            match (k.as_str(), v.as_str()) {
                (Some(k), Some(v)) => {
                    out.insert(k.to_string(), v.to_string());
                }
                _ => self.err(
                    v,
                    &join(field, k.as_str().unwrap_or("?")),
                    "label values must be strings",
                    "quote the value",
                ),
            }
        }
        out
    }
}

pub(super) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

impl Builder {
    pub(super) fn port_ref(c: &mut Ctx<'_>, n: Option<&Y>, field: &str) -> Option<PortRef> {
        let n = n.filter(|n| !n.is_null())?;
        match &n.value {
            Value::Scalar { text, quoted } => {
                if let (false, Ok(v)) = (*quoted, text.parse::<i64>()) {
                    if (1..=65535).contains(&v) {
                        Some(PortRef::Number(v as u16))
                    } else {
                        c.err(
                            n,
                            field,
                            format!("port {v} is out of range 1–65535"),
                            "use a port from 1 to 65535",
                        );
                        None
                    }
                } else if !text.is_empty()
                    && text.len() <= 15
                    && text
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                    && text.bytes().any(|b| b.is_ascii_lowercase())
                {
                    Some(PortRef::Name(text.clone()))
                } else {
                    c.err(n, field, format!("`{text}` is neither a port number nor a port name"), "use a number from 1 to 65535 or a container port's name (lower-case, at most 15 characters)");
                    None
                }
            }
            _ => {
                c.err(n, field, "expected a port number or name", "");
                None
            }
        }
    }

    pub(super) fn protocol(c: &mut Ctx<'_>, n: Option<&Y>, field: &str) -> Protocol {
        let Some(n) = n.filter(|n| !n.is_null()) else {
            return Protocol::Tcp;
        };
        match n.as_str().and_then(Protocol::parse) {
            Some(p) => p,
            None => {
                c.err(
                    n,
                    field,
                    format!("unknown protocol `{}`", n.as_str().unwrap_or("?")),
                    "use TCP, UDP or SCTP",
                );
                Protocol::Tcp
            }
        }
    }
}

pub(super) fn valid_dns_label_ish(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && name
            .bytes()
            .last()
            .is_some_and(|b| b.is_ascii_alphanumeric())
}

/// A mapping of strings (labels, annotations); other values are skipped.
pub(super) fn string_map(n: Option<&Y>) -> Labels {
    let mut out = Labels::new();
    for (k, val) in n.and_then(Y::as_map).unwrap_or(&[]) {
        if let (Some(k), Some(val)) = (k.as_str(), val.as_str()) {
            out.insert(k.to_string(), val.to_string());
        }
    }
    out
}

/// Is `s` a lowercase RFC 1123 subdomain?
pub(super) fn is_dns_subdomain(s: &str) -> bool {
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
pub(super) fn host_problem(host: &str) -> Option<String> {
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
pub(super) fn strict_path_problem(path: &str) -> Option<String> {
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
mod routing_rule_tests {
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
