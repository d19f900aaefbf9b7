//! Lowering: YAML documents → typed, complete Kubernetes objects.
//!
//! Every value is validated once here (IPs, CIDRs, ports, enums) and gets a
//! diagnostic with document, object path, field and position when it is bad.
//! What the API server would fill in is filled in deterministically: Cluster
//! IPs and NodePorts by a hash of the object's name (stable when other objects
//! are added), Pods of Deployments with kube-style names, Pod IPs from the node's
//! podCIDR. This module never panics on input.

use super::ip::{parse_cidr_sloppy, parse_ip_sloppy};
use super::*;
use crate::diag::{Diagnostic, Severity};
use crate::yaml::{parse_stream, Limits, Node as Y, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;

/// One input file.
#[derive(Clone, Copy, Debug)]
pub struct Input<'a> {
    pub text: &'a str,
}

/// Parse one YAML stream into a cluster.
pub fn parse(text: &str) -> (Cluster, Vec<Diagnostic>) {
    parse_files(&[Input { text }])
}

/// Parse several YAML streams (as `kpv rules a.yaml b.yaml`) into one cluster.
pub fn parse_files(inputs: &[Input<'_>]) -> (Cluster, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    let mut raw: Vec<RawObject> = Vec::new();
    let limits = Limits::default();
    for (file, input) in inputs.iter().enumerate() {
        let (docs, mut d) = parse_stream(input.text, &limits);
        for x in &mut d {
            x.file = file;
        }
        diags.extend(d);
        for doc in docs {
            collect_objects(file, doc.index, doc.root, "", &mut raw, &mut diags);
        }
    }
    let mut b = Builder {
        diags,
        cluster: Cluster::default(),
        seen: BTreeSet::new(),
    };
    b.build(&raw);
    let Builder {
        mut diags, cluster, ..
    } = b;
    crate::order::sort_by_key(&mut diags, |d| (d.file, d.document, d.span));
    (cluster, diags)
}

struct RawObject {
    file: usize,
    doc: usize,
    /// Prefix of field paths (`items[3].` for `kind: List` members).
    prefix: String,
    kind: String,
    node: Y,
}

/// The objects of one document (a `kind: List`'s items, or itself), moved
/// into `out` (no copy of the parsed tree: 10,000 objects were copied once).
fn collect_objects(
    file: usize,
    doc: usize,
    root: Y,
    prefix: &str,
    out: &mut Vec<RawObject>,
    diags: &mut Vec<Diagnostic>,
) {
    if root.is_null() {
        return; // an empty document between `---` lines
    }
    let Some(_) = root.as_map() else {
        let mut d = Diagnostic::error(format!(
            "expected a Kubernetes object (a mapping), found a {}",
            root.kind_name()
        ))
        .at(root.span)
        .with_hint("each YAML document must be one object with apiVersion, kind and metadata");
        d.file = file;
        d.document = doc;
        diags.push(d);
        return;
    };
    let kind = root
        .get("kind")
        .and_then(Y::as_str)
        .unwrap_or("")
        .to_string();
    if kind == "List" || kind.ends_with("List") && root.get("items").is_some() {
        match root.take("items") {
            Some(Y {
                value: Value::Seq(items),
                ..
            }) => {
                for (i, item) in items.into_iter().enumerate() {
                    collect_objects(file, doc, item, &format!("{prefix}items[{i}]."), out, diags);
                }
            }
            Some(i) if !i.is_null() => {
                let mut d = Diagnostic::error("`items` of a List must be a list").at(i.span);
                d.file = file;
                d.document = doc;
                d.field = Some(format!("{prefix}items"));
                diags.push(d);
            }
            _ => {}
        }
        return;
    }
    if kind.is_empty() {
        let mut d = Diagnostic::error("object has no `kind`")
            .at(root.span)
            .with_hint("add e.g. `kind: Service`");
        d.file = file;
        d.document = doc;
        diags.push(d);
        return;
    }
    out.push(RawObject {
        file,
        doc,
        prefix: prefix.to_string(),
        kind,
        node: root,
    });
}

/// Where diagnostics for the object being lowered go.
struct Ctx<'a> {
    diags: &'a mut Vec<Diagnostic>,
    file: usize,
    doc: usize,
    prefix: &'a str,
    object: String,
    errors: usize,
}

impl Ctx<'_> {
    fn push(&mut self, sev: Severity, node: &Y, field: &str, msg: String, hint: Option<&str>) {
        if sev == Severity::Error {
            self.errors += 1;
        }
        self.diags.push(Diagnostic {
            severity: sev,
            file: self.file,
            document: self.doc,
            object: Some(self.object.clone()),
            field: if field.is_empty() {
                None
            } else {
                Some(format!("{}{}", self.prefix, field))
            },
            span: Some(node.span),
            message: msg,
            hint: hint.map(str::to_string),
        });
    }

    fn err(&mut self, node: &Y, field: &str, msg: impl Into<String>, hint: &str) {
        self.push(
            Severity::Error,
            node,
            field,
            msg.into(),
            Some(hint).filter(|h| !h.is_empty()),
        );
    }

    fn warn(&mut self, node: &Y, field: &str, msg: impl Into<String>, hint: &str) {
        self.push(
            Severity::Warning,
            node,
            field,
            msg.into(),
            Some(hint).filter(|h| !h.is_empty()),
        );
    }

    /// Warn about keys of a mapping this model does not know.
    fn unknown_keys(&mut self, node: &Y, path: &str, known: &[&str]) {
        if let Some(entries) = node.as_map() {
            for (k, _) in entries {
                let name = k.as_str().unwrap_or("?");
                if !known.contains(&name) {
                    let field = join(path, name);
                    self.warn(
                        k,
                        &field,
                        format!("unknown field `{name}` is ignored"),
                        "check the spelling against the Kubernetes API reference",
                    );
                }
            }
        }
    }

    fn string(&mut self, node: Option<&Y>, field: &str) -> Option<String> {
        let n = node?;
        if n.is_null() {
            return None;
        }
        match n.as_str() {
            Some(s) => Some(s.to_string()),
            None => {
                self.err(
                    n,
                    field,
                    format!("expected a string, found a {}", n.kind_name()),
                    "",
                );
                None
            }
        }
    }

    fn int(&mut self, node: Option<&Y>, field: &str, min: i64, max: i64) -> Option<i64> {
        let n = node?;
        if n.is_null() {
            return None;
        }
        let parsed = match &n.value {
            Value::Scalar {
                text,
                quoted: false,
            } => text.parse::<i64>().ok(),
            _ => None,
        };
        match parsed {
            Some(v) if (min..=max).contains(&v) => Some(v),
            Some(v) => {
                self.err(
                    n,
                    field,
                    format!("{v} is out of range {min}–{max}"),
                    &format!("use a value from {min} to {max}"),
                );
                None
            }
            None => {
                self.err(
                    n,
                    field,
                    format!(
                        "expected a whole number, found `{}`",
                        n.as_str().unwrap_or(n.kind_name())
                    ),
                    &format!("use a number from {min} to {max} without quotes"),
                );
                None
            }
        }
    }

    fn port(&mut self, node: Option<&Y>, field: &str) -> Option<u16> {
        self.int(node, field, 1, 65535).map(|v| v as u16)
    }

    /// `hints: {forZones: [{name}], forNodes: [{name}]}`.
    fn hints(&mut self, node: Option<&Y>, field: &str) -> Hints {
        let mut out = Hints::default();
        let Some(n) = node.filter(|n| !n.is_null()) else {
            return out;
        };
        self.unknown_keys(n, field, &["forZones", "forNodes"]);
        for (key, list) in [
            ("forZones", &mut out.for_zones),
            ("forNodes", &mut out.for_nodes),
        ] {
            let path = format!("{field}.{key}");
            for (i, x) in self.seq(n.get(key), &path).iter().enumerate() {
                if let Some(name) = self.string(x.get("name"), &format!("{path}[{i}].name")) {
                    list.push(name);
                }
            }
        }
        out
    }

    fn boolean(&mut self, node: Option<&Y>, field: &str) -> Option<bool> {
        let n = node?;
        if n.is_null() {
            return None;
        }
        match n.as_str() {
            Some("true") | Some("True") | Some("TRUE") => Some(true),
            Some("false") | Some("False") | Some("FALSE") => Some(false),
            _ => {
                self.err(n, field, "expected true or false", "");
                None
            }
        }
    }

    fn ip(&mut self, node: &Y, field: &str) -> Option<IpAddr> {
        let s = node.as_str().unwrap_or("");
        match parse_ip_sloppy(s) {
            Some(ip) => Some(ip),
            None => {
                self.err(
                    node,
                    field,
                    format!("`{s}` is not a valid IP address"),
                    "write an IPv4 address like 10.96.0.10 or an IPv6 address like fd00::10",
                );
                None
            }
        }
    }

    fn cidr(&mut self, node: &Y, field: &str) -> Option<IpNet> {
        let s = node.as_str().unwrap_or("");
        match parse_cidr_sloppy(s) {
            Some(c) => Some(c),
            None => {
                self.err(
                    node,
                    field,
                    format!("`{s}` is not a valid CIDR"),
                    "write a network like 10.0.0.0/8 or fd00::/64",
                );
                None
            }
        }
    }

    fn seq<'y>(&mut self, node: Option<&'y Y>, field: &str) -> &'y [Y] {
        match node {
            None => &[],
            Some(n) if n.is_null() => &[],
            Some(n) => match n.as_seq() {
                Some(s) => s,
                None => {
                    self.err(
                        n,
                        field,
                        format!("expected a list, found a {}", n.kind_name()),
                        "",
                    );
                    &[]
                }
            },
        }
    }

    fn labels(&mut self, node: Option<&Y>, field: &str) -> Labels {
        let mut out = Labels::new();
        let Some(n) = node else { return out };
        if n.is_null() {
            return out;
        }
        let Some(entries) = n.as_map() else {
            self.err(
                n,
                field,
                format!("expected a mapping of labels, found a {}", n.kind_name()),
                "write labels as `key: value` lines",
            );
            return out;
        };
        for (k, v) in entries {
            match (k.as_str(), v.as_str()) {
                (Some(k), Some(v)) => {
                    out.insert(k.to_string(), v.to_string());
                }
                _ => self.err(
                    v,
                    &join(field, k.as_str().unwrap_or("?")),
                    "label values must be strings",
                    "quote the value",
                ),
            }
        }
        out
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn hash64(s: &str) -> u64 {
    let d = Sha256::digest(s.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&d[..8]);
    u64::from_be_bytes(b)
}

/// Kubernetes' alphabet for generated names (no vowels, no confusable digits).
const SAFE_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// `rand.SafeEncodeString(fmt.Sprint(hash32))`, as pod-template-hash is made.
fn pod_template_hash(seed: &str) -> String {
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
fn nth_addr(net: &IpNet, n: u128) -> Option<IpAddr> {
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

fn net_size(net: &IpNet) -> u128 {
    let bits = (net.max_prefix_len() - net.prefix_len()) as u32;
    if bits >= 127 {
        u128::MAX
    } else {
        1u128 << bits
    }
}

struct Builder {
    diags: Vec<Diagnostic>,
    cluster: Cluster,
    seen: BTreeSet<(String, String, String)>,
}

/// A Service as parsed, before allocation.
struct PendingService {
    svc: Service,
    cluster_ip_auto: bool,
    want_families: Vec<IpFamily>,
    /// `spec.loadBalancerIP`, named when the Service has no address yet.
    requested_load_balancer_ip: Option<IpAddr>,
    /// `spec.allocateLoadBalancerNodePorts` (default true): false leaves a
    /// LoadBalancer's ports without NodePorts unless they name one.
    allocate_load_balancer_node_ports: bool,
    /// Where to point diagnostics found during allocation.
    file: usize,
    doc: usize,
}

/// One legacy address: IP, ready, nodeName, targetRef.
type LegacyAddress = (IpAddr, bool, Option<String>, Option<NamespacedName>);

struct PendingEndpoints {
    id: NamespacedName,
    subsets: Vec<(Vec<LegacyAddress>, Vec<EndpointPort>)>,
}

impl Builder {
    fn ctx<'a>(&'a mut self, o: &'a RawObject, object: String) -> Ctx<'a> {
        Ctx {
            diags: &mut self.diags,
            file: o.file,
            doc: o.doc,
            prefix: &o.prefix,
            object,
            errors: 0,
        }
    }

    fn build(&mut self, raw: &[RawObject]) {
        // Order matters: configuration first, then what later objects refer to.
        let order = [
            "KubeProxyConfiguration",
            "ServiceCIDR",
            "Node",
            "Deployment",
            "Pod",
            "Service",
            "Endpoints",
            "EndpointSlice",
        ];
        let mut services = Vec::new();
        let mut endpoints = Vec::new();
        let mut deployments_raw = Vec::new();
        for kind in order {
            for o in raw.iter().filter(|o| o.kind == kind) {
                match kind {
                    "KubeProxyConfiguration" => self.proxy_config(o),
                    "ServiceCIDR" => self.service_cidr(o),
                    "Node" => self.node(o),
                    "Deployment" => {
                        if let Some(d) = self.deployment(o) {
                            deployments_raw.push(d);
                        }
                    }
                    "Pod" => self.pod(o),
                    "Service" => {
                        if let Some(s) = self.service(o) {
                            services.push(s);
                        }
                    }
                    "Endpoints" => {
                        if let Some(e) = self.endpoints(o) {
                            endpoints.push(e);
                        }
                    }
                    "EndpointSlice" => self.endpoint_slice(o),
                    _ => {}
                }
            }
        }
        for o in raw.iter().filter(|o| !order.contains(&o.kind.as_str())) {
            let name = o
                .node
                .get("metadata")
                .and_then(|m| m.get("name"))
                .and_then(Y::as_str)
                .unwrap_or("?")
                .to_string();
            let obj = format!("{}/{}", o.kind, name);
            let kind = o.kind.clone();
            let mut c = self.ctx(o, obj);
            c.warn(&o.node, "kind", format!("kind `{kind}` is not modelled and is skipped"), "supported kinds: Node, Pod, Deployment, Service, Endpoints, EndpointSlice, ServiceCIDR, KubeProxyConfiguration");
        }
        self.finish_nodes();
        for d in deployments_raw {
            self.expand_deployment(d);
        }
        self.place_pods();
        self.allocate_services(services);
        self.mirror_endpoints(endpoints);
        self.check_selectors();
        self.check_userspace_sources();
        let c = &mut self.cluster;
        crate::order::sort_by(&mut c.nodes, |a, b| a.name.cmp(&b.name));
        crate::order::sort_by(&mut c.pods, |a, b| a.id.cmp(&b.id));
        crate::order::sort_by(&mut c.deployments, |a, b| a.id.cmp(&b.id));
        crate::order::sort_by(&mut c.services, |a, b| a.id.cmp(&b.id));
        crate::order::sort_by(&mut c.endpoint_slices, |a, b| a.id.cmp(&b.id));
    }

    /// The userspace proxier read v1.Endpoints only: EndpointSlices written
    /// by hand give it nothing, which a userspace scenario should be told.
    fn check_userspace_sources(&mut self) {
        if self.cluster.proxy.mode != Mode::Userspace {
            return;
        }
        let given: Vec<String> = self
            .cluster
            .endpoint_slices
            .iter()
            .filter(|s| s.source == SliceSource::Input)
            .map(|s| s.id.to_string())
            .collect();
        if !given.is_empty() {
            self.diags.push(
                Diagnostic::warning(format!(
                    "kube-proxy in userspace mode reads Endpoints, not EndpointSlices: {} give it no endpoints",
                    given.join(", ")
                ))
                .with_hint("write them as v1 Endpoints objects (subsets: addresses, ports)"),
            );
        }
    }

    /// Metadata: returns (namespace, name) or reports and returns None.
    fn meta(&mut self, o: &RawObject, namespaced: bool) -> Option<(NamespacedName, Labels, bool)> {
        let kind = o.kind.clone();
        let meta = o.node.get("metadata");
        let name = meta
            .and_then(|m| m.get("name"))
            .and_then(Y::as_str)
            .map(str::to_string);
        let ns = if namespaced {
            meta.and_then(|m| m.get("namespace"))
                .and_then(Y::as_str)
                .unwrap_or("default")
                .to_string()
        } else {
            String::new()
        };
        let Some(name) = name.filter(|n| !n.is_empty()) else {
            let mut c = self.ctx(o, kind.clone());
            c.err(
                meta.unwrap_or(&o.node),
                "metadata.name",
                format!("{kind} has no metadata.name"),
                "give every object a name",
            );
            return None;
        };
        let object = if namespaced {
            format!("{kind}/{ns}/{name}")
        } else {
            format!("{kind}/{name}")
        };
        if !valid_dns_label_ish(&name) {
            let mut c = self.ctx(o, object.clone());
            let n = meta.and_then(|m| m.get("name")).unwrap_or(&o.node);
            c.err(n, "metadata.name", format!("`{name}` is not a valid object name"), "use lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, at most 253 characters");
            return None;
        }
        if !self.seen.insert((kind.clone(), ns.clone(), name.clone())) {
            let mut c = self.ctx(o, object);
            let n = meta.and_then(|m| m.get("name")).unwrap_or(&o.node);
            c.err(
                n,
                "metadata.name",
                format!("duplicate {kind} `{name}`; this one is ignored"),
                "object names must be unique per kind and namespace",
            );
            return None;
        }
        let mut c = self.ctx(o, object);
        let labels = c.labels(meta.and_then(|m| m.get("labels")), "metadata.labels");
        let deleting = meta
            .and_then(|m| m.get("deletionTimestamp"))
            .is_some_and(|d| !d.is_null());
        Some((NamespacedName::new(ns, name), labels, deleting))
    }

    fn object_name(o: &RawObject, id: &NamespacedName) -> String {
        if id.namespace.is_empty() {
            format!("{}/{}", o.kind, id.name)
        } else {
            format!("{}/{}/{}", o.kind, id.namespace, id.name)
        }
    }

    fn proxy_config(&mut self, o: &RawObject) {
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

    fn service_cidr(&mut self, o: &RawObject) {
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

    fn node(&mut self, o: &RawObject) {
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

    fn containers(c: &mut Ctx<'_>, spec: Option<&Y>, path: &str) -> Vec<Container> {
        let mut out = Vec::new();
        let list = c.seq(
            spec.and_then(|s| s.get("containers")),
            &join(path, "containers"),
        );
        for (i, cn) in list.iter().enumerate() {
            let p = format!("{}[{i}]", join(path, "containers"));
            let name = c
                .string(cn.get("name"), &join(&p, "name"))
                .unwrap_or_else(|| format!("container-{i}"));
            let image = c
                .string(cn.get("image"), &join(&p, "image"))
                .unwrap_or_default();
            let mut ports = Vec::new();
            for (j, pn) in c
                .seq(cn.get("ports"), &join(&p, "ports"))
                .iter()
                .enumerate()
            {
                let pp = format!("{p}.ports[{j}]");
                let Some(port) = c.port(pn.get("containerPort"), &join(&pp, "containerPort"))
                else {
                    if pn.get("containerPort").is_none() {
                        c.err(
                            pn,
                            &pp,
                            "container port has no containerPort",
                            "add `containerPort: 8080`",
                        );
                    }
                    continue;
                };
                let protocol = Self::protocol(c, pn.get("protocol"), &join(&pp, "protocol"));
                ports.push(ContainerPort {
                    name: c.string(pn.get("name"), &join(&pp, "name")),
                    port,
                    protocol,
                });
            }
            let readiness_probe = cn
                .get("readinessProbe")
                .and_then(|n| Self::probe(c, n, &join(&p, "readinessProbe")));
            let liveness_probe = cn
                .get("livenessProbe")
                .and_then(|n| Self::probe(c, n, &join(&p, "livenessProbe")));
            out.push(Container {
                name,
                image,
                ports,
                readiness_probe,
                liveness_probe,
            });
        }
        out
    }

    fn port_ref(c: &mut Ctx<'_>, n: Option<&Y>, field: &str) -> Option<PortRef> {
        let n = n.filter(|n| !n.is_null())?;
        match &n.value {
            Value::Scalar { text, quoted } => {
                if let (false, Ok(v)) = (*quoted, text.parse::<i64>()) {
                    if (1..=65535).contains(&v) {
                        Some(PortRef::Number(v as u16))
                    } else {
                        c.err(
                            n,
                            field,
                            format!("port {v} is out of range 1–65535"),
                            "use a port from 1 to 65535",
                        );
                        None
                    }
                } else if !text.is_empty()
                    && text.len() <= 15
                    && text
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                    && text.bytes().any(|b| b.is_ascii_lowercase())
                {
                    Some(PortRef::Name(text.clone()))
                } else {
                    c.err(n, field, format!("`{text}` is neither a port number nor a port name"), "use a number from 1 to 65535 or a container port's name (lower-case, at most 15 characters)");
                    None
                }
            }
            _ => {
                c.err(n, field, "expected a port number or name", "");
                None
            }
        }
    }

    fn probe(c: &mut Ctx<'_>, n: &Y, path: &str) -> Option<Probe> {
        let action = if let Some(h) = n.get("httpGet") {
            let port = Self::port_ref(c, h.get("port"), &join(path, "httpGet.port"))?;
            ProbeAction::HttpGet {
                path: c
                    .string(h.get("path"), &join(path, "httpGet.path"))
                    .unwrap_or_else(|| "/".into()),
                port,
            }
        } else if let Some(t) = n.get("tcpSocket") {
            ProbeAction::TcpSocket {
                port: Self::port_ref(c, t.get("port"), &join(path, "tcpSocket.port"))?,
            }
        } else if let Some(e) = n.get("exec") {
            let command = c
                .seq(e.get("command"), &join(path, "exec.command"))
                .iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect();
            ProbeAction::Exec { command }
        } else if let Some(g) = n.get("grpc") {
            ProbeAction::Grpc {
                port: c.port(g.get("port"), &join(path, "grpc.port"))?,
            }
        } else {
            c.err(
                n,
                path,
                "probe has no handler",
                "give httpGet, tcpSocket, exec or grpc",
            );
            return None;
        };
        let mut get = |key: &str, min: i64, default: u32| {
            c.int(n.get(key), &join(path, key), min, 86_400)
                .map(|v| v as u32)
                .unwrap_or(default)
        };
        Some(Probe {
            action,
            initial_delay_seconds: get("initialDelaySeconds", 0, 0),
            period_seconds: get("periodSeconds", 1, 10),
            timeout_seconds: get("timeoutSeconds", 1, 1),
            success_threshold: get("successThreshold", 1, 1),
            failure_threshold: get("failureThreshold", 1, 3),
        })
    }

    fn protocol(c: &mut Ctx<'_>, n: Option<&Y>, field: &str) -> Protocol {
        let Some(n) = n.filter(|n| !n.is_null()) else {
            return Protocol::Tcp;
        };
        match n.as_str().and_then(Protocol::parse) {
            Some(p) => p,
            None => {
                c.err(
                    n,
                    field,
                    format!("unknown protocol `{}`", n.as_str().unwrap_or("?")),
                    "use TCP, UDP or SCTP",
                );
                Protocol::Tcp
            }
        }
    }

    fn deployment(&mut self, o: &RawObject) -> Option<Deployment> {
        let (id, _, _) = self.meta(o, true)?;
        let obj = Self::object_name(o, &id);
        let mut c = self.ctx(o, obj);
        let spec = o.node.get("spec");
        let replicas = c
            .int(
                spec.and_then(|s| s.get("replicas")),
                "spec.replicas",
                0,
                1000,
            )
            .unwrap_or(1) as u32;
        let selector = c.labels(
            spec.and_then(|s| s.get("selector"))
                .and_then(|s| s.get("matchLabels")),
            "spec.selector.matchLabels",
        );
        let template = spec.and_then(|s| s.get("template"));
        let template_labels = c.labels(
            template
                .and_then(|t| t.get("metadata"))
                .and_then(|m| m.get("labels")),
            "spec.template.metadata.labels",
        );
        if !selects(&selector, &template_labels) {
            let at = spec.unwrap_or(&o.node);
            c.err(
                at,
                "spec.selector.matchLabels",
                "the selector does not match the Pod template's labels",
                "make spec.selector.matchLabels a subset of spec.template.metadata.labels",
            );
            return None;
        }
        let containers = Self::containers(
            &mut c,
            template.and_then(|t| t.get("spec")),
            "spec.template.spec",
        );
        Some(Deployment {
            id,
            replicas,
            selector,
            template_labels,
            containers,
        })
    }

    fn expand_deployment(&mut self, d: Deployment) {
        let hash = pod_template_hash(&format!("{}/{}", d.id, d.template_labels.len()));
        for i in 0..d.replicas {
            let name = format!(
                "{}-{}-{}",
                d.id.name,
                hash,
                name_suffix(&format!("{}#{i}", d.id))
            );
            let mut labels = d.template_labels.clone();
            labels.insert("pod-template-hash".into(), hash.clone());
            self.cluster.pods.push(Pod {
                id: NamespacedName::new(d.id.namespace.clone(), name),
                labels,
                node_name: None,
                ips: Vec::new(),
                containers: d.containers.clone(),
                terminating: false,
                finished: false,
                pending: false,
                reported_ready: ReportedReady::Unknown,
                owner: Some(d.id.name.clone()),
            });
        }
        self.cluster.deployments.push(d);
    }

    fn pod(&mut self, o: &RawObject) {
        let Some((id, labels, terminating)) = self.meta(o, true) else {
            return;
        };
        let obj = Self::object_name(o, &id);
        let mut c = self.ctx(o, obj);
        let spec = o.node.get("spec");
        let status = o.node.get("status");
        let node_name = c.string(spec.and_then(|s| s.get("nodeName")), "spec.nodeName");
        let containers = Self::containers(&mut c, spec, "spec");
        let mut ips = Vec::new();
        for (i, p) in c
            .seq(status.and_then(|s| s.get("podIPs")), "status.podIPs")
            .iter()
            .enumerate()
        {
            if let Some(ip) = p
                .get("ip")
                .and_then(|ipn| c.ip(ipn, &format!("status.podIPs[{i}].ip")))
            {
                ips.push(ip);
            }
        }
        if ips.is_empty() {
            if let Some(p) = status.and_then(|s| s.get("podIP")).filter(|p| !p.is_null()) {
                if let Some(ip) = c.ip(p, "status.podIP") {
                    ips.push(ip);
                }
            }
        }
        let phase = status
            .and_then(|s| s.get("phase"))
            .and_then(Y::as_str)
            .unwrap_or("");
        let finished = phase == "Succeeded" || phase == "Failed";
        let pending = phase == "Pending" && ips.is_empty();
        let mut reported_ready = ReportedReady::Unknown;
        for cond in c.seq(
            status.and_then(|s| s.get("conditions")),
            "status.conditions",
        ) {
            if cond.get("type").and_then(Y::as_str) == Some("Ready") {
                reported_ready = match cond.get("status").and_then(Y::as_str) {
                    Some("True") => ReportedReady::Ready,
                    _ => ReportedReady::NotReady,
                };
            }
        }
        let owner = o
            .node
            .get("metadata")
            .and_then(|m| m.get("ownerReferences"))
            .and_then(Y::as_seq)
            .and_then(|s| s.first())
            .and_then(|r| r.get("name"))
            .and_then(Y::as_str)
            .map(str::to_string);
        self.cluster.pods.push(Pod {
            id,
            labels,
            node_name,
            ips,
            containers,
            terminating,
            finished,
            pending,
            reported_ready,
            owner,
        });
    }

    fn service(&mut self, o: &RawObject) -> Option<PendingService> {
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

    fn endpoints(&mut self, o: &RawObject) -> Option<PendingEndpoints> {
        let (id, _, _) = self.meta(o, true)?;
        let obj = Self::object_name(o, &id);
        let mut c = self.ctx(o, obj);
        let mut subsets = Vec::new();
        for (i, s) in c.seq(o.node.get("subsets"), "subsets").iter().enumerate() {
            let path = format!("subsets[{i}]");
            let mut addrs = Vec::new();
            for (key, ready) in [("addresses", true), ("notReadyAddresses", false)] {
                for (j, a) in c.seq(s.get(key), &join(&path, key)).iter().enumerate() {
                    let Some(ipn) = a.get("ip") else {
                        c.err(
                            a,
                            &format!("{path}.{key}[{j}]"),
                            "address has no `ip`",
                            "add `ip: 10.0.0.5`",
                        );
                        continue;
                    };
                    if let Some(ip) = c.ip(ipn, &format!("{path}.{key}[{j}].ip")) {
                        let node =
                            c.string(a.get("nodeName"), &format!("{path}.{key}[{j}].nodeName"));
                        let target = a.get("targetRef").and_then(|t| {
                            let name = t.get("name").and_then(Y::as_str)?;
                            Some(NamespacedName::new(
                                t.get("namespace")
                                    .and_then(Y::as_str)
                                    .unwrap_or(&id.namespace),
                                name,
                            ))
                        });
                        addrs.push((ip, ready, node, target));
                    }
                }
            }
            let mut ports = Vec::new();
            for (j, p) in c
                .seq(s.get("ports"), &join(&path, "ports"))
                .iter()
                .enumerate()
            {
                let pp = format!("{path}.ports[{j}]");
                let Some(port) = c.port(p.get("port"), &join(&pp, "port")) else {
                    continue;
                };
                let protocol = Self::protocol(&mut c, p.get("protocol"), &join(&pp, "protocol"));
                ports.push(EndpointPort {
                    name: c
                        .string(p.get("name"), &join(&pp, "name"))
                        .unwrap_or_default(),
                    port,
                    protocol,
                });
            }
            subsets.push((addrs, ports));
        }
        Some(PendingEndpoints { id, subsets })
    }

    fn endpoint_slice(&mut self, o: &RawObject) {
        let Some((id, labels, _)) = self.meta(o, true) else {
            return;
        };
        let obj = Self::object_name(o, &id);
        let mut c = self.ctx(o, obj);
        let n = &o.node;
        let Some(service_name) = labels.get("kubernetes.io/service-name").cloned() else {
            c.err(
                n.get("metadata").unwrap_or(n),
                "metadata.labels",
                "EndpointSlice has no `kubernetes.io/service-name` label, so kube-proxy ignores it",
                "add the label naming its Service",
            );
            return;
        };
        let family = match n.get("addressType").and_then(Y::as_str) {
            Some("IPv4") => IpFamily::V4,
            Some("IPv6") => IpFamily::V6,
            Some("FQDN") => {
                c.warn(
                    n,
                    "addressType",
                    "FQDN EndpointSlices are ignored by kube-proxy",
                    "",
                );
                return;
            }
            _ => {
                c.err(
                    n.get("addressType").unwrap_or(n),
                    "addressType",
                    "addressType must be IPv4 or IPv6",
                    "add `addressType: IPv4`",
                );
                return;
            }
        };
        let mut endpoints = Vec::new();
        for (i, e) in c.seq(n.get("endpoints"), "endpoints").iter().enumerate() {
            let path = format!("endpoints[{i}]");
            let mut addresses = Vec::new();
            for (j, a) in c
                .seq(e.get("addresses"), &join(&path, "addresses"))
                .iter()
                .enumerate()
            {
                if let Some(ip) = c.ip(a, &format!("{path}.addresses[{j}]")) {
                    if IpFamily::of(&ip) != family {
                        c.err(
                            a,
                            &format!("{path}.addresses[{j}]"),
                            "address family does not match the slice's addressType",
                            "put IPv4 and IPv6 addresses in separate slices",
                        );
                        continue;
                    }
                    addresses.push(ip);
                }
            }
            let conds = e.get("conditions");
            let ready = c
                .boolean(
                    conds.and_then(|x| x.get("ready")),
                    &join(&path, "conditions.ready"),
                )
                .unwrap_or(true);
            let serving = c
                .boolean(
                    conds.and_then(|x| x.get("serving")),
                    &join(&path, "conditions.serving"),
                )
                .unwrap_or(true);
            let terminating = c
                .boolean(
                    conds.and_then(|x| x.get("terminating")),
                    &join(&path, "conditions.terminating"),
                )
                .unwrap_or(false);
            let target_pod = e.get("targetRef").and_then(|t| {
                (t.get("kind").and_then(Y::as_str) == Some("Pod")).then_some(())?;
                let name = t.get("name").and_then(Y::as_str)?;
                Some(NamespacedName::new(
                    t.get("namespace")
                        .and_then(Y::as_str)
                        .unwrap_or(&id.namespace),
                    name,
                ))
            });
            endpoints.push(Endpoint {
                addresses,
                ready,
                serving,
                terminating,
                node_name: c.string(e.get("nodeName"), &join(&path, "nodeName")),
                zone: c.string(e.get("zone"), &join(&path, "zone")),
                target_pod,
                hints: c.hints(e.get("hints"), &join(&path, "hints")),
            });
        }
        let mut ports = Vec::new();
        for (j, p) in c.seq(n.get("ports"), "ports").iter().enumerate() {
            let pp = format!("ports[{j}]");
            let Some(port) = c.port(p.get("port"), &join(&pp, "port")) else {
                continue;
            };
            let protocol = Self::protocol(&mut c, p.get("protocol"), &join(&pp, "protocol"));
            ports.push(EndpointPort {
                name: c
                    .string(p.get("name"), &join(&pp, "name"))
                    .unwrap_or_default(),
                port,
                protocol,
            });
        }
        let managed_by = labels
            .get("endpointslice.kubernetes.io/managed-by")
            .map(String::as_str);
        self.cluster.endpoint_slices.push(EndpointSlice {
            id,
            service_name,
            family,
            endpoints,
            ports,
            source: if managed_by == Some("endpointslice-controller.k8s.io") {
                SliceSource::Controller
            } else {
                SliceSource::Input
            },
        });
    }

    /// Nodes: synthesise them when none are given, and give each a podCIDR and an address.
    fn finish_nodes(&mut self) {
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

    /// Schedule Pods without a node (spreading them in order) and give Pods IPs
    /// from their node's podCIDR.
    fn place_pods(&mut self) {
        let nodes: Vec<String> = self.cluster.nodes.iter().map(|n| n.name.clone()).collect();
        if nodes.is_empty() {
            return;
        }
        // Pods given with IPs keep them; count used addresses per node.
        let mut used: BTreeSet<IpAddr> =
            crate::order::set(self.cluster.pods.iter().flat_map(|p| p.ips.clone()));
        let mut rr = 0usize;
        // Deterministic order: input Pods keep their order after the sort by name;
        // Deployments' Pods are placed in replica order.
        let mut order: Vec<usize> = (0..self.cluster.pods.len()).collect();
        crate::order::sort_by(&mut order, |&a, &b| {
            let pa = &self.cluster.pods[a];
            let pb = &self.cluster.pods[b];
            (pa.owner.is_some(), &pa.owner, a).cmp(&(pb.owner.is_some(), &pb.owner, b))
        });
        for i in order {
            let pod = &mut self.cluster.pods[i];
            if pod.pending {
                continue;
            }
            if pod.node_name.is_none() {
                pod.node_name = Some(nodes[rr % nodes.len()].clone());
                rr += 1;
            } else if let Some(n) = &pod.node_name {
                if !nodes.contains(n) {
                    let mut d = Diagnostic::warning(format!(
                        "Pod {} is on node `{n}`, which is not among the Nodes: the EndpointSlice controller skips it (unless its Service publishes not-ready addresses)",
                        pod.id
                    ))
                    .with_hint("add that Node or fix spec.nodeName");
                    d.object = Some(format!("Pod/{}", pod.id));
                    d.field = Some("spec.nodeName".into());
                    self.diags.push(d);
                }
            }
            if pod.ips.is_empty() && !pod.finished {
                let node = pod
                    .node_name
                    .as_ref()
                    .and_then(|n| self.cluster.nodes.iter().find(|x| &x.name == n));
                if let Some(cidr) = node.and_then(|n| n.pod_cidr(IpFamily::V4)) {
                    // .0 is the network, .1 the node's bridge: Pods start at .2.
                    let mut k = 2u128;
                    while let Some(ip) = nth_addr(&cidr, k) {
                        k += 1;
                        if used.insert(ip) {
                            pod.ips.push(ip);
                            break;
                        }
                    }
                }
            }
        }
    }

    fn allocate_services(&mut self, pending: Vec<PendingService>) {
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

    /// The EndpointSlice mirroring controller: legacy Endpoints of selector-less
    /// Services become EndpointSlices.
    fn mirror_endpoints(&mut self, pending: Vec<PendingEndpoints>) {
        for e in pending {
            let Some(svc) = self.cluster.services.iter().find(|s| s.id == e.id) else {
                let mut d = Diagnostic::warning(format!(
                    "Endpoints {} have no Service of the same name; kube-proxy ignores them",
                    e.id
                ))
                .with_hint("add a Service without selector named like the Endpoints");
                d.object = Some(format!("Endpoints/{}", e.id));
                self.diags.push(d);
                continue;
            };
            if svc.selector.is_some() {
                // The mirroring controller skips Services with a selector: the
                // EndpointSlice controller owns their endpoints.
                continue;
            }
            for (i, (addrs, ports)) in e.subsets.into_iter().enumerate() {
                for family in [IpFamily::V4, IpFamily::V6] {
                    let endpoints: Vec<Endpoint> = addrs
                        .iter()
                        .filter(|(ip, ..)| IpFamily::of(ip) == family)
                        .map(|(ip, ready, node, target)| Endpoint {
                            addresses: vec![*ip],
                            ready: *ready,
                            serving: *ready,
                            terminating: false,
                            node_name: node.clone(),
                            zone: None,
                            hints: Hints::default(),
                            target_pod: target.clone(),
                        })
                        .collect();
                    if endpoints.is_empty() {
                        continue;
                    }
                    let name = format!(
                        "{}-{}",
                        e.id.name,
                        name_suffix(&format!("{}#mirror{i}{family:?}", e.id))
                    );
                    self.cluster.endpoint_slices.push(EndpointSlice {
                        id: NamespacedName::new(e.id.namespace.clone(), name),
                        service_name: e.id.name.clone(),
                        family,
                        endpoints,
                        ports: ports.clone(),
                        source: SliceSource::Mirrored,
                    });
                }
            }
        }
    }

    fn check_selectors(&mut self) {
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

fn valid_dns_label_ish(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && name
            .bytes()
            .last()
            .is_some_and(|b| b.is_ascii_alphanumeric())
}

/// Allocate an address from `pools` at a position given by a hash of `key`
/// (stable when unrelated objects are added), probing linearly on collision.
/// Skips the network address, the first host (`kubernetes` Service) and the last.
fn allocate_ip(pools: &[IpNet], key: &str, used: &mut BTreeSet<IpAddr>) -> Option<IpAddr> {
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
fn allocate_port(key: &str, used: &mut BTreeSet<u16>) -> Option<u16> {
    let range = 2768u64;
    let start = hash64(key) % range;
    (0..range)
        .map(|k| 30000 + ((start + k) % range) as u16)
        .find(|p| used.insert(*p))
}
