//! Lowering the cluster's frame: KubeProxyConfiguration, ServiceCIDRs and
//! Nodes, and synthesising Nodes (names, addresses, podCIDRs) when the input
//! gives none.
//!
//! Never panics on input; unknown settings are warned about, not dropped silently.

use super::*;

/// How many nodes kpv assumes when the input names none: a small cluster
/// of the usual shape (one control plane's workers), so that a workload's
/// Pods spread and traffic crosses nodes as it does in a real cluster.
pub const ASSUMED_NODES: usize = 3;

impl Builder {
    pub(super) fn proxy_config(&mut self, o: &RawObject) {
        if self.cluster.proxy_config_given {
            let mut c = self.ctx(o, "KubeProxyConfiguration".into());
            c.err(
                &o.node,
                "",
                "more than one KubeProxyConfiguration; this one is ignored",
                "give one configuration per input",
            );
            return;
        }
        self.cluster.proxy_config_given = true;
        let mut cfg = ProxyConfig::default();
        let n = &o.node;
        let mut c = self.ctx(o, "KubeProxyConfiguration".into());
        c.unknown_keys(
            n,
            "",
            &[
                "apiVersion",
                "kind",
                "metadata",
                "mode",
                "hostnameOverride",
                "clusterCIDR",
                "detectLocalMode",
                "detectLocal",
                "nodePortAddresses",
                "iptables",
                "ipvs",
                "nftables",
                "bindAddress",
                "healthzBindAddress",
                "metricsBindAddress",
                "featureGates",
                "clientConnection",
                "conntrack",
                "oomScoreAdj",
                "portRange",
                "configSyncPeriod",
                "showHiddenMetricsForVersion",
                "winkernel",
                "logging",
                "enableProfiling",
                "bindAddressHardFail",
                "udpIdleTimeout",
            ],
        );
        proxy_mode(&mut c, n, &mut cfg);
        proxy_cluster_cidr(&mut c, n, &mut cfg);
        proxy_detect_local(&mut c, n, &mut cfg);
        proxy_sync_periods(&mut c, n, &mut cfg);
        proxy_port_range(&mut c, n, &mut cfg);
        proxy_node_port_addresses(&mut c, n, &mut cfg);
        proxy_mode_sections(&mut c, n, &mut cfg);
        self.cluster.proxy = cfg;
    }

    /// kubeadm's ClusterConfiguration: the API server's flags kpv needs
    /// (`--service-node-port-range` from `apiServer.extraArgs`) and
    /// `networking.serviceSubnet` (`--service-cluster-ip-range`, used when
    /// no ServiceCIDR object is given).
    pub(super) fn cluster_configuration(&mut self, o: &RawObject) {
        let n = &o.node;
        let mut c = self.ctx(o, "ClusterConfiguration".into());
        // v1beta3: extraArgs is a map; v1beta4: a list of {name, value}.
        let args = n.get("apiServer").and_then(|a| a.get("extraArgs"));
        let mut range = None;
        if let Some(a) = args {
            if let Some(v) = a.get("service-node-port-range") {
                range = Some(v);
            }
            for x in a.as_seq().unwrap_or(&[]) {
                if x.get("name").and_then(Y::as_str) == Some("service-node-port-range") {
                    range = x.get("value");
                }
            }
        }
        let mut node_port_range = None;
        if let Some(v) = range {
            // net.ParsePortRange: "BASE-MAX" or "BASE+SIZE".
            let text = v.as_str().unwrap_or("");
            let parsed = if let Some((a, b)) = text.split_once('-') {
                a.trim()
                    .parse::<u16>()
                    .ok()
                    .zip(b.trim().parse::<u16>().ok())
            } else if let Some((a, b)) = text.split_once('+') {
                a.trim()
                    .parse::<u16>()
                    .ok()
                    .zip(b.trim().parse::<u16>().ok())
                    .and_then(|(a, n)| Some((a, a.checked_add(n)?)))
            } else {
                None
            };
            match parsed {
                Some((lo, hi)) if lo >= 1 && lo <= hi => node_port_range = Some((lo, hi)),
                _ => c.err(
                    v,
                    "apiServer.extraArgs.service-node-port-range",
                    format!("`{text}` is not a port range"),
                    "write e.g. 30000-32767",
                ),
            }
        }
        let mut subnets = Vec::new();
        if let Some(s) = n
            .get("networking")
            .and_then(|x| x.get("serviceSubnet"))
            .filter(|x| !x.is_null())
        {
            for part in s
                .as_str()
                .unwrap_or("")
                .split(',')
                .filter(|p| !p.trim().is_empty())
            {
                match parse_cidr_sloppy(part.trim()) {
                    Some(net) => subnets.push(net),
                    None => c.err(
                        s,
                        "networking.serviceSubnet",
                        format!("`{part}` is not a valid CIDR"),
                        "write e.g. 10.96.0.0/12 (comma-separated for dual-stack)",
                    ),
                }
            }
        }
        self.cluster.node_port_range = node_port_range.or(self.cluster.node_port_range);
        self.service_subnet.extend(subnets);
    }

    pub(super) fn service_cidr(&mut self, o: &RawObject) {
        let Some((id, _, _)) = self.meta(o, false) else {
            return;
        };
        let obj = Self::object_name(o, &id);
        let mut c = self.ctx(o, obj);
        let spec = o.node.get("spec");
        let mut out = Vec::new();
        for (i, n) in c
            .seq(spec.and_then(|s| s.get("cidrs")), "spec.cidrs")
            .iter()
            .enumerate()
        {
            if let Some(net) = c.cidr(n, &format!("spec.cidrs[{i}]")) {
                out.push(net);
            }
        }
        self.cluster.service_cidrs.extend(out);
    }

    pub(super) fn node(&mut self, o: &RawObject) {
        let Some((id, labels, _)) = self.meta(o, false) else {
            return;
        };
        let obj = Self::object_name(o, &id);
        let mut c = self.ctx(o, obj);
        let spec = o.node.get("spec");
        let mut pod_cidrs = Vec::new();
        if let Some(p) = spec.and_then(|s| s.get("podCIDR")).filter(|p| !p.is_null()) {
            if let Some(net) = c.cidr(p, "spec.podCIDR") {
                pod_cidrs.push(net);
            }
        }
        for (i, p) in c
            .seq(spec.and_then(|s| s.get("podCIDRs")), "spec.podCIDRs")
            .iter()
            .enumerate()
        {
            if let Some(net) = c.cidr(p, &format!("spec.podCIDRs[{i}]")) {
                if !pod_cidrs.contains(&net) {
                    pod_cidrs.push(net);
                }
            }
        }
        let mut addresses = Vec::new();
        let status = o.node.get("status");
        for (i, a) in c
            .seq(status.and_then(|s| s.get("addresses")), "status.addresses")
            .iter()
            .enumerate()
        {
            let kind = match a.get("type").and_then(Y::as_str) {
                Some("InternalIP") => NodeAddressKind::InternalIP,
                Some("ExternalIP") => NodeAddressKind::ExternalIP,
                _ => continue, // Hostname, InternalDNS…: not IPs
            };
            if let Some(addr) = a.get("address") {
                if let Some(ip) = c.ip(addr, &format!("status.addresses[{i}].address")) {
                    addresses.push((kind, ip));
                }
            }
        }
        if addresses.is_empty() {
            // Not Kubernetes' rule but the simulator's stand-in: a real node
            // reports its addresses, and kube-proxy's rules use them.
            c.warn(
                status
                    .and_then(|s| s.get("addresses"))
                    .or(status)
                    .or_else(|| o.node.get("metadata").and_then(|m| m.get("name")))
                    .unwrap_or(&o.node),
                "status.addresses",
                format!(
                    "Node {} has no InternalIP or ExternalIP in status.addresses: the simulator gives it an address of its own (192.168.0.x) for kube-proxy's modes; Cilium, which takes NodePort addresses from the node, has none (only the 0.0.0.0 NodePort entries)",
                    id.name
                ),
                "copy status.addresses from `kubectl get node -o yaml`",
            );
        }
        let zone = labels.get("topology.kubernetes.io/zone").cloned();
        let mut taints = Vec::new();
        for (i, t) in c
            .seq(spec.and_then(|s| s.get("taints")), "spec.taints")
            .iter()
            .enumerate()
        {
            let p = format!("spec.taints[{i}]");
            let key = c
                .string(t.get("key"), &format!("{p}.key"))
                .unwrap_or_default();
            let effect = c
                .string(t.get("effect"), &format!("{p}.effect"))
                .unwrap_or_default();
            if !matches!(
                effect.as_str(),
                "NoSchedule" | "PreferNoSchedule" | "NoExecute"
            ) {
                c.err(
                    t.get("effect").unwrap_or(t),
                    &format!("{p}.effect"),
                    format!("Unsupported value: \"{effect}\": supported values: \"NoExecute\", \"NoSchedule\", \"PreferNoSchedule\""),
                    "use NoSchedule, PreferNoSchedule or NoExecute",
                );
                continue;
            }
            taints.push(Taint {
                key,
                value: c
                    .string(t.get("value"), &format!("{p}.value"))
                    .unwrap_or_default(),
                effect,
            });
        }
        let unschedulable = c
            .boolean(
                spec.and_then(|s| s.get("unschedulable")),
                "spec.unschedulable",
            )
            .unwrap_or(false);
        // The scheduler counts against allocatable; capacity when only
        // that is given; the kubelet's default maxPods otherwise.
        let mut max_pods = DEFAULT_MAX_PODS;
        for key in ["capacity", "allocatable"] {
            let field = format!("status.{key}.pods");
            if let Some(v) = status.and_then(|s| s.get(key)).and_then(|x| x.get("pods")) {
                // Quantities are often quoted ("110").
                let text = v.as_str().unwrap_or("");
                match text.parse::<u32>() {
                    Ok(n) => max_pods = n,
                    Err(_) => c.err(
                        v,
                        &field,
                        format!("`{text}` is not a whole number of Pods"),
                        "write e.g. \"110\"",
                    ),
                }
            }
        }
        let addresses_unstated = addresses.is_empty();
        self.cluster.nodes.push(Node {
            name: id.name,
            labels,
            addresses,
            pod_cidrs,
            zone,
            taints,
            unschedulable,
            max_pods,
            addresses_unstated,
        });
    }

    /// Nodes: synthesise them when none are given, and give each a podCIDR and an address.
    pub(super) fn finish_nodes(&mut self, reserved: &BTreeSet<IpAddr>) {
        let mut assumed: Vec<String> = Vec::new();
        if self.cluster.nodes.is_empty() {
            let mut names: Vec<String> = self
                .cluster
                .pods
                .iter()
                .filter_map(|p| p.node_name.clone())
                .collect();
            names.extend(
                self.cluster
                    .endpoint_slices
                    .iter()
                    .flat_map(|s| s.endpoints.iter().filter_map(|e| e.node_name.clone())),
            );
            if let Some(h) = &self.cluster.proxy.hostname_override {
                names.push(h.clone());
            }
            crate::util::order::sort(&mut names);
            names.dedup();
            if names.is_empty() {
                // Nothing names a node: a small cluster of the usual shape,
                // over which the scheduler spreads each workload's Pods.
                names.extend((1..=ASSUMED_NODES).map(|i| format!("node-{i}")));
            }
            assumed = names.clone();
            for name in names {
                self.cluster.nodes.push(Node {
                    name,
                    labels: Labels::new(),
                    addresses: Vec::new(),
                    pod_cidrs: Vec::new(),
                    zone: None,
                    taints: Vec::new(),
                    unschedulable: false,
                    max_pods: DEFAULT_MAX_PODS,
                    addresses_unstated: false,
                });
            }
        }
        crate::util::order::sort_by(&mut self.cluster.nodes, |a, b| a.name.cmp(&b.name));
        let pool = self
            .cluster
            .proxy
            .cluster_cidrs
            .iter()
            .find(|c| c.addr().is_ipv4() && c.prefix_len() <= 24)
            .copied()
            .or_else(|| "10.244.0.0/16".parse().ok());
        let used: Vec<IpNet> = self
            .cluster
            .nodes
            .iter()
            .flat_map(|n| n.pod_cidrs.clone())
            .collect();
        // Synthesised node addresses: 192.168.0.(2+i), skipping any address
        // something in the input already has (a real node's, a Pod's, a
        // Service's), and the .0 and .255 of each /24.
        let mut taken: BTreeSet<IpAddr> = reserved.clone();
        taken.extend(
            self.cluster
                .nodes
                .iter()
                .flat_map(|n| n.addresses.iter().map(|(_, ip)| *ip)),
        );
        taken.extend(self.cluster.pods.iter().flat_map(|p| p.ips.iter().copied()));
        taken.extend(
            self.cluster
                .endpoint_slices
                .iter()
                .flat_map(|s| s.endpoints.iter().flat_map(|e| e.addresses.iter().copied())),
        );
        let mut next = 0u32;
        for (i, node) in self.cluster.nodes.iter_mut().enumerate() {
            if node.addresses.is_empty() {
                let mut offset = 2 + i as u32;
                let ip = loop {
                    let ip = std::net::Ipv4Addr::from(0xc0a8_0000u32 + offset);
                    let host = offset & 0xff;
                    if offset > 0xfffe {
                        break None; // 65,000 nodes without addresses: leave the rest
                    }
                    if host != 0 && host != 255 && !taken.contains(&IpAddr::V4(ip)) {
                        break Some(ip);
                    }
                    offset += 1;
                };
                if let Some(ip) = ip {
                    taken.insert(IpAddr::V4(ip));
                    node.addresses
                        .push((NodeAddressKind::InternalIP, IpAddr::V4(ip)));
                }
            }
            if node.pod_cidr(IpFamily::V4).is_none() {
                if let Some(IpNet::V4(pool)) = pool {
                    // The next free /24 of the pool.
                    while let Ok(sub) = pool.subnets(24).map(|mut s| s.nth(next as usize)) {
                        next += 1;
                        match sub {
                            Some(sub) if !used.contains(&IpNet::V4(sub)) => {
                                node.pod_cidrs.push(IpNet::V4(sub));
                                break;
                            }
                            Some(_) => continue,
                            None => break,
                        }
                    }
                }
            }
        }
        if !assumed.is_empty() {
            self.say_assumed_nodes(&assumed);
        }
    }

    /// The warning that states the assumed cluster: each node's name,
    /// address and Pod CIDR.
    fn say_assumed_nodes(&mut self, names: &[String]) {
        let mut described = Vec::new();
        for n in &self.cluster.nodes {
            if !names.contains(&n.name) {
                continue;
            }
            let mut what = Vec::new();
            if let Some((_, ip)) = n.addresses.first() {
                what.push(ip.to_string());
            }
            if let Some(c) = n.pod_cidrs.first() {
                what.push(format!("Pods {c}"));
            }
            described.push(format!("{} ({})", n.name, what.join(", ")));
        }
        let count = match described.len() {
            1 => "1 node".to_string(),
            n => format!("{n} nodes"),
        };
        let mut d = Diagnostic::warning(format!(
            "no Node objects given; assuming {count}: {}",
            described.join("; ")
        ))
        .with_hint("add Node objects (kubectl get nodes -o yaml) for real addresses");
        d.object = Some("Node".into());
        self.diags.push(d);
    }
}

/// A Go duration (`time.ParseDuration`) in whole milliseconds: `1s`,
/// `500ms`, `1m30s`, `1.5s`, `0`. Counted in integer nanoseconds (digits
/// past the nanosecond are dropped), rounded to the nearest millisecond.
pub(super) fn parse_go_duration(text: &str) -> Option<u64> {
    let t = text.trim();
    if t == "0" {
        return Some(0);
    }
    let mut rest = t;
    let mut total_ns = 0u128;
    let mut any = false;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (whole, frac) = match rest[..num_len].split_once('.') {
            Some((w, f)) => (w, f),
            None => (&rest[..num_len], ""),
        };
        if (whole.is_empty() && frac.is_empty()) || frac.contains('.') {
            return None;
        }
        rest = &rest[num_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit_ns: u128 = match &rest[..unit_len] {
            "ns" => 1,
            "us" | "µs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        rest = &rest[unit_len..];
        let mut value = 0u128;
        for d in whole.bytes() {
            value = value.checked_mul(10)?.checked_add(u128::from(d - b'0'))?;
        }
        total_ns = total_ns.checked_add(value.checked_mul(unit_ns)?)?;
        // The fraction's first 20 digits, as a count of unit / 10^digits.
        let mut part = 0u128;
        for d in frac.bytes().take(20) {
            part = part * 10 + u128::from(d - b'0');
        }
        let digits = frac.len().min(20) as u32;
        total_ns += part * unit_ns / 10u128.pow(digits);
        any = true;
    }
    let ms = (total_ns + 500_000) / 1_000_000;
    (any && ms < 1_000_000_000_000_000).then_some(ms as u64)
}

/// KubeProxyConfiguration's the proxy mode (`mode`).
fn proxy_mode(c: &mut Ctx<'_>, n: &Y, cfg: &mut ProxyConfig) {
    if let Some(m) = n.get("mode") {
        match m.as_str().unwrap_or("") {
            "" => {}
            s => match Mode::parse(s).filter(|m| *m != Mode::Cilium) {
                Some(mode) => cfg.mode = mode,
                None => c.err(
                    m,
                    "mode",
                    format!("unknown proxy mode `{s}`"),
                    "use userspace, iptables, ipvs or nftables",
                ),
            },
        }
    }
}

/// KubeProxyConfiguration's `hostnameOverride` and `clusterCIDR` (comma-separated for dual-stack).
fn proxy_cluster_cidr(c: &mut Ctx<'_>, n: &Y, cfg: &mut ProxyConfig) {
    cfg.hostname_override = c
        .string(n.get("hostnameOverride"), "hostnameOverride")
        .filter(|s| !s.is_empty());
    if let Some(cc) = n.get("clusterCIDR").filter(|x| !x.is_null()) {
        for part in cc
            .as_str()
            .unwrap_or("")
            .split(',')
            .filter(|p| !p.trim().is_empty())
        {
            match parse_cidr_sloppy(part) {
                Some(net) => cfg.cluster_cidrs.push(net),
                None => c.err(
                    cc,
                    "clusterCIDR",
                    format!("`{part}` is not a valid CIDR"),
                    "write e.g. 10.244.0.0/16 (comma-separated for dual-stack)",
                ),
            }
        }
    }
}

/// KubeProxyConfiguration's `detectLocalMode` and `detectLocal`: which packets are local.
fn proxy_detect_local(c: &mut Ctx<'_>, n: &Y, cfg: &mut ProxyConfig) {
    if let Some(m) = n.get("detectLocalMode").filter(|x| !x.is_null()) {
        match m.as_str().unwrap_or("") {
            "" | "ClusterCIDR" => cfg.detect_local_mode = DetectLocalMode::ClusterCidr,
            "NodeCIDR" => cfg.detect_local_mode = DetectLocalMode::NodeCidr,
            s @ ("BridgeInterface" | "InterfaceNamePrefix") => {
                // kube-proxy matches the interface the packet came in on
                // (`-i BRIDGE` / `-i PREFIX+`): traffic from this node's
                // Pods. kpv's packets carry no interface; a packet from
                // a Pod of this node is the same set as NodeCIDR's.
                let (key, example) = if s == "BridgeInterface" {
                    ("bridgeInterface", "cbr0")
                } else {
                    ("interfaceNamePrefix", "veth")
                };
                let given = n
                    .get("detectLocal")
                    .and_then(|d| d.get(key))
                    .and_then(Y::as_str)
                    .filter(|x| !x.is_empty());
                cfg.detect_local_mode = DetectLocalMode::NodeCidr;
                c.warn(
                    m,
                    "detectLocalMode",
                    match given {
                        Some(v) => format!("detectLocalMode {s} matches packets arriving on interface `{v}`, i.e. from this node's Pods; kpv models that as NodeCIDR (source in the node's podCIDR)"),
                        None => format!("detectLocalMode {s} needs detectLocal.{key} (kube-proxy refuses to start without it); kpv models it as NodeCIDR"),
                    },
                    &format!("give detectLocal: {{{key}: {example}}}; the rules then say `-i` where kpv shows the node's podCIDR"),
                );
            }
            s => c.err(
                m,
                "detectLocalMode",
                format!("Unsupported value: \"{s}\": supported values: \"BridgeInterface\", \"ClusterCIDR\", \"InterfaceNamePrefix\", \"NodeCIDR\""),
                "use ClusterCIDR, NodeCIDR, BridgeInterface or InterfaceNamePrefix",
            ),
        }
    }
}

/// KubeProxyConfiguration's the sync periods: the active mode's section, or the top-level fields.
fn proxy_sync_periods(c: &mut Ctx<'_>, n: &Y, cfg: &mut ProxyConfig) {
    let section = match cfg.mode {
        Mode::Iptables | Mode::Userspace | Mode::Cilium => "iptables",
        Mode::Ipvs => "ipvs",
        Mode::Nftables => "nftables",
    };
    for (field, node) in [
        ("minSyncPeriod".to_string(), n.get("minSyncPeriod")),
        ("syncPeriod".to_string(), n.get("syncPeriod")),
        (
            format!("{section}.minSyncPeriod"),
            n.get(section).and_then(|x| x.get("minSyncPeriod")),
        ),
        (
            format!("{section}.syncPeriod"),
            n.get(section).and_then(|x| x.get("syncPeriod")),
        ),
    ] {
        let Some(v) = node.filter(|x| !x.is_null()) else {
            continue;
        };
        let text = v.as_str().unwrap_or("");
        let Some(ms) = parse_go_duration(text) else {
            c.err(
                v,
                &field,
                format!("`{text}` is not a duration"),
                "write a duration like 1s, 500ms or 1m0s",
            );
            continue;
        };
        if field.ends_with("minSyncPeriod") {
            cfg.min_sync_period_ms = Some(ms);
        } else {
            c.warn(
                v,
                &field,
                format!("syncPeriod {text} is read but changes nothing kpv shows: the periodic full resync rewrites the same rules"),
                "minSyncPeriod is what sets how soon a change reaches the rules",
            );
        }
    }
}

/// KubeProxyConfiguration's `portRange` (userspace mode's proxy ports).
fn proxy_port_range(c: &mut Ctx<'_>, n: &Y, cfg: &mut ProxyConfig) {
    if let Some(v) = n.get("portRange").filter(|x| !x.is_null()) {
        let text = v.as_str().unwrap_or("");
        let parsed = text
            .split_once('-')
            .and_then(|(a, b)| {
                a.trim()
                    .parse::<u16>()
                    .ok()
                    .zip(b.trim().parse::<u16>().ok())
            })
            .filter(|(a, b)| *a >= 1 && a <= b);
        match parsed {
            Some(r) => {
                cfg.port_range = Some(r);
                if cfg.mode != Mode::Userspace {
                    c.warn(
                        v,
                        "portRange",
                        format!(
                            "portRange is used by userspace mode only; {} mode ignores it",
                            cfg.mode.as_str()
                        ),
                        "remove it, or use mode: userspace",
                    );
                }
            }
            None if text.is_empty() => {}
            None => c.err(
                v,
                "portRange",
                format!("`{text}` is not a port range"),
                "write e.g. 30000-30100",
            ),
        }
    }
}

/// KubeProxyConfiguration's `nodePortAddresses`.
fn proxy_node_port_addresses(c: &mut Ctx<'_>, n: &Y, cfg: &mut ProxyConfig) {
    for (i, a) in c
        .seq(n.get("nodePortAddresses"), "nodePortAddresses")
        .iter()
        .enumerate()
    {
        let field = format!("nodePortAddresses[{i}]");
        if a.as_str() == Some("primary") {
            cfg.node_port_addresses.push(NodePortAddress::Primary);
        } else if let Some(net) = c.cidr(a, &field) {
            cfg.node_port_addresses.push(NodePortAddress::Cidr(net));
        }
    }
}

/// KubeProxyConfiguration's the `iptables`, `ipvs` and `nftables` sections.
fn proxy_mode_sections(c: &mut Ctx<'_>, n: &Y, cfg: &mut ProxyConfig) {
    if let Some(ipt) = n.get("iptables") {
        c.unknown_keys(
            ipt,
            "iptables",
            &[
                "masqueradeAll",
                "localhostNodePorts",
                "masqueradeBit",
                "minSyncPeriod",
                "syncPeriod",
            ],
        );
        if let Some(v) = c.boolean(ipt.get("masqueradeAll"), "iptables.masqueradeAll") {
            cfg.iptables_masquerade_all = v;
        }
        if let Some(v) = c.boolean(ipt.get("localhostNodePorts"), "iptables.localhostNodePorts") {
            cfg.iptables_localhost_nodeports = v;
        }
        if let Some(v) = c.int(ipt.get("masqueradeBit"), "iptables.masqueradeBit", 0, 31) {
            cfg.iptables_masquerade_bit = v as u8;
        }
    }
    if let Some(ipvs) = n.get("ipvs") {
        c.unknown_keys(
            ipvs,
            "ipvs",
            &[
                "scheduler",
                "minSyncPeriod",
                "syncPeriod",
                "excludeCIDRs",
                "strictARP",
                "tcpTimeout",
                "tcpFinTimeout",
                "udpTimeout",
            ],
        );
        if let Some(s) = ipvs.get("scheduler").filter(|x| !x.is_null()) {
            match s.as_str().unwrap_or("") {
                "" => {}
                name => match Scheduler::parse(name) {
                    Some(sch) => cfg.ipvs_scheduler = sch,
                    None => c.err(
                        s,
                        "ipvs.scheduler",
                        format!("unknown IPVS scheduler `{name}`"),
                        "use rr, wrr, lc, wlc, sh, dh, sed, nq or mh",
                    ),
                },
            }
        }
    }
    if let Some(nft) = n.get("nftables") {
        c.unknown_keys(
            nft,
            "nftables",
            &[
                "masqueradeAll",
                "masqueradeBit",
                "minSyncPeriod",
                "syncPeriod",
            ],
        );
        if let Some(v) = c.boolean(nft.get("masqueradeAll"), "nftables.masqueradeAll") {
            cfg.nftables_masquerade_all = v;
        }
        if let Some(v) = c.int(nft.get("masqueradeBit"), "nftables.masqueradeBit", 0, 31) {
            cfg.nftables_masquerade_bit = v as u8;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_go_duration;

    #[test]
    fn go_durations() {
        let cases = [
            ("1s", Some(1000)),
            ("500ms", Some(500)),
            ("1m0s", Some(60_000)),
            ("1m30s", Some(90_000)),
            ("1.5s", Some(1500)),
            ("0s", Some(0)),
            ("0", Some(0)),
            ("2h", Some(7_200_000)),
            ("10", None),
            ("", None),
            ("1x", None),
            ("s", None),
            (".5s", Some(500)),
            ("1.s", Some(1000)),
            ("1.2.3s", None),
            (".s", None),
            ("1h2m3.0045s", Some(3_723_005)),
            ("1.0000000000000000000000001s", Some(1000)),
            ("999999999999h", None),
            ("100us", Some(0)),
            ("1500us", Some(2)),
        ];
        for (text, want) in cases {
            assert_eq!(parse_go_duration(text), want, "{text}");
        }
    }
}
