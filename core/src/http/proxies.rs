//! The controller as a workload: every IngressClass and Gateway is served
//! by proxy Pods behind their own Service, reached through kube-proxy like
//! any other. The real ones are recognised in the input by their own
//! markers (ingress-nginx's `--controller-class=`/`--ingress-class=`
//! arguments; Envoy Gateway's `gateway.envoyproxy.io/owning-gateway-*`
//! labels); when the input has none, one is added as a controller would
//! create it (a proxy Pod and a LoadBalancer Service with an address from
//! the load balancer range), and the caller is told so. This is the only
//! code in this module that adds objects to the [`Cluster`].

use super::addresses::{free_addr, used_addrs, LB_RANGE};
use super::objects::ControllerMarker;
use super::table::{Implementation, RoutingTable, Table};
use super::values::EntryPoint;
use crate::model::packet::{IpFamily, Protocol};
use crate::model::{
    Cluster, Container, ContainerPort, Labels, NamespacedName, Pod, PortRef, ReportedReady,
    Service, ServicePort, ServiceType, TrafficPolicy,
};
use ipnet::IpNet;
use serde::Serialize;
use std::collections::BTreeSet;
use std::net::IpAddr;

/// The proxy serving an entry point.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProxyWorkload {
    pub entry: EntryPoint,
    pub implementation: Implementation,
    pub service: NamespacedName,
    pub pods: Vec<NamespacedName>,
    /// kpv created it (the input has no controller for this entry point).
    pub synthesized: bool,
    /// The Service's load-balancer address (the entry point's status
    /// address), if it has one.
    pub address: Option<IpAddr>,
}

/// The ports a proxy listens on for an entry point.
fn listen_ports(table: &Table) -> Vec<u16> {
    let mut v: Vec<u16> = match table {
        Table::Ingress(_) => vec![80, 443],
        Table::Gateway(g) => g.listeners.iter().map(|l| l.listener.port).collect(),
    };
    crate::util::order::sort(&mut v);
    v.dedup();
    v
}

fn found(cluster: &Cluster, rt: &RoutingTable, entry: &EntryPoint) -> Option<ProxyWorkload> {
    let table = rt.tables.get(entry)?;
    for m in &rt.objects.markers {
        match (m, entry, table) {
            (
                ControllerMarker::IngressNginx {
                    deployment,
                    controller_class,
                    ingress_class,
                    pod_labels,
                },
                EntryPoint::IngressClass(class),
                Table::Ingress(t),
            ) if ingress_class == class
                || (t.controller == *controller_class
                    && rt.objects.ingress_classes.iter().any(|c| c.name() == class)) =>
            {
                let pods: Vec<NamespacedName> = cluster
                    .pods
                    .iter()
                    .filter(|p| {
                        p.id.namespace == deployment.namespace
                            && p.owner.as_deref() == Some(deployment.name.as_str())
                    })
                    .map(|p| p.id.clone())
                    .collect();
                let svc = cluster
                    .services
                    .iter()
                    .filter(|s| s.id.namespace == deployment.namespace)
                    .filter(|s| {
                        s.selector
                            .as_ref()
                            .is_some_and(|sel| crate::model::selects(sel, pod_labels))
                    })
                    .min_by_key(|s| (s.service_type != ServiceType::LoadBalancer, s.id.clone()))?;
                return Some(ProxyWorkload {
                    entry: entry.clone(),
                    implementation: Implementation::IngressNginx,
                    service: svc.id.clone(),
                    pods,
                    synthesized: false,
                    address: svc.load_balancer_addresses().next().copied(),
                });
            }
            (
                ControllerMarker::EnvoyProxy {
                    object,
                    is_service: true,
                    gateway,
                },
                EntryPoint::Gateway(id),
                _,
            ) if gateway == id => {
                let svc = cluster.service(object)?;
                let pods = cluster
                    .pods
                    .iter()
                    .filter(|p| {
                        p.id.namespace == svc.id.namespace
                            && svc
                                .selector
                                .as_ref()
                                .is_some_and(|sel| crate::model::selects(sel, &p.labels))
                    })
                    .map(|p| p.id.clone())
                    .collect();
                return Some(ProxyWorkload {
                    entry: entry.clone(),
                    implementation: Implementation::EnvoyGateway,
                    service: svc.id.clone(),
                    pods,
                    synthesized: false,
                    address: svc.load_balancer_addresses().next().copied(),
                });
            }
            _ => {}
        }
    }
    None
}

/// A Service name must be a DNS label (at most 63 characters). When
/// `prefix` + `base` is longer, it is cut as Envoy Gateway cuts its
/// proxies' names: `prefix`, the first 48 characters of `base` (without a
/// trailing `-`), `-`, and the first 8 hex digits of sha256 of `key`; for a
/// Gateway that is exactly Envoy Gateway's name (`envoy-`, `NS-NAME`,
/// `NS/NAME`), and distinct long names stay distinct.
fn fit_service_name(prefix: &str, base: &str, key: &str) -> String {
    if prefix.len() + base.len() <= 63 {
        return format!("{prefix}{base}");
    }
    let cut = base.get(..48).unwrap_or(base).trim_end_matches('-');
    let digest = crate::util::sha256::digest(key.as_bytes());
    let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{prefix}{cut}-{hex}")
}

/// The proxy's implementation, namespace and name for `entry`, as its
/// controller names it (ingress-nginx's chart, Envoy Gateway's
/// `envoy-NAMESPACE-NAME`).
fn proxy_identity(entry: &EntryPoint, table: &Table) -> Option<(Implementation, String, String)> {
    Some(match (entry, table) {
        (EntryPoint::IngressClass(c), Table::Ingress(t)) => match t.implementation {
            Implementation::IngressNginx => (
                t.implementation.clone(),
                "ingress-nginx".to_string(),
                format!(
                    "ingress-nginx-controller{}",
                    if c == "nginx" {
                        String::new()
                    } else {
                        format!("-{c}")
                    }
                ),
            ),
            _ => (
                t.implementation.clone(),
                "kube-system".into(),
                format!("ingress-{c}-controller"),
            ),
        },
        (EntryPoint::Gateway(id), Table::Gateway(g)) => match g.implementation {
            Implementation::EnvoyGateway => (
                g.implementation.clone(),
                "envoy-gateway-system".into(),
                fit_service_name(
                    "envoy-",
                    &format!("{}-{}", id.namespace, id.name),
                    &format!("{}/{}", id.namespace, id.name),
                ),
            ),
            _ => (
                g.implementation.clone(),
                id.namespace.clone(),
                format!("{}-proxy", id.name),
            ),
        },
        _ => return None,
    })
}

/// The proxy's Pod: one container listening on `ports`.
fn proxy_pod(
    pod_id: NamespacedName,
    labels: Labels,
    node: &str,
    pod_ip: std::net::IpAddr,
    implementation: &Implementation,
    ports: Vec<ContainerPort>,
) -> Pod {
    Pod {
        id: pod_id,
        labels,
        node_name: Some(node.to_string()),
        ips: vec![pod_ip],
        containers: vec![Container {
            name: "proxy".into(),
            image: match implementation {
                Implementation::IngressNginx => "ingress-nginx/controller".into(),
                Implementation::EnvoyGateway => "envoyproxy/envoy".into(),
                Implementation::Other(_) => "proxy".into(),
            },
            ports,
            readiness_probe: None,
            liveness_probe: None,
            startup_probe: None,
        }],
        terminating: false,
        finished: false,
        pending: false,
        reported_ready: ReportedReady::Unknown,
        owner: None,
        tolerations: Vec::new(),
        hostname: None,
        subdomain: None,
        host_network: false,
        dns: Default::default(),
    }
}

/// The proxy's LoadBalancer Service at (ClusterIP, load balancer address);
/// with a health-check node port, `externalTrafficPolicy: Local`.
fn proxy_service(
    id: NamespacedName,
    selector: Labels,
    ports: Vec<ServicePort>,
    (cluster_ip, lb_ip): (std::net::IpAddr, std::net::IpAddr),
    health_check_node_port: Option<u16>,
) -> Service {
    Service {
        id,
        service_type: ServiceType::LoadBalancer,
        cluster_ips: vec![cluster_ip],
        headless: false,
        selector: Some(selector),
        ports,
        external_ips: Vec::new(),
        load_balancer_ips: vec![lb_ip],
        load_balancer_proxy_ips: Vec::new(),
        load_balancer_assumed: false,
        load_balancer_source_ranges: Vec::new(),
        external_traffic_policy: if health_check_node_port.is_some() {
            TrafficPolicy::Local
        } else {
            TrafficPolicy::Cluster
        },
        internal_traffic_policy: TrafficPolicy::Cluster,
        health_check_node_port,
        session_affinity_seconds: None,
        publish_not_ready_addresses: false,
        load_balancer_class: None,
        cilium: Default::default(),
        external_name: None,
        traffic_distribution: None,
    }
}

fn synthesize(
    cluster: &mut Cluster,
    rt: &RoutingTable,
    entry: &EntryPoint,
) -> Option<ProxyWorkload> {
    let table = rt.tables.get(entry)?;
    let (implementation, ns, name) = proxy_identity(entry, table)?;
    let name = fit_service_name("", &name, &entry.to_string());
    // Already added (a cluster prepared before): the same workload again,
    // so preparing twice changes nothing.
    let svc_id = NamespacedName::new(ns.clone(), name.clone());
    if let Some(svc) = cluster.service(&svc_id) {
        let pod_id = NamespacedName::new(
            ns.clone(),
            format!("{name}-{}", crate::model::name_suffix(&name)),
        );
        return Some(ProxyWorkload {
            entry: entry.clone(),
            implementation,
            service: svc_id,
            pods: cluster
                .pod(&pod_id)
                .map(|p| vec![p.id.clone()])
                .unwrap_or_default(),
            synthesized: true,
            address: svc.load_balancer_addresses().next().copied(),
        });
    }
    let node = cluster
        .nodes
        .iter()
        .find(|n| n.pod_cidr(IpFamily::V4).is_some())?
        .clone();
    let cidr = node.pod_cidr(IpFamily::V4)?;
    let mut used = used_addrs(cluster);
    let pod_ip = free_addr(&cidr, &used, 200)?;
    used.insert(pod_ip);
    let svc_cidr = cluster
        .service_cidrs
        .iter()
        .find(|c| matches!(c, IpNet::V4(_)))
        .copied()
        .or_else(|| "10.96.0.0/12".parse().ok())?;
    let cluster_ip = free_addr(&svc_cidr, &used, 200)?;
    let lb_net: IpNet = LB_RANGE.parse().ok()?;
    let requested = match table {
        Table::Gateway(g) => g.static_address,
        Table::Ingress(_) => None,
    };
    let lb_ip = match requested {
        Some(ip) if !used.contains(&ip) => ip,
        _ => free_addr(&lb_net, &used, 100)?,
    };
    let used_node_ports: BTreeSet<u16> = cluster
        .services
        .iter()
        .flat_map(|s| {
            s.ports
                .iter()
                .filter_map(|p| p.node_port)
                .chain(s.health_check_node_port)
        })
        .collect();
    let mut next_np = 32080u16;
    // The next node port nobody has (none left: no proxy).
    let take_port = |next: &mut u16| -> Option<u16> {
        while used_node_ports.contains(next) {
            *next = next.checked_add(1)?;
        }
        let port = *next;
        *next = next.checked_add(1)?;
        Some(port)
    };
    let mut labels = Labels::new();
    labels.insert("app.kubernetes.io/name".into(), name.clone());
    let pod_id = NamespacedName::new(
        ns.clone(),
        format!("{name}-{}", crate::model::name_suffix(&name)),
    );
    let mut ports = Vec::new();
    let mut cports = Vec::new();
    for p in listen_ports(table) {
        let node_port = take_port(&mut next_np)?;
        let pname = match p {
            80 => "http".to_string(),
            443 => "https".to_string(),
            other => format!("port-{other}"),
        };
        ports.push(ServicePort {
            name: pname.clone(),
            protocol: Protocol::Tcp,
            port: p,
            target_port: PortRef::Number(p),
            node_port: Some(node_port),
        });
        cports.push(ContainerPort {
            name: Some(pname),
            port: p,
            protocol: Protocol::Tcp,
        });
    }
    // Envoy Gateway's proxy Service keeps the client's address
    // (`externalTrafficPolicy: Local`, its EnvoyProxy default), so the API
    // gives it a health-check node port; ingress-nginx's chart keeps the
    // API's default, Cluster.
    let local = implementation == Implementation::EnvoyGateway;
    let health_check_node_port = if local {
        Some(take_port(&mut next_np)?)
    } else {
        None
    };
    cluster.pods.push(proxy_pod(
        pod_id.clone(),
        labels.clone(),
        &node.name,
        pod_ip,
        &implementation,
        cports,
    ));
    let svc_id = NamespacedName::new(ns, name);
    let addresses = (cluster_ip, lb_ip);
    let service = proxy_service(
        svc_id.clone(),
        labels,
        ports,
        addresses,
        health_check_node_port,
    );
    cluster.services.push(service);
    Some(ProxyWorkload {
        entry: entry.clone(),
        implementation,
        service: svc_id,
        pods: vec![pod_id],
        synthesized: true,
        address: Some(lb_ip),
    })
}

/// Find or create the proxy of every entry point, in entry-point order.
pub fn place_proxies(cluster: &mut Cluster, rt: &RoutingTable) -> Vec<ProxyWorkload> {
    let mut out = Vec::new();
    for entry in rt.tables.keys() {
        if let Some(w) = found(cluster, rt, entry) {
            out.push(w);
        } else if rt.tables.get(entry).is_some_and(|t| !t.served()) {
            // No controller serves it: nothing to add.
        } else if let Some(w) = synthesize(cluster, rt, entry) {
            out.push(w);
        }
    }
    out
}
