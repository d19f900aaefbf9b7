//! The labs' numbers: how a mode spreads connections over endpoints, and how
//! its rules grow with the number of Services.
//!
//! Every figure here is *measured* by running the real model — packets through
//! [`crate::session::replay::replay`], synthetic clusters through the real
//! [`crate::net::modes::Compilers::compile`] and [`crate::net::modes::Dataplane::process`] — never
//! taken from a formula. [`expected_share`] only says what the theory predicts,
//! so the app can show it next to the measurement. Deterministic: the same
//! arguments give the same numbers; no clock is read (the caller times).

use crate::model::packet::{IpFamily, Packet, Protocol};
use crate::model::{
    Cluster, Endpoint, EndpointPort, EndpointSlice, Mode, NamespacedName, Node, NodeAddressKind,
    PortRef, Scheduler, Service, ServicePort, ServiceType, SliceSource, TrafficPolicy,
};
use crate::net::controller::{self, Timing};
use crate::net::modes::{AllAnswer, CompileOptions, Compilers, Hook, NodeState};
use crate::net::trace::{self, Origin, Outcome, Sim, Trace, WorldState};
use crate::session::replay::{self, Inputs, SentPacket, Target};
use crate::util::choose::Chooser;
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// When lab packets are sent: long after start, so every probe has settled
/// and kube-proxy has synced.
pub const LAB_START_MS: u64 = 600_000;

/// Most packets one distribution run sends.
pub const MAX_LAB_PACKETS: u32 = 100_000;

/// How many connections ended where.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Bucket {
    /// The Pod's name, else the endpoint (`172.16.5.20:5432`), else what
    /// happened (`dropped`, `rejected`, `timed out`, ...), in English.
    pub label: String,
    /// What happened, for a translated label.
    pub landing: Landing,
    /// The Pod, endpoint or node concerned (empty when none).
    pub name: String,
    pub endpoint: Option<SocketAddr>,
    pub count: u32,
}

fn pod_label(cluster: &Cluster, ep: SocketAddr) -> String {
    cluster
        .pods
        .iter()
        .find(|p| p.ips.contains(&ep.ip()))
        .map(|p| p.id.name.clone())
        .unwrap_or_else(|| ep.to_string())
}

/// The packets of a lab run: `n` new connections from `origin` to `target`,
/// 1 ms apart from [`LAB_START_MS`], each with its own source port and a seed
/// drawn from `seed`. `long_lived` keeps every connection open (IPVS then
/// counts them active, which is what `lc`, `sed` and `nq` look at).
pub fn lab_packets(
    target: &Target,
    origin: &Origin,
    n: u32,
    seed: u64,
    long_lived: bool,
) -> Vec<SentPacket> {
    let mut seeds = Chooser::new(seed);
    (0..n.min(MAX_LAB_PACKETS))
        .map(|i| {
            let mut request = replay::request(target, origin.clone(), i);
            request.keep_open = long_lived;
            // More than 20,000 connections reuse source ports: spread them
            // over the client's whole ephemeral range instead.
            request.src_port = 32768u16.wrapping_add((i % 28_000) as u16);
            SentPacket {
                id: i,
                at_ms: LAB_START_MS + u64::from(i),
                request,
                seed: seeds.next_u64(),
            }
        })
        .collect()
}

/// Trace lab packets (no app changes, sent in order). When what kube-proxy
/// has synced is the same at the first and the last packet — always, after
/// the probes have settled and with no changes — the rules are compiled once
/// and one [`WorldState`] is threaded through every packet, exactly as
/// [`replay::replay`] would but without recomputing the cluster's state per
/// packet. Otherwise it is `replay` itself.
pub fn run(
    cluster: &Cluster,
    (mode, scheduler): (Mode, Option<Scheduler>),
    packets: &[SentPacket],
    code: replay::Code,
) -> Vec<Trace> {
    match steady_slices(cluster, packets) {
        Some(slices) => {
            let sim = Sim::new(cluster, &slices, mode, scheduler, code.compilers);
            trace_all(&sim, packets, &mut WorldState::default())
        }
        None => replay::replay(&Inputs {
            code,
            cluster,
            mode,
            scheduler,
            timing: Timing::default(),
            changes: &[],
            packets,
        }),
    }
}

/// What kube-proxy has synced, when it is the same at the first and the last
/// of `packets` (sent in order, no app changes): then one compiled [`Sim`]
/// serves them all.
fn steady_slices(cluster: &Cluster, packets: &[SentPacket]) -> Option<Vec<EndpointSlice>> {
    let sorted = packets
        .windows(2)
        .all(|w| (w[0].at_ms, w[0].id) < (w[1].at_ms, w[1].id));
    let (first, last) = (packets.first()?, packets.last()?);
    if !sorted {
        return None;
    }
    let timing = Timing::default();
    let a = controller::snapshot(cluster, &[], timing, first.at_ms);
    let b = controller::snapshot(cluster, &[], timing, last.at_ms);
    (a.proxy_slices == b.proxy_slices).then_some(a.proxy_slices)
}

/// Trace `packets` in order through one `sim`, threading `state`.
fn trace_all(sim: &Sim<'_>, packets: &[SentPacket], state: &mut WorldState) -> Vec<Trace> {
    packets
        .iter()
        .map(|p| {
            let mut chooser = Chooser::new(p.seed);
            trace::trace(sim, &p.request, state, &mut chooser, p.at_ms)
        })
        .collect()
}

/// One load-balancing lab run: `connections` new connections from `origin`
/// to `target` through `mode` (with `scheduler` for IPVS), their random
/// choices drawn from `seed`; `long_lived` keeps every connection open;
/// traced with the code handed in (`code`).
#[derive(Clone, Copy, Debug)]
pub struct LabRun<'a> {
    pub code: replay::Code,
    pub mode: Mode,
    pub scheduler: Option<Scheduler>,
    pub target: &'a Target,
    pub origin: &'a Origin,
    pub connections: u32,
    pub seed: u64,
    pub long_lived: bool,
}

impl<'a> LabRun<'a> {
    /// The app's default run: 1,000 short connections, seed 1.
    pub fn new(
        mode: Mode,
        scheduler: Option<Scheduler>,
        target: &'a Target,
        origin: &'a Origin,
        code: replay::Code,
    ) -> LabRun<'a> {
        LabRun {
            code,
            mode,
            scheduler,
            target,
            origin,
            connections: 1000,
            seed: 1,
            long_lived: false,
        }
    }
}

/// Where a run's connections went, measured by replaying them through the
/// model (sorted by label).
pub fn distribution(cluster: &Cluster, run: &LabRun<'_>) -> Vec<Bucket> {
    let mut lab = LbLab::new(cluster, run);
    while lab.step(usize::MAX) > 0 {}
    lab.buckets()
}

/// How a lab connection ended, for the app to name in its language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Landing {
    /// Answered by the endpoint (a Pod, or an address outside the cluster).
    Delivered,
    /// Reached the endpoint, which did not answer.
    TimedOut,
    Dropped,
    Rejected,
    /// Answered by the node itself.
    Node,
    Unrouted,
    NoSuchName,
}

/// The load-balancing lab run in slices: [`LbLab::step`] traces up to a
/// given number of connections, so the app can redraw the chart between
/// frames. Connections share one [`WorldState`] (round-robin positions,
/// active connection counts, affinity), exactly as [`distribution`] does in
/// one go: the counts after the last step are the same.
#[derive(Clone, Debug)]
pub struct LbLab {
    code: replay::Code,
    cluster: Cluster,
    mode: Mode,
    scheduler: Option<Scheduler>,
    packets: Vec<SentPacket>,
    /// What kube-proxy has synced during the whole run, when it does not
    /// change (the fast path); `None` replays everything on the first step.
    steady: Option<Vec<EndpointSlice>>,
    state: WorldState,
    next: usize,
    counts: BTreeMap<(Landing, String, Option<SocketAddr>), u32>,
}

impl LbLab {
    pub fn new(cluster: &Cluster, run: &LabRun<'_>) -> LbLab {
        let packets = lab_packets(
            run.target,
            run.origin,
            run.connections,
            run.seed,
            run.long_lived,
        );
        let steady = steady_slices(cluster, &packets);
        LbLab {
            code: run.code,
            cluster: cluster.clone(),
            mode: run.mode,
            scheduler: run.scheduler,
            packets,
            steady,
            state: WorldState::default(),
            next: 0,
            counts: BTreeMap::new(),
        }
    }

    /// Connections in the run.
    pub fn total(&self) -> usize {
        self.packets.len()
    }

    /// Connections traced so far.
    pub fn done(&self) -> usize {
        self.next
    }

    /// Trace up to `max` more connections; returns how many were traced
    /// (0 once the run is complete).
    pub fn step(&mut self, max: usize) -> usize {
        let from = self.next;
        let to = from.saturating_add(max.max(1)).min(self.packets.len());
        if from >= to {
            return 0;
        }
        let traces = match &self.steady {
            Some(slices) => {
                let sim = Sim::new(
                    &self.cluster,
                    slices,
                    self.mode,
                    self.scheduler,
                    self.code.compilers,
                );
                trace_all(&sim, &self.packets[from..to], &mut self.state)
            }
            None => {
                // Not steady: replay everything at once (it threads its own state).
                let all = run(
                    &self.cluster,
                    (self.mode, self.scheduler),
                    &self.packets,
                    self.code,
                );
                self.next = self.packets.len();
                for t in &all {
                    self.count(t);
                }
                return all.len();
            }
        };
        for t in &traces {
            self.count(t);
        }
        self.next = to;
        to - from
    }

    fn count(&mut self, t: &Trace) {
        let key = match &t.outcome {
            Outcome::Delivered { pod, endpoint, .. } => (
                Landing::Delivered,
                pod.as_ref()
                    .map(|p| p.name.clone())
                    .unwrap_or_else(|| endpoint.to_string()),
                Some(*endpoint),
            ),
            Outcome::TimedOut { endpoint, .. } => (
                Landing::TimedOut,
                pod_label(&self.cluster, *endpoint),
                Some(*endpoint),
            ),
            Outcome::Dropped { .. } => (Landing::Dropped, String::new(), None),
            Outcome::Rejected { .. } => (Landing::Rejected, String::new(), None),
            Outcome::AcceptedByNode { node } => (Landing::Node, node.clone(), None),
            // An ExternalName leaves the cluster: no rule and no Pod of it.
            Outcome::Unrouted | Outcome::ExternalName { .. } => {
                (Landing::Unrouted, String::new(), None)
            }
            Outcome::NoSuchName { .. } => (Landing::NoSuchName, String::new(), None),
            // A proxy's own answer: a success when it is one (a redirect),
            // else refused; either way no backend Pod was reached.
            Outcome::Answered { pod, status } => match status {
                Some(s) if *s < 400 => (Landing::Delivered, pod.name.clone(), None),
                _ => (Landing::Rejected, String::new(), None),
            },
        };
        *self.counts.entry(key).or_default() += 1;
    }

    /// The counts so far, sorted by label (endpoints) then outcome.
    pub fn buckets(&self) -> Vec<Bucket> {
        let mut out: Vec<Bucket> = self
            .counts
            .iter()
            .map(|((landing, name, endpoint), count)| Bucket {
                label: match landing {
                    Landing::Delivered => name.clone(),
                    Landing::TimedOut => format!("{name} (timed out)"),
                    Landing::Dropped => "dropped".into(),
                    Landing::Rejected => "rejected".into(),
                    Landing::Node => format!("node {name}"),
                    Landing::Unrouted => "unrouted".into(),
                    Landing::NoSuchName => "no such name".into(),
                },
                landing: *landing,
                name: name.clone(),
                endpoint: *endpoint,
                count: *count,
            })
            .collect();
        crate::util::order::sort(&mut out);
        out
    }
}

/// What theory predicts for a distribution run.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Expectation {
    /// Each connection picks uniformly at random: each endpoint's share tends
    /// to 1/n (iptables `statistic`, nftables `numgen random`, IPVS `mh`
    /// and `dh` over many clients...).
    Random { endpoints: Vec<String>, share: f64 },
    /// Taken in turn: after `k × n` connections each endpoint has exactly `k`
    /// (IPVS `rr`/`wrr` with equal weights, the userspace proxy).
    RoundRobin { endpoints: Vec<String>, share: f64 },
    /// The endpoint with the fewest (active) connections wins, so with
    /// long-lived connections the counts stay within one of each other
    /// (IPVS `lc`, `wlc`, `sed`, `nq`).
    CountDriven { endpoints: Vec<String>, share: f64 },
    /// One client always lands on the same endpoint (IPVS `sh`, `dh` and
    /// `mh` hash the addresses; `sessionAffinity: ClientIP` remembers it).
    OneEndpoint { endpoints: Vec<String>, why: String },
    /// No endpoint can be reached.
    Nothing,
}

/// What [`distribution`] of `lab` should show, whatever its number of
/// connections and seed. The candidate endpoints come from tracing one packet.
pub fn expected_share(cluster: &Cluster, lab: &LabRun<'_>) -> Expectation {
    let LabRun {
        code,
        mode,
        scheduler,
        target,
        origin,
        ..
    } = *lab;
    let packets = lab_packets(target, origin, 1, 0, false);
    let traces = run(cluster, (mode, scheduler), &packets, code);
    let Some(first) = traces.first() else {
        return Expectation::Nothing;
    };
    let mut endpoints: Vec<String> = first
        .endpoints
        .iter()
        .map(|e| pod_label(cluster, *e))
        .collect();
    crate::util::order::sort(&mut endpoints);
    endpoints.dedup();
    if endpoints.is_empty() {
        return Expectation::Nothing;
    }
    let share = 1.0 / endpoints.len() as f64;
    let affinity = cluster
        .service(&target.service)
        .and_then(|s| s.session_affinity_seconds)
        .is_some();
    if affinity {
        return Expectation::OneEndpoint {
            endpoints,
            why: "sessionAffinity: ClientIP sends every connection of one client to the endpoint it first reached".into(),
        };
    }
    let sched = scheduler.unwrap_or(cluster.proxy.ipvs_scheduler);
    match mode {
        // Cilium's Maglev hashes each connection's addresses and ports: a
        // new source port each time spreads like a random pick.
        Mode::Iptables | Mode::Nftables | Mode::Cilium => Expectation::Random { endpoints, share },
        Mode::Userspace => Expectation::RoundRobin { endpoints, share },
        Mode::Ipvs => match sched {
            Scheduler::Rr | Scheduler::Wrr => Expectation::RoundRobin { endpoints, share },
            Scheduler::Lc | Scheduler::Wlc | Scheduler::Sed | Scheduler::Nq => {
                Expectation::CountDriven { endpoints, share }
            }
            Scheduler::Sh | Scheduler::Dh | Scheduler::Mh => Expectation::OneEndpoint {
                endpoints,
                why: format!(
                    "the {} scheduler hashes the addresses, and one client's address never changes",
                    sched.as_str()
                ),
            },
        },
    }
}

/// One point of the scaling lab.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ScalePoint {
    pub mode: Mode,
    pub n_services: usize,
    pub endpoints_per_service: usize,
    /// Lines of the compiled ruleset.
    pub rules: usize,
    /// Rules compared for a new connection to the first Service.
    pub compared_first: usize,
    /// ... and to the last Service.
    pub compared_last: usize,
}

const LAB_NODE: &str = "lab-node";

fn v4(x: u32) -> IpAddr {
    IpAddr::V4(Ipv4Addr::from(x))
}

/// Service `i`'s ClusterIP: 10.96.0.1 + i (the 10.96.0.0/12 range holds a
/// million).
fn lab_cluster_ip(i: usize) -> IpAddr {
    v4(u32::from(Ipv4Addr::new(10, 96, 0, 1)).wrapping_add(i as u32))
}

/// A synthetic cluster: one node, `n` ClusterIP Services `svc-00000`… of
/// port 80, each with `k` ready endpoints (10.128.0.0/9, port 8080) given
/// directly as EndpointSlices, so no Pods are needed.
pub fn synthetic_cluster(n: usize, k: usize) -> Cluster {
    let mut c = Cluster {
        nodes: vec![Node {
            name: LAB_NODE.into(),
            labels: crate::model::Labels::new(),
            addresses: vec![(
                NodeAddressKind::InternalIP,
                v4(u32::from(Ipv4Addr::new(192, 168, 0, 10))),
            )],
            pod_cidrs: "10.244.0.0/24".parse().into_iter().collect(),
            zone: None,
            taints: Vec::new(),
            unschedulable: false,
            max_pods: crate::model::DEFAULT_MAX_PODS,
            addresses_unstated: false,
        }],
        ..Cluster::default()
    };
    c.service_cidrs = "10.96.0.0/12".parse().into_iter().collect();
    c.proxy.cluster_cidrs = "10.244.0.0/16".parse().into_iter().collect();
    c.proxy_config_given = true;
    let ep_base = u32::from(Ipv4Addr::new(10, 128, 0, 0));
    for i in 0..n {
        let id = NamespacedName::new("default", format!("svc-{i:05}"));
        c.services.push(Service {
            id: id.clone(),
            service_type: ServiceType::ClusterIP,
            cluster_ips: vec![lab_cluster_ip(i)],
            headless: false,
            selector: None,
            ports: vec![ServicePort {
                name: "http".into(),
                protocol: Protocol::Tcp,
                port: 80,
                target_port: PortRef::Number(8080),
                node_port: None,
            }],
            external_ips: Vec::new(),
            load_balancer_ips: Vec::new(),
            load_balancer_proxy_ips: Vec::new(),
            load_balancer_assumed: false,
            load_balancer_source_ranges: Vec::new(),
            external_traffic_policy: TrafficPolicy::Cluster,
            internal_traffic_policy: TrafficPolicy::Cluster,
            health_check_node_port: None,
            session_affinity_seconds: None,
            publish_not_ready_addresses: false,
            external_name: None,
            traffic_distribution: None,
            load_balancer_class: None,
            cilium: Default::default(),
        });
        c.endpoint_slices.push(EndpointSlice {
            id: NamespacedName::new("default", format!("svc-{i:05}-lab")),
            service_name: id.name.clone(),
            family: IpFamily::V4,
            endpoints: (0..k)
                .map(|j| Endpoint {
                    addresses: vec![v4(ep_base.wrapping_add((i * k + j) as u32))],
                    ready: true,
                    serving: true,
                    terminating: false,
                    node_name: None,
                    zone: None,
                    target_pod: None,
                    hints: Default::default(),
                    hostname: None,
                })
                .collect(),
            ports: vec![EndpointPort {
                name: "http".into(),
                port: 8080,
                protocol: Protocol::Tcp,
            }],
            source: SliceSource::Input,
            cilium_weight: None,
        });
    }
    c
}

/// Compile the synthetic cluster of `n_services` × `endpoints_per_service`
/// in `mode` (by its compiler among `compilers`) and trace a Pod's
/// connection to the first and the last Service.
pub fn scale_point(
    n_services: usize,
    endpoints_per_service: usize,
    mode: Mode,
    compilers: Compilers,
) -> ScalePoint {
    let cluster = synthetic_cluster(n_services, endpoints_per_service);
    let mut point = ScalePoint {
        mode,
        n_services,
        endpoints_per_service,
        rules: 0,
        compared_first: 0,
        compared_last: 0,
    };
    let Some(input) =
        crate::net::proxy::build_input(&cluster, &cluster.endpoint_slices, LAB_NODE, IpFamily::V4)
    else {
        return point;
    };
    let dp = compilers.compile(mode, &input, CompileOptions::default());
    point.rules = dp.rule_count();
    let client = SocketAddr::new(v4(u32::from(Ipv4Addr::new(10, 244, 0, 5))), 40000);
    let compared = |i: usize| {
        let pkt = Packet::new(
            client,
            SocketAddr::new(lab_cluster_ip(i), 80),
            Protocol::Tcp,
        );
        let mut state = NodeState::default();
        let mut chooser = Chooser::new(1);
        dp.process(
            &pkt,
            Hook::Prerouting,
            &mut state,
            &mut chooser,
            &AllAnswer,
            LAB_START_MS,
        )
        .rules_compared
    };
    if n_services > 0 {
        point.compared_first = compared(0);
        point.compared_last = compared(n_services - 1);
    }
    point
}

/// The scaling lab run in slices: one [`ScalePoint`] per [`ScaleLab::step`],
/// sizes in the outer loop and modes in the inner, so the app can draw
/// progress between calls.
#[derive(Clone, Debug)]
pub struct ScaleLab {
    compilers: Compilers,
    sizes: Vec<usize>,
    modes: Vec<Mode>,
    endpoints_per_service: usize,
    next: usize,
    pub points: Vec<ScalePoint>,
}

impl ScaleLab {
    /// The default sizes of the lab: 10 to 10,000 Services.
    pub const SIZES: [usize; 7] = [10, 30, 100, 300, 1000, 3000, 10_000];

    pub fn new(
        sizes: &[usize],
        modes: &[Mode],
        endpoints_per_service: usize,
        compilers: Compilers,
    ) -> ScaleLab {
        ScaleLab {
            compilers,
            sizes: sizes.to_vec(),
            modes: modes.to_vec(),
            endpoints_per_service,
            next: 0,
            points: Vec::new(),
        }
    }

    /// Points in total.
    pub fn total(&self) -> usize {
        self.sizes.len() * self.modes.len()
    }

    /// Points done so far.
    pub fn done(&self) -> usize {
        self.next
    }

    /// Compute the next point (and keep it in [`ScaleLab::points`]); `None`
    /// when every point is done.
    pub fn step(&mut self) -> Option<ScalePoint> {
        if self.modes.is_empty() || self.next >= self.total() {
            return None;
        }
        let size = *self.sizes.get(self.next / self.modes.len())?;
        let mode = *self.modes.get(self.next % self.modes.len())?;
        self.next += 1;
        let p = scale_point(size, self.endpoints_per_service, mode, self.compilers);
        self.points.push(p);
        Some(p)
    }
}
