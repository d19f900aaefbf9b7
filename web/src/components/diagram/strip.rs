//! The pipeline strip: the open node's kube-proxy steps the focused packet
//! takes, the current one marked, with what each step rewrote.

use super::BoxRect;
use crate::components::lang;
use crate::hops::{chip_text, short, step_name};
use crate::i18n::tr;
use crate::measure::{fits, n};
use crate::state::Store;
use kpv_core::view::pipeline::{compared_so_far, pipelines, skeleton, Pipeline, Slot};
use kpv_core::view::scene::Rect;
use leptos::prelude::*;

/// The focused packet's pipelines, slots and running rule count.
type PipeInfo = (Vec<Pipeline>, Vec<Option<Slot>>, Vec<usize>);

/// (pipeline shown, current box, hop, rules compared so far).
type At = (usize, Option<usize>, usize, usize);

/// The open node's pipeline: the steps the focused packet takes through
/// that node's kube-proxy rules, the current one marked, with what each
/// step rewrote; at rest, the mode's shape for the kube-proxy node.
#[component]
pub(super) fn PipelineStrip() -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    let pointed = crate::components::pointing::pointed();
    let info = Memo::new(move |_| -> Option<PipeInfo> {
        store.with_focused_trace(|t| {
            let (p, s) = pipelines(t);
            (p, s, compared_so_far(t))
        })
    });
    let at = at_memo(store, info);
    move || {
        let lg = l.get();
        let mode = store.mode.get();
        let (strip, scene_nodes) = store.scene.with(|s| {
            (
                s.strip,
                s.nodes
                    .iter()
                    .map(|n| (n.name.clone(), n.rect))
                    .collect::<Vec<_>>(),
            )
        });
        let mode_word = mode.as_str();
        let current = at.get();
        let boxes = strip_boxes(store, info, current, lg, mode);
        let node = match current {
            Some((shown, ..)) => info.with(|i| {
                i.as_ref()
                    .and_then(|(p, _, _)| p.get(shown))
                    .map(|p| p.node.clone())
            }),
            None => store
                .parsed
                .with(|(c, _)| c.proxy_node().map(|n| n.name.clone())),
        }
        .unwrap_or_default();
        let at_rest = current.is_none();
        let (proxy, socket) = current
            .and_then(|(shown, ..)| {
                info.with(|i| {
                    i.as_ref()
                        .and_then(|(p, _, _)| p.get(shown))
                        .map(|p| (p.proxy.clone(), p.socket.clone()))
                })
            })
            .unwrap_or_default();
        let heading = if let Some((m, load)) = store.mode_wait() {
            crate::components::modewait::wait_text(lg, m, load, true)
        } else if let Some(pod) = &proxy {
            tr(lg, "http.pipeline").replace("{pod}", &pod.name)
        } else if let Some(pod) = &socket {
            tr(lg, "pipeline.socket")
                .replace("{pod}", &pod.name)
                .replace("{mode}", mode_word)
        } else if at_rest {
            tr(lg, "pipeline.rest").replace("{mode}", mode_word)
        } else {
            tr(lg, "pipeline.node")
                .replace("{node}", &node)
                .replace("{mode}", mode_word)
        };
        let compared =
            current.map(|c| tr(lg, "pipeline.compared").replace("{n}", &c.3.to_string()));
        let chars: Vec<(usize, usize)> = boxes.iter().map(|b| b.chars).collect();
        let zoom = scene_nodes
            .iter()
            .find(|(nm, _)| *nm == node)
            .map(|(_, r)| zoom_path(strip, *r));
        let views = boxes
            .into_iter()
            .enumerate()
            .map(|(k, b)| {
                let StripBox { key, name, detail, current: is_current, passed, chain, .. } = b;
                let r = store.scene.with(|s| s.strip_box(k, &chars));
                let tick = if passed { "✓ " } else if is_current { "▶ " } else { "" };
                let title = format!("{name}\n{detail}");
                let rk = format!("step:{key}");
                view! {
                    <g class="pipeline-step" class:current=is_current class:passed=passed data-testid="pipeline-step"
                        data-step=key data-current=is_current.to_string()
                        data-ref=rk.clone() class:pointed=move || pointed.has(&rk)>
                        <title>{title}</title>
                        <BoxRect rect=r class="step-box" />
                        <text x=n(r.x + 8.0) y=n(r.y + 20.0) class="strong">{short(&format!("{tick}{name}"), fits(r.w - 14.0, 16.5))}</text>
                        <text x=n(r.x + 8.0) y=n(r.y + 38.0) class="mono chip" class:chain=chain>{short(&detail, fits(r.w - 14.0, 16.0))}</text>
                    </g>
                }
            })
            .collect_view();
        view! {
            <g class="node-pipeline" class:at-rest=at_rest data-testid="node-pipeline" data-node=node.clone() data-mode=mode_word>
                {zoom.map(|d| view! { <path class="zoom" d=d /> })}
                <text x=n(strip.x) y=n(strip.y - 6.0) class="strong" data-testid="pipeline-heading">{heading}</text>
                {compared.map(|c| view! { <text x=n(strip.x + strip.w) y=n(strip.y - 6.0) class="strong" text-anchor="end" data-testid="rules-compared">{c}</text> })}
                {views}
            </g>
        }
    }
}

/// A strip box as drawn.
struct StripBox {
    key: &'static str,
    name: String,
    detail: String,
    current: bool,
    passed: bool,
    /// Its detail is a chain's name (`.chain`: it may be shortened).
    chain: bool,
    /// (name, wider line) characters, for [`kpv_core::view::scene::Scene::strip_box`].
    chars: (usize, usize),
}

/// Where the focused packet is on the strip: (pipeline shown, current box,
/// hop, rules compared so far); `None` at rest.
fn at_memo(store: Store, info: Memo<Option<PipeInfo>>) -> Memo<Option<At>> {
    Memo::new(move |_| {
        let hop = store.current_hop();
        info.with(|i| {
            let (pipes, slots, compared) = i.as_ref()?;
            if pipes.is_empty() {
                return None;
            }
            let hop = hop.unwrap_or(0);
            let here = slots.get(hop).copied().flatten();
            let shown = here.map(|s| s.pipeline).unwrap_or_else(|| {
                slots[..=hop.min(slots.len().saturating_sub(1))]
                    .iter()
                    .rev()
                    .find_map(|s| s.map(|s| s.pipeline))
                    .unwrap_or(0)
            });
            Some((
                shown,
                here.filter(|s| s.pipeline == shown).map(|s| s.boxed),
                hop,
                compared.get(hop).copied().unwrap_or(0),
            ))
        })
    })
}

/// The boxes of the pipeline shown: the focused packet's, else the mode's
/// shape at rest.
fn strip_boxes(
    store: Store,
    info: Memo<Option<PipeInfo>>,
    current: Option<At>,
    lg: crate::i18n::Lang,
    mode: kpv_core::model::Mode,
) -> Vec<StripBox> {
    match current {
        Some((shown, cur, hop, _)) => info
            .with(|i| {
                i.as_ref()
                    .and_then(|(pipes, _, _)| pipes.get(shown))
                    .map(|p| {
                        let chars = store.scene.with(|s| s.box_chars(&p.boxes));
                        p.boxes
                            .iter()
                            .zip(chars)
                            .enumerate()
                            .map(|(k, (b, chars))| {
                                let name = step_name(lg, b.key);
                                let detail = if !b.chips.is_empty() {
                                    b.chips
                                        .iter()
                                        .map(|c| chip_text(lg, c))
                                        .collect::<Vec<_>>()
                                        .join(" · ")
                                } else if name.contains(&b.chain) || b.chain == b.key {
                                    String::new()
                                } else {
                                    b.chain.clone()
                                };
                                let passed =
                                    b.hops.last().is_some_and(|&h| h < hop) && cur != Some(k);
                                StripBox {
                                    key: b.key,
                                    // A chipless box's detail is its
                                    // chain's name (where the packet
                                    // is, which may be shortened), not
                                    // a value.
                                    chain: b.chips.is_empty() && !detail.is_empty(),
                                    name,
                                    detail,
                                    current: cur == Some(k),
                                    passed,
                                    chars,
                                }
                            })
                            .collect()
                    })
            })
            .unwrap_or_default(),
        None => skeleton(mode)
            .iter()
            .map(|&key| StripBox {
                key,
                name: step_name(lg, key),
                detail: String::new(),
                current: false,
                passed: false,
                chain: false,
                chars: store.scene.with(|s| s.bare_box_chars(key)),
            })
            .collect(),
    }
}

/// The funnel from the node's box to the strip below it.
fn zoom_path(strip: Rect, r: Rect) -> String {
    let (sx0, sx1, sy) = (strip.x, strip.x + strip.w, strip.y + strip.h);
    format!(
        "M{} {} L{} {} L{} {} L{} {} Z",
        n(sx0),
        n(sy),
        n(sx1),
        n(sy),
        n(r.x + r.w),
        n(r.y),
        n(r.x),
        n(r.y)
    )
}
