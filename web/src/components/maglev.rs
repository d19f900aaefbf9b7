//! The Maglev view under a node's rules: how many of one frontend's M
//! lookup slots each backend holds (Cilium's Maglev, IPVS's `mh`), as bars
//! that add up to M. A connection's hash picks a slot; the slot names the
//! backend, so a backend's share of slots is its share of new connections.

use super::{lang, t};
use crate::i18n::tr;
use crate::numbers::one_decimal;
use crate::state::Store;
use kpv_core::net::modes::hash_table::HashTable;
use leptos::prelude::*;

/// A frontend as the rules print it: `203.0.113.10:80/TCP`.
fn frontend(t: &HashTable) -> String {
    format!("{}/{}", t.frontend, t.protocol.as_upper())
}

/// The shown node's tables, with a chooser when it has more than one.
#[component]
pub fn MaglevView() -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    let tables = Memo::new(move |_| {
        let node = store.rules_shown.get();
        store.rules.with(|r| {
            r.as_ref()
                .filter(|r| Some(&r.node) == node.as_ref())
                .map(|r| r.tables.clone())
                .unwrap_or_default()
        })
    });
    // The frontend chosen, by position (the first when the list changed
    // under it).
    let chosen = RwSignal::new(0usize);
    let table = move || tables.with(|ts| ts.get(chosen.get()).or_else(|| ts.first()).cloned());
    let rows = move || {
        table().map(|tb| {
            let m = tb.size.max(1) as f64;
            let sum = tr(l.get(), "maglev.sum")
                .replace("{filled}", &tb.filled().to_string())
                .replace("{m}", &tb.size.to_string());
            let shares = tb.shares.iter().map(|s| {
                let pct = s.slots as f64 * 100.0 / m;
                view! {
                    <li data-testid="maglev-share" data-slots=s.slots.to_string()>
                        <span class="mono">{s.backend.to_string()}</span>
                        <span class="maglev-bar"><span style=format!("width:{}%", one_decimal(pct))></span></span>
                        <span class="mono">{format!("{} ({} %)", s.slots, one_decimal(pct))}</span>
                    </li>
                }
            }).collect_view();
            view! {
                <p class="small muted" data-testid="maglev-sum" data-m=tb.size.to_string()>{sum}</p>
                <ul class="maglev-shares">{shares}</ul>
            }
        })
    };
    view! {
        <Show when=move || tables.with(|ts| !ts.is_empty())>
            <div class="maglev" data-testid="maglev-view">
                <h3>{t("maglev.title")}</h3>
                <Show when=move || tables.with(|ts| ts.len() > 1)
                    fallback=move || view! { <p class="mono small">{move || table().map(|tb| frontend(&tb))}</p> }>
                    <select data-testid="maglev-frontend" aria-label=t("maglev.frontend")
                        on:change=move |ev| chosen.set(event_target_value(&ev).parse().unwrap_or(0))>
                        {move || tables.with(|ts| ts.iter().enumerate().map(|(i, tb)| view! {
                            <option value=i.to_string() selected=move || chosen.get() == i>{frontend(tb)}</option>
                        }).collect_view())}
                    </select>
                </Show>
                {rows}
            </div>
        </Show>
    }
}
