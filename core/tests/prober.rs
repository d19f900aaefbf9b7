//! The kubelet's prober worker, checked against its own tests
//! (`pkg/kubelet/prober/worker_test.go`): each test's sequence of probe
//! results, and the result the worker holds after each probe, restated as
//! app states at each probe of a one-second period. Also the default
//! worker's schedule (ticks every period from the container's start, none
//! before the initial delay) and the first probe seeing an app that fails
//! from its start.

use kpv_core::model::Cluster;
use kpv_core::net::controller::{probe_events, ready_at, AppChange, AppState, ProbeKind};

/// One Pod whose container has `probe` (YAML flow mapping fields) as its
/// `kind` (`readinessProbe` or `livenessProbe`).
fn pod(kind: &str, probe: &str) -> Cluster {
    let yaml = format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, labels: {{app: p}}}}\nspec:\n  containers:\n  - name: c\n    image: kuard\n    ports: [{{containerPort: 8080}}]\n    {kind}: {{httpGet: {{path: /ready, port: 8080}}, {probe}}}\n"
    );
    let (c, diags) = kpv_core::Code::ALL.parse(&yaml);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    c
}

/// App changes so that the probe at `k` seconds sees `states[k]` (the
/// first one from the container's start, the others half a second early).
fn script(c: &Cluster, states: &[AppState]) -> Vec<AppChange> {
    states
        .iter()
        .enumerate()
        .map(|(k, s)| change(&c.pods[0], (k as u64 * 1000).saturating_sub(500), *s))
        .collect()
}

/// `pod`'s app in `state` from `at_ms` on.
fn change(pod: &kpv_core::model::Pod, at_ms: u64, state: AppState) -> AppChange {
    AppChange {
        at_ms,
        pod: pod.id.clone(),
        state,
    }
}

const S: AppState = AppState::Healthy;
const F: AppState = AppState::FailingReadiness;
const D: AppState = AppState::Down;
/// Failing at once (the worker tests' fake prober answers instantly; a
/// down app instead fails `timeoutSeconds` after each probe starts).
const L: AppState = AppState::FailingLiveness;

/// Readiness after each of the probes at 0, 1, 2, … s.
fn readiness(c: &Cluster, states: &[AppState]) -> Vec<bool> {
    let changes = script(c, states);
    let until = (states.len() as u64 - 1) * 1000;
    probe_events(&c.pods[0], &changes, until)
        .iter()
        .filter(|e| e.kind == ProbeKind::Readiness)
        .map(|e| e.ready_after)
        .collect()
}

/// TestFailureThreshold and TestSuccessThreshold: (probe fields, one round
/// of probe results, readiness after each probe); each round runs twice.
/// failureThreshold 3: after three successes the first two failures keep
/// Success. successThreshold 3 starting from Failure: the first two
/// successes keep Failure, one failure is Failure at once.
#[test]
fn thresholds() {
    let table: [(&str, &[AppState], &[bool]); 2] = [
        (
            "periodSeconds: 1, successThreshold: 1, failureThreshold: 3",
            &[S, S, S, F, F, F, F, F],
            &[true, true, true, true, true, false, false, false],
        ),
        (
            "periodSeconds: 1, successThreshold: 3, failureThreshold: 1",
            &[S, S, S, S, S, F],
            &[false, false, true, true, true, false],
        ),
    ];
    for (fields, round, want) in table {
        let c = pod("readinessProbe", fields);
        assert_eq!(
            readiness(&c, &[round, round].concat()),
            [want, want].concat(),
            "{fields}"
        );
    }
}

/// TestInitialDelay: during the initial delay readiness holds Failure and
/// liveness Success (no restart); after it, the probe succeeds.
#[test]
fn initial_delay() {
    let c = pod(
        "readinessProbe",
        "initialDelaySeconds: 10, periodSeconds: 1",
    );
    assert!(!ready_at(&c.pods[0], &[], 9_999));
    assert!(ready_at(&c.pods[0], &[], 10_000));
    let c = pod(
        "livenessProbe",
        "initialDelaySeconds: 10, periodSeconds: 1, failureThreshold: 1",
    );
    let changes = script(&c, &[L]);
    let events = probe_events(&c.pods[0], &changes, 9_999);
    assert!(
        events.is_empty(),
        "no liveness probe (and no restart) before 10 s"
    );
    let events = probe_events(&c.pods[0], &changes, 10_000);
    assert_eq!(events.len(), 1);
    assert!(events[0].restarted);
}

/// TestOnHoldOnLivenessCheckFailure: failureThreshold 1, the first probe
/// fails and the container restarts; the new container's probe succeeds.
#[test]
fn a_liveness_failure_restarts_and_the_new_container_is_probed_afresh() {
    let c = pod(
        "livenessProbe",
        "periodSeconds: 1, successThreshold: 1, failureThreshold: 1",
    );
    let changes = script(&c, &[L, S]);
    let events = probe_events(&c.pods[0], &changes, 1_000);
    let seen: Vec<(bool, bool)> = events.iter().map(|e| (e.success, e.restarted)).collect();
    assert_eq!(seen, [(false, true), (true, false)]);
}

/// The default worker ticks every period from the container's start and
/// skips the ticks inside the initial delay: with a 5 s delay and a 2 s
/// period the first probe runs at 6 s, then 8 s, 10 s, …
#[test]
fn the_first_probe_is_on_the_first_tick_past_the_delay() {
    let c = pod("readinessProbe", "initialDelaySeconds: 5, periodSeconds: 2");
    let times: Vec<u64> = probe_events(&c.pods[0], &[], 10_000)
        .iter()
        .map(|e| e.at_ms)
        .collect();
    assert_eq!(times, [6_000, 8_000, 10_000]);
    assert!(!ready_at(&c.pods[0], &[], 5_999));
    assert!(ready_at(&c.pods[0], &[], 6_000));
}

/// An app that fails from its start is seen failing by the very first
/// probe: with failureThreshold 1 it is never Ready.
#[test]
fn the_first_probe_sees_an_app_failing_from_its_start() {
    let c = pod("readinessProbe", "periodSeconds: 1, failureThreshold: 1");
    let changes = script(&c, &[F]);
    assert_eq!(readiness(&c, &[F, F, F]), [false, false, false]);
    assert!(!ready_at(&c.pods[0], &changes, 0));
    assert!(!ready_at(&c.pods[0], &changes, 5_000));
}

/// A change a person makes while watching t = 0 comes after the first
/// probe: the Pod is Ready at 0 and fails on the next probe.
#[test]
fn a_click_at_the_start_comes_after_the_first_probe() {
    let c = pod("readinessProbe", "periodSeconds: 1, failureThreshold: 1");
    let click = AppChange::made_at(0, c.pods[0].id.clone(), F);
    assert_eq!(click.at_ms, 1);
    assert!(ready_at(&c.pods[0], std::slice::from_ref(&click), 0));
    assert!(!ready_at(&c.pods[0], &[click], 1_000));
    assert_eq!(
        AppChange::made_at(2_500, c.pods[0].id.clone(), F).at_ms,
        2_500
    );
}

/// One Pod whose container has a startup probe and a readiness probe.
fn with_startup(startup: &str) -> Cluster {
    let yaml = format!(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: p, labels: {{app: p}}}}\nspec:\n  containers:\n  - name: kuard\n    image: kuard\n    ports: [{{containerPort: 8080}}]\n    startupProbe: {{httpGet: {{path: /healthy, port: 8080}}, {startup}}}\n    readinessProbe: {{httpGet: {{path: /ready, port: 8080}}, periodSeconds: 1, failureThreshold: 1}}\n"
    );
    let (c, diags) = kpv_core::Code::ALL.parse(&yaml);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    c
}

/// A startup probe holds readiness back until it succeeds; failing past
/// its threshold restarts the container (which starts over, startup
/// first). (at ms, kind, success, restarted) of each probe run.
#[test]
fn a_startup_probe_runs_first_and_restarts_on_failure() {
    let c = with_startup("periodSeconds: 1, failureThreshold: 3");
    let pod = &c.pods[0];
    let runs = |changes: &[AppChange], until: u64| -> Vec<(u64, ProbeKind, bool, bool)> {
        probe_events(pod, changes, until)
            .iter()
            .map(|e| (e.at_ms, e.kind, e.success, e.restarted))
            .collect()
    };
    use ProbeKind::{Readiness as R, Startup as St};
    // Up from the start: started at once, then readiness.
    assert_eq!(
        runs(&[], 1_000)[..3],
        [
            (0, St, true, false),
            (0, R, true, false),
            (1_000, R, true, false)
        ]
    );
    assert!(ready_at(pod, &[], 0));
    // Down until 1.5 s: the probes at 0 and 1 s get no answer and fail
    // when their 1 s timeout ends (at 1 and 2 s); the tick at 2 s came
    // during the second, so the next runs at once and the app, up since
    // 1.5 s, answers: started, then readiness. Not probed before.
    let up_late = [change(pod, 0, D), change(pod, 1_500, S)];
    assert_eq!(
        runs(&up_late, 2_000),
        [
            (1_000, St, false, false),
            (2_000, St, false, false),
            (2_000, St, true, false),
            (2_000, R, true, false)
        ]
    );
    assert!(!ready_at(pod, &up_late, 1_999));
    assert!(ready_at(pod, &up_late, 2_000));
    // Down for good: the third failure (at 3 s, the probe from 2 s timing
    // out) restarts it, and it starts over.
    let down = [change(pod, 0, D)];
    assert_eq!(
        runs(&down, 4_000),
        [
            (1_000, St, false, false),
            (2_000, St, false, false),
            (3_000, St, false, true),
            (4_000, St, false, false)
        ]
    );
    assert!(!ready_at(pod, &down, 4_000));
}

/// A liveness restart is an Event in the kubelet's words (naming the
/// container and the probe), and `kubectl get pods` counts it.
#[test]
fn restarts_are_events_and_counted() {
    use kpv_core::net::controller::events::{events, EventKind};
    let c = with_startup("periodSeconds: 1, failureThreshold: 2");
    let down = [change(&c.pods[0], 0, D)];
    let evs = events(
        &c,
        &down,
        kpv_core::net::controller::Timing::default(),
        5_000,
    );
    let restarts: Vec<(u64, String, ProbeKind)> = evs
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Restarted {
                container, probe, ..
            } => Some((e.at_ms, container.clone(), *probe)),
            _ => None,
        })
        .collect();
    // Each probe of the down app fails when its 1 s timeout ends: the
    // second failure in a row, every 2 s, restarts it.
    assert_eq!(
        restarts,
        [
            (2_000, "kuard".to_string(), ProbeKind::Startup),
            (4_000, "kuard".to_string(), ProbeKind::Startup)
        ]
    );
    // Up at 5.5 s: the probe from 5 s saw it down and restarts it at 6 s;
    // the next, at once, starts it, and it is Ready, after three restarts.
    let later = [change(&c.pods[0], 0, D), change(&c.pods[0], 5_500, S)];
    let evs = events(
        &c,
        &later,
        kpv_core::net::controller::Timing::default(),
        7_000,
    );
    let ready = evs.iter().find_map(|e| match &e.kind {
        EventKind::Ready {
            ready: true,
            restarts,
            ..
        } => Some((e.at_ms, *restarts)),
        _ => None,
    });
    assert_eq!(ready, Some((6_000, 3)));
}

/// The API server refuses a startup probe whose successThreshold is not 1,
/// as it refuses a liveness probe's.
#[test]
fn startup_success_threshold_must_be_1() {
    let yaml = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n    image: x\n    startupProbe: {tcpSocket: {port: 80}, successThreshold: 2}\n";
    let (_, diags) = kpv_core::Code::ALL.parse(yaml);
    assert!(
        diags.iter().any(|d| d.is_error()
            && d.message == "Invalid value: 2: must be 1"
            && d.field
                .as_deref()
                .is_some_and(|f| f.ends_with("startupProbe.successThreshold"))),
        "{diags:#?}"
    );
}

/// kuard's liveness toggle on the seed's alpaca Pod (liveness every 5 s
/// from 5 s, failureThreshold 3; readiness every 2 s): readiness keeps
/// passing, so the Pod stays an endpoint until the third liveness failure
/// restarts the container. The new process answers /healthy, so there is
/// one restart, NotReady at the restart itself and Ready at the next
/// readiness probe. An app that is down instead restarts again.
#[test]
fn a_liveness_failure_restarts_once_and_the_new_container_is_healthy() {
    let (c, _) =
        kpv_core::Code::ALL.parse(include_str!("../../tests/scenarios/alpaca-bandicoot.yaml"));
    let pod = c
        .pods
        .iter()
        .find(|p| p.id.name.starts_with("alpaca-prod"))
        .expect("the seed has alpaca Pods");
    let failing = [change(pod, 60_000, AppState::FailingLiveness)];
    let events = probe_events(pod, &failing, 120_000);
    let liveness: Vec<(u64, bool, bool)> = events
        .iter()
        .filter(|e| e.kind == ProbeKind::Liveness && e.at_ms > 60_000)
        .take(5)
        .map(|e| (e.at_ms, e.success, e.restarted))
        .collect();
    assert_eq!(
        liveness,
        [
            (65_000, false, false),
            (70_000, false, false),
            (75_000, false, true),
            (80_000, true, false),
            (85_000, true, false),
        ]
    );
    let restarts = events.iter().filter(|e| e.restarted).count();
    assert_eq!(restarts, 1, "the new container is healthy");
    assert!(ready_at(pod, &failing, 74_999), "readiness still passes");
    assert!(!ready_at(pod, &failing, 75_000), "NotReady at the restart");
    assert!(
        ready_at(pod, &failing, 76_000),
        "Ready at the next readiness probe"
    );
    let down = [change(pod, 60_000, D)];
    let restarts = probe_events(pod, &down, 120_000)
        .iter()
        .filter(|e| e.restarted)
        .count();
    assert!(restarts >= 2, "a down app restarts every 15 s (75, 90, …)");
    assert!(!ready_at(pod, &down, 120_000));
}

/// `timeoutSeconds`: an app that is down does not answer, so each probe
/// fails when its timeout ends, and readiness changes then. Readiness
/// every 10 s with a 3 s timeout and failureThreshold 1: down at 15 s, the
/// probe at 20 s gives up at 23 s, and the Pod is NotReady from then.
#[test]
fn a_down_app_fails_each_probe_when_its_timeout_ends() {
    let c = pod(
        "readinessProbe",
        "periodSeconds: 10, timeoutSeconds: 3, failureThreshold: 1",
    );
    let pod = &c.pods[0];
    let down = [change(pod, 15_000, D)];
    assert!(ready_at(pod, &down, 22_999));
    assert!(!ready_at(pod, &down, 23_000));
    let failed: Vec<(u64, bool)> = probe_events(pod, &down, 45_000)
        .iter()
        .filter(|e| !e.success)
        .map(|e| (e.at_ms, e.timed_out))
        .collect();
    assert_eq!(failed, [(23_000, true), (33_000, true), (43_000, true)]);
    // A 503 (kuard's readiness toggle) is an answer: at the probe's instant.
    let failing = [change(pod, 15_000, F)];
    assert!(!ready_at(pod, &failing, 20_000));
    assert!(probe_events(pod, &failing, 20_000)
        .iter()
        .all(|e| !e.timed_out));
}

/// A timeout as long as the period or longer: the worker waits for each
/// run; the tick that came meanwhile is kept (one) and the next probe
/// starts as soon as the run ends, so a down app is probed every 3 s, not
/// every second, with a 3 s timeout and a 1 s period.
#[test]
fn a_worker_waits_for_a_probe_longer_than_its_period() {
    let c = pod(
        "readinessProbe",
        "periodSeconds: 1, timeoutSeconds: 3, failureThreshold: 3",
    );
    let pod = &c.pods[0];
    let down = [change(pod, 0, D)];
    let at: Vec<u64> = probe_events(pod, &down, 9_000)
        .iter()
        .map(|e| e.at_ms)
        .collect();
    assert_eq!(at, [3_000, 6_000, 9_000]);
    // Back up at 7.5 s: the run from 6 s still gives up at 9 s; the next
    // starts then and is answered at once.
    let back = [change(pod, 0, D), change(pod, 7_500, S)];
    let runs: Vec<(u64, bool)> = probe_events(pod, &back, 9_000)
        .iter()
        .map(|e| (e.at_ms, e.success))
        .collect();
    assert_eq!(
        runs,
        [
            (3_000, false),
            (6_000, false),
            (9_000, false),
            (9_000, true)
        ]
    );
}
