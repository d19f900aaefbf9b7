//! Endpoint selection, decided once for every mode (kube-proxy's
//! `CategorizeEndpoints` in `pkg/proxy/topology.go`).
//!
//! Ready endpoints are used; when a set has none ready, serving-terminating
//! endpoints are used instead; endpoints that are not serving are never used.
//! `internalTrafficPolicy: Local` restricts cluster traffic to this node's
//! endpoints, `externalTrafficPolicy: Local` restricts external traffic.
//! Topology hints narrow cluster traffic to the endpoints hinted for this
//! node, or else for its zone, when every ready endpoint is hinted and one is
//! hinted here (`topologyModeFromHints`); the serving-terminating fallback
//! ignores them.

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

/// The node a ruleset is for, as topology hints see it.
#[derive(Clone, Copy, Debug)]
pub struct Topology<'a> {
    pub node: &'a str,
    /// Its `topology.kubernetes.io/zone` label.
    pub zone: Option<&'a str>,
}

/// Which hints this node follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopologyMode {
    /// Every ready endpoint.
    None,
    /// Those hinted for this node (`PreferSameNode`).
    SameNode,
    /// Those hinted for this node's zone (`PreferSameZone`).
    SameZone,
}

/// kube-proxy's `topologyModeFromHints`: node hints win when every ready
/// endpoint has one and one names this node; then zone hints likewise.
pub fn topology_mode(eps: &[EndpointInfo], topo: Option<Topology<'_>>) -> TopologyMode {
    let Some(topo) = topo else {
        return TopologyMode::None;
    };
    let ready = || eps.iter().filter(|e| e.ready);
    if ready().next().is_none() {
        return TopologyMode::None;
    }
    let names = |list: &[String], name: &str| list.iter().any(|n| n == name);
    if ready().all(|e| !e.hints.for_nodes.is_empty())
        && ready().any(|e| names(&e.hints.for_nodes, topo.node))
    {
        return TopologyMode::SameNode;
    }
    if let Some(zone) = topo.zone {
        if ready().all(|e| !e.hints.for_zones.is_empty())
            && ready().any(|e| names(&e.hints.for_zones, zone))
        {
            return TopologyMode::SameZone;
        }
    }
    TopologyMode::None
}

/// Endpoints for cluster traffic: the ready ones the node's topology mode
/// allows, else (none ready anywhere) the serving-terminating ones.
pub fn cluster_endpoints(eps: &[EndpointInfo], topo: Option<Topology<'_>>) -> Vec<usize> {
    let mode = topology_mode(eps, topo);
    let here = |e: &EndpointInfo| match (mode, topo) {
        (TopologyMode::SameNode, Some(t)) => e.hints.for_nodes.iter().any(|n| n == t.node),
        (TopologyMode::SameZone, Some(t)) => {
            e.hints.for_zones.iter().any(|z| Some(z.as_str()) == t.zone)
        }
        _ => true,
    };
    let ready: Vec<usize> = (0..eps.len())
        .filter(|&i| eps[i].ready && here(&eps[i]))
        .collect();
    if !ready.is_empty() {
        return ready;
    }
    usable(eps, |_| true)
}

/// Decide which endpoints each kind of traffic uses on the node `topo`
/// (`None`: ignore topology hints, as the userspace proxy did).
pub fn categorize_endpoints(
    svc: &ServicePortInfo,
    eps: &[EndpointInfo],
    topo: Option<Topology<'_>>,
) -> Categorized {
    let mut out = Categorized::default();
    if svc.uses_cluster_endpoints() {
        let c = cluster_endpoints(eps, topo);
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
        crate::util::order::sort(&mut all);
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
