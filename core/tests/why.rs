//! The cause behind "the Service has no endpoints", one case per cause:
//! which Pods, why each is not an endpoint, and from when kube-proxy's
//! rules will hold it if nothing else changes.

use kpv_core::model::packet::Protocol;
use kpv_core::model::{Cluster, Mode, NamespacedName};
use kpv_core::net::controller::{self, AppChange, AppState, Timing};
use kpv_core::net::modes::Compilers;
use kpv_core::net::trace::{trace, Dest, Origin, Request, Sim, WorldState};
use kpv_core::net::why::{no_endpoints, NoEndpoints, Unready};
use kpv_core::util::choose::Chooser;
use kpv_core::util::diag::has_errors;

const NODE: &str = "apiVersion: v1
kind: Node
metadata: {name: n1}
spec: {podCIDR: 10.244.1.0/24}
status: {addresses: [{type: InternalIP, address: 192.168.0.2}]}
";

/// A Deployment `web` (one replica; `probe` is its container's
/// readinessProbe, `ports` its ports) and a Service `web` at 10.96.0.50:80
/// (`selector` and `target` its selector and targetPort).
fn cluster(probe: &str, ports: &str, selector: &str, target: &str) -> Cluster {
    let yaml = format!(
        "{NODE}---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web}}
spec:
  replicas: 1
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      containers:
      - name: web
        image: web
        ports: {ports}
{probe}---
apiVersion: v1
kind: Service
metadata: {{name: web}}
spec:
  clusterIP: 10.96.0.50
{selector}  ports: [{{port: 80, targetPort: {target}}}]
"
    );
    let (c, diags) = kpv_core::Code::ALL.parse(&yaml);
    assert!(!has_errors(&diags), "{yaml}\n{diags:#?}");
    c
}

const PROBE: &str = "        readinessProbe:
          httpGet: {path: /, port: 8080}
          initialDelaySeconds: 10
          periodSeconds: 5
";
const PORTS: &str = "[{name: http, containerPort: 8080}]";
const SELECT: &str = "  selector: {app: web}\n";

/// The cause of a packet sent at `t` from the node to the Service, if it
/// had no endpoints.
fn cause(c: &Cluster, changes: &[AppChange], t: u64) -> Option<NoEndpoints> {
    let timing = Timing::default();
    let slices = controller::snapshot(c, changes, timing, t).proxy_slices;
    let sim = Sim::new(c, &slices, Mode::Iptables, None, Compilers::ALL);
    let req = Request {
        origin: Origin::Node {
            node: "n1".into(),
            src: "192.168.0.2".parse().unwrap_or_else(|_| panic!("ip")),
        },
        dst: Dest::Ip("10.96.0.50".parse().unwrap_or_else(|_| panic!("ip"))),
        port: 80,
        protocol: Protocol::Tcp,
        src_port: 40000,
        keep_open: false,
    };
    let tr = trace(
        &sim,
        &req,
        &mut WorldState::default(),
        &mut Chooser::new(1),
        t,
    );
    no_endpoints(c, changes, timing, t, &tr)
}

/// The one Pod's cause and the instant kube-proxy will have it.
fn pod_cause(cause: Option<NoEndpoints>) -> (Unready, Option<u64>) {
    match cause {
        Some(NoEndpoints::Pods { pods, .. }) if pods.len() == 1 => {
            (pods[0].why.clone(), pods[0].endpoint_from_ms)
        }
        other => panic!("one Pod's cause: {other:?}"),
    }
}

#[test]
fn each_cause_names_its_objects_and_when_it_changes() {
    let c = cluster(PROBE, PORTS, SELECT, "8080");
    let pod = c.pods[0].id.clone();
    // Before the first probe (initialDelaySeconds 10): Ready at 10 s, in
    // kube-proxy's rules 100 ms + 1 s later.
    assert_eq!(
        pod_cause(cause(&c, &[], 0)),
        (
            Unready::InitialDelay {
                first_probe_ms: 10_000
            },
            Some(11_100)
        )
    );
    // Ready at 10 s, not yet synced at 10.5 s.
    assert_eq!(
        pod_cause(cause(&c, &[], 10_500)),
        (Unready::NotYetSynced, Some(11_600))
    );
    // Settled: delivered, no cause.
    assert_eq!(
        cause(&c, &[], controller::settled_ms(&c, Timing::default())),
        None
    );
    // Its app down from 20 s: failing (3 failures at 5 s) and no end in sight.
    let down = [AppChange {
        at_ms: 20_000,
        pod: pod.clone(),
        state: AppState::Down,
    }];
    assert_eq!(
        pod_cause(cause(&c, &down, 60_000)),
        (
            Unready::ProbeFailing {
                app: AppState::Down
            },
            None
        )
    );
    // Healthy again at 60 s: Ready at the next probe (65 s), synced 1.1 s on.
    let back = [
        down[0].clone(),
        AppChange {
            at_ms: 60_000,
            pod: pod.clone(),
            state: AppState::Healthy,
        },
    ];
    assert_eq!(
        pod_cause(cause(&c, &back, 62_000)),
        (Unready::Recovering, Some(66_100))
    );
}

#[test]
fn a_selector_without_pods_a_missing_named_port_and_no_selector_are_named() {
    let c = cluster("", PORTS, "  selector: {app: wbe}\n", "8080");
    assert_eq!(
        cause(&c, &[], 0),
        Some(NoEndpoints::SelectorMatchesNoPod {
            service: NamespacedName::new("default", "web"),
            selector: "app=wbe".into()
        })
    );
    let c = cluster("", PORTS, SELECT, "metrics");
    assert_eq!(
        pod_cause(cause(&c, &[], 0)),
        (
            Unready::PortMissing {
                port: "metrics".into()
            },
            None
        )
    );
    let c = cluster("", PORTS, "", "8080");
    assert_eq!(
        cause(&c, &[], 0),
        Some(NoEndpoints::NoSelector {
            service: NamespacedName::new("default", "web")
        })
    );
}
