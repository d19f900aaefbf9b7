//! Why a Service has no endpoints: the concrete cause, the objects it
//! concerns, and when it will change, for a verdict that says more than
//! "the Service has no endpoints".
//!
//! Reads the cluster and the controllers' simulated time (the same inputs
//! as [`super::controller::snapshot`]); decides nothing the controllers do
//! not already decide, and words nothing: the CLI and the web app render
//! [`NoEndpoints`] in their own words.

use super::controller::{
    app_state_at_or_default, probe_events, ready_at, AppChange, AppState, Timing,
};
use super::trace::{Outcome, Trace};
use crate::model::{selects, Cluster, NamespacedName, Pod, PortRef, ReportedReady, Service};
use crate::net::modes::DropReason;
use std::net::SocketAddr;

/// Why one Pod the Service selects is not one of its ready endpoints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unready {
    /// Not scheduled to a node (no room, or no node it tolerates).
    NotScheduled,
    /// Finished (a Job's Pod, `restartPolicy: Never` done): no address.
    Finished,
    /// Being deleted: it leaves the endpoints.
    Terminating,
    /// Its first readiness probe runs at `first_probe_ms`
    /// (`initialDelaySeconds` not over yet).
    InitialDelay { first_probe_ms: u64 },
    /// Its readiness probe fails: the app is `app` (failing its check, or
    /// down).
    ProbeFailing { app: AppState },
    /// Its readiness probe names a port its container does not declare: it
    /// can never pass.
    ProbePortMissing { port: String },
    /// Its app answers again; readiness returns after `successThreshold`
    /// passing probes.
    Recovering,
    /// Its status says not Ready and nothing here will change that.
    ReportedNotReady,
    /// Ready, but the Service's named targetPort is not among its
    /// containers' ports: it is no endpoint of this port.
    PortMissing { port: String },
    /// Ready now; the EndpointSlice controller and kube-proxy have not yet
    /// caught up.
    NotYetSynced,
}

/// One Pod and why it is not an endpoint, with when kube-proxy will have it
/// (if nothing else changes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodWhy {
    pub pod: NamespacedName,
    pub why: Unready,
    /// The simulated instant from which kube-proxy's rules hold this Pod,
    /// if that will happen without anyone acting.
    pub endpoint_from_ms: Option<u64>,
}

/// The cause behind a "no endpoints" verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoEndpoints {
    /// A Service without selector whose endpoints nobody wrote.
    NoSelector { service: NamespacedName },
    /// The selector matches no Pod in the Service's namespace.
    SelectorMatchesNoPod {
        service: NamespacedName,
        selector: String,
    },
    /// Pods match; each is listed with why it is not an endpoint.
    Pods {
        service: NamespacedName,
        pods: Vec<PodWhy>,
    },
}

/// How far ahead to look for a Pod becoming ready (ten simulated minutes).
const HORIZON_MS: u64 = 600_000;

/// The cause, when `trace` ended because its Service had no endpoints; `t`
/// is the simulated instant it was sent at and `changes` the apps' changes
/// so far.
pub fn no_endpoints(
    cluster: &Cluster,
    changes: &[AppChange],
    timing: Timing,
    t: u64,
    trace: &Trace,
) -> Option<NoEndpoints> {
    let (Outcome::Rejected { reason } | Outcome::Dropped { reason }) = &trace.outcome else {
        return None;
    };
    if *reason != DropReason::NoEndpoints {
        return None;
    }
    let dst = trace.hops.iter().rev().map(|h| h.before.dst).next()?;
    let (svc, target) = service_at(cluster, dst)?;
    Some(explain(cluster, changes, timing, t, svc, target))
}

/// The Service (and the targetPort of its port) that `dst` addresses: a
/// cluster, external or load-balancer address with its port, or a NodePort.
pub fn service_at(cluster: &Cluster, dst: SocketAddr) -> Option<(&Service, &PortRef)> {
    let on_node = cluster
        .nodes
        .iter()
        .any(|n| n.addresses.iter().any(|(_, ip)| *ip == dst.ip()));
    cluster.services.iter().find_map(|s| {
        let addressed = s
            .cluster_ips
            .iter()
            .chain(&s.external_ips)
            .chain(s.load_balancer_addresses())
            .any(|ip| *ip == dst.ip());
        s.ports
            .iter()
            .find(|p| {
                (addressed && p.port == dst.port())
                    || (p.node_port == Some(dst.port()) && (on_node || !addressed))
            })
            .map(|p| (s, &p.target_port))
    })
}

fn explain(
    cluster: &Cluster,
    changes: &[AppChange],
    timing: Timing,
    t: u64,
    svc: &Service,
    target: &PortRef,
) -> NoEndpoints {
    let service = svc.id.clone();
    let Some(selector) = &svc.selector else {
        return NoEndpoints::NoSelector { service };
    };
    let pods: Vec<&Pod> = cluster
        .pods
        .iter()
        .filter(|p| p.id.namespace == svc.id.namespace && selects(selector, &p.labels))
        .collect();
    if pods.is_empty() {
        let selector = selector
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        return NoEndpoints::SelectorMatchesNoPod { service, selector };
    }
    let lag = timing.slice_delay_ms.saturating_add(
        cluster
            .proxy
            .min_sync_period_ms
            .unwrap_or(timing.proxy_delay_ms),
    );
    let pods = pods
        .into_iter()
        .map(|pod| pod_why(pod, changes, t, lag, svc, target))
        .collect();
    NoEndpoints::Pods { service, pods }
}

fn pod_why(
    pod: &Pod,
    changes: &[AppChange],
    t: u64,
    lag: u64,
    svc: &Service,
    target: &PortRef,
) -> PodWhy {
    let at = |why, ready: Option<u64>| PodWhy {
        pod: pod.id.clone(),
        why,
        endpoint_from_ms: ready.map(|r| r.saturating_add(lag)),
    };
    if pod.pending {
        return at(Unready::NotScheduled, None);
    }
    if pod.finished || pod.ips.is_empty() {
        return at(Unready::Finished, None);
    }
    if pod.terminating {
        return at(Unready::Terminating, None);
    }
    let protocol = svc.ports.first().map(|p| p.protocol).unwrap_or_default();
    if let PortRef::Name(name) = target {
        if pod.resolve_port(target, protocol).is_none() {
            return at(Unready::PortMissing { port: name.clone() }, None);
        }
    }
    let events = probe_events(pod, changes, t.saturating_add(HORIZON_MS));
    let ready_now = events.iter().rfind(|e| e.at_ms <= t).map(|e| e.ready_after);
    if ready_at(pod, changes, t) {
        return at(Unready::NotYetSynced, Some(t));
    }
    let next_ready = events
        .iter()
        .find(|e| e.at_ms > t && e.ready_after)
        .map(|e| e.at_ms);
    let Some(probe) = pod.readiness_probe() else {
        return at(Unready::ReportedNotReady, None);
    };
    if let Some(port) = pod.containers.iter().find_map(|c| {
        c.readiness_probe
            .as_ref()
            .and_then(|p| p.unresolved_port(c))
    }) {
        return at(
            Unready::ProbePortMissing {
                port: port.to_string(),
            },
            None,
        );
    }
    let first_probe_ms = crate::net::controller::probe::first_probe_ms(probe);
    if ready_now.is_none() && pod.reported_ready != ReportedReady::Ready && t < first_probe_ms {
        return at(Unready::InitialDelay { first_probe_ms }, next_ready);
    }
    let app = app_state_at_or_default(&pod.id, changes, t);
    match app {
        // A liveness failure restarts the container: Ready again once the
        // new one passes readiness.
        AppState::Healthy | AppState::FailingLiveness => at(Unready::Recovering, next_ready),
        _ => at(Unready::ProbeFailing { app }, None),
    }
}
