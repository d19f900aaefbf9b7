//! Endpoint selection, decided once for every mode (kube-proxy's
//! `CategorizeEndpoints` in `pkg/proxy/topology.go`).
//!
//! Ready endpoints are used; when a set has none ready, serving-terminating
//! endpoints are used instead; endpoints that are not serving are never used.
//! `internalTrafficPolicy: Local` restricts cluster traffic to this node's
//! endpoints, `externalTrafficPolicy: Local` restricts external traffic.

use super::{EndpointInfo, ServicePortInfo};
use serde::Serialize;

/// Indices into the Service port's endpoint list.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Categorized {
    /// For traffic to the ClusterIP (and external traffic with policy Cluster).
    /// `None` when the Service does not use cluster endpoints at all.
    pub cluster: Option<Vec<usize>>,
    /// This node's usable endpoints, when a Local policy needs them.
    pub local: Option<Vec<usize>>,
    /// Every endpoint some rule of this node can reach (for endpoint chains).
    pub all_reachable: Vec<usize>,
    /// Is any endpoint usable for anything?
    pub has_any: bool,
}

fn usable(eps: &[EndpointInfo], filter: impl Fn(&EndpointInfo) -> bool) -> Vec<usize> {
    // Sized once: growing 0, 4, 8, 16 was a large part of 10,000s of these.
    let mut ready: Vec<usize> = Vec::with_capacity(eps.len());
    ready.extend((0..eps.len()).filter(|&i| eps[i].ready && filter(&eps[i])));
    if !ready.is_empty() {
        return ready;
    }
    ready.extend(
        (0..eps.len()).filter(|&i| eps[i].serving && eps[i].terminating && filter(&eps[i])),
    );
    ready
}

/// Decide which endpoints each kind of traffic uses.
pub fn categorize_endpoints(svc: &ServicePortInfo, eps: &[EndpointInfo]) -> Categorized {
    let mut out = Categorized::default();
    if svc.uses_cluster_endpoints() {
        let c = usable(eps, |_| true);
        out.has_any |= !c.is_empty();
        out.cluster = Some(c);
    }
    if svc.uses_local_endpoints() {
        // Any usable endpoint anywhere counts, so that a Local policy without
        // local endpoints drops ("no local endpoints") rather than rejects.
        out.has_any |= eps.iter().any(|e| e.ready || (e.serving && e.terminating));
        out.local = Some(usable(eps, |e| e.is_local));
    }
    let (c, l) = (out.cluster.as_deref(), out.local.as_deref());
    let mut all: Vec<usize> =
        Vec::with_capacity(c.map_or(0, <[usize]>::len) + l.map_or(0, <[usize]>::len));
    all.extend(c.into_iter().chain(l).flatten().copied());
    // One list alone is already ascending without repeats.
    if !all.windows(2).all(|w| w[0] < w[1]) {
        crate::order::sort(&mut all);
        all.dedup();
    }
    out.all_reachable = all;
    out
}

impl Categorized {
    /// Endpoints for traffic to the ClusterIP.
    pub fn for_cluster_traffic(&self, svc: &ServicePortInfo) -> &[usize] {
        if svc.internal_policy_local {
            self.local.as_deref().unwrap_or(&[])
        } else {
            self.cluster.as_deref().unwrap_or(&[])
        }
    }

    /// Endpoints for traffic to NodePorts, LB IPs and externalIPs.
    pub fn for_external_traffic(&self, svc: &ServicePortInfo) -> &[usize] {
        if svc.external_policy_local {
            self.local.as_deref().unwrap_or(&[])
        } else {
            self.cluster.as_deref().unwrap_or(&[])
        }
    }
}
