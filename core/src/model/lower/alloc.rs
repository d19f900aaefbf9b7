//! What the API server and controllers allocate, deterministically:
//! generated names (pod-template-hash, `generateName` suffixes), Cluster IPs
//! from the service CIDRs and NodePorts from their range, each at a position
//! given by a hash of the object's name so that it is stable when unrelated
//! objects are added.
//!
//! No clock and no unseeded randomness: the same input always allocates the same.

use super::families::{family_name, go_strings, FamilyPolicy};
use super::services::PendingService;
use super::*;
use crate::util::diag::Span;
use crate::util::sha256::prefix64;

/// Kubernetes' alphabet for generated names (no vowels, no confusable digits).
const SAFE_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// `rand.SafeEncodeString(fmt.Sprint(hash32))`, as pod-template-hash is made.
pub(super) fn pod_template_hash(seed: &str) -> String {
    let h = (prefix64(seed) & 0xffff_ffff) as u32;
    h.to_string()
        .bytes()
        .map(|b| SAFE_ALPHABET[(b as usize) % SAFE_ALPHABET.len()] as char)
        .collect()
}

/// A deterministic 5-character suffix, as `generateName` would append.
pub(crate) fn name_suffix(seed: &str) -> String {
    let mut h = prefix64(seed);
    (0..5)
        .map(|_| {
            let c = SAFE_ALPHABET[(h % SAFE_ALPHABET.len() as u64) as usize] as char;
            h /= SAFE_ALPHABET.len() as u64;
            c
        })
        .collect()
}

/// The n-th address of a network (wrapping never happens for valid n).
pub(super) fn nth_addr(net: &IpNet, n: u128) -> Option<IpAddr> {
    match net {
        IpNet::V4(v4) => {
            let base = u32::from(v4.network()) as u128;
            let size = 1u128 << (32 - v4.prefix_len());
            (n < size).then(|| IpAddr::V4(std::net::Ipv4Addr::from((base + n) as u32)))
        }
        IpNet::V6(v6) => {
            let base = u128::from(v6.network());
            let bits = 128 - v6.prefix_len() as u32;
            let fits = bits >= 128 || n < (1u128 << bits);
            fits.then(|| IpAddr::V6(std::net::Ipv6Addr::from(base + n)))
        }
    }
}

pub(super) fn net_size(net: &IpNet) -> u128 {
    let bits = (net.max_prefix_len() - net.prefix_len()) as u32;
    if bits >= 127 {
        u128::MAX
    } else {
        1u128 << bits
    }
}

/// What the API server refuses a Service for: the field, a hint, the
/// message and where the field was written.
type Problem = (String, &'static str, String, Option<Span>);

/// The service CIDRs allocation draws from, by family.
struct Pools {
    v4: Vec<IpNet>,
    v6: Vec<IpNet>,
    /// ServiceCIDR objects were given (else the defaults are assumed and
    /// any given ClusterIP is taken as written).
    known: bool,
    /// The family of the first CIDR: a Service's family when it asks none.
    default_family: IpFamily,
}

impl Pools {
    fn of(&self, f: IpFamily) -> &[IpNet] {
        match f {
            IpFamily::V4 => &self.v4,
            IpFamily::V6 => &self.v6,
        }
    }

    fn configured(&self, f: IpFamily) -> bool {
        !self.of(f).is_empty()
    }

    fn dual_stack(&self) -> bool {
        self.configured(IpFamily::V4) && self.configured(IpFamily::V6)
    }

    fn text(&self, f: IpFamily) -> String {
        let v: Vec<String> = self.of(f).iter().map(ToString::to_string).collect();
        v.join(",")
    }

    /// Inside a CIDR, and neither its network nor (IPv4) broadcast address.
    fn contains(&self, ip: &IpAddr) -> bool {
        self.of(IpFamily::of(ip)).iter().any(|c| {
            c.contains(ip) && *ip != c.network() && !(ip.is_ipv4() && *ip == c.broadcast())
        })
    }
}

/// What the Services accepted so far hold.
#[derive(Default)]
struct Taken {
    ips: BTreeSet<IpAddr>,
    node_ports: BTreeSet<u16>,
}

impl Builder {
    pub(super) fn allocate_services(&mut self, pending: Vec<PendingService>) {
        let pools = self.service_pools(&pending);
        let mut taken = Taken::default();
        let mut lb_taken = self.load_balancer_taken(&pending);
        // First, in input order (the order they would be created in), what
        // each Service claims itself: its families, its own ClusterIPs and
        // NodePorts. The API server refuses a Service whose claim fails, in
        // its words; a refused Service is not in the cluster.
        let mut accepted = Vec::new();
        let mut outside: Vec<IpAddr> = Vec::new();
        for mut p in pending {
            let problems = claim(&mut p, &pools, &mut taken, &mut outside);
            if problems.is_empty() {
                accepted.push(p);
            } else {
                self.refuse(&p, problems);
            }
        }
        // Then what the allocators fill in, in a stable order.
        crate::util::order::sort_by(&mut accepted, |a, b| a.svc.id.cmp(&b.svc.id));
        let mut services = Vec::new();
        for mut p in accepted {
            if let Some((field, hint, msg)) = self.fill(&mut p, &pools, &mut taken) {
                // Refused: what it took is released.
                for ip in &p.svc.cluster_ips {
                    taken.ips.remove(ip);
                }
                self.refuse(&p, vec![(field.into(), hint, msg, None)]);
                continue;
            }
            if p.svc.service_type != ServiceType::LoadBalancer {
                p.svc.load_balancer_ips.clear();
                p.svc.load_balancer_proxy_ips.clear();
                p.svc.load_balancer_source_ranges.clear();
            } else if p.svc.load_balancer_addresses().next().is_none() {
                self.assume_load_balancer(&mut p, &mut lb_taken);
            }
            self.service_port_paths.insert(
                p.svc.id.clone(),
                p.ports_at.iter().map(|(path, _)| path.clone()).collect(),
            );
            services.push(p.svc);
        }
        self.cluster.services = services;
        self.warn_outside_assumed_range(&outside);
    }

    /// The service CIDRs: the ServiceCIDR objects given, else the defaults
    /// of a cluster that has the families the Services ask for (kpv cannot
    /// know `--service-cluster-ip-range`, so a cluster without ServiceCIDRs
    /// accepts any given ClusterIP).
    fn service_pools(&mut self, pending: &[PendingService]) -> Pools {
        let known = !self.cluster.service_cidrs.is_empty();
        if !known {
            self.cluster.service_cidrs = "10.96.0.0/12".parse().into_iter().collect();
            if pending.iter().any(|p| {
                p.want_families.contains(&IpFamily::V6)
                    || p.svc.cluster_ips.iter().any(IpAddr::is_ipv6)
                    || p.policy == FamilyPolicy::RequireDualStack
            }) {
                self.cluster
                    .service_cidrs
                    .extend("fd00:10:96::/112".parse::<IpNet>());
            }
        }
        let cidrs = &self.cluster.service_cidrs;
        let of_family = |f: IpFamily| -> Vec<IpNet> {
            cidrs
                .iter()
                .filter(|c| IpFamily::of(&c.addr()) == f)
                .copied()
                .collect()
        };
        Pools {
            v4: of_family(IpFamily::V4),
            v6: of_family(IpFamily::V6),
            known,
            default_family: cidrs
                .first()
                .map(|c| IpFamily::of(&c.addr()))
                .unwrap_or(IpFamily::V4),
        }
    }

    /// The API server's refusal of `p`, one error per problem.
    fn refuse(&mut self, p: &PendingService, problems: Vec<Problem>) {
        for (field, hint, msg, at) in problems {
            let mut d = Diagnostic::error(format!(
                "The Service \"{}\" is invalid: {msg}",
                p.svc.id.name
            ))
            .with_hint(hint)
            .at(at.unwrap_or(p.at));
            d.file = p.file;
            d.document = p.doc;
            d.object = Some(format!("Service/{}", p.svc.id));
            d.field = Some(field);
            self.diags.push(d);
        }
    }

    /// What the allocators give an accepted Service: a ClusterIP per
    /// family it lacks, NodePorts and the health-check NodePort. `Some`
    /// (field, hint, message) when a range is full.
    fn fill(
        &mut self,
        p: &mut PendingService,
        pools: &Pools,
        taken: &mut Taken,
    ) -> Option<(&'static str, &'static str, String)> {
        let node_port_range = self.cluster.node_port_range();
        let svc = &mut p.svc;
        if !svc.headless && svc.service_type != ServiceType::ExternalName {
            // One address per family, in the families' order: the
            // Service's own, else the next free one.
            let mut ips = Vec::new();
            for fam in &p.want_families {
                let own = svc.cluster_ips.iter().find(|ip| IpFamily::of(ip) == *fam);
                if let Some(ip) = own {
                    ips.push(*ip);
                    continue;
                }
                match allocate_ip(pools.of(*fam), &format!("{}", svc.id), &mut taken.ips) {
                    Some(ip) => ips.push(ip),
                    None => {
                        svc.cluster_ips = ips;
                        return Some((
                            "spec.clusterIPs",
                            "the service CIDR has no free address: add a ServiceCIDR or remove Services",
                            "Internal error occurred: failed to allocate a serviceIP: range is full".to_string(),
                        ));
                    }
                }
            }
            svc.cluster_ips = ips;
        }
        let port_full = Some((
            "spec.ports",
            "every NodePort of the range is taken: remove Services or use ClusterIP ones",
            "Internal error occurred: failed to allocate a nodePort: range is full".to_string(),
        ));
        let wants_node_ports = match svc.service_type {
            ServiceType::NodePort => true,
            ServiceType::LoadBalancer => p.allocate_load_balancer_node_ports,
            _ => false,
        };
        if wants_node_ports {
            for port in &mut svc.ports {
                if port.node_port.is_none() {
                    port.node_port = allocate_port(
                        node_port_range,
                        &format!("{}:{}", svc.id, port.name),
                        &mut taken.node_ports,
                    );
                    if port.node_port.is_none() {
                        return port_full;
                    }
                }
            }
        }
        if svc.service_type == ServiceType::LoadBalancer
            && svc.external_traffic_policy == TrafficPolicy::Local
            && svc.health_check_node_port.is_none()
        {
            svc.health_check_node_port = allocate_port(
                node_port_range,
                &format!("{}#healthz", svc.id),
                &mut taken.node_ports,
            );
            if svc.health_check_node_port.is_none() {
                return port_full;
            }
        }
        None
    }

    /// Given ClusterIPs outside the assumed range, said once.
    fn warn_outside_assumed_range(&mut self, outside: &[IpAddr]) {
        let Some(first) = outside.first() else {
            return;
        };
        let more = match outside.len() {
            1 => String::new(),
            n => format!(" and {} more", n - 1),
        };
        let range: Vec<String> = self
            .cluster
            .service_cidrs
            .iter()
            .map(ToString::to_string)
            .collect();
        self.diags.push(
            Diagnostic::warning(format!(
                "ClusterIP {first}{more} is outside the service range kpv assumes ({}): kpv takes it as written, since the input does not say the cluster's --service-cluster-ip-range",
                range.join(", ")
            ))
            .with_hint("add a ServiceCIDR object (or kubeadm's ClusterConfiguration) to have ClusterIPs checked against the real range"),
        );
    }
}

/// What `p` claims itself, checked as the API server checks it on create:
/// its IP families (inferred from given IPs, completed to dual-stack when
/// its policy and the cluster allow), its own ClusterIPs and NodePorts.
/// On success what it claimed is taken and its families are set.
fn claim(
    p: &mut PendingService,
    pools: &Pools,
    taken: &mut Taken,
    outside: &mut Vec<IpAddr>,
) -> Vec<Problem> {
    let addressed = !p.svc.headless && p.svc.service_type != ServiceType::ExternalName;
    let mut families = Vec::new();
    if addressed {
        let problems = claim_families(p, pools, &mut families);
        if !problems.is_empty() {
            return problems;
        }
    }
    let mut problems = Vec::new();
    let texts: Vec<String> = p.svc.cluster_ips.iter().map(ToString::to_string).collect();
    for ip in &p.svc.cluster_ips {
        let in_range = pools.contains(ip);
        if !pools.known && !in_range {
            outside.push(*ip);
        }
        let why = if pools.known && !in_range {
            Some(format!(
                "the provided IP ({ip}) is not in the valid range. The range of valid IPs is {}",
                pools.text(IpFamily::of(ip))
            ))
        } else if taken.ips.contains(ip) {
            Some("provided IP is already allocated".to_string())
        } else {
            None
        };
        if let Some(why) = why {
            problems.push((
                "spec.clusterIPs".into(),
                "leave clusterIP out to have one allocated, or pick a free address inside the service CIDR",
                format!("Invalid value: {}: failed to allocate IP {ip}: {why}", go_strings(&texts)),
                p.cluster_ips_at,
            ));
        }
    }
    // Its own NodePorts (the same number for TCP and UDP is one).
    let mut ports = BTreeSet::new();
    let explicit = p
        .svc
        .ports
        .iter()
        .zip(&p.ports_at)
        .filter_map(|(x, (path, at))| x.node_port.map(|n| (n, path, *at)));
    for (n, path, at) in explicit {
        if taken.node_ports.contains(&n) {
            problems.push((
                format!("{path}.nodePort"),
                "leave nodePort out to have a free one allocated, or pick another",
                format!("Invalid value: {n}: provided port is already allocated"),
                at,
            ));
        }
        ports.insert(n);
    }
    if let Some(h) = p.svc.health_check_node_port {
        if taken.node_ports.contains(&h) || ports.contains(&h) {
            problems.push((
                "spec.healthCheckNodePort".into(),
                "leave healthCheckNodePort out to have a free one allocated",
                format!("Invalid value: {h}: provided port is already allocated"),
                None,
            ));
        }
        ports.insert(h);
    }
    if problems.is_empty() {
        taken.ips.extend(p.svc.cluster_ips.iter().copied());
        taken.node_ports.extend(ports);
        if addressed {
            p.want_families = families;
        }
    }
    problems
}

/// `p`'s IP families into `families` (initIPFamilyFields): the ones it
/// asks, then those of its given IPs, else the cluster's default; a
/// second family when its policy allows and the cluster is dual-stack.
fn claim_families(p: &PendingService, pools: &Pools, families: &mut Vec<IpFamily>) -> Vec<Problem> {
    let mut problems = Vec::new();
    families.clone_from(&p.want_families);
    let texts: Vec<String> = p.svc.cluster_ips.iter().map(ToString::to_string).collect();
    for (i, ip) in p.svc.cluster_ips.iter().enumerate() {
        let fam = IpFamily::of(ip);
        if i < families.len() {
            continue;
        }
        if pools.configured(fam) {
            families.push(fam);
        } else {
            problems.push((
                format!("spec.clusterIPs[{i}]"),
                "give an address of a family the cluster has, or add a ServiceCIDR of that family",
                format!(
                    "Invalid value: {}: {} is not configured on this cluster",
                    go_strings(&texts),
                    family_name(fam)
                ),
                p.cluster_ips_at,
            ));
        }
    }
    if !problems.is_empty() {
        return problems;
    }
    if p.policy == FamilyPolicy::RequireDualStack && !pools.dual_stack() {
        problems.push((
            "spec.ipFamilyPolicy".into(),
            "use PreferDualStack (dual-stack where the cluster has it), or add a ServiceCIDR of the other family",
            "Invalid value: \"RequireDualStack\": this cluster is not configured for dual-stack services".into(),
            p.policy_at,
        ));
    }
    for (i, fam) in families.iter().enumerate() {
        if !pools.configured(*fam) {
            problems.push((
                format!("spec.ipFamilies[{i}]"),
                "list only families the cluster's ServiceCIDRs have",
                format!(
                    "Invalid value: \"{}\": not configured on this cluster",
                    family_name(*fam)
                ),
                p.families_at.get(i).copied(),
            ));
        }
    }
    if families.is_empty() {
        families.push(pools.default_family);
    }
    if p.policy != FamilyPolicy::SingleStack && families.len() == 1 && pools.dual_stack() {
        families.push(match families[0] {
            IpFamily::V4 => IpFamily::V6,
            IpFamily::V6 => IpFamily::V4,
        });
    }
    problems
}

/// Allocate an address from `pools` at a position given by a hash of `key`
/// (stable when unrelated objects are added), probing linearly on collision.
/// Skips the network address, the first host (`kubernetes` Service) and the last.
pub(super) fn allocate_ip(
    pools: &[IpNet],
    key: &str,
    used: &mut BTreeSet<IpAddr>,
) -> Option<IpAddr> {
    for pool in pools {
        let size = net_size(pool).min(1 << 20);
        if size < 4 {
            continue;
        }
        let usable = size - 3;
        let start = (prefix64(key) as u128) % usable;
        for k in 0..usable {
            let off = 2 + (start + k) % usable;
            if let Some(ip) = nth_addr(pool, off) {
                if used.insert(ip) {
                    return Some(ip);
                }
            }
        }
    }
    None
}

/// Allocate a NodePort from the range (30000–32767 by default) the same way.
/// A wider range is tried from its 30000–32767 part first (the hash only
/// stands in for the allocator's random pick, and numbers stay familiar).
fn allocate_port(range: (u16, u16), key: &str, used: &mut BTreeSet<u16>) -> Option<u16> {
    let (dlo, dhi) = crate::model::DEFAULT_NODE_PORT_RANGE;
    if range != (dlo, dhi) && range.0 <= dlo && dhi <= range.1 {
        if let Some(p) = allocate_port((dlo, dhi), key, used) {
            return Some(p);
        }
    }
    let (lo, hi) = range;
    let size = u64::from(hi.saturating_sub(lo)) + 1;
    let start = prefix64(key) % size;
    (0..size)
        .map(|k| lo + ((start + k) % size) as u16)
        .find(|p| used.insert(*p))
}
