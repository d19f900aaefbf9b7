//! Small generated clusters: a description of Services and their endpoints
//! ([`GenService`]) written out as Kubernetes YAML, for the property tests
//! (which draw descriptions with proptest) and the kernel check (which draws
//! them from a seed with [`from_seed`]). Two nodes, `node-a` (whose
//! kube-proxy is modelled) and `node-b`, IPv4 or IPv6 ([`yaml_in`]); every
//! Service kind, TCP and UDP, both traffic policies, ClientIP affinity, and
//! endpoints in every readiness state.
//!
//! Pure: the same description or seed always gives the same text. It never
//! reads the input it writes back; tests parse it like any other input.

use crate::model::packet::IpFamily;
use crate::util::choose::Chooser;
use std::fmt::Write as _;

/// One endpoint of a generated Service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenEndpoint {
    /// On `node-a` (else on `node-b`).
    pub on_a: bool,
    pub ready: bool,
    pub serving: bool,
    pub terminating: bool,
}

impl GenEndpoint {
    /// The API's invariants: a ready endpoint is serving, a terminating one
    /// is not ready.
    pub fn new(on_a: bool, ready: bool, serving: bool, terminating: bool) -> GenEndpoint {
        GenEndpoint {
            on_a,
            ready,
            serving: serving || ready,
            terminating: terminating && !ready,
        }
    }
}

/// One generated Service with one port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GenService {
    /// 0 ClusterIP, 1 NodePort, 2 LoadBalancer.
    pub kind: u8,
    pub etp_local: bool,
    pub itp_local: bool,
    pub affinity: bool,
    /// The port is UDP (else TCP).
    pub udp: bool,
    pub endpoints: Vec<GenEndpoint>,
}

impl GenService {
    /// `externalTrafficPolicy: Local` only where the API allows it (NodePort
    /// and LoadBalancer).
    pub fn new(
        kind: u8,
        etp_local: bool,
        itp_local: bool,
        affinity: bool,
        endpoints: Vec<GenEndpoint>,
    ) -> GenService {
        let kind = kind.min(2);
        GenService {
            kind,
            etp_local: etp_local && kind > 0,
            itp_local,
            affinity,
            udp: false,
            endpoints,
        }
    }

    /// The same Service with a UDP port.
    pub fn with_udp(mut self, udp: bool) -> GenService {
        self.udp = udp;
        self
    }
}

/// Service `i`'s port.
pub fn service_port(i: usize) -> u16 {
    80 + i as u16
}

/// Service `i`'s NodePort (NodePort and LoadBalancer kinds).
pub fn node_port(i: usize) -> u16 {
    30000 + i as u16
}

/// Service `i`'s ClusterIP.
pub fn cluster_ip(i: usize) -> String {
    cluster_ip_in(i, IpFamily::V4)
}

fn cluster_ip_in(i: usize, family: IpFamily) -> String {
    match family {
        IpFamily::V4 => format!("10.96.0.{}", 10 + i),
        IpFamily::V6 => format!("fd00:10:96::{}", 10 + i),
    }
}

/// Service `i`'s load-balancer IP (LoadBalancer kind).
pub fn load_balancer_ip(i: usize) -> String {
    load_balancer_ip_in(i, IpFamily::V4)
}

fn load_balancer_ip_in(i: usize, family: IpFamily) -> String {
    match family {
        IpFamily::V4 => format!("192.0.2.{}", 10 + i),
        IpFamily::V6 => format!("2001:db8:2::{}", 10 + i),
    }
}

/// The address of endpoint `j` of Service `i`: in `node-a`'s Pod CIDR
/// (10.244.1.0/24) or `node-b`'s (10.244.2.0/24).
pub fn endpoint_ip(i: usize, j: usize, e: &GenEndpoint) -> String {
    endpoint_ip_in(i, j, e, IpFamily::V4)
}

fn endpoint_ip_in(i: usize, j: usize, e: &GenEndpoint, family: IpFamily) -> String {
    let node = if e.on_a { 1 } else { 2 };
    match family {
        IpFamily::V4 => format!("10.244.{node}.{}", 10 * i + j + 2),
        IpFamily::V6 => format!("fd00:10:244:{node}::{}", 10 * i + j + 2),
    }
}

/// At most this many Services and endpoints per Service, so every address
/// above stays valid.
pub const MAX_SERVICES: usize = 20;
pub const MAX_ENDPOINTS: usize = 8;

/// A description drawn from `seed`: 1–5 Services of 0–4 endpoints each,
/// one in four with a UDP port.
pub fn from_seed(seed: u64) -> Vec<GenService> {
    let mut c = Chooser::new(seed);
    let flip = |c: &mut Chooser| c.below(2) == 1;
    let n = 1 + c.below(5);
    (0..n)
        .map(|_| {
            let kind = c.below(3) as u8;
            let (etp, itp, aff) = (flip(&mut c), flip(&mut c), flip(&mut c));
            let udp = c.below(4) == 0;
            let k = c.below(5);
            let eps = (0..k)
                .map(|_| {
                    let (a, r, s, t) = (flip(&mut c), flip(&mut c), flip(&mut c), flip(&mut c));
                    GenEndpoint::new(a, r, s, t)
                })
                .collect();
            GenService::new(kind, etp, itp, aff, eps).with_udp(udp)
        })
        .collect()
}

/// The cluster as IPv4 YAML; see [`yaml_in`].
pub fn yaml(services: &[GenService]) -> String {
    yaml_in(services, IpFamily::V4)
}

/// The cluster as YAML of one IP family: the KubeProxyConfiguration
/// (`node-a`, cluster CIDR 10.244.0.0/16 or fd00:10:244::/48), the two
/// nodes, and per Service its Service and one EndpointSlice (port `p`,
/// target port 8080). Services past [`MAX_SERVICES`] and endpoints past
/// [`MAX_ENDPOINTS`] are left out.
pub fn yaml_in(services: &[GenService], family: IpFamily) -> String {
    let (cidr, node_a, node_b, pods_a, pods_b, families, address_type) = match family {
        IpFamily::V4 => (
            "10.244.0.0/16",
            "192.168.0.2",
            "192.168.0.3",
            "10.244.1.0/24",
            "10.244.2.0/24",
            "",
            "IPv4",
        ),
        IpFamily::V6 => (
            "fd00:10:244::/48",
            "2001:db8::2",
            "2001:db8::3",
            "fd00:10:244:1::/64",
            "fd00:10:244:2::/64",
            "\n  ipFamilies: [IPv6]",
            "IPv6",
        ),
    };
    let mut y = format!(
        "apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
hostnameOverride: node-a
clusterCIDR: \"{cidr}\"
---
apiVersion: v1
kind: Node
metadata: {{name: node-a}}
spec: {{podCIDR: \"{pods_a}\"}}
status: {{addresses: [{{type: InternalIP, address: \"{node_a}\"}}]}}
---
apiVersion: v1
kind: Node
metadata: {{name: node-b}}
spec: {{podCIDR: \"{pods_b}\"}}
status: {{addresses: [{{type: InternalIP, address: \"{node_b}\"}}]}}
",
    );
    for (i, s) in services.iter().enumerate().take(MAX_SERVICES) {
        let ty = ["ClusterIP", "NodePort", "LoadBalancer"][usize::from(s.kind.min(2))];
        let _ = write!(
            y,
            "---
apiVersion: v1
kind: Service
metadata: {{name: s{i}, namespace: default}}
spec:
  type: {ty}
  clusterIP: \"{ip}\"{families}
  externalTrafficPolicy: {etp}
  internalTrafficPolicy: {itp}
  sessionAffinity: {aff}
  ports:
  - {{name: p, port: {port}, targetPort: 8080, protocol: {proto}{np}}}
",
            ip = cluster_ip_in(i, family),
            proto = if s.udp { "UDP" } else { "TCP" },
            etp = if s.etp_local { "Local" } else { "Cluster" },
            itp = if s.itp_local { "Local" } else { "Cluster" },
            aff = if s.affinity { "ClientIP" } else { "None" },
            port = service_port(i),
            np = if s.kind > 0 {
                format!(", nodePort: {}", node_port(i))
            } else {
                String::new()
            },
        );
        if s.kind == 2 {
            let _ = writeln!(
                y,
                "status: {{loadBalancer: {{ingress: [{{ip: \"{}\"}}]}}}}",
                load_balancer_ip_in(i, family)
            );
        }
        let eps = &s.endpoints[..s.endpoints.len().min(MAX_ENDPOINTS)];
        let _ = write!(
            y,
            "---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: s{i}-x
  namespace: default
  labels: {{kubernetes.io/service-name: s{i}}}
addressType: {address_type}
ports: [{{name: p, port: 8080, protocol: {}}}]
endpoints:{}
",
            if s.udp { "UDP" } else { "TCP" },
            if eps.is_empty() { " []" } else { "" }
        );
        for (j, e) in eps.iter().enumerate() {
            let _ = write!(
                y,
                "- addresses: [\"{}\"]\n  nodeName: {}\n  conditions: {{ready: {}, serving: {}, terminating: {}}}\n",
                endpoint_ip_in(i, j, e, family),
                if e.on_a { "node-a" } else { "node-b" },
                e.ready,
                e.serving,
                e.terminating
            );
        }
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_give_valid_clusters_and_the_same_text_each_time() {
        for seed in 0..50 {
            for family in [IpFamily::V4, IpFamily::V6] {
                let text = yaml_in(&from_seed(seed), family);
                assert_eq!(text, yaml_in(&from_seed(seed), family), "seed {seed}");
                let (cluster, diags) = crate::Code::ALL.parse(&text);
                assert!(
                    !crate::util::diag::has_errors(&diags),
                    "seed {seed}: {diags:#?}\n{text}"
                );
                assert_eq!(cluster.nodes.len(), 2);
                assert_eq!(cluster.services.len(), from_seed(seed).len());
                for s in &cluster.services {
                    assert!(
                        s.cluster_ips.iter().all(|ip| IpFamily::of(ip) == family),
                        "{s:?}"
                    );
                }
                let slices = crate::net::controller::steady_slices(&cluster);
                assert!(slices.iter().all(|s| s.family == family));
            }
        }
        assert!(
            (0..50).any(|s| from_seed(s).iter().any(|svc| svc.udp)),
            "some seed has a UDP Service"
        );
        // Different seeds make different clusters.
        let texts: std::collections::BTreeSet<String> =
            (0..20).map(|s| yaml(&from_seed(s))).collect();
        assert!(texts.len() > 15, "{}", texts.len());
    }

    #[test]
    fn the_api_invariants_hold_for_any_flags() {
        let e = GenEndpoint::new(true, true, false, true);
        assert!(e.serving && !e.terminating);
        let s = GenService::new(0, true, false, false, vec![]);
        assert!(!s.etp_local, "ClusterIP Services have no external policy");
        assert_eq!(GenService::new(9, false, false, false, vec![]).kind, 2);
    }
}
