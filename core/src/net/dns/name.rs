//! What a DNS name denotes in the cluster's zone, read label by label as
//! CoreDNS's `kubernetes` plugin reads it (`parse.go`): from the right, the
//! zone, then `svc` or `pod`, the namespace, the Service (or the Pod's
//! dashed address), and before it an endpoint's name or `_port._protocol`.
//! Also the reverse names of addresses and an endpoint's DNS label.

use super::CLUSTER_DOMAIN;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A name, as the plugin sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Name {
    /// Outside the cluster's zone and not a reverse name: CoreDNS hands it
    /// to the next plugin (`forward`, to the node's resolver).
    Outside,
    /// `dns-version.<zone>`: the TXT record of the schema version.
    Version,
    /// The zone, `svc.<zone>` or `pod.<zone>`: names that exist and hold
    /// no records.
    Empty,
    /// `<ns>.svc.<zone>` or `<ns>.pod.<zone>`: exists when the namespace
    /// does, and holds no records.
    Namespace(String),
    /// `[<endpoint>.|_<port>._<protocol>.]<service>.<ns>.svc.<zone>`.
    Service {
        namespace: String,
        service: String,
        endpoint: Option<String>,
        port: Option<String>,
        protocol: Option<String>,
    },
    /// `<a-b-c-d>.<ns>.pod.<zone>`: a Pod's address written with dashes.
    Pod { namespace: String, dashed: String },
    /// In the zone but of no shape the plugin knows: NXDOMAIN.
    Invalid,
}

/// `name` lower-cased (DNS names compare without case), without its final dot.
pub fn canonical(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// What a forward `name` denotes (a reverse name is [`Name::Outside`]:
/// only a PTR query reads it, through [`reverse_address`]).
pub fn parse(name: &str) -> Name {
    let name = canonical(name);
    let base = if name == CLUSTER_DOMAIN {
        ""
    } else {
        match name.strip_suffix(CLUSTER_DOMAIN) {
            Some(b) if b.ends_with('.') => b.trim_end_matches('.'),
            _ => return Name::Outside,
        }
    };
    if base == "dns-version" {
        return Name::Version;
    }
    if base.is_empty() || base == "svc" || base == "pod" {
        return Name::Empty;
    }
    let mut segs: Vec<&str> = base.split('.').collect();
    let kind = segs.pop().unwrap_or_default();
    if kind != "svc" && kind != "pod" {
        return Name::Invalid;
    }
    let Some(namespace) = segs.pop().map(str::to_string) else {
        return Name::Empty;
    };
    let Some(service) = segs.pop().map(str::to_string) else {
        return Name::Namespace(namespace);
    };
    let under = |s: &str| s.strip_prefix('_').unwrap_or(s).to_string();
    let (endpoint, port, protocol) = match segs.as_slice() {
        [] => (None, None, None),
        [e] => (Some(e.to_string()), None, None),
        [p, proto] => (None, Some(under(p)), Some(under(proto))),
        _ => return Name::Invalid,
    };
    if kind == "pod" {
        // The plugin reads the Pod's address from the third label from
        // the right and ignores the rest.
        return Name::Pod {
            namespace,
            dashed: service,
        };
    }
    Name::Service {
        namespace,
        service,
        endpoint,
        port,
        protocol,
    }
}

/// Is `name` in a reverse zone (`in-addr.arpa`, `ip6.arpa`)?
pub fn in_reverse_zone(name: &str) -> bool {
    let name = canonical(name);
    ["in-addr.arpa", "ip6.arpa"]
        .iter()
        .any(|z| name == *z || name.ends_with(&format!(".{z}")))
}

/// The address a reverse name names: `d.c.b.a.in-addr.arpa` or the 32
/// nibbles of `ip6.arpa`; `None` for any other name.
pub fn reverse_address(name: &str) -> Option<IpAddr> {
    let name = canonical(name);
    if let Some(rest) = name.strip_suffix(".in-addr.arpa") {
        let mut octets = [0u8; 4];
        let parts: Vec<&str> = rest.split('.').collect();
        if parts.len() != 4 {
            return None;
        }
        for (slot, p) in octets.iter_mut().rev().zip(&parts) {
            *slot = p.parse::<u8>().ok().filter(|_| !p.starts_with('+'))?;
        }
        return Some(IpAddr::V4(Ipv4Addr::from(octets)));
    }
    let rest = name.strip_suffix(".ip6.arpa")?;
    let nibbles: Vec<&str> = rest.split('.').collect();
    if nibbles.len() != 32 {
        return None;
    }
    let mut value: u128 = 0;
    for n in nibbles.iter().rev() {
        let d = match (n.len(), n.chars().next().and_then(|c| c.to_digit(16))) {
            (1, Some(d)) => d,
            _ => return None,
        };
        value = (value << 4) | u128::from(d);
    }
    Some(IpAddr::V6(Ipv6Addr::from(value)))
}

/// The reverse name of `ip` (what a PTR query asks).
pub fn reverse_name(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            format!("{}.{}.{}.{}.in-addr.arpa.", o[3], o[2], o[1], o[0])
        }
        IpAddr::V6(v6) => {
            let mut s = String::new();
            for b in v6.octets().iter().rev() {
                s.push_str(&format!("{:x}.{:x}.", b & 0xf, b >> 4));
            }
            s + "ip6.arpa."
        }
    }
}

/// An endpoint's label under its Service: its `hostname`, else its address
/// with `.` or `:` written as `-` (an IPv6 address ending in `::` gets a
/// final `0`).
pub fn endpoint_label(hostname: Option<&str>, ip: IpAddr) -> String {
    if let Some(h) = hostname.filter(|h| !h.is_empty()) {
        return h.to_string();
    }
    match ip {
        IpAddr::V4(v4) => v4.to_string().replace('.', "-"),
        IpAddr::V6(v6) => {
            let s = v6.to_string().replace(':', "-");
            if s.ends_with('-') {
                s + "0"
            } else {
                s
            }
        }
    }
}

/// The address a Pod name's dashed label stands for: `10-244-1-5` is
/// IPv4 (three dashes, none doubled), anything else is read as IPv6.
pub fn pod_address(dashed: &str) -> Option<IpAddr> {
    let text = if dashed.matches('-').count() == 3 && !dashed.contains("--") {
        dashed.replace('-', ".")
    } else {
        dashed.replace('-', ":")
    };
    text.parse().ok()
}

/// `service.namespace.svc.<zone>` with a final dot.
pub fn service_fqdn(namespace: &str, service: &str) -> String {
    format!("{service}.{namespace}.svc.{CLUSTER_DOMAIN}.")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svc(ns: &str, s: &str, e: Option<&str>, p: Option<&str>, proto: Option<&str>) -> Name {
        Name::Service {
            namespace: ns.into(),
            service: s.into(),
            endpoint: e.map(Into::into),
            port: p.map(Into::into),
            protocol: proto.map(Into::into),
        }
    }

    #[test]
    fn names_are_read_from_the_right() {
        let cases: Vec<(&str, Name)> = vec![
            (
                "svc1.testns.svc.cluster.local.",
                svc("testns", "svc1", None, None, None),
            ),
            (
                "SVC1.TestNS.svc.Cluster.Local",
                svc("testns", "svc1", None, None, None),
            ),
            (
                "_http._tcp.svc1.testns.svc.cluster.local.",
                svc("testns", "svc1", None, Some("http"), Some("tcp")),
            ),
            (
                "172-0-0-2.hdls1.testns.svc.cluster.local.",
                svc("testns", "hdls1", Some("172-0-0-2"), None, None),
            ),
            ("a.b.c.svc1.testns.svc.cluster.local.", Name::Invalid),
            (
                "testns.svc.cluster.local.",
                Name::Namespace("testns".into()),
            ),
            ("svc.cluster.local.", Name::Empty),
            ("pod.cluster.local.", Name::Empty),
            ("cluster.local.", Name::Empty),
            ("dns-version.cluster.local.", Name::Version),
            ("foo.cluster.local.", Name::Invalid),
            ("mycluster.local.", Name::Outside),
            ("example.com", Name::Outside),
            (
                "10-244-1-5.default.pod.cluster.local.",
                Name::Pod {
                    namespace: "default".into(),
                    dashed: "10-244-1-5".into(),
                },
            ),
            ("1.0.0.10.in-addr.arpa.", Name::Outside),
        ];
        for (name, want) in cases {
            assert_eq!(parse(name), want, "{name}");
        }
    }

    #[test]
    fn reverse_names_go_both_ways() {
        for ip in ["10.96.0.10", "1234:abcd::1", "fd00:10:96::a"] {
            let ip: IpAddr = ip.parse().unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
            assert_eq!(reverse_address(&reverse_name(ip)), Some(ip));
            assert!(in_reverse_zone(&reverse_name(ip)));
        }
        assert_eq!(
            reverse_name(
                "10.0.0.1"
                    .parse()
                    .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED))
            ),
            "1.0.0.10.in-addr.arpa."
        );
    }

    #[test]
    fn endpoint_labels_and_pod_addresses() {
        let ip = |s: &str| {
            s.parse::<IpAddr>()
                .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED))
        };
        assert_eq!(endpoint_label(None, ip("172.0.0.2")), "172-0-0-2");
        assert_eq!(endpoint_label(None, ip("5678:abcd::1")), "5678-abcd--1");
        assert_eq!(endpoint_label(None, ip("5678:abcd::")), "5678-abcd--0");
        assert_eq!(
            endpoint_label(Some("dup-name"), ip("172.0.0.4")),
            "dup-name"
        );
        assert_eq!(pod_address("10-244-1-5"), Some(ip("10.244.1.5")));
        assert_eq!(pod_address("fd00--5"), Some(ip("fd00::5")));
        assert_eq!(pod_address("web"), None);
    }
}
