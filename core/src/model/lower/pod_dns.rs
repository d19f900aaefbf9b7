//! A Pod's (or Pod template's) `dnsPolicy` and `dnsConfig`, checked as the
//! API server's `validatePodDNSConfig` checks them: a policy it knows,
//! `dnsConfig` with a nameserver when the policy is `None`, at most 3
//! nameservers that are IP addresses, at most 32 search domains of at most
//! 2048 characters together, each a DNS subdomain (a final dot allowed),
//! and every option named.

use super::validate::{is_dns_subdomain, join, Ctx};
use super::*;
use crate::model::{DnsPolicy, PodDns};

const MAX_NAMESERVERS: usize = 3;
const MAX_SEARCHES: usize = 32;
const MAX_SEARCH_CHARS: usize = 2048;

/// `spec.dnsPolicy` and `spec.dnsConfig` of `spec` (at `path`).
pub(super) fn pod_dns(c: &mut Ctx<'_>, spec: Option<&Y>, path: &str) -> PodDns {
    let mut dns = PodDns::default();
    let policy_node = spec.and_then(|s| s.get("dnsPolicy"));
    let policy_field = join(path, "dnsPolicy");
    if let (Some(n), Some(p)) = (policy_node, c.string(policy_node, &policy_field)) {
        match DnsPolicy::ALL.into_iter().find(|x| x.as_str() == p) {
            Some(x) => dns.policy = x,
            None => {
                let all: Vec<String> = DnsPolicy::ALL
                    .iter()
                    .map(|x| format!("\"{}\"", x.as_str()))
                    .collect();
                c.err(
                    n,
                    &policy_field,
                    format!(
                        "Unsupported value: \"{p}\": supported values: {}",
                        all.join(", ")
                    ),
                    "use ClusterFirst (the default), ClusterFirstWithHostNet, Default or None",
                );
            }
        }
    }
    let config_field = join(path, "dnsConfig");
    let config = spec
        .and_then(|s| s.get("dnsConfig"))
        .filter(|n| !n.is_null());
    let Some(config) = config else {
        if dns.policy == DnsPolicy::None {
            if let Some(n) = policy_node {
                c.err(
                    n,
                    &config_field,
                    "Required value: must provide `dnsConfig` when `dnsPolicy` is None",
                    "add dnsConfig with at least one nameserver, or use another dnsPolicy",
                );
            }
        }
        return dns;
    };
    let ns_field = join(&config_field, "nameservers");
    let servers = c.seq(config.get("nameservers"), &ns_field);
    if dns.policy == DnsPolicy::None && servers.is_empty() {
        c.err(
            config,
            &ns_field,
            "Required value: must provide at least one DNS nameserver when `dnsPolicy` is None",
            "add a nameserver address to dnsConfig.nameservers",
        );
    }
    let texts: Vec<String> = servers
        .iter()
        .map(|n| n.as_str().unwrap_or_default().to_string())
        .collect();
    if servers.len() > MAX_NAMESERVERS {
        c.err(
            config,
            &ns_field,
            format!(
                "Invalid value: {}: must not have more than {MAX_NAMESERVERS} nameservers",
                super::families::go_strings(&texts)
            ),
            "keep at most 3 nameservers",
        );
    }
    for (i, n) in servers.iter().enumerate() {
        let field = format!("{ns_field}[{i}]");
        match n.as_str().and_then(|t| t.parse::<IpAddr>().ok()) {
            Some(ip) => dns.nameservers.push(ip),
            None => c.err(
                n,
                &field,
                format!(
                    "Invalid value: \"{}\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                    n.as_str().unwrap_or_default()
                ),
                "write a nameserver as an IP address",
            ),
        }
    }
    let search_field = join(&config_field, "searches");
    let searches = c.seq(config.get("searches"), &search_field);
    let texts: Vec<String> = searches
        .iter()
        .map(|n| n.as_str().unwrap_or_default().to_string())
        .collect();
    if searches.len() > MAX_SEARCHES {
        c.err(
            config,
            &search_field,
            format!(
                "Invalid value: {}: must not have more than {MAX_SEARCHES} search paths",
                super::families::go_strings(&texts)
            ),
            "keep at most 32 search domains",
        );
    }
    if texts.join(" ").len() > MAX_SEARCH_CHARS {
        c.err(
            config,
            &search_field,
            format!("Invalid value: {}: must not have more than {MAX_SEARCH_CHARS} characters (including spaces) in the search list", super::families::go_strings(&texts)),
            "shorten the search list",
        );
    }
    for (i, (n, t)) in searches.iter().zip(&texts).enumerate() {
        let trimmed = t.strip_suffix('.').unwrap_or(t);
        if is_dns_subdomain(trimmed) {
            dns.searches.push(trimmed.to_string());
        } else {
            c.err(
                n,
                &format!("{search_field}[{i}]"),
                format!("Invalid value: \"{trimmed}\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"),
                "write a search domain like team.svc.cluster.local",
            );
        }
    }
    let opt_field = join(&config_field, "options");
    for (i, o) in c.seq(config.get("options"), &opt_field).iter().enumerate() {
        let field = format!("{opt_field}[{i}]");
        let name = c
            .string(o.get("name"), &join(&field, "name"))
            .unwrap_or_default();
        if name.is_empty() {
            c.err(
                o,
                &field,
                "Required value: Option.Name must not be empty",
                "give the option a name, like ndots",
            );
            continue;
        }
        let value = c.string(o.get("value"), &join(&field, "value"));
        dns.options.push((name, value));
    }
    dns
}
