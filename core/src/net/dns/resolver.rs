//! A Pod's resolver asking cluster DNS: the `/etc/resolv.conf` the kubelet
//! writes (`GetPodDNS`) and the order glibc's resolver tries a name in.
//!
//! `ClusterFirst` (not on the host network) and `ClusterFirstWithHostNet`:
//! the cluster's DNS Service as the nameserver, search `NS.svc.<zone>`,
//! `svc.<zone>`, `<zone>`, `options ndots:5`. `Default` (and `ClusterFirst`
//! on the host network): the node's own settings, which the input does not
//! hold. `None`: nothing. Then `dnsConfig` adds its nameservers and search
//! domains (duplicates dropped) and its options replace those of the same
//! name. A name with at least `ndots` dots is tried as written first, else
//! each search domain first; a name ending in `.` only as written. The
//! first try that gets records ends the search; NXDOMAIN and NODATA go on.

use super::zone::{self, cluster_dns_ips, Qtype, Rcode, Response};
use super::CLUSTER_DOMAIN;
use crate::model::{Cluster, DnsPolicy, EndpointSlice, Pod};
use std::net::IpAddr;

/// The resolver settings of a Pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvConf {
    pub nameservers: Vec<IpAddr>,
    pub search: Vec<String>,
    pub ndots: usize,
    /// The settings start from the node's `/etc/resolv.conf`, which the
    /// input does not hold (its lines are not listed here).
    pub from_node: bool,
    /// The first nameserver is cluster DNS (else kpv cannot know the
    /// answers).
    pub cluster_dns: bool,
}

/// glibc's default `ndots`, and the most it takes.
const DEFAULT_NDOTS: usize = 1;
const MAX_NDOTS: usize = 15;

/// `ClusterFirst` for a Pod in `namespace` (the settings of a Pod that
/// writes no DNS fields).
pub fn resolv_conf(cluster: &Cluster, namespace: &str) -> ResolvConf {
    ResolvConf {
        nameservers: cluster_dns_ips(cluster),
        search: vec![
            format!("{namespace}.svc.{CLUSTER_DOMAIN}"),
            format!("svc.{CLUSTER_DOMAIN}"),
            CLUSTER_DOMAIN.to_string(),
        ],
        ndots: 5,
        from_node: false,
        cluster_dns: true,
    }
}

/// The resolver of whoever asks: the Pod `asker`'s own settings when the
/// cluster has it, else (a node, an outside client, a Pod no longer
/// there) those of a Pod of `default` that writes no DNS fields.
pub fn conf_for(cluster: &Cluster, asker: Option<&crate::model::NamespacedName>) -> ResolvConf {
    match asker.and_then(|id| cluster.pod(id)) {
        Some(p) => pod_resolv_conf(cluster, p),
        None => resolv_conf(cluster, "default"),
    }
}

/// What the kubelet writes for `pod` (see the module's comment).
pub fn pod_resolv_conf(cluster: &Cluster, pod: &Pod) -> ResolvConf {
    let dns = &pod.dns;
    let cluster_first = match dns.policy {
        DnsPolicy::ClusterFirst => !pod.host_network,
        DnsPolicy::ClusterFirstWithHostNet => true,
        DnsPolicy::Default | DnsPolicy::None => false,
    };
    let mut conf = if cluster_first {
        resolv_conf(cluster, &pod.id.namespace)
    } else {
        ResolvConf {
            nameservers: Vec::new(),
            search: Vec::new(),
            ndots: DEFAULT_NDOTS,
            from_node: dns.policy != DnsPolicy::None,
            cluster_dns: false,
        }
    };
    for ip in &dns.nameservers {
        if !conf.nameservers.contains(ip) {
            conf.nameservers.push(*ip);
        }
    }
    for s in &dns.searches {
        if !conf.search.contains(s) {
            conf.search.push(s.clone());
        }
    }
    for (name, value) in &dns.options {
        if name == "ndots" {
            // glibc reads a number and caps it; anything else leaves 1.
            conf.ndots = value
                .as_deref()
                .and_then(|v| v.parse::<usize>().ok())
                .map_or(DEFAULT_NDOTS, |n| n.min(MAX_NDOTS));
        }
    }
    // At most 3 nameservers are written (the kubelet drops the rest).
    conf.nameservers.truncate(3);
    let dns_ips = cluster_dns_ips(cluster);
    conf.cluster_dns = !conf.from_node
        && conf
            .nameservers
            .first()
            .is_some_and(|ip| dns_ips.contains(ip));
    conf
}

/// The names the resolver asks for `name`, in order.
pub fn candidates(conf: &ResolvConf, name: &str) -> Vec<String> {
    if name.ends_with('.') {
        return vec![name.to_string()];
    }
    let searched = conf.search.iter().map(|d| format!("{name}.{d}."));
    let as_is = format!("{name}.");
    if name.matches('.').count() >= conf.ndots {
        std::iter::once(as_is).chain(searched).collect()
    } else {
        searched.chain(std::iter::once(as_is)).collect()
    }
}

/// Every query the resolver makes for `name` of type `qtype`, with its
/// response, up to the first that has records.
pub fn lookup(
    cluster: &Cluster,
    slices: &[EndpointSlice],
    conf: &ResolvConf,
    name: &str,
    qtype: Qtype,
) -> Vec<(String, Response)> {
    let mut out = Vec::new();
    for q in candidates(conf, name) {
        let r = if conf.cluster_dns {
            zone::query(cluster, slices, &q, qtype)
        } else {
            zone::Response::unknown()
        };
        // Records end the search; so does a name handed upstream, whose
        // answer kpv cannot know.
        let done = !r.answer.is_empty() || r.rcode == Rcode::Upstream;
        out.push((q, r));
        if done {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_try_the_search_list_first() {
        let conf = ResolvConf {
            nameservers: Vec::new(),
            search: vec![
                "team.svc.cluster.local".into(),
                "svc.cluster.local".into(),
                "cluster.local".into(),
            ],
            ndots: 5,
            from_node: false,
            cluster_dns: true,
        };
        assert_eq!(
            candidates(&conf, "web"),
            [
                "web.team.svc.cluster.local.",
                "web.svc.cluster.local.",
                "web.cluster.local.",
                "web."
            ]
        );
        assert_eq!(
            candidates(&conf, "web.prod.svc.cluster.local."),
            ["web.prod.svc.cluster.local."]
        );
        // Five dots or more: as written first.
        assert_eq!(candidates(&conf, "a.b.c.d.e.f")[0], "a.b.c.d.e.f.");
        assert_eq!(
            candidates(&conf, "a.b.c.d.e")[0],
            "a.b.c.d.e.team.svc.cluster.local."
        );
    }
}
