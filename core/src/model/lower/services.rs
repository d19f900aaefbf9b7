//! Lowering Services: type, Cluster IPs as given, ports, traffic policies,
//! load-balancer status, session affinity, topology; and the check that a
//! selector matches some Pod. Allocation of what is left blank is in `alloc`.
//!
//! Never panics on input; every rejected field is a located diagnostic.

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

/// `spec.ipFamilyPolicy` (the variants are the API's own names).
#[allow(clippy::enum_variant_names)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum FamilyPolicy {
    SingleStack,
    PreferDualStack,
    RequireDualStack,
}

/// A Service's cluster IPs, IP families and family policy, validated as
/// the API server's `ValidateServiceClusterIPsRelatedFields` does, in its
/// order; `None` after the first error (reported in `c`).
struct Families {
    cluster_ips: Vec<IpAddr>,
    headless: bool,
    want_families: Vec<IpFamily>,
    families_at: Vec<crate::util::diag::Span>,
    family_policy: FamilyPolicy,
    cluster_ips_at: Option<crate::util::diag::Span>,
    policy_at: Option<crate::util::diag::Span>,
}

fn families(c: &mut Ctx<'_>, spec: &Y, service_type: ServiceType) -> Option<Families> {
    let mut cluster_ips = Vec::new();
    let mut headless = false;
    let mut ip_nodes: Vec<(&Y, String)> = Vec::new();
    let single = spec.get("clusterIP").filter(|x| !x.is_null());
    let list = spec.get("clusterIPs").and_then(Y::as_seq);
    let cluster_ips_at = spec.get("clusterIPs").or(single).map(|x| x.span);
    let texts: Vec<String> = list
        .map(|l| {
            l.iter()
                .map(|x| x.as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default();
    // ValidateServiceClusterIPsRelatedFields, in its order.
    if let (Some(one), Some(first)) = (single.and_then(Y::as_str), texts.first()) {
        if !one.is_empty() && first != one {
            let at = spec.get("clusterIPs").unwrap_or(spec);
            c.err(
                at,
                "spec.clusterIPs",
                format!(
                    "Invalid value: {}: first value must match `clusterIP`",
                    go_strings(&texts)
                ),
                "make clusterIPs[0] the same as clusterIP, or give only one of them",
            );
            return None;
        }
    }
    if texts.len() > 1 && texts[0] == "None" {
        let at = spec.get("clusterIPs").unwrap_or(spec);
        c.err(
            at,
            "spec.clusterIPs",
            format!(
                "Invalid value: {}: 'None' must be the first and only value",
                go_strings(&texts)
            ),
            "a headless Service has `clusterIPs: [None]` and nothing else",
        );
        return None;
    }
    if texts.len() > 2 {
        let at = spec.get("clusterIPs").unwrap_or(spec);
        c.err(
            at,
            "spec.clusterIPs",
            format!(
                "Invalid value: {}: may only hold up to 2 values",
                go_strings(&texts)
            ),
            "give at most one IPv4 and one IPv6 address",
        );
        return None;
    }
    if let Some(list) = list {
        for (i, x) in list.iter().enumerate() {
            ip_nodes.push((x, format!("spec.clusterIPs[{i}]")));
        }
    } else if let Some(x) = single {
        ip_nodes.push((x, "spec.clusterIP".into()));
    }
    for (x, field) in ip_nodes {
        match x.as_str() {
            Some("None") => {
                headless = true;
            }
            Some("") => {}
            _ => {
                if let Some(ip) = c.ip(x, &field) {
                    cluster_ips.push(ip);
                }
            }
        }
    }
    if cluster_ips.len() == 2 && IpFamily::of(&cluster_ips[0]) == IpFamily::of(&cluster_ips[1]) {
        let at = spec.get("clusterIPs").unwrap_or(spec);
        c.err(
            at,
            "spec.clusterIPs",
            format!(
                "Invalid value: {}: may specify no more than one IP for each IP family",
                go_strings(&texts)
            ),
            "give one IPv4 and one IPv6 address",
        );
        return None;
    }
    let mut want_families = Vec::new();
    let mut families_at = Vec::new();
    for (i, f) in c
        .seq(spec.get("ipFamilies"), "spec.ipFamilies")
        .iter()
        .enumerate()
    {
        let field = format!("spec.ipFamilies[{i}]");
        let fam = match f.as_str() {
            Some("IPv4") => IpFamily::V4,
            Some("IPv6") => IpFamily::V6,
            other => {
                c.err(
                    f,
                    &field,
                    format!(
                        "Unsupported value: \"{}\": supported values: \"IPv4\", \"IPv6\"",
                        other.unwrap_or("")
                    ),
                    "use IPv4 or IPv6",
                );
                return None;
            }
        };
        if want_families.contains(&fam) {
            c.err(
                f,
                &field,
                format!("Duplicate value: \"{}\"", family_name(fam)),
                "list each family once: [IPv4], [IPv6], [IPv4, IPv6] or [IPv6, IPv4]",
            );
            return None;
        }
        want_families.push(fam);
        families_at.push(f.span);
    }
    if !headless {
        for (i, ip) in cluster_ips.iter().enumerate() {
            if let Some(&fam) = want_families.get(i) {
                if IpFamily::of(ip) != fam {
                    let field = if list.is_some() {
                        format!("spec.clusterIPs[{i}]")
                    } else {
                        "spec.clusterIP".to_string()
                    };
                    let at = spec.get("clusterIPs").or(single).unwrap_or(spec);
                    c.err(
                        at,
                        &field,
                        format!("Invalid value: \"{ip}\": expected an {} value as indicated by `ipFamilies[{i}]`", family_name(fam)),
                        "list the families in the order of the cluster IPs",
                    );
                    return None;
                }
            }
        }
    }
    let (family_policy, policy_at) = family_policy(
        c,
        spec,
        service_type,
        (cluster_ips.len(), want_families.len()),
    )?;
    Some(Families {
        cluster_ips,
        headless,
        want_families,
        families_at,
        family_policy,
        cluster_ips_at,
        policy_at,
    })
}

/// `ipFamilyPolicy` and where it is written, checked against how many
/// cluster IPs and families the Service gives.
fn family_policy(
    c: &mut Ctx<'_>,
    spec: &Y,
    service_type: ServiceType,
    (n_ips, n_families): (usize, usize),
) -> Option<(FamilyPolicy, Option<Span>)> {
    let policy_node = spec.get("ipFamilyPolicy").filter(|x| !x.is_null());
    let family_policy = match policy_node.map(|x| x.as_str().unwrap_or("?")) {
        None => FamilyPolicy::SingleStack,
        Some("SingleStack") => FamilyPolicy::SingleStack,
        Some("PreferDualStack") => FamilyPolicy::PreferDualStack,
        Some("RequireDualStack") => FamilyPolicy::RequireDualStack,
        Some(other) => {
            c.err(
                policy_node.unwrap_or(spec),
                "spec.ipFamilyPolicy",
                format!("Unsupported value: \"{other}\": supported values: \"PreferDualStack\", \"RequireDualStack\", \"SingleStack\""),
                "use SingleStack, PreferDualStack or RequireDualStack",
            );
            return None;
        }
    };
    if family_policy == FamilyPolicy::SingleStack
        && policy_node.is_some()
        && service_type != ServiceType::ExternalName
    {
        let what = if n_ips == 2 {
            Some("cluster IPs")
        } else if n_families == 2 {
            Some("IP families")
        } else {
            None
        };
        if let Some(what) = what {
            c.err(
                policy_node.unwrap_or(spec),
                "spec.ipFamilyPolicy",
                format!("Invalid value: \"SingleStack\": must be 'RequireDualStack' or 'PreferDualStack' when multiple {what} are specified"),
                "set ipFamilyPolicy: PreferDualStack or RequireDualStack, or give one family",
            );
            return None;
        }
    }
    // Absent, a policy is SingleStack (and then two IPs or families are
    // the same error as above).
    if policy_node.is_none()
        && (n_ips == 2 || n_families == 2)
        && service_type != ServiceType::ExternalName
    {
        let what = if n_ips == 2 {
            "cluster IPs"
        } else {
            "IP families"
        };
        c.err(
            spec,
            "spec.ipFamilyPolicy",
            format!("Invalid value: \"SingleStack\": must be 'RequireDualStack' or 'PreferDualStack' when multiple {what} are specified"),
            "add `ipFamilyPolicy: PreferDualStack` (or RequireDualStack)",
        );
        return None;
    }
    Some((family_policy, policy_node.map(|x| x.span)))
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
        let node_port = if p.get("nodePort").is_some_and(|x| !x.is_null()) {
            let np = c
                .int(p.get("nodePort"), &join(&path, "nodePort"), 1, 65535)
                .map(|v| v as u16);
            let at = p.get("nodePort").unwrap_or(p);
            let field = join(&path, "nodePort");
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
                    return None;
                }
                Some(v) if !first_time(&mut seen_node_ports, (v, protocol)) => {
                    c.err(
                        at,
                        &field,
                        format!("Duplicate value: {v}"),
                        "give each port of the same protocol its own nodePort",
                    );
                    return None;
                }
                other => other,
            }
        } else {
            None
        };
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

/// Go's `%#v` of a `[]string`, as the API server prints a list it refuses.
pub(super) fn go_strings(ips: &[String]) -> String {
    let quoted: Vec<String> = ips.iter().map(|s| crate::util::diag::quoted(s)).collect();
    format!("[]string{{{}}}", quoted.join(", "))
}

/// `IPv4` / `IPv6`, as the API names a family.
pub(super) fn family_name(f: IpFamily) -> &'static str {
    match f {
        IpFamily::V4 => "IPv4",
        IpFamily::V6 => "IPv6",
    }
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
        let mut fam = families(&mut c, spec, service_type)?;
        let selector = match spec.get("selector") {
            Some(s) if !s.is_null() => {
                let l = c.labels(Some(s), "spec.selector");
                (!l.is_empty()).then_some(l)
            }
            _ => None,
        };
        let (ports, ports_at) = ports(&mut c, spec, service_type, (np_lo, np_hi, range_declared))?;
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
        let (load_balancer_ips, load_balancer_proxy_ips) = load_balancer_status(&mut c, n);
        // A request to the cloud provider, not an address kube-proxy uses.
        let requested_load_balancer_ip = spec
            .get("loadBalancerIP")
            .filter(|x| !x.is_null() && x.as_str() != Some(""))
            .and_then(|x| c.ip(x, "spec.loadBalancerIP"));
        let load_balancer_class = spec
            .get("loadBalancerClass")
            .and_then(Y::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
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
        if ports.is_empty()
            && !fam.headless
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
