//! The plan of one node's world, computed from kpv-core alone: which network
//! namespaces stand for what (the node, its Pods, external clients, the rest
//! of the network), which addresses and routes they get, what each server
//! listens on, the rules text to load (exactly what `kpv rules` prints), and
//! every flow to send with what `kpv trace` expects of it.
//!
//! Pure: no process, no socket, no clock. It never decides an expectation
//! itself; every expected outcome is read off a `kpv trace` of the flow.

use kpv_core::cli::{self, Common, Format, From, TraceArgs};
use kpv_core::model::packet::{IpFamily, Protocol};
use kpv_core::model::{Cluster, Mode, NodePortAddress};
use kpv_core::net::modes::Verdict;
use kpv_core::net::proxy::{self, ProxyInput, ServicePortName};
use kpv_core::net::trace::{self, Outcome};
use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// A scenario to check: its name and YAML text.
#[derive(Clone, Debug)]
pub struct Case {
    pub name: String,
    pub text: String,
}

/// Who owns an address in the world (and answers on it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Owner {
    Node,
    Rest,
    /// A local Pod (or endpoint) namespace, by index into [`World::pods`].
    Pod(usize),
}

/// A namespace standing for one Pod of the node (or one endpoint address
/// the EndpointSlices place on it without a Pod object).
#[derive(Clone, Debug)]
pub struct PodNs {
    pub label: String,
    pub ips: Vec<IpAddr>,
}

/// An external client: a namespace of its own, routed through the node.
#[derive(Clone, Debug)]
pub struct Client {
    pub label: String,
    pub ips: Vec<IpAddr>,
}

/// One endpoint a flow may reach.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    pub endpoint: SocketAddr,
    pub owner: Owner,
    /// The source address kpv says the endpoint sees.
    pub seen_source: IpAddr,
    pub masquerade: bool,
}

/// Where a flow is sent from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    Node,
    Client(usize),
    Pod(usize),
}

/// What the kernel must show for a flow, read off kpv's trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expect {
    /// DNAT to one of these endpoints, which sees the connection come
    /// from the given address (the client's, or the node's when kpv says
    /// masquerade: each candidate's as kpv traces a connection to it).
    Reach {
        candidates: Vec<Candidate>,
        /// ClientIP affinity: every connection goes to the one picked first.
        sticky: bool,
    },
    /// REJECT: a refused connection.
    Refused,
    /// DROP: a timeout.
    Timeout,
    /// Not touched, addressed to the node: the node itself answers.
    Node,
    /// Not touched, addressed elsewhere: it leaves the node and the rest of
    /// the network answers on the address it was sent to.
    Leaves,
}

/// One flow: connections (TCP) or datagrams (UDP) from a source to a
/// destination, and kpv's expectation.
#[derive(Clone, Debug)]
pub struct Flow {
    pub id: usize,
    pub source: Source,
    pub src: IpAddr,
    pub dst: SocketAddr,
    pub protocol: Protocol,
    /// What the destination is, for messages: `ClusterIP of ns/svc:port`.
    pub what: String,
    pub service: Option<ServicePortName>,
    pub expect: Expect,
    /// kpv's verdict and candidates, as `kpv trace` prints them.
    pub kpv: String,
}

/// What a server namespace listens on.
#[derive(Clone, Debug, Default)]
pub struct Listen {
    pub tcp: BTreeSet<u16>,
    pub udp: BTreeSet<SocketAddr>,
}

impl Listen {
    fn add(&mut self, protocol: Protocol, at: SocketAddr) {
        match protocol {
            Protocol::Tcp => {
                self.tcp.insert(at.port());
            }
            Protocol::Udp => {
                self.udp.insert(at);
            }
            Protocol::Sctp => {}
        }
    }
}

/// Everything needed to build and check one node's world.
#[derive(Clone, Debug)]
pub struct World {
    pub case: String,
    pub mode: Mode,
    pub node: String,
    /// The rules per family, exactly as `kpv rules` prints them (joined by
    /// an empty line, they are its output).
    pub rules: Vec<(IpFamily, String)>,
    /// `kpv rules`' whole output, to check the split above against.
    pub rules_output: String,
    /// nfacct objects the rules name (kube-proxy creates them at start).
    pub nfacct: Vec<String>,
    /// `net.ipv4.conf.all.route_localnet=1`, as kube-proxy sets it.
    pub route_localnet: bool,
    /// The node's addresses, the primary of each family first.
    pub node_ips: Vec<IpAddr>,
    /// Per family: the address on the node's side of every Pod's veth (the
    /// Pod CIDR's gateway, else the node's primary address).
    pub gateways: BTreeMap<IpFamily, IpAddr>,
    pub pods: Vec<PodNs>,
    pub clients: Vec<Client>,
    /// Addresses the rest of the network owns (other nodes, remote
    /// endpoints, Service addresses a packet may leave the node for).
    pub rest_ips: BTreeSet<IpAddr>,
    pub listen_node: Listen,
    pub listen_rest: Listen,
    pub listen_pods: Vec<Listen>,
    pub flows: Vec<Flow>,
    /// Flows left out, and why (a trace that crosses to another node).
    pub skipped: Vec<String>,
}

impl World {
    pub fn primary(&self, family: IpFamily) -> Option<IpAddr> {
        self.node_ips
            .iter()
            .find(|ip| IpFamily::of(ip) == family)
            .copied()
    }

    pub fn owner_label(&self, o: Owner) -> String {
        match o {
            Owner::Node => format!("node {}", self.node),
            Owner::Rest => "the rest of the network".into(),
            Owner::Pod(i) => self
                .pods
                .get(i)
                .map(|p| format!("pod {}", p.label))
                .unwrap_or_default(),
        }
    }
}

/// Which nodes of a case to check, in order.
pub fn nodes_of(case: &Case) -> Result<Vec<String>, String> {
    let (cluster, _) = load(case)?;
    Ok(cluster.nodes.iter().map(|n| n.name.clone()).collect())
}

fn load(case: &Case) -> Result<(Cluster, String), String> {
    cli::load(
        std::slice::from_ref(&case.text),
        std::slice::from_ref(&case.name),
    )
    .map_err(|o| o.stderr.trim_end().to_string())
}

fn common(mode: Mode, node: &str) -> Common {
    Common {
        files: Vec::new(),
        mode: Some(mode),
        scheduler: None,
        node: Some(node.to_string()),
        format: Format::Text,
        view: None,
    }
}

/// Addresses an external client must not take: everything the cluster uses.
fn taken(cluster: &Cluster) -> (BTreeSet<IpAddr>, Vec<ipnet::IpNet>) {
    let mut ips = BTreeSet::new();
    let mut nets: Vec<ipnet::IpNet> = cluster.service_cidrs.clone();
    nets.extend(cluster.proxy.cluster_cidrs.iter().copied());
    for n in &cluster.nodes {
        ips.extend(n.addresses.iter().map(|(_, a)| *a));
        nets.extend(n.pod_cidrs.iter().copied());
    }
    for p in &cluster.pods {
        ips.extend(p.ips.iter().copied());
    }
    for s in &cluster.services {
        ips.extend(s.cluster_ips.iter().copied());
        ips.extend(s.external_ips.iter().copied());
        ips.extend(s.load_balancer_addresses().copied());
        nets.extend(s.load_balancer_source_ranges.iter().copied());
    }
    for sl in &cluster.endpoint_slices {
        for e in &sl.endpoints {
            ips.extend(e.addresses.iter().copied());
        }
    }
    (ips, nets)
}

/// The default external client of a family: outside every range the
/// cluster uses (and so outside every loadBalancerSourceRanges).
fn outside_client(family: IpFamily, ips: &BTreeSet<IpAddr>, nets: &[ipnet::IpNet]) -> IpAddr {
    let v4 = [
        [203, 0, 113, 200],
        [198, 18, 7, 7],
        [100, 64, 7, 7],
        [172, 31, 250, 7],
    ];
    let candidates: Vec<IpAddr> = match family {
        IpFamily::V4 => v4.iter().map(|o| IpAddr::V4(Ipv4Addr::from(*o))).collect(),
        IpFamily::V6 => [0x2001_0db8_00ff_0000_u128 << 64 | 7, 0xfd7e_u128 << 112 | 7]
            .iter()
            .map(|v| IpAddr::V6(Ipv6Addr::from(*v)))
            .collect(),
    };
    candidates
        .iter()
        .find(|c| !ips.contains(c) && !nets.iter().any(|n| n.contains(*c)))
        .or(candidates.first())
        .copied()
        .unwrap_or(IpAddr::V4(Ipv4Addr::new(203, 0, 113, 200)))
}

/// An address inside `range` for a client the source ranges allow.
fn inside_client(range: &ipnet::IpNet, ips: &BTreeSet<IpAddr>) -> Option<IpAddr> {
    range
        .hosts()
        .take(64)
        .skip(6)
        .chain(range.hosts().take(6))
        .find(|ip| !ips.contains(ip))
}

fn nth_from_end(net: &ipnet::IpNet, n: u32) -> IpAddr {
    match net {
        ipnet::IpNet::V4(v) => {
            IpAddr::V4(Ipv4Addr::from(u32::from(v.broadcast()).saturating_sub(n)))
        }
        ipnet::IpNet::V6(v) => IpAddr::V6(Ipv6Addr::from(
            u128::from(v.broadcast()).saturating_sub(u128::from(n)),
        )),
    }
}

fn first_host(net: &ipnet::IpNet) -> IpAddr {
    match net {
        ipnet::IpNet::V4(v) => IpAddr::V4(Ipv4Addr::from(u32::from(v.network()).wrapping_add(1))),
        ipnet::IpNet::V6(v) => IpAddr::V6(Ipv6Addr::from(u128::from(v.network()).wrapping_add(1))),
    }
}

/// The nfacct objects an iptables text names (`-m nfacct --nfacct-name X`).
pub fn nfacct_names(text: &str) -> Vec<String> {
    let mut v: BTreeSet<String> = BTreeSet::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        while let Some(w) = words.next() {
            if w == "--nfacct-name" {
                if let Some(n) = words.next() {
                    v.insert(n.trim_matches('"').to_string());
                }
            }
        }
    }
    v.into_iter().collect()
}

/// One destination of the node's world.
struct Dest {
    dst: SocketAddr,
    protocol: Protocol,
    what: String,
    service: Option<ServicePortName>,
    /// Only the node itself can address it (127.0.0.1).
    node_only: bool,
}

/// Plan the world of `node` for `case` in `mode`.
pub fn plan(case: &Case, mode: Mode, node: &str) -> Result<World, String> {
    let (mut cluster, _) = load(case)?;
    let common = common(mode, node);
    let (node, mode) = cli::proxy_target(&mut cluster, &common)?;
    let planes = cli::rules_planes(&cluster, &node, mode, None)?;
    let rules: Vec<(IpFamily, String)> = planes
        .iter()
        .map(|(f, dp)| (*f, dp.render_text()))
        .collect();
    // What `kpv rules --node N --mode M` prints, through the CLI itself.
    let out = cli::run(
        &cli::Command::Rules(common.clone()),
        std::slice::from_ref(&case.text),
        std::slice::from_ref(&case.name),
    );
    if out.code != 0 {
        return Err(format!("kpv rules failed: {}", out.stderr.trim_end()));
    }
    let nfacct = if mode == Mode::Iptables {
        nfacct_names(&out.stdout)
    } else {
        Vec::new()
    };
    let slices = kpv_core::net::controller::steady_slices(&cluster);
    let slices = proxy::slices_seen_by(mode, &slices);
    let inputs: Vec<ProxyInput> = [IpFamily::V4, IpFamily::V6]
        .into_iter()
        .filter(|f| rules.iter().any(|(rf, _)| rf == f))
        .filter_map(|f| proxy::build_input(&cluster, &slices, &node, f))
        .collect();
    let the_node = cluster
        .node(&node)
        .ok_or_else(|| format!("no node {node}"))?
        .clone();
    let (node_ips, gateways) = node_addresses(&the_node);
    let route_localnet = mode == Mode::Iptables
        && cluster.proxy.iptables_localhost_nodeports
        && (cluster.proxy.node_port_addresses.is_empty()
            || cluster.proxy.node_port_addresses.iter().any(|a| match a {
                NodePortAddress::Primary => false,
                NodePortAddress::Cidr(c) => c.contains(&IpAddr::V4(Ipv4Addr::LOCALHOST)),
            }));
    let (pods, pod_of_ip, client_pod) = pod_namespaces(&cluster, &the_node, &node_ips, &inputs);
    let (taken_ips, taken_nets) = taken(&cluster);
    let clients = external_clients(&inputs, &taken_ips, &taken_nets);
    let dests = destinations(&cluster, &inputs, &node_ips, &taken_ips);
    let sources = sources(clients.len(), client_pod, &inputs, &pod_of_ip);

    let mut world = World {
        case: case.name.clone(),
        mode,
        node: node.clone(),
        rules,
        rules_output: out.stdout,
        nfacct,
        route_localnet,
        node_ips,
        gateways,
        listen_pods: vec![Listen::default(); pods.len()],
        pods,
        clients,
        rest_ips: BTreeSet::new(),
        listen_node: Listen::default(),
        listen_rest: Listen::default(),
        flows: Vec::new(),
        skipped: Vec::new(),
    };
    // Every endpoint answers where it lives, candidate or not, so a packet
    // the kernel sends somewhere kpv did not say is seen.
    for input in &inputs {
        for (name, eps) in &input.endpoints {
            for e in eps {
                let o = owner_of(&world, &pod_of_ip, e.addr.ip());
                listen(&mut world, o, name.protocol, e.addr);
            }
        }
    }
    let mut seen: BTreeSet<(Source, IpAddr, SocketAddr, Protocol)> = BTreeSet::new();
    for (source, only) in &sources {
        for d in &dests {
            if only.is_some() && d.service.as_ref() != only.as_ref() {
                continue;
            }
            if d.node_only && *source != Source::Node {
                continue;
            }
            let Some(src) = source_address(&world, *source, d.dst.ip()) else {
                continue;
            };
            // Only a client in a source range (or outside all of them)
            // needs to try the load balancers: the others are covered by
            // the first client.
            if let Source::Client(i) = source {
                if *i > 0 && !d.what.starts_with("LoadBalancer IP") {
                    continue;
                }
            }
            if !seen.insert((*source, src, d.dst, d.protocol)) {
                continue;
            }
            add_flow(&mut world, &cluster, &pod_of_ip, *source, src, d)?;
        }
    }
    Ok(world)
}

/// The node's addresses (primary ones first) and each family's gateway
/// for its Pods (the first address of its Pod CIDR, else its own).
fn node_addresses(n: &kpv_core::model::Node) -> (Vec<IpAddr>, BTreeMap<IpFamily, IpAddr>) {
    let mut node_ips: Vec<IpAddr> = Vec::new();
    for f in [IpFamily::V4, IpFamily::V6] {
        if let Some(p) = n.primary_ip(f) {
            node_ips.push(p);
        }
    }
    for (_, a) in &n.addresses {
        if !node_ips.contains(a) {
            node_ips.push(*a);
        }
    }
    let mut gateways = BTreeMap::new();
    for f in [IpFamily::V4, IpFamily::V6] {
        let gw = n
            .pod_cidr(f)
            .map(|c| first_host(&c))
            .or_else(|| n.primary_ip(f));
        if let Some(gw) = gw {
            gateways.insert(f, gw);
        }
    }
    (node_ips, gateways)
}

/// Pods of this node (and endpoints placed here without a Pod object):
/// one namespace each, grouped by Pod; which namespace has each address;
/// and the Pod to send from (the first, else one made up in the node's Pod
/// CIDR).
fn pod_namespaces(
    cluster: &Cluster,
    the_node: &kpv_core::model::Node,
    node_ips: &[IpAddr],
    inputs: &[ProxyInput],
) -> (Vec<PodNs>, BTreeMap<IpAddr, usize>, Option<usize>) {
    let mut pods: Vec<PodNs> = Vec::new();
    let mut pod_of_ip: BTreeMap<IpAddr, usize> = BTreeMap::new();
    for p in &cluster.pods {
        if p.node_name.as_deref() != Some(the_node.name.as_str()) || p.ips.is_empty() || p.finished
        {
            continue;
        }
        let ips: Vec<IpAddr> = p
            .ips
            .iter()
            .filter(|ip| !node_ips.contains(ip) && !pod_of_ip.contains_key(ip))
            .copied()
            .collect();
        if ips.is_empty() {
            continue;
        }
        for ip in &ips {
            pod_of_ip.insert(*ip, pods.len());
        }
        pods.push(PodNs {
            label: p.id.to_string(),
            ips,
        });
    }
    for input in inputs {
        for eps in input.endpoints.values() {
            for e in eps {
                let ip = e.addr.ip();
                if !e.is_local || node_ips.contains(&ip) || pod_of_ip.contains_key(&ip) {
                    continue;
                }
                pod_of_ip.insert(ip, pods.len());
                pods.push(PodNs {
                    label: e
                        .pod
                        .as_ref()
                        .map(|p| p.to_string())
                        .unwrap_or_else(|| format!("endpoint {ip}")),
                    ips: vec![ip],
                });
            }
        }
    }
    let client_pod = if pods.is_empty() {
        let ips: Vec<IpAddr> = [IpFamily::V4, IpFamily::V6]
            .into_iter()
            .filter_map(|f| the_node.pod_cidr(f))
            .map(|c| nth_from_end(&c, 5))
            .collect();
        if ips.is_empty() {
            None
        } else {
            for ip in &ips {
                pod_of_ip.insert(*ip, pods.len());
            }
            pods.push(PodNs {
                label: "client pod".into(),
                ips,
            });
            Some(pods.len() - 1)
        }
    } else {
        Some(0)
    };
    (pods, pod_of_ip, client_pod)
}

/// External clients: one outside every range, one inside each
/// loadBalancerSourceRanges range.
fn external_clients(
    inputs: &[ProxyInput],
    taken_ips: &BTreeSet<IpAddr>,
    taken_nets: &[ipnet::IpNet],
) -> Vec<Client> {
    let mut clients = vec![Client {
        label: "external client".into(),
        ips: inputs
            .iter()
            .map(|i| outside_client(i.family, taken_ips, taken_nets))
            .collect(),
    }];
    let mut ranges: BTreeSet<ipnet::IpNet> = BTreeSet::new();
    for input in inputs {
        for s in input.services.values() {
            ranges.extend(s.load_balancer_source_ranges.iter().copied());
        }
    }
    for r in &ranges {
        if clients[0].ips.iter().any(|c| r.contains(c)) {
            continue;
        }
        if let Some(ip) = inside_client(r, taken_ips) {
            clients.push(Client {
                label: format!("client in {r}"),
                ips: vec![ip],
            });
        }
    }
    clients
}

/// Every address a packet can be sent to: each Service port's ClusterIP,
/// external and load-balancer IPs, NodePorts and health-check NodePorts;
/// a ClusterIP's port no Service has; an unallocated ClusterIP.
fn destinations(
    cluster: &Cluster,
    inputs: &[ProxyInput],
    node_ips: &[IpAddr],
    taken_ips: &BTreeSet<IpAddr>,
) -> Vec<Dest> {
    let mut dests: Vec<Dest> = Vec::new();
    let mut hc_done: BTreeSet<(IpAddr, u16)> = BTreeSet::new();
    for input in inputs {
        let fam_node_ips: Vec<IpAddr> = node_ips
            .iter()
            .filter(|ip| IpFamily::of(ip) == input.family)
            .copied()
            .collect();
        for (name, s) in &input.services {
            if s.name.protocol == Protocol::Sctp {
                continue;
            }
            let mut add = |ip: IpAddr, port: u16, what: &str, node_only: bool| {
                dests.push(Dest {
                    dst: SocketAddr::new(ip, port),
                    protocol: name.protocol,
                    what: format!("{what} of {name}"),
                    service: Some(name.clone()),
                    node_only,
                })
            };
            if let Some(ip) = s.cluster_ip {
                add(ip, s.port, "ClusterIP", false);
            }
            for ip in &s.external_ips {
                add(*ip, s.port, "externalIP", false);
            }
            for ip in &s.load_balancer_ips {
                add(*ip, s.port, "LoadBalancer IP", false);
            }
            if let Some(svc) = cluster.service(&name.service) {
                for ip in svc
                    .load_balancer_proxy_ips
                    .iter()
                    .filter(|ip| IpFamily::of(ip) == input.family)
                {
                    add(*ip, s.port, "LoadBalancer IP (ipMode Proxy)", false);
                }
            }
            if s.node_port != 0 {
                for ip in &fam_node_ips {
                    add(*ip, s.node_port, "NodePort", false);
                }
                if input.family == IpFamily::V4 {
                    add(
                        IpAddr::V4(Ipv4Addr::LOCALHOST),
                        s.node_port,
                        "localhost NodePort",
                        true,
                    );
                }
            }
            if s.health_check_node_port != 0 {
                for ip in &fam_node_ips {
                    if hc_done.insert((*ip, s.health_check_node_port)) {
                        dests.push(Dest {
                            dst: SocketAddr::new(*ip, s.health_check_node_port),
                            protocol: Protocol::Tcp,
                            what: format!("health check NodePort of {}", name.service),
                            service: None,
                            node_only: false,
                        });
                    }
                }
            }
        }
        dests.extend(unused_addresses(input, taken_ips));
    }
    dests
}

/// A ClusterIP's port no Service uses, and an unallocated ClusterIP.
fn unused_addresses(input: &ProxyInput, taken_ips: &BTreeSet<IpAddr>) -> Vec<Dest> {
    let mut dests = Vec::new();
    let mut used: BTreeMap<IpAddr, BTreeSet<u16>> = BTreeMap::new();
    for s in input.services.values() {
        if let Some(ip) = s.cluster_ip {
            used.entry(ip).or_default().insert(s.port);
        }
    }
    for (ip, ports) in &used {
        let port = (1..=u16::MAX)
            .map(|d| ports.iter().next().copied().unwrap_or(80).wrapping_add(d))
            .find(|p| *p > 0 && !ports.contains(p))
            .unwrap_or(1);
        dests.push(Dest {
            dst: SocketAddr::new(*ip, port),
            protocol: Protocol::Tcp,
            what: format!("ClusterIP {ip} on a port no Service has"),
            service: None,
            node_only: false,
        });
    }
    for cidr in &input.service_cidrs {
        let free = (2..40)
            .map(|n| nth_from_end(cidr, n))
            .find(|ip| !taken_ips.contains(ip));
        if let Some(ip) = free {
            dests.push(Dest {
                dst: SocketAddr::new(ip, 80),
                protocol: Protocol::Tcp,
                what: format!("unallocated address {ip} of the Service CIDR {cidr}"),
                service: None,
                node_only: false,
            });
        }
    }
    dests
}

/// Flows go from every source to every destination, and from each
/// endpoint to its own Service (hairpin).
fn sources(
    clients: usize,
    client_pod: Option<usize>,
    inputs: &[ProxyInput],
    pod_of_ip: &BTreeMap<IpAddr, usize>,
) -> Vec<(Source, Option<ServicePortName>)> {
    let mut sources: Vec<(Source, Option<ServicePortName>)> = vec![(Source::Node, None)];
    for i in 0..clients {
        sources.push((Source::Client(i), None));
    }
    if let Some(p) = client_pod {
        sources.push((Source::Pod(p), None));
    }
    let mut hairpins: BTreeSet<(usize, ServicePortName)> = BTreeSet::new();
    for input in inputs {
        for (name, eps) in &input.endpoints {
            for e in eps {
                if let Some(p) = pod_of_ip.get(&e.addr.ip()) {
                    hairpins.insert((*p, name.clone()));
                }
            }
        }
    }
    for (p, name) in hairpins {
        sources.push((Source::Pod(p), Some(name)));
    }
    sources
}

/// Who answers on `ip`: the node, one of its Pods, or the rest.
fn owner_of(w: &World, pod_of_ip: &BTreeMap<IpAddr, usize>, ip: IpAddr) -> Owner {
    if w.node_ips.contains(&ip) || ip.is_loopback() {
        Owner::Node
    } else if let Some(p) = pod_of_ip.get(&ip) {
        Owner::Pod(*p)
    } else {
        Owner::Rest
    }
}

/// The address `source` sends to `dst` from, if it has one of its family.
fn source_address(w: &World, source: Source, dst: IpAddr) -> Option<IpAddr> {
    let family = IpFamily::of(&dst);
    match source {
        Source::Node => {
            if dst.is_loopback() || w.node_ips.contains(&dst) {
                Some(dst)
            } else {
                w.primary(family)
            }
        }
        Source::Client(i) => w.clients[i]
            .ips
            .iter()
            .find(|ip| IpFamily::of(ip) == family)
            .copied(),
        Source::Pod(p) => w.pods[p]
            .ips
            .iter()
            .find(|ip| IpFamily::of(ip) == family)
            .copied(),
    }
}

/// Trace the flow from `src` to `d` with `kpv trace` and add it with what
/// kpv expects (or say why it is skipped), its servers listening.
fn add_flow(
    world: &mut World,
    cluster: &Cluster,
    pod_of_ip: &BTreeMap<IpAddr, usize>,
    source: Source,
    src: IpAddr,
    d: &Dest,
) -> Result<(), String> {
    let node = world.node.clone();
    let args = TraceArgs {
        src: src.to_string(),
        dst: d.dst.ip().to_string(),
        port: d.dst.port(),
        protocol: d.protocol,
        seed: 1,
        from: From::Node,
    };
    let t = cli::cli_trace(cluster, &node, None, &args)?;
    let kpv = format!(
        "kpv: {}{}, could reach [{}], masquerade {}",
        t.verdict.word(),
        t.verdict
            .endpoint()
            .map(|e| format!(" → {e}"))
            .unwrap_or_default(),
        t.endpoints
            .iter()
            .map(|e| e.to_string())
            .collect::<Vec<_>>()
            .join(", "),
        t.masquerade
    );
    let label = format!(
        "{} {src} → {} {} ({})",
        source_label(world, source),
        d.dst,
        d.protocol.as_lower(),
        d.what
    );
    if t.node.as_deref() != Some(node.as_str()) {
        world.skipped.push(format!(
            "{label}: kpv's trace crosses to node {}",
            t.node.as_deref().unwrap_or("-")
        ));
        return Ok(());
    }
    let expect = match &t.verdict {
        Verdict::Dnat { endpoint } => {
            let mut c = t.endpoints.clone();
            if c.is_empty() {
                c.push(*endpoint);
            }
            let per = every_candidate(cluster, &node, &args, &t, c.len())?;
            let sticky = d
                .service
                .as_ref()
                .and_then(|n| cluster.service(&n.service))
                .is_some_and(|s| s.session_affinity_seconds.is_some());
            let mut candidates = Vec::new();
            for e in c {
                let Some((seen_source, masquerade)) = per.get(&e).copied() else {
                    return Err(format!(
                        "{label}: no seed of kpv trace reaches its candidate {e}"
                    ));
                };
                candidates.push(Candidate {
                    endpoint: e,
                    owner: owner_of(world, pod_of_ip, e.ip()),
                    seen_source,
                    masquerade,
                });
            }
            Expect::Reach { candidates, sticky }
        }
        Verdict::Reject { .. } => Expect::Refused,
        Verdict::Drop { .. } => Expect::Timeout,
        Verdict::Accept => Expect::Node,
        Verdict::None => match t.outcome {
            Outcome::AcceptedByNode { .. } => Expect::Node,
            Outcome::Unrouted => Expect::Leaves,
            _ => {
                world
                    .skipped
                    .push(format!("{label}: kpv's outcome {:?}", t.outcome));
                return Ok(());
            }
        },
        Verdict::Proxied { .. } => {
            world
                .skipped
                .push(format!("{label}: proxied by a userspace kube-proxy"));
            return Ok(());
        }
    };
    // Whatever kpv says, someone answers on the destination, so a packet
    // that is not translated shows where it went.
    let o = owner_of(world, pod_of_ip, d.dst.ip());
    listen(world, o, d.protocol, d.dst);
    if let Expect::Reach { candidates, .. } = &expect {
        for c in candidates.clone() {
            listen(world, c.owner, d.protocol, c.endpoint);
        }
    }
    let id = world.flows.len();
    world.flows.push(Flow {
        id,
        source,
        src,
        dst: d.dst,
        protocol: d.protocol,
        what: d.what.clone(),
        service: d.service.clone(),
        expect,
        kpv,
    });
    Ok(())
}

/// kpv's trace follows one random pick: trace again with other seeds
/// until every one of the `candidates` endpoints has been followed; for
/// each, the source address it sees and whether it was masqueraded.
fn every_candidate(
    cluster: &Cluster,
    node: &str,
    args: &TraceArgs,
    first: &trace::Trace,
    candidates: usize,
) -> Result<BTreeMap<SocketAddr, (IpAddr, bool)>, String> {
    let mut per: BTreeMap<SocketAddr, (IpAddr, bool)> = BTreeMap::new();
    let record = |t: &trace::Trace, per: &mut BTreeMap<SocketAddr, (IpAddr, bool)>| {
        if let (Some(e), Outcome::Delivered { source, .. }) = (t.verdict.endpoint(), &t.outcome) {
            per.entry(e).or_insert((source.ip(), t.masquerade));
        }
    };
    record(first, &mut per);
    let mut seed = 2;
    while per.len() < candidates && seed < 16 + 16 * candidates as u64 {
        let again = cli::cli_trace(
            cluster,
            node,
            None,
            &TraceArgs {
                seed,
                ..args.clone()
            },
        )?;
        record(&again, &mut per);
        seed += 1;
    }
    Ok(per)
}

fn listen(w: &mut World, o: Owner, protocol: Protocol, at: SocketAddr) {
    match o {
        Owner::Node => {
            if at.ip().is_loopback() || w.node_ips.contains(&at.ip()) {
                w.listen_node.add(protocol, at)
            } else {
                w.listen_node.tcp.insert(at.port());
            }
        }
        Owner::Rest => {
            w.rest_ips.insert(at.ip());
            w.listen_rest.add(protocol, at);
        }
        Owner::Pod(p) => {
            if let Some(l) = w.listen_pods.get_mut(p) {
                l.add(protocol, at);
            }
        }
    }
}

pub fn source_label(w: &World, s: Source) -> String {
    match s {
        Source::Node => format!("node {}", w.node),
        Source::Client(i) => w
            .clients
            .get(i)
            .map(|c| c.label.clone())
            .unwrap_or_default(),
        Source::Pod(p) => w
            .pods
            .get(p)
            .map(|p| format!("pod {}", p.label))
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preset(name: &str) -> Case {
        let path = format!(
            "{}/../tests/scenarios/{name}.yaml",
            env!("CARGO_MANIFEST_DIR")
        );
        Case {
            name: name.into(),
            text: std::fs::read_to_string(path).unwrap_or_default(),
        }
    }

    #[test]
    fn the_rules_to_load_are_what_kpv_rules_prints() {
        for name in ["packet-flows", "ipvs-ipv6", "iptables-overall"] {
            let case = preset(name);
            for node in nodes_of(&case).unwrap_or_default() {
                for mode in [Mode::Iptables, Mode::Nftables] {
                    let w = plan(&case, mode, &node).unwrap_or_else(|e| panic!("{name}: {e}"));
                    let joined: Vec<&str> = w.rules.iter().map(|(_, t)| t.as_str()).collect();
                    assert_eq!(joined.join("\n"), w.rules_output, "{name} {node} {mode:?}");
                    assert!(!w.flows.is_empty(), "{name} {node}");
                }
            }
        }
    }

    #[test]
    fn nfacct_names_are_read_off_the_rules() {
        let text = "-A KUBE-FORWARD -m conntrack --ctstate INVALID -m nfacct --nfacct-name ct_state_invalid_dropped_pkts -j DROP\n\
                    -A KUBE-NODEPORTS -m nfacct --nfacct-name localhost_nps_accepted_pkts -j X\n";
        assert_eq!(
            nfacct_names(text),
            vec![
                "ct_state_invalid_dropped_pkts",
                "localhost_nps_accepted_pkts"
            ]
        );
    }

    #[test]
    fn clients_stay_out_of_the_cluster_and_inside_source_ranges_where_asked() {
        let case = preset("iptables-overall");
        let w = plan(&case, Mode::Iptables, "test-node").unwrap_or_else(|e| panic!("{e}"));
        let range: ipnet::IpNet = "203.0.113.0/25".parse().unwrap_or_else(|e| panic!("{e:?}"));
        assert!(!range.contains(&w.clients[0].ips[0]), "{:?}", w.clients);
        assert!(w
            .clients
            .iter()
            .any(|c| c.ips.iter().any(|ip| range.contains(ip))));
        // A flow of every expectation kind exists in this upstream scenario.
        let kinds: BTreeSet<&str> = w
            .flows
            .iter()
            .map(|f| match f.expect {
                Expect::Reach { .. } => "reach",
                Expect::Refused => "refused",
                Expect::Timeout => "timeout",
                Expect::Node => "node",
                Expect::Leaves => "leaves",
            })
            .collect();
        assert_eq!(kinds.len(), 5, "{kinds:?}");
    }
}
