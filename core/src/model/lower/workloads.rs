//! Lowering workloads: Pods as given, Deployments expanded into the Pods
//! their ReplicaSet would create, containers and probes, and placing Pods
//! on Nodes with IPs from the node's podCIDR (the scheduler's and kubelet's part).
//!
//! Never panics on input; every rejected field is a located diagnostic.

use super::alloc::{name_suffix, nth_addr, pod_template_hash};
use super::validate::join;
use super::*;

impl Builder {
    pub(super) fn containers(c: &mut Ctx<'_>, spec: Option<&Y>, path: &str) -> Vec<Container> {
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

    pub(super) fn probe(c: &mut Ctx<'_>, n: &Y, path: &str) -> Option<Probe> {
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

    pub(super) fn deployment(&mut self, o: &RawObject) -> Option<Deployment> {
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

    pub(super) fn expand_deployment(&mut self, d: Deployment) {
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

    pub(super) fn pod(&mut self, o: &RawObject) {
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

    /// Schedule Pods without a node (spreading them in order) and give Pods IPs
    /// from their node's podCIDR.
    pub(super) fn place_pods(&mut self) {
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
}
