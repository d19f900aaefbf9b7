//! Cluster DNS as CoreDNS's `kubernetes` plugin answers a Pod's query:
//! a Service's name gives its ClusterIP; a headless Service's name gives
//! its endpoints' addresses, only the ready ones unless the Service
//! publishes not-ready addresses; an ExternalName Service's name gives a
//! CNAME to its `externalName` (kube-proxy installs nothing for it).
//!
//! A Pod with `hostname` and `subdomain` (a StatefulSet's) is also
//! `HOSTNAME.SUBDOMAIN.NS.svc.cluster.local` under its headless Service.
//! Names are tried as a Pod's resolver would, with the search path of its
//! namespace (`NAME`, `NAME.NS`, `NAME.NS.svc`, `NAME.NS.svc.cluster.local`).
//! This module answers from the objects only: it never looks at kube-proxy's
//! rules, reads no clock and picks no random record (the lowest address is
//! the one a client connects to, where CoreDNS would shuffle them).

use crate::model::packet::IpFamily;
use crate::model::{Cluster, EndpointSlice, NamespacedName, ServiceType};
use std::net::IpAddr;

/// The cluster's DNS domain.
pub const CLUSTER_DOMAIN: &str = "cluster.local";

/// What DNS answers for a name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A/AAAA records: `ip` is the one the client connects to, `all` every
    /// record in the answer (sorted).
    Address {
        fqdn: String,
        ip: IpAddr,
        all: Vec<IpAddr>,
    },
    /// An ExternalName Service: a CNAME to a name outside the cluster.
    Cname { fqdn: String, target: String },
    /// NXDOMAIN: no such Service, or a headless Service with no address to
    /// publish.
    NoSuchName,
}

/// The Service a name denotes from namespace `from_ns`, if it has the
/// shape of a Service name.
pub fn service_of(name: &str, from_ns: &str) -> Option<NamespacedName> {
    let name = name.trim_end_matches('.');
    let parts: Vec<&str> = name.split('.').collect();
    let suffix: Vec<&str> = CLUSTER_DOMAIN.split('.').collect();
    let (svc, ns) = match parts.as_slice() {
        [svc] => (*svc, from_ns),
        [svc, ns] | [svc, ns, "svc"] => (*svc, *ns),
        [svc, ns, "svc", rest @ ..] if rest == suffix.as_slice() => (*svc, *ns),
        _ => return None,
    };
    Some(NamespacedName::new(ns, svc))
}

/// The slices DNS needs later: those of headless Services (the others are
/// answered from the Service itself).
pub fn slices_for_dns(cluster: &Cluster, slices: &[EndpointSlice]) -> Vec<EndpointSlice> {
    slices
        .iter()
        .filter(|s| {
            cluster
                .service(&NamespacedName::new(
                    s.id.namespace.clone(),
                    s.service_name.clone(),
                ))
                .is_some_and(|svc| svc.headless)
        })
        .cloned()
        .collect()
}

/// `HOSTNAME.SERVICE[.NS[.svc[.cluster.local]]]`: a Pod's own name under a
/// headless Service (a StatefulSet's `web-0.web`).
fn pod_of(name: &str, from_ns: &str) -> Option<(String, NamespacedName)> {
    let (host, rest) = name.trim_end_matches('.').split_once('.')?;
    let svc = service_of(rest, from_ns)?;
    Some((host.to_string(), svc))
}

/// The record of a Pod named by its hostname under a headless Service: its
/// endpoint's address, when the endpoint is ready (or the Service publishes
/// not-ready addresses).
fn pod_record(
    cluster: &Cluster,
    slices: &[EndpointSlice],
    name: &str,
    from_ns: &str,
) -> Option<Answer> {
    let (host, id) = pod_of(name, from_ns)?;
    let svc = cluster.service(&id).filter(|s| s.headless)?;
    let pod = cluster.pods.iter().find(|p| {
        p.id.namespace == id.namespace
            && p.hostname.as_deref() == Some(host.as_str())
            && p.subdomain.as_deref() == Some(id.name.as_str())
    })?;
    let mut all: Vec<IpAddr> = slices
        .iter()
        .filter(|s| s.id.namespace == id.namespace && s.service_name == id.name)
        .flat_map(|s| s.endpoints.iter())
        .filter(|e| e.target_pod.as_ref() == Some(&pod.id))
        .filter(|e| e.ready || svc.publish_not_ready_addresses)
        .flat_map(|e| e.addresses.iter().copied())
        .collect();
    crate::util::order::sort(&mut all);
    all.dedup();
    let ip = *all.first()?;
    Some(Answer::Address {
        fqdn: format!("{host}.{}.{}.svc.{CLUSTER_DOMAIN}", id.name, id.namespace),
        ip,
        all,
    })
}

/// Resolve `name` for a Pod (or node) in namespace `from_ns`, given the
/// EndpointSlices in effect.
pub fn resolve(cluster: &Cluster, slices: &[EndpointSlice], name: &str, from_ns: &str) -> Answer {
    if let Some(a) = pod_record(cluster, slices, name, from_ns) {
        return a;
    }
    let Some(id) = service_of(name, from_ns) else {
        return Answer::NoSuchName;
    };
    let Some(svc) = cluster.service(&id) else {
        return Answer::NoSuchName;
    };
    let fqdn = format!("{}.{}.svc.{CLUSTER_DOMAIN}", id.name, id.namespace);
    if svc.service_type == ServiceType::ExternalName {
        return match &svc.external_name {
            Some(target) => Answer::Cname {
                fqdn,
                target: target.trim_end_matches('.').to_string(),
            },
            None => Answer::NoSuchName,
        };
    }
    let mut all: Vec<IpAddr> = if svc.headless {
        slices
            .iter()
            .filter(|s| s.id.namespace == id.namespace && s.service_name == id.name)
            .flat_map(|s| s.endpoints.iter())
            .filter(|e| e.ready || svc.publish_not_ready_addresses)
            .flat_map(|e| e.addresses.iter().copied())
            .collect()
    } else {
        svc.cluster_ips.clone()
    };
    crate::util::order::sort(&mut all);
    all.dedup();
    // The primary family's address for a ClusterIP; IPv4 first otherwise.
    let ip = if svc.headless {
        all.iter()
            .find(|ip| IpFamily::of(ip) == IpFamily::V4)
            .or_else(|| all.first())
            .copied()
    } else {
        svc.cluster_ips.first().copied()
    };
    match ip {
        Some(ip) => Answer::Address { fqdn, ip, all },
        None => Answer::NoSuchName,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_search_path() {
        /// (namespace, name) of the Service a name denotes.
        type Denotes = Option<(&'static str, &'static str)>;
        let cases: &[(&str, &str, Denotes)] = &[
            ("web", "default", Some(("default", "web"))),
            ("web", "team", Some(("team", "web"))),
            ("web.prod", "team", Some(("prod", "web"))),
            ("web.prod.svc", "team", Some(("prod", "web"))),
            ("web.prod.svc.cluster.local", "team", Some(("prod", "web"))),
            ("web.prod.svc.cluster.local.", "team", Some(("prod", "web"))),
            ("web.prod.svc.example.org", "team", None),
            ("example.com.", "team", Some(("com", "example"))),
            ("a.b.c.d", "team", None),
        ];
        for (name, ns, want) in cases {
            let got = service_of(name, ns);
            let want = want.map(|(n, s)| NamespacedName::new(n, s));
            assert_eq!(got, want, "{name} from {ns}");
        }
    }
}
