//! Sloppy IP and CIDR parsing, as kube-proxy does it.
//!
//! Kubernetes accepts IPv4 octets with leading zeros (`010.001.002.003`) and
//! reads them as decimal (Go's old `net.ParseIP` behaviour, kept by
//! `netutils.ParseIPSloppy`). Everything here normalises to the canonical form.

use ipnet::IpNet;
use std::net::{IpAddr, Ipv4Addr};

/// Parse an IP address, accepting decimal IPv4 octets with leading zeros.
pub fn parse_ip_sloppy(s: &str) -> Option<IpAddr> {
    let s = s.trim();
    if let Ok(ip) = s.parse::<IpAddr>() {
        return Some(ip);
    }
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut octets = [0u8; 4];
    for (o, p) in octets.iter_mut().zip(&parts) {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *o = p.parse::<u8>().ok()?;
    }
    Some(IpAddr::V4(Ipv4Addr::from(octets)))
}

/// Parse a CIDR (`10.0.0.0/8`), sloppily like [`parse_ip_sloppy`]. The address
/// part is kept as written (not truncated to the network), as Go's
/// `ParseCIDRSloppy` returns the network: we return the network too.
pub fn parse_cidr_sloppy(s: &str) -> Option<IpNet> {
    let (addr, len) = s.trim().split_once('/')?;
    let ip = parse_ip_sloppy(addr)?;
    if len.is_empty() || !len.bytes().all(|b| b.is_ascii_digit()) || len.len() > 3 {
        return None;
    }
    let len: u8 = len.parse().ok()?;
    IpNet::new(ip, len).ok().map(|n| n.trunc())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_zeros_are_decimal() {
        assert_eq!(
            parse_ip_sloppy("010.000.001.020"),
            Some(
                "10.0.1.20"
                    .parse()
                    .unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED))
            )
        );
        assert_eq!(parse_ip_sloppy("1.2.3"), None);
        assert_eq!(parse_ip_sloppy("256.1.1.1"), None);
        assert_eq!(
            parse_ip_sloppy("fd00::0001").map(|i| i.to_string()),
            Some("fd00::1".into())
        );
    }

    #[test]
    fn cidrs_are_truncated_to_the_network() {
        assert_eq!(
            parse_cidr_sloppy("010.1.2.3/8").map(|c| c.to_string()),
            Some("10.0.0.0/8".into())
        );
        assert_eq!(parse_cidr_sloppy("10.0.0.0/33"), None);
        assert_eq!(parse_cidr_sloppy("10.0.0.0"), None);
    }
}
