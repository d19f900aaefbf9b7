//! The app's state: inputs as signals, everything else derived.
//!
//! [`Store`] holds what the user chose or did — the scenario text, mode,
//! scheduler, the apps' health changes, the packets sent, simulated time and
//! playback — and `Memo`s over kpv-core functions for the rest: the cluster,
//! the EndpointSlices at time t, the scene, every trace and flight, the rules.
//! No effect writes a signal that could have been derived.
//!
//! Work follows what is on screen, not the size of the history or the
//! cluster: the replay is kept between changes (kpv-core's [`Flights`], updated in place
//! by the `replayed` memo), so a send traces one packet; a frame looks only at
//! the packets whose flight can be on screen; the controller's snapshot is
//! recomputed when a clock it reads crosses a probe second, not every frame;
//! and only the shown node's rules are compiled and rendered.

use crate::load::Fetch;
use kpv_core::model::packet::IpFamily;
use kpv_core::model::{Cluster, EndpointSlice, Mode, NamespacedName, Scheduler};
use kpv_core::net::controller::{self, AppChange, AppState, Timing};
use kpv_core::net::trace::{Origin, Trace};
use kpv_core::session::flights::Flights;
use kpv_core::session::replay::{self, SentPacket, Target};
use kpv_core::util::diag::Diagnostic;
use kpv_core::view::scene::Scene;
use kpv_core::view::timeline::Flight;
use leptos::prelude::*;
use std::sync::Arc;

/// A text parsed: the cluster and kpv-core's diagnostics.
pub type Parsed = (Cluster, Vec<Diagnostic>);

/// A parse with its Ingress and Gateway controllers' proxies placed (found
/// in the input or added as a controller would), so the diagram draws them
/// like any Pod and Service. Until HTTP routing's code is here
/// ([`crate::lazy_http`]) the proxies wait for it.
trait WithHttpProxies {
    fn with_http_proxies(self, ready: Memo<bool>) -> Parsed;
}

impl WithHttpProxies for Parsed {
    fn with_http_proxies(self, ready: Memo<bool>) -> Parsed {
        if self.0.routing.is_empty() || !ready.get() {
            return self;
        }
        match crate::lazy_http::http() {
            Some(f) => ((f.replay.prepare)(&self.0).cluster, self.1),
            None => self,
        }
    }
}

/// The scenario key of the user's own YAML.
pub const CUSTOM: &str = "custom";

/// What packets are sent from (a key of [`origin_choices`]).
pub const ORIGIN_DEFAULT: &str = "auto";

/// One node's rules as text, and the lookup tables it picks backends from
/// (Maglev's, for the table view).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeRules {
    pub node: String,
    pub text: String,
    pub tables: Vec<kpv_core::net::modes::hash_table::HashTable>,
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
    /// Which modes' code is here (the release build fetches all but
    /// iptables on first use, [`crate::modes`]): an input like any other,
    /// so what was computed while a mode was on its way is computed again
    /// when it arrives.
    pub loads: RwSignal<crate::modes::Loads>,
    /// The HTTP request form (used when the target is an entry point).
    pub http: crate::forms::HttpForm,
    /// Whether HTTP routing's code is here ([`Store::load_http`] fetches it).
    pub http_load: RwSignal<Fetch>,
    // Derived.
    /// The mode in use when its code is here, else `None`: the one gate
    /// every computation with a mode goes through (the mode itself may come
    /// from the buttons, a lesson, the address, a share link or the
    /// scenario's KubeProxyConfiguration; all of them set `mode`).
    pub live_mode: Memo<Option<Mode>>,
    pub parsed: Memo<Parsed>,
    preparsed: StoredValue<Option<(String, Parsed)>, LocalStorage>,
    pub pod_ready: Memo<kpv_core::net::controller::PodReady>,
    pub slices: Memo<Vec<EndpointSlice>>,
    pub proxy_slices: Memo<Vec<EndpointSlice>>,
    pub scene: Memo<Scene>,
    /// `http_load` is `Ready`.
    pub http_ready: Memo<bool>,
    /// The scenario has routing objects and their code is not here yet:
    /// what depends on it says "loading" (or what failed).
    pub http_pending: Memo<bool>,
    /// The cluster made ready for HTTP requests (its proxies placed, the
    /// routing tables compiled), prepared once per parse; `None` without
    /// routing objects. The targets and the request form read it.
    pub http_prepared: Memo<Option<Arc<kpv_core::http::Prepared>>>,
    pub targets: Memo<Vec<Target>>,
    /// The replay and flights, read with [`Store::with_played`].
    played: StoredValue<Flights, LocalStorage>,
    /// Bumped each time `played` changes (what readers subscribe to).
    replayed: Memo<u64>,
    /// The node whose rules are shown: the one chosen, else the node of the
    /// rule the focused packet is at, else kube-proxy's own node. (The
    /// embed shows no rules.)
    #[cfg(feature = "full")]
    pub rules_shown: Memo<Option<String>>,
    /// The shown node's rules only (a 100-node cluster renders one ruleset).
    #[cfg(feature = "full")]
    pub rules: Memo<Option<NodeRules>>,
    /// Packets each Pod has received by now (decided deliveries only),
    /// sorted by Pod.
    pub received: Memo<Vec<(NamespacedName, u32)>>,
    /// kpv-core's warnings by the object they are about (`Service/ns/name`,
    /// `Pod/ns/name`, `Node/name`); those about no object under "".
    pub warnings_by_object: Memo<Vec<(String, Vec<String>)>>,
    /// The session holds [`replay::MAX_PACKETS`] packets: sending stops.
    pub at_cap: Memo<bool>,
}

/// The value of `key` in `pairs`, sorted by key: the small maps the views
/// read are kept as sorted `Vec`s (less code in the download than a
/// `BTreeMap` of each kind).
pub fn lookup<'a, K, Q, V>(pairs: &'a [(Q, V)], key: &K) -> Option<&'a V>
where
    K: Ord + ?Sized,
    Q: std::borrow::Borrow<K>,
{
    pairs
        .binary_search_by(|(k, _)| k.borrow().cmp(key))
        .ok()
        .map(|i| &pairs[i].1)
}

pub fn timing() -> Timing {
    Timing::default()
}

/// The replay's inputs for `packets` on `cluster` in `mode`, with the code
/// this build has now.
pub fn inputs<'a>(
    cluster: &'a kpv_core::model::Cluster,
    mode: Mode,
    scheduler: Scheduler,
    changes: &'a [AppChange],
    packets: &'a [SentPacket],
) -> replay::Inputs<'a> {
    replay::Inputs {
        code: crate::code::now().replay(),
        cluster,
        mode,
        scheduler: Some(scheduler),
        timing: timing(),
        changes,
        packets,
    }
}

/// The text parsed: a text the editor has just parsed is not parsed again,
/// unless its routing objects waited for code that is here now.
fn parse_memo(
    yaml: RwSignal<String>,
    preparsed: StoredValue<Option<(String, Parsed)>, LocalStorage>,
    http_ready: Memo<bool>,
) -> Memo<Parsed> {
    Memo::new(move |_| {
        yaml.with(|y| {
            // A text the editor has just parsed is not parsed again,
            // unless its routing objects waited for code that is here now.
            preparsed
                .try_update_value(|p| match p.take() {
                    Some((text, parsed))
                        if text == *y
                            && !(parsed.0.routing.awaiting_code && crate::lazy_http::ready()) =>
                    {
                        Some(parsed)
                    }
                    _ => None,
                })
                .flatten()
                .unwrap_or_else(|| crate::code::now().parse(y))
        })
        .with_http_proxies(http_ready)
    })
}

/// The scene, with the pipeline's step names in the app's language (the
/// scene is told how wide they are drawn, so its boxes fit them).
fn scene_memo(parsed: Memo<Parsed>, slices: Memo<Vec<EndpointSlice>>) -> Memo<Scene> {
    // The pipeline's step names are words in the app's language: the
    // scene is told how wide they are drawn, so its boxes fit them.
    let lang = use_context::<RwSignal<crate::i18n::Lang>>();
    Memo::new(move |_| {
        let lg = lang.map_or(crate::i18n::Lang::En, |l| l.get());
        parsed
            .with(|(c, _)| slices.with(|s| kpv_core::view::scene::layout(c, s)))
            .name_steps(crate::hops::DESCRIBED, |k| {
                let name = crate::hops::step_name(lg, k);
                (crate::measure::drawn_width(&name, 1.0) / 0.62).ceil() as usize
            })
    })
}

/// What the replay reads and where it keeps its flights.
#[derive(Clone, Copy)]
struct Replayed {
    played: StoredValue<Flights, LocalStorage>,
    live_mode: Memo<Option<Mode>>,
    mode: RwSignal<Mode>,
    scheduler: RwSignal<Scheduler>,
    http_pending: Memo<bool>,
    parsed: Memo<Parsed>,
    changes: RwSignal<Vec<AppChange>>,
    packets: RwSignal<Vec<SentPacket>>,
    scene: Memo<Scene>,
}

/// Replay every packet into `played` when anything it reads changes; the
/// memo's value counts the replays (what readers subscribe to).
fn replay_memo(r: Replayed) -> Memo<u64> {
    Memo::new(move |prev: Option<&u64>| {
        // While the mode's code is on its way nothing is traced (no
        // packet is drawn); it all replays when the code arrives.
        let live = r.live_mode.get();
        let mode = live.unwrap_or_else(|| r.mode.get());
        let sched = r.scheduler.get();
        // HTTP requests wait for routing's code: none is traced without
        // it (no wrong journey is drawn), all are once it is here.
        let pending = r.http_pending.get();
        r.parsed.with(|(c, _)| {
            r.changes.with(|ch| {
                r.packets.with(|ps| {
                    let live_ps = if live.is_some() { ps.as_slice() } else { &[] };
                    let kept: Vec<SentPacket>;
                    let ps = if pending {
                        kept = live_ps
                            .iter()
                            .filter(|p| {
                                !matches!(p.request.dst, kpv_core::net::trace::Dest::Http(_))
                            })
                            .cloned()
                            .collect();
                        &kept[..]
                    } else {
                        live_ps
                    };
                    r.scene.with(|sc| {
                        let inputs = inputs(c, mode, sched, ch, ps);
                        r.played.update_value(|p| p.update(&inputs, sc));
                    })
                })
            })
        });
        prev.map_or(0, |r| r.wrapping_add(1))
    })
}

/// What the rules view reads.
#[cfg(feature = "full")]
#[derive(Clone, Copy)]
struct Shown {
    focus: RwSignal<Option<u32>>,
    now: RwSignal<u64>,
    replayed: Memo<u64>,
    played: StoredValue<Flights, LocalStorage>,
    rules_node: RwSignal<Option<String>>,
    parsed: Memo<Parsed>,
    live_mode: Memo<Option<Mode>>,
    scheduler: RwSignal<Scheduler>,
    proxy_slices: Memo<Vec<EndpointSlice>>,
}

/// The node whose rules are shown (chosen, else where the focused packet
/// is, else kube-proxy's own node) and its rules in every family it has.
#[cfg(feature = "full")]
fn rules_memos(s: Shown) -> (Memo<Option<String>>, Memo<Option<NodeRules>>) {
    let focused_id = move || {
        s.focus.get().or_else(|| {
            let _ = s.replayed.get();
            s.played.with_value(Flights::last_id)
        })
    };
    // The node of the rule the focused packet is at now (or last passed).
    let matched_node = Memo::new(move |_| {
        let id = focused_id()?;
        let t = s.now.get();
        let _ = s.replayed.get();
        s.played.with_value(|p| {
            let (trace, flight) = p.get(id)?;
            if flight.is_empty() {
                return None;
            }
            trace.rule_hop_until(flight.hop_at(t))?.node.clone()
        })
    });
    let rules_shown = Memo::new(move |_| {
        s.rules_node
            .get()
            .or_else(|| matched_node.get())
            .or_else(|| {
                s.parsed
                    .with(|(c, _)| c.proxy_node().map(|n| n.name.clone()))
            })
    });
    let rules: Memo<Option<NodeRules>> = Memo::new(move |_| {
        let node = rules_shown.get()?;
        let mode = s.live_mode.get()?;
        let sched = s.scheduler.get();
        s.parsed.with(|(c, _)| {
            s.proxy_slices.with(|sl| {
                let opts = kpv_core::net::modes::CompileOptions {
                    scheduler: Some(sched),
                };
                // Every family the node has, as `kpv rules` prints them.
                let planes = kpv_core::net::modes::node_planes(
                    c,
                    sl,
                    &node,
                    mode,
                    opts,
                    crate::modes::compilers(),
                );
                if planes.is_empty() {
                    return None;
                }
                let text = kpv_core::net::modes::render_planes(&planes);
                Some(NodeRules {
                    node,
                    text,
                    tables: planes.iter().flat_map(|(_, dp)| dp.hash_tables()).collect(),
                })
            })
        })
    });
    (rules_shown, rules)
}

/// kpv-core's warnings by the object they are about.
fn warnings_memo(parsed: Memo<Parsed>) -> Memo<Vec<(String, Vec<String>)>> {
    Memo::new(move |_| {
        parsed.with(|(_, diags)| {
            let mut out: Vec<(String, Vec<String>)> = Vec::new();
            for d in diags.iter().filter(|d| !d.is_error()) {
                let key = d.object.as_deref().unwrap_or_default();
                match out.binary_search_by(|(k, _)| k.as_str().cmp(key)) {
                    Ok(i) => out[i].1.push(d.message.clone()),
                    Err(i) => out.insert(i, (key.to_string(), vec![d.message.clone()])),
                }
            }
            out
        })
    })
}

impl Store {
    pub fn new(scenario: &str, yaml: &str) -> Store {
        let yaml = RwSignal::new(yaml.to_string());
        let http_load = RwSignal::new(if crate::lazy_http::ready() {
            Fetch::Ready
        } else {
            Fetch::Absent
        });
        let http_ready = Memo::new(move |_| http_load.get() == Fetch::Ready);
        let preparsed = StoredValue::new_local(None::<(String, Parsed)>);
        let parsed = parse_memo(yaml, preparsed, http_ready);
        let http_pending =
            Memo::new(move |_| !http_ready.get() && parsed.with(|(c, _)| !c.routing.is_empty()));
        let initial_mode = parsed.with_untracked(|(c, _)| c.proxy.mode);
        let initial_sched = parsed.with_untracked(|(c, _)| c.proxy.ipvs_scheduler);
        let mode = RwSignal::new(initial_mode);
        let scheduler = RwSignal::new(initial_sched);
        let loads = RwSignal::new(crate::modes::Loads::now());
        let live_mode = Memo::new(move |_| {
            let m = mode.get();
            loads.with(|l| l.ready(m)).then_some(m)
        });
        let changes = RwSignal::new(Vec::<AppChange>::new());
        let packets = RwSignal::new(Vec::<SentPacket>::new());
        let now = RwSignal::new(0u64);
        let focus = RwSignal::new(None::<u32>);
        let rules_node = RwSignal::new(None::<String>);
        // Readiness changes only on probe runs, which fall on whole seconds:
        // the snapshot is recomputed when one of the clocks it reads (now,
        // the slice controller's, kube-proxy's) crosses a second.
        let epoch = Memo::new(move |_| {
            let t = now.get();
            let c = parsed.with(|(c, _)| timing().clocks(c, t));
            [c.now / 1000, c.slices / 1000, c.proxy / 1000]
        });
        let snapshot = Memo::new(move |_| {
            let _ = epoch.get();
            let t = now.get_untracked();
            parsed.with(|(c, _)| changes.with(|ch| controller::snapshot(c, ch, timing(), t)))
        });
        let pod_ready = Memo::new(move |_| snapshot.with(|s| s.pod_ready.clone()));
        let slices = Memo::new(move |_| snapshot.with(|s| s.slices.clone()));
        let proxy_slices = Memo::new(move |_| snapshot.with(|s| s.proxy_slices.clone()));
        let scene = scene_memo(parsed, slices);
        // A new preparation is a change (compared by identity: comparing
        // whole routing tables would only cost code and time).
        let http_prepared = Memo::new_with_compare(
            move |_| {
                // Subscribed to readiness first, so it is prepared once it is in.
                let ready = http_ready.get();
                let f = crate::lazy_http::http().filter(|_| ready)?;
                parsed
                    .with(|(c, _)| (!c.routing.is_empty()).then(|| Arc::new((f.replay.prepare)(c))))
            },
            |old, new| match (old, new) {
                (Some(Some(a)), Some(Some(b))) => !Arc::ptr_eq(a, b),
                (Some(None), Some(None)) => false,
                _ => true,
            },
        );
        let targets = Memo::new(move |_| {
            parsed.with(|(c, _)| {
                http_prepared.with(|p| {
                    let http = crate::lazy_http::http().map(|h| h.replay);
                    replay::targets_with(c, p.as_deref(), http)
                })
            })
        });
        let played = StoredValue::new_local(Flights::default());
        let replayed = replay_memo(Replayed {
            played,
            live_mode,
            mode,
            scheduler,
            http_pending,
            parsed,
            changes,
            packets,
            scene,
        });
        #[cfg(feature = "full")]
        let (rules_shown, rules) = rules_memos(Shown {
            focus,
            now,
            replayed,
            played,
            rules_node,
            parsed,
            live_mode,
            scheduler,
            proxy_slices,
        });
        let received = Memo::new(move |_| {
            let t = now.get();
            let _ = replayed.get();
            played.with_value(|p| p.received(t))
        });
        let warnings_by_object = warnings_memo(parsed);
        let at_cap = Memo::new(move |_| packets.with(|ps| ps.len() >= replay::MAX_PACKETS));
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
            focus,
            rules_node,
            reduced_motion: RwSignal::new(false),
            loads,
            http: crate::forms::HttpForm::new(),
            live_mode,
            http_load,
            parsed,
            preparsed,
            pod_ready,
            slices,
            proxy_slices,
            scene,
            http_ready,
            http_pending,
            http_prepared,
            targets,
            played,
            replayed,
            #[cfg(feature = "full")]
            rules_shown,
            #[cfg(feature = "full")]
            rules,
            received,
            warnings_by_object,
            at_cap,
        }
    }

    /// Fetch HTTP routing's code (once the scenario has routing objects; a
    /// failed fetch is tried again here, by the Retry button). Nothing the
    /// user has is touched: requests sent meanwhile are traced when it is in.
    pub fn load_http(&self) {
        let mut starts = false;
        self.http_load.maybe_update(|f| {
            starts = f.begin();
            starts
        });
        if !starts {
            return;
        }
        let http_load = self.http_load;
        leptos::task::spawn_local(async move {
            let ok = crate::lazy_http::load().await.is_ok();
            http_load.try_update(|f| f.finish(ok));
        });
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
        self.http.clear();
    }

    /// Load the user's own manifests (already checked to have no errors).
    /// It is shown settled, as a cluster that has been running is (every
    /// Pod that will be Ready is, and kube-proxy has synced it); Reset
    /// replays it from its creation.
    pub fn load_custom(&self, yaml: &str) {
        self.load(CUSTOM, yaml);
        self.start_settled();
    }

    fn start_settled(&self) {
        let settled = self
            .parsed
            .with_untracked(|(c, _)| controller::settled_ms(c, timing()));
        self.now.set(settled);
    }

    /// [`Store::load`] a text already parsed (`parsed` is its parse): a
    /// large text is not parsed twice.
    pub fn load_parsed(&self, key: &str, yaml: &str, parsed: Parsed) {
        self.preparsed.set_value(Some((yaml.to_string(), parsed)));
        self.load(key, yaml);
        if key == CUSTOM {
            self.start_settled();
        }
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

    /// The key of the target the target list shows (tracked): the one a
    /// Send goes to, the chosen target else the first; "" (the "loading"
    /// line) while [`Store::entry_waits`].
    pub fn shown_target_key(&self) -> String {
        if self.entry_waits() {
            return String::new();
        }
        let chosen = self.target.get();
        self.targets.with(|ts| {
            ts.iter()
                .find(|t| t.key == chosen)
                .or_else(|| ts.first())
                .map(|t| t.key.clone())
                .unwrap_or_default()
        })
    }

    /// Where packets to `target` come from: the chosen origin, else the default.
    pub fn current_origin(&self, target: &Target) -> Origin {
        let key = self.origin.get_untracked();
        self.parsed.with_untracked(|(c, _)| {
            parse_origin(c, &key, target).unwrap_or_else(|| replay::default_origin(c, target))
        })
    }

    /// The target a Send would go to is an HTTP entry point whose routing
    /// code is not here yet: the scenario's default target (the outermost
    /// entry point, once routing is in) or an entry point chosen by a link.
    /// Until it is here, Send is disabled rather than send the packet
    /// somewhere else; a Service chosen by hand does not wait.
    pub fn entry_waits(&self) -> bool {
        self.http_pending.get()
            && self.target.with(|key| {
                key.is_empty() || self.targets.with(|ts| ts.iter().all(|t| &t.key != key))
            })
    }

    /// The scenario offers nothing to send to (no Service with a port, no
    /// entry point), and none is on its way with HTTP routing's code.
    pub fn nothing_to_send(&self) -> bool {
        self.targets.with(Vec::is_empty) && !self.http_pending.get()
    }

    /// Send `n` new connections to the current target, `gap_ms` apart
    /// (nothing while [`Store::entry_waits`]).
    pub fn send(&self, n: u32, gap_ms: u64) {
        self.send_ids(n, gap_ms);
    }

    /// [`Store::send`], returning the id of the packet it focused (the
    /// first sent), if it sent any.
    pub fn send_ids(&self, n: u32, gap_ms: u64) -> Option<u32> {
        if untrack(|| self.entry_waits()) {
            return None;
        }
        let target = self.current_target()?;
        // An entry point sends the request form's request.
        let target = self.http.apply(target).ok()?;
        let origin = self.current_origin(&target);
        let start = self.now.get_untracked();
        let seed = self.seed.get_untracked();
        let mut last = None;
        let room = replay::MAX_PACKETS.saturating_sub(self.packets.with_untracked(Vec::len));
        let n = n.min(room as u32);
        if n == 0 {
            return None;
        }
        let base = self
            .with_played_untracked(Flights::last_id)
            .map_or(0, |id| id + 1);
        let base = base.max(
            self.packets
                .with_untracked(|ps| ps.last().map_or(0, |p| p.id + 1)),
        );
        self.packets.update(|ps| {
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
        // One packet: focus it; a burst: focus its first.
        let first = last.map(|l| l + 1 - n);
        if first.is_some() {
            self.focus.set(first);
        }
        self.playing.set(true);
        first
    }

    /// Send one HTTP request (what a lesson step's `request:` does): the
    /// form is set to it, the entry point is the one the URL's host goes to
    /// (else the one chosen), and it is sent as the Send button would.
    /// Headers are `Name: value` lines. On a bad request the form shows the
    /// located error, nothing is sent, and the error is returned.
    pub fn send_request(
        &self,
        method: &str,
        url: &str,
        headers: &str,
    ) -> Result<(), kpv_core::http::send::RequestError> {
        self.http.method.set(method.to_string());
        self.http.url.set(url.to_string());
        self.http.headers.set(headers.to_string());
        // Without routing's code the form keeps the request, unsent.
        let Some(f) = crate::lazy_http::http().filter(|_| self.http_ready.get_untracked()) else {
            return Ok(());
        };
        let req = (f.parse_request)(method, url, headers);
        let req = match req {
            Ok(r) => r,
            Err(e) => {
                self.http.error.set(Some(e));
                return Err(e);
            }
        };
        let entry = self.http_prepared.with_untracked(|p| {
            p.as_deref()
                .and_then(|p| (f.entry_for_host)(p, &req.authority))
        });
        let key = self.targets.with_untracked(|ts| {
            ts.iter()
                .filter(|t| t.kind == replay::TargetKind::Http)
                .find(|t| match (&t.dst, &entry) {
                    (kpv_core::net::trace::Dest::Http(h), Some(e)) => &h.entry == e,
                    _ => false,
                })
                .or_else(|| {
                    let cur = self.target.get_untracked();
                    ts.iter()
                        .find(|t| t.key == cur && t.kind == replay::TargetKind::Http)
                })
                .or_else(|| ts.iter().find(|t| t.kind == replay::TargetKind::Http))
                .map(|t| t.key.clone())
        });
        if let Some(k) = key {
            self.target.set(k);
        }
        self.send(1, 0);
        Ok(())
    }

    /// `f` of the replay and flights (subscribes to their changes).
    pub fn with_played<R>(&self, f: impl FnOnce(&Flights) -> R) -> R {
        let _ = self.replayed.get();
        self.played.with_value(f)
    }

    /// `f` of the replay and flights, up to date, without subscribing.
    pub fn with_played_untracked<R>(&self, f: impl FnOnce(&Flights) -> R) -> R {
        let _ = self.replayed.get_untracked();
        self.played.with_value(f)
    }

    /// The packet the panels describe: the focused one, else the latest sent.
    pub fn focused(&self) -> Option<u32> {
        self.focus
            .get()
            .or_else(|| self.with_played(Flights::last_id))
    }

    pub fn focused_trace(&self) -> Option<Trace> {
        self.with_focused_trace(Trace::clone)
    }

    /// `f` of the focused packet's trace, read in place (what runs every
    /// frame uses this rather than copying the trace).
    pub fn with_focused_trace<R>(&self, f: impl FnOnce(&Trace) -> R) -> Option<R> {
        let id = self.focused()?;
        self.with_played(|p| p.get(id).map(|(t, _)| f(t)))
    }

    pub fn focused_flight(&self) -> Option<Flight> {
        self.with_focused_flight(Flight::clone)
    }

    /// `f` of the focused packet's flight, read in place.
    pub fn with_focused_flight<R>(&self, f: impl FnOnce(&Flight) -> R) -> Option<R> {
        let id = self.focused()?;
        self.with_played(|p| p.get(id).map(|(_, fl)| f(fl)))
    }

    /// The hop of the focused packet at the current time (none for a
    /// packet whose trace has no hop).
    pub fn current_hop(&self) -> Option<usize> {
        let now = self.now.get();
        self.with_focused_flight(|f| (!f.is_empty()).then(|| f.hop_at(now)))
            .flatten()
    }

    /// What the mode in use waits for: `None` when its code is here, else
    /// whether it is on its way or failed to come.
    pub fn mode_wait(&self) -> Option<(Mode, crate::load::Fetch)> {
        let m = self.mode.get();
        self.loads.with(|l| l.waiting(&[m]))
    }

    /// Set a Pod's app state from now on (a change the learner makes,
    /// replacing one made at the same instant).
    pub fn set_app(&self, pod: &NamespacedName, state: AppState) {
        let change = AppChange::made_at(self.now.get_untracked(), pod.clone(), state);
        self.changes.update(|ch| {
            ch.retain(|c| !(c.pod == change.pod && c.at_ms == change.at_ms));
            ch.push(change);
        });
    }

    /// The app of `pod` now, as it is (a restart clears a failing
    /// liveness check), not only as last set.
    pub fn app_state(&self, pod: &NamespacedName) -> AppState {
        let t = self.now.get();
        self.changes.with(|ch| {
            self.parsed
                .with(|(c, _)| match c.pods.iter().find(|p| &p.id == pod) {
                    Some(p) => controller::app_state_now(p, ch, t),
                    None => controller::app_state_at_or_default(pod, ch, t),
                })
        })
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

impl Store {
    /// Stop at the focused packet's first hop, or its last (Home, End).
    pub fn step_to_end(&self, last: bool) {
        self.playing.set(false);
        let t = self.with_focused_flight(|f| {
            if last {
                f.last_hop_time()
            } else {
                f.first_hop_time()
            }
        });
        if let Some(t) = t.flatten() {
            self.now.set(t);
        }
    }
}

/// Origins the user can pick: `auto`, and the keys of
/// [`kpv_core::net::trace::OriginKey`] (`external`, `pod:ns/name`,
/// `node:name`) of what the cluster has; the outside client is of
/// `target`'s family.
pub fn parse_origin(c: &Cluster, key: &str, target: &Target) -> Option<Origin> {
    use kpv_core::net::trace::OriginKey;
    match OriginKey::parse(key)? {
        OriginKey::External => Some(replay::external_origin(target)),
        OriginKey::Pod(id) => c.pod(&id).map(|_| Origin::Pod { pod: id }),
        OriginKey::Node(Some(node)) => {
            let n = c.node(&node)?;
            let src = n
                .primary_ip(IpFamily::V4)
                .or_else(|| n.primary_ip(IpFamily::V6))?;
            Some(Origin::Node { node, src })
        }
        OriginKey::Node(None) => None,
    }
}
