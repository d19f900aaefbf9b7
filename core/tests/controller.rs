//! Probes, Pod readiness and EndpointSlices in simulated time.

use kpv_core::model::{Cluster, NamespacedName};
use kpv_core::net::controller::{
    self, probe_events, ready_at, AppChange, AppState, ProbeKind, Timing,
};

const SEED: &str = include_str!("../../tests/scenarios/alpaca-bandicoot.yaml");

fn seed() -> Cluster {
    kpv_core::Code::ALL.parse(SEED).0
}

fn first_alpaca(c: &Cluster) -> NamespacedName {
    c.pods
        .iter()
        .find(|p| p.id.name.starts_with("alpaca-prod-"))
        .map(|p| p.id.clone())
        .unwrap_or_default()
}

fn change(pod: &NamespacedName, at_ms: u64, state: AppState) -> AppChange {
    AppChange {
        at_ms,
        pod: pod.clone(),
        state,
    }
}

#[test]
fn readiness_fails_at_the_third_failed_probe_and_returns_after_one_success() {
    let c = seed();
    let id = first_alpaca(&c);
    let pod = c.pod(&id).unwrap_or_else(|| panic!());
    // periodSeconds 2: probes at 0, 2000, 4000, ...; the app fails from 5000.
    let changes = vec![
        change(&id, 5_000, AppState::FailingReadiness),
        change(&id, 20_000, AppState::Healthy),
    ];
    assert!(ready_at(pod, &changes, 4_999));
    assert!(
        ready_at(pod, &changes, 9_999),
        "two failures are below failureThreshold 3"
    );
    assert!(
        !ready_at(pod, &changes, 10_000),
        "the third failure (6 s, 8 s, 10 s) makes it NotReady"
    );
    assert!(
        !ready_at(pod, &changes, 21_999),
        "the change at 20 s is seen by the 22 s probe"
    );
    assert!(
        ready_at(pod, &changes, 22_000),
        "successThreshold 1: the first success at 22 s"
    );
    let events = probe_events(pod, &changes, 10_000);
    let fails: Vec<(u64, u32)> = events
        .iter()
        .filter(|e| !e.success)
        .map(|e| (e.at_ms, e.run))
        .collect();
    assert_eq!(fails, vec![(6_000, 1), (8_000, 2), (10_000, 3)]);
    assert!(
        events
            .iter()
            .all(|e| e.success || e.kind == ProbeKind::Readiness),
        "only readiness fails: kuard's readiness toggle leaves /healthy answering"
    );
    assert!(events
        .iter()
        .any(|e| e.kind == ProbeKind::Liveness && e.success && !e.restarted));
}

#[test]
fn endpoint_leaves_the_slice_then_kube_proxy_syncs_after_the_lag() {
    let c = seed();
    let id = first_alpaca(&c);
    let changes = vec![change(&id, 5_000, AppState::FailingReadiness)];
    let timing = Timing {
        slice_delay_ms: 100,
        proxy_delay_ms: 1_000,
    };
    let ready_in = |slices: &[kpv_core::model::EndpointSlice]| {
        slices
            .iter()
            .flat_map(|s| &s.endpoints)
            .find(|e| e.target_pod.as_ref() == Some(&id))
            .map(|e| e.ready)
    };
    let at = |t| controller::snapshot(&c, &changes, timing, t);
    assert_eq!(
        ready_in(&at(10_000).slices),
        Some(true),
        "the controller has not written it yet"
    );
    assert_eq!(
        ready_in(&at(10_100).slices),
        Some(false),
        "slice updated 100 ms later"
    );
    assert_eq!(
        ready_in(&at(10_100).proxy_slices),
        Some(true),
        "kube-proxy has not synced yet"
    );
    assert_eq!(
        ready_in(&at(11_100).proxy_slices),
        Some(false),
        "kube-proxy synced 1 s later"
    );
    assert_eq!(at(10_000).pod_ready.get(&id), Some(&false));
}

#[test]
fn pods_without_probes_are_ready_and_down_apps_fail_every_probe() {
    let c = seed();
    let bandicoot = c
        .pods
        .iter()
        .find(|p| p.id.name.starts_with("bandicoot"))
        .unwrap_or_else(|| panic!());
    assert!(bandicoot.readiness_probe().is_none());
    assert!(
        ready_at(
            bandicoot,
            &[change(&bandicoot.id, 0, AppState::Down)],
            60_000
        ),
        "no probe: the kubelet cannot notice"
    );
    let id = first_alpaca(&c);
    let pod = c.pod(&id).unwrap_or_else(|| panic!());
    // Probes every 2 s with a 1 s timeout: the ones at 2, 4 and 6 s get no
    // answer and fail at 3, 5 and 7 s; the third makes it NotReady.
    let down = [change(&id, 1, AppState::Down)];
    assert!(ready_at(pod, &down, 6_999));
    assert!(!ready_at(pod, &down, 7_000));
}

#[test]
fn slices_resolve_named_ports_and_group_by_port() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  labels: {app: x}\nspec:\n  containers:\n  - name: c\n    ports:\n    - {name: web, containerPort: 8080}\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: b\n  labels: {app: x}\nspec:\n  containers:\n  - name: c\n    ports:\n    - {name: web, containerPort: 9090}\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  selector: {app: x}\n  ports:\n  - {port: 80, targetPort: web}\n";
    let (c, diags) = kpv_core::Code::ALL.parse(yaml);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    let slices = controller::steady_slices(&c);
    assert_eq!(
        slices.len(),
        2,
        "different resolved ports → different slices"
    );
    let mut ports: Vec<u16> = slices.iter().map(|s| s.ports[0].port).collect();
    ports.sort();
    assert_eq!(ports, vec![8080, 9090]);
}

#[test]
fn a_change_at_the_instant_of_a_probe_is_seen_by_the_next_probe() {
    let c = seed();
    let id = first_alpaca(&c);
    let pod = c.pod(&id).unwrap_or_else(|| panic!());
    // Failing at t = 2 s (the second probe's instant): that probe passed,
    // then 4 s, 6 s, 8 s fail. (A change at t = 0 is how the app started:
    // the first probe sees it, see tests/prober.rs.)
    let changes = vec![change(&id, 2_000, AppState::FailingReadiness)];
    assert!(ready_at(pod, &changes, 2_000));
    assert!(ready_at(pod, &changes, 7_999));
    assert!(!ready_at(pod, &changes, 8_000));
}

/// Pods the EndpointSlice controller leaves out (`reconcileByAddressType`,
/// `ShouldPodBeInEndpoints`), and the conditions it writes (`podToEndpoint`).
#[test]
fn pods_without_a_node_or_an_address_are_no_endpoints() {
    let doc = |pnra: bool| {
        format!(
            "apiVersion: v1
kind: Node
metadata: {{name: node-a}}
spec: {{podCIDR: 10.244.1.0/24}}
status: {{addresses: [{{type: InternalIP, address: 192.168.1.1}}]}}
---
apiVersion: v1
kind: Pod
metadata: {{name: web-ok, labels: {{app: web}}}}
spec: {{nodeName: node-a, containers: [{{name: c}}]}}
status: {{podIP: 10.244.1.5, conditions: [{{type: Ready, status: \"True\"}}]}}
---
apiVersion: v1
kind: Pod
metadata: {{name: web-ghost, labels: {{app: web}}}}
spec: {{nodeName: node-gone, containers: [{{name: c}}]}}
status: {{podIP: 10.244.9.10, conditions: [{{type: Ready, status: \"True\"}}]}}
---
apiVersion: v1
kind: Pod
metadata: {{name: web-pending, labels: {{app: web}}}}
spec: {{containers: [{{name: c}}]}}
status: {{phase: Pending, conditions: [{{type: PodScheduled, status: \"False\"}}]}}
---
apiVersion: v1
kind: Pod
metadata: {{name: web-sketch, labels: {{app: web}}}}
spec: {{containers: [{{name: c}}]}}
---
apiVersion: v1
kind: Service
metadata: {{name: web}}
spec:
  clusterIP: 10.96.0.10
  publishNotReadyAddresses: {pnra}
  selector: {{app: web}}
  ports: [{{port: 80}}]
"
        )
    };
    let endpoints = |c: &Cluster| -> Vec<(String, bool, bool)> {
        let mut out: Vec<_> = controller::steady_slices(c)
            .iter()
            .flat_map(|s| s.endpoints.iter())
            .map(|e| {
                let pod = e
                    .target_pod
                    .as_ref()
                    .map(|p| p.name.clone())
                    .unwrap_or_default();
                (pod, e.ready, e.serving)
            })
            .collect();
        out.sort();
        out
    };
    let (c, diags) = kpv_core::Code::ALL.parse(&doc(false));
    assert!(
        diags
            .iter()
            .any(|d| d.message.contains("node `node-gone`") && d.message.contains("skips it")),
        "{diags:#?}"
    );
    let pending = c
        .pods
        .iter()
        .find(|p| p.id.name == "web-pending")
        .expect("pod");
    assert!(
        pending.ips.is_empty() && pending.node_name.is_none(),
        "{pending:?}"
    );
    // A Pod written without status is still placed and addressed.
    let sketch = c
        .pods
        .iter()
        .find(|p| p.id.name == "web-sketch")
        .expect("pod");
    assert!(!sketch.ips.is_empty() && sketch.node_name.is_some());
    assert_eq!(
        endpoints(&c),
        [
            ("web-ok".to_string(), true, true),
            ("web-sketch".to_string(), true, true)
        ]
    );
    // Publishing not-ready addresses keeps the Pod whose Node is gone.
    let (c, _) = kpv_core::Code::ALL.parse(&doc(true));
    let names: Vec<String> = endpoints(&c).into_iter().map(|e| e.0).collect();
    assert_eq!(names, ["web-ghost", "web-ok", "web-sketch"]);
}

#[test]
fn serving_follows_readiness_even_when_not_ready_addresses_are_published() {
    let doc = "apiVersion: v1
kind: Node
metadata: {name: node-a}
spec: {podCIDR: 10.244.1.0/24}
status: {addresses: [{type: InternalIP, address: 192.168.1.1}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, labels: {app: web}}
spec: {nodeName: node-a, containers: [{name: c}]}
status: {podIP: 10.244.1.5, conditions: [{type: Ready, status: \"False\"}]}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  clusterIP: 10.96.0.10
  publishNotReadyAddresses: true
  selector: {app: web}
  ports: [{port: 80}]
";
    let (c, diags) = kpv_core::Code::ALL.parse(doc);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    let slices = controller::steady_slices(&c);
    let e = &slices[0].endpoints[0];
    assert!(e.ready, "published although not ready");
    assert!(!e.serving, "serving is the Pod's own readiness");
}

/// A probe naming a port its container lacks: the kubelet cannot resolve
/// it, so the probe fails every time; said as a warning on the Pod, at the
/// port. A probe naming a port the container has, or a number, passes.
#[test]
fn a_probe_on_a_port_the_container_lacks_fails_and_is_warned_about() {
    let pod = |probe_port: &str, ports: &str| {
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: p}}\nspec:\n  nodeName: n1\n  containers:\n  - name: app\n    ports: {ports}\n    readinessProbe:\n      periodSeconds: 1\n      httpGet: {{path: /ready, port: {probe_port}}}\n"
        )
    };
    let node = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {podCIDR: 10.244.1.0/24}\nstatus: {addresses: [{type: InternalIP, address: 192.168.1.10}]}\n---\n";
    for (port, ports, warned, ready) in [
        ("http", "[{containerPort: 8080}]", true, false),
        (
            "http",
            "[{name: metrics, containerPort: 9090}]",
            true,
            false,
        ),
        ("http", "[{name: http, containerPort: 8080}]", false, true),
        ("8080", "[]", false, true),
    ] {
        let text = format!("{node}{}", pod(port, ports));
        let (c, d) = kpv_core::Code::ALL.parse(&text);
        assert!(!kpv_core::util::diag::has_errors(&d), "{d:#?}");
        let w: Vec<_> = d
            .iter()
            .filter(|d| d.message.contains("does not have"))
            .collect();
        assert_eq!(w.len(), usize::from(warned), "{port} {ports}: {d:#?}");
        if let Some(w) = w.first() {
            assert_eq!(w.object.as_deref(), Some("Pod/default/p"));
            assert_eq!(
                w.field.as_deref(),
                Some("spec.containers[0].readinessProbe.httpGet.port")
            );
            assert_eq!(w.span.map(|s| s.line), Some(17), "the httpGet line");
        }
        let p = &c.pods[0];
        let events = kpv_core::net::controller::probe::probe_events(p, &[], 10_000);
        assert!(!events.is_empty());
        assert_eq!(
            events.last().map(|e| e.ready_after),
            Some(ready),
            "{port} {ports}"
        );
    }
}

/// A pasted cluster is shown settled: from the first instant at which every
/// Pod's readiness, its EndpointSlice and kube-proxy's view all hold what
/// they keep (here: ready at the first probe, 10 s after start, then the
/// slice controller's 100 ms and kube-proxy's 1 s, rounded up to 12 s).
#[test]
fn a_cluster_settles_once_kube_proxy_has_synced_the_last_readiness_change() {
    let yaml = "apiVersion: v1
kind: Node
metadata: {name: n1}
status: {addresses: [{type: InternalIP, address: 192.168.0.2}]}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: web
        ports: [{containerPort: 8080}]
        readinessProbe:
          httpGet: {path: /, port: 8080}
          initialDelaySeconds: 10
          periodSeconds: 5
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80, targetPort: 8080}]}
";
    let (c, diags) = kpv_core::Code::ALL.parse(yaml);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    let timing = Timing::default();
    let settled = controller::settled_ms(&c, timing);
    assert_eq!(settled, 12_000);
    let endpoints_ready = |t: u64| {
        controller::snapshot(&c, &[], timing, t)
            .proxy_slices
            .iter()
            .flat_map(|s| &s.endpoints)
            .filter(|e| e.ready)
            .count()
    };
    assert_eq!(endpoints_ready(settled), 1);
    assert_eq!(endpoints_ready(11_000), 0, "kube-proxy has not synced yet");

    let no_probes = yaml.replace("        readinessProbe:\n          httpGet: {path: /, port: 8080}\n          initialDelaySeconds: 10\n          periodSeconds: 5\n", "");
    let (c, _) = kpv_core::Code::ALL.parse(&no_probes);
    assert_eq!(controller::settled_ms(&c, timing), 0);
}
