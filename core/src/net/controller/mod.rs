//! The cluster's control loops, in simulated time: readiness and liveness
//! probes (the kubelet), the EndpointSlice controller, and the lag before
//! kube-proxy sees a change.
//!
//! Inputs are the parsed [`Cluster`] and a list of [`AppChange`]s (a Pod's app
//! turning healthy, failing its readiness check, or down at a given simulated
//! millisecond). Everything else — probe results, Pod readiness, the
//! EndpointSlices at time t, and what kube-proxy has synced by then — is a pure
//! function of those inputs. Nothing here reads a clock.

pub mod events;
pub mod probe;
pub mod slices;

pub use probe::{
    app_state_at as app_state_at_or_default, app_state_now, probe_events, ready_at, AppChange,
    AppState, ProbeEvent, ProbeKind,
};
pub use slices::compute_slices;

use crate::model::{Cluster, EndpointSlice, NamespacedName};
use serde::Serialize;

/// Lags between the control loops, in simulated milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Timing {
    /// From a Pod's Ready condition changing to the EndpointSlice controller
    /// writing the slice.
    pub slice_delay_ms: u64,
    /// From the slice changing to kube-proxy's next sync writing the rules
    /// (kube-proxy's `minSyncPeriod` is 1 s by default).
    pub proxy_delay_ms: u64,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            slice_delay_ms: 100,
            proxy_delay_ms: 1000,
        }
    }
}

/// The clocks the control loops read at one instant, in simulated
/// milliseconds: the kubelet's (now), the EndpointSlice controller's
/// (`slice_delay_ms` behind) and kube-proxy's (its KubeProxyConfiguration's
/// `minSyncPeriod`, else `proxy_delay_ms`, behind that).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clocks {
    pub now: u64,
    pub slices: u64,
    pub proxy: u64,
}

impl Timing {
    /// The clocks at `t` in `cluster` (whose kube-proxy may set its own lag).
    pub fn clocks(&self, cluster: &Cluster, t: u64) -> Clocks {
        let slices = t.saturating_sub(self.slice_delay_ms);
        let lag = cluster
            .proxy
            .min_sync_period_ms
            .unwrap_or(self.proxy_delay_ms);
        Clocks {
            now: t,
            slices,
            proxy: slices.saturating_sub(lag),
        }
    }
}

/// The cluster's derived state at one simulated instant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    pub time_ms: u64,
    /// Pod readiness as the kubelet reports it now.
    pub pod_ready: PodReady,
    /// EndpointSlices as stored in the API now.
    pub slices: Vec<EndpointSlice>,
    /// EndpointSlices as kube-proxy last synced them (what the rules reflect).
    pub proxy_slices: Vec<EndpointSlice>,
}

/// Readiness by Pod (built in the cluster's Pod order, which is by id).
pub type PodReady = crate::util::vecmap::VecMap<NamespacedName, bool>;

/// Pod readiness at time `t` for every Pod.
pub fn readiness_at(cluster: &Cluster, changes: &[AppChange], t: u64) -> PodReady {
    cluster
        .pods
        .iter()
        .map(|p| (p.id.clone(), ready_at(p, changes, t)))
        .collect()
}

/// Everything derived at time `t`.
pub fn snapshot(cluster: &Cluster, changes: &[AppChange], timing: Timing, t: u64) -> Snapshot {
    let pod_ready = readiness_at(cluster, changes, t);
    let clocks = timing.clocks(cluster, t);
    let slices = compute_slices(cluster, &readiness_at(cluster, changes, clocks.slices));
    let proxy_slices = compute_slices(cluster, &readiness_at(cluster, changes, clocks.proxy));
    Snapshot {
        time_ms: t,
        pod_ready,
        slices,
        proxy_slices,
    }
}

/// When a cluster left alone since its creation has settled: every Pod's
/// readiness has reached the value it keeps, the EndpointSlice controller
/// has written it and kube-proxy has synced it. In simulated milliseconds,
/// rounded up to a whole second; 0 for a cluster without probes. A pasted
/// cluster is shown from here, as a cluster that has been running is.
pub fn settled_ms(cluster: &Cluster, timing: Timing) -> u64 {
    let last_flip = cluster
        .pods
        .iter()
        .filter_map(|pod| {
            let events = probe_events(pod, &[], u64::MAX / 4);
            let mut last = None;
            let mut prev = None;
            for e in &events {
                if prev != Some(e.ready_after) {
                    last = Some(e.at_ms);
                    prev = Some(e.ready_after);
                }
            }
            last
        })
        .max();
    let Some(flip) = last_flip else {
        return 0;
    };
    let lag = cluster
        .proxy
        .min_sync_period_ms
        .unwrap_or(timing.proxy_delay_ms);
    let t = flip
        .saturating_add(timing.slice_delay_ms)
        .saturating_add(lag);
    t.div_ceil(1000).saturating_mul(1000)
}

/// Slices in steady state (every app healthy, long after start): what
/// `kpv rules` shows for a static input.
pub fn steady_slices(cluster: &Cluster) -> Vec<EndpointSlice> {
    compute_slices(cluster, &readiness_at(cluster, &[], u64::MAX / 4))
}
