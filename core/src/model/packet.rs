//! Packets as typed values: addresses, ports, protocol.
//!
//! A packet here is its header only (what kube-proxy's rules look at); bytes
//! never appear. Rendering an endpoint as text (`10.180.0.1:80`, `[fd00::1]:80`)
//! is `std::net::SocketAddr`'s `Display`, the same format kube-proxy prints.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::{IpAddr, SocketAddr};

/// Transport protocol of a Service port or packet.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "UPPERCASE")]
pub enum Protocol {
    #[default]
    Tcp,
    Udp,
    Sctp,
}

impl Protocol {
    /// `TCP`, `UDP`, `SCTP`, as in Kubernetes objects.
    pub fn as_upper(self) -> &'static str {
        match self {
            Protocol::Tcp => "TCP",
            Protocol::Udp => "UDP",
            Protocol::Sctp => "SCTP",
        }
    }

    /// `tcp`, `udp`, `sctp`, as in iptables and nft rules.
    pub fn as_lower(self) -> &'static str {
        match self {
            Protocol::Tcp => "tcp",
            Protocol::Udp => "udp",
            Protocol::Sctp => "sctp",
        }
    }

    pub fn parse(s: &str) -> Option<Protocol> {
        match s.to_ascii_uppercase().as_str() {
            "TCP" => Some(Protocol::Tcp),
            "UDP" => Some(Protocol::Udp),
            "SCTP" => Some(Protocol::Sctp),
            _ => None,
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_upper())
    }
}

/// IP family of an address, Service or proxier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum IpFamily {
    V4,
    V6,
}

impl IpFamily {
    pub fn of(ip: &IpAddr) -> IpFamily {
        match ip {
            IpAddr::V4(_) => IpFamily::V4,
            IpAddr::V6(_) => IpFamily::V6,
        }
    }

    /// Host prefix length: 32 or 128.
    pub fn host_bits(self) -> u8 {
        match self {
            IpFamily::V4 => 32,
            IpFamily::V6 => 128,
        }
    }
}

/// The header fields kube-proxy's rules match and rewrite.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Packet {
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub protocol: Protocol,
}

impl Packet {
    pub fn new(src: SocketAddr, dst: SocketAddr, protocol: Protocol) -> Packet {
        Packet { src, dst, protocol }
    }

    /// The same packet going the other way (a reply).
    pub fn reversed(&self) -> Packet {
        Packet {
            src: self.dst,
            dst: self.src,
            protocol: self.protocol,
        }
    }
}

impl fmt::Display for Packet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} → {}", self.protocol, self.src, self.dst)
    }
}
