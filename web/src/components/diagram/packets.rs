//! The packets in flight, each at its point of its flight.

use crate::components::{outcome_class, outcome_mark};
use crate::measure::n;
use crate::state::Store;
use leptos::prelude::*;

/// How one packet looks at this frame.
#[derive(Clone, Debug, PartialEq)]
struct Look {
    transform: String,
    class: String,
    mark: &'static str,
}

/// The packets in flight, one keyed element each, moved with a transform.
///
/// Hundreds of packets move every frame. Giving each its own reactive
/// attributes would make hundreds of subscribers re-subscribe to the clock per
/// frame; instead one memo computes every packet's look and one effect writes
/// only the attributes that changed onto the keyed elements.
#[component]
pub(super) fn Packets() -> impl IntoView {
    let store = expect_context::<Store>();
    let looks = Memo::new(move |_| {
        let t = store.now.get();
        let rm = store.reduced_motion.get();
        let focused = store.focused();
        // Paused, the packets in flight other than the focused one step
        // back: the card and the strip speak of the focused one.
        let paused = !store.playing.get();
        // Only the packets that can be on screen now: delivered ones are
        // retired, however many were sent before.
        // A Vec sorted by id, not a BTreeMap: built once per frame and only
        // searched, it needs none of the map's code.
        let mut looks: Vec<(u32, Look)> = store.with_played(|played| {
            played
                .on_screen(t)
                .filter_map(|(id, trace, f)| {
                    let p = f.position(t, rm)?;
                    let mut class = String::from("packet");
                    let mut mark = "";
                    if p.done {
                        class.push(' ');
                        class.push_str(outcome_class(&trace.outcome));
                        mark = outcome_mark(&trace.outcome);
                    }
                    if focused == Some(id) {
                        class.push_str(" focused");
                    } else if paused && !p.done {
                        class.push_str(" behind");
                    }
                    Some((
                        id,
                        Look {
                            transform: format!("translate({} {})", n(p.point.x), n(p.point.y)),
                            class,
                            mark,
                        },
                    ))
                })
                .collect()
        });
        kpv_core::util::order::sort_by(&mut looks, |a, b| a.0.cmp(&b.0));
        looks
    });
    let ids = Memo::new(move |_| looks.with(|l| l.iter().map(|(id, _)| *id).collect::<Vec<u32>>()));
    let group = NodeRef::<leptos::svg::G>::new();
    // What each element was last given, so unchanged attributes are not rewritten.
    // Sorted by id, as `looks`.
    let applied = StoredValue::new_local(Vec::<(u32, Look)>::new());
    Effect::new(move |_| {
        let Some(g) = group.get() else { return };
        looks.with(|looks| {
            applied.update_value(|applied| {
                let find = |v: &[(u32, Look)], id: u32| v.binary_search_by(|(k, _)| k.cmp(&id));
                applied.retain(|(id, _)| find(looks, *id).is_ok());
                let children = g.children();
                for i in 0..children.length() {
                    let Some(el) = children.item(i) else { continue };
                    let Some(id) = el
                        .get_attribute("data-id")
                        .and_then(|v| v.parse::<u32>().ok())
                    else {
                        continue;
                    };
                    let Ok(at) = find(looks, id) else { continue };
                    let look = &looks[at].1;
                    let slot = find(applied, id);
                    let before = slot.ok().map(|i| &applied[i].1);
                    if before.map(|b| &b.transform) != Some(&look.transform) {
                        let _ = el.set_attribute("transform", &look.transform);
                    }
                    if before.map(|b| &b.class) != Some(&look.class) {
                        let _ = el.set_attribute("class", &look.class);
                    }
                    if before.map(|b| b.mark) != Some(look.mark) {
                        if let Some(text) = el.last_element_child() {
                            text.set_text_content(Some(look.mark));
                        }
                    }
                    match slot {
                        Ok(i) => applied[i].1 = look.clone(),
                        Err(i) => applied.insert(i, (id, look.clone())),
                    }
                }
            });
        });
    });
    view! {
        <g class="packets" node_ref=group>
            <For each=move || ids.get() key=|id| *id let:id>
                <g data-testid="packet" data-id=id.to_string() class="packet"
                    on:click=move |_| {
                        // Clicking a packet pins its card: pause on it.
                        store.focus.set(Some(id));
                        store.playing.set(false);
                    }>
                    <circle r="9" />
                    <text class="mark" text-anchor="middle" y="4"></text>
                </g>
            </For>
        </g>
    }
}
