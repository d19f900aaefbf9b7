//! Lowering the cluster's frame: KubeProxyConfiguration, ServiceCIDRs and
//! Nodes, and synthesising Nodes (names, addresses, podCIDRs) when the input
//! gives none.
//!
//! Never panics on input; unknown settings are warned about, not dropped silently.

use super::*;

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
        if let Some(m) = n.get("mode") {
            match m.as_str().unwrap_or("") {
                "" => {}
                s => match Mode::parse(s) {
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
        if let Some(m) = n.get("detectLocalMode").filter(|x| !x.is_null()) {
            match m.as_str().unwrap_or("") {
                "" | "ClusterCIDR" => cfg.detect_local_mode = DetectLocalMode::ClusterCidr,
                "NodeCIDR" => cfg.detect_local_mode = DetectLocalMode::NodeCidr,
                s => c.err(
                    m,
                    "detectLocalMode",
                    format!("detectLocalMode `{s}` is not modelled"),
                    "use ClusterCIDR or NodeCIDR",
                ),
            }
        }
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
            if let Some(v) = c.boolean(ipt.get("localhostNodePorts"), "iptables.localhostNodePorts")
            {
                cfg.iptables_localhost_nodeports = v;
            }
            if let Some(v) = c.int(ipt.get("masqueradeBit"), "iptables.masqueradeBit", 0, 31) {
                cfg.iptables_masquerade_bit = v as u8;
            }
        }
        if let Some(ipvs) = n.get("ipvs") {
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
        self.cluster.proxy = cfg;
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
        let zone = labels.get("topology.kubernetes.io/zone").cloned();
        self.cluster.nodes.push(Node {
            name: id.name,
            labels,
            addresses,
            pod_cidrs,
            zone,
        });
    }

    /// Nodes: synthesise them when none are given, and give each a podCIDR and an address.
    pub(super) fn finish_nodes(&mut self) {
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
            crate::order::sort(&mut names);
            names.dedup();
            if names.is_empty() {
                names.push("node-1".into());
            }
            let mut d = Diagnostic::warning(format!(
                "no Node objects given; assuming node(s) {}",
                names.join(", ")
            ))
            .with_hint("add Node objects (kubectl get nodes -o yaml) for real addresses");
            d.object = Some("Node".into());
            self.diags.push(d);
            for name in names {
                self.cluster.nodes.push(Node {
                    name,
                    labels: Labels::new(),
                    addresses: Vec::new(),
                    pod_cidrs: Vec::new(),
                    zone: None,
                });
            }
        }
        crate::order::sort_by(&mut self.cluster.nodes, |a, b| a.name.cmp(&b.name));
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
        let mut next = 0u32;
        for (i, node) in self.cluster.nodes.iter_mut().enumerate() {
            if node.addresses.is_empty() {
                let ip = std::net::Ipv4Addr::new(192, 168, 0, (2 + i).min(254) as u8);
                node.addresses
                    .push((NodeAddressKind::InternalIP, IpAddr::V4(ip)));
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
    }
}
