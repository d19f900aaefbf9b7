//! The visualizer's inputs turned into traces: every packet the user sent,
//! replayed in order through the rules kube-proxy had synced at its send time.
//!
//! The app stores only inputs — the scenario, mode, scheduler, the apps'
//! health changes and the list of packets sent (with their simulated send time
//! and seed) — and derives every trace with [`replay`]. Replaying threads one
//! [`WorldState`] through the packets, so round robin, connection counts,
//! affinity and conntrack behave as on a real node. Deterministic: the same
//! inputs always give the same traces.

use crate::choose::Chooser;
use crate::controller::{self, AppChange, Timing};
use crate::model::{Cluster, EndpointSlice, Mode, NamespacedName, Scheduler, ServiceType};
use crate::packet::{IpFamily, Protocol};
use crate::trace::{self, Dest, Origin, Request, Sim, Trace, WorldState};
use serde::{Deserialize, Serialize};
use std::net::IpAddr;

/// One packet the user sent (a new connection unless `src_port` repeats).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SentPacket {
    pub id: u32,
    pub at_ms: u64,
    pub request: Request,
    pub seed: u64,
}

/// Everything that decides the traces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inputs<'a> {
    pub cluster: &'a Cluster,
    pub mode: Mode,
    pub scheduler: Option<Scheduler>,
    pub timing: Timing,
    pub changes: &'a [AppChange],
    pub packets: &'a [SentPacket],
}

/// Trace every packet in send order. Rules are recompiled only when the
/// EndpointSlices kube-proxy has synced change.
pub fn replay(inputs: &Inputs<'_>) -> Vec<Trace> {
    let mut order: Vec<&SentPacket> = inputs.packets.iter().collect();
    crate::order::sort_by_key(&mut order, |p| (p.at_ms, p.id));
    let mut state = WorldState::default();
    let mut out = Vec::with_capacity(order.len());
    let mut cached: Option<(Vec<EndpointSlice>, Sim<'_>)> = None;
    for p in order {
        let snap = controller::snapshot(inputs.cluster, inputs.changes, inputs.timing, p.at_ms);
        let fresh = match &cached {
            Some((slices, _)) => slices != &snap.proxy_slices,
            None => true,
        };
        if fresh {
            let sim = Sim::new(
                inputs.cluster,
                &snap.proxy_slices,
                inputs.mode,
                inputs.scheduler,
            )
            .with_app_changes(inputs.changes);
            cached = Some((snap.proxy_slices, sim));
        }
        if let Some((_, sim)) = &cached {
            let mut chooser = Chooser::new(p.seed);
            out.push(trace::trace(
                sim,
                &p.request,
                &mut state,
                &mut chooser,
                p.at_ms,
            ));
        }
    }
    out
}

/// A destination the app offers in its "send to" list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Target {
    /// Stable key for the UI (`svc:default/alpaca-service:8080/TCP/cluster-ip`).
    pub key: String,
    pub service: NamespacedName,
    pub kind: TargetKind,
    pub dst: Dest,
    pub port: u16,
    pub protocol: Protocol,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetKind {
    /// The Service's DNS name (resolves to the ClusterIP), from inside.
    DnsName,
    ClusterIp,
    /// A node's address and the NodePort, from outside.
    NodePort,
    /// The cloud load balancer's address, from outside.
    LoadBalancer,
    ExternalIp,
}

impl TargetKind {
    /// Does this kind of destination make sense from outside the cluster?
    pub fn external(self) -> bool {
        matches!(
            self,
            TargetKind::NodePort | TargetKind::LoadBalancer | TargetKind::ExternalIp
        )
    }
}

/// Every destination of every Service port, external ones first (the path the
/// visualizer is about: LoadBalancer → NodePort → ClusterIP → Pod).
pub fn targets(cluster: &Cluster) -> Vec<Target> {
    let mut out = Vec::new();
    let first_node_ip = cluster.nodes.first().and_then(|n| {
        n.primary_ip(IpFamily::V4)
            .or_else(|| n.primary_ip(IpFamily::V6))
    });
    for svc in &cluster.services {
        if svc.service_type == ServiceType::ExternalName {
            continue;
        }
        for p in &svc.ports {
            let base = format!("{}:{}/{}", svc.id, p.port, p.protocol);
            let mut push = |kind: TargetKind, dst: Dest, port: u16, suffix: &str| {
                out.push(Target {
                    key: format!("{base}/{suffix}"),
                    service: svc.id.clone(),
                    kind,
                    dst,
                    port,
                    protocol: p.protocol,
                });
            };
            for ip in svc.load_balancer_addresses() {
                push(
                    TargetKind::LoadBalancer,
                    Dest::Ip(*ip),
                    p.port,
                    &format!("lb/{ip}"),
                );
            }
            if let (Some(np), Some(ip)) = (p.node_port, first_node_ip) {
                push(TargetKind::NodePort, Dest::Ip(ip), np, "node-port");
            }
            for ip in &svc.external_ips {
                push(
                    TargetKind::ExternalIp,
                    Dest::Ip(*ip),
                    p.port,
                    &format!("external-ip/{ip}"),
                );
            }
            if !svc.headless {
                if let Some(ip) = svc.cluster_ips.first() {
                    push(TargetKind::ClusterIp, Dest::Ip(*ip), p.port, "cluster-ip");
                }
            }
            push(
                TargetKind::DnsName,
                Dest::Name(format!(
                    "{}.{}.svc.cluster.local",
                    svc.id.name, svc.id.namespace
                )),
                p.port,
                "dns",
            );
        }
    }
    crate::order::sort_by_key(&mut out, |t| (t.kind_rank(), t.service.clone(), t.port));
    out
}

impl Target {
    fn kind_rank(&self) -> u8 {
        match self.kind {
            TargetKind::LoadBalancer => 0,
            TargetKind::NodePort => 1,
            TargetKind::ExternalIp => 2,
            TargetKind::DnsName => 3,
            TargetKind::ClusterIp => 4,
        }
    }
}

/// Where a packet to `target` starts by default: outside for external
/// destinations, else the first Pod that is not behind this Service (a client
/// Pod), else the first Pod.
pub fn default_origin(cluster: &Cluster, target: &Target) -> Origin {
    if target.kind.external() {
        return Origin::External {
            client: client_ip(),
        };
    }
    let svc = cluster.service(&target.service);
    let behind = |p: &crate::model::Pod| {
        svc.and_then(|s| s.selector.as_ref())
            .is_some_and(|sel| crate::model::selects(sel, &p.labels))
    };
    let pod = cluster
        .pods
        .iter()
        .find(|p| !behind(p) && !p.ips.is_empty())
        .or_else(|| cluster.pods.iter().find(|p| !p.ips.is_empty()));
    match pod {
        Some(p) => Origin::Pod { pod: p.id.clone() },
        None => match cluster
            .nodes
            .first()
            .and_then(|n| n.primary_ip(IpFamily::V4).map(|ip| (n.name.clone(), ip)))
        {
            Some((node, src)) => Origin::Node { node, src },
            None => Origin::External {
                client: client_ip(),
            },
        },
    }
}

/// The external client's address (documentation range 198.51.100.0/24).
pub fn client_ip() -> IpAddr {
    IpAddr::V4(std::net::Ipv4Addr::new(198, 51, 100, 7))
}

/// The request for sending packet number `n` to `target` from `origin`: each
/// is a new connection with its own source port.
pub fn request(target: &Target, origin: Origin, n: u32) -> Request {
    Request {
        origin,
        dst: target.dst.clone(),
        port: target.port,
        protocol: target.protocol,
        src_port: 40000 + (n % 20000) as u16,
        keep_open: false,
    }
}
