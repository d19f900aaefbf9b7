//! What a learner would see in `kubectl get events` and
//! `kubectl get endpoints --watch` while probes fail and pass: the kubelet's
//! probe failures, each Pod's Ready condition changing, the EndpointSlice
//! controller changing a Service's ready endpoints, and kube-proxy syncing
//! its rules after it — as typed events in simulated time.
//!
//! Derived from the same probe runs and lags as [`super::snapshot`], so the
//! feed never disagrees with the diagram. The words (kubelet's messages
//! included) are the renderer's; nothing here reads a clock.

use super::probe::{probe_events, ProbeKind};
use super::{compute_slices, readiness_at, AppChange, Timing};
use crate::model::{Cluster, NamespacedName, ProbeAction};
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::SocketAddr;

/// What happened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum EventKind {
    /// kubelet's `Warning Unhealthy`: a probe failed (`run` in a row, of
    /// `threshold` before it counts).
    ProbeFailed {
        pod: NamespacedName,
        probe: ProbeKind,
        action: ProbeAction,
        /// The app was down and did not answer: the probe gave up after
        /// its `timeoutSeconds` (rather than hearing 503).
        timed_out: bool,
        run: u32,
        threshold: u32,
    },
    /// A liveness (or startup) failure restarted the container
    /// (`Killing`): its name and which probe failed.
    Restarted {
        pod: NamespacedName,
        container: String,
        probe: ProbeKind,
    },
    /// The Pod's Ready condition changed; `restarts` so far (the
    /// `RESTARTS` column of `kubectl get pods`).
    Ready {
        pod: NamespacedName,
        ready: bool,
        restarts: u32,
    },
    /// A Service's ready endpoints changed in the API (what
    /// `kubectl get endpoints --watch` prints).
    Endpoints {
        service: NamespacedName,
        before: Vec<SocketAddr>,
        after: Vec<SocketAddr>,
    },
    /// kube-proxy synced its rules with the new endpoints.
    ProxySynced {
        service: NamespacedName,
        endpoints: usize,
    },
}

/// One event at a simulated instant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ClusterEvent {
    pub at_ms: u64,
    pub kind: EventKind,
}

/// Ready endpoints (address and first port) per Service, from Pod readiness.
fn ready_endpoints(
    cluster: &Cluster,
    ready: &super::PodReady,
) -> BTreeMap<NamespacedName, Vec<SocketAddr>> {
    let mut out: BTreeMap<NamespacedName, Vec<SocketAddr>> = BTreeMap::new();
    for s in compute_slices(cluster, ready) {
        let svc = NamespacedName::new(s.id.namespace.clone(), s.service_name.clone());
        let port = s.ports.first().map(|p| p.port).unwrap_or(0);
        let e = out.entry(svc).or_default();
        for ep in s.endpoints.iter().filter(|e| e.ready) {
            e.extend(ep.addresses.iter().map(|ip| SocketAddr::new(*ip, port)));
        }
    }
    for v in out.values_mut() {
        crate::util::order::sort(v);
        v.dedup();
    }
    out
}

/// Every event up to `until_ms`, in time order (stable within an instant:
/// probes, readiness, endpoints, syncs).
pub fn events(
    cluster: &Cluster,
    changes: &[AppChange],
    timing: Timing,
    until_ms: u64,
) -> Vec<ClusterEvent> {
    let mut out = Vec::new();
    let mut ready_changes: Vec<u64> = Vec::new();
    for pod in &cluster.pods {
        let mut was_ready = super::ready_at(pod, changes, 0);
        let mut restarts = 0u32;
        for e in probe_events(pod, changes, until_ms) {
            if !e.success {
                if let Some(p) = e.kind.of(pod) {
                    out.push(ClusterEvent {
                        at_ms: e.at_ms,
                        kind: EventKind::ProbeFailed {
                            pod: pod.id.clone(),
                            probe: e.kind,
                            action: p.action.clone(),
                            timed_out: e.timed_out,
                            run: e.run,
                            threshold: p.failure_threshold,
                        },
                    });
                }
            }
            if e.restarted {
                restarts = restarts.saturating_add(1);
                out.push(ClusterEvent {
                    at_ms: e.at_ms,
                    kind: EventKind::Restarted {
                        pod: pod.id.clone(),
                        container: e.kind.container(pod).unwrap_or_default().to_string(),
                        probe: e.kind,
                    },
                });
            }
            if e.ready_after != was_ready {
                was_ready = e.ready_after;
                ready_changes.push(e.at_ms);
                out.push(ClusterEvent {
                    at_ms: e.at_ms,
                    kind: EventKind::Ready {
                        pod: pod.id.clone(),
                        ready: e.ready_after,
                        restarts,
                    },
                });
            }
        }
    }
    // The slice controller writes each readiness change after its lag;
    // kube-proxy syncs after its own.
    crate::util::order::sort(&mut ready_changes);
    ready_changes.dedup();
    let mut before = ready_endpoints(cluster, &readiness_at(cluster, changes, 0));
    for t in ready_changes {
        let at = t + timing.slice_delay_ms;
        if at > until_ms {
            break;
        }
        let now = ready_endpoints(cluster, &readiness_at(cluster, changes, t));
        for (svc, after) in &now {
            let old = before.get(svc).cloned().unwrap_or_default();
            if &old != after {
                out.push(ClusterEvent {
                    at_ms: at,
                    kind: EventKind::Endpoints {
                        service: svc.clone(),
                        before: old,
                        after: after.clone(),
                    },
                });
                let synced = at + timing.proxy_delay_ms;
                if synced <= until_ms {
                    out.push(ClusterEvent {
                        at_ms: synced,
                        kind: EventKind::ProxySynced {
                            service: svc.clone(),
                            endpoints: after.len(),
                        },
                    });
                }
            }
        }
        before = now;
    }
    let rank = |k: &EventKind| match k {
        EventKind::ProbeFailed { .. } | EventKind::Restarted { .. } => 0,
        EventKind::Ready { .. } => 1,
        EventKind::Endpoints { .. } => 2,
        EventKind::ProxySynced { .. } => 3,
    };
    crate::util::order::sort_by_key(&mut out, |e| (e.at_ms, rank(&e.kind)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::controller::AppState;

    const SEED: &str = include_str!("../../../../tests/scenarios/alpaca-bandicoot.yaml");

    #[test]
    fn a_failing_readiness_probe_plays_out_as_kubectl_shows_it_and_back() {
        let (cluster, _) = crate::Code::ALL.parse(SEED);
        let Some(pod) = cluster
            .pods
            .iter()
            .find(|p| p.id.name.starts_with("alpaca") && p.readiness_probe().is_some())
        else {
            panic!("no alpaca Pod with a readiness probe")
        };
        let timing = Timing::default();
        let changes = vec![
            AppChange {
                at_ms: 30_000,
                pod: pod.id.clone(),
                state: AppState::FailingReadiness,
            },
            AppChange {
                at_ms: 90_000,
                pod: pod.id.clone(),
                state: AppState::Healthy,
            },
        ];
        let ev = events(&cluster, &changes, timing, 150_000);
        assert!(
            ev.windows(2).all(|w| w[0].at_ms <= w[1].at_ms),
            "in time order"
        );
        // Failures counted up to the threshold, then NotReady, then the
        // endpoint leaves and kube-proxy syncs, in that order.
        let failed: Vec<u32> = ev
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::ProbeFailed {
                    pod: p,
                    run,
                    timed_out,
                    ..
                } if p == &pod.id => {
                    assert!(!timed_out, "503, not a timeout");
                    Some(*run)
                }
                _ => None,
            })
            .collect();
        assert!(failed.len() >= 3 && failed[..3] == [1, 2, 3], "{failed:?}");
        let pos = |f: &dyn Fn(&EventKind) -> bool| ev.iter().position(|e| f(&e.kind));
        let not_ready =
            pos(&|k| matches!(k, EventKind::Ready { pod: p, ready: false, .. } if p == &pod.id));
        let left = pos(
            &|k| matches!(k, EventKind::Endpoints { before, after, .. } if after.len() + 1 == before.len()),
        );
        let synced = pos(&|k| matches!(k, EventKind::ProxySynced { .. }));
        let back =
            pos(&|k| matches!(k, EventKind::Ready { pod: p, ready: true, .. } if p == &pod.id));
        let returned = pos(
            &|k| matches!(k, EventKind::Endpoints { before, after, .. } if after.len() == before.len() + 1),
        );
        let (Some(nr), Some(l), Some(s), Some(b), Some(r)) =
            (not_ready, left, synced, back, returned)
        else {
            panic!("missing events: {ev:#?}")
        };
        assert!(nr < l && l < s && s < b && b < r, "{ev:#?}");
        assert_eq!(
            ev[l].at_ms,
            ev[nr].at_ms + timing.slice_delay_ms,
            "the slice follows readiness after its lag"
        );
        // Nothing happens without a change.
        assert!(events(&cluster, &[], timing, 150_000)
            .iter()
            .all(|e| !matches!(e.kind, EventKind::Endpoints { .. })));
    }

    /// A down app does not answer: each failure is told as a timeout, at
    /// the probe's start plus its `timeoutSeconds` (the seed's readiness
    /// probe: every 2 s, 1 s timeout), not as a 503.
    #[test]
    fn an_app_taken_down_times_out_rather_than_answering_503() {
        let (cluster, _) = crate::Code::ALL.parse(SEED);
        let Some(pod) = cluster.pods.iter().find(|p| p.readiness_probe().is_some()) else {
            panic!("no Pod with a readiness probe")
        };
        let changes = vec![AppChange {
            at_ms: 20_000,
            pod: pod.id.clone(),
            state: AppState::Down,
        }];
        let ev = events(&cluster, &changes, Timing::default(), 60_000);
        let failed: Vec<(u64, bool)> = ev
            .iter()
            .filter_map(|e| match e.kind {
                EventKind::ProbeFailed {
                    timed_out,
                    probe: ProbeKind::Readiness,
                    ..
                } => Some((e.at_ms, timed_out)),
                _ => None,
            })
            .collect();
        assert!(!failed.is_empty());
        let p = pod
            .readiness_probe()
            .map(|p| (p.period_seconds, p.timeout_seconds));
        let (period, timeout) = p.unwrap_or_default();
        for (at, timed_out) in failed {
            assert!(timed_out, "{at}");
            assert_eq!(
                at % (u64::from(period) * 1000),
                u64::from(timeout) * 1000 % (u64::from(period) * 1000),
                "{at}: a tick plus the timeout"
            );
        }
    }
}
