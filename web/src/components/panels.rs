//! The panels beside the diagram: the latest packet's verdict, its hops,
//! the EndpointSlice, and the Pods with their probe controls. (The node's
//! rules are in [`super::rules`].)

use super::app_toggle::AppToggle;
use super::{lang, outcome_class, outcome_mark, t};
use crate::i18n::{reason_key, stage_key, tr, Lang};
use crate::state::Store;
use kpv_core::net::controller::{probe_events, AppState, ProbeKind};
use kpv_core::net::trace::{Hop, HopKind, Outcome, Trace};
use leptos::prelude::*;

fn addresses(h: &Hop) -> String {
    let src = if h.before.src != h.after.src {
        format!("{} → {}", h.before.src, h.after.src)
    } else {
        h.after.src.to_string()
    };
    let dst = if h.before.dst != h.after.dst {
        format!("{} → {}", h.before.dst, h.after.dst)
    } else {
        h.after.dst.to_string()
    };
    format!("{src}  ⇒  {dst}")
}

/// Endpoint rows listed before "+N more".
const MAX_ENDPOINT_ROWS: usize = 200;

/// The verdict line for a packet: a class, a symbol and the words.
fn verdict_text(trace: &Trace, done: bool, lg: Lang) -> (&'static str, String, String) {
    if !done {
        let words = format!(
            "{} — {}",
            tr(lg, "verdict.in-flight"),
            trace.request.dst_text()
        );
        return ("in-flight", "→".into(), words);
    }
    let o = &trace.outcome;
    let words = match o {
        Outcome::Delivered {
            pod,
            endpoint,
            source,
        } => format!(
            "{} {} ({endpoint}); {} {}",
            tr(lg, "verdict.delivered"),
            pod.as_ref()
                .map(|p| p.name.clone())
                .unwrap_or_else(|| endpoint.to_string()),
            tr(lg, "verdict.sees-source"),
            source.ip()
        ),
        Outcome::TimedOut { pod, endpoint } => format!(
            "{} ({} {endpoint})",
            tr(lg, "verdict.timed-out"),
            pod.as_ref().map(|p| p.name.clone()).unwrap_or_default()
        ),
        Outcome::Dropped { reason } => format!(
            "{}: {}",
            tr(lg, "verdict.dropped"),
            tr(lg, reason_key(*reason))
        ),
        Outcome::Rejected { reason } => format!(
            "{}: {}",
            tr(lg, "verdict.rejected"),
            tr(lg, reason_key(*reason))
        ),
        Outcome::AcceptedByNode { node } => format!("{} {node}", tr(lg, "verdict.accepted")),
        Outcome::Unrouted => tr(lg, "verdict.unrouted").to_string(),
        Outcome::NoSuchName { name } => format!("{}: {name}", tr(lg, "verdict.no-name")),
        // The proxy's own answer (`answers 404`), or why it gave none.
        Outcome::Answered { pod, status } => {
            let what = match (status, kpv_core::http::send::decision(trace)) {
                (Some(s), _) => tr(lg, "http.chip.status").replace("{status}", &s.to_string()),
                (None, Some(d)) => tr(lg, crate::hops_http::reason_key(&d.reason)).to_string(),
                (None, None) => String::new(),
            };
            format!("{}: {what}", pod.name)
        }
        Outcome::ExternalName { name, target } => {
            format!(
                "{}: {name} → CNAME {target}",
                tr(lg, "verdict.external-name")
            )
        }
    };
    (outcome_class(o), outcome_mark(o).into(), words)
}

/// The latest (or focused) packet's outcome, in words and a symbol.
#[component]
pub fn VerdictPanel() -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    // A memo: read by four attributes and texts every frame, computed once
    // per change, without copying the trace.
    let text = Memo::new(move |_| {
        let lg = l.get();
        let now = store.now.get();
        let done = store
            .with_focused_flight(|f| f.decided(now))
            .unwrap_or(false);
        store
            .with_focused_trace(|trace| verdict_text(trace, done, lg))
            .unwrap_or_else(|| {
                // Packets sent wait for the mode's code: say so, not "none sent".
                let sent = store.packets.with(|ps| !ps.is_empty());
                let nowhere = store.nothing_to_send();
                let words = match store.mode_wait().filter(|_| sent) {
                    Some((m, load)) => super::modewait::wait_text(lg, m, load, true),
                    None if nowhere => tr(lg, "empty.no-targets").to_string(),
                    None => tr(lg, "empty.packets").to_string(),
                };
                ("empty", "·".to_string(), words)
            })
    });
    // Why a Service had no endpoints: which Pods, why, and until when.
    #[cfg(feature = "full")]
    let why = Memo::new(move |_| {
        let lg = l.get();
        let now = store.now.get();
        let flight = store.with_focused_flight(|f| (f.decided(now), f.start_ms));
        let Some((true, start)) = flight else {
            return Vec::new();
        };
        store
            .with_focused_trace(|trace| {
                store.parsed.with(|(cluster, _)| {
                    store.changes.with(|changes| {
                        kpv_core::net::why::no_endpoints(
                            cluster,
                            changes,
                            crate::state::timing(),
                            start,
                            trace,
                        )
                    })
                })
            })
            .flatten()
            .map(|cause| crate::why::lines(lg, &cause))
            .unwrap_or_default()
    });
    #[cfg(not(feature = "full"))]
    let why = Memo::new(|_| Vec::<String>::new());
    view! {
        <section class="panel verdict-panel">
            <h2>{t("panel.verdict")}</h2>
            <p data-testid="verdict" class=move || format!("verdict {}", text.with(|t| t.0)) data-outcome=move || text.with(|t| t.0) aria-live="polite">
                <span class="symbol" aria-hidden="true">{move || text.with(|t| t.1.clone())}</span>
                " "
                {move || text.with(|t| t.2.clone())}
            </p>
            {scheduler_line(store, l)}
            <Show when=move || why.with(|w| !w.is_empty())>
                <ul class="verdict-why" data-testid="verdict-why">
                    {move || why.get().into_iter().map(|line| view! { <li>{line}</li> }).collect_view()}
                </ul>
            </Show>
            <p class="legend-line" data-testid="legend">
                <span class="dot in-flight" aria-hidden="true">"●"</span>{t("legend.packet")}
                <span class="dot delivered" aria-hidden="true">"✓"</span>{t("legend.delivered")}
                <span class="dot dropped" aria-hidden="true">"✕"</span>{t("legend.dropped")}
                <span class="dot timed-out" aria-hidden="true">"…"</span>{t("legend.timed-out")}
            </p>
        </section>
    }
}

/// In IPVS mode, how the chosen scheduler picks (full app only).
fn scheduler_line(store: Store, l: RwSignal<crate::i18n::Lang>) -> impl IntoView {
    #[cfg(feature = "full")]
    let line = move || {
        (store.mode.get() == kpv_core::model::Mode::Ipvs)
            .then(|| crate::why::scheduler_line(l.get(), store.scheduler.get()))
    };
    #[cfg(not(feature = "full"))]
    let line = move || {
        let _ = (store, l);
        None::<&'static str>
    };
    move || {
        line().map(
            |text| view! { <p class="sched-line small" data-testid="scheduler-line">{text}</p> },
        )
    }
}

/// The event group a hop belongs to: client, load balancer, a node's
/// rules, the Pod, the reply.
fn group_of(h: &Hop) -> (String, &'static str) {
    match &h.what {
        HopKind::Dns { .. } | HopKind::Send => ("client".into(), "group.client"),
        HopKind::LoadBalancer { .. } => ("load-balancer".into(), "group.load-balancer"),
        HopKind::Deliver | HopKind::NoAnswer => ("pod".into(), "group.pod"),
        HopKind::Reply { .. } => ("reply".into(), "group.reply"),
        HopKind::Http(p) => (format!("proxy:{}", p.proxy), "http.group.proxy"),
        HopKind::Arrive { node } => (format!("node:{node}"), "group.node"),
        _ => (
            format!("node:{}", h.node.clone().unwrap_or_default()),
            "group.node",
        ),
    }
}

/// The focused packet's hops as an event list, the stepping surface: grouped
/// by where they happen, numbered from 1, passed hops ticked, the current
/// one marked; each line in plain words with the raw rule behind a
/// disclosure. Click a line to jump there.
#[component]
pub fn HopList() -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    let current = Memo::new(move |_| store.current_hop());
    let hops = move || {
        let Some(t) = store.focused_trace() else {
            return Vec::new();
        };
        let stages = store
            .parsed
            .with(|(c, _)| kpv_core::net::trace::stages(c, &t));
        t.hops.into_iter().zip(stages).collect::<Vec<_>>()
    };
    // Each hop's group (consecutive hops in the same place), and the group
    // the current hop is in: the other groups fold to one line each, so a
    // whole packet's groups fit beside the diagram.
    let groups = Memo::new(move |_| {
        store
            .with_focused_trace(|t| {
                let mut out: Vec<usize> = Vec::with_capacity(t.hops.len());
                let mut last = String::new();
                for h in &t.hops {
                    let (g, _) = group_of(h);
                    let next = out.last().map(|&x| x + usize::from(g != last)).unwrap_or(0);
                    out.push(next);
                    last = g;
                }
                out
            })
            .unwrap_or_default()
    });
    let current_group = Memo::new(move |_| {
        let hop = current.get().unwrap_or(0);
        groups.with(|g| g.get(hop).copied().unwrap_or(0))
    });
    let list = NodeRef::<leptos::html::Ol>::new();
    keep_in_view(list, "li.current", move || current.get().map(|c| c as i64));
    view! {
        <section class="panel events-panel">
            <h2>{t("panel.hops")}</h2>
            <ol data-testid="hop-list" class="hop-list" node_ref=list>
                {move || {
                    let lg = l.get();
                    let gs = groups.get();
                    let all = hops();
                    let mut last_group = usize::MAX;
                    all.iter().cloned().enumerate().map(|(i, (h, stage))| {
                        let gi = gs.get(i).copied().unwrap_or(0);
                        let heading = (gi != last_group).then(|| {
                            let (group, group_key) = group_of(&h);
                            let node = group.strip_prefix("node:").unwrap_or("").to_string();
                            let count = gs.iter().filter(|&&g| g == gi).count();
                            let last_hop = gs.iter().rposition(|&g| g == gi).unwrap_or(i);
                            let words = format!("{} ({count})", tr(lg, group_key).replace("{node}", &node));
                            view! {
                                <li class="group" data-testid="hop-group" data-group=group
                                    class:current-group=move || current_group.get() == gi>
                                    <button class="group-button" on:click=move |_| {
                                        store.playing.set(false);
                                        if let Some(tm) = store.focused_flight().and_then(|f| f.hop_time(i)) {
                                            store.now.set(tm);
                                        }
                                    }>
                                        <span class="hop-n" aria-hidden="true">{move || {
                                            let c = current.get();
                                            if current_group.get() == gi { "▾" } else if c.is_some_and(|c| c > last_hop) { "✓" } else { "▸" }
                                        }}</span>
                                        {words}
                                    </button>
                                </li>
                            }
                        });
                        last_group = gi;
                        let title = crate::hops::summary(lg, &h);
                        let addr = addresses(&h);
                        // The end of a chain is no rule: said in the reader's words.
                        let raw = h.step.as_ref().map(|s| {
                            let rule = if s.action == kpv_core::net::modes::StepAction::Return && s.line.is_none() {
                                format!("({})", tr(lg, "hop.end-of-chain"))
                            } else {
                                s.rule.clone()
                            };
                            (s.table_chain.clone(), rule)
                        });
                        let badge = stage.map(|s| view! { <span class=format!("stage stage-{}", s.word())>{tr(lg, stage_key(s))}</span> });
                        view! {
                            {heading}
                            <li data-testid="hop" data-hop=hop_kind_word(&h.what) data-stage=stage.map(|s| s.word()).unwrap_or("")
                                data-n=(i + 1).to_string()
                                class:folded=move || current_group.get() != gi
                                class:current=move || current.get() == Some(i)
                                aria-current=move || (current.get() == Some(i)).then_some("step")
                                class:visited=move || current.get().is_some_and(|c| c > i)>
                                <button class="hop-button" on:click=move |_| {
                                    store.playing.set(false);
                                    if let Some(tm) = store.focused_flight().and_then(|f| f.hop_time(i)) {
                                        store.now.set(tm);
                                    }
                                }>
                                    <span class="hop-n" aria-hidden="true">
                                        {move || if current.get() == Some(i) { "▶".to_string() } else if current.get().is_some_and(|c| c > i) { "✓".to_string() } else { String::new() }}
                                    </span>
                                    <span class="hop-ordinal">{format!("{}.", i + 1)}</span>
                                    <span class="hop-body">
                                        <span class="hop-title">{badge}{title}</span>
                                        <span class="hop-addr mono">{addr}</span>
                                    </span>
                                </button>
                                {raw.map(|(chain, rule)| view! {
                                    <details class="hop-raw">
                                        <summary>{tr(lg, "events.raw")}</summary>
                                        <code class="mono">{format!("{chain}: {rule}")}</code>
                                    </details>
                                })}
                            </li>
                        }
                    }).collect_view()
                }}
            </ol>
        </section>
    }
}

/// The current hop: which hop of how many, and what happened, never cut.
/// Embedded, where the packet card carries the hop's sentence and the bar
/// has room for one short line: which hop, or at rest the scenario's title
/// and the mode.
#[component]
pub fn HopCaption(#[prop(optional)] with_scenario: bool) -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    let text = Memo::new(move |_| {
        let lg = l.get();
        let hop = store.current_hop();
        let scenario = store.scenario.get();
        let mode = store.mode.get().as_str();
        let waiting = store.mode_wait();
        let line = hop
            .filter(|_| waiting.is_none())
            .and_then(|i| {
                store.with_focused_trace(|t| {
                    t.hops.get(i).map(|h| {
                        let which = tr(lg, "caption.hop")
                            .replace("{i}", &(i + 1).to_string())
                            .replace("{n}", &t.hops.len().to_string());
                        if with_scenario {
                            which
                        } else {
                            format!("{which} · {}", crate::hops::summary(lg, h))
                        }
                    })
                })
            })
            .flatten()
            .or_else(|| waiting.map(|(m, load)| super::modewait::wait_text(lg, m, load, true)));
        if with_scenario {
            // The scenario's title, as its reader knows it (not its key).
            let title = crate::scenarios::PRESETS
                .iter()
                .find(|p| p.key == scenario)
                .map_or_else(
                    || tr(lg, "scenario.custom").to_string(),
                    |p| p.title(lg).to_string(),
                );
            line.unwrap_or_else(|| format!("{title} · {mode}"))
        } else {
            line.unwrap_or_else(|| tr(lg, "caption.idle").to_string())
        }
    });
    view! {
        <p class="hop-caption" data-testid="hop-caption" aria-live="polite" title=move || text.get()>{move || text.get()}</p>
    }
}

/// Scroll a list so its `selector` child is visible, whenever `key` changes,
/// without scrolling the page (only the list's own scroll position moves;
/// the list must be `position: relative` and scroll itself).
pub(crate) fn keep_in_view<E>(
    container: NodeRef<E>,
    selector: &'static str,
    key: impl Fn() -> Option<i64> + 'static,
) where
    E: leptos::html::ElementType,
    E::Output: Clone + wasm_bindgen::JsCast + 'static,
{
    Effect::new(move |_| {
        let _ = key();
        let Some(el) = container.get() else { return };
        let el: web_sys::HtmlElement = wasm_bindgen::JsCast::unchecked_into(el);
        // After this render: the new child exists once the microtask runs.
        request_animation_frame(move || {
            let Ok(Some(child)) = el.query_selector(selector) else {
                return;
            };
            let child: web_sys::HtmlElement = wasm_bindgen::JsCast::unchecked_into(child);
            // The list is `position: relative`, so offsetTop is within it.
            let (top, h) = (child.offset_top(), child.offset_height());
            let (view_top, view_h) = (el.scroll_top(), el.client_height());
            if top < view_top || top + h > view_top + view_h {
                // A third of the way down, but never with its end cut off
                // (nor its start, when it is taller than the list).
                let at = (top - view_h / 3).max(top + h - view_h).min(top);
                el.set_scroll_top(at.max(0));
            }
        });
    });
}

fn hop_kind_word(k: &HopKind) -> &'static str {
    match k {
        HopKind::Dns { .. } => "dns",
        HopKind::Send => "send",
        HopKind::LoadBalancer { .. } => "load-balancer",
        HopKind::Arrive { .. } => "arrive",
        HopKind::Established { .. } => "established",
        HopKind::Rule => "rule",
        HopKind::Masquerade { .. } => "masquerade",
        HopKind::PodNetwork { .. } => "pod-network",
        HopKind::Deliver => "deliver",
        HopKind::NoAnswer => "no-answer",
        HopKind::Drop { .. } => "drop",
        HopKind::Reject { .. } => "reject",
        HopKind::Reply { .. } => "reply",
        HopKind::Http(p) => {
            use kpv_core::http::send::ProxyStage;
            match p.stage {
                ProxyStage::Listener => "http-listener",
                ProxyStage::Route => "http-route",
                ProxyStage::Rule => "http-rule",
                ProxyStage::Filters => "http-filters",
                ProxyStage::Backend => "http-backend",
            }
        }
    }
}

/// The endpoints of every Service as the EndpointSlice API has them now.
#[component]
pub fn EndpointList() -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    // A large cluster has 100,000s of endpoints: the first rows are drawn
    // and the rest counted, until the reader asks for all of them.
    let show_all = RwSignal::new(false);
    // A new scenario starts short again.
    Effect::new(move |_| {
        store.parsed.track();
        show_all.set(false);
    });
    view! {
        <section class="panel">
            <h2>{t("panel.endpoints")}</h2>
            <ul data-testid="endpoint-list" class="endpoint-list">
                {move || store.slices.with(|slices| {
                    let limit = if show_all.get() { usize::MAX } else { MAX_ENDPOINT_ROWS };
                    let mut rows = Vec::new();
                    let mut hidden = 0usize;
                    for s in slices {
                        for e in &s.endpoints {
                            for ip in &e.addresses {
                                if rows.len() >= limit {
                                    hidden += 1;
                                    continue;
                                }
                                let port = s.ports.first().map(|p| p.port).unwrap_or(0);
                                let addr = std::net::SocketAddr::new(*ip, port).to_string();
                                let pod = e.target_pod.as_ref().map(|p| p.name.clone()).unwrap_or_default();
                                let mark = if e.ready { "✔" } else { "✖" };
                                let mut flags = Vec::new();
                                if e.ready { flags.push(tr(l.get(), "ep.ready")); }
                                if e.serving { flags.push(tr(l.get(), "ep.serving")); }
                                if e.terminating { flags.push(tr(l.get(), "ep.terminating")); }
                                // Topology hints, as `kubectl get endpointslice -o yaml` names them.
                                let hints = e.hints.for_zones.iter().map(|z| format!("forZones: {z}"))
                                    .chain(e.hints.for_nodes.iter().map(|n| format!("forNodes: {n}")))
                                    .collect::<Vec<_>>();
                                let hints = if hints.is_empty() { String::new() } else { format!(" · {}", hints.join(", ")) };
                                rows.push(view! {
                                    <li data-testid="endpoint" data-ip=ip.to_string() data-ready=e.ready.to_string()
                                        data-serving=e.serving.to_string() data-terminating=e.terminating.to_string()
                                        class:not-ready=!e.ready>
                                        <span class="mark">{mark}</span>
                                        <span class="mono">{addr}</span>
                                        <span class="muted">{format!(" {} · {} · {}{hints}", s.service_name, pod, flags.join(", "))}</span>
                                    </li>
                                });
                            }
                        }
                    }
                    if rows.is_empty() {
                        return view! { <li class="muted">{tr(l.get(), "empty.endpoints")}</li> }.into_any();
                    }
                    let more = (hidden > 0).then(|| view! {
                        <li class="muted" data-testid="endpoint-more" data-count=hidden.to_string()>
                            {tr(l.get(), "ep.more").replace("{n}", &hidden.to_string())}
                            " "
                            <button data-testid="endpoint-show-all" on:click=move |_| show_all.set(true)>{tr(l.get(), "btn.show-all")}</button>
                        </li>
                    });
                    view! { {rows.collect_view()} {more} }.into_any()
                })}
            </ul>
        </section>
    }
}

/// Each Pod with its readiness, the last probe, and the controls.
#[component]
pub fn PodsPanel() -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    view! {
        <section class="panel">
            <h2>{t("panel.pods")}</h2>
            <ul class="pods">
                {move || store.parsed.with(|(c, _)| c.pods.iter().map(|p| {
                    let id = p.id.clone();
                    let name = p.id.name.clone();
                    let pod = p.clone();
                    let id_r = id.clone();
                    let id_s = id.clone();
                    let liveness = ProbeKind::Liveness.of(p).is_some();
                    let ready = Memo::new(move |_| store.pod_ready.with(|r| r.get(&id_r).copied().unwrap_or(false)));
                    let state = move || store.app_state(&id_s);
                    let probe = move || {
                        let lg = l.get();
                        if pod.readiness_probe().is_none() {
                            return tr(lg, "probe.none").to_string();
                        }
                        let t = store.now.get();
                        store.changes.with(|ch| {
                            let events = probe_events(&pod, ch, t);
                            let last = events
                                .iter()
                                .rev()
                                .find(|e| e.kind == ProbeKind::Readiness)
                                .map(|e| {
                                    let threshold = if e.success { pod.readiness_probe().map(|p| p.success_threshold).unwrap_or(1) } else { pod.readiness_probe().map(|p| p.failure_threshold).unwrap_or(3) };
                                    format!("{} {} {}/{} @ {} s", tr(lg, "probe.last"), tr(lg, if e.success { "probe.ok" } else { "probe.failed" }), e.run.min(threshold), threshold, super::seconds(e.at_ms))
                                })
                                .unwrap_or_default();
                            match events.iter().filter(|e| e.restarted).count() {
                                0 => last,
                                n => format!("{last} · {}", tr(lg, "probe.restarts").replace("{n}", &n.to_string())),
                            }
                        })
                    };
                    view! {
                        <li class="pod-row" class:not-ready=move || !ready.get()>
                            <div>
                                <strong>{name.clone()}</strong>
                                <span class="state">{move || if ready.get() { format!("✔ {}", tr(l.get(), "state.ready")) } else { format!("✖ {}", tr(l.get(), "state.not-ready")) }}</span>
                            </div>
                            <div class="small muted">
                                {move || tr(l.get(), match state() { AppState::Healthy => "state.app-healthy", AppState::FailingReadiness => "state.app-failing", AppState::Down => "state.app-down", AppState::FailingLiveness => "state.app-failing-liveness" })}
                                " · "
                                {probe}
                            </div>
                            <div class="buttons">
                                <AppToggle pod=id.clone() state=AppState::FailingReadiness testid=format!("pod-{name}-readiness") keys=("btn.fail-readiness", "btn.pass-readiness") />
                                <AppToggle pod=id.clone() state=AppState::Down testid=format!("pod-{name}-app") keys=("btn.app-down", "btn.app-up") />
                                {liveness.then(|| view! {
                                    <AppToggle pod=id.clone() state=AppState::FailingLiveness testid=format!("pod-{name}-liveness") keys=("btn.fail-liveness", "btn.pass-liveness") />
                                })}
                            </div>
                        </li>
                    }
                }).collect_view())}
            </ul>
        </section>
    }
}
