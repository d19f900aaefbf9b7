//! The Events feed beside the event list: what `kubectl get events` and
//! `kubectl get endpoints --watch` would print as probes fail and pass, in
//! simulated time — the kuard readiness demo on one screen.
//!
//! The events come from `kpv_core::net::controller::events::events`, computed in
//! ten-second slices of simulated time (not every frame) and shown up to now.

use super::{lang, t};
use crate::hops::event_line;
use crate::state::{timing, Store};
use kpv_core::net::controller::events::{events, ClusterEvent};
use leptos::prelude::*;

/// How far ahead events are computed at once (simulated ms).
const SLICE_MS: u64 = 10_000;
/// Events listed at most (the newest).
const MAX_SHOWN: usize = 60;

/// Every event up to the end of the current ten-second slice.
#[derive(Clone, Copy)]
pub struct Events(pub Memo<Vec<ClusterEvent>>);

impl Events {
    pub fn new(store: Store) -> Events {
        let horizon = Memo::new(move |_| (store.now.get() / SLICE_MS + 1) * SLICE_MS);
        Events(Memo::new(move |_| {
            let until = horizon.get();
            store
                .parsed
                .with(|(c, _)| store.changes.with(|ch| events(c, ch, timing(), until)))
        }))
    }
}

#[component]
pub fn EventsFeed() -> impl IntoView {
    let store = expect_context::<Store>();
    let Events(all) = expect_context::<Events>();
    let l = lang();
    let shown = Memo::new(move |_| {
        let now = store.now.get();
        all.with(|ev| {
            let upto = ev.partition_point(|e| e.at_ms <= now);
            ev[upto.saturating_sub(MAX_SHOWN)..upto].to_vec()
        })
    });
    view! {
        <ol class="events" data-testid="events" reversed=true>
            {move || {
                let lg = l.get();
                let evs = shown.get();
                if evs.is_empty() {
                    return view! { <li class="muted">{t("events.empty")}</li> }.into_any();
                }
                store.parsed.with(|(c, _)| {
                    evs.iter().rev().map(|e| {
                        let (source, line) = event_line(lg, c, &e.kind);
                        let kind = match &e.kind {
                            kpv_core::net::controller::events::EventKind::ProbeFailed { .. } => "probe",
                            kpv_core::net::controller::events::EventKind::Restarted { .. } => "restart",
                            kpv_core::net::controller::events::EventKind::Ready { .. } => "ready",
                            kpv_core::net::controller::events::EventKind::Endpoints { .. } => "endpoints",
                            kpv_core::net::controller::events::EventKind::ProxySynced { .. } => "sync",
                        };
                        view! {
                            <li data-testid="event" data-kind=kind class=format!("event {kind}")>
                                <span class="event-time mono">{format!("{}s", super::seconds(e.at_ms))}</span>
                                <span class="event-source">{source}</span>
                                <span class="event-line mono">{line}</span>
                            </li>
                        }
                    }).collect_view().into_any()
                })
            }}
        </ol>
    }
}
