//! What the API server and controllers allocate, deterministically:
//! generated names (pod-template-hash, `generateName` suffixes), Cluster IPs
//! from the service CIDRs and NodePorts from their range, each at a position
//! given by a hash of the object's name so that it is stable when unrelated
//! objects are added.
//!
//! No clock and no unseeded randomness: the same input always allocates the same.

use super::services::PendingService;
use super::*;
use sha2::{Digest, Sha256};

pub(super) fn hash64(s: &str) -> u64 {
    let d = Sha256::digest(s.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    u64::from_be_bytes(b)
}

/// Kubernetes' alphabet for generated names (no vowels, no confusable digits).
const SAFE_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// `rand.SafeEncodeString(fmt.Sprint(hash32))`, as pod-template-hash is made.
pub(super) fn pod_template_hash(seed: &str) -> String {
    let h = (hash64(seed) & 0xffff_ffff) as u32;
    h.to_string()
        .bytes()
        .map(|b| SAFE_ALPHABET[(b as usize) % SAFE_ALPHABET.len()] as char)
        .collect()
}

/// A deterministic 5-character suffix, as `generateName` would append.
pub(crate) fn name_suffix(seed: &str) -> String {
    let mut h = hash64(seed);
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

impl Builder {
    pub(super) fn allocate_services(&mut self, pending: Vec<PendingService>) {
        let cidrs_v4: Vec<IpNet> = {
            let v: Vec<IpNet> = self
                .cluster
                .service_cidrs
                .iter()
                .filter(|c| c.addr().is_ipv4())
                .copied()
                .collect();
            if v.is_empty() {
                "10.96.0.0/12".parse().into_iter().collect()
            } else {
                v
            }
        };
        let cidrs_v6: Vec<IpNet> = {
            let v: Vec<IpNet> = self
                .cluster
                .service_cidrs
                .iter()
                .filter(|c| c.addr().is_ipv6())
                .copied()
                .collect();
            if v.is_empty() {
                "fd00:10:96::/112".parse().into_iter().collect()
            } else {
                v
            }
        };
        if self.cluster.service_cidrs.is_empty() {
            self.cluster.service_cidrs = cidrs_v4.clone();
            if pending.iter().any(|p| {
                p.want_families.contains(&IpFamily::V6)
                    || p.svc.cluster_ips.iter().any(IpAddr::is_ipv6)
            }) {
                self.cluster.service_cidrs.extend(cidrs_v6.clone());
            }
        }
        let mut used_ips: BTreeSet<IpAddr> =
            crate::order::set(pending.iter().flat_map(|p| p.svc.cluster_ips.clone()));
        let mut used_node_ports: BTreeSet<u16> = crate::order::set(pending.iter().flat_map(|p| {
            p.svc
                .ports
                .iter()
                .filter_map(|x| x.node_port)
                .chain(p.svc.health_check_node_port)
        }));
        // Report cluster IPs used twice.
        let mut owner: BTreeMap<IpAddr, NamespacedName> = BTreeMap::new();
        let mut sorted = pending;
        crate::order::sort_by(&mut sorted, |a, b| a.svc.id.cmp(&b.svc.id));
        for p in &mut sorted {
            let report = |msg: String, hint: &str, field: &str, diags: &mut Vec<Diagnostic>| {
                let mut d = Diagnostic::error(msg).with_hint(hint);
                d.file = p.file;
                d.document = p.doc;
                d.object = Some(format!("Service/{}", p.svc.id));
                d.field = Some(field.into());
                diags.push(d);
            };
            for ip in &p.svc.cluster_ips {
                if let Some(other) = owner.insert(*ip, p.svc.id.clone()) {
                    report(format!("cluster IP {ip} is already used by Service {other}"), "give each Service its own clusterIP, or leave it out to have one allocated", "spec.clusterIP", &mut self.diags);
                }
            }
            let svc = &mut p.svc;
            if p.cluster_ip_auto && !svc.headless && svc.service_type != ServiceType::ExternalName {
                let families = if p.want_families.is_empty() {
                    vec![IpFamily::V4]
                } else {
                    p.want_families.clone()
                };
                for fam in families {
                    let pool = if fam == IpFamily::V4 {
                        &cidrs_v4
                    } else {
                        &cidrs_v6
                    };
                    if let Some(ip) = allocate_ip(pool, &format!("{}", svc.id), &mut used_ips) {
                        svc.cluster_ips.push(ip);
                    }
                }
            }
            let wants_node_ports = match svc.service_type {
                ServiceType::NodePort => true,
                ServiceType::LoadBalancer => p.allocate_load_balancer_node_ports,
                _ => false,
            };
            if wants_node_ports {
                for port in &mut svc.ports {
                    if port.node_port.is_none() {
                        port.node_port = allocate_port(
                            &format!("{}:{}", svc.id, port.name),
                            &mut used_node_ports,
                        );
                    }
                }
            }
            if svc.service_type == ServiceType::LoadBalancer
                && svc.external_traffic_policy == TrafficPolicy::Local
                && svc.health_check_node_port.is_none()
            {
                svc.health_check_node_port =
                    allocate_port(&format!("{}#healthz", svc.id), &mut used_node_ports);
            }
            if svc.service_type == ServiceType::LoadBalancer
                && svc.load_balancer_ips.is_empty()
                && svc.load_balancer_proxy_ips.is_empty()
            {
                // No address yet (EXTERNAL-IP <pending>): kube-proxy installs no
                // load-balancer rules, so neither do we.
                let (requested, ip) = match p.requested_load_balancer_ip {
                    Some(ip) => (
                        format!("; spec.loadBalancerIP {ip} is a request to the cloud provider, which kube-proxy does not read"),
                        ip.to_string(),
                    ),
                    None => (String::new(), "203.0.113.10".to_string()),
                };
                let mut d = Diagnostic::warning(format!(
                    "LoadBalancer Service {} has no status.loadBalancer.ingress address (pending); only its NodePorts and ClusterIP get rules{requested}",
                    svc.id
                ))
                .with_hint(format!("add status.loadBalancer.ingress: [{{ip: {ip}}}] to see the load balancer's path"));
                d.file = p.file;
                d.document = p.doc;
                d.object = Some(format!("Service/{}", svc.id));
                d.field = Some("status.loadBalancer.ingress".into());
                self.diags.push(d);
            }
            if svc.service_type != ServiceType::LoadBalancer {
                svc.load_balancer_ips.clear();
                svc.load_balancer_proxy_ips.clear();
                svc.load_balancer_source_ranges.clear();
            }
        }
        self.cluster.services = sorted.into_iter().map(|p| p.svc).collect();
    }
}

/// Allocate an address from `pools` at a position given by a hash of `key`
/// (stable when unrelated objects are added), probing linearly on collision.
/// Skips the network address, the first host (`kubernetes` Service) and the last.
pub(super) fn allocate_ip(
    pools: &[IpNet],
    key: &str,
    used: &mut BTreeSet<IpAddr>,
) -> Option<IpAddr> {
    let pool = pools.first()?;
    let size = net_size(pool).min(1 << 20);
    if size < 4 {
        return None;
    }
    let usable = size - 3;
    let start = (hash64(key) as u128) % usable;
    for k in 0..usable {
        let off = 2 + (start + k) % usable;
        if let Some(ip) = nth_addr(pool, off) {
            if used.insert(ip) {
                return Some(ip);
            }
        }
    }
    None
}

/// Allocate a NodePort from 30000–32767 the same way.
pub(super) fn allocate_port(key: &str, used: &mut BTreeSet<u16>) -> Option<u16> {
    let range = 2768u64;
    let start = hash64(key) % range;
    (0..range)
        .map(|k| 30000 + ((start + k) % range) as u16)
        .find(|p| used.insert(*p))
}
