//! Lowering workloads: Pods as given, Deployments expanded into the Pods
//! their ReplicaSet would create, containers and probes, and placing Pods
//! on Nodes with IPs from the node's podCIDR (the scheduler's and kubelet's part).
//!
//! Never panics on input; every rejected field is a located diagnostic.

use super::alloc::{name_suffix, net_size, nth_addr, pod_template_hash};
use super::validate::join;
use super::*;

impl Builder {
    pub(super) fn containers(c: &mut Ctx<'_>, spec: Option<&Y>, path: &str) -> Vec<Container> {
        let mut out = Vec::new();
        // The containers, then the sidecars: init containers with
        // `restartPolicy: Always` run beside them, and the API's FindPort
        // looks up a named port in them too (after the containers).
        let mut items: Vec<(String, &Y)> = Vec::new();
        for key in ["containers", "initContainers"] {
            let list = c.seq(spec.and_then(|s| s.get(key)), &join(path, key));
            for (i, cn) in list.iter().enumerate() {
                let sidecar = cn.get("restartPolicy").and_then(Y::as_str) == Some("Always");
                if key == "containers" || sidecar {
                    items.push((format!("{}[{i}]", join(path, key)), cn));
                }
            }
        }
        for (i, (p, cn)) in items.into_iter().enumerate() {
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
                let port_name = c.string(pn.get("name"), &join(&pp, "name"));
                if let Some(name) = &port_name {
                    let problems = super::validate::port_name_problems(name);
                    if !problems.is_empty() {
                        c.err(
                            pn.get("name").unwrap_or(pn),
                            &join(&pp, "name"),
                            format!("Invalid value: {}: {}", crate::util::diag::quoted(name), problems.join(", ")),
                            "port names are at most 15 lower-case letters, digits and single hyphens, with at least one letter",
                        );
                        continue;
                    }
                }
                ports.push(ContainerPort {
                    name: port_name,
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
            let startup_probe = cn
                .get("startupProbe")
                .and_then(|n| Self::probe(c, n, &join(&p, "startupProbe")));
            let container = Container {
                name,
                image,
                ports,
                readiness_probe,
                liveness_probe,
                startup_probe,
            };
            // A probe's port name the container lacks: the kubelet cannot
            // resolve it, and the probe fails every time (modelled so in
            // `controller::probe`).
            for (key, probe) in [
                ("readinessProbe", &container.readiness_probe),
                ("livenessProbe", &container.liveness_probe),
                ("startupProbe", &container.startup_probe),
            ] {
                let Some(port) = probe.as_ref().and_then(|pr| pr.unresolved_port(&container))
                else {
                    continue;
                };
                let probe_node = cn.get(key);
                let (handler, field) = match probe_node.and_then(|n| n.get("httpGet")) {
                    Some(h) => (Some(h), "httpGet.port"),
                    None => (
                        probe_node.and_then(|n| n.get("tcpSocket")),
                        "tcpSocket.port",
                    ),
                };
                let at = handler
                    .and_then(|h| h.get("port"))
                    .or(probe_node)
                    .unwrap_or(cn);
                c.warn(
                    at,
                    &join(&p, &format!("{key}.{field}")),
                    format!(
                        "{key} names port `{port}`, which container `{}` does not have: the kubelet cannot resolve it and the probe fails every time{}",
                        container.name,
                        if key == "readinessProbe" { " (the Pod never becomes Ready)" } else { " (the container restarts again and again)" }
                    ),
                    "name one of the container's ports, or give the port number",
                );
            }
            out.push(container);
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
        // The API server defaults 0 (as it defaults an absent field:
        // SetDefaults_Probe) and refuses negative values; a day is the
        // simulator's own limit.
        let mut get = |key: &str, default: u32| match c.int_sim(
            n.get(key),
            &join(path, key),
            0,
            SIM_MAX_PROBE_SECONDS,
        ) {
            Some(0) | None => default,
            Some(v) => v as u32,
        };
        let probe = Probe {
            action,
            initial_delay_seconds: get("initialDelaySeconds", 0),
            period_seconds: get("periodSeconds", 10),
            timeout_seconds: get("timeoutSeconds", 1),
            success_threshold: get("successThreshold", 1),
            failure_threshold: get("failureThreshold", 3),
        };
        let kind = ["livenessProbe", "startupProbe"]
            .into_iter()
            .find(|k| path.ends_with(k));
        if let (true, Some(kind)) = (probe.success_threshold != 1, kind) {
            let at = n.get("successThreshold").unwrap_or(n);
            c.err(
                at,
                &join(path, "successThreshold"),
                format!("Invalid value: {}: must be 1", probe.success_threshold),
                &format!("a {kind}'s successThreshold must be 1"),
            );
            return None;
        }
        Some(probe)
    }

    /// `tolerations: [{key, operator, value, effect}]`.
    pub(super) fn tolerations(c: &mut Ctx<'_>, n: Option<&Y>, path: &str) -> Vec<Toleration> {
        let mut out = Vec::new();
        for (i, t) in c.seq(n, path).iter().enumerate() {
            let p = format!("{path}[{i}]");
            let key = c.string(t.get("key"), &join(&p, "key")).unwrap_or_default();
            let exists = match t.get("operator").and_then(Y::as_str) {
                None | Some("") | Some("Equal") => false,
                Some("Exists") => true,
                Some(other) => {
                    let at = t.get("operator").unwrap_or(t);
                    c.err(
                        at,
                        &join(&p, "operator"),
                        format!("Unsupported value: \"{other}\": supported values: \"Equal\", \"Exists\""),
                        "use Equal or Exists",
                    );
                    continue;
                }
            };
            out.push(Toleration {
                key,
                exists,
                value: c
                    .string(t.get("value"), &join(&p, "value"))
                    .unwrap_or_default(),
                effect: c
                    .string(t.get("effect"), &join(&p, "effect"))
                    .unwrap_or_default(),
            });
        }
        out
    }

    /// A Deployment, ReplicaSet, StatefulSet, DaemonSet or Job: its Pod
    /// template and how many Pods its controller keeps.
    pub(super) fn workload(&mut self, o: &RawObject, kind: WorkloadKind) -> Option<Workload> {
        let (id, _, _) = self.meta(o, true)?;
        let obj = Self::object_name(o, &id);
        let mut c = self.ctx(o, obj);
        let spec = o.node.get("spec");
        let get = |key: &str| spec.and_then(|s| s.get(key));
        let replicas = match kind {
            WorkloadKind::Deployment | WorkloadKind::ReplicaSet | WorkloadKind::StatefulSet => {
                c.int_sim(get("replicas"), "spec.replicas", 0, SIM_MAX_REPLICAS)
                    .unwrap_or(1) as u32
            }
            // Known once the Nodes are: one per node it may run on.
            WorkloadKind::DaemonSet => 0,
            // A Job runs `parallelism` Pods at once (default 1), never more
            // than the completions it still needs.
            WorkloadKind::Job => {
                let parallelism = c
                    .int_sim(get("parallelism"), "spec.parallelism", 0, SIM_MAX_REPLICAS)
                    .unwrap_or(1);
                let completions = c.int_sim(get("completions"), "spec.completions", 0, i64::MAX);
                completions.map_or(parallelism, |n| n.min(parallelism)) as u32
            }
        };
        let template = get("template");
        let template_labels = c.labels(
            template
                .and_then(|t| t.get("metadata"))
                .and_then(|m| m.get("labels")),
            "spec.template.metadata.labels",
        );
        let selector_node = get("selector").and_then(|s| s.get("matchLabels"));
        let selector = if kind == WorkloadKind::Job && selector_node.is_none() {
            // The Job controller makes its own selector (the Job's uid).
            Labels::from([("job-name".to_string(), id.name.clone())])
        } else {
            let sel = c.labels(selector_node, "spec.selector.matchLabels");
            if sel.is_empty() {
                let at = get("selector").or(spec).unwrap_or(&o.node);
                c.err(
                    at,
                    "spec.selector",
                    "Required value",
                    "add spec.selector.matchLabels naming the template's labels",
                );
                return None;
            }
            if !selects(&sel, &template_labels) {
                // Go's %#v of the template's labels, keys sorted.
                let map: Vec<String> = template_labels
                    .iter()
                    .map(|(k, v)| {
                        format!(
                            "{}:{}",
                            crate::util::diag::quoted(k),
                            crate::util::diag::quoted(v)
                        )
                    })
                    .collect();
                let at = template
                    .and_then(|t| t.get("metadata"))
                    .and_then(|m| m.get("labels"))
                    .or(spec)
                    .unwrap_or(&o.node);
                c.err(
                    at,
                    "spec.template.metadata.labels",
                    format!(
                        "Invalid value: map[string]string{{{}}}: `selector` does not match template `labels`",
                        map.join(", ")
                    ),
                    "make spec.selector.matchLabels a subset of spec.template.metadata.labels",
                );
                return None;
            }
            sel
        };
        let pod_spec = template.and_then(|t| t.get("spec"));
        let containers = Self::containers(&mut c, pod_spec, "spec.template.spec");
        let host_network = c
            .boolean(
                pod_spec.and_then(|s| s.get("hostNetwork")),
                "spec.template.spec.hostNetwork",
            )
            .unwrap_or(false);
        let tolerations = Self::tolerations(
            &mut c,
            pod_spec.and_then(|s| s.get("tolerations")),
            "spec.template.spec.tolerations",
        );
        let dns = super::pod_dns::pod_dns(&mut c, pod_spec, "spec.template.spec");
        if kind == WorkloadKind::Job && replicas > 0 {
            c.warn(
                &o.node,
                "spec",
                format!("Job {id}: its {replicas} Pod(s) are shown running; once a Pod completes (phase Succeeded) it is no longer Ready and leaves every Service's endpoints"),
                "a Job's Pods are endpoints only while they run and are Ready",
            );
        }
        let service_name = (kind == WorkloadKind::StatefulSet)
            .then(|| c.string(get("serviceName"), "spec.serviceName"))
            .flatten()
            .filter(|s| !s.is_empty());
        let owned_by = o
            .node
            .get("metadata")
            .and_then(|m| m.get("ownerReferences"))
            .and_then(Y::as_seq)
            .and_then(|s| s.first())
            .and_then(|r| {
                let kind = r.get("kind").and_then(Y::as_str)?;
                let name = r.get("name").and_then(Y::as_str)?;
                Some(format!("{kind}/{name}"))
            });
        self.workload_origin
            .insert((kind, id.clone()), (o.file, o.doc, o.node.span));
        Some(Workload {
            kind,
            id,
            replicas,
            selector,
            template_labels,
            containers,
            tolerations,
            service_name,
            owned_by,
            host_network,
            dns,
        })
    }

    /// Create each workload's Pods as its controller would (after the
    /// Nodes are complete: a DaemonSet needs them).
    pub(super) fn expand_workloads(&mut self, workloads: Vec<Workload>) {
        // What `kubectl get all -o yaml` pastes: a Deployment with its
        // ReplicaSet and their Pods. Each Pod is made once.
        let deployments: BTreeSet<NamespacedName> = workloads
            .iter()
            .filter(|w| w.kind == WorkloadKind::Deployment)
            .map(|w| w.id.clone())
            .collect();
        for mut w in workloads {
            let at = self.workload_origin.get(&(w.kind, w.id.clone())).copied();
            let note = |msg: String, hint: &str| {
                let mut d = Diagnostic::warning(msg).with_hint(hint);
                d.object = Some(format!("{}/{}", w.kind.as_str(), w.id));
                if let Some((file, doc, span)) = at {
                    (d.file, d.document, d.span) = (file, doc, Some(span));
                }
                d
            };
            if let Some(dep) = w
                .owned_by
                .as_deref()
                .and_then(|o| o.strip_prefix("Deployment/"))
                .filter(|_| w.kind == WorkloadKind::ReplicaSet)
                .map(|d| NamespacedName::new(w.id.namespace.clone(), d))
                .filter(|d| deployments.contains(d))
            {
                self.diags.push(note(
                    format!("ReplicaSet {} belongs to Deployment {dep}, which makes its Pods: the ReplicaSet is not expanded again", w.id),
                    "leave the ReplicaSet out, or keep it: the Pods are the same",
                ));
                continue;
            }
            let given = self
                .cluster
                .pods
                .iter()
                .filter(|p| p.id.namespace == w.id.namespace)
                .filter(|p| match (&p.owner, w.kind) {
                    (Some(o), WorkloadKind::Deployment) => p
                        .labels
                        .get("pod-template-hash")
                        .is_some_and(|h| *o == format!("{}-{h}", w.id.name)),
                    (Some(o), _) => *o == w.id.name,
                    (None, _) => false,
                })
                .count();
            if given > 0 {
                self.diags.push(note(
                    format!("{given} Pod(s) of {} {} are given in the input: kpv uses them instead of making new ones", w.kind.as_str(), w.id),
                    "leave the Pods out to have them made from the template",
                ));
                self.cluster.workloads.push(w);
                continue;
            }
            let pods = self.template_pods(&w);
            if w.kind == WorkloadKind::DaemonSet {
                w.replicas = pods.len() as u32;
            }
            if let Some(at) = at {
                for p in &pods {
                    self.pod_origin.insert(p.id.clone(), at);
                }
            }
            self.cluster.pods.extend(pods);
            self.cluster.workloads.push(w);
        }
    }

    /// The Pods a workload's controller makes from its template, named
    /// as it names them.
    fn template_pods(&mut self, w: &Workload) -> Vec<Pod> {
        let mut pods = Vec::new();
        match w.kind {
            WorkloadKind::Deployment => {
                // The Deployment's ReplicaSet is named NAME-HASH, its
                // Pods NAME-HASH-XXXXX with the pod-template-hash label.
                let hash = pod_template_hash(&format!("{}/{}", w.id, w.template_labels.len()));
                for i in 0..w.replicas {
                    let name = format!(
                        "{}-{}-{}",
                        w.id.name,
                        hash,
                        name_suffix(&format!("{}#{i}", w.id))
                    );
                    let mut labels = w.template_labels.clone();
                    labels.insert("pod-template-hash".into(), hash.clone());
                    pods.push(template_pod(w, name, labels, None));
                }
            }
            WorkloadKind::ReplicaSet | WorkloadKind::Job => {
                // generateName NAME- with a random 5-character suffix.
                for i in 0..w.replicas {
                    let name = format!(
                        "{}-{}",
                        w.id.name,
                        name_suffix(&format!("{}/{}#{i}", w.kind.as_str(), w.id))
                    );
                    let mut labels = w.template_labels.clone();
                    if w.kind == WorkloadKind::Job {
                        labels.insert("job-name".into(), w.id.name.clone());
                        labels.insert("batch.kubernetes.io/job-name".into(), w.id.name.clone());
                    }
                    pods.push(template_pod(w, name, labels, None));
                }
            }
            WorkloadKind::StatefulSet => {
                // Stable ordinal names NAME-0 … NAME-(N-1).
                for i in 0..w.replicas {
                    let name = format!("{}-{i}", w.id.name);
                    let mut labels = w.template_labels.clone();
                    labels.insert("statefulset.kubernetes.io/pod-name".into(), name.clone());
                    labels.insert("apps.kubernetes.io/pod-index".into(), i.to_string());
                    let mut p = template_pod(w, name.clone(), labels, None);
                    p.hostname = Some(name);
                    p.subdomain = w.service_name.clone();
                    pods.push(p);
                }
            }
            WorkloadKind::DaemonSet => pods = self.daemon_pods(w),
        }
        pods
    }

    /// A DaemonSet's Pods: one per node whose taints it tolerates;
    /// cordoned nodes included (the controller adds tolerations for them).
    fn daemon_pods(&mut self, w: &Workload) -> Vec<Pod> {
        let mut pods = Vec::new();
        for node in &self.cluster.nodes {
            let tolerated = node
                .taints
                .iter()
                .filter(|t| t.blocks_scheduling())
                .all(|t| {
                    DAEMONSET_TOLERATED.contains(&(t.key.as_str(), t.effect.as_str()))
                        || w.tolerations.iter().any(|x| x.tolerates(t))
                });
            if !tolerated {
                continue;
            }
            let name = format!(
                "{}-{}",
                w.id.name,
                name_suffix(&format!("DaemonSet/{}@{}", w.id, node.name))
            );
            let mut p = template_pod(w, name, w.template_labels.clone(), Some(node.name.clone()));
            p.tolerations.push(Toleration {
                key: "node.kubernetes.io/unschedulable".into(),
                exists: true,
                value: String::new(),
                effect: "NoSchedule".into(),
            });
            self.node_bound_by_controller.insert(p.id.clone());
            pods.push(p);
        }
        pods
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
        let host_network = c
            .boolean(spec.and_then(|s| s.get("hostNetwork")), "spec.hostNetwork")
            .unwrap_or(false);
        let tolerations = Self::tolerations(
            &mut c,
            spec.and_then(|s| s.get("tolerations")),
            "spec.tolerations",
        );
        let dns = super::pod_dns::pod_dns(&mut c, spec, "spec");
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
        let at = (o.file, o.doc, o.node.span);
        let hostname = c
            .string(spec.and_then(|s| s.get("hostname")), "spec.hostname")
            .filter(|s| !s.is_empty());
        let subdomain = c
            .string(spec.and_then(|s| s.get("subdomain")), "spec.subdomain")
            .filter(|s| !s.is_empty());
        self.pod_origin.insert(id.clone(), at);
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
            tolerations,
            hostname,
            subdomain,
            host_network,
            dns,
        });
    }

    /// Schedule Pods without a node as the scheduler would (spreading them
    /// in order over the nodes that take them: not cordoned, taints
    /// tolerated, fewer Pods than `maxPods`), and give Pods IPs from their
    /// node's podCIDR as the CNI plugin would. A Pod no node takes stays
    /// Pending, with the scheduler's reason.
    pub(super) fn place_pods(&mut self) {
        let origin = std::mem::take(&mut self.pod_origin);
        let nodes: Vec<String> = self.cluster.nodes.iter().map(|n| n.name.clone()).collect();
        if nodes.is_empty() {
            return;
        }
        // Pods given with IPs keep them; count used addresses per node.
        let mut used: BTreeSet<IpAddr> =
            crate::util::order::set(self.cluster.pods.iter().flat_map(|p| p.ips.clone()));
        let mut count: BTreeMap<String, u32> = BTreeMap::new();
        let mut rr = 0usize;
        // Deterministic order: input Pods keep their order after the sort by name;
        // workloads' Pods are placed in replica order.
        let mut order: Vec<usize> = (0..self.cluster.pods.len()).collect();
        crate::util::order::sort_by(&mut order, |&a, &b| {
            let pa = &self.cluster.pods[a];
            let pb = &self.cluster.pods[b];
            (pa.owner.is_some(), &pa.owner, a).cmp(&(pb.owner.is_some(), &pb.owner, b))
        });
        for i in order {
            let pod = &mut self.cluster.pods[i];
            if pod.pending {
                continue;
            }
            if pod.finished {
                // Placed as it was, but it holds no address and no slot.
                if pod.node_name.is_none() {
                    pod.node_name = Some(nodes[rr % nodes.len()].clone());
                    rr += 1;
                }
                continue;
            }
            let by_controller = self.node_bound_by_controller.contains(&pod.id);
            let fits = |node: &Node, count: &BTreeMap<String, u32>| {
                count.get(&node.name).copied().unwrap_or(0) < node.max_pods
            };
            match pod.node_name.clone() {
                None => {
                    let n = self.cluster.nodes.len();
                    let takes = |node: &Node| {
                        !node.unschedulable
                            && node
                                .taints
                                .iter()
                                .filter(|t| t.blocks_scheduling())
                                .all(|t| pod.tolerations.iter().any(|x| x.tolerates(t)))
                    };
                    let pick = (0..n).map(|k| (rr + k) % n).find(|&j| {
                        takes(&self.cluster.nodes[j]) && fits(&self.cluster.nodes[j], &count)
                    });
                    match pick {
                        Some(j) => {
                            pod.node_name = Some(self.cluster.nodes[j].name.clone());
                            rr = j + 1;
                        }
                        None => {
                            pod.pending = true;
                            let why = unschedulable_reason(&self.cluster.nodes, pod, &count);
                            self.diags.push(pod_warning(
                                &origin,
                                &pod.id,
                                format!("Pod {} stays Pending: {why}", pod.id),
                                "add Nodes, raise status.allocatable.pods, or tolerate the taints; a Pending Pod has no address and is no endpoint",
                                None,
                            ));
                            continue;
                        }
                    }
                }
                Some(n) => {
                    match self.cluster.nodes.iter().find(|x| x.name == n) {
                        None => {
                            self.diags.push(pod_warning(
                                &origin,
                                &pod.id,
                                format!("Pod {} is on node `{n}`, which is not among the Nodes: the EndpointSlice controller skips it (unless its Service publishes not-ready addresses)", pod.id),
                                "add that Node or fix spec.nodeName",
                                Some("spec.nodeName"),
                            ));
                        }
                        Some(node) if !fits(node, &count) && pod.ips.is_empty() => {
                            let max = node.max_pods;
                            let msg = if by_controller {
                                // The scheduler cannot bind it: Pending.
                                pod.pending = true;
                                format!(
                                    "Pod {} stays Pending: 0/1 nodes are available: 1 Too many pods (node {n} runs its maximum of {max} Pods)",
                                    pod.id
                                )
                            } else {
                                // Bound by hand: the kubelet rejects it.
                                pod.finished = true;
                                format!(
                                    "Pod {} is rejected by the kubelet of {n} (phase Failed, reason OutOfpods): the node runs its maximum of {max} Pods",
                                    pod.id
                                )
                            };
                            self.diags.push(pod_warning(
                                &origin,
                                &pod.id,
                                msg,
                                "raise the node's status.allocatable.pods or put the Pod on another node; it has no address and is no endpoint",
                                Some("spec.nodeName"),
                            ));
                            continue;
                        }
                        Some(_) => {}
                    }
                }
            }
            let Some(node_name) = pod.node_name.clone() else {
                continue;
            };
            *count.entry(node_name.clone()).or_default() += 1;
            if let Err(cidr) = assign_ips(&self.cluster.nodes, pod, &node_name, &mut used) {
                self.diags.push(pod_warning(
                    &origin,
                    &pod.id,
                    format!(
                        "Pod {} stays Pending (ContainerCreating): node {node_name}'s podCIDR {cidr} has no free address left",
                        pod.id
                    ),
                    "give the node a larger spec.podCIDR or run fewer Pods on it",
                    None,
                ));
            }
        }
    }
}

/// A warning about a Pod, placed where the Pod (or its workload) is
/// written.
fn pod_warning(
    origin: &BTreeMap<NamespacedName, (usize, usize, crate::util::diag::Span)>,
    id: &NamespacedName,
    msg: String,
    hint: &str,
    field: Option<&str>,
) -> Diagnostic {
    let mut d = Diagnostic::warning(msg).with_hint(hint);
    d.object = Some(format!("Pod/{id}"));
    if let Some(&(file, doc, span)) = origin.get(id) {
        (d.file, d.document, d.span) = (file, doc, Some(span));
    }
    d.field = field.map(str::to_string);
    d
}

/// Give a Pod placed on `node_name` its addresses, unless it has some: a
/// host-network Pod the node's own (one per family, InternalIP first);
/// others one per family the node has a podCIDR of (a dual-stack node
/// gives its Pods both), the node's first podCIDR's family first. `Err`
/// names a podCIDR with no free address left: the Pod stays Pending.
fn assign_ips(
    nodes: &[Node],
    pod: &mut Pod,
    node_name: &str,
    used: &mut BTreeSet<IpAddr>,
) -> Result<(), IpNet> {
    if !pod.ips.is_empty() {
        return Ok(());
    }
    let node = nodes.iter().find(|x| x.name == node_name);
    if pod.host_network {
        if let Some(node) = node {
            let mut ips: Vec<IpAddr> = Vec::new();
            for fam in [IpFamily::V4, IpFamily::V6] {
                ips.extend(node.primary_ip(fam));
            }
            pod.ips = ips;
        }
        return Ok(());
    }
    let cidrs: Vec<IpNet> = node.map(|n| n.pod_cidrs.clone()).unwrap_or_default();
    let mut families_done = Vec::new();
    for cidr in cidrs {
        let fam = IpFamily::of(&cidr.addr());
        if families_done.contains(&fam) {
            continue;
        }
        families_done.push(fam);
        // .0 is the network, .1 the node's bridge, the last the
        // broadcast address (IPv4): Pods get .2 up to the one before it.
        let last = net_size(&cidr).saturating_sub(1);
        let ip = (2..last)
            .filter_map(|k| nth_addr(&cidr, k))
            .find(|ip| used.insert(*ip));
        match ip {
            Some(ip) => pod.ips.push(ip),
            None => {
                pod.pending = true;
                pod.ips.clear();
                return Err(cidr);
            }
        }
    }
    Ok(())
}

/// Taints the DaemonSet controller tolerates on its own
/// (`AddOrUpdateDaemonPodTolerations`).
const DAEMONSET_TOLERATED: &[(&str, &str)] = &[
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
];

/// kpv's own limit on Pods per workload (the API allows any int32).
pub(super) const SIM_MAX_REPLICAS: i64 = 1000;
/// kpv's own limit on probe timings, in seconds.
const SIM_MAX_PROBE_SECONDS: i64 = 86_400;

/// The scheduler's FailedScheduling message: `0/N nodes are available:`
/// and each reason with its count, sorted as the scheduler sorts them.
/// One Pod of a workload's template, not yet placed or addressed.
fn template_pod(w: &Workload, name: String, labels: Labels, node: Option<String>) -> Pod {
    Pod {
        id: NamespacedName::new(w.id.namespace.clone(), name),
        labels,
        node_name: node,
        ips: Vec::new(),
        containers: w.containers.clone(),
        terminating: false,
        finished: false,
        pending: false,
        reported_ready: ReportedReady::Unknown,
        owner: Some(w.id.name.clone()),
        tolerations: w.tolerations.clone(),
        hostname: None,
        subdomain: None,
        host_network: w.host_network,
        dns: w.dns.clone(),
    }
}

fn unschedulable_reason(nodes: &[Node], pod: &Pod, count: &BTreeMap<String, u32>) -> String {
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    for node in nodes {
        let untolerated = node
            .taints
            .iter()
            .filter(|t| t.blocks_scheduling())
            .find(|t| !pod.tolerations.iter().any(|x| x.tolerates(t)));
        let reason = if node.unschedulable {
            "node(s) were unschedulable".to_string()
        } else if let Some(t) = untolerated {
            format!("node(s) had untolerated taint {{{}: {}}}", t.key, t.value)
        } else if count.get(&node.name).copied().unwrap_or(0) >= node.max_pods {
            "Too many pods".to_string()
        } else {
            continue;
        };
        *reasons.entry(reason).or_default() += 1;
    }
    let parts: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
    format!(
        "0/{} nodes are available: {}.",
        nodes.len(),
        parts.join(", ")
    )
}
