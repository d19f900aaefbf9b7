//! Live chips on the diagram: what probes and the EndpointSlice controller
//! are doing now ("liveness 2/3 ✖" on a Pod, "endpoints 3 → 2" on a
//! Service), where each sits on its box, and the room it takes from the
//! box's name.

use super::lang;
use crate::i18n::tr;
use crate::measure::{drawn_width, n};
use crate::state::Store;
use kpv_core::net::controller::ProbeKind;
use kpv_core::view::scene::Rect;
use leptos::prelude::*;

/// A live chip: where its right end sits (x, baseline y), its text, its
/// kind (`probe-chip` on a Pod, `endpoints-chip` on a Service) and the
/// name of the box it is on.
pub type Chip = (f64, f64, String, &'static str, String);

/// How wide a chip of `text` is drawn (16 px bold; Hangul a whole em).
fn chip_width(text: &str) -> f64 {
    drawn_width(text, 16.0) + 10.0
}

/// The room a chip of `kind` on box `owner` takes from the right of its
/// box's first line, whose baseline is `y` (none without one, or when the
/// chip sits on the second line).
pub fn chip_room(chips: Memo<Vec<Chip>>, kind: &str, owner: &str, y: f64) -> f64 {
    chips.with(|c| {
        c.iter()
            .find(|c| c.3 == kind && c.4 == owner && c.1 == y)
            .map_or(0.0, |c| chip_width(&c.2) + 10.0)
    })
}

/// The baseline of a chip of `text` on a box at `r`, whose lines' baselines
/// are `first` and `second`: beside the name on the first line when the
/// box has room for both (a name keeps at least five characters), else on
/// the second line, which it hides while it lasts.
fn chip_line(r: Rect, text: &str, first: f64, second: f64) -> f64 {
    if r.w - chip_width(text) - 30.0 >= 5.0 * 17.0 * 0.62 {
        r.y + first
    } else {
        r.y + second
    }
}

/// What probes and the EndpointSlice controller are doing now, on the
/// diagram: "probe 2/3 ✖" on a Pod whose readiness probe is failing, and
/// "endpoints 3 → 2" on a Service whose ready endpoints just changed.
pub fn live_chips(store: Store) -> Memo<Vec<Chip>> {
    use kpv_core::net::controller::events::EventKind;
    let l = lang();
    let all = use_context::<super::events::Events>().map(|e| e.0);
    /// How long a Service's endpoint change stays marked (simulated ms).
    const RECENT_MS: u64 = 8_000;
    Memo::new(move |_| {
        let now = store.now.get();
        let lg = l.get();
        let Some(all) = all else {
            return Vec::new();
        };
        all.with(|ev| {
            let upto = ev.partition_point(|e| e.at_ms <= now);
            let past = &ev[..upto];
            let mut out: Vec<Chip> = Vec::new();
            store.scene.with(|s| {
                for p in &s.pods {
                    // The latest probe event of this Pod: a readiness or
                    // liveness failure not yet followed by the Pod becoming
                    // ready again or restarting; else a recent restart.
                    let last = past.iter().rev().find(|e| match &e.kind {
                        EventKind::ProbeFailed { pod, probe, .. } => pod == &p.id && *probe != ProbeKind::Startup,
                        EventKind::Ready { pod, ready: true, .. } | EventKind::Restarted { pod, .. } => pod == &p.id,
                        _ => false,
                    });
                    let restarted = past.iter().rev().take_while(|e| now.saturating_sub(e.at_ms) <= RECENT_MS)
                        .any(|e| matches!(&e.kind, EventKind::Restarted { pod, .. } if pod == &p.id));
                    let text = match last.map(|e| &e.kind) {
                        Some(EventKind::ProbeFailed { run, threshold, probe, .. }) => {
                            let key = if *probe == ProbeKind::Liveness { "pod.liveness" } else { "pod.probe" };
                            format!("{} ✖", tr(lg, key).replace("{k}", &run.min(threshold).to_string()).replace("{n}", &threshold.to_string()))
                        }
                        _ if restarted => format!("↻ {}", tr(lg, "pod.restarted")),
                        _ => continue,
                    };
                    let y = chip_line(p.rect, &text, 20.0, 41.0);
                    out.push((p.rect.x + p.rect.w - 8.0, y, text, "probe-chip", p.id.name.clone()));
                }
                for b in &s.services {
                    let last = past.iter().rev().find(|e| matches!(&e.kind, EventKind::Endpoints { service, .. } if service == &b.id));
                    if let Some(e) = last.filter(|e| now.saturating_sub(e.at_ms) <= RECENT_MS) {
                        if let EventKind::Endpoints { before, after, .. } = &e.kind {
                            let text = tr(lg, "chip.endpoints").replace("{a}", &before.len().to_string()).replace("{b}", &after.len().to_string());
                            let y = chip_line(b.rect, &text, 21.0, 42.0);
                            out.push((b.rect.x + b.rect.w - 8.0, y, text, "endpoints-chip", b.id.name.clone()));
                        }
                    }
                }
            });
            out
        })
    })
}

/// The live chips on their boxes.
#[component]
pub fn LiveChips(chips: Memo<Vec<Chip>>) -> impl IntoView {
    view! {
        <g class="live-chips">
            {move || chips.get().into_iter().map(|(x, y, text, kind, owner)| {
                let w = chip_width(&text);
                view! {
                    <g class=format!("live-chip {kind}") data-testid=kind data-owner=owner>
                        <rect x=n(x - w + 4.0) y=n(y - 17.0) width=n(w) height="23" rx="5" />
                        <text x=n(x - 2.0) y=n(y) text-anchor="end" class="strong">{text}</text>
                    </g>
                }
            }).collect_view()}
        </g>
    }
}
