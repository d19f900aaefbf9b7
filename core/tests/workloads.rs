//! Workload kinds create their Pods as their controllers would, and Pods
//! are scheduled and addressed as the scheduler and the CNI plugin would:
//! StatefulSet ordinals, one DaemonSet Pod per node that takes it,
//! ReplicaSet and Job Pods, node capacity, taints, and Pod addresses that
//! are never a podCIDR's network or broadcast address.

use kpv_core::model::{Cluster, WorkloadKind};
use kpv_core::util::diag::Severity;

fn parse(yaml: &str) -> (Cluster, Vec<kpv_core::util::diag::Diagnostic>) {
    kpv_core::Code::ALL.parse(yaml)
}

fn pod_names(c: &Cluster, owner: &str) -> Vec<String> {
    c.pods
        .iter()
        .filter(|p| p.owner.as_deref() == Some(owner))
        .map(|p| p.id.name.clone())
        .collect()
}

fn nodes(n: usize, extra: &str) -> String {
    (1..=n)
        .map(|i| format!("apiVersion: v1\nkind: Node\nmetadata:\n  name: node-{i}\n{extra}---\n"))
        .collect()
}

fn workload(kind: &str, api: &str, name: &str, spec: &str) -> String {
    format!(
        "apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: {name}\nspec:\n{spec}  selector:\n    matchLabels: {{app: {name}}}\n  template:\n    metadata:\n      labels: {{app: {name}}}\n    spec:\n      containers:\n      - name: c\n        image: nginx\n"
    )
}

#[test]
fn each_workload_kind_creates_its_pods() {
    // (kind, apiVersion, spec lines, expected Pod count, name check)
    type NameCheck = fn(&str, &[String]) -> bool;
    let cases: &[(&str, &str, &str, usize, NameCheck)] = &[
        ("StatefulSet", "apps/v1", "  replicas: 3\n", 3, |n, pods| {
            pods == [format!("{n}-0"), format!("{n}-1"), format!("{n}-2")]
        }),
        ("StatefulSet", "apps/v1", "", 1, |n, pods| {
            pods == [format!("{n}-0")]
        }),
        ("ReplicaSet", "apps/v1", "  replicas: 2\n", 2, |n, pods| {
            pods.iter().all(|p| {
                p.strip_prefix(&format!("{n}-"))
                    .is_some_and(|s| s.len() == 5)
            })
        }),
        ("Deployment", "apps/v1", "  replicas: 2\n", 2, |n, pods| {
            pods.iter()
                .all(|p| p.starts_with(&format!("{n}-")) && p.matches('-').count() == 2)
        }),
        ("DaemonSet", "apps/v1", "", 3, |n, pods| {
            pods.iter().all(|p| p.starts_with(&format!("{n}-")))
        }),
        (
            "Job",
            "batch/v1",
            "  parallelism: 2\n  completions: 5\n",
            2,
            |n, pods| pods.iter().all(|p| p.starts_with(&format!("{n}-"))),
        ),
        (
            "Job",
            "batch/v1",
            "  parallelism: 4\n  completions: 1\n",
            1,
            |_, _| true,
        ),
        ("Job", "batch/v1", "", 1, |_, _| true),
    ];
    for (kind, api, spec, count, names_ok) in cases {
        let name = "web";
        let yaml = format!("{}{}", nodes(3, ""), workload(kind, api, name, spec));
        let (c, diags) = parse(&yaml);
        let errors: Vec<_> = diags.iter().filter(|d| d.is_error()).collect();
        assert!(errors.is_empty(), "{kind}: {errors:#?}");
        assert!(
            !diags.iter().any(|d| d.message.contains("not modelled")),
            "{kind} is modelled: {diags:#?}"
        );
        let pods = pod_names(&c, name);
        assert_eq!(pods.len(), *count, "{kind} {spec}: {pods:?}");
        assert!(names_ok(name, &pods), "{kind}: {pods:?}");
        assert_eq!(c.workloads.len(), 1);
        for p in c.pods.iter() {
            assert!(!p.ips.is_empty(), "{kind}: {} has an address", p.id);
            assert_eq!(p.labels.get("app").map(String::as_str), Some(name));
        }
    }
}

#[test]
fn statefulset_names_are_stable_and_labelled() {
    let yaml = format!(
        "{}{}",
        nodes(2, ""),
        workload("StatefulSet", "apps/v1", "db", "  replicas: 2\n")
    );
    let (a, _) = parse(&yaml);
    let more = format!(
        "{yaml}---\n{}",
        workload("StatefulSet", "apps/v1", "cache", "  replicas: 4\n")
    );
    let (b, _) = parse(&more);
    assert_eq!(pod_names(&a, "db"), pod_names(&b, "db"));
    let p = a
        .pods
        .iter()
        .find(|p| p.id.name == "db-1")
        .unwrap_or_else(|| panic!("db-1"));
    assert_eq!(
        p.labels
            .get("statefulset.kubernetes.io/pod-name")
            .map(String::as_str),
        Some("db-1")
    );
    assert_eq!(
        p.labels
            .get("apps.kubernetes.io/pod-index")
            .map(String::as_str),
        Some("1")
    );
}

#[test]
fn daemonset_runs_on_every_node_that_takes_it() {
    // node-1 tainted NoSchedule, node-2 cordoned, node-3 plain,
    // node-4 PreferNoSchedule (does not block).
    let yaml = "apiVersion: v1\nkind: Node\nmetadata: {name: node-1}\nspec:\n  taints:\n  - {key: node-role.kubernetes.io/control-plane, effect: NoSchedule}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-2}\nspec:\n  unschedulable: true\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-3}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-4}\nspec:\n  taints:\n  - {key: soft, value: x, effect: PreferNoSchedule}\n---\n";
    let ds = workload("DaemonSet", "apps/v1", "agent", "");
    let (c, _) = parse(&format!("{yaml}{ds}"));
    let mut on: Vec<String> = c.pods.iter().filter_map(|p| p.node_name.clone()).collect();
    on.sort();
    assert_eq!(on, ["node-2", "node-3", "node-4"]);
    // Tolerating the control-plane taint puts it there too.
    let tolerant = ds.replace(
        "      containers:",
        "      tolerations:\n      - {key: node-role.kubernetes.io/control-plane, operator: Exists, effect: NoSchedule}\n      containers:",
    );
    let (c, _) = parse(&format!("{yaml}{tolerant}"));
    assert_eq!(c.pods.len(), 4);
    let w = &c.workloads[0];
    assert_eq!((w.kind, w.replicas), (WorkloadKind::DaemonSet, 4));
    // A Deployment's Pods avoid the tainted and the cordoned node.
    let dep = workload("Deployment", "apps/v1", "web", "  replicas: 4\n");
    let (c, _) = parse(&format!("{yaml}{dep}"));
    for p in &c.pods {
        let n = p.node_name.as_deref().unwrap_or("");
        assert!(n == "node-3" || n == "node-4", "{} on {n}", p.id);
    }
}

#[test]
fn pods_beyond_node_capacity_stay_pending() {
    // (maxPods status, replicas, nodes, expected running, expected pending)
    let cases: &[(&str, u32, usize, usize, usize)] = &[
        ("", 5, 1, 5, 0),
        ("status:\n  capacity: {pods: \"2\"}\n", 5, 1, 2, 3),
        (
            "status:\n  capacity: {pods: \"4\"}\n  allocatable: {pods: \"3\"}\n",
            4,
            2,
            4,
            0,
        ),
        ("status:\n  allocatable: {pods: \"1\"}\n", 4, 2, 2, 2),
        ("status:\n  allocatable: {pods: \"0\"}\n", 2, 3, 0, 2),
    ];
    for (status, replicas, n, running, pending) in cases {
        let yaml = format!(
            "{}{}",
            nodes(*n, status),
            workload(
                "Deployment",
                "apps/v1",
                "web",
                &format!("  replicas: {replicas}\n")
            )
        );
        let (c, diags) = parse(&yaml);
        let placed = c.pods.iter().filter(|p| !p.pending).count();
        let waiting: Vec<_> = c.pods.iter().filter(|p| p.pending).collect();
        assert_eq!((placed, waiting.len()), (*running, *pending), "{status}");
        for p in &waiting {
            assert!(p.ips.is_empty() && p.node_name.is_none(), "{}", p.id);
            let note = diags
                .iter()
                .find(|d| d.object.as_deref() == Some(&format!("Pod/{}", p.id)))
                .unwrap_or_else(|| panic!("no note for {}", p.id));
            assert_eq!(note.severity, Severity::Warning);
            // Located at the Deployment that made it (after n Node documents).
            let first_line = nodes(*n, status).lines().count() + 1;
            assert_eq!(
                (note.document, note.span.map(|s| s.line)),
                (*n, Some(first_line)),
                "{note}"
            );
            assert!(
                note.message.contains(&format!("0/{n} nodes are available"))
                    && note.message.contains("Too many pods"),
                "{}",
                note.message
            );
        }
    }
    // 110 by default: the 111th Pod on one node waits.
    let yaml = format!(
        "{}{}",
        nodes(1, ""),
        workload("Deployment", "apps/v1", "web", "  replicas: 111\n")
    );
    let (c, _) = parse(&yaml);
    assert_eq!(c.pods.iter().filter(|p| p.pending).count(), 1);
}

#[test]
fn pending_pods_are_no_endpoints() {
    let yaml = format!(
        "{}{}---\napiVersion: v1\nkind: Service\nmetadata: {{name: web}}\nspec:\n  selector: {{app: web}}\n  ports: [{{port: 80}}]\n",
        nodes(1, "status:\n  allocatable: {pods: \"1\"}\n"),
        workload("Deployment", "apps/v1", "web", "  replicas: 3\n")
    );
    let (c, _) = parse(&yaml);
    let slices = kpv_core::net::controller::steady_slices(&c);
    let endpoints: usize = slices.iter().map(|s| s.endpoints.len()).sum();
    assert_eq!(endpoints, 1, "{slices:#?}");
}

#[test]
fn pod_addresses_skip_network_gateway_and_broadcast() {
    // A /29 holds .0 (network), .1 (bridge), .2–.6 (Pods), .7 (broadcast).
    for (cidr, replicas, usable) in [
        ("10.1.0.0/29", 7u32, 5usize),
        ("10.1.0.0/30", 3, 1),
        ("10.1.0.0/28", 5, 5),
    ] {
        let yaml =
            format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: n}}\nspec: {{podCIDR: {cidr}}}\n---\n{}",
            workload("Deployment", "apps/v1", "web", &format!("  replicas: {replicas}\n"))
        );
        let (c, diags) = parse(&yaml);
        let net: ipnet::IpNet = cidr.parse().unwrap_or_else(|_| panic!("{cidr}"));
        let ips: Vec<_> = c.pods.iter().flat_map(|p| p.ips.clone()).collect();
        assert_eq!(ips.len(), usable, "{cidr}: {ips:?}");
        for ip in &ips {
            assert!(net.contains(ip), "{ip}");
            assert_ne!(*ip, net.network(), "{cidr}");
            assert_ne!(*ip, net.broadcast(), "{cidr}");
        }
        let without = c.pods.iter().filter(|p| p.ips.is_empty()).count();
        assert_eq!(without, replicas as usize - usable);
        if without > 0 {
            assert!(
                diags.iter().any(|d| d.message.contains("no free address")),
                "{diags:#?}"
            );
        }
    }
}

#[test]
fn synthesised_node_addresses_never_collide() {
    // node-a has no address and would get 192.168.0.2, which node-b has.
    let yaml = "apiVersion: v1\nkind: Node\nmetadata: {name: node-a}\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-b}\nstatus:\n  addresses: [{type: InternalIP, address: 192.168.0.2}]\n---\napiVersion: v1\nkind: Node\nmetadata: {name: node-c}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: node-b}\nstatus:\n  podIP: 192.168.0.4\n";
    let (c, _) = parse(yaml);
    let mut all: Vec<_> = c
        .nodes
        .iter()
        .flat_map(|n| n.addresses.iter().map(|(_, ip)| *ip))
        .collect();
    all.extend(c.pods.iter().flat_map(|p| p.ips.clone()));
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), n, "{all:?}");
    // 300 nodes without addresses: all distinct, none a .0 or .255.
    let yaml = nodes(300, "");
    let (c, _) = parse(&yaml);
    let mut ips: Vec<_> = c
        .nodes
        .iter()
        .filter_map(|n| n.primary_ip(kpv_core::model::packet::IpFamily::V4))
        .collect();
    assert_eq!(ips.len(), 300);
    ips.sort();
    ips.dedup();
    assert_eq!(ips.len(), 300);
    assert!(ips
        .iter()
        .all(|ip| !ip.to_string().ends_with(".0") && !ip.to_string().ends_with(".255")));
}

#[test]
fn a_pod_bound_by_hand_to_a_full_node_is_rejected() {
    let yaml = format!(
        "{}apiVersion: v1\nkind: Pod\nmetadata: {{name: a}}\nspec: {{nodeName: node-1}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {{name: b}}\nspec: {{nodeName: node-1}}\n",
        nodes(1, "status:\n  allocatable: {pods: \"1\"}\n")
    );
    let (c, diags) = parse(&yaml);
    let b = c
        .pods
        .iter()
        .find(|p| p.id.name == "b")
        .unwrap_or_else(|| panic!("b"));
    assert!(b.finished && b.ips.is_empty());
    assert!(
        diags.iter().any(|d| d.message.contains("OutOfpods")),
        "{diags:#?}"
    );
}

#[test]
fn pasted_controller_trees_make_each_pod_once() {
    let dep = workload("Deployment", "apps/v1", "web", "  replicas: 2\n");
    let rs = "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: web-7d4b9c\n  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: u1}]\nspec:\n  replicas: 2\n  selector:\n    matchLabels: {app: web, pod-template-hash: 7d4b9c}\n  template:\n    metadata:\n      labels: {app: web, pod-template-hash: 7d4b9c}\n    spec:\n      containers: [{name: c, image: nginx}]\n---\n";
    let pod = |name: &str| {
        format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  labels: {{app: web, pod-template-hash: 7d4b9c}}\n  ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: web-7d4b9c, uid: u2}}]\nspec:\n  nodeName: node-1\n  containers: [{{name: c, image: nginx}}]\n---\n")
    };
    let pods = format!("{}{}", pod("web-7d4b9c-aaaaa"), pod("web-7d4b9c-bbbbb"));
    // (documents, Pods expected)
    let cases = [
        (format!("{dep}---\n{rs}"), 2),
        (format!("{dep}---\n{rs}{pods}"), 2),
        (format!("{rs}{pods}"), 2),
        (format!("{dep}---\n{pods}"), 2),
        (rs.to_string(), 2),
        (dep.clone(), 2),
    ];
    for (docs, want) in &cases {
        let (c, diags) = parse(&format!("{}{docs}", nodes(1, "")));
        assert!(diags.iter().all(|d| !d.is_error()), "{diags:#?}");
        assert_eq!(
            c.pods.len(),
            *want,
            "{docs}\n{:?}",
            c.pods.iter().map(|p| &p.id.name).collect::<Vec<_>>()
        );
    }
}

/// A `hostNetwork: true` Pod has its node's address, not one of the Pod
/// network; its Service's endpoint is that address.
#[test]
fn host_network_pods_have_their_nodes_address() {
    let yaml = format!(
        "{}{}---\napiVersion: v1\nkind: Service\nmetadata: {{name: agent}}\nspec: {{selector: {{app: agent}}, ports: [{{port: 9100}}]}}\n",
        nodes(
            2,
            "spec: {podCIDR: 10.244.0.0/24}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.10}]}\n"
        )
        .replacen("10.244.0.0/24}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.10}]}", "10.244.0.0/24}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.11}]}", 1),
        workload("DaemonSet", "apps/v1", "agent", "").replace(
            "    spec:\n      containers:",
            "    spec:\n      hostNetwork: true\n      containers:",
        )
    );
    let (c, diags) = parse(&yaml);
    assert!(
        diags.iter().all(|d| d.severity != Severity::Error),
        "{diags:#?}"
    );
    let mut ips: Vec<String> = c
        .pods
        .iter()
        .filter(|p| p.owner.as_deref() == Some("agent"))
        .map(|p| format!("{} {}", p.node_name.clone().unwrap_or_default(), p.ips[0]))
        .collect();
    ips.sort();
    assert_eq!(ips, ["node-1 192.168.0.11", "node-2 192.168.0.10"]);
    let slices = kpv_core::net::controller::steady_slices(&c);
    let mut eps: Vec<String> = slices
        .iter()
        .flat_map(|s| {
            s.endpoints
                .iter()
                .flat_map(|e| e.addresses.iter().map(|a| a.to_string()))
        })
        .collect();
    eps.sort();
    assert_eq!(eps, ["192.168.0.10", "192.168.0.11"]);
}

/// A named targetPort declared only by a sidecar (an init container with
/// `restartPolicy: Always`) resolves, as the API's FindPort searches
/// sidecars after the containers; a plain init container's port does not.
#[test]
fn a_sidecars_named_port_resolves() {
    let pod = |restart: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: web, labels: {{app: web}}}}\nspec:\n  initContainers:\n  - name: proxy\n    image: envoy\n{restart}    ports: [{{name: proxy, containerPort: 15001}}]\n  containers:\n  - name: app\n    image: nginx\n---\napiVersion: v1\nkind: Service\nmetadata: {{name: web}}\nspec: {{selector: {{app: web}}, ports: [{{port: 80, targetPort: proxy}}]}}\n"
        )
    };
    let ports = |yaml: &str| {
        let (c, _) = parse(yaml);
        // Endpoints of slices that carry the port (a port no Pod can
        // resolve gets none).
        kpv_core::net::controller::steady_slices(&c)
            .iter()
            .filter(|s| !s.ports.is_empty())
            .map(|s| s.endpoints.len())
            .sum::<usize>()
    };
    assert_eq!(ports(&pod("    restartPolicy: Always\n")), 1);
    assert_eq!(ports(&pod("")), 0);
}
