//! Lowering Services: type, Cluster IPs as given (checked in `families`),
//! ports, traffic policies,
//! load-balancer status, session affinity, topology; and the check that a
//! selector matches some Pod. Allocation of what is left blank is in `alloc`.
//!
//! Never panics on input; every rejected field is a located diagnostic.

use super::families::{families, Families, FamilyPolicy};
use super::validate::{join, NameRule};
use super::*;
use crate::util::diag::Span;

/// A Service as parsed, before allocation.
pub(super) struct PendingService {
    pub(super) svc: Service,
    pub(super) want_families: Vec<IpFamily>,
    /// `spec.loadBalancerIP`, named when the Service has no address yet.
    pub(super) requested_load_balancer_ip: Option<IpAddr>,
    /// `spec.loadBalancerClass`: a controller other than the cloud's
    /// default serves the Service (see `cloud`).
    pub(super) load_balancer_class: Option<String>,
    /// `spec.allocateLoadBalancerNodePorts` (default true): false leaves a
    /// LoadBalancer's ports without NodePorts unless they name one.
    pub(super) allocate_load_balancer_node_ports: bool,
    /// `spec.ipFamilyPolicy` (absent = SingleStack on create).
    pub(super) policy: FamilyPolicy,
    /// Where to point diagnostics found during allocation.
    pub(super) file: usize,
    pub(super) doc: usize,
    /// The object's span, and the spans of fields allocation checks.
    pub(super) at: Span,
    pub(super) cluster_ips_at: Option<Span>,
    pub(super) families_at: Vec<Span>,
    pub(super) policy_at: Option<Span>,
    /// Per entry of `svc.ports`: its path (`spec.ports[i]`) and where its
    /// `nodePort` was written.
    pub(super) ports_at: PortsAt,
}

/// A Service's ports, validated (names, numbers, protocols, NodePorts in
/// the API server's range, duplicates); `None` after an error that stops
/// the Service (reported in `c`).
fn ports(
    c: &mut Ctx<'_>,
    spec: &Y,
    service_type: ServiceType,
    (np_lo, np_hi, range_declared): (u16, u16, bool),
) -> Option<(Vec<ServicePort>, PortsAt)> {
    let mut ports = Vec::new();
    let mut ports_at = Vec::new();
    let mut names = BTreeSet::new();
    // A Service's own ports are few: a list serves.
    let mut seen_ports: Vec<(u16, Protocol)> = Vec::new();
    let mut seen_node_ports: Vec<(u16, Protocol)> = Vec::new();
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
        if let Some(msg) = (!name.is_empty())
            .then(|| NameRule::Dns1123Label.invalid(&name))
            .flatten()
        {
            c.err(
                p.get("name").unwrap_or(p),
                &join(&path, "name"),
                msg,
                NameRule::Dns1123Label.hint(),
            );
            return None;
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
        let protocol = Builder::protocol(c, p.get("protocol"), &join(&path, "protocol"));
        if !first_time(&mut seen_ports, (port, protocol)) {
            // field.Duplicate(portPath, core.ServicePort{Protocol, Port}),
            // printed with Go's %#v.
            c.err(
                p,
                &path,
                format!("Duplicate value: core.ServicePort{{Name:\"\", Protocol:\"{}\", AppProtocol:(*string)(nil), Port:{port}, TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:\"\"}}, NodePort:0}}", protocol.as_upper()),
                &format!("port {port}/{} is listed twice: remove one, or change its port or protocol", protocol.as_upper()),
            );
            return None;
        }
        let target_port = Builder::port_ref(c, p.get("targetPort"), &join(&path, "targetPort"))
            .unwrap_or(PortRef::Number(port));
        let node_port = node_port(
            c,
            p,
            &path,
            (service_type, protocol),
            (np_lo, np_hi, range_declared),
            &mut seen_node_ports,
        )?;
        ports_at.push((
            path.clone(),
            p.get("nodePort").filter(|x| !x.is_null()).map(|x| x.span),
        ));
        ports.push(ServicePort {
            name,
            protocol,
            port,
            target_port,
            node_port,
        });
    }
    Some((ports, ports_at))
}

/// A Service port's `nodePort`, if written: in the API server's range
/// (a warning when that range is only assumed), allowed for the type,
/// unique per protocol. `None` after an error that stops the Service.
fn node_port(
    c: &mut Ctx<'_>,
    p: &Y,
    path: &str,
    (service_type, protocol): (ServiceType, Protocol),
    (np_lo, np_hi, range_declared): (u16, u16, bool),
    seen_node_ports: &mut Vec<(u16, Protocol)>,
) -> Option<Option<u16>> {
    if p.get("nodePort").is_none_or(|x| x.is_null()) {
        return Some(None);
    }
    let np = c
        .int(p.get("nodePort"), &join(path, "nodePort"), 1, 65535)
        .map(|v| v as u16);
    let at = p.get("nodePort").unwrap_or(p);
    let field = join(path, "nodePort");
    if let Some(v) = np.filter(|v| !(np_lo..=np_hi).contains(v)) {
        let msg = format!("Invalid value: {v}: provided port is not in the valid range. The range of valid ports is {np_lo}-{np_hi}");
        let hint = format!(
            "leave nodePort out to have one allocated, or pick one from {np_lo} to {np_hi}"
        );
        if range_declared {
            c.err(at, &field, msg, &hint);
            return None;
        }
        // The API server's range is a flag kpv cannot see: with
        // the default the Service is refused; say so, keep it.
        c.warn(
            at,
            &field,
            format!("{msg} (the API server's default --service-node-port-range refuses this Service; kpv keeps it as if the range were wider)"),
            &format!("{hint}, or declare the cluster's range in a kubeadm ClusterConfiguration (apiServer.extraArgs service-node-port-range)"),
        );
    }
    match np {
        Some(_)
            if matches!(
                service_type,
                ServiceType::ClusterIP | ServiceType::ExternalName
            ) =>
        {
            let t = if service_type == ServiceType::ClusterIP {
                "ClusterIP"
            } else {
                "ExternalName"
            };
            c.err(
                at,
                &field,
                format!("Forbidden: may not be used when `type` is '{t}'"),
                "set `type: NodePort` to open it, or remove nodePort",
            );
            None
        }
        Some(v) if !first_time(seen_node_ports, (v, protocol)) => {
            c.err(
                at,
                &field,
                format!("Duplicate value: {v}"),
                "give each port of the same protocol its own nodePort",
            );
            None
        }
        other => Some(other),
    }
}

/// The load balancer's addresses, from the status only, as kube-proxy
/// reads them (`newBaseServiceInfo`): `ipMode: VIP` ones (the default),
/// which it writes rules for, and `Proxy` ones, the load balancer's own.
fn load_balancer_status(c: &mut Ctx<'_>, n: &Y) -> (Vec<IpAddr>, Vec<IpAddr>) {
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
    (load_balancer_ips, load_balancer_proxy_ips)
}

/// `externalTrafficPolicy` (Local only with external addresses, as the
/// API server keeps it), `internalTrafficPolicy`, and the health-check
/// NodePort where the API server allows one.
fn traffic_policies(
    c: &mut Ctx<'_>,
    spec: &Y,
    service_type: ServiceType,
    has_external_ips: bool,
) -> (TrafficPolicy, TrafficPolicy, Option<u16>) {
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
    ) || has_external_ips;
    if external_traffic_policy == TrafficPolicy::Local && !externally {
        // The API server drops it: it has no meaning without external addresses.
        external_traffic_policy = TrafficPolicy::Cluster;
    }
    let mut health_check_node_port =
        c.port(spec.get("healthCheckNodePort"), "spec.healthCheckNodePort");
    if health_check_node_port.is_some()
        && !(service_type == ServiceType::LoadBalancer
            && external_traffic_policy == TrafficPolicy::Local)
    {
        // The API server refuses it; kube-proxy would ignore it.
        let at = spec.get("healthCheckNodePort").unwrap_or(spec);
        c.warn(
            at,
            "spec.healthCheckNodePort",
            format!(
                "Invalid value: {}: may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local' (the API server refuses this; kpv ignores the field)",
                health_check_node_port.unwrap_or(0)
            ),
            "remove healthCheckNodePort, or set type LoadBalancer with externalTrafficPolicy: Local",
        );
        health_check_node_port = None;
    }
    (
        external_traffic_policy,
        internal_traffic_policy,
        health_check_node_port,
    )
}

/// `sessionAffinity: ClientIP`'s timeout in seconds (10,800 by default),
/// or `None`.
fn session_affinity(c: &mut Ctx<'_>, spec: &Y) -> Option<u32> {
    match spec.get("sessionAffinity").and_then(Y::as_str) {
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
    }
}

/// `trafficDistribution`, unless topology-mode Auto (which kpv does not
/// model) overrides it for a Service with a selector.
fn traffic_distribution(
    c: &mut Ctx<'_>,
    n: &Y,
    spec: &Y,
    has_selector: bool,
) -> Option<TrafficDistribution> {
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
        .filter(|_| has_selector);
    if let Some(v) = auto {
        traffic_distribution = None;
        c.warn(
            v,
            "metadata.annotations",
            "topology-mode Auto: the EndpointSlice controller hints endpoints by the zones' CPU capacity, which kpv does not model, so its slices carry no hints",
            "use spec.trafficDistribution: PreferClose, or write the hints in an EndpointSlice",
        );
    }
    traffic_distribution
}

/// What the API server refuses in combination: an invalid ExternalName,
/// source ranges on a Service that is not a LoadBalancer. `None` after
/// the error (reported in `c`).
fn refuse_combinations(
    c: &mut Ctx<'_>,
    spec: &Y,
    service_type: ServiceType,
    external_name: &Option<String>,
    load_balancer_source_ranges: &[IpNet],
) -> Option<()> {
    if let Some(target) = external_name {
        // ValidateDNS1123Subdomain of the name without its final dot.
        let bare = target.strip_suffix('.').unwrap_or(target);
        if service_type == ServiceType::ExternalName {
            if let Some(msg) = NameRule::Dns1123Subdomain.invalid(bare) {
                let at = spec.get("externalName").unwrap_or(spec);
                c.err(
                    at,
                    "spec.externalName",
                    msg,
                    "write a DNS name in lower case, like db.example.com",
                );
                return None;
            }
        }
    }
    if !load_balancer_source_ranges.is_empty() && service_type != ServiceType::LoadBalancer {
        let at = spec.get("loadBalancerSourceRanges").unwrap_or(spec);
        c.err(
            at,
            "spec.loadBalancerSourceRanges",
            "Forbidden: may only be used when `type` is 'LoadBalancer'",
            "set `type: LoadBalancer`, or remove loadBalancerSourceRanges",
        );
        return None;
    }
    Some(())
}

/// Each port's field path and its `nodePort`'s place, if written.
pub(super) type PortsAt = Vec<(String, Option<Span>)>;

/// The keys of a Service's `spec` kpv reads (others are named in a
/// warning).
const SPEC_KEYS: &[&str] = &[
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
];

/// `spec.type` (absent or empty: ClusterIP).
fn service_type(c: &mut Ctx<'_>, spec: &Y) -> Option<ServiceType> {
    match spec.get("type").and_then(Y::as_str).unwrap_or("ClusterIP") {
        "ClusterIP" | "" => Some(ServiceType::ClusterIP),
        "NodePort" => Some(ServiceType::NodePort),
        "LoadBalancer" => Some(ServiceType::LoadBalancer),
        "ExternalName" => Some(ServiceType::ExternalName),
        other => {
            let at = spec.get("type").unwrap_or(spec);
            c.err(
                at,
                "spec.type",
                format!("unknown Service type `{other}`"),
                "use ClusterIP, NodePort, LoadBalancer or ExternalName",
            );
            None
        }
    }
}

/// A list of addresses under `spec.KEY`; each bad one is reported.
fn addresses(c: &mut Ctx<'_>, spec: &Y, key: &str) -> Vec<IpAddr> {
    let mut out = Vec::new();
    let field = format!("spec.{key}");
    for (i, x) in c.seq(spec.get(key), &field).iter().enumerate() {
        if let Some(ip) = c.ip(x, &format!("{field}[{i}]")) {
            out.push(ip);
        }
    }
    out
}

/// What the Service asks of the cloud: `spec.loadBalancerIP` (a request
/// to the cloud provider, not an address kube-proxy uses),
/// `spec.loadBalancerClass`, `spec.allocateLoadBalancerNodePorts`.
fn load_balancer_request(c: &mut Ctx<'_>, spec: &Y) -> (Option<IpAddr>, Option<String>, bool) {
    let requested_ip = spec
        .get("loadBalancerIP")
        .filter(|x| !x.is_null() && x.as_str() != Some(""))
        .and_then(|x| c.ip(x, "spec.loadBalancerIP"));
    let class = spec
        .get("loadBalancerClass")
        .and_then(Y::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    let allocate_node_ports = c
        .boolean(
            spec.get("allocateLoadBalancerNodePorts"),
            "spec.allocateLoadBalancerNodePorts",
        )
        .unwrap_or(true);
    (requested_ip, class, allocate_node_ports)
}

/// `spec.loadBalancerSourceRanges`; each bad one is reported.
fn source_ranges(c: &mut Ctx<'_>, spec: &Y) -> Vec<IpNet> {
    let mut out = Vec::new();
    for (i, x) in c
        .seq(
            spec.get("loadBalancerSourceRanges"),
            "spec.loadBalancerSourceRanges",
        )
        .iter()
        .enumerate()
    {
        if let Some(net) = c.cidr(x, &format!("spec.loadBalancerSourceRanges[{i}]")) {
            out.push(net);
        }
    }
    out
}

/// What the type allows: an ExternalName Service has a name and no
/// cluster IP, only a ClusterIP Service is headless, others have ports.
/// `None` after an error that stops the Service.
fn check_shape(
    c: &mut Ctx<'_>,
    spec: &Y,
    (service_type, external_name): (ServiceType, &Option<String>),
    fam: &mut Families,
    no_ports: bool,
) -> Option<()> {
    if service_type == ServiceType::ExternalName {
        fam.cluster_ips.clear();
        if external_name.is_none() {
            c.err(
                spec,
                "spec.externalName",
                "an ExternalName Service needs spec.externalName",
                "add e.g. `externalName: db.example.com`",
            );
        }
    }
    if fam.headless && service_type != ServiceType::ClusterIP {
        c.err(
            spec,
            "spec.clusterIP",
            "only ClusterIP Services can be headless (clusterIP: None)",
            "remove `clusterIP: None` or set `type: ClusterIP`",
        );
        return None;
    }
    if no_ports && !fam.headless && service_type != ServiceType::ExternalName && c.errors == 0 {
        c.err(
            spec,
            "spec.ports",
            "Service has no ports",
            "add at least one entry under spec.ports",
        );
    }
    Some(())
}

impl Builder {
    pub(super) fn service(&mut self, o: &RawObject) -> Option<PendingService> {
        let (id, _, _) = self.meta(o, true)?;
        let (np_lo, np_hi) = self.cluster.node_port_range();
        let range_declared = self.cluster.node_port_range.is_some();
        let obj = Self::object_name(o, &id);
        let mut c = self.ctx(o, obj);
        let n = &o.node;
        let empty = Y {
            span: n.span,
            value: Value::Map(Vec::new()),
        };
        let spec = n.get("spec").unwrap_or(&empty);
        c.unknown_keys(spec, "spec", SPEC_KEYS);
        let service_type = service_type(&mut c, spec)?;
        let mut fam = families(&mut c, spec, service_type)?;
        let selector = match spec.get("selector") {
            Some(s) if !s.is_null() => {
                let l = c.labels(Some(s), "spec.selector");
                (!l.is_empty()).then_some(l)
            }
            _ => None,
        };
        let (ports, ports_at) = ports(&mut c, spec, service_type, (np_lo, np_hi, range_declared))?;
        let external_ips = addresses(&mut c, spec, "externalIPs");
        let (load_balancer_ips, load_balancer_proxy_ips) = load_balancer_status(&mut c, n);
        let (requested_load_balancer_ip, load_balancer_class, allocate_load_balancer_node_ports) =
            load_balancer_request(&mut c, spec);
        let load_balancer_source_ranges = source_ranges(&mut c, spec);
        let (external_traffic_policy, internal_traffic_policy, health_check_node_port) =
            traffic_policies(&mut c, spec, service_type, !external_ips.is_empty());
        let session_affinity_seconds = session_affinity(&mut c, spec);
        let publish_not_ready_addresses = c
            .boolean(
                spec.get("publishNotReadyAddresses"),
                "spec.publishNotReadyAddresses",
            )
            .unwrap_or(false);
        let external_name = c.string(spec.get("externalName"), "spec.externalName");
        let traffic_distribution = traffic_distribution(&mut c, n, spec, selector.is_some());
        refuse_combinations(
            &mut c,
            spec,
            service_type,
            &external_name,
            &load_balancer_source_ranges,
        )?;
        check_shape(
            &mut c,
            spec,
            (service_type, &external_name),
            &mut fam,
            ports.is_empty(),
        )?;
        let cilium = std::sync::Arc::new(super::cilium::service_annotations(&mut c, n));
        Some(PendingService {
            svc: Service {
                id,
                service_type,
                cluster_ips: fam.cluster_ips,
                headless: fam.headless,
                selector,
                ports,
                external_ips,
                load_balancer_ips,
                load_balancer_proxy_ips,
                load_balancer_assumed: false,
                load_balancer_source_ranges,
                external_traffic_policy,
                internal_traffic_policy,
                health_check_node_port,
                session_affinity_seconds,
                publish_not_ready_addresses,
                external_name,
                traffic_distribution,
                load_balancer_class: load_balancer_class.clone(),
                cilium,
            },
            want_families: fam.want_families,
            requested_load_balancer_ip,
            load_balancer_class,
            allocate_load_balancer_node_ports,
            policy: fam.family_policy,
            file: o.file,
            doc: o.doc,
            at: n.span,
            cluster_ips_at: fam.cluster_ips_at,
            families_at: fam.families_at,
            policy_at: fam.policy_at,
            ports_at,
        })
    }

    /// Relations of a Service to its Pods: a selector that matches no Pod,
    /// and a named targetPort that no selected Pod's container declares
    /// (the EndpointSlice controller then gives that port no endpoints).
    pub(super) fn check_selectors(&mut self) {
        for svc in &self.cluster.services {
            if let Some(sel) = &svc.selector {
                let selected: Vec<&Pod> = self
                    .cluster
                    .pods
                    .iter()
                    .filter(|p| p.id.namespace == svc.id.namespace && selects(sel, &p.labels))
                    .collect();
                for (i, sp) in svc.ports.iter().enumerate() {
                    let PortRef::Name(name) = &sp.target_port else {
                        continue;
                    };
                    if selected.is_empty()
                        || selected
                            .iter()
                            .any(|p| p.resolve_port(&sp.target_port, sp.protocol).is_some())
                    {
                        continue;
                    }
                    let path = self
                        .service_port_paths
                        .get(&svc.id)
                        .and_then(|paths| paths.get(i))
                        .cloned()
                        .unwrap_or_else(|| format!("spec.ports[{i}]"));
                    let mut d = Diagnostic::warning(format!(
                        "targetPort `{name}` ({}) is declared by no container of the {} Pod(s) the selector matches; this port gets no endpoints",
                        sp.protocol.as_upper(),
                        selected.len()
                    ))
                    .with_hint(format!(
                        "name a container port `{name}` (ports: - name: {name}, containerPort: …) or use the port number"
                    ));
                    d.object = Some(format!("Service/{}", svc.id));
                    d.field = Some(format!("{path}.targetPort"));
                    self.diags.push(d);
                }
                if selected.is_empty() {
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

/// Add `x` to `seen`; false when it was there already.
fn first_time<T: PartialEq>(seen: &mut Vec<T>, x: T) -> bool {
    if seen.contains(&x) {
        return false;
    }
    seen.push(x);
    true
}
