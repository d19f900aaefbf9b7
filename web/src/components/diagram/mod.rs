//! The cluster diagram: an SVG in the scene's fixed logical space, with the
//! packets in flight drawn over it.
//!
//! Markup only: every position comes from [`kpv_core::view::scene::Scene`] and
//! [`kpv_core::view::timeline::Flight`]; readiness and verdicts are shown with a
//! shape and a word, never by colour alone.

//!
//! [`cluster`] draws the boxes, [`strip`] the open node's pipeline,
//! [`trail`] the route so far, [`packets`] the packets in flight.
mod cluster;
mod packets;
mod strip;
mod trail;

use super::card::PacketCard;
use super::chips::{live_chips, LiveChips};
use super::t;
use crate::measure::n;
use crate::state::Store;
use cluster::{Cluster, PodControls};
use kpv_core::model::NamespacedName;
use kpv_core::view::scene::Rect;
use leptos::prelude::*;
use packets::Packets;
use strip::PipelineStrip;
use trail::{trail_memo, PathTrail, TrailNumbers};

#[component]
fn BoxRect(rect: Rect, class: &'static str) -> impl IntoView {
    view! { <rect class=class x=n(rect.x) y=n(rect.y) width=n(rect.w) height=n(rect.h) rx="8" /> }
}

/// The whole diagram.
#[component]
pub fn Diagram() -> impl IntoView {
    let store = expect_context::<Store>();
    let open_pod = RwSignal::new(None::<NamespacedName>);
    let trail = trail_memo(store);
    let chips = live_chips(store);
    let view_box = move || {
        store
            .scene
            .with(|s| format!("0 0 {} {}", n(s.width), n(s.height)))
    };
    // The mode in use, while its code is on its way or failed to come.
    let in_use = Signal::derive(move || vec![store.mode.get()]);
    view! {
        <super::modewait::ModeWait modes=in_use id="mode" />
        <svg class="diagram" data-testid="diagram" viewBox=view_box role="img" aria-label=t("a11y.diagram")
            preserveAspectRatio="xMidYMin meet">
            <Cluster open_pod=open_pod chips=chips />
            <PipelineStrip />
            // The route so far, above every box (below the chips, the
            // packets and the card): it is what the learner follows.
            <PathTrail trail=trail />
            <LiveChips chips=chips />
            <TrailNumbers trail=trail />
            <Packets />
            <PacketCard />
            <PodControls open_pod=open_pod />
        </svg>
    }
}
