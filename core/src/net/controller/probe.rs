//! Readiness and liveness probes as the kubelet runs them, in simulated time.
//!
//! The kubelet's default probe worker ticks every `periodSeconds` from the
//! container's start and skips the ticks before `initialDelaySeconds`: a
//! probe runs at each multiple of the period from the first one at or past
//! the initial delay (the `MutableContainerProbes` worker, alpha, would
//! start at the delay itself). A probe sees the app as it is at its own
//! instant, except that a change made at the very instant of a later probe
//! is noticed by the next one (so a click never races a probe). Readiness starts
//! as failed; `successThreshold` consecutive successes make the Pod Ready,
//! `failureThreshold` consecutive failures make it NotReady (kubelet's prober
//! worker keeps the previous result while a run is below its threshold).
//! Liveness failing `failureThreshold` times restarts the container, which
//! makes it NotReady until readiness succeeds again. A restart starts a new
//! process: an app whose liveness check failed (kuard's liveness toggle)
//! comes back healthy, while an app that is down stays down and restarts
//! again.

use crate::model::{NamespacedName, Pod, Probe, ReportedReady};
use serde::{Deserialize, Serialize};

/// What a Pod's application is doing (set by the user, independently of what
/// the probes have noticed yet).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AppState {
    /// Serving and answering its readiness check.
    #[default]
    Healthy,
    /// Serving traffic but its readiness check fails (kuard's readiness toggle).
    FailingReadiness,
    /// Not answering at all: connections time out, every probe fails.
    Down,
    /// Serving traffic and ready, but its liveness check fails (kuard's
    /// liveness toggle): the kubelet restarts the container, and the new
    /// process is healthy.
    FailingLiveness,
}

impl AppState {
    /// Every state, in the order share links number them.
    pub const ALL: [AppState; 4] = [
        AppState::Healthy,
        AppState::FailingReadiness,
        AppState::Down,
        AppState::FailingLiveness,
    ];

    /// The state's name in share links and JSON (serde's spelling).
    pub fn as_str(self) -> &'static str {
        match self {
            AppState::Healthy => "healthy",
            AppState::FailingReadiness => "failing-readiness",
            AppState::Down => "down",
            AppState::FailingLiveness => "failing-liveness",
        }
    }

    pub fn answers_traffic(self) -> bool {
        !matches!(self, AppState::Down)
    }

    /// Whether a new container (after a restart) starts over healthy.
    fn cleared_by_restart(self) -> bool {
        self == AppState::FailingLiveness
    }
}

/// From `at_ms` on, `pod`'s app is in `state`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct AppChange {
    pub at_ms: u64,
    pub pod: NamespacedName,
    pub state: AppState,
}

impl AppChange {
    /// A change a person makes while the clock shows `now_ms`. A probe at t
    /// sees changes at t, and a change at 0 is how the app started; a person
    /// acts after the instant they watch, so a click at 0 is placed at 1 ms,
    /// after the first probe.
    pub fn made_at(now_ms: u64, pod: NamespacedName, state: AppState) -> AppChange {
        AppChange {
            at_ms: now_ms.max(1),
            pod,
            state,
        }
    }
}

/// The app state of `pod` at time `t`.
pub fn app_state_at(pod: &NamespacedName, changes: &[AppChange], t: u64) -> AppState {
    changes
        .iter()
        .filter(|c| &c.pod == pod && c.at_ms <= t)
        .max_by_key(|c| c.at_ms)
        .map(|c| c.state)
        .unwrap_or_default()
}

/// `pod`'s app at `t` as it is rather than as last set: a restart after a
/// state that restarts clear (a failing liveness check) started a healthy
/// process.
pub fn app_state_now(pod: &Pod, changes: &[AppChange], t: u64) -> AppState {
    let last = changes
        .iter()
        .filter(|c| c.pod == pod.id && c.at_ms <= t)
        .max_by_key(|c| c.at_ms);
    match last {
        Some(c)
            if c.state.cleared_by_restart()
                && probe_events(pod, changes, t)
                    .iter()
                    .any(|e| e.restarted && e.at_ms > c.at_ms) =>
        {
            AppState::Healthy
        }
        c => c.map(|c| c.state).unwrap_or_default(),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ProbeKind {
    Readiness,
    Liveness,
    /// Runs first: until it succeeds the others are not run.
    Startup,
}

impl ProbeKind {
    /// `pod`'s probe of this kind (the first container's that has one).
    pub fn of(self, pod: &Pod) -> Option<&Probe> {
        pod.containers.iter().find_map(|c| match self {
            ProbeKind::Readiness => c.readiness_probe.as_ref(),
            ProbeKind::Liveness => c.liveness_probe.as_ref(),
            ProbeKind::Startup => c.startup_probe.as_ref(),
        })
    }

    /// The container whose probe of this kind runs.
    pub fn container(self, pod: &Pod) -> Option<&str> {
        pod.containers
            .iter()
            .find(|c| {
                match self {
                    ProbeKind::Readiness => c.readiness_probe.as_ref(),
                    ProbeKind::Liveness => c.liveness_probe.as_ref(),
                    ProbeKind::Startup => c.startup_probe.as_ref(),
                }
                .is_some()
            })
            .map(|c| c.name.as_str())
    }
}

/// One probe run and what it changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ProbeEvent {
    pub at_ms: u64,
    pub pod: NamespacedName,
    pub kind: ProbeKind,
    pub success: bool,
    /// Consecutive results of this kind so far (1 = first of a run).
    pub run: u32,
    /// Pod readiness after this probe.
    pub ready_after: bool,
    /// A liveness (or startup) failure that restarted the container.
    pub restarted: bool,
}

fn probe_ok(kind: ProbeKind, state: AppState) -> bool {
    match kind {
        ProbeKind::Readiness => matches!(state, AppState::Healthy | AppState::FailingLiveness),
        ProbeKind::Liveness => matches!(state, AppState::Healthy | AppState::FailingReadiness),
        // A startup probe asks whether the app is up.
        ProbeKind::Startup => state != AppState::Down,
    }
}

/// Whether `pod`'s probe of `kind` names a port its container lacks.
fn never_passes(pod: &Pod, kind: ProbeKind) -> bool {
    pod.containers.iter().any(|c| {
        let p = match kind {
            ProbeKind::Readiness => c.readiness_probe.as_ref(),
            ProbeKind::Liveness => c.liveness_probe.as_ref(),
            ProbeKind::Startup => c.startup_probe.as_ref(),
        };
        p.is_some_and(|p| p.unresolved_port(c).is_some())
    })
}

/// Consecutive results of one probe kind, as the kubelet's worker counts
/// them (`resultRun`).
#[derive(Default)]
struct Run {
    last: Option<bool>,
    count: u32,
}

impl Run {
    fn record(&mut self, ok: bool) -> u32 {
        self.count = if self.last == Some(ok) {
            self.count + 1
        } else {
            1
        };
        self.last = Some(ok);
        self.count
    }

    fn reset(&mut self) {
        *self = Run::default();
    }
}

/// When the default worker first runs probe `p`: the first multiple of its
/// period at or past its initial delay (ms from the container's start).
pub fn first_probe_ms(p: &Probe) -> u64 {
    let period = u64::from(p.period_seconds.max(1)) * 1000;
    (u64::from(p.initial_delay_seconds) * 1000).div_ceil(period) * period
}

fn times(p: &Probe, until: u64) -> impl Iterator<Item = u64> + '_ {
    let period = (p.period_seconds.max(1)) as u64 * 1000;
    let start = first_probe_ms(p);
    (0u64..)
        .map(move |k| start + k * period)
        .take_while(move |&t| t <= until)
}

/// Every probe run of `pod` up to `until_ms`, in time order, with readiness.
///
/// A startup probe runs first; until it succeeds readiness and liveness
/// are not probed and the Pod is not Ready. A liveness failure past its
/// threshold (or a startup failure past its own) restarts the container:
/// not Ready until its probes pass again, startup first.
///
/// Runs are bounded: at most 100 000 probe runs are simulated per Pod.
pub fn probe_events(pod: &Pod, changes: &[AppChange], until_ms: u64) -> Vec<ProbeEvent> {
    let readiness = pod.readiness_probe();
    let startup = ProbeKind::Startup.of(pod);
    let mut runs: Vec<(u64, ProbeKind, &Probe)> = Vec::new();
    // The horizon after which nothing can change any more: past the last app
    // change, readiness settles within (threshold × period).
    let last_change = changes
        .iter()
        .filter(|c| c.pod == pod.id)
        .map(|c| c.at_ms)
        .max()
        .unwrap_or(0);
    const KINDS: [ProbeKind; 3] = [
        ProbeKind::Startup,
        ProbeKind::Liveness,
        ProbeKind::Readiness,
    ];
    // Each kind settles within its delay and (threshold + 2) periods, and a
    // liveness restart sets readiness going again: the horizon adds them up.
    let settle: u64 = KINDS
        .iter()
        .filter_map(|k| k.of(pod))
        .map(|p| {
            (u64::from(p.initial_delay_seconds)
                + (u64::from(p.failure_threshold.max(p.success_threshold)) + 2)
                    * u64::from(p.period_seconds.max(1)))
                * 1000
        })
        .sum();
    // A startup probe holds the others back: their horizon is past its own.
    let held = startup.map_or(0, |s| {
        (u64::from(s.initial_delay_seconds)
            + (u64::from(s.failure_threshold) + 1) * u64::from(s.period_seconds.max(1)))
            * 1000
    });
    let until = until_ms.min(last_change.saturating_add(settle + held));
    for kind in KINDS {
        if let Some(p) = kind.of(pod) {
            runs.extend(times(p, until).take(100_000).map(|t| (t, kind, p)));
        }
    }
    let rank = |k: ProbeKind| match k {
        ProbeKind::Startup => 0,
        ProbeKind::Liveness => 1,
        ProbeKind::Readiness => 2,
    };
    crate::util::order::sort_by_key(&mut runs, |(t, k, _)| (*t, rank(*k)));
    let mut started = startup.is_none();
    let mut ready = match pod.reported_ready {
        ReportedReady::Ready => true,
        ReportedReady::NotReady => false,
        ReportedReady::Unknown => readiness.is_none() && started,
    };
    let (mut r_run, mut l_run, mut s_run) = (Run::default(), Run::default(), Run::default());
    // The last restart: a state it clears, set at or before it, is gone.
    let mut restarted_at: Option<u64> = None;
    let mut out = Vec::with_capacity(runs.len());
    for (t, kind, p) in runs {
        if kind != ProbeKind::Startup && !started {
            continue;
        }
        if kind == ProbeKind::Startup && started {
            continue;
        }
        // A probe at t sees the app as it was just before t (a change made
        // at the very instant of a probe is noticed by the next one); the
        // first probe at the container's start sees how it started.
        let seen = changes
            .iter()
            .filter(|c| c.pod == pod.id && (c.at_ms < t || c.at_ms == 0))
            .max_by_key(|c| c.at_ms);
        let seen = match (seen, restarted_at) {
            // A restart since it was set: the new process is healthy.
            (Some(c), Some(r)) if c.state.cleared_by_restart() && c.at_ms <= r => AppState::Healthy,
            (c, _) => c.map(|c| c.state).unwrap_or_default(),
        };
        let ok = !never_passes(pod, kind) && probe_ok(kind, seen);
        let mut restarted = false;
        let run = match kind {
            ProbeKind::Readiness => {
                let run = r_run.record(ok);
                if ok && run >= p.success_threshold {
                    ready = true;
                }
                if !ok && run >= p.failure_threshold {
                    ready = false;
                }
                run
            }
            ProbeKind::Liveness | ProbeKind::Startup => {
                let counter = if kind == ProbeKind::Startup {
                    &mut s_run
                } else {
                    &mut l_run
                };
                let run = counter.record(ok);
                if kind == ProbeKind::Startup && ok {
                    started = true;
                    s_run.reset();
                    if readiness.is_none() {
                        ready = true;
                    }
                }
                if !ok && run >= p.failure_threshold {
                    // Restarted: the new container is probed afresh, and
                    // is not Ready until its probes pass again.
                    restarted = true;
                    restarted_at = Some(t);
                    for r in [&mut r_run, &mut l_run, &mut s_run] {
                        r.reset();
                    }
                    started = startup.is_none();
                    if readiness.is_some() || !started {
                        ready = false;
                    }
                }
                run
            }
        };
        out.push(ProbeEvent {
            at_ms: t,
            pod: pod.id.clone(),
            kind,
            success: ok,
            run,
            ready_after: ready,
            restarted,
        });
    }
    out
}

/// Is `pod` Ready at time `t`?
pub fn ready_at(pod: &Pod, changes: &[AppChange], t: u64) -> bool {
    if pod.finished || pod.ips.is_empty() {
        return false;
    }
    let initial = match pod.reported_ready {
        ReportedReady::Ready => true,
        ReportedReady::NotReady => false,
        ReportedReady::Unknown => {
            pod.readiness_probe().is_none() && ProbeKind::Startup.of(pod).is_none()
        }
    };
    let has_probes = pod.containers.iter().any(|c| {
        c.readiness_probe.is_some() || c.liveness_probe.is_some() || c.startup_probe.is_some()
    });
    if !has_probes {
        return initial;
    }
    probe_events(pod, changes, t)
        .last()
        .map(|e| e.ready_after)
        .unwrap_or(initial)
}
