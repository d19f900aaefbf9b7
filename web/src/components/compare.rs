//! The compare view: the focused packet (same scenario, source, destination,
//! send time and seed) played in two to four kube-proxy modes side by side,
//! in sync with the app's clock, each with its pipeline, the step it is at
//! and the rules it has compared so far.
//!
//! Markup only: each mode's trace comes from `kpv_core::session::replay` with that one
//! packet, its steps from `kpv_core::view::pipeline`, its timing from a
//! `kpv_core::view::timeline::Flight` on the app's scene.

use super::{lang, t};
use crate::hops::{chip_text, step_name};
use crate::i18n::tr;
use crate::state::Store;
use kpv_core::model::Mode;
use kpv_core::session::replay;
use kpv_core::view::pipeline::{compared_so_far, pipelines, Pipeline, Slot};
use kpv_core::view::timeline::Flight;
use leptos::prelude::*;

/// One mode's run of the focused packet.
#[derive(Clone, Debug, PartialEq)]
struct Run {
    mode: Mode,
    pipes: Vec<Pipeline>,
    slots: Vec<Option<Slot>>,
    compared: Vec<usize>,
    flight: Flight,
    verdict: String,
}

/// The button that swaps the diagram for the compare view and back.
#[component]
pub fn CompareToggle(
    comparing: RwSignal<bool>,
    /// Another view in the diagram's place, closed when this one opens.
    #[prop(optional)]
    others: Option<RwSignal<bool>>,
) -> impl IntoView {
    let store = expect_context::<Store>();
    view! {
        <button class="compare-toggle" data-testid="compare-toggle" aria-pressed=move || comparing.get().to_string()
            on:click=move |_| {
                comparing.update(|c| *c = !*c);
                if let Some(o) = others {
                    o.set(false);
                }
                // Never a blank view: with nothing sent yet, the compare
                // view sends the packet it compares (and stops on it).
                if comparing.get_untracked() && store.packets.with_untracked(Vec::is_empty) {
                    store.send(1, 0);
                }
            }>
            {move || if comparing.get() { t("compare.back")() } else { t("compare.show")() }}
        </button>
    }
}

#[component]
pub fn CompareView() -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    // kube-proxy's three current modes and Cilium, which replaces it
    // (userspace, removed in 1.26, can be ticked).
    let chosen = RwSignal::new(vec![
        Mode::Iptables,
        Mode::Ipvs,
        Mode::Nftables,
        Mode::Cilium,
    ]);
    // The chosen modes' code is fetched when the view opens or one is
    // ticked; a mode still on its way has no column yet (the line above the
    // columns says so).
    Effect::new(move |_| crate::mode_fetch::request(store, &chosen.get()));
    let runs = Memo::new(move |_| {
        let modes: Vec<Mode> = chosen.with(|c| {
            store
                .loads
                .with(|l| c.iter().copied().filter(|m| l.ready(*m)).collect())
        });
        let id = store.focused()?;
        let packet = store
            .packets
            .with(|ps| ps.iter().find(|p| p.id == id).cloned())?;
        let sched = store.scheduler.get();
        store.parsed.with(|(c, _)| {
            store.changes.with(|ch| {
                store.scene.with(|scene| {
                    let runs = modes
                        .iter()
                        .filter_map(|&mode| {
                            let inputs = crate::state::inputs(
                                c,
                                mode,
                                sched,
                                ch,
                                std::slice::from_ref(&packet),
                            );
                            let trace = replay::replay(&inputs).pop()?;
                            let (pipes, slots) = pipelines(&trace);
                            Some(Run {
                                mode,
                                compared: compared_so_far(&trace),
                                flight: Flight::new(scene, &trace, packet.at_ms),
                                verdict: trace.verdict.word().to_string(),
                                pipes,
                                slots,
                            })
                        })
                        .collect::<Vec<_>>();
                    Some(runs)
                })
            })
        })
    });
    let hops_now = Memo::new(move |_| {
        let now = store.now.get();
        runs.with(|rs| {
            rs.as_ref()
                .map(|rs| {
                    rs.iter()
                        .map(|r| {
                            if r.flight.is_empty() {
                                0
                            } else {
                                r.flight.hop_at(now)
                            }
                        })
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
    });
    let toggle = move |m: Mode| {
        chosen.update(|c| {
            if c.contains(&m) {
                if c.len() > 2 {
                    c.retain(|x| *x != m);
                }
            } else {
                c.push(m);
                c.sort_by_key(|x| Mode::ALL.iter().position(|y| y == x));
            }
        })
    };
    view! {
        <section class="panel compare" data-testid="compare-view">
            <h2>{t("compare.title")}</h2>
            <div class="buttons">
                {Mode::ALL.into_iter().map(|m| view! {
                    <label class="check">
                        <input type="checkbox" data-testid=format!("compare-{}", m.as_str())
                            prop:checked=move || chosen.with(|c| c.contains(&m))
                            on:change=move |_| toggle(m) />
                        <span>{m.as_str()}</span>
                    </label>
                }).collect_view()}
            </div>
            <super::modewait::ModeWait modes=chosen id="compare-mode" />
            {move || match runs.get() {
                None => view! { <p class="muted">{t("compare.empty")}</p> }.into_any(),
                Some(runs) => {
                    // Re-drawn when a mode reaches another hop, not every frame.
                    let hops = hops_now.get();
                    let lg = l.get();
                    view! {
                        <div class="compare-grid">
                            {runs.into_iter().enumerate().map(|(k, r)| {
                                let hop = hops.get(k).copied().unwrap_or(0);
                                let here = r.slots.get(hop).copied().flatten();
                                let compared = r.compared.get(hop).copied().unwrap_or(0);
                                let total = r.compared.last().copied().unwrap_or(0);
                                view! {
                                    <div class="compare-mode" data-testid="compare-mode" data-mode=r.mode.as_str()
                                        data-compared=compared.to_string() data-total=total.to_string()>
                                        <h3>{r.mode.as_str()}" · "{r.verdict.clone()}</h3>
                                        <p class="strong" data-testid="compare-count">{tr(lg, "pipeline.compared").replace("{n}", &compared.to_string())}</p>
                                        <ol class="compare-steps">
                                            {r.pipes.iter().enumerate().flat_map(|(pi, p)| {
                                                p.boxes.iter().enumerate().map(move |(bi, b)| (pi, bi, b.clone()))
                                            }).map(|(pi, bi, b)| {
                                                let current = here.is_some_and(|s| s.pipeline == pi && s.boxed == bi);
                                                let passed = b.hops.last().is_some_and(|&h| h < hop) && !current;
                                                let chips = b.chips.iter().map(|c| chip_text(lg, c)).collect::<Vec<_>>().join(" · ");
                                                view! {
                                                    <li class:current=current class:passed=passed data-step=b.key>
                                                        <span class="strong">{step_name(lg, b.key)}</span>
                                                        {(!chips.is_empty()).then(|| view! { <span class="mono small">{chips}</span> })}
                                                    </li>
                                                }
                                            }).collect_view()}
                                        </ol>
                                    </div>
                                }
                            }).collect_view()}
                        </div>
                    }.into_any()
                }
            }}
        </section>
    }
}
