//! Every packet sent, as the diagram plays it: the replay kept between
//! changes ([`Replay`]) and each trace's flight laid out on the scene, with
//! what a frame asks of them — the packets that can be on screen at `t`,
//! and how many each Pod has received by `t` — answered without looking at
//! the whole history. Updated in place: a send lays out one flight, a
//! change in the past redoes from there. Pure; never words anything.

use crate::model::NamespacedName;
use crate::net::trace::{Outcome, Trace};
use crate::session::replay::{Inputs, Replay};
use crate::util::vecmap::VecMap;
use crate::view::scene::Scene;
use crate::view::timeline::{Flight, LINGER_MS};
use std::collections::BTreeMap;

/// The replay and the flights laid out from it, kept between changes and
/// updated in place.
#[derive(Default)]
pub struct Flights {
    replay: Replay,
    /// One per trace, in replay order.
    entries: Vec<Entry>,
    /// Packet id → index in replay order.
    index: BTreeMap<u32, usize>,
    /// The longest a flight stays on screen (start to gone), so a frame
    /// looks only at packets sent within that much of now.
    longest_ms: u64,
    /// Per Pod, when each packet delivered to it got there (sorted), so the
    /// count at time t is a binary search.
    deliveries: VecMap<NamespacedName, Vec<u64>>,
    /// The scene the flights were laid out on.
    scene: Option<Scene>,
}

/// What [`Flights`] derived from one trace.
struct Entry {
    id: u32,
    flight: Flight,
    /// The Pod it was delivered to, and when.
    delivered: Option<(NamespacedName, u64)>,
}

impl Flights {
    pub fn update(&mut self, inputs: &Inputs<'_>, scene: &Scene) {
        let old = self.replay.len();
        let mut from = self.replay.update(inputs);
        if self.scene.as_ref() != Some(scene) {
            self.scene = Some(scene.clone());
            from = 0;
        }
        if from >= old && from >= self.replay.len() {
            return;
        }
        for e in self.entries.drain(from.min(old)..) {
            if self.index.get(&e.id).is_some_and(|i| *i >= from) {
                self.index.remove(&e.id);
            }
            if let Some((pod, at)) = e.delivered {
                if let Some(times) = self.deliveries.get_mut(&pod) {
                    if let Ok(i) = times.binary_search(&at) {
                        times.remove(i);
                    }
                }
            }
        }
        if from == 0 {
            self.longest_ms = 0;
        }
        let packets = self.replay.packets();
        let traces = self.replay.traces();
        for i in from..traces.len() {
            let (p, t) = (&packets[i], &traces[i]);
            let flight = Flight::new(scene, t, p.at_ms);
            self.longest_ms = self
                .longest_ms
                .max(flight.end_ms.saturating_sub(flight.start_ms) + LINGER_MS);
            let delivered = match &t.outcome {
                Outcome::Delivered { pod: Some(pod), .. } => {
                    let times = self.deliveries.get_or_insert_with(pod.clone(), Vec::new);
                    let at = times.partition_point(|x| *x <= flight.outcome_ms);
                    times.insert(at, flight.outcome_ms);
                    Some((pod.clone(), flight.outcome_ms))
                }
                _ => None,
            };
            self.index.insert(p.id, i);
            self.entries.push(Entry {
                id: p.id,
                flight,
                delivered,
            });
        }
    }

    /// How many packets there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The trace and flight of packet `id`.
    pub fn get(&self, id: u32) -> Option<(&Trace, &Flight)> {
        let i = *self.index.get(&id)?;
        Some((self.replay.traces().get(i)?, &self.entries.get(i)?.flight))
    }

    /// The highest packet id.
    pub fn last_id(&self) -> Option<u32> {
        self.index.keys().next_back().copied()
    }

    /// Every packet that can be on screen at `t` (sent, and not yet gone),
    /// in send order: only those sent within the longest flight of `t`.
    pub fn on_screen(&self, t: u64) -> impl Iterator<Item = (u32, &Trace, &Flight)> {
        let packets = self.replay.packets();
        let since = t.saturating_sub(self.longest_ms);
        let first = packets.partition_point(|p| p.at_ms < since);
        let last = packets.partition_point(|p| p.at_ms <= t);
        (first..last.max(first)).filter_map(move |i| {
            let f = &self.entries[i].flight;
            (f.start_ms <= t && t < f.end_ms + LINGER_MS)
                .then(|| (packets[i].id, &self.replay.traces()[i], f))
        })
    }

    /// Packets each Pod has received by `t` (decided deliveries only), by
    /// Pod, sorted.
    pub fn received(&self, t: u64) -> Vec<(NamespacedName, u32)> {
        self.deliveries
            .iter()
            .map(|(pod, times)| (pod.clone(), times.partition_point(|x| *x <= t) as u32))
            .filter(|(_, n)| *n > 0)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Mode;
    use crate::net::controller::{self, Timing};
    use crate::session::replay::{self, SentPacket};

    const SEED: &str = include_str!("../../../tests/scenarios/alpaca-bandicoot.yaml");

    /// What a Flights shows: every packet's trace and flight by id, what is
    /// on screen and the counts at a few times.
    fn shown(p: &Flights, ids: &[u32]) -> String {
        let mut out = String::new();
        for id in ids {
            out.push_str(&format!("{id}: {:?}\n", p.get(*id)));
        }
        for t in [0, 500, 2_000, 5_000, 20_000, 200_000] {
            let on: Vec<u32> = p.on_screen(t).map(|(id, _, _)| id).collect();
            out.push_str(&format!("{t}: {on:?} {:?}\n", p.received(t)));
        }
        out
    }

    /// Kept in place through sends at the end, back in time, removals and
    /// a mode switch, a Flights shows what one built afresh shows.
    #[test]
    fn played_in_place_equals_played_afresh() {
        let (cluster, _) = crate::Code::ALL.parse(SEED);
        let slices = controller::steady_slices(&cluster);
        let scene = crate::view::scene::layout(&cluster, &slices);
        let targets = replay::targets(&cluster, crate::Code::ALL.replay().http);
        let mut packets: Vec<SentPacket> = Vec::new();
        let mut kept = Flights::default();
        let mut mode = cluster.proxy.mode;
        let send = |packets: &mut Vec<SentPacket>, id: u32, at: u64| {
            let t = &targets[id as usize % targets.len()];
            let origin = replay::default_origin(&cluster, t);
            packets.push(SentPacket {
                id,
                at_ms: at,
                request: replay::request(t, origin, id),
                seed: u64::from(id) * 7 + 1,
            });
        };
        type Step<'a> = &'a dyn Fn(&mut Vec<SentPacket>, &mut Mode);
        let steps: [Step; 5] = [
            &|ps, _| (0..300).for_each(|i| send(ps, i, u64::from(i) * 40)),
            &|ps, _| send(ps, 300, 12_050),
            &|ps, _| send(ps, 301, 3_001),
            &|ps, _| {
                ps.remove(17);
                ps.remove(200);
            },
            &|_, m| *m = Mode::Ipvs,
        ];
        for step in steps {
            step(&mut packets, &mut mode);
            let inputs = Inputs {
                code: crate::Code::ALL.replay(),
                cluster: &cluster,
                mode,
                scheduler: None,
                timing: Timing::default(),
                changes: &[],
                packets: &packets,
            };
            kept.update(&inputs, &scene);
            let mut fresh = Flights::default();
            fresh.update(&inputs, &scene);
            let ids: Vec<u32> = (0..302).collect();
            assert_eq!(shown(&kept, &ids), shown(&fresh, &ids));
            assert_eq!(kept.len(), packets.len());
        }
        assert!(kept.get(17).is_none(), "a packet removed is gone");
        assert!(kept.received(200_000).iter().map(|(_, n)| n).sum::<u32>() > 0);
    }
}
