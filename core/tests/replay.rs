//! Incremental replay: whatever sequence of sends, sends back in time, app
//! changes, removals and mode switches the app makes, `Replay::update` gives
//! exactly the traces a full `replay` of the same inputs gives, and a packet
//! added at the end traces only itself.

use kpv_core::model::{Cluster, Mode, Scheduler};
use kpv_core::net::controller::{AppChange, AppState, Timing};
use kpv_core::session::replay::{self, Inputs, Replay, SentPacket, Target, CHECKPOINT_EVERY};
use proptest::prelude::*;

const SEED: &str = include_str!("../../tests/scenarios/alpaca-bandicoot.yaml");
const AFFINITY: &str = include_str!("../../tests/scenarios/session-affinity.yaml");

/// One thing the app can do to the inputs.
#[derive(Clone, Debug)]
enum Op {
    /// Send `n` packets to target `target` from the clock `at`, `gap` apart.
    Send {
        n: usize,
        target: usize,
        at: u64,
        gap: u64,
    },
    /// Send at the end of time (after every packet so far).
    Append {
        n: usize,
        target: usize,
    },
    /// A Pod's app changes at `at`.
    App {
        pod: usize,
        at: u64,
        state: u8,
    },
    /// Forget packet `i` (modulo the count).
    Remove {
        i: usize,
    },
    Mode {
        mode: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (1usize..40, 0usize..8, 0u64..60_000, 0u64..400)
            .prop_map(|(n, target, at, gap)| Op::Send { n, target, at, gap }),
        (1usize..300, 0usize..8).prop_map(|(n, target)| Op::Append { n, target }),
        (0usize..8, 0u64..60_000, 0u8..3).prop_map(|(pod, at, state)| Op::App { pod, at, state }),
        (0usize..1000).prop_map(|i| Op::Remove { i }),
        (0usize..4).prop_map(|mode| Op::Mode { mode }),
    ]
}

struct World {
    cluster: Cluster,
    targets: Vec<Target>,
    mode: Mode,
    changes: Vec<AppChange>,
    packets: Vec<SentPacket>,
    next_id: u32,
}

impl World {
    fn new(text: &str) -> World {
        let (cluster, _) = kpv_core::Code::ALL.parse(text);
        let targets = replay::targets(&cluster, kpv_core::session::replay::Code::ALL.http);
        let mode = cluster.proxy.mode;
        World {
            cluster,
            targets,
            mode,
            changes: Vec::new(),
            packets: Vec::new(),
            next_id: 0,
        }
    }

    fn send(&mut self, n: usize, target: usize, at: u64, gap: u64) {
        let t = &self.targets[target % self.targets.len()];
        let origin = replay::default_origin(&self.cluster, t);
        for i in 0..n {
            let id = self.next_id;
            self.next_id += 1;
            self.packets.push(SentPacket {
                id,
                at_ms: at + i as u64 * gap,
                request: replay::request(t, origin.clone(), id),
                seed: 0x9E37_79B9u64.wrapping_mul(u64::from(id) + 1),
            });
        }
    }

    fn apply(&mut self, op: &Op) {
        match *op {
            Op::Send { n, target, at, gap } => self.send(n, target, at, gap),
            Op::Append { n, target } => {
                let at = self.packets.iter().map(|p| p.at_ms).max().unwrap_or(0);
                self.send(n, target, at, 7);
            }
            Op::App { pod, at, state } => {
                let pods = &self.cluster.pods;
                if !pods.is_empty() {
                    self.changes.push(AppChange {
                        at_ms: at,
                        pod: pods[pod % pods.len()].id.clone(),
                        state: [
                            AppState::Healthy,
                            AppState::FailingReadiness,
                            AppState::Down,
                        ][state as usize % 3],
                    });
                }
            }
            Op::Remove { i } => {
                if !self.packets.is_empty() {
                    let i = i % self.packets.len();
                    self.packets.remove(i);
                }
            }
            Op::Mode { mode } => self.mode = Mode::ALL[mode % Mode::ALL.len()],
        }
    }

    fn inputs(&self) -> Inputs<'_> {
        Inputs {
            code: kpv_core::session::replay::Code::ALL,
            cluster: &self.cluster,
            mode: self.mode,
            scheduler: Some(Scheduler::Rr),
            timing: Timing::default(),
            changes: &self.changes,
            packets: &self.packets,
        }
    }
}

fn check(text: &str, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut w = World::new(text);
    let mut r = Replay::default();
    for op in ops {
        w.apply(op);
        r.update(&w.inputs());
        let full = replay::replay(&w.inputs());
        prop_assert_eq!(r.len(), full.len());
        prop_assert!(r.traces() == full.as_slice(), "after {:?}", op);
        let mut ids: Vec<(u64, u32)> = w.packets.iter().map(|p| (p.at_ms, p.id)).collect();
        ids.sort();
        let replayed: Vec<(u64, u32)> = r.packets().iter().map(|p| (p.at_ms, p.id)).collect();
        prop_assert_eq!(replayed, ids);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn incremental_replay_equals_full_replay(ops in prop::collection::vec(op(), 1..10)) {
        check(SEED, &ops)?;
    }

    /// ClientIP affinity carries state from packet to packet: a replay from
    /// the wrong state would pick other endpoints.
    #[test]
    fn incremental_replay_keeps_affinity_state(ops in prop::collection::vec(op(), 1..8)) {
        check(AFFINITY, &ops)?;
    }
}

/// Table: the index `update` reports as the first recomputed trace.
#[test]
fn an_update_recomputes_only_from_the_first_change() {
    let mut w = World::new(SEED);
    let mut r = Replay::default();
    w.send(600, 0, 0, 10);
    assert_eq!(
        r.update(&w.inputs()),
        0,
        "the first replay computes everything"
    );
    assert_eq!(r.update(&w.inputs()), 600, "nothing changed");
    w.send(1, 0, 10_000, 0);
    assert_eq!(
        r.update(&w.inputs()),
        600,
        "a packet at the end traces only itself"
    );
    // A packet sent back in time, before packet 300.
    w.send(1, 0, 2_995, 0);
    assert_eq!(r.update(&w.inputs()), 300);
    // An app change at 4,000 ms: only packets from then on can change.
    let pod = w.cluster.pods[0].id.clone();
    w.changes.push(AppChange {
        at_ms: 4_000,
        pod,
        state: AppState::Down,
    });
    assert_eq!(r.update(&w.inputs()), 401);
    // A new mode replays everything.
    w.mode = Mode::Nftables;
    assert_eq!(r.update(&w.inputs()), 0);
    assert_eq!(r.traces(), replay::replay(&w.inputs()).as_slice());
    const { assert!(CHECKPOINT_EVERY < 600, "the table crosses a checkpoint") };
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Probes run on whole seconds, so the controller's snapshot at t changes
    /// only when one of the clocks it reads (t, the slice controller's t,
    /// kube-proxy's t) crosses a second: the app recomputes it then, not
    /// every frame.
    #[test]
    fn the_snapshot_changes_only_when_a_clock_crosses_a_second(
        apps in prop::collection::vec((0usize..8, 0u64..30_000, 0u8..3), 0..6),
        t in 0u64..40_000,
        dt in 0u64..1000,
    ) {
        let mut w = World::new(SEED);
        for (pod, at, state) in apps {
            w.apply(&Op::App { pod, at, state });
        }
        let timing = Timing::default();
        let clocks = |t: u64| {
            let slice_t = t.saturating_sub(timing.slice_delay_ms);
            [t / 1000, slice_t / 1000, slice_t.saturating_sub(timing.proxy_delay_ms) / 1000]
        };
        let u = t + dt;
        prop_assume!(clocks(t) == clocks(u));
        let a = kpv_core::net::controller::snapshot(&w.cluster, &w.changes, timing, t);
        let b = kpv_core::net::controller::snapshot(&w.cluster, &w.changes, timing, u);
        prop_assert_eq!(a.pod_ready, b.pod_ready);
        prop_assert_eq!(a.slices, b.slices);
        prop_assert_eq!(a.proxy_slices, b.proxy_slices);
    }
}
