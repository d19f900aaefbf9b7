//! Animation maths: where each packet is drawn at simulated time t.
//!
//! A [`Flight`] turns a trace into legs along the scene's routes: moving legs
//! between places (their length sets their duration) and short dwells where a
//! rule or lookup is evaluated. [`Flight::position`] answers "where, and at
//! which hop, at time t" (gliding, or snapping to hop points when the user
//! prefers reduced motion); [`Flight::step_forward`] and
//! [`Flight::step_back`] give the times of the next and previous hop, which is
//! how the app steps. Pure functions of their inputs: no clock is read.

use crate::net::trace::{Hop, HopKind, Origin, Trace};
use crate::view::scene::{Place, Point, Scene};
use serde::Serialize;

/// Simulated milliseconds a packet needs per logical unit of distance.
pub const MS_PER_UNIT: f64 = 1.6;
/// How long a packet dwells on one rule, lookup or other in-place hop.
pub const DWELL_MS: u64 = 350;
/// Dwell on a rule that did not match (fell off the end of a chain).
pub const PASS_MS: u64 = 90;
/// Dwell on a rule that matched.
pub const RULE_MS: u64 = 240;

fn dwell(hop: &crate::net::trace::Hop) -> u64 {
    match (&hop.what, &hop.step) {
        (HopKind::Rule, Some(s)) if matches!(s.action, crate::net::modes::StepAction::Return) => {
            PASS_MS
        }
        (HopKind::Rule, _) => RULE_MS,
        _ => DWELL_MS,
    }
}

/// How long a delivered (or dropped) packet stays visible after its last hop.
pub const LINGER_MS: u64 = 900;

/// One hop's part of a flight.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Leg {
    pub hop: usize,
    /// Polyline the packet follows during this leg (one point for a dwell).
    pub points: Vec<Point>,
    pub start_ms: u64,
    pub end_ms: u64,
}

/// A packet's whole animated path.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Flight {
    pub start_ms: u64,
    pub end_ms: u64,
    /// When the last hop before the reply ends: the outcome is known.
    pub outcome_ms: u64,
    pub legs: Vec<Leg>,
}

/// Where a packet is at some time.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Position {
    pub point: Point,
    /// How many points of its leg's route the packet has passed (the trail
    /// drawn behind it follows them, not a straight line).
    pub passed: usize,
    /// The hop being shown.
    pub hop: usize,
    /// True once the packet has finished (delivered, dropped, rejected).
    pub done: bool,
}

fn origin_place(t: &Trace) -> Place {
    match &t.request.origin {
        Origin::External { .. } => Place::Client,
        Origin::Pod { pod } => Place::Pod(pod.clone()),
        Origin::Node { node, .. } => Place::NodeProxy(node.clone()),
    }
}

/// The node a reply goes back through: the node the request came in by
/// (its conntrack undoes the NAT), or after direct server return the
/// backend's own node, past the node the request came in by. `None` for
/// any other hop, or when that node is not drawn.
fn reply_via(scene: &Scene, hop: &Hop) -> Option<Place> {
    if !matches!(hop.what, HopKind::Reply { .. }) {
        return None;
    }
    let via = Place::NodeProxy(hop.node.clone()?);
    scene.anchor(&via).map(|_| via)
}

/// The drawn way from `from` to `to`, through `via` when given.
fn route_via(scene: &Scene, from: &Place, via: Option<Place>, to: &Place) -> Vec<Point> {
    let mut points: Vec<Point> = Vec::new();
    let mut at = from;
    for stop in [via.as_ref(), Some(to)].into_iter().flatten() {
        // Each leg starts where the last one ended.
        let skip = usize::from(!points.is_empty());
        points.extend(scene.route(at, stop).into_iter().skip(skip));
        at = stop;
    }
    points
}

fn length(points: &[Point]) -> f64 {
    points.windows(2).map(|w| w[0].distance(w[1])).sum()
}

/// The point a fraction `f` of the way along `points`, and how many of
/// them lie behind it.
fn point_along(points: &[Point], f: f64) -> (Point, usize) {
    let total = length(points);
    let n = points.len();
    if n < 2 || total <= 0.0 || f >= 1.0 {
        // Exactly the end, whatever the rounding of the lengths.
        return (points.last().copied().unwrap_or_default(), n);
    }
    let mut want = total * f.clamp(0.0, 1.0);
    for (i, w) in points.windows(2).enumerate() {
        let d = w[0].distance(w[1]);
        if want <= d && d > 0.0 {
            return (w[0].lerp(w[1], want / d), i + 1);
        }
        want -= d;
    }
    (points[n - 1], n)
}

impl Flight {
    /// Lay a trace out along the scene, starting at `start_ms`.
    pub fn new(scene: &Scene, trace: &Trace, start_ms: u64) -> Flight {
        // Rule hops sit in the open node's pipeline strip, one box per step
        // and one position per rule, so every hop moves the packet.
        let (pipes, slots) = crate::view::pipeline::pipelines(trace);
        let strip_point = |i: usize| -> Option<(Point, crate::view::scene::Rect)> {
            let slot = slots.get(i).copied().flatten()?;
            let boxes = &pipes.get(slot.pipeline)?.boxes;
            let count = boxes.get(slot.boxed)?.hops.len();
            let chars = scene.box_chars(boxes);
            Some((
                scene.strip_point(slot.boxed, &chars, slot.within, count),
                scene.strip_box(slot.boxed, &chars),
            ))
        };
        let mut in_strip = false;
        let mut legs: Vec<Leg> = Vec::new();
        let mut at = origin_place(trace);
        let mut t = start_ms;
        for (i, hop) in trace.hops.iter().enumerate() {
            // The reply travels back to where the connection started.
            let to = if matches!(hop.what, HopKind::Reply { .. }) {
                origin_place(trace)
            } else {
                hop.place.clone()
            };
            // Where the packet is now: the end of the last leg.
            let here = legs.last().and_then(|l| l.points.last().copied());
            let stay = dwell(hop);
            let strip = strip_point(i);
            let was_in_strip = std::mem::replace(&mut in_strip, strip.is_some());
            let (points, dur) = match strip {
                Some((p, r)) => {
                    let from = here.or_else(|| scene.anchor(&at)).unwrap_or(p);
                    let points = if was_in_strip {
                        scene.strip_way(from, p, r)
                    } else {
                        vec![from, p]
                    };
                    let d = (length(&points) * MS_PER_UNIT) as u64;
                    (points, d.max(stay))
                }
                None => {
                    let from_pt = scene.anchor(&at);
                    let to_pt = scene.anchor(&to);
                    let (mut points, dur) = match (from_pt, to_pt) {
                        (Some(_), Some(b)) if at == to => (vec![b], stay),
                        (Some(_), Some(_)) => {
                            let route = route_via(scene, &at, reply_via(scene, hop), &to);
                            let d = (length(&route) * MS_PER_UNIT) as u64;
                            (route, d.max(stay))
                        }
                        (None, Some(b)) => (vec![b], stay),
                        (Some(a), None) => (vec![a], stay),
                        (None, None) => (Vec::new(), stay),
                    };
                    // Leaving the strip: start from where the packet is.
                    if let (Some(h), Some(first)) = (here, points.first().copied()) {
                        if h != first {
                            points.insert(0, h);
                        }
                    }
                    let extra = (length(&points) * MS_PER_UNIT) as u64;
                    (points, dur.max(extra))
                }
            };
            legs.push(Leg {
                hop: i,
                points,
                start_ms: t,
                end_ms: t + dur,
            });
            t += dur;
            at = to;
        }
        let outcome_hop = trace
            .hops
            .iter()
            .rposition(|h| !matches!(h.what, HopKind::Reply { .. }))
            .unwrap_or(0);
        let outcome_ms = legs.get(outcome_hop).map(|l| l.end_ms).unwrap_or(t);
        Flight {
            start_ms,
            end_ms: t,
            outcome_ms,
            legs,
        }
    }

    /// Has the packet reached its outcome (delivered, dropped...) by `t`?
    /// The reply may still be travelling back.
    pub fn decided(&self, t: u64) -> bool {
        t >= self.outcome_ms
    }

    /// Where the packet is at `t`, or `None` before it is sent and once it has
    /// lingered after its last hop.
    pub fn position(&self, t: u64, reduced_motion: bool) -> Option<Position> {
        if t < self.start_ms || t >= self.end_ms + LINGER_MS || self.legs.is_empty() {
            return None;
        }
        let leg = self
            .legs
            .iter()
            .find(|l| t >= l.start_ms && t < l.end_ms)
            .or(self.legs.last())?;
        let done = t >= self.end_ms;
        let f = if done || reduced_motion {
            1.0
        } else {
            (t - leg.start_ms) as f64 / (leg.end_ms - leg.start_ms).max(1) as f64
        };
        let (point, passed) = point_along(&leg.points, f);
        Some(Position {
            point,
            passed,
            hop: leg.hop,
            done,
        })
    }

    /// A flight with no hop at all (a trace that never left its origin,
    /// such as one from a Pod the cluster no longer has).
    pub fn is_empty(&self) -> bool {
        self.legs.is_empty()
    }

    /// The hop shown at `t` (the first before the flight starts, the last after).
    pub fn hop_at(&self, t: u64) -> usize {
        self.legs
            .iter()
            .rev()
            .find(|l| l.start_ms <= t)
            .map(|l| l.hop)
            .unwrap_or(0)
    }

    /// The time hop `hop` is reached (its leg's end: the packet is at that place).
    pub fn hop_time(&self, hop: usize) -> Option<u64> {
        self.legs.get(hop).map(|l| l.end_ms.saturating_sub(1))
    }

    /// The time of the next hop after the one shown at `t`, if any: a step
    /// always shows another hop (midway through the first hop, the next
    /// one, not the end of the same one).
    pub fn step_forward(&self, t: u64) -> Option<u64> {
        let cur = self.hop_at(t);
        self.legs
            .iter()
            .find(|l| l.hop > cur && l.end_ms.saturating_sub(1) > t)
            .map(|l| l.end_ms.saturating_sub(1))
    }

    /// The time the first hop is shown (Home).
    pub fn first_hop_time(&self) -> Option<u64> {
        self.legs.first().map(|l| l.end_ms.saturating_sub(1))
    }

    /// The time the last hop is shown (End).
    pub fn last_hop_time(&self) -> Option<u64> {
        self.legs.last().map(|l| l.end_ms.saturating_sub(1))
    }

    /// The time of the hop before the one shown at `t`, if any.
    pub fn step_back(&self, t: u64) -> Option<u64> {
        let cur = self.hop_at(t);
        self.legs
            .iter()
            .rev()
            .find(|l| l.hop < cur && l.end_ms.saturating_sub(1) < t)
            .map(|l| l.end_ms.saturating_sub(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::trace::{Dest, Request};

    #[test]
    fn a_point_along_a_route_knows_the_corners_behind_it() {
        let p = |x, y| Point { x, y };
        let route = [p(0.0, 0.0), p(10.0, 0.0), p(10.0, 10.0)];
        assert_eq!(point_along(&route, 0.25), (p(5.0, 0.0), 1));
        assert_eq!(point_along(&route, 0.75), (p(10.0, 5.0), 2));
        assert_eq!(point_along(&route, 1.0), (p(10.0, 10.0), 3));
        assert_eq!(point_along(&route[..1], 0.5), (p(0.0, 0.0), 1));
    }
    use crate::session::replay::{self, SentPacket};
    use crate::util::choose::Chooser;

    const SEED: &str = include_str!("../../../tests/scenarios/alpaca-bandicoot.yaml");

    fn setup() -> (Scene, Trace) {
        let (cluster, _) = crate::Code::ALL.parse(SEED);
        let slices = crate::net::controller::steady_slices(&cluster);
        let scene = crate::view::scene::layout(&cluster, &slices);
        let from = cluster
            .pods
            .iter()
            .find(|p| p.id.name.starts_with("bandicoot"))
            .map(|p| p.id.clone())
            .unwrap_or_default();
        let req = Request {
            origin: Origin::Pod { pod: from },
            dst: Dest::Name("alpaca-service".into()),
            port: 8080,
            protocol: crate::model::packet::Protocol::Tcp,
            src_port: 40000,
            keep_open: false,
        };
        let sim = crate::net::trace::Sim::new(
            &cluster,
            &slices,
            cluster.proxy.mode,
            None,
            crate::net::modes::Compilers::ALL,
        );
        let t =
            crate::net::trace::trace(&sim, &req, &mut Default::default(), &mut Chooser::new(3), 0);
        let _ = (
            replay::client_ip(),
            SentPacket {
                id: 0,
                at_ms: 0,
                request: req,
                seed: 0,
            },
        );
        (scene, t)
    }

    #[test]
    fn positions_follow_the_legs_in_time() {
        let (scene, trace) = setup();
        let f = Flight::new(&scene, &trace, 1_000);
        assert_eq!(f.legs.len(), trace.hops.len());
        assert!(f.position(999, false).is_none(), "not sent yet");
        let start = f.position(1_000, false).map(|p| p.hop);
        assert_eq!(start, Some(0));
        // Legs are contiguous and ordered.
        for w in f.legs.windows(2) {
            assert_eq!(w[0].end_ms, w[1].start_ms);
        }
        // Midway through a moving leg the packet is between its ends.
        let moving = f
            .legs
            .iter()
            .find(|l| l.points.len() >= 2)
            .unwrap_or_else(|| panic!("no moving leg"));
        let mid = f
            .position((moving.start_ms + moving.end_ms) / 2, false)
            .map(|p| p.point)
            .unwrap_or_default();
        let (a, b) = (moving.points[0], moving.points[moving.points.len() - 1]);
        let between = |v: f64, x: f64, y: f64| v >= x.min(y) - 1e-6 && v <= x.max(y) + 1e-6;
        assert!(
            moving.points.len() > 2 || (between(mid.x, a.x, b.x) && between(mid.y, a.y, b.y)),
            "{mid:?} not between {a:?} and {b:?}"
        );
        // Reduced motion snaps to the leg's end point.
        let snapped = f.position(moving.start_ms + 1, true).map(|p| p.point);
        assert_eq!(snapped, moving.points.last().copied());
        // After the last hop it lingers, marked done, then disappears.
        assert!(f.position(f.end_ms, false).is_some_and(|p| p.done));
        assert!(f.position(f.end_ms + LINGER_MS, false).is_none());
        // The outcome is decided before the reply has travelled back.
        assert!(f.outcome_ms < f.end_ms && f.decided(f.outcome_ms) && !f.decided(f.outcome_ms - 1));
    }

    /// From one strip row to the other (the seed's KUBE-SVC → KUBE-SEP),
    /// the packet goes around the boxes: no point of its way lies inside a
    /// box, where the box's text is.
    #[test]
    fn between_strip_rows_the_packet_goes_around_the_boxes() {
        let (scene, trace) = setup();
        let f = Flight::new(&scene, &trace, 0);
        let (pipes, slots) = crate::view::pipeline::pipelines(&trace);
        let mut across = 0;
        for (i, leg) in f.legs.iter().enumerate() {
            let slot = slots.get(i).copied().flatten();
            let prev = i
                .checked_sub(1)
                .and_then(|j| slots.get(j).copied().flatten());
            let (Some(slot), Some(prev)) = (slot, prev) else {
                continue;
            };
            if prev.pipeline != slot.pipeline {
                continue;
            }
            let Some(boxes) = pipes.get(slot.pipeline).map(|p| &p.boxes) else {
                continue;
            };
            let chars = scene.box_chars(boxes);
            let rects: Vec<_> = (0..boxes.len())
                .map(|k| scene.strip_box(k, &chars))
                .collect();
            if leg.points.len() > 2 {
                across += 1;
            }
            for w in leg.points.windows(2) {
                for s in 0..=40 {
                    let p = w[0].lerp(w[1], f64::from(s) / 40.0);
                    for r in &rects {
                        let inside = p.x > r.x + 1.0
                            && p.x < r.x + r.w - 1.0
                            && p.y > r.y + 1.0
                            && p.y < r.y + r.h - 1.0;
                        assert!(!inside, "hop {i} crosses {r:?} at {p:?}");
                    }
                }
            }
        }
        assert!(across > 0, "the seed's trace changes strip rows");
    }

    #[test]
    fn a_trace_without_hops_makes_an_empty_flight() {
        let (scene, mut trace) = setup();
        assert!(!Flight::new(&scene, &trace, 0).is_empty());
        trace.hops.clear();
        let f = Flight::new(&scene, &trace, 0);
        assert!(f.is_empty());
        assert_eq!(f.hop_time(0), None);
        assert_eq!(f.step_forward(0), None);
    }

    #[test]
    fn stepping_visits_every_hop_forward_and_back() {
        let (scene, trace) = setup();
        let f = Flight::new(&scene, &trace, 0);
        // Midway through the first hop, as right after a send.
        let mut t = 1;
        let mut seen = vec![f.hop_at(t)];
        while let Some(next) = f.step_forward(t) {
            assert!(next > t);
            t = next;
            seen.push(f.hop_at(t));
        }
        let expected: Vec<usize> = (0..trace.hops.len()).collect();
        assert_eq!(seen, expected, "every step shows the next hop");
        let mut back = vec![];
        while let Some(prev) = f.step_back(t) {
            assert!(prev < t);
            t = prev;
            back.push(f.hop_at(t));
        }
        let rev: Vec<usize> = (0..trace.hops.len().saturating_sub(1)).rev().collect();
        assert_eq!(back, rev, "every step back shows the hop before");
        assert_eq!(f.hop_time(2).map(|x| f.hop_at(x)), Some(2));
    }
}
