//! Addresses a controller hands out: the documented load-balancer range,
//! the addresses a cluster already uses, and the next free one. Used where
//! a controller adds a proxy and where a Gateway asks for an address.

use crate::model::Cluster;
use ipnet::IpNet;
use std::collections::BTreeSet;
use std::net::IpAddr;

/// The documented load-balancer range kpv gives synthesised Services
/// addresses from (TEST-NET-3, as the presets' cloud load balancers use).
pub(super) const LB_RANGE: &str = "203.0.113.0/24";

/// Can a controller give a Gateway this address it asks for in
/// `spec.addresses`? Only one from the load-balancer range that no other
/// object has.
pub fn usable_static_address(cluster: &Cluster, ip: IpAddr) -> bool {
    LB_RANGE.parse::<IpNet>().is_ok_and(|net| net.contains(&ip))
        && !used_addrs(cluster).contains(&ip)
}

fn nth(net: &IpNet, n: u128) -> Option<IpAddr> {
    match net {
        IpNet::V4(v4) => {
            let base = u32::from(v4.network()) as u128 + n;
            (base <= u32::MAX as u128 && v4.contains(&std::net::Ipv4Addr::from(base as u32)))
                .then(|| IpAddr::V4(std::net::Ipv4Addr::from(base as u32)))
        }
        IpNet::V6(v6) => {
            let a = std::net::Ipv6Addr::from(u128::from(v6.network()).wrapping_add(n));
            v6.contains(&a).then_some(IpAddr::V6(a))
        }
    }
}

pub(super) fn free_addr(net: &IpNet, used: &BTreeSet<IpAddr>, from: u128) -> Option<IpAddr> {
    (from..from + 4096)
        .filter_map(|n| nth(net, n))
        .find(|ip| !used.contains(ip))
}

pub(super) fn used_addrs(cluster: &Cluster) -> BTreeSet<IpAddr> {
    cluster
        .pods
        .iter()
        .flat_map(|p| p.ips.iter().copied())
        .chain(cluster.services.iter().flat_map(|s| {
            s.cluster_ips
                .iter()
                .chain(s.load_balancer_addresses())
                .copied()
                .collect::<Vec<_>>()
        }))
        .collect()
}
