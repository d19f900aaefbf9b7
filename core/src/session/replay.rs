//! The visualizer's inputs turned into traces: every packet the user sent,
//! replayed in order through the rules kube-proxy had synced at its send time.
//!
//! The app stores only inputs — the scenario, mode, scheduler, the apps'
//! health changes and the list of packets sent (with their simulated send time
//! and seed) — and derives every trace with [`replay`]. Replaying threads one
//! [`WorldState`] through the packets, so round robin, connection counts,
//! affinity and conntrack behave as on a real node. Deterministic: the same
//! inputs always give the same traces. [`Replay`] keeps a replay between
//! changes so a new packet costs one trace, however many came before.

use crate::http;
use crate::model::packet::{IpFamily, Protocol};
use crate::model::{Cluster, EndpointSlice, Mode, NamespacedName, Scheduler, ServiceType};
use crate::net::controller::{self, AppChange, Timing};
use crate::net::modes::Compilers;
use crate::net::trace::{self, Dest, Origin, Request, Sim, Trace, WorldState};
use crate::util::choose::Chooser;
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

/// The code a replay may call that a build may not have yet, handed in by
/// the caller: the mode compilers, and HTTP routing. Native builds hand in
/// [`Code::ALL`]; the web app hands in what has arrived so far.
#[derive(Clone, Copy, Debug)]
pub struct Code {
    pub compilers: Compilers,
    /// `None`: HTTP routing's code is not here; there are no entry points,
    /// and HTTP requests are traced as plain packets to their host (and
    /// again, through the proxies, once it is).
    pub http: Option<HttpCode>,
}

impl Code {
    /// Everything linked. Naming this links every mode and HTTP routing in.
    pub const ALL: Code = Code {
        compilers: Compilers::ALL,
        http: Some(HttpCode::LINKED),
    };
}

/// An HTTP request's trace in a replay.
pub type HttpTraceFn = fn(
    &http::Prepared,
    &Sim<'_>,
    &[EndpointSlice],
    &http::send::HttpSend,
    &SentPacket,
) -> Option<Trace>;

/// What a replay and its targets call of HTTP routing.
#[derive(Clone, Copy)]
pub struct HttpCode {
    /// [`http::prepare`].
    pub prepare: fn(&Cluster) -> http::Prepared,
    /// One request's journey as a trace.
    pub trace: HttpTraceFn,
    /// One target per entry point a controller serves.
    pub targets: fn(&http::Prepared) -> Vec<Target>,
}

impl HttpCode {
    /// HTTP routing's own functions. Naming this links it in.
    pub const LINKED: HttpCode = HttpCode {
        prepare: http::prepare,
        trace: http_trace,
        targets: http_targets,
    };
}

impl std::fmt::Debug for HttpCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HttpCode")
    }
}

/// Everything that decides the traces.
#[derive(Clone, Debug)]
pub struct Inputs<'a> {
    /// The code handed in (see [`Code`]).
    pub code: Code,
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
    let mut r = Replay::default();
    r.update(inputs);
    r.traces
}

/// Packets between two saved world states in a [`Replay`]: going back to a
/// packet in the past replays at most this many packets it already knew.
pub const CHECKPOINT_EVERY: usize = 256;

/// Most packets the app keeps in one session: it stops sending at this many
/// and says so. (A share link carries up to [`crate::session::share::MAX_ITEMS`].)
pub const MAX_PACKETS: usize = 20_000;

/// What every trace depends on besides the packets.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Basis {
    cluster: Cluster,
    mode: Mode,
    scheduler: Option<Scheduler>,
    timing: Timing,
    changes: Vec<AppChange>,
    /// Whether HTTP routing's code was there ([`Code::http`]): requests
    /// traced without it are traced again once it is.
    http_ready: bool,
    /// Whether the mode's compiler was there: packets traced without it
    /// are traced again once it is.
    mode_ready: bool,
}

/// [`replay`] kept between calls, so the cost of an update follows what
/// changed, not how many packets were sent before: a packet added at the end
/// traces only itself (the world state after the last packet is kept), and a
/// change in the past (a packet sent back in time, an app change) replays
/// from the last saved state before it (one every [`CHECKPOINT_EVERY`]
/// packets). A change of cluster, mode, scheduler or timing replays
/// everything. The traces are always exactly those of [`replay`] on the same
/// inputs.
#[derive(Clone, Debug, Default)]
pub struct Replay {
    basis: Option<Basis>,
    /// The packets replayed, in replay order (send time, then id).
    packets: Vec<SentPacket>,
    traces: Vec<Trace>,
    /// `checkpoints[k]`: the world state before packet `k * CHECKPOINT_EVERY`.
    checkpoints: Vec<WorldState>,
    /// The world state after the last packet.
    state: WorldState,
    /// The cluster prepared for HTTP requests (once per basis, when one is sent).
    http: Option<std::sync::Arc<http::Prepared>>,
}

/// kube-proxy's view changes only when a Pod's readiness at the proxy's
/// lagging clock does: the readiness it would sync at time `t`.
fn proxy_readiness(inputs: &Inputs<'_>, t: u64) -> crate::net::controller::PodReady {
    readiness_in(inputs.cluster, inputs, t)
}

fn readiness_in(
    cluster: &Cluster,
    inputs: &Inputs<'_>,
    t: u64,
) -> crate::net::controller::PodReady {
    let proxy_t = inputs.timing.clocks(cluster, t).proxy;
    controller::readiness_at(cluster, inputs.changes, proxy_t)
}

/// An HTTP request's trace: its journey through the entry point's proxy
/// (from an empty world state, so it depends on nothing sent before it).
/// Reached through [`HttpCode::trace`].
fn http_trace(
    prepared: &http::Prepared,
    sim: &Sim<'_>,
    slices: &[crate::model::EndpointSlice],
    send: &http::send::HttpSend,
    p: &SentPacket,
) -> Option<Trace> {
    let proxy = prepared.proxies.iter().find(|w| w.entry == send.entry)?;
    let start = http::journey::Start {
        origin: p.request.origin.clone(),
        seed: p.seed,
    };
    let j = http::journey::journey(sim, slices, &prepared.table, proxy, &send.request, &start);
    Some(http::send::journey_trace(&j, &p.request))
}

impl Replay {
    /// Bring the traces up to date with `inputs`. Returns the index (in
    /// replay order) of the first trace that was recomputed; traces before
    /// it are unchanged (`len()` when nothing changed).
    pub fn update(&mut self, inputs: &Inputs<'_>) -> usize {
        let fns = inputs.code.http;
        let mode_ready = inputs.code.compilers.ready(inputs.mode);
        let mut order: Vec<&SentPacket> = inputs.packets.iter().collect();
        if !order.is_sorted_by_key(|p| (p.at_ms, p.id)) {
            crate::util::order::sort_by_key(&mut order, |p| (p.at_ms, p.id));
        }
        // The earliest send time whose trace may differ because of the basis.
        let same_basis = self.basis.as_ref().is_some_and(|b| {
            b.mode == inputs.mode
                && b.scheduler == inputs.scheduler
                && b.timing == inputs.timing
                && b.cluster == *inputs.cluster
                && b.http_ready == fns.is_some()
                && b.mode_ready == mode_ready
        });
        let from_time = match &self.basis {
            Some(b) if same_basis => {
                let common = b
                    .changes
                    .iter()
                    .zip(inputs.changes)
                    .take_while(|(a, c)| a == c)
                    .count();
                b.changes[common..]
                    .iter()
                    .chain(&inputs.changes[common..])
                    .map(|c| c.at_ms)
                    .min()
            }
            _ => Some(0),
        };
        let mut from = self
            .packets
            .iter()
            .zip(&order)
            .take_while(|(a, b)| a == *b)
            .count();
        if let Some(t) = from_time {
            from = from.min(self.packets.partition_point(|p| p.at_ms < t));
        }
        if !same_basis {
            self.http = None;
            self.basis = Some(Basis {
                cluster: inputs.cluster.clone(),
                mode: inputs.mode,
                scheduler: inputs.scheduler,
                timing: inputs.timing,
                changes: inputs.changes.to_vec(),
                http_ready: fns.is_some(),
                mode_ready,
            });
        } else if let Some(b) = &mut self.basis {
            if b.changes != inputs.changes {
                b.changes = inputs.changes.to_vec();
            }
        }
        if from == self.packets.len() && from == order.len() {
            return from;
        }
        // The world state before packet `start`.
        let start = if from == self.packets.len() {
            from
        } else {
            let k = (from / CHECKPOINT_EVERY).min(self.checkpoints.len().saturating_sub(1));
            self.checkpoints.truncate(k + 1);
            self.state = self.checkpoints.get(k).cloned().unwrap_or_default();
            k * CHECKPOINT_EVERY
        };
        self.packets.truncate(start);
        self.traces.truncate(start);
        let mut cached: Option<(crate::net::controller::PodReady, Sim<'_>)> = None;
        // HTTP requests go through the cluster with its controllers' proxies
        // placed (prepared once per basis).
        if self.http.is_none()
            && order[start..]
                .iter()
                .any(|p| matches!(p.request.dst, Dest::Http(_)))
        {
            self.http = fns.map(|f| std::sync::Arc::new((f.prepare)(inputs.cluster)));
        }
        let prepared = self.http.clone();
        type HttpSim<'s> = (
            crate::net::controller::PodReady,
            Vec<crate::model::EndpointSlice>,
            Sim<'s>,
        );
        let mut http_cached: Option<HttpSim<'_>> = None;
        for (i, p) in order.iter().enumerate().skip(start) {
            if i % CHECKPOINT_EVERY == 0 && self.checkpoints.len() == i / CHECKPOINT_EVERY {
                self.checkpoints.push(self.state.clone());
            }
            if let (Dest::Http(h), Some(prep), Some(f)) = (&p.request.dst, prepared.as_deref(), fns)
            {
                let ready = readiness_in(&prep.cluster, inputs, p.at_ms);
                if http_cached.as_ref().is_none_or(|(r, _, _)| *r != ready) {
                    let slices = controller::compute_slices(&prep.cluster, &ready);
                    let sim = Sim::new(
                        &prep.cluster,
                        &slices,
                        inputs.mode,
                        inputs.scheduler,
                        inputs.code.compilers,
                    )
                    .with_app_changes(inputs.changes);
                    http_cached = Some((ready, slices, sim));
                }
                if let Some((_, slices, sim)) = &http_cached {
                    if let Some(t) = (f.trace)(prep, sim, slices, h, p) {
                        self.traces.push(t);
                        self.packets.push((*p).clone());
                        continue;
                    }
                }
            }
            let ready = proxy_readiness(inputs, p.at_ms);
            if cached.as_ref().is_none_or(|(r, _)| *r != ready) {
                let slices = controller::compute_slices(inputs.cluster, &ready);
                let sim = Sim::new(
                    inputs.cluster,
                    &slices,
                    inputs.mode,
                    inputs.scheduler,
                    inputs.code.compilers,
                )
                .with_app_changes(inputs.changes);
                cached = Some((ready, sim));
            }
            if let Some((_, sim)) = &cached {
                let mut chooser = Chooser::new(p.seed);
                self.traces.push(trace::trace(
                    sim,
                    &p.request,
                    &mut self.state,
                    &mut chooser,
                    p.at_ms,
                ));
                self.packets.push((*p).clone());
            }
        }
        from
    }

    /// The traces, in replay order (send time, then id).
    pub fn traces(&self) -> &[Trace] {
        &self.traces
    }

    /// The packets replayed, in the same order as [`Replay::traces`].
    pub fn packets(&self) -> &[SentPacket] {
        &self.packets
    }

    pub fn len(&self) -> usize {
        self.traces.len()
    }

    pub fn is_empty(&self) -> bool {
        self.traces.is_empty()
    }
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
    /// An HTTP request through an Ingress or Gateway entry point (the
    /// target's `dst` is a `Dest::Http` with a request that reaches a host
    /// it routes), from outside.
    Http,
}

impl TargetKind {
    /// Does this kind of destination make sense from outside the cluster?
    pub fn external(self) -> bool {
        matches!(
            self,
            TargetKind::NodePort
                | TargetKind::LoadBalancer
                | TargetKind::ExternalIp
                | TargetKind::Http
        )
    }
}

/// Every destination of every Service port, external ones first (the path the
/// visualizer is about: LoadBalancer → NodePort → ClusterIP → Pod). The
/// HTTP entry points are there when HTTP routing's code is (`http`; `None`:
/// not here, no entry points).
pub fn targets(cluster: &Cluster, http: Option<HttpCode>) -> Vec<Target> {
    let prepared = http
        .filter(|_| !cluster.routing.is_empty())
        .map(|f| (f.prepare)(cluster));
    targets_with(cluster, prepared.as_ref(), http)
}

/// [`targets`], the HTTP entry points read from `prepared` (the cluster's
/// [`http::prepare`], `None` when it has no routing objects): a caller that
/// keeps the prepared cluster for other uses prepares it once.
pub fn targets_with(
    cluster: &Cluster,
    prepared: Option<&http::Prepared>,
    fns: Option<HttpCode>,
) -> Vec<Target> {
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
    crate::util::order::sort_by_key(&mut out, |t| (t.kind_rank(), t.service.clone(), t.port));
    if let Some((prepared, f)) = prepared.zip(fns) {
        let mut with_http = (f.targets)(prepared);
        with_http.append(&mut out);
        return with_http;
    }
    out
}

/// One target per Ingress or Gateway entry point a controller serves, with
/// a request to a host it routes (HTTPS where it has a certificate).
/// Reached through [`HttpCode::targets`].
fn http_targets(prepared: &http::Prepared) -> Vec<Target> {
    prepared
        .proxies
        .iter()
        .filter_map(|p| {
            let url = http::send::default_url(prepared, &p.entry);
            let request = http::send::parse_request("GET", &url, "").ok()?;
            Some(Target {
                key: format!("http:{}", p.entry),
                service: p.service.clone(),
                kind: TargetKind::Http,
                port: request.port,
                dst: Dest::Http(Box::new(http::send::HttpSend {
                    entry: p.entry.clone(),
                    request,
                })),
                protocol: Protocol::Tcp,
            })
        })
        .collect()
}

impl Target {
    fn kind_rank(&self) -> u8 {
        match self.kind {
            TargetKind::Http => 0,
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
        return external_origin(target);
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
            None => external_origin(target),
        },
    }
}

/// The client outside the cluster that sends to `target`: of the target
/// address's family (a packet has one), so an IPv6-only cluster's NodePort
/// is reached from an IPv6 client.
pub fn external_origin(target: &Target) -> Origin {
    Origin::External {
        client: external_client(target),
    }
}

/// The address of [`external_origin`]'s client.
pub fn external_client(target: &Target) -> IpAddr {
    client_ip_of(match &target.dst {
        Dest::Ip(ip) => IpFamily::of(ip),
        _ => IpFamily::V4,
    })
}

/// The outside client's address in `family`: 198.51.100.7 or 2001:db8::7
/// (both documentation ranges).
pub fn client_ip_of(family: IpFamily) -> IpAddr {
    match family {
        IpFamily::V4 => client_ip(),
        IpFamily::V6 => IpAddr::V6(std::net::Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 7)),
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

#[cfg(test)]
mod handed_in_tests {
    //! HTTP routing and the modes reached only through the code handed in:
    //! without HTTP's (the web release build before the routing file has
    //! loaded) there are no entry points and requests are not routed; with
    //! it, both are back, and a replay made without it is redone in full.
    use super::*;
    const FNS: HttpCode = HttpCode::LINKED;

    fn scenario(name: &str) -> Cluster {
        let text = match name {
            "ingress" => include_str!("../../../tests/scenarios/ingress.yaml"),
            _ => include_str!("../../../tests/scenarios/gateway-api.yaml"),
        };
        crate::Code::ALL.parse(text).0
    }

    fn http_sent(cluster: &Cluster) -> Vec<SentPacket> {
        let t = targets(cluster, Some(FNS))
            .into_iter()
            .find(|t| t.kind == TargetKind::Http)
            .unwrap_or_else(|| panic!("an entry point"));
        vec![SentPacket {
            id: 0,
            at_ms: 5_000,
            request: request(&t, default_origin(cluster, &t), 0),
            seed: 7,
        }]
    }

    fn proxy_hops(t: &Trace) -> usize {
        t.hops
            .iter()
            .filter(|h| matches!(h.what, trace::HopKind::Http(_)))
            .count()
    }

    #[test]
    fn without_the_table_no_entry_point_and_no_request_is_routed() {
        for name in ["ingress", "gateway-api"] {
            let c = scenario(name);
            let loaded = targets(&c, Some(FNS));
            let unloaded = targets(&c, None);
            assert!(loaded.iter().any(|t| t.kind == TargetKind::Http), "{name}");
            assert!(
                unloaded.iter().all(|t| t.kind != TargetKind::Http),
                "{name}"
            );
            // Everything else is the same list, in the same order.
            let plain: Vec<&Target> = loaded
                .iter()
                .filter(|t| t.kind != TargetKind::Http)
                .collect();
            assert_eq!(plain, unloaded.iter().collect::<Vec<_>>(), "{name}");

            let packets = http_sent(&c);
            let mut inputs = Inputs {
                code: Code {
                    http: None,
                    ..Code::ALL
                },
                cluster: &c,
                mode: Mode::Iptables,
                scheduler: None,
                timing: Timing::default(),
                changes: &[],
                packets: &packets,
            };
            let mut r = Replay::default();
            r.update(&inputs);
            assert_eq!(r.len(), 1);
            assert_eq!(
                proxy_hops(&r.traces()[0]),
                0,
                "{name}: routed without the table"
            );
            // The table arrives: the same inputs are traced again, through the proxy.
            inputs.code = Code::ALL;
            assert_eq!(r.update(&inputs), 0, "{name}");
            assert!(proxy_hops(&r.traces()[0]) >= 4, "{name}");
            assert_eq!(r.traces(), &replay(&inputs)[..], "{name}");
        }
    }
}
