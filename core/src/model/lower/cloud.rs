//! The assumed cloud load-balancer controller. A `type: LoadBalancer`
//! Service written without `status.loadBalancer.ingress` gets an address
//! the way a cloud's controller, MetalLB or cloud-provider-kind would give
//! it: `spec.loadBalancerIP` when it asks for one, else one of a stated
//! documentation range. The address is marked assumed, and a warning says
//! so. A Service with a `spec.loadBalancerClass` is left to that class's
//! controller, which kpv does not run: it stays pending, as in a cluster
//! without one, and gets no load-balancer rules (kube-proxy writes none for
//! an address it has not been given).

use super::alloc::allocate_ip;
use super::services::PendingService;
use super::*;
use crate::util::diag::Diagnostic;
use std::collections::BTreeSet;

/// Where the assumed controller takes addresses from, per family
/// (documentation ranges: RFC 5737's TEST-NET-3 and RFC 3849's prefix).
/// Index 0 is IPv4's, 1 IPv6's.
pub const ASSUMED_POOLS: [&str; 2] = ["203.0.113.0/24", "2001:db8:ffff::/112"];

impl Builder {
    /// Addresses no assumed load balancer may take: every address written
    /// in a Service's load-balancer status or externalIPs, and the nodes'.
    pub(super) fn load_balancer_taken(&self, pending: &[PendingService]) -> BTreeSet<IpAddr> {
        let mut taken = BTreeSet::new();
        for p in pending {
            let s = &p.svc;
            for list in [
                &s.load_balancer_ips,
                &s.load_balancer_proxy_ips,
                &s.external_ips,
            ] {
                taken.extend(list.iter().copied());
            }
            taken.extend(p.requested_load_balancer_ip);
        }
        for n in &self.cluster.nodes {
            for (_, ip) in &n.addresses {
                taken.insert(*ip);
            }
        }
        taken
    }

    /// A LoadBalancer Service without an address: give it the assumed
    /// controller's, or (with a `loadBalancerClass`) say it stays pending.
    pub(super) fn assume_load_balancer(
        &mut self,
        p: &mut PendingService,
        taken: &mut BTreeSet<IpAddr>,
    ) {
        let id = p.svc.id.clone();
        let (message, hint) = match &p.load_balancer_class {
            Some(class) => (
                format!(
                    "LoadBalancer Service {id} has loadBalancerClass {class} and no status.loadBalancer.ingress: it stays pending until that class's controller gives an address; only its NodePorts and ClusterIP get rules"
                ),
                "remove spec.loadBalancerClass or write status.loadBalancer.ingress to see the load balancer's path".to_string(),
            ),
            None => {
                let mut given = Vec::new();
                let mut pools_used = Vec::new();
                for fam in p.svc.cluster_ips.iter().map(IpFamily::of) {
                    let requested = p.requested_load_balancer_ip.filter(|ip| IpFamily::of(ip) == fam);
                    let text = ASSUMED_POOLS[usize::from(fam == IpFamily::V6)];
                    let pool: Vec<IpNet> = text.parse().into_iter().collect();
                    pools_used.push(text);
                    let ip = requested.or_else(|| allocate_ip(&pool, &id.to_string(), taken));
                    if let Some(ip) = ip {
                        given.push(ip);
                    }
                }
                if given.is_empty() {
                    return;
                }
                let addresses: Vec<String> = given.iter().map(ToString::to_string).collect();
                let source = match p.requested_load_balancer_ip {
                    Some(ip) => format!("the spec.loadBalancerIP it asks for, {ip}"),
                    None => format!("from {}", pools_used.join(" and ")),
                };
                p.svc.load_balancer_ips = given;
                p.svc.load_balancer_assumed = true;
                (
                    format!(
                        "LoadBalancer Service {id} has no status.loadBalancer.ingress: kpv assumes a cloud load balancer gave it {} ({source})",
                        addresses.join(", ")
                    ),
                    "write status.loadBalancer.ingress to choose the address, or set spec.loadBalancerClass to keep it pending".to_string(),
                )
            }
        };
        let mut d = Diagnostic::warning(message).with_hint(hint);
        d.file = p.file;
        d.document = p.doc;
        d.object = Some(format!("Service/{id}"));
        d.field = Some("status.loadBalancer.ingress".into());
        self.diags.push(d);
    }
}
