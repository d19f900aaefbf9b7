//! Lowering Services: type, Cluster IPs as given, ports, traffic policies,
//! load-balancer status, session affinity, topology; and the check that a
//! selector matches some Pod. Allocation of what is left blank is in `alloc`.
//!
//! Never panics on input; every rejected field is a located diagnostic.

use super::validate::join;
use super::*;

/// A Service as parsed, before allocation.
pub(super) struct PendingService {
    pub(super) svc: Service,
    pub(super) cluster_ip_auto: bool,
    pub(super) want_families: Vec<IpFamily>,
    /// `spec.loadBalancerIP`, named when the Service has no address yet.
    pub(super) requested_load_balancer_ip: Option<IpAddr>,
    /// `spec.allocateLoadBalancerNodePorts` (default true): false leaves a
    /// LoadBalancer's ports without NodePorts unless they name one.
    pub(super) allocate_load_balancer_node_ports: bool,
    /// Where to point diagnostics found during allocation.
    pub(super) file: usize,
    pub(super) doc: usize,
}

impl Builder {
    pub(super) fn service(&mut self, o: &RawObject) -> Option<PendingService> {
        let (id, _, _) = self.meta(o, true)?;
        let obj = Self::object_name(o, &id);
        let mut c = self.ctx(o, obj);
        let n = &o.node;
        let empty = Y {
            span: n.span,
            value: Value::Map(Vec::new()),
        };
        let spec = n.get("spec").unwrap_or(&empty);
        c.unknown_keys(
            spec,
            "spec",
            &[
                "type",
                "clusterIP",
                "clusterIPs",
                "selector",
                "ports",
                "externalIPs",
                "loadBalancerIP",
                "loadBalancerSourceRanges",
                "externalTrafficPolicy",
                "internalTrafficPolicy",
                "healthCheckNodePort",
                "sessionAffinity",
                "sessionAffinityConfig",
                "publishNotReadyAddresses",
                "externalName",
                "ipFamilies",
                "ipFamilyPolicy",
                "allocateLoadBalancerNodePorts",
                "loadBalancerClass",
                "trafficDistribution",
            ],
        );
        let service_type = match spec.get("type").and_then(Y::as_str).unwrap_or("ClusterIP") {
            "ClusterIP" | "" => ServiceType::ClusterIP,
            "NodePort" => ServiceType::NodePort,
            "LoadBalancer" => ServiceType::LoadBalancer,
            "ExternalName" => ServiceType::ExternalName,
            other => {
                let at = spec.get("type").unwrap_or(spec);
                c.err(
                    at,
                    "spec.type",
                    format!("unknown Service type `{other}`"),
                    "use ClusterIP, NodePort, LoadBalancer or ExternalName",
                );
                return None;
            }
        };
        let mut cluster_ips = Vec::new();
        let mut headless = false;
        let mut cluster_ip_auto = true;
        let mut ip_nodes: Vec<(&Y, String)> = Vec::new();
        if let Some(list) = spec.get("clusterIPs").and_then(Y::as_seq) {
            for (i, x) in list.iter().enumerate() {
                ip_nodes.push((x, format!("spec.clusterIPs[{i}]")));
            }
        } else if let Some(x) = spec.get("clusterIP").filter(|x| !x.is_null()) {
            ip_nodes.push((x, "spec.clusterIP".into()));
        }
        for (x, field) in ip_nodes {
            match x.as_str() {
                Some("None") => {
                    headless = true;
                    cluster_ip_auto = false;
                }
                Some("") => {}
                _ => {
                    cluster_ip_auto = false;
                    if let Some(ip) = c.ip(x, &field) {
                        cluster_ips.push(ip);
                    }
                }
            }
        }
        let mut want_families = Vec::new();
        for f in c.seq(spec.get("ipFamilies"), "spec.ipFamilies") {
            match f.as_str() {
                Some("IPv4") => want_families.push(IpFamily::V4),
                Some("IPv6") => want_families.push(IpFamily::V6),
                _ => c.err(
                    f,
                    "spec.ipFamilies",
                    "unknown IP family",
                    "use IPv4 or IPv6",
                ),
            }
        }
        let selector = match spec.get("selector") {
            Some(s) if !s.is_null() => {
                let l = c.labels(Some(s), "spec.selector");
                (!l.is_empty()).then_some(l)
            }
            _ => None,
        };
        let mut ports = Vec::new();
        let mut names = BTreeSet::new();
        let port_list = c.seq(spec.get("ports"), "spec.ports");
        for (i, p) in port_list.iter().enumerate() {
            let path = format!("spec.ports[{i}]");
            c.unknown_keys(
                p,
                &path,
                &[
                    "name",
                    "protocol",
                    "port",
                    "targetPort",
                    "nodePort",
                    "appProtocol",
                ],
            );
            let name = c
                .string(p.get("name"), &join(&path, "name"))
                .unwrap_or_default();
            if name.is_empty() && port_list.len() > 1 {
                c.err(
                    p,
                    &join(&path, "name"),
                    "ports of a Service with several ports must be named",
                    "add `name: http` (any unique name)",
                );
                continue;
            }
            if !names.insert(name.clone()) {
                c.err(
                    p.get("name").unwrap_or(p),
                    &join(&path, "name"),
                    format!("duplicate port name `{name}`"),
                    "give each port a unique name",
                );
                continue;
            }
            let Some(port) = c.port(p.get("port"), &join(&path, "port")) else {
                if p.get("port").is_none() {
                    c.err(
                        p,
                        &join(&path, "port"),
                        "Service port has no `port`",
                        "add `port: 80`",
                    );
                }
                continue;
            };
            let protocol = Self::protocol(&mut c, p.get("protocol"), &join(&path, "protocol"));
            let target_port =
                Self::port_ref(&mut c, p.get("targetPort"), &join(&path, "targetPort"))
                    .unwrap_or(PortRef::Number(port));
            let node_port = if p.get("nodePort").is_some_and(|x| !x.is_null()) {
                let np = c
                    .int(p.get("nodePort"), &join(&path, "nodePort"), 1, 65535)
                    .map(|v| v as u16);
                if np.is_some() && service_type == ServiceType::ClusterIP {
                    c.warn(
                        p.get("nodePort").unwrap_or(p),
                        &join(&path, "nodePort"),
                        "nodePort is ignored on a ClusterIP Service",
                        "set `type: NodePort` to open it",
                    );
                    None
                } else {
                    np
                }
            } else {
                None
            };
            ports.push(ServicePort {
                name,
                protocol,
                port,
                target_port,
                node_port,
            });
        }
        let mut external_ips = Vec::new();
        for (i, x) in c
            .seq(spec.get("externalIPs"), "spec.externalIPs")
            .iter()
            .enumerate()
        {
            if let Some(ip) = c.ip(x, &format!("spec.externalIPs[{i}]")) {
                external_ips.push(ip);
            }
        }
        // kube-proxy reads the load balancer's addresses from the status only
        // (newBaseServiceInfo), and writes rules only for `ipMode: VIP` (the
        // default); a `Proxy` address is the load balancer's own, which it
        // proxies to the nodes.
        let mut load_balancer_ips = Vec::new();
        let mut load_balancer_proxy_ips = Vec::new();
        let ingress = n
            .get("status")
            .and_then(|s| s.get("loadBalancer"))
            .and_then(|l| l.get("ingress"));
        for (i, x) in c
            .seq(ingress, "status.loadBalancer.ingress")
            .iter()
            .enumerate()
        {
            let Some(ip) = x
                .get("ip")
                .and_then(|ipn| c.ip(ipn, &format!("status.loadBalancer.ingress[{i}].ip")))
            else {
                continue;
            };
            match x.get("ipMode").and_then(Y::as_str) {
                None | Some("VIP") => load_balancer_ips.push(ip),
                Some("Proxy") => load_balancer_proxy_ips.push(ip),
                Some(other) => c.err(
                    x.get("ipMode").unwrap_or(x),
                    &format!("status.loadBalancer.ingress[{i}].ipMode"),
                    format!("unknown ipMode `{other}`"),
                    "use VIP (traffic arrives addressed to this IP) or Proxy (the load balancer forwards it)",
                ),
            }
        }
        // A request to the cloud provider, not an address kube-proxy uses.
        let requested_load_balancer_ip = spec
            .get("loadBalancerIP")
            .filter(|x| !x.is_null() && x.as_str() != Some(""))
            .and_then(|x| c.ip(x, "spec.loadBalancerIP"));
        let allocate_load_balancer_node_ports = c
            .boolean(
                spec.get("allocateLoadBalancerNodePorts"),
                "spec.allocateLoadBalancerNodePorts",
            )
            .unwrap_or(true);
        let mut load_balancer_source_ranges = Vec::new();
        for (i, x) in c
            .seq(
                spec.get("loadBalancerSourceRanges"),
                "spec.loadBalancerSourceRanges",
            )
            .iter()
            .enumerate()
        {
            if let Some(net) = c.cidr(x, &format!("spec.loadBalancerSourceRanges[{i}]")) {
                load_balancer_source_ranges.push(net);
            }
        }
        let mut policy = |key: &str| match spec.get(key) {
            None => TrafficPolicy::Cluster,
            Some(x) => match x.as_str() {
                Some("Cluster") | Some("") | None => TrafficPolicy::Cluster,
                Some("Local") => TrafficPolicy::Local,
                Some(other) => {
                    c.err(
                        x,
                        &format!("spec.{key}"),
                        format!("unknown traffic policy `{other}`"),
                        "use Cluster or Local",
                    );
                    TrafficPolicy::Cluster
                }
            },
        };
        let mut external_traffic_policy = policy("externalTrafficPolicy");
        let internal_traffic_policy = policy("internalTrafficPolicy");
        let externally = matches!(
            service_type,
            ServiceType::NodePort | ServiceType::LoadBalancer
        ) || !external_ips.is_empty();
        if external_traffic_policy == TrafficPolicy::Local && !externally {
            // The API server drops it: it has no meaning without external addresses.
            external_traffic_policy = TrafficPolicy::Cluster;
        }
        let health_check_node_port =
            c.port(spec.get("healthCheckNodePort"), "spec.healthCheckNodePort");
        let session_affinity_seconds = match spec.get("sessionAffinity").and_then(Y::as_str) {
            Some("ClientIP") => Some(
                c.int(
                    spec.get("sessionAffinityConfig")
                        .and_then(|s| s.get("clientIP"))
                        .and_then(|s| s.get("timeoutSeconds")),
                    "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
                    1,
                    86_400,
                )
                .unwrap_or(10_800) as u32,
            ),
            None | Some("None") | Some("") => None,
            Some(other) => {
                let at = spec.get("sessionAffinity").unwrap_or(spec);
                c.err(
                    at,
                    "spec.sessionAffinity",
                    format!("unknown session affinity `{other}`"),
                    "use None or ClientIP",
                );
                None
            }
        };
        let publish_not_ready_addresses = c
            .boolean(
                spec.get("publishNotReadyAddresses"),
                "spec.publishNotReadyAddresses",
            )
            .unwrap_or(false);
        let external_name = c.string(spec.get("externalName"), "spec.externalName");
        let mut traffic_distribution = spec
            .get("trafficDistribution")
            .filter(|x| !x.is_null())
            .and_then(|x| {
                let found = x.as_str().and_then(TrafficDistribution::parse);
                if found.is_none() {
                    c.err(
                        x,
                        "spec.trafficDistribution",
                        format!("unknown trafficDistribution `{}`", x.as_str().unwrap_or("")),
                        "use PreferClose, PreferSameZone or PreferSameNode",
                    );
                }
                found
            });
        // With topology-mode Auto the controller hints endpoints by the
        // zones' CPU capacity (and then ignores trafficDistribution), which
        // kpv does not model: say so rather than show something else.
        // Slices written by hand keep the hints they have.
        let auto = n
            .get("metadata")
            .and_then(|m| m.get("annotations"))
            .and_then(|a| {
                a.get("service.kubernetes.io/topology-mode")
                    .or_else(|| a.get("service.kubernetes.io/topology-aware-hints"))
            })
            .filter(|v| matches!(v.as_str(), Some("Auto" | "auto")))
            .filter(|_| selector.is_some());
        if let Some(v) = auto {
            traffic_distribution = None;
            c.warn(
                v,
                "metadata.annotations",
                "topology-mode Auto: the EndpointSlice controller hints endpoints by the zones' CPU capacity, which kpv does not model, so its slices carry no hints",
                "use spec.trafficDistribution: PreferClose, or write the hints in an EndpointSlice",
            );
        }
        if service_type == ServiceType::ExternalName {
            cluster_ips.clear();
            cluster_ip_auto = false;
            if external_name.is_none() {
                c.err(
                    spec,
                    "spec.externalName",
                    "an ExternalName Service needs spec.externalName",
                    "add e.g. `externalName: db.example.com`",
                );
            }
        }
        if headless && service_type != ServiceType::ClusterIP {
            c.err(
                spec,
                "spec.clusterIP",
                "only ClusterIP Services can be headless (clusterIP: None)",
                "remove `clusterIP: None` or set `type: ClusterIP`",
            );
            return None;
        }
        if ports.is_empty()
            && !headless
            && service_type != ServiceType::ExternalName
            && c.errors == 0
        {
            c.err(
                spec,
                "spec.ports",
                "Service has no ports",
                "add at least one entry under spec.ports",
            );
        }
        Some(PendingService {
            svc: Service {
                id,
                service_type,
                cluster_ips,
                headless,
                selector,
                ports,
                external_ips,
                load_balancer_ips,
                load_balancer_proxy_ips,
                load_balancer_source_ranges,
                external_traffic_policy,
                internal_traffic_policy,
                health_check_node_port,
                session_affinity_seconds,
                publish_not_ready_addresses,
                external_name,
                traffic_distribution,
            },
            cluster_ip_auto,
            want_families,
            requested_load_balancer_ip,
            allocate_load_balancer_node_ports,
            file: o.file,
            doc: o.doc,
        })
    }

    pub(super) fn check_selectors(&mut self) {
        for svc in &self.cluster.services {
            if let Some(sel) = &svc.selector {
                let any = self
                    .cluster
                    .pods
                    .iter()
                    .any(|p| p.id.namespace == svc.id.namespace && selects(sel, &p.labels));
                if !any {
                    let sel_text: Vec<String> =
                        sel.iter().map(|(k, v)| format!("{k}={v}")).collect();
                    let mut d = Diagnostic::warning(format!(
                        "selector {} matches no Pod in namespace {}; the Service has no endpoints",
                        sel_text.join(","),
                        svc.id.namespace
                    ))
                    .with_hint(
                        "check the selector against the Pods' (or Deployment template's) labels",
                    );
                    d.object = Some(format!("Service/{}", svc.id));
                    d.field = Some("spec.selector".into());
                    self.diags.push(d);
                }
            }
        }
    }
}
