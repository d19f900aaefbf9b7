//! kube-proxy's chain names: a hash of the Service port (and endpoint), so
//! names are stable and fit the 28-character iptables limit.
//!
//! The hash is sha256 of the name text, base32-encoded (standard alphabet),
//! cut to 16 characters (iptables) or 8 (nftables), exactly as kube-proxy.

use super::ServicePortName;
use crate::model::packet::Protocol;

/// base32(sha256(text)), cut to `len` characters.
pub fn hash_prefix(text: &str, len: usize) -> String {
    let mut s = String::with_capacity(len);
    push_hash_prefix(&mut s, text, len);
    s
}

/// Appends base32(sha256(text)) cut to `len` characters to `out`. Only the
/// characters asked for are encoded (chain names are made 100,000s of times
/// at scale).
pub fn push_hash_prefix(out: &mut String, text: &str, len: usize) {
    let digest = crate::util::sha256::digest(text.as_bytes());
    crate::util::base_n::push_base32_prefix(out, &digest, len);
}

/// `a` then `b` in one allocation of the exact size (what `format!("{a}{b}")`
/// writes, without its growing: chain names and comments are made 10,000s of
/// times at scale).
pub fn concat(a: &str, b: &str) -> String {
    let mut s = String::with_capacity(a.len() + b.len());
    s.push_str(a);
    s.push_str(b);
    s
}

/// The text kube-proxy hashes for a Service port: `ns/name:port` + lower-case protocol.
pub fn service_port_hash_input(name: &ServicePortName, protocol: Protocol) -> String {
    format!("{}{}", name, protocol.as_lower())
}

/// `name.to_string()` (`ns/name` or `ns/name:port`) in one allocation of
/// the exact size, without the formatting machinery (once per Service port
/// in every mode's compile).
pub fn service_port_name_text(name: &ServicePortName) -> String {
    let (ns, svc, port) = (&name.service.namespace, &name.service.name, &name.port);
    let mut s = String::with_capacity(ns.len() + svc.len() + port.len() + 2);
    s.push_str(ns);
    s.push('/');
    s.push_str(svc);
    if !port.is_empty() {
        s.push(':');
        s.push_str(port);
    }
    s
}

/// Appends `n` in decimal (what `Display` writes, without the formatting
/// machinery: chain names are made 100,000s of times at scale).
pub fn push_decimal(out: &mut String, n: u32) {
    let mut digits = [0u8; 10];
    let mut k = 0;
    let mut n = n;
    loop {
        if let Some(d) = digits.get_mut(k) {
            *d = b'0' + (n % 10) as u8;
        }
        k += 1;
        n /= 10;
        if n == 0 || k >= digits.len() {
            break;
        }
    }
    for d in digits[..k].iter().rev() {
        out.push(char::from(*d));
    }
}

/// Appends an address as `Display` writes it (IPv4 digit by digit).
pub fn push_ip(out: &mut String, ip: std::net::IpAddr) {
    match ip {
        std::net::IpAddr::V4(v4) => {
            for (i, o) in v4.octets().into_iter().enumerate() {
                if i > 0 {
                    out.push('.');
                }
                push_decimal(out, u32::from(o));
            }
        }
        std::net::IpAddr::V6(v6) => {
            use std::fmt::Write as _;
            let _ = write!(out, "{v6}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};

    #[test]
    fn push_ip_and_decimal_write_what_display_writes() {
        for ip in [
            "0.0.0.0",
            "255.255.255.255",
            "10.1.20.3",
            "fd00::a",
            "::ffff:1.2.3.4",
        ] {
            let ip: std::net::IpAddr = ip.parse().expect("ip");
            let mut s = String::new();
            push_ip(&mut s, ip);
            assert_eq!(s, ip.to_string());
        }
        for n in [0u32, 7, 10, 65535, u32::MAX] {
            let mut s = String::new();
            push_decimal(&mut s, n);
            assert_eq!(s, n.to_string());
        }
    }

    #[test]
    fn service_port_name_text_is_the_display_text() {
        use crate::model::NamespacedName;
        for port in ["", "http", "dns-tcp"] {
            let name = ServicePortName {
                service: NamespacedName {
                    namespace: "kube-system".into(),
                    name: "kube-dns".into(),
                },
                port: port.into(),
                protocol: Protocol::Udp,
            };
            assert_eq!(service_port_name_text(&name), name.to_string());
        }
    }

    #[test]
    fn hash_prefix_is_the_full_encoding_cut() {
        for len in [1, 8, 10, 16, 52, 56, 60] {
            let full = data_encoding::BASE32.encode(&Sha256::digest(b"ns/svc:http"));
            let want: String = full.chars().take(len).collect();
            assert_eq!(hash_prefix("ns/svc:http", len), want, "{len}");
        }
    }
}
