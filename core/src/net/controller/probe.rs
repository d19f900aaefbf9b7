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
//! again. An app that is down does not answer: each probe of it fails when
//! its `timeoutSeconds` ends, and a worker whose probe outlasts its period
//! starts the next one as soon as it ends.

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
    /// Not answering at all: connections time out, and every probe fails
    /// when its `timeoutSeconds` ends.
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
    /// The app did not answer: the probe gave up after `timeoutSeconds`
    /// (when `at_ms` is).
    pub timed_out: bool,
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
#[derive(Default, Clone, Copy)]
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

/// Every probe run of `pod` up to `until_ms`, in the order their results
/// came in, with readiness.
///
/// A startup probe runs first; until it succeeds readiness and liveness
/// are not probed and the Pod is not Ready. A liveness failure past its
/// threshold (or a startup failure past its own) restarts the container:
/// not Ready until its probes pass again, startup first.
///
/// An app that is down does not answer: each probe of it fails
/// `timeoutSeconds` after it started (the kubelet's client gives up then),
/// and its result counts from that moment. A worker waits for its probe:
/// a tick that comes while one is running is kept (one at most) and the
/// next probe starts as soon as the running one ends, as Go's ticker
/// delivers it to the kubelet's worker loop.
///
/// Runs are bounded: at most 100 000 probe runs are simulated per Pod.
pub fn probe_events(pod: &Pod, changes: &[AppChange], until_ms: u64) -> Vec<ProbeEvent> {
    let until = until_ms.min(horizon(pod, changes));
    let mut sim = Prober::new(pod, changes);
    // Each kind's worker: its probe, its next tick, and the run in flight.
    let mut workers: Vec<Worker> = KINDS
        .iter()
        .filter_map(|&kind| kind.of(pod).map(|p| Worker::new(kind, p)))
        .collect();
    let mut runs = 0usize;
    loop {
        // The next thing to happen: a result coming in (before a start at
        // the same instant), else a probe starting; kinds in KINDS order.
        let done = workers
            .iter()
            .enumerate()
            .filter_map(|(i, w)| w.flight.map(|f| (f.done, i)))
            .min();
        let start = workers
            .iter()
            .enumerate()
            .filter(|(_, w)| w.flight.is_none())
            .map(|(i, w)| (w.next, i))
            .min();
        match (done, start) {
            (Some((t, i)), s) if t <= until && s.is_none_or(|(st, _)| t <= st) => {
                let w = &mut workers[i];
                if let Some(f) = w.flight.take() {
                    w.ended(t);
                    // A run that probed a container restarted since then
                    // counts for nothing.
                    if sim.restarted_at.is_none_or(|r| f.start >= r) {
                        sim.finish(w.kind, w.probe, f, t);
                    }
                }
            }
            (_, Some((t, i))) if t <= until && runs < 100_000 => {
                runs += 1;
                let w = &mut workers[i];
                w.started(t);
                w.flight = sim.start(w.kind, w.probe, t);
            }
            _ => break,
        }
    }
    sim.out
}

const KINDS: [ProbeKind; 3] = [
    ProbeKind::Startup,
    ProbeKind::Liveness,
    ProbeKind::Readiness,
];

/// The time after which nothing can change any more: past the last app
/// change, each kind settles within its delay and (threshold + 2) periods
/// plus its timeout, a liveness restart sets readiness going again (so the
/// kinds add up), and a startup probe holds the others back.
fn horizon(pod: &Pod, changes: &[AppChange]) -> u64 {
    let last_change = changes
        .iter()
        .filter(|c| c.pod == pod.id)
        .map(|c| c.at_ms)
        .max()
        .unwrap_or(0);
    let settle: u64 = KINDS
        .iter()
        .filter_map(|k| k.of(pod))
        .map(|p| {
            let runs = u64::from(p.failure_threshold.max(p.success_threshold)) + 2;
            (u64::from(p.initial_delay_seconds)
                + runs * u64::from(p.period_seconds.max(p.timeout_seconds).max(1))
                + u64::from(p.timeout_seconds))
                * 1000
        })
        .sum();
    let held = ProbeKind::Startup.of(pod).map_or(0, |s| {
        (u64::from(s.initial_delay_seconds)
            + (u64::from(s.failure_threshold) + 1)
                * u64::from(s.period_seconds.max(s.timeout_seconds).max(1)))
            * 1000
    });
    last_change.saturating_add(settle.saturating_add(held))
}

/// One kind's worker: ticks every period from its first probe.
struct Worker<'a> {
    kind: ProbeKind,
    probe: &'a Probe,
    first: u64,
    period: u64,
    /// When its next probe starts: a tick, or the end of a run that a
    /// tick came during.
    next: u64,
    flight: Option<Flight>,
}

impl<'a> Worker<'a> {
    fn new(kind: ProbeKind, probe: &'a Probe) -> Worker<'a> {
        let first = first_probe_ms(probe);
        Worker {
            kind,
            probe,
            first,
            period: u64::from(probe.period_seconds.max(1)) * 1000,
            next: first,
            flight: None,
        }
    }

    /// A probe started at `t`: the next tick is the first after it.
    fn started(&mut self, t: u64) {
        let k = t.saturating_sub(self.first) / self.period;
        self.next = self
            .first
            .saturating_add(k.saturating_add(1).saturating_mul(self.period));
    }

    /// The run in flight ended at `t`: a tick that came meanwhile was kept,
    /// and the next probe starts at once.
    fn ended(&mut self, t: u64) {
        self.next = self.next.max(t);
    }
}

/// A probe run started at `start` whose result comes at `done`.
#[derive(Clone, Copy)]
struct Flight {
    start: u64,
    done: u64,
    ok: bool,
    timed_out: bool,
}

/// What the kubelet's workers for one Pod know: the results so far.
struct Prober<'a> {
    pod: &'a Pod,
    changes: &'a [AppChange],
    has_readiness: bool,
    has_startup: bool,
    started: bool,
    ready: bool,
    runs: [Run; 3],
    /// The last restart: a state it clears, set at or before it, is gone.
    restarted_at: Option<u64>,
    out: Vec<ProbeEvent>,
}

impl<'a> Prober<'a> {
    fn new(pod: &'a Pod, changes: &'a [AppChange]) -> Prober<'a> {
        let has_startup = ProbeKind::Startup.of(pod).is_some();
        let has_readiness = pod.readiness_probe().is_some();
        Prober {
            pod,
            changes,
            has_readiness,
            has_startup,
            started: !has_startup,
            ready: match pod.reported_ready {
                ReportedReady::Ready => true,
                ReportedReady::NotReady => false,
                ReportedReady::Unknown => !has_readiness && !has_startup,
            },
            runs: Default::default(),
            restarted_at: None,
            out: Vec::new(),
        }
    }

    /// A probe of `kind` starts at `t`: the run in flight, or `None` when
    /// the worker skips it (startup not over, or over for a startup probe).
    /// A result the app gives at once comes in at once.
    fn start(&mut self, kind: ProbeKind, p: &Probe, t: u64) -> Option<Flight> {
        if (kind == ProbeKind::Startup) == self.started {
            return None;
        }
        // A probe at t sees the app as it was just before t (a change made
        // at the very instant of a probe is noticed by the next one); the
        // first probe at the container's start sees how it started.
        let seen = self
            .changes
            .iter()
            .filter(|c| c.pod == self.pod.id && (c.at_ms < t || c.at_ms == 0))
            .max_by_key(|c| c.at_ms);
        let seen = match (seen, self.restarted_at) {
            // A restart since it was set: the new process is healthy.
            (Some(c), Some(r)) if c.state.cleared_by_restart() && c.at_ms <= r => AppState::Healthy,
            (c, _) => c.map(|c| c.state).unwrap_or_default(),
        };
        let timed_out = !seen.answers_traffic();
        let ok = !never_passes(self.pod, kind) && probe_ok(kind, seen);
        let wait = if timed_out {
            u64::from(p.timeout_seconds.max(1)) * 1000
        } else {
            0
        };
        let flight = Flight {
            start: t,
            done: t.saturating_add(wait),
            ok,
            timed_out,
        };
        if wait == 0 {
            self.finish(kind, p, flight, t);
            return None;
        }
        Some(flight)
    }

    /// The result of a run comes in at `t`.
    fn finish(&mut self, kind: ProbeKind, p: &Probe, f: Flight, t: u64) {
        let ok = f.ok;
        let slot = match kind {
            ProbeKind::Startup => 0,
            ProbeKind::Liveness => 1,
            ProbeKind::Readiness => 2,
        };
        let run = self.runs[slot].record(ok);
        let mut restarted = false;
        match kind {
            ProbeKind::Readiness => {
                if ok && run >= p.success_threshold {
                    self.ready = true;
                }
                if !ok && run >= p.failure_threshold {
                    self.ready = false;
                }
            }
            ProbeKind::Liveness | ProbeKind::Startup => {
                if kind == ProbeKind::Startup && ok {
                    self.started = true;
                    self.runs[0].reset();
                    if !self.has_readiness {
                        self.ready = true;
                    }
                }
                if !ok && run >= p.failure_threshold {
                    // Restarted: the new container is probed afresh, and
                    // is not Ready until its probes pass again.
                    restarted = true;
                    self.restarted_at = Some(t);
                    for r in &mut self.runs {
                        r.reset();
                    }
                    self.started = !self.has_startup;
                    if self.has_readiness || !self.started {
                        self.ready = false;
                    }
                }
            }
        }
        self.out.push(ProbeEvent {
            at_ms: t,
            pod: self.pod.id.clone(),
            kind,
            success: ok,
            run,
            ready_after: self.ready,
            restarted,
            timed_out: f.timed_out,
        });
    }
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
