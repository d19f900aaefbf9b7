//! A Pod's resolver asking cluster DNS: the `/etc/resolv.conf` the kubelet
//! writes for `dnsPolicy: ClusterFirst` (the cluster's DNS Service as the
//! nameserver; search `NS.svc.<zone>`, `svc.<zone>`, `<zone>`;
//! `options ndots:5`) and the order glibc's resolver tries a name in: as
//! written first when it has at least `ndots` dots, else each search
//! domain first; a name ending in `.` only as written. The first try that
//! gets records ends the search; NXDOMAIN and NODATA go on to the next.

use super::zone::{self, Qtype, Rcode, Response};
use super::CLUSTER_DOMAIN;
use crate::model::{Cluster, EndpointSlice, NamespacedName};
use std::net::IpAddr;

/// kubeadm's `clusterDNS` (the tenth address of its default service CIDR),
/// used when the input has no `kube-system/kube-dns` Service.
pub const DEFAULT_CLUSTER_DNS: &str = "10.96.0.10";

/// The resolver settings of a Pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvConf {
    pub nameservers: Vec<IpAddr>,
    pub search: Vec<String>,
    pub ndots: usize,
}

/// The cluster DNS Service's ClusterIPs (`kube-system/kube-dns`), else
/// kubeadm's default.
pub fn cluster_dns_ips(cluster: &Cluster) -> Vec<IpAddr> {
    let id = NamespacedName::new("kube-system", "kube-dns");
    match cluster.service(&id) {
        Some(s) if !s.cluster_ips.is_empty() => s.cluster_ips.clone(),
        _ => DEFAULT_CLUSTER_DNS.parse().into_iter().collect(),
    }
}

/// `ClusterFirst` for a Pod in `namespace`.
pub fn resolv_conf(cluster: &Cluster, namespace: &str) -> ResolvConf {
    ResolvConf {
        nameservers: cluster_dns_ips(cluster),
        search: vec![
            format!("{namespace}.svc.{CLUSTER_DOMAIN}"),
            format!("svc.{CLUSTER_DOMAIN}"),
            CLUSTER_DOMAIN.to_string(),
        ],
        ndots: 5,
    }
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
        let r = zone::query(cluster, slices, &q, qtype);
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
