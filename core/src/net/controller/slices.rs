//! The EndpointSlice controller: Services' selectors and Pods' readiness make
//! EndpointSlices.
//!
//! Like the real controller: Pods in the Service's namespace whose labels match
//! its selector and that have an IP become endpoints; `ready` is the Pod's Ready
//! condition (always true with `publishNotReadyAddresses`), `serving` the same
//! regardless of termination, `terminating` whether it is being deleted; named
//! target ports resolve per Pod, and Pods resolving to different port numbers
//! land in different slices. Slices of Services without selector (given or
//! mirrored from Endpoints) pass through unchanged.

use crate::model::packet::IpFamily;
use crate::model::{
    selects, Cluster, Endpoint, EndpointPort, EndpointSlice, Hints, NamespacedName, ServiceType,
    SliceSource, TrafficDistribution,
};
use std::collections::BTreeMap;

/// Most endpoints per slice (the controller's default `--max-endpoints-per-slice`).
pub const MAX_ENDPOINTS_PER_SLICE: usize = 100;

/// All EndpointSlices in effect, given each Pod's readiness.
pub fn compute_slices(cluster: &Cluster, ready: &super::PodReady) -> Vec<EndpointSlice> {
    let mut out: Vec<EndpointSlice> = Vec::new();
    // Pods by (namespace, label, value), in Pod order: a selector's Pods are
    // among those with its first label, so each Service looks at those
    // rather than at every Pod of the cluster.
    let mut by_label: BTreeMap<(&str, &str, &str), Vec<usize>> = BTreeMap::new();
    for (i, p) in cluster.pods.iter().enumerate() {
        for (k, v) in &p.labels {
            by_label
                .entry((p.id.namespace.as_str(), k.as_str(), v.as_str()))
                .or_default()
                .push(i);
        }
    }
    for svc in &cluster.services {
        let Some(selector) = &svc.selector else {
            continue;
        };
        if svc.service_type == ServiceType::ExternalName {
            continue;
        }
        // An empty selector selects nothing.
        let candidates: &[usize] = selector
            .iter()
            .next()
            .and_then(|(k, v)| by_label.get(&(svc.id.namespace.as_str(), k.as_str(), v.as_str())))
            .map_or(&[], Vec::as_slice);
        // Group endpoints by (family, resolved ports).
        let mut groups: BTreeMap<(IpFamily, Vec<EndpointPort>), Vec<Endpoint>> = BTreeMap::new();
        for pod in candidates
            .iter()
            .filter_map(|&i| cluster.pods.get(i))
            .filter(|p| {
                p.id.namespace == svc.id.namespace && selects(selector, &p.labels) && !p.finished
            })
        {
            let ports: Vec<EndpointPort> = svc
                .ports
                .iter()
                .filter_map(|sp| {
                    pod.resolve_port(&sp.target_port, sp.protocol)
                        .map(|port| EndpointPort {
                            name: sp.name.clone(),
                            port,
                            protocol: sp.protocol,
                        })
                })
                .collect();
            let is_ready = ready.get(&pod.id).copied().unwrap_or(false);
            let node = pod.node_name.as_deref().and_then(|n| cluster.node(n));
            // A Pod whose Node is gone is skipped (reconcileByAddressType),
            // unless not-ready addresses are published anyway.
            if pod.node_name.is_some() && node.is_none() && !svc.publish_not_ready_addresses {
                continue;
            }
            let zone = node.and_then(|n| n.zone.clone());
            for ip in &pod.ips {
                let ready = (is_ready && !pod.terminating) || svc.publish_not_ready_addresses;
                let hints = hints_for(svc.traffic_distribution, ready, &zone, &pod.node_name);
                let ep = Endpoint {
                    addresses: vec![*ip],
                    ready,
                    serving: is_ready,
                    terminating: pod.terminating,
                    node_name: pod.node_name.clone(),
                    zone: zone.clone(),
                    target_pod: Some(pod.id.clone()),
                    hints,
                    hostname: pod
                        .hostname
                        .clone()
                        .filter(|_| pod.subdomain.as_deref() == Some(svc.id.name.as_str())),
                };
                groups
                    .entry((IpFamily::of(ip), ports.clone()))
                    .or_default()
                    .push(ep);
            }
        }
        let mut n = 0usize;
        for ((family, ports), mut eps) in groups {
            crate::util::order::sort_by(&mut eps, |a, b| a.addresses.cmp(&b.addresses));
            for chunk in eps.chunks(MAX_ENDPOINTS_PER_SLICE) {
                let name = format!(
                    "{}-{}",
                    svc.id.name,
                    crate::model::name_suffix(&format!("{}#slice{n}", svc.id))
                );
                n += 1;
                out.push(EndpointSlice {
                    id: NamespacedName::new(svc.id.namespace.clone(), name),
                    service_name: svc.id.name.clone(),
                    family,
                    endpoints: chunk.to_vec(),
                    ports: ports.clone(),
                    source: SliceSource::Controller,
                    cilium_weight: None,
                });
            }
        }
    }
    // Slices not owned by the controller for a selector Service pass through.
    let mut services: BTreeMap<(&str, &str), &crate::model::Service> = BTreeMap::new();
    for x in &cluster.services {
        services
            .entry((x.id.namespace.as_str(), x.id.name.as_str()))
            .or_insert(x);
    }
    for s in &cluster.endpoint_slices {
        let svc = services
            .get(&(s.id.namespace.as_str(), s.service_name.as_str()))
            .copied();
        let owned =
            s.source == SliceSource::Controller && svc.is_some_and(|x| x.selector.is_some());
        if !owned {
            out.push(s.clone());
        }
    }
    crate::util::order::sort_by(&mut out, |a, b| a.id.cmp(&b.id));
    out
}

/// The hints the controller writes for `trafficDistribution`
/// (`trafficdist.preferCloseHeuristic`): a ready endpoint is hinted for its
/// own zone, and with `PreferSameNode` for its own node too; others get none.
fn hints_for(
    distribution: Option<TrafficDistribution>,
    ready: bool,
    zone: &Option<String>,
    node: &Option<String>,
) -> Hints {
    match distribution {
        Some(d) if ready => Hints {
            for_zones: zone.iter().cloned().collect(),
            for_nodes: match d {
                TrafficDistribution::PreferSameNode => node.iter().cloned().collect(),
                _ => Vec::new(),
            },
        },
        _ => Hints::default(),
    }
}
