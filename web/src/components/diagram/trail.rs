//! The focused packet's route so far, drawn above the boxes, and the hop
//! numbers along it.

use crate::measure::n;
use crate::state::Store;
use kpv_core::net::trace::HopKind;
use leptos::prelude::*;

/// The focused packet's trail so far: runs of legs on one connection
/// (connection, points), and where each finished hop ended (hop, point).
type Trail = Option<(
    Vec<(usize, Vec<kpv_core::view::scene::Point>)>,
    Vec<(usize, kpv_core::view::scene::Point)>,
)>;

pub(super) fn trail_memo(store: Store) -> Memo<Trail> {
    // Each hop's connection (an HTTP proxy opens a second one).
    let conns = Memo::new(move |_| {
        store
            .with_focused_trace(kpv_core::view::pipeline::connections)
            .unwrap_or_default()
    });
    Memo::new(move |_| {
        let now = store.now.get();
        let rm = store.reduced_motion.get();
        conns.with(|conns| {
            store.with_focused_flight(|f| {
                // Runs of legs on one connection: (connection, points).
                let mut runs: Vec<(usize, Vec<kpv_core::view::scene::Point>)> = Vec::new();
                let mut ends: Vec<(usize, kpv_core::view::scene::Point)> = Vec::new();
                for leg in f.legs.iter().filter(|l| l.start_ms <= now) {
                    let c = conns.get(leg.hop).copied().unwrap_or(0);
                    if runs.last().is_none_or(|r| r.0 != c) {
                        // A new run starts where the last one ended.
                        let from = runs.last().and_then(|r| r.1.last().copied());
                        runs.push((c, from.into_iter().collect()));
                    }
                    let Some((_, pts)) = runs.last_mut() else {
                        continue;
                    };
                    if now >= leg.end_ms {
                        pts.extend(leg.points.iter().copied());
                        if let Some(p) = leg.points.last() {
                            ends.push((leg.hop, *p));
                        }
                    } else if let Some(p) = f.position(now, rm) {
                        // Along the leg's route so far, then to the packet.
                        pts.extend(leg.points.iter().take(p.passed.max(1)).copied());
                        pts.push(p.point);
                    }
                }
                (runs, ends)
            })
        })
    })
}

/// The route the focused packet has taken so far, kept after it arrives,
/// with a mark where its header was rewritten. Each connection is its own
/// line (an HTTP proxy's second connection crosses the pipeline strip
/// again): the current one strong, earlier ones faint and dashed (their
/// numbers are [`TrailNumbers`]).
#[component]
pub(super) fn PathTrail(trail: Memo<Trail>) -> impl IntoView {
    let store = expect_context::<Store>();
    let changes = Memo::new(move |_| {
        trail.with(|t| {
            let Some((_, ends)) = t else {
                return Vec::new();
            };
            store
                .with_focused_trace(|tr| {
                    ends.iter()
                        .filter(|(h, _)| {
                            tr.hops.get(*h).is_some_and(|h| {
                                h.before != h.after && !matches!(h.what, HopKind::Reply { .. })
                            })
                        })
                        .map(|(_, p)| *p)
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
    });
    move || {
        trail.with(|t| {
            let (runs, _) = t.as_ref()?;
            // Only the last run is strong: earlier connections (and the
            // client's, while its reply goes back) are drawn faint.
            let last = runs.len().checked_sub(1)?;
            let paths = runs
                .iter()
                .enumerate()
                .filter(|(_, (_, pts))| pts.len() >= 2)
                .map(|(i, (c, pts))| {
                    let d = pts
                        .iter()
                        .enumerate()
                        .map(|(i, p)| format!("{}{} {}", if i == 0 { "M" } else { "L" }, n(p.x), n(p.y)))
                        .collect::<Vec<_>>()
                        .join(" ");
                    let now = i == last;
                    view! {
                        <path class="path-trail" class:earlier=!now d=d data-connection=(c + 1).to_string()
                            data-testid=if now { "path-trail" } else { "path-trail-earlier" } />
                    }
                })
                .collect_view();
            let marks = changes.get().into_iter().map(|p| view! {
                <g class="trail-change" data-testid="trail-change" transform=format!("translate({} {})", n(p.x), n(p.y))>
                    <rect x="-7" y="-7" width="14" height="14" transform="rotate(45)" />
                </g>
            }).collect_view();
            Some(view! {
                <g class="trail">
                    {paths}
                    {marks}
                </g>
            })
        })
    }
}

/// With two connections in the trail, each numbered where it starts, on
/// top of the boxes (the current one's number strong).
#[component]
pub(super) fn TrailNumbers(trail: Memo<Trail>) -> impl IntoView {
    move || {
        trail.with(|t| {
            let (runs, _) = t.as_ref()?;
            let current = runs.last()?.0;
            if runs.iter().all(|r| r.0 == current) {
                return None;
            }
            let mut badges: Vec<(usize, kpv_core::view::scene::Point)> = Vec::new();
            for (c, pts) in runs {
                if pts.len() < 2 || badges.iter().any(|(b, _)| b == c) {
                    continue;
                }
                // Halfway along the connection's first real stretch.
                let stretch = pts
                    .windows(2)
                    .find(|w| (w[1].x - w[0].x).abs() + (w[1].y - w[0].y).abs() > 40.0)
                    .unwrap_or(&pts[..2]);
                let at = kpv_core::view::scene::Point {
                    x: (stretch[0].x + stretch[1].x) / 2.0,
                    y: (stretch[0].y + stretch[1].y) / 2.0,
                };
                badges.push((*c, at));
            }
            let view = badges
                .into_iter()
                .map(|(c, p)| {
                    view! {
                        <g class="trail-number" class:earlier=c != current data-testid="trail-number"
                            data-connection=(c + 1).to_string() transform=format!("translate({} {})", n(p.x), n(p.y))
                            pointer-events="none">
                            <circle r="13" />
                            <text text-anchor="middle" y="6">{(c + 1).to_string()}</text>
                        </g>
                    }
                })
                .collect_view();
            Some(view! { <g class="trail-numbers">{view}</g> })
        })
    }
}
