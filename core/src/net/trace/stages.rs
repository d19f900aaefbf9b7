//! The teaching stages of a Service's path: which part of kube-proxy's
//! machinery (load balancer, NodePort, external IP, ClusterIP, Pod) each hop
//! of a [`Trace`] belongs to, read from each mode's own chain names and the
//! addresses the hops carry. Classification only: it never changes a trace
//! and never words anything (the app and CLI do).

use crate::model::Cluster;
use crate::net::modes::StepAction;
use crate::net::trace::{HopKind, Trace};
use serde::Serialize;
use std::net::SocketAddr;

/// The teaching stages of a Service's path: which part of kube-proxy's
/// machinery a hop belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    /// The cloud load balancer, or a Service's LoadBalancer IP rules.
    LoadBalancer,
    /// A node's NodePort (and the external-traffic chains behind it).
    NodePort,
    ExternalIp,
    /// The Service's ClusterIP and its load-balancing chain (KUBE-SVC-,
    /// nftables `service-` chains, the userspace proxy's round robin, an IPVS
    /// virtual server on the ClusterIP).
    ClusterIp,
    /// The chosen endpoint: its DNAT, delivery to the Pod.
    Pod,
}

impl Stage {
    pub fn word(self) -> &'static str {
        match self {
            Stage::LoadBalancer => "load-balancer",
            Stage::NodePort => "node-port",
            Stage::ExternalIp => "external-ip",
            Stage::ClusterIp => "cluster-ip",
            Stage::Pod => "pod",
        }
    }
}

/// What kind of Service address `dst` is in `cluster`, if any.
fn address_stage(cluster: &Cluster, dst: SocketAddr) -> Option<Stage> {
    for s in &cluster.services {
        for p in &s.ports {
            if s.cluster_ips.contains(&dst.ip()) && p.port == dst.port() {
                return Some(Stage::ClusterIp);
            }
            if s.load_balancer_addresses().any(|ip| *ip == dst.ip()) && p.port == dst.port() {
                return Some(Stage::LoadBalancer);
            }
            if s.external_ips.contains(&dst.ip()) && p.port == dst.port() {
                return Some(Stage::ExternalIp);
            }
            if p.node_port == Some(dst.port())
                && cluster.nodes.iter().any(|n| {
                    n.addresses.iter().any(|(_, a)| *a == dst.ip()) || dst.ip().is_loopback()
                })
            {
                return Some(Stage::NodePort);
            }
        }
    }
    None
}

/// The stage of every hop (`None` for hops outside kube-proxy's Service
/// machinery: generic netfilter hooks, the filter table's checks, DNS, the
/// reply). Chain names are each mode's own: iptables `KUBE-NODEPORTS`,
/// `KUBE-EXT-`, `KUBE-SVC-`/`KUBE-SVL-`, `KUBE-SEP-`, `KUBE-FW-`; nftables
/// `nodeports`/`service-nodeports`, `external-`, `service-`/`local-`,
/// `endpoint-`, `firewall-`; IPVS's lookup classified by the virtual
/// server's address; the userspace proxy process.
pub fn stages(cluster: &Cluster, trace: &Trace) -> Vec<Option<Stage>> {
    trace
        .hops
        .iter()
        .map(|h| match &h.what {
            HopKind::LoadBalancer { .. } => Some(Stage::LoadBalancer),
            HopKind::Deliver | HopKind::NoAnswer => Some(Stage::Pod),
            HopKind::Rule => {
                let step = h.step.as_ref()?;
                let chain = step.table_chain.as_str();
                let per_service = chain.contains('/');
                let has = |p: &str| chain.contains(p);
                if matches!(
                    step.action,
                    StepAction::Dnat { .. } | StepAction::Connect { answered: true, .. }
                ) || has("KUBE-SEP-")
                    || (has("chain endpoint-") && per_service)
                {
                    Some(Stage::Pod)
                } else if has("KUBE-SVC-")
                    || has("KUBE-SVL-")
                    || ((has("chain service-") || has("chain local-")) && per_service)
                    || chain == "kube-proxy process"
                {
                    Some(Stage::ClusterIp)
                } else if has("KUBE-FW-")
                    || has("KUBE-LOAD-BALANCER")
                    || (has("chain firewall-") && per_service)
                {
                    Some(Stage::LoadBalancer)
                } else if has("KUBE-NODEPORTS")
                    || has("KUBE-EXT-")
                    || has("KUBE-NODE-PORT")
                    || has("KUBE-NODEPORT-")
                    || has("service-nodeports")
                    || (has("chain external-") && per_service)
                {
                    Some(Stage::NodePort)
                } else if chain == "IPVS"
                    || has("KUBE-SERVICES")
                    || has("KUBE-PORTALS-")
                    || has("service-ips")
                {
                    // The first match on a Service address: classify by the address.
                    if matches!(step.action, StepAction::Return) {
                        None
                    } else {
                        address_stage(cluster, h.before.dst)
                            .filter(|_| !step.rule.starts_with("(end"))
                    }
                } else {
                    None
                }
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod stage_tests {
    use super::*;
    use crate::model::packet::Protocol;
    use crate::model::Mode;
    use crate::net::trace::{trace, Dest, Origin, Outcome, Request, Sim, WorldState};
    use crate::util::choose::Chooser;
    use std::net::IpAddr;

    const NODEPORT: &str = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {podCIDR: 10.244.1.0/24}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.11}]}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: web, labels: {app: web}}\nspec: {nodeName: n1, containers: [{name: c, ports: [{containerPort: 80}]}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  type: NodePort\n  selector: {app: web}\n  ports: [{port: 80, nodePort: 30080}]\n---\napiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nclusterCIDR: 10.244.0.0/16\n";

    fn order(mode: Mode) -> Vec<Stage> {
        let (cluster, _) = crate::Code::ALL.parse(NODEPORT);
        let slices = crate::net::controller::steady_slices(&cluster);
        let sim = Sim::new(
            &cluster,
            &slices,
            mode,
            None,
            crate::net::modes::Compilers::ALL,
        );
        let req = Request {
            origin: Origin::External {
                client: "198.51.100.7"
                    .parse()
                    .unwrap_or(IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)),
            },
            dst: Dest::Ip(
                "192.168.0.11"
                    .parse()
                    .unwrap_or(IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)),
            ),
            port: 30080,
            protocol: Protocol::Tcp,
            src_port: 40000,
            keep_open: false,
        };
        let t = trace(
            &sim,
            &req,
            &mut WorldState::default(),
            &mut Chooser::new(1),
            0,
        );
        assert!(
            matches!(t.outcome, Outcome::Delivered { .. }),
            "{mode:?}: {:?}",
            t.outcome
        );
        let mut v: Vec<Stage> = stages(&cluster, &t).into_iter().flatten().collect();
        v.dedup();
        v
    }

    #[test]
    fn nodeport_traffic_passes_the_stages_each_mode_really_has() {
        use Stage::*;
        // iptables and nftables: NodePort chains jump to the Service's chain.
        assert_eq!(order(Mode::Iptables), vec![NodePort, ClusterIp, Pod]);
        assert_eq!(order(Mode::Nftables), vec![NodePort, ClusterIp, Pod]);
        // IPVS: one virtual server per node address and NodePort, straight to the real server.
        assert_eq!(order(Mode::Ipvs), vec![NodePort, Pod]);
        // userspace: the NodePort redirect, then the proxy process's round robin.
        assert_eq!(order(Mode::Userspace), vec![NodePort, ClusterIp, Pod]);
    }
}
