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

/// The smallest text an embed draws, and the size of the diagram's
/// smallest text (its addresses), in scene units.
const EMBED_MIN_PX: f64 = 12.0;
const SMALLEST_TEXT: f64 = 16.5;

/// In an embed too narrow (or short) to draw the whole scene at
/// [`EMBED_MIN_PX`], the window that follows the focused packet (kpv-core's
/// [`kpv_core::view::scene::Scene::camera`]); `None` elsewhere.
fn camera_memo(store: Store, svg: NodeRef<leptos::svg::Svg>) -> Memo<Option<Rect>> {
    let embedded = use_context::<crate::env::Embedded>().is_some_and(|e| e.0);
    let frame = RwSignal::new((0.0, 0.0));
    if embedded {
        let measure = move || {
            if let Some(el) = svg.get_untracked() {
                frame.set((f64::from(el.client_width()), f64::from(el.client_height())));
            }
        };
        Effect::new(move |_| {
            if svg.get().is_some() {
                measure();
            }
        });
        let resize = window_event_listener(leptos::ev::resize, move |_| measure());
        on_cleanup(move || resize.remove());
    }
    Memo::new(move |_| {
        let frame = frame.get();
        if frame.0 <= 0.0 {
            return None;
        }
        let rm = store.reduced_motion.get();
        let t = store.now.get();
        let at = store
            .with_focused_flight(|f| f.position(t, rm).map(|p| p.point))
            .flatten();
        store.scene.with(|s| {
            let focus = at.unwrap_or(s.client.center());
            s.camera(frame, SMALLEST_TEXT, EMBED_MIN_PX, focus)
        })
    })
}

/// The whole diagram.
#[component]
pub fn Diagram() -> impl IntoView {
    let store = expect_context::<Store>();
    let open_pod = RwSignal::new(None::<NamespacedName>);
    let trail = trail_memo(store);
    let chips = live_chips(store);
    let svg = NodeRef::<leptos::svg::Svg>::new();
    let camera = camera_memo(store, svg);
    let view_box = move || match camera.get() {
        Some(r) => format!("{} {} {} {}", n(r.x), n(r.y), n(r.w), n(r.h)),
        None => store
            .scene
            .with(|s| format!("0 0 {} {}", n(s.width), n(s.height))),
    };
    // The card stays in the window's top right corner.
    let card_at = move || {
        camera
            .get()
            .map(|r| format!("translate({} {})", n(r.x + r.w - CARD_RIGHT - 8.0), n(r.y)))
    };
    // The mode in use, while its code is on its way or failed to come.
    let in_use = Signal::derive(move || vec![store.mode.get()]);
    view! {
        <super::modewait::ModeWait modes=in_use id="mode" />
        <svg class="diagram" data-testid="diagram" viewBox=view_box role="img" aria-label=t("a11y.diagram")
            preserveAspectRatio="xMidYMin meet" node_ref=svg data-camera=move || camera.get().is_some().to_string()>
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
