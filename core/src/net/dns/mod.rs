//! Cluster DNS: CoreDNS's `kubernetes` plugin answering for the cluster's
//! zone ([`zone`], reading names as [`name`] does), and a Pod's resolver
//! asking it ([`resolver`]: the search list and `ndots:5`).
//!
//! A Service's name gives its ClusterIPs; a headless Service's name gives
//! its ready endpoints' addresses (all of them when it publishes not-ready
//! addresses), each endpoint also named by its `hostname` or its dashed
//! address; an ExternalName Service's name gives a CNAME, followed when it
//! points inside the zone. This module answers from the objects only: it
//! never looks at kube-proxy's rules, reads no clock and picks no random
//! record (the lowest address is the one a client connects to, where
//! CoreDNS would shuffle them).

pub mod name;
pub mod render;
pub mod resolver;
pub mod zone;

use crate::model::packet::IpFamily;
use crate::model::{Cluster, EndpointSlice};
use std::net::IpAddr;
use zone::{Data, Rcode};

/// The cluster's DNS domain.
pub const CLUSTER_DOMAIN: &str = "cluster.local";

/// The records' TTL in seconds (`ttl 30` in kubeadm's Corefile).
pub const TTL: u32 = 30;

/// What a client's lookup of a name comes to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A/AAAA records: `ip` is the one the client connects to, `all` every
    /// record in the answer (sorted).
    Address {
        fqdn: String,
        ip: IpAddr,
        all: Vec<IpAddr>,
    },
    /// A CNAME to a name outside the cluster (an ExternalName Service),
    /// which the upstream resolver would go on to resolve.
    Cname { fqdn: String, target: String },
    /// NXDOMAIN (or NODATA) for every name tried.
    NoSuchName,
}

/// The slices DNS reads: those of Services that exist.
pub fn slices_for_dns(cluster: &Cluster, slices: &[EndpointSlice]) -> Vec<EndpointSlice> {
    slices
        .iter()
        .filter(|s| {
            cluster
                .services
                .iter()
                .any(|svc| svc.id.namespace == s.id.namespace && svc.id.name == s.service_name)
        })
        .cloned()
        .collect()
}

/// Look `name` up as a client with resolver settings `conf` and addresses
/// of `families` does (`getaddrinfo`: A and AAAA for each name its
/// resolver tries). Of the records, the client connects to one of a family
/// it has, IPv6 before IPv4 when it has both (RFC 6724's default
/// precedence). A resolver that is not cluster DNS answers nothing kpv
/// can know.
pub fn resolve(
    cluster: &Cluster,
    slices: &[EndpointSlice],
    name: &str,
    conf: &resolver::ResolvConf,
    families: &[IpFamily],
) -> Answer {
    if !conf.cluster_dns {
        return Answer::NoSuchName;
    }
    for q in resolver::candidates(conf, name) {
        let a = zone::addresses(cluster, slices, &q, false);
        let aaaa = zone::addresses(cluster, slices, &q, true);
        if a.rcode == Rcode::Upstream {
            return Answer::NoSuchName;
        }
        let mut all: Vec<IpAddr> = a
            .answer
            .iter()
            .chain(&aaaa.answer)
            .filter_map(|r| match r.data {
                Data::A(ip) => Some(ip),
                _ => None,
            })
            .collect();
        crate::util::order::sort(&mut all);
        all.dedup();
        let cname = a.answer.iter().find_map(|r| match &r.data {
            Data::Cname(t) => Some(t.trim_end_matches('.').to_string()),
            _ => None,
        });
        let fqdn = q.trim_end_matches('.').to_string();
        let usable = |f: IpFamily| {
            all.iter()
                .copied()
                .find(|ip| IpFamily::of(ip) == f && families.contains(&f))
        };
        // With no record of a family it has, the client still gets the
        // first address (and cannot send to it).
        let chosen = usable(IpFamily::V6)
            .or_else(|| usable(IpFamily::V4))
            .or_else(|| all.first().copied());
        if let Some(ip) = chosen {
            return Answer::Address { fqdn, ip, all };
        }
        if let (Some(target), Some(_)) = (cname, a.upstream.as_ref()) {
            return Answer::Cname { fqdn, target };
        }
    }
    Answer::NoSuchName
}
