//! Lowering hand-written endpoints: legacy v1 Endpoints (mirrored into
//! EndpointSlices for selector-less Services, as the mirroring controller
//! does) and EndpointSlices themselves.
//!
//! The EndpointSlice controller's own slices are computed in `controller/`,
//! not here. Never panics on input.

use super::validate::join;
use super::*;

/// One legacy address: IP, ready, nodeName, targetRef, hostname.
type LegacyAddress = (
    IpAddr,
    bool,
    Option<String>,
    Option<NamespacedName>,
    Option<String>,
);

pub(super) struct PendingEndpoints {
    id: NamespacedName,
    subsets: Vec<(Vec<LegacyAddress>, Vec<EndpointPort>)>,
}

impl Builder {
    /// The `ports` list of an Endpoints subset or an EndpointSlice (at
    /// `field`): each port with a valid number, its name and protocol.
    fn endpoint_ports(c: &mut Ctx<'_>, list: Option<&Y>, field: &str) -> Vec<EndpointPort> {
        let mut ports = Vec::new();
        for (j, p) in c.seq(list, field).iter().enumerate() {
            let pp = format!("{field}[{j}]");
            let Some(port) = c.port(p.get("port"), &join(&pp, "port")) else {
                continue;
            };
            let protocol = Self::protocol(c, p.get("protocol"), &join(&pp, "protocol"));
            ports.push(EndpointPort {
                name: c
                    .string(p.get("name"), &join(&pp, "name"))
                    .unwrap_or_default(),
                port,
                protocol,
            });
        }
        ports
    }

    /// The userspace proxier read v1.Endpoints only: EndpointSlices written
    /// by hand give it nothing, which a userspace scenario should be told.
    pub(super) fn check_userspace_sources(&mut self) {
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
        if let Some(first) = given.first() {
            // Located at the first slice given (the message names them all).
            let mut d = Diagnostic::warning(format!(
                "kube-proxy in userspace mode reads Endpoints, not EndpointSlices: {} give it no endpoints",
                given.join(", ")
            ))
            .with_hint("write them as v1 Endpoints objects (subsets: addresses, ports)");
            d.object = Some(format!("EndpointSlice/{first}"));
            d.field = Some("kind".into());
            self.diags.push(d);
        }
        // One proxy port per Service port with a ClusterIP (per protocol):
        // a range smaller than that leaves some without a listener. Without
        // portRange the kernel picks from its ephemeral range.
        let given = self.cluster.proxy.port_range;
        let (lo, hi) = given.unwrap_or(crate::model::EPHEMERAL_PORT_RANGE);
        let (range, hint) = match given {
            Some(_) => (
                format!("portRange {lo}-{hi}"),
                "widen portRange, or leave it out to use the kernel's ephemeral range",
            ),
            None => (
                format!("the kernel's ephemeral port range {lo}-{hi}"),
                "use fewer Service ports, or another mode (the userspace proxier was removed in Kubernetes 1.26)",
            ),
        };
        {
            let size = usize::from(hi.saturating_sub(lo)) + 1;
            for protocol in [Protocol::Tcp, Protocol::Udp] {
                let wanted = self
                    .cluster
                    .services
                    .iter()
                    .filter(|s| !s.cluster_ips.is_empty())
                    .flat_map(|s| s.ports.iter())
                    .filter(|p| p.protocol == protocol)
                    .count();
                if wanted > size {
                    let mut d = Diagnostic::warning(format!(
                        "userspace mode needs a proxy port per {} Service port ({wanted}), but {range} has {size}: kube-proxy fails to allocate the rest and those Service ports get no rules",
                        protocol.as_upper()
                    ))
                    .with_hint(hint);
                    if given.is_some() {
                        d.object = Some("KubeProxyConfiguration".into());
                        d.field = Some("portRange".into());
                    }
                    self.diags.push(d);
                }
            }
        }
    }

    pub(super) fn endpoints(&mut self, o: &RawObject) -> Option<PendingEndpoints> {
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
                        let host =
                            c.string(a.get("hostname"), &format!("{path}.{key}[{j}].hostname"));
                        addrs.push((ip, ready, node, target, host));
                    }
                }
            }
            let ports = Self::endpoint_ports(&mut c, s.get("ports"), &join(&path, "ports"));
            subsets.push((addrs, ports));
        }
        Some(PendingEndpoints { id, subsets })
    }

    pub(super) fn endpoint_slice(&mut self, o: &RawObject) {
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
        // The API's limit (`maxEndpoints` in the EndpointSlice validation).
        let items = c.seq_max(n.get("endpoints"), "endpoints", 1000);
        for (i, e) in items.iter().enumerate() {
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
                hostname: c.string(e.get("hostname"), &join(&path, "hostname")),
            });
        }
        let ports = Self::endpoint_ports(&mut c, n.get("ports"), "ports");
        let cilium_weight = super::cilium::slice_weight(&mut c, n);
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
            cilium_weight,
        });
    }

    /// EndpointSlices of the input whose `kubernetes.io/service-name` names
    /// no Service of their own namespace: kube-proxy gives their endpoints
    /// to no Service (a slice never serves another namespace's Service).
    pub(super) fn check_slice_services(&mut self) {
        let mut found = Vec::new();
        for s in &self.cluster.endpoint_slices {
            let own = NamespacedName::new(s.id.namespace.clone(), s.service_name.clone());
            if s.source != SliceSource::Input || self.cluster.service(&own).is_some() {
                continue;
            }
            let elsewhere: Vec<&str> = self
                .cluster
                .services
                .iter()
                .filter(|x| x.id.name == s.service_name)
                .map(|x| x.id.namespace.as_str())
                .collect();
            let why = match elsewhere.as_slice() {
                [] => format!("namespace {} has no such Service", s.id.namespace),
                ns => format!(
                    "the Service is in namespace {}, and a slice serves only a Service of its own namespace",
                    ns.join(", ")
                ),
            };
            let mut d = Diagnostic::warning(format!(
                "EndpointSlice {} names Service `{}`, but {why}: kube-proxy gives its endpoints to no Service",
                s.id, s.service_name
            ))
            .with_hint("put the EndpointSlice in its Service's namespace, or fix its kubernetes.io/service-name label");
            d.object = Some(format!("EndpointSlice/{}", s.id));
            d.field = Some("metadata.labels".into());
            found.push(d);
        }
        self.diags.extend(found);
    }

    /// A StatefulSet's `serviceName` names the Service its Pods' DNS names
    /// live under (`web-0.web.NS.svc…`, through the EndpointSlice
    /// `hostname`); the API accepts one that names no Service, and then the
    /// names do not resolve.
    pub(super) fn check_statefulset_services(&mut self) {
        let mut found = Vec::new();
        for w in &self.cluster.workloads {
            let Some(name) = w.service_name.as_deref() else {
                continue;
            };
            let svc = NamespacedName::new(w.id.namespace.clone(), name);
            if w.kind != WorkloadKind::StatefulSet || self.cluster.service(&svc).is_some() {
                continue;
            }
            let mut d = Diagnostic::warning(format!(
                "`{name}` names no Service in namespace {}, so the StatefulSet's Pods' DNS names ({}-0.{name}.{}.svc.cluster.local, …) do not resolve",
                w.id.namespace, w.id.name, w.id.namespace
            ))
            .with_hint("add a headless Service (clusterIP: None) of that name whose selector matches the Pods");
            d.object = Some(format!("StatefulSet/{}", w.id));
            d.field = Some("spec.serviceName".into());
            found.push(d);
        }
        self.diags.extend(found);
    }

    /// The EndpointSlice mirroring controller: legacy Endpoints of selector-less
    /// Services become EndpointSlices.
    pub(super) fn mirror_endpoints(&mut self, pending: Vec<PendingEndpoints>) {
        for e in pending {
            let Some(svc) = self.cluster.services.iter().find(|s| s.id == e.id) else {
                let mut d = Diagnostic::warning(format!(
                    "Endpoints {} have no Service of the same name; kube-proxy ignores them",
                    e.id
                ))
                .with_hint("add a Service without selector named like the Endpoints");
                d.object = Some(format!("Endpoints/{}", e.id));
                d.field = Some("metadata.name".into());
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
                        .map(|(ip, ready, node, target, host)| Endpoint {
                            addresses: vec![*ip],
                            ready: *ready,
                            serving: *ready,
                            terminating: false,
                            node_name: node.clone(),
                            zone: None,
                            hints: Hints::default(),
                            target_pod: target.clone(),
                            hostname: host.clone(),
                        })
                        .collect();
                    if endpoints.is_empty() {
                        continue;
                    }
                    // The hashed text ends in `V4`/`V6` (how these names were
                    // first made); spelled out so a build without Debug
                    // formatting names the slices the same.
                    let fam = match family {
                        IpFamily::V4 => "V4",
                        IpFamily::V6 => "V6",
                    };
                    let name = format!(
                        "{}-{}",
                        e.id.name,
                        name_suffix(&format!("{}#mirror{i}{fam}", e.id))
                    );
                    self.cluster.endpoint_slices.push(EndpointSlice {
                        id: NamespacedName::new(e.id.namespace.clone(), name),
                        service_name: e.id.name.clone(),
                        family,
                        endpoints,
                        ports: ports.clone(),
                        source: SliceSource::Mirrored,
                        cilium_weight: None,
                    });
                }
            }
        }
    }
}
