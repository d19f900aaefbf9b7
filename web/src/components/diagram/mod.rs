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
use kpv_core::view::scene::{Rect, CARD_RIGHT};
use leptos::prelude::*;
use packets::Packets;
use strip::PipelineStrip;
use trail::{trail_memo, PathTrail, TrailNumbers};

#[component]
fn BoxRect(rect: Rect, class: &'static str) -> impl IntoView {
    view! { <rect class=class x=n(rect.x) y=n(rect.y) width=n(rect.w) height=n(rect.h) rx="8" /> }
}

/// The smallest text an embed draws (a hair over 12 px: the frame is
/// measured in whole px), and the size of the diagram's smallest text
/// (its addresses), in scene units.
const EMBED_MIN_PX: f64 = 12.05;
const SMALLEST_TEXT: f64 = 16.5;

/// An embed's diagram frame in px, packed as `width << 32 | height` (one
/// `u64` signal: no new signal type in the embed's first download); 0 in
/// the full app. `loader.js` watches the diagram's size and tells the page
/// with a `resize` event.
fn frame_signal() -> RwSignal<u64> {
    let frame = RwSignal::new(0u64);
    if use_context::<crate::env::Embedded>().is_some_and(|e| e.0) {
        // As a plain `Event` (the type the full-screen listener already
        // uses): no `UiEvent` bindings in the first download.
        let resize = leptos::ev::Custom::<leptos::ev::Event>::new("resize");
        let resize = window_event_listener(resize, move |_| {
            let el = document()
                .query_selector(".app.embed svg.diagram")
                .ok()
                .flatten();
            if let Some(el) = el {
                let (w, h) = (
                    el.client_width().max(0) as u64,
                    el.client_height().max(0) as u64,
                );
                frame.set((w << 32) | (h & 0xffff_ffff));
            }
        });
        on_cleanup(move || resize.remove());
    }
    frame
}

/// In an embed too narrow (or short) to draw the whole scene at
/// [`EMBED_MIN_PX`], the window that follows the focused packet (kpv-core's
/// [`kpv_core::view::scene::Scene::camera`]); `None` elsewhere.
fn camera(store: Store, frame: RwSignal<u64>) -> Option<Rect> {
    let f = frame.get();
    let (w, h) = ((f >> 32) as f64, (f & 0xffff_ffff) as f64);
    if w <= 0.0 {
        return None;
    }
    let rm = store.reduced_motion.get();
    let t = store.now.get();
    let at = store
        .with_focused_flight(|f| f.position(t, rm).map(|p| p.point))
        .flatten();
    store.scene.with(|s| {
        let focus = at.unwrap_or(s.client.center());
        s.camera((w, h), SMALLEST_TEXT, EMBED_MIN_PX, focus)
    })
}

/// The whole diagram.
#[component]
pub fn Diagram() -> impl IntoView {
    let store = expect_context::<Store>();
    let open_pod = RwSignal::new(None::<NamespacedName>);
    let trail = trail_memo(store);
    let chips = live_chips(store);
    let frame = frame_signal();
    let view_box = move || match camera(store, frame) {
        Some(r) => format!("{} {} {} {}", n(r.x), n(r.y), n(r.w), n(r.h)),
        None => store
            .scene
            .with(|s| format!("0 0 {} {}", n(s.width), n(s.height))),
    };
    // The card stays in the window's top right corner.
    let card_at = move || {
        camera(store, frame)
            .map(|r| format!("translate({} {})", n(r.x + r.w - CARD_RIGHT - 8.0), n(r.y)))
            .unwrap_or_default()
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
            <g transform=card_at>
                <PacketCard />
            </g>
            <PodControls open_pod=open_pod />
        </svg>
    }
}
