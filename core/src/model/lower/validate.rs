//! Shared field readers and rules for lowering: typed values (strings,
//! integers in a range, ports, IPs, CIDRs, booleans, labels, protocols, port
//! references) read from YAML nodes, each bad value reported as a located
//! diagnostic through [`Ctx`], and the API server's name rules.
//!
//! Nothing here decides what an object means; it must never panic on input.

use super::*;
use crate::util::diag::Severity;

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
        // As kubectl reads it (YAML 1.1: `010` is 8, `0x1F90` is 8080).
        let parsed = n.as_int();
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

    /// A whole number the API server accepts from `min` up, of which kpv
    /// simulates at most `sim_max`: below `min` is the API's error; above
    /// `sim_max` is the simulator's own limit, said as such, and the value
    /// is capped to it (a warning, not a refusal).
    pub(super) fn int_sim(
        &mut self,
        node: Option<&Y>,
        field: &str,
        min: i64,
        sim_max: i64,
    ) -> Option<i64> {
        let n = node?;
        if n.is_null() {
            return None;
        }
        // As kubectl reads it (YAML 1.1: `010` is 8, `0x1F90` is 8080).
        let parsed = n.as_int();
        let Some(v) = parsed else {
            self.err(
                n,
                field,
                format!(
                    "expected a whole number, found `{}`",
                    n.as_str().unwrap_or(n.kind_name())
                ),
                &format!("use a number from {min} up, without quotes"),
            );
            return None;
        };
        if v < min {
            self.err(
                n,
                field,
                format!("Invalid value: {v}: must be greater than or equal to {min}"),
                &format!("use {min} or more"),
            );
            None
        } else if v > sim_max {
            self.warn(
                n,
                field,
                format!("{v} is more than kpv simulates here (at most {sim_max}); Kubernetes itself accepts it, kpv uses {sim_max}"),
                "this limit is the simulator's, not Kubernetes': lower the value to see exactly what you wrote",
            );
            Some(sim_max)
        } else {
            Some(v)
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
        // As kubectl reads it (YAML 1.1: `yes` and `on` are true too).
        match n.as_bool() {
            Some(b) => Some(b),
            None => {
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

    /// A list the schema caps at `max` items: past it, the API server's
    /// "Too many" error (the object is refused) and only the first `max`
    /// items read, so a huge list costs no more than an allowed one.
    pub(super) fn seq_max<'y>(&mut self, node: Option<&'y Y>, field: &str, max: usize) -> &'y [Y] {
        let items = self.seq(node, field);
        match (items.get(..max), node) {
            (Some(first), Some(n)) if items.len() > max => {
                let msg = format!("Too many: {}: must have at most {max} items", items.len());
                let hint = format!("keep at most {max}, and put the rest in another object");
                self.err(n, field, msg, &hint);
                first
            }
            _ => items,
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
                (Some(key), Some(value)) => {
                    // ValidateLabels: the API server refuses the object.
                    let problems: Vec<(String, &Y)> = label_key_problems(key)
                        .into_iter()
                        .map(|p| {
                            (
                                format!("Invalid value: {}: {p}", crate::util::diag::quoted(key)),
                                k,
                            )
                        })
                        .chain(label_value_problems(value).into_iter().map(|p| {
                            (
                                format!("Invalid value: {}: {p}", crate::util::diag::quoted(value)),
                                v,
                            )
                        }))
                        .collect();
                    for (msg, at) in problems {
                        self.err(
                            at,
                            field,
                            msg,
                            "label keys are [prefix/]name and values at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit",
                        );
                    }
                    out.insert(key.to_string(), value.to_string());
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
                if let (false, Some(v)) = (*quoted, n.as_int()) {
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

const LABEL_CHARS: &str = "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

fn label_chars_ok(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

/// `IsQualifiedName` (a label key): `[prefix/]name`.
pub(super) fn label_key_problems(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(p) = prefix {
        if p.is_empty() {
            out.push("prefix part must be non-empty".to_string());
        } else {
            out.extend(
                NameRule::Dns1123Subdomain
                    .check(p)
                    .into_iter()
                    .map(|m| format!("prefix part {m}")),
            );
        }
    }
    if name.is_empty() {
        out.push("name part must be non-empty".to_string());
    } else {
        if name.len() > 63 {
            out.push("name part must be no more than 63 characters".to_string());
        }
        if !label_chars_ok(name) || name.contains('/') {
            out.push(format!("name part must {LABEL_CHARS} (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"));
        }
    }
    out
}

/// `IsValidLabelValue`.
pub(super) fn label_value_problems(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    if value.len() > 63 {
        out.push("must be no more than 63 characters".to_string());
    }
    if !value.is_empty() && !label_chars_ok(value) {
        out.push(format!("a valid label must be an empty string or {LABEL_CHARS} (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"));
    }
    out
}

/// `IsValidPortName` (IANA_SVC_NAME): a container port's name.
pub(super) fn port_name_problems(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    if name.len() > 15 {
        out.push("must be no more than 15 characters".to_string());
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        out.push(
            "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_string(),
        );
    }
    if name.contains("--") {
        out.push("must not contain consecutive hyphens".to_string());
    }
    if !name.bytes().any(|b| b.is_ascii_lowercase()) {
        out.push("must contain at least one letter (a-z)".to_string());
    }
    if name.starts_with('-') || name.ends_with('-') {
        out.push("must not begin or end with a hyphen".to_string());
    }
    out
}

/// The API server's rules for object names (apimachinery's
/// `IsDNS1123Subdomain`, `IsDNS1123Label`, `IsDNS1035Label`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NameRule {
    /// Most objects' names: lower-case labels joined by dots, ≤ 253 characters.
    Dns1123Subdomain,
    /// Namespaces (and other names used as one DNS label): ≤ 63 characters.
    Dns1123Label,
    /// Services: a DNS label that starts with a letter, ≤ 63 characters.
    Dns1035Label,
}

impl NameRule {
    /// The rule `metadata.name` of a kind follows (`ValidateObjectMeta`'s
    /// name function for that kind).
    pub(super) fn for_kind(kind: &str) -> NameRule {
        match kind {
            "Service" => NameRule::Dns1035Label,
            "Namespace" => NameRule::Dns1123Label,
            _ => NameRule::Dns1123Subdomain,
        }
    }

    /// The API server's complaints about `name`, worded as it words them
    /// (empty when the name is valid).
    pub(super) fn check(self, name: &str) -> Vec<String> {
        let label = |s: &str, first_alpha: bool| {
            let b = s.as_bytes();
            !b.is_empty()
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
                && (if first_alpha {
                    b[0].is_ascii_lowercase()
                } else {
                    b[0].is_ascii_alphanumeric()
                })
                && b[b.len() - 1].is_ascii_alphanumeric()
        };
        let (max, ok, what, examples, regex) = match self {
            NameRule::Dns1123Subdomain => (
                253,
                name.split('.').all(|l| label(l, false)),
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
                "'example.com'",
                r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
            ),
            NameRule::Dns1123Label => (
                63,
                label(name, false),
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
                "'my-name',  or '123-abc'",
                "[a-z0-9]([-a-z0-9]*[a-z0-9])?",
            ),
            NameRule::Dns1035Label => (
                63,
                label(name, true),
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
                "'my-name',  or 'abc-123'",
                "[a-z]([-a-z0-9]*[a-z0-9])?",
            ),
        };
        let mut out = Vec::new();
        if name.len() > max {
            out.push(format!("must be no more than {max} characters"));
        }
        if !ok {
            out.push(format!(
                "{what} (e.g. {examples}, regex used for validation is '{regex}')"
            ));
        }
        out
    }

    /// `Invalid value: "NAME": …`, as `kubectl apply` reports a bad name
    /// (after `The KIND "NAME" is invalid: FIELD:`), or `None` when valid.
    pub(super) fn invalid(self, name: &str) -> Option<String> {
        let problems = self.check(name);
        (!problems.is_empty()).then(|| {
            format!(
                "Invalid value: {}: {}",
                crate::util::diag::quoted(name),
                problems.join(", ")
            )
        })
    }

    /// What to write instead, for a diagnostic's hint.
    pub(super) fn hint(self) -> &'static str {
        match self {
            NameRule::Dns1123Subdomain => "use lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters",
            NameRule::Dns1123Label => "use lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters",
            NameRule::Dns1035Label => "use lower-case letters, digits and '-', starting with a letter and ending with a letter or digit, at most 63 characters",
        }
    }
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
