//! The app's state: inputs as signals, everything else derived.
//!
//! [`Store`] holds what the user chose or did — the scenario text, mode,
//! scheduler, the apps' health changes, the packets sent, simulated time and
//! playback — and `Memo`s over kpv-core functions for the rest: the cluster,
//! the EndpointSlices at time t, the scene, every trace and flight, the rules.
//! No effect writes a signal that could have been derived.

use kpv_core::controller::{self, AppChange, AppState, Timing};
use kpv_core::diag::Diagnostic;
use kpv_core::model::{Cluster, EndpointSlice, Mode, NamespacedName, Scheduler};
use kpv_core::packet::IpFamily;
use kpv_core::replay::{self, SentPacket, Target};
use kpv_core::scene::Scene;
use kpv_core::timeline::Flight;
use kpv_core::trace::{Origin, Sim, Trace};
use leptos::prelude::*;
use std::collections::BTreeMap;

/// The scenario key of the user's own YAML.
pub const CUSTOM: &str = "custom";

/// What packets are sent from (a key of [`origin_choices`]).
pub const ORIGIN_DEFAULT: &str = "auto";

/// One node's rules as text, with its line count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeRules {
    pub node: String,
    pub text: String,
}

#[derive(Clone, Copy)]
pub struct Store {
    // Inputs.
    pub scenario: RwSignal<String>,
    pub yaml: RwSignal<String>,
    pub mode: RwSignal<Mode>,
    pub scheduler: RwSignal<Scheduler>,
    pub changes: RwSignal<Vec<AppChange>>,
    pub packets: RwSignal<Vec<SentPacket>>,
    pub now: RwSignal<u64>,
    pub playing: RwSignal<bool>,
    pub speed: RwSignal<f64>,
    pub continuous: RwSignal<bool>,
    pub burst: RwSignal<u32>,
    pub seed: RwSignal<u64>,
    pub target: RwSignal<String>,
    pub origin: RwSignal<String>,
    pub focus: RwSignal<Option<u32>>,
    pub rules_node: RwSignal<Option<String>>,
    pub reduced_motion: RwSignal<bool>,
    // Derived.
    pub parsed: Memo<(Cluster, Vec<Diagnostic>)>,
    pub pod_ready: Memo<BTreeMap<NamespacedName, bool>>,
    pub slices: Memo<Vec<EndpointSlice>>,
    pub proxy_slices: Memo<Vec<EndpointSlice>>,
    pub scene: Memo<Scene>,
    pub targets: Memo<Vec<Target>>,
    pub traces: Memo<Vec<(u32, Trace)>>,
    pub flights: Memo<Vec<(u32, Flight)>>,
    pub rules: Memo<Vec<NodeRules>>,
    /// Packets each Pod has received by now (decided deliveries only).
    pub received: Memo<BTreeMap<NamespacedName, u32>>,
}

pub fn timing() -> Timing {
    Timing::default()
}

impl Store {
    pub fn new(scenario: &str, yaml: &str) -> Store {
        let yaml = RwSignal::new(yaml.to_string());
        let parsed = Memo::new(move |_| yaml.with(|y| kpv_core::model::parse(y)));
        let initial_mode = parsed.with_untracked(|(c, _)| c.proxy.mode);
        let initial_sched = parsed.with_untracked(|(c, _)| c.proxy.ipvs_scheduler);
        let mode = RwSignal::new(initial_mode);
        let scheduler = RwSignal::new(initial_sched);
        let changes = RwSignal::new(Vec::<AppChange>::new());
        let packets = RwSignal::new(Vec::<SentPacket>::new());
        let now = RwSignal::new(0u64);
        let snapshot = Memo::new(move |_| {
            let t = now.get();
            parsed.with(|(c, _)| changes.with(|ch| controller::snapshot(c, ch, timing(), t)))
        });
        let pod_ready = Memo::new(move |_| snapshot.with(|s| s.pod_ready.clone()));
        let slices = Memo::new(move |_| snapshot.with(|s| s.slices.clone()));
        let proxy_slices = Memo::new(move |_| snapshot.with(|s| s.proxy_slices.clone()));
        let scene = Memo::new(move |_| {
            parsed.with(|(c, _)| slices.with(|s| kpv_core::scene::layout(c, s)))
        });
        let targets = Memo::new(move |_| parsed.with(|(c, _)| replay::targets(c)));
        let traces: Memo<Vec<(u32, Trace)>> = Memo::new(move |_| {
            let mode = mode.get();
            let sched = scheduler.get();
            parsed.with(|(c, _)| {
                changes.with(|ch| {
                    packets.with(|ps| {
                        let inputs = replay::Inputs {
                            cluster: c,
                            mode,
                            scheduler: Some(sched),
                            timing: timing(),
                            changes: ch,
                            packets: ps,
                        };
                        let mut ids: Vec<(u64, u32)> = ps.iter().map(|p| (p.at_ms, p.id)).collect();
                        kpv_core::order::sort(&mut ids);
                        ids.into_iter()
                            .map(|(_, id)| id)
                            .zip(replay::replay(&inputs))
                            .collect()
                    })
                })
            })
        });
        let flights: Memo<Vec<(u32, Flight)>> = Memo::new(move |_| {
            scene.with(|s| {
                packets.with(|ps| {
                    traces.with(|ts| {
                        ts.iter()
                            .filter_map(|(id, t)| {
                                ps.iter()
                                    .find(|p| p.id == *id)
                                    .map(|p| (*id, Flight::new(s, t, p.at_ms)))
                            })
                            .collect()
                    })
                })
            })
        });
        let rules: Memo<Vec<NodeRules>> = Memo::new(move |_| {
            let mode = mode.get();
            let sched = scheduler.get();
            parsed.with(|(c, _)| {
                proxy_slices.with(|sl| {
                    let sim = Sim::new(c, sl, mode, Some(sched));
                    c.nodes
                        .iter()
                        .filter_map(|n| {
                            let dp = sim
                                .dataplane(&n.name, IpFamily::V4)
                                .or_else(|| sim.dataplane(&n.name, IpFamily::V6))?;
                            Some(NodeRules {
                                node: n.name.clone(),
                                text: dp.render_text(),
                            })
                        })
                        .collect()
                })
            })
        });
        let received = Memo::new(move |_| {
            let t = now.get();
            let mut out = BTreeMap::new();
            traces.with(|ts| {
                flights.with(|fs| {
                    for ((_, trace), (_, f)) in ts.iter().zip(fs.iter()) {
                        if let (true, kpv_core::trace::Outcome::Delivered { pod: Some(pod), .. }) =
                            (f.decided(t), &trace.outcome)
                        {
                            *out.entry(pod.clone()).or_insert(0u32) += 1;
                        }
                    }
                })
            });
            out
        });
        Store {
            scenario: RwSignal::new(scenario.to_string()),
            yaml,
            mode,
            scheduler,
            changes,
            packets,
            now,
            playing: RwSignal::new(false),
            speed: RwSignal::new(1.0),
            continuous: RwSignal::new(false),
            burst: RwSignal::new(10),
            seed: RwSignal::new(1),
            target: RwSignal::new(String::new()),
            origin: RwSignal::new(ORIGIN_DEFAULT.to_string()),
            focus: RwSignal::new(None),
            rules_node: RwSignal::new(None),
            reduced_motion: RwSignal::new(false),
            parsed,
            pod_ready,
            slices,
            proxy_slices,
            scene,
            targets,
            traces,
            flights,
            rules,
            received,
        }
    }

    /// Load another scenario: inputs that belonged to the old one are reset.
    pub fn load(&self, key: &str, yaml: &str) {
        self.scenario.set(key.to_string());
        self.yaml.set(yaml.to_string());
        let (mode, sched) = self
            .parsed
            .with_untracked(|(c, _)| (c.proxy.mode, c.proxy.ipvs_scheduler));
        self.mode.set(mode);
        self.scheduler.set(sched);
        self.reset();
        self.target.set(String::new());
        self.origin.set(ORIGIN_DEFAULT.to_string());
    }

    /// Load the user's own manifests (already checked to have no errors).
    pub fn load_custom(&self, yaml: &str) {
        self.load(CUSTOM, yaml);
    }

    /// Back to time zero with nothing sent and every app healthy.
    pub fn reset(&self) {
        self.playing.set(false);
        self.packets.set(Vec::new());
        self.changes.set(Vec::new());
        self.focus.set(None);
        self.now.set(0);
    }

    /// The chosen target, or the first one (the outermost entry point).
    pub fn current_target(&self) -> Option<Target> {
        let key = self.target.get_untracked();
        self.targets.with_untracked(|ts| {
            ts.iter()
                .find(|t| t.key == key)
                .or_else(|| ts.first())
                .cloned()
        })
    }

    /// Where packets to `target` come from: the chosen origin, else the default.
    pub fn current_origin(&self, target: &Target) -> Origin {
        let key = self.origin.get_untracked();
        self.parsed.with_untracked(|(c, _)| {
            parse_origin(c, &key).unwrap_or_else(|| replay::default_origin(c, target))
        })
    }

    /// Send `n` new connections to the current target, `gap_ms` apart.
    pub fn send(&self, n: u32, gap_ms: u64) {
        let Some(target) = self.current_target() else {
            return;
        };
        let origin = self.current_origin(&target);
        let start = self.now.get_untracked();
        let seed = self.seed.get_untracked();
        let mut last = None;
        self.packets.update(|ps| {
            let base = ps.iter().map(|p| p.id + 1).max().unwrap_or(0);
            for i in 0..n {
                let id = base + i;
                ps.push(SentPacket {
                    id,
                    at_ms: start + i as u64 * gap_ms,
                    request: replay::request(&target, origin.clone(), id),
                    seed: seed.wrapping_mul(0x9E37_79B9).wrapping_add(id as u64),
                });
                last = Some(id);
            }
        });
        if let Some(id) = last.filter(|_| n == 1).or_else(|| {
            self.packets
                .with_untracked(|ps| ps.iter().filter(|p| p.at_ms >= start).map(|p| p.id).min())
        }) {
            self.focus.set(Some(id));
        }
        self.playing.set(true);
    }

    /// The packet the panels describe: the focused one, else the latest sent.
    pub fn focused(&self) -> Option<u32> {
        self.focus
            .get()
            .or_else(|| self.packets.with(|ps| ps.iter().map(|p| p.id).max()))
    }

    pub fn focused_trace(&self) -> Option<Trace> {
        self.with_focused_trace(Trace::clone)
    }

    /// `f` of the focused packet's trace, read in place (what runs every
    /// frame uses this rather than copying the trace).
    pub fn with_focused_trace<R>(&self, f: impl FnOnce(&Trace) -> R) -> Option<R> {
        let id = self.focused()?;
        self.traces
            .with(|ts| ts.iter().find(|(i, _)| *i == id).map(|(_, t)| f(t)))
    }

    pub fn focused_flight(&self) -> Option<Flight> {
        self.with_focused_flight(Flight::clone)
    }

    /// `f` of the focused packet's flight, read in place.
    pub fn with_focused_flight<R>(&self, f: impl FnOnce(&Flight) -> R) -> Option<R> {
        let id = self.focused()?;
        self.flights
            .with(|fs| fs.iter().find(|(i, _)| *i == id).map(|(_, fl)| f(fl)))
    }

    /// The hop of the focused packet at the current time (none for a
    /// packet whose trace has no hop).
    pub fn current_hop(&self) -> Option<usize> {
        let now = self.now.get();
        self.with_focused_flight(|f| (!f.is_empty()).then(|| f.hop_at(now)))
            .flatten()
    }

    /// Set a Pod's app state from now on.
    pub fn set_app(&self, pod: &NamespacedName, state: AppState) {
        let at = self.now.get_untracked();
        self.changes.update(|ch| {
            ch.retain(|c| !(c.pod == *pod && c.at_ms == at));
            ch.push(AppChange {
                at_ms: at,
                pod: pod.clone(),
                state,
            });
        });
    }

    pub fn app_state(&self, pod: &NamespacedName) -> AppState {
        let t = self.now.get();
        self.changes
            .with(|ch| controller::app_state_at_or_default(pod, ch, t))
    }

    pub fn step(&self, forward: bool) {
        self.playing.set(false);
        let Some(f) = self.focused_flight() else {
            return;
        };
        let t = self.now.get_untracked();
        let next = if forward {
            f.step_forward(t)
        } else {
            f.step_back(t)
        };
        if let Some(n) = next {
            self.now.set(n);
        }
    }
}

/// Origins the user can pick: `auto`, `external`, `pod:ns/name`, `node:name`.
pub fn parse_origin(c: &Cluster, key: &str) -> Option<Origin> {
    if key == "external" {
        return Some(Origin::External {
            client: replay::client_ip(),
        });
    }
    if let Some(rest) = key.strip_prefix("pod:") {
        let (ns, name) = rest.split_once('/')?;
        let id = NamespacedName::new(ns, name);
        return c.pod(&id).map(|_| Origin::Pod { pod: id });
    }
    if let Some(node) = key.strip_prefix("node:") {
        let n = c.node(node)?;
        let src = n
            .primary_ip(IpFamily::V4)
            .or_else(|| n.primary_ip(IpFamily::V6))?;
        return Some(Origin::Node {
            node: node.to_string(),
            src,
        });
    }
    None
}
