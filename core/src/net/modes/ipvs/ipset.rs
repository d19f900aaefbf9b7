//! The ipsets kube-proxy's IPVS mode keeps (`pkg/proxy/ipvs/ipset.go`), as
//! typed sets and entries, with the kernel's membership test for each
//! `--match-set` direction list.
//!
//! Never: render anything but an entry's own `ipset` text here; the
//! `ipset list` layout is the renderer's job.

use crate::model::packet::{IpFamily, Protocol};
use ipnet::IpNet;
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt;
use std::net::IpAddr;

/// Every set kube-proxy creates, in its `ipsetInfo` order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum SetId {
    LoopBack,
    ClusterIp,
    ExternalIp,
    ExternalIpLocal,
    LoadBalancer,
    LoadBalancerFw,
    LoadBalancerLocal,
    LoadBalancerSourceIp,
    LoadBalancerSourceCidr,
    NodePortTcp,
    NodePortLocalTcp,
    NodePortUdp,
    NodePortLocalUdp,
    NodePortSctp,
    NodePortLocalSctp,
    HealthCheckNodePort,
    IpvsIps,
}

/// `ipset` set types kube-proxy uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum SetType {
    HashIp,
    HashIpPort,
    HashIpPortIp,
    HashIpPortNet,
    BitmapPort,
}

impl SetType {
    pub fn as_str(self) -> &'static str {
        match self {
            SetType::HashIp => "hash:ip",
            SetType::HashIpPort => "hash:ip,port",
            SetType::HashIpPortIp => "hash:ip,port,ip",
            SetType::HashIpPortNet => "hash:ip,port,net",
            SetType::BitmapPort => "bitmap:port",
        }
    }
}

impl SetId {
    pub const ALL: [SetId; 17] = [
        SetId::LoopBack,
        SetId::ClusterIp,
        SetId::ExternalIp,
        SetId::ExternalIpLocal,
        SetId::LoadBalancer,
        SetId::LoadBalancerFw,
        SetId::LoadBalancerLocal,
        SetId::LoadBalancerSourceIp,
        SetId::LoadBalancerSourceCidr,
        SetId::NodePortTcp,
        SetId::NodePortLocalTcp,
        SetId::NodePortUdp,
        SetId::NodePortLocalUdp,
        SetId::NodePortSctp,
        SetId::NodePortLocalSctp,
        SetId::HealthCheckNodePort,
        SetId::IpvsIps,
    ];

    /// The IPv4 name (`KUBE-…`).
    pub fn base_name(self) -> &'static str {
        match self {
            SetId::LoopBack => "KUBE-LOOP-BACK",
            SetId::ClusterIp => "KUBE-CLUSTER-IP",
            SetId::ExternalIp => "KUBE-EXTERNAL-IP",
            SetId::ExternalIpLocal => "KUBE-EXTERNAL-IP-LOCAL",
            SetId::LoadBalancer => "KUBE-LOAD-BALANCER",
            SetId::LoadBalancerFw => "KUBE-LOAD-BALANCER-FW",
            SetId::LoadBalancerLocal => "KUBE-LOAD-BALANCER-LOCAL",
            SetId::LoadBalancerSourceIp => "KUBE-LOAD-BALANCER-SOURCE-IP",
            SetId::LoadBalancerSourceCidr => "KUBE-LOAD-BALANCER-SOURCE-CIDR",
            SetId::NodePortTcp => "KUBE-NODE-PORT-TCP",
            SetId::NodePortLocalTcp => "KUBE-NODE-PORT-LOCAL-TCP",
            SetId::NodePortUdp => "KUBE-NODE-PORT-UDP",
            SetId::NodePortLocalUdp => "KUBE-NODE-PORT-LOCAL-UDP",
            SetId::NodePortSctp => "KUBE-NODE-PORT-SCTP-HASH",
            SetId::NodePortLocalSctp => "KUBE-NODE-PORT-LOCAL-SCTP-HASH",
            SetId::HealthCheckNodePort => "KUBE-HEALTH-CHECK-NODE-PORT",
            SetId::IpvsIps => "KUBE-IPVS-IPS",
        }
    }

    /// The set's name for a family: IPv6 sets are `KUBE-6-…`, cut to the
    /// 31-character ipset limit.
    pub fn name(self, family: IpFamily) -> String {
        let base = self.base_name();
        match family {
            IpFamily::V4 => base.to_string(),
            IpFamily::V6 => {
                let mut n = format!("KUBE-6-{}", base.trim_start_matches("KUBE-"));
                n.truncate(31);
                n
            }
        }
    }

    pub fn set_type(self) -> SetType {
        match self {
            SetId::LoopBack | SetId::LoadBalancerSourceIp => SetType::HashIpPortIp,
            SetId::LoadBalancerSourceCidr => SetType::HashIpPortNet,
            SetId::NodePortTcp
            | SetId::NodePortLocalTcp
            | SetId::NodePortUdp
            | SetId::NodePortLocalUdp
            | SetId::HealthCheckNodePort => SetType::BitmapPort,
            SetId::IpvsIps => SetType::HashIp,
            _ => SetType::HashIpPort,
        }
    }

    /// The comment kube-proxy puts on the iptables rule that uses the set.
    pub fn comment(self) -> &'static str {
        match self {
            SetId::LoopBack => {
                "Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose"
            }
            SetId::ClusterIp => "Kubernetes service cluster ip + port for masquerade purpose",
            SetId::ExternalIp => {
                "Kubernetes service external ip + port for masquerade and filter purpose"
            }
            SetId::ExternalIpLocal => {
                "Kubernetes service external ip + port with externalTrafficPolicy=local"
            }
            SetId::LoadBalancer => "Kubernetes service lb portal",
            SetId::LoadBalancerFw => {
                "Kubernetes service load balancer ip + port for load balancer with sourceRange"
            }
            SetId::LoadBalancerLocal => {
                "Kubernetes service load balancer ip + port with externalTrafficPolicy=local"
            }
            SetId::LoadBalancerSourceIp => {
                "Kubernetes service load balancer ip + port + source IP for packet filter purpose"
            }
            SetId::LoadBalancerSourceCidr => {
                "Kubernetes service load balancer ip + port + source cidr for packet filter purpose"
            }
            SetId::NodePortTcp => "Kubernetes nodeport TCP port for masquerade purpose",
            SetId::NodePortLocalTcp => "Kubernetes nodeport TCP port with externalTrafficPolicy=local",
            SetId::NodePortUdp => "Kubernetes nodeport UDP port for masquerade purpose",
            SetId::NodePortLocalUdp => "Kubernetes nodeport UDP port with externalTrafficPolicy=local",
            SetId::NodePortSctp => {
                "Kubernetes nodeport SCTP port for masquerade purpose with type 'hash ip:port'"
            }
            SetId::NodePortLocalSctp => {
                "Kubernetes nodeport SCTP port with externalTrafficPolicy=local with type 'hash ip:port'"
            }
            SetId::HealthCheckNodePort => "Kubernetes health check node port",
            SetId::IpvsIps => "Addresses on the ipvs interface",
        }
    }
}

/// One member of a set (`Entry.String()` in `pkg/proxy/ipvs/ipset`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Entry {
    /// `hash:ip`: `10.96.0.1`.
    Ip(IpAddr),
    /// `hash:ip,port`: `10.96.0.1,tcp:443`.
    IpPort(IpAddr, Protocol, u16),
    /// `hash:ip,port,ip`: `10.244.1.2,tcp:8080,10.244.1.2`.
    IpPortIp(IpAddr, Protocol, u16, IpAddr),
    /// `hash:ip,port,net`: `203.0.113.10,tcp:80,198.51.100.0/24`.
    IpPortNet(IpAddr, Protocol, u16, IpNet),
    /// `bitmap:port`: `30080`.
    Port(u16),
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Entry::Ip(ip) => write!(f, "{ip}"),
            Entry::IpPort(ip, p, port) => write!(f, "{ip},{}:{port}", p.as_lower()),
            Entry::IpPortIp(ip, p, port, ip2) => write!(f, "{ip},{}:{port},{ip2}", p.as_lower()),
            Entry::IpPortNet(ip, p, port, net) => {
                write!(f, "{ip},{}:{port},{net}", p.as_lower())
            }
            Entry::Port(port) => write!(f, "{port}"),
        }
    }
}

/// A direction list of `-m set --match-set NAME dst,dst,src`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Dir {
    Src,
    Dst,
}

/// What a set match looks at in a packet.
#[derive(Clone, Copy, Debug)]
pub struct PacketView {
    pub src: IpAddr,
    pub src_port: u16,
    pub dst: IpAddr,
    pub dst_port: u16,
    pub protocol: Protocol,
}

impl PacketView {
    fn ip(&self, d: Dir) -> IpAddr {
        match d {
            Dir::Src => self.src,
            Dir::Dst => self.dst,
        }
    }
    fn port(&self, d: Dir) -> u16 {
        match d {
            Dir::Src => self.src_port,
            Dir::Dst => self.dst_port,
        }
    }
}

/// One set with its members (kept sorted).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IpSet {
    pub id: SetId,
    pub name: String,
    pub set_type: SetType,
    pub family: IpFamily,
    pub members: BTreeSet<Entry>,
}

impl IpSet {
    pub fn new(id: SetId, family: IpFamily) -> IpSet {
        IpSet {
            id,
            name: id.name(family),
            set_type: id.set_type(),
            family,
            members: BTreeSet::new(),
        }
    }

    /// The create options `ipset list` shows in `Header:`.
    pub fn header(&self) -> String {
        match self.set_type {
            SetType::BitmapPort => "range 0-65535".to_string(),
            _ => format!(
                "family {} hashsize 1024 maxelem 65536",
                match self.family {
                    IpFamily::V4 => "inet",
                    IpFamily::V6 => "inet6",
                }
            ),
        }
    }

    /// The kernel's test for `-m set --match-set NAME <dirs>`: the packet's
    /// fields picked by `dirs` form an element of the set.
    pub fn matches(&self, pkt: &PacketView, dirs: &[Dir]) -> bool {
        let d = |i: usize| dirs.get(i).copied().unwrap_or(Dir::Dst);
        match self.set_type {
            SetType::HashIp => self.members.contains(&Entry::Ip(pkt.ip(d(0)))),
            SetType::BitmapPort => self.members.contains(&Entry::Port(pkt.port(d(0)))),
            SetType::HashIpPort => {
                self.members
                    .contains(&Entry::IpPort(pkt.ip(d(0)), pkt.protocol, pkt.port(d(1))))
            }
            SetType::HashIpPortIp => self.members.contains(&Entry::IpPortIp(
                pkt.ip(d(0)),
                pkt.protocol,
                pkt.port(d(1)),
                pkt.ip(d(2)),
            )),
            SetType::HashIpPortNet => self.members.iter().any(|e| match e {
                Entry::IpPortNet(ip, p, port, net) => {
                    *ip == pkt.ip(d(0))
                        && *p == pkt.protocol
                        && *port == pkt.port(d(1))
                        && net.contains(&pkt.ip(d(2)))
                }
                _ => false,
            }),
        }
    }
}
