//! The diagram's layout, computed from the cluster's topology.
//!
//! A [`petgraph`] graph holds what is connected to what (client → load
//! balancer → nodes → Pods, Services → their endpoints' Pods); boxes are laid
//! out in a fixed logical coordinate space (the SVG `viewBox`), and CSS does
//! the sizing. Packet routes between places are paths in the same graph. The
//! web app only draws what this module computes; it never decides geometry.

use crate::model::packet::IpFamily;
use crate::model::{Cluster, EndpointSlice, NamespacedName, ServiceType};
use petgraph::graph::{NodeIndex, UnGraph};
use serde::Serialize;
use std::collections::BTreeMap;

mod layout;
mod route;

pub use layout::layout;

/// Logical width of the diagram.
pub const WIDTH: f64 = 840.0;
const MARGIN: f64 = 16.0;
const GAP: f64 = 16.0;
/// The entry row: the client and the load balancer (the packet card sits at
/// its right end).
const ENTRY_Y: f64 = 8.0;
const ENTRY_H: f64 = 52.0;
/// Where the packet card is drawn: the top right corner, above everything
/// but the entry row's right end, so it never covers a node or Pod title.
pub const CARD_RIGHT: f64 = WIDTH - 8.0;
pub const CARD_TOP: f64 = 6.0;
/// The card's height with its hop's sentence on two lines (the Service
/// band starts below it).
pub const CARD_H: f64 = card_h(2);
/// The card's lines: the first baseline, and each next one this far below.
pub const CARD_FIRST: f64 = 19.0;
pub const CARD_LINE: f64 = 21.0;
const SERVICE_Y: f64 = CARD_TOP + CARD_H + 3.0;

/// The card's height with its hop's sentence on `lines` lines (and the
/// packet's source and destination below).
pub const fn card_h(lines: usize) -> f64 {
    CARD_FIRST + (lines + 1) as f64 * CARD_LINE + 8.0
}
const SERVICE_H: f64 = 50.0;
/// The pipeline strip: the open node's steps, in at most two rows.
const STRIP_Y: f64 = SERVICE_Y + 74.0;
const STRIP_ROW_H: f64 = 46.0;
const STRIP_GAP: f64 = 8.0;
/// A strip box's detail line: 16 units of monospace, 0.62 em a character,
/// and its padding.
const STRIP_CHAR_W: f64 = 16.0 * 0.62;
const STRIP_PAD: f64 = 14.0;
/// Boxes in one row of the strip before a second row starts.
pub const STRIP_ROW_BOXES: usize = 5;
const NODE_TOP: f64 = SERVICE_Y + 184.0;
const NODE_HEADER: f64 = 62.0;
const POD_H: f64 = 48.0;
const POD_GAP: f64 = 4.0;
/// Service boxes in one row of the band (each then about 190 wide: a
/// 17-character name at the title size); more rows below it push the
/// strip and the nodes down.
pub const SERVICE_COLS: usize = 4;
const SERVICE_ROW_GAP: f64 = 8.0;
/// Rows of Service boxes at most: past `SERVICE_COLS × SERVICE_ROWS`
/// Services, the last box counts the rest ("+N more").
pub const SERVICE_ROWS: usize = 3;
/// At most this many Service boxes are drawn; the rest are counted in one
/// "+N more" box. (A 10,000-Service cluster drew 10,000 boxes too small to
/// read, and took seconds to draw. Packets never pass through a Service box,
/// and every Service stays in the rules and endpoint lists.)
pub const MAX_SERVICE_BOXES: usize = SERVICE_COLS * SERVICE_ROWS - 1;

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Rect {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Rect {
    pub fn center(&self) -> Point {
        Point {
            x: self.x + self.w / 2.0,
            y: self.y + self.h / 2.0,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

impl Point {
    pub fn lerp(self, to: Point, f: f64) -> Point {
        Point {
            x: self.x + (to.x - self.x) * f,
            y: self.y + (to.y - self.y) * f,
        }
    }

    pub fn distance(self, to: Point) -> f64 {
        ((to.x - self.x).powi(2) + (to.y - self.y).powi(2)).sqrt()
    }
}

pub use crate::net::trace::Place;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NodeBox {
    pub name: String,
    pub ip: String,
    pub pod_cidr: Option<String>,
    /// Its `topology.kubernetes.io/zone` label (what topology hints match).
    pub zone: Option<String>,
    pub rect: Rect,
    /// The netfilter / kube-proxy box inside the node.
    pub proxy: Rect,
    /// The eth0 badge at the top of the node.
    pub eth: Rect,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PodBox {
    pub id: NamespacedName,
    pub node: String,
    pub ip: String,
    /// `app=alpaca` style label summary (the selector-relevant labels first).
    pub labels: Vec<String>,
    pub rect: Rect,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ServiceBox {
    pub id: NamespacedName,
    pub service_type: ServiceType,
    pub cluster_ip: String,
    /// `8080/TCP → 8080` per port; with NodePort `:30080`.
    pub ports: Vec<String>,
    pub rect: Rect,
}

/// A line from a Service to one of its endpoints' Pods.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EndpointEdge {
    pub service: NamespacedName,
    pub pod: NamespacedName,
    pub ready: bool,
}

/// A wire drawn whether or not a packet is on it: client → load balancer →
/// every node's eth0, and between neighbouring nodes (the pod network).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Link {
    pub from: Point,
    pub to: Point,
    /// `entry` (client, load balancer, eth0) or `pod-network`.
    pub kind: &'static str,
    /// The node the wire reaches (entry wires) or the pair it joins.
    pub nodes: Vec<String>,
}

/// The box that stands for the Services not drawn.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct MoreServices {
    pub count: usize,
    pub rect: Rect,
}

#[derive(Clone, Debug, Serialize)]
pub struct Scene {
    pub width: f64,
    pub height: f64,
    pub client: Rect,
    pub load_balancer: Option<Rect>,
    pub load_balancer_ips: Vec<String>,
    /// Some address of the load balancer was given by kpv's assumed cloud
    /// controller rather than written in a Service's status.
    pub load_balancer_assumed: bool,
    pub nodes: Vec<NodeBox>,
    pub pods: Vec<PodBox>,
    pub services: Vec<ServiceBox>,
    /// The Services beyond [`MAX_SERVICE_BOXES`]: how many, and their box.
    pub more_services: Option<MoreServices>,
    pub edges: Vec<EndpointEdge>,
    pub links: Vec<Link>,
    /// Where the open node's pipeline is drawn (see [`Scene::strip_box`]).
    pub strip: Rect,
    /// How many characters wide a pipeline box's name is drawn, for the
    /// keys the app names in words (`ipvs-real-server`: "IPVS real
    /// server"); any other key is drawn as it is. Handed in by the app
    /// ([`Scene::name_steps`]), in its language.
    pub step_names: Vec<(&'static str, usize)>,
    /// Lines the packet card gives its hop's sentence (see [`card_h`]).
    pub card_lines: usize,
    #[serde(skip)]
    graph: UnGraph<(), ()>,
    #[serde(skip)]
    places: Vec<(Place, Point)>,
}

impl PartialEq for Scene {
    /// Two scenes are equal when they draw the same thing (the graph is
    /// derived from the same boxes).
    fn eq(&self, other: &Self) -> bool {
        self.width == other.width
            && self.height == other.height
            && self.client == other.client
            && self.load_balancer == other.load_balancer
            && self.nodes == other.nodes
            && self.pods == other.pods
            && self.services == other.services
            && self.more_services == other.more_services
            && self.edges == other.edges
            && self.links == other.links
            && self.strip == other.strip
            && self.step_names == other.step_names
            && self.card_lines == other.card_lines
            && self.places == other.places
    }
}

impl Scene {
    /// The scene with the pipeline steps in `keys` named `chars(key)`
    /// characters wide (see [`Scene::step_names`]).
    pub fn name_steps(mut self, keys: &[&'static str], chars: impl Fn(&str) -> usize) -> Scene {
        self.step_names = keys.iter().map(|&k| (k, chars(k))).collect();
        self
    }

    /// How many characters a pipeline box's name takes (its key's name as
    /// the app draws it).
    pub fn name_chars(&self, key: &str) -> usize {
        self.step_names
            .iter()
            .find(|(k, _)| *k == key)
            .map_or(key.chars().count(), |(_, c)| *c)
    }

    /// (name, wider line) characters of a box with no packet in it (a
    /// mode's pipeline at rest), for [`Scene::strip_box`].
    pub fn bare_box_chars(&self, key: &str) -> (usize, usize) {
        let c = crate::view::pipeline::name_room(self.name_chars(key));
        (c, c)
    }

    /// Each box's (name, wider line) characters, for [`Scene::strip_box`].
    pub fn box_chars(&self, boxes: &[crate::view::pipeline::PipelineBox]) -> Vec<(usize, usize)> {
        boxes
            .iter()
            .map(|b| b.chars(self.name_chars(b.key)))
            .collect()
    }

    /// The part of the scene a frame of `frame` (width, height) px shows so
    /// that text of `text` units is drawn at `min_px` at least: `None`, the
    /// whole scene, when it fits the frame at that scale; else a window of
    /// the frame's shape at that scale, centred on `focus` as far as the
    /// scene's edges allow (a narrow embed follows its packet rather than
    /// draw every box too small to read).
    pub fn camera(&self, frame: (f64, f64), text: f64, min_px: f64, focus: Point) -> Option<Rect> {
        let (fw, fh) = frame;
        let want = min_px / text;
        let fits = (fw / self.width).min(fh / self.height) >= want;
        if fits || !(fw > 0.0 && fh > 0.0 && want > 0.0) {
            return None;
        }
        let (w, h) = ((fw / want).min(self.width), (fh / want).min(self.height));
        Some(Rect {
            x: (focus.x - w / 2.0).clamp(0.0, self.width - w),
            y: (focus.y - h / 2.0).clamp(0.0, self.height - h),
            w,
            h,
        })
    }

    /// Where a place is drawn.
    pub fn anchor(&self, place: &Place) -> Option<Point> {
        self.places
            .iter()
            .find(|(p, _)| p == place)
            .map(|(_, pt)| *pt)
    }

    /// Box `k` of a pipeline whose boxes need `chars` characters each (for
    /// their name, for their wider line: see
    /// [`crate::view::pipeline::PipelineBox::chars`]) in the strip: one row
    /// of up to [`STRIP_ROW_BOXES`], then a second row (a third when the
    /// strip has one and two cannot hold the texts), read left to right.
    /// Each box is as wide as its text and the row's spare room is
    /// shared out evenly; a row that cannot hold its texts keeps every name
    /// whole and shares the rest in proportion to what the details lack.
    pub fn strip_box(&self, k: usize, chars: &[(usize, usize)]) -> Rect {
        let n = chars.len().max(1);
        let units = |c: usize| c as f64 * STRIP_CHAR_W + STRIP_PAD;
        // Two rows, or three when the strip has room for them and two
        // cannot hold the texts (IPv6 values).
        let rows_fit = |per_row: usize| {
            chars.chunks(per_row.max(1)).all(|row| {
                let gaps = row.len().saturating_sub(1) as f64 * STRIP_GAP;
                row.iter().map(|&(_, want)| units(want)).sum::<f64>() + gaps <= self.strip.w
            })
        };
        let three = self.strip.h >= 3.0 * STRIP_ROW_H + 2.0 * STRIP_GAP;
        let per_row = if n <= STRIP_ROW_BOXES && (rows_fit(n) || !three) {
            n
        } else if rows_fit(n.div_ceil(2)) || !three {
            n.div_ceil(2)
        } else {
            n.div_ceil(3)
        };
        let row = k / per_row;
        let first = row * per_row;
        let cells: Vec<(f64, f64)> = chars
            .iter()
            .skip(first)
            .take(per_row)
            .map(|&(name, want)| (units(name.min(want)), units(want)))
            .collect();
        let m = cells.len().max(1) as f64;
        let room = self.strip.w - (m - 1.0) * STRIP_GAP;
        let total: f64 = cells.iter().map(|r| r.1).sum();
        let floors: f64 = cells.iter().map(|r| r.0).sum();
        let width = |i: usize| -> f64 {
            let (floor, want) = cells.get(i).copied().unwrap_or((0.0, 0.0));
            if total <= room {
                want + (room - total) / m
            } else if floors < room {
                floor + (want - floor) * (room - floors) / (total - floors)
            } else {
                want * room / total
            }
        };
        let col = k - first;
        let x = (0..col).map(|i| width(i) + STRIP_GAP).sum::<f64>();
        Rect {
            x: self.strip.x + x,
            y: self.strip.y + row as f64 * (STRIP_ROW_H + STRIP_GAP),
            w: if cells.is_empty() { room } else { width(col) },
            h: STRIP_ROW_H,
        }
    }

    /// Where a packet sits in box `k` of `n` when it is at the `within`-th
    /// of `count` hops in that box: just under the box's bottom edge (not
    /// over the value the box shows, which a learner is reading), one step
    /// to the right per rule, so every hop moves it.
    pub fn strip_point(
        &self,
        k: usize,
        chars: &[(usize, usize)],
        within: usize,
        count: usize,
    ) -> Point {
        let r = self.strip_box(k, chars);
        let inner = r.w - 24.0;
        let step = if count > 1 {
            (inner / (count - 1) as f64).min(22.0)
        } else {
            0.0
        };
        let span = step * count.saturating_sub(1) as f64;
        Point {
            x: r.x + (r.w - span) / 2.0 + step * within as f64,
            y: r.y + r.h + 5.0,
        }
    }

    /// The way from `from` (a strip point) to `to` (the strip point of box
    /// `r`): straight along one row; from one row to another, along the
    /// gap under the first row, through the gap left of `r` and under `r`'s
    /// row, so the line never crosses a box's text.
    pub fn strip_way(&self, from: Point, to: Point, r: Rect) -> Vec<Point> {
        if (from.y - to.y).abs() < 0.5 {
            return vec![from, to];
        }
        let x = r.x - STRIP_GAP / 2.0;
        vec![from, Point { x, y: from.y }, Point { x, y: to.y }, to]
    }

    fn index(&self, place: &Place) -> Option<usize> {
        self.places.iter().position(|(p, _)| p == place)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::layout::{
        service_slots, ServiceBand, POD_MIN_W, SERVICE_CHAR_W, SERVICE_PAD, SERVICE_TIGHT_CHAR_W,
        TIGHT_GAP,
    };
    use super::*;

    const SEED: &str = include_str!("../../../../tests/scenarios/alpaca-bandicoot.yaml");

    /// The seed articles' cluster, laid out.
    pub(in crate::view::scene) fn scene() -> Scene {
        let (cluster, _) = crate::Code::ALL.parse(SEED);
        let slices = crate::net::controller::steady_slices(&cluster);
        layout(&cluster, &slices)
    }

    #[test]
    fn seed_scene_has_every_object() {
        let s = scene();
        assert_eq!(s.nodes.len(), 3);
        assert_eq!(s.pods.len(), 5);
        assert_eq!(s.services.len(), 2);
        assert_eq!(s.edges.len(), 5, "every Pod is an endpoint of one Service");
        assert!(s.edges.iter().all(|e| e.ready));
        assert!(
            s.load_balancer.is_none(),
            "no LoadBalancer Service in the seed"
        );
    }

    /// Two wide nodes, one with four Pods (the Gateway preset): its Pods sit
    /// two side by side, inside their node and apart, so the diagram is two
    /// Pod rows shorter; three nodes of two Pods keep one column.
    #[test]
    fn four_pods_in_a_wide_node_sit_two_side_by_side() {
        let text = include_str!("../../../../tests/scenarios/gateway-api.yaml");
        let (cluster, _) = crate::Code::ALL.parse(text);
        let slices = crate::net::controller::steady_slices(&cluster);
        let s = layout(&cluster, &slices);
        let node = &s.nodes[0];
        let mine: Vec<&PodBox> = s.pods.iter().filter(|p| p.node == node.name).collect();
        assert_eq!(mine.len(), 4);
        let inside = |r: &Rect, o: &Rect| {
            r.x >= o.x && r.y >= o.y && r.x + r.w <= o.x + o.w && r.y + r.h <= o.y + o.h
        };
        for (i, a) in s.pods.iter().enumerate() {
            let home = s.nodes.iter().find(|n| n.name == a.node).expect("its node");
            assert!(inside(&a.rect, &home.rect), "{:?}", a.id);
            assert!(a.rect.w >= POD_MIN_W, "{:?}", a.rect);
            for b in &s.pods[i + 1..] {
                let apart = a.rect.x + a.rect.w <= b.rect.x
                    || b.rect.x + b.rect.w <= a.rect.x
                    || a.rect.y + a.rect.h <= b.rect.y
                    || b.rect.y + b.rect.h <= a.rect.y;
                assert!(apart, "{:?} {:?}", a.id, b.id);
            }
        }
        let rows = crate::util::order::set(mine.iter().map(|p| p.rect.y as i64));
        assert_eq!(rows.len(), 2, "two rows of two");
        assert_eq!(node.rect.h, NODE_HEADER + 2.0 * (POD_H + POD_GAP) + 6.0);
        // The seed's nodes hold two Pods at most: one column, full width.
        let seed = scene();
        assert!(seed.pods.iter().all(|p| seed
            .nodes
            .iter()
            .any(|n| n.rect.x + 8.0 == p.rect.x && n.rect.w - 16.0 == p.rect.w)));
    }

    /// An IPv6 cluster keeps a third strip row: eight boxes whose values
    /// two rows cannot hold (an IPv6 DNAT target and masquerade source) go
    /// three to a row, each as wide as its text; the nodes move down under
    /// it. An IPv4 cluster's strip keeps two rows.
    #[test]
    fn ipv6_values_get_a_third_strip_row() {
        let text = include_str!("../../../../tests/corpus/ipv6-only.yaml");
        let (cluster, _) = crate::Code::ALL.parse(text);
        let slices = crate::net::controller::steady_slices(&cluster);
        let s = layout(&cluster, &slices);
        assert_eq!(s.strip.h, 3.0 * STRIP_ROW_H + 2.0 * STRIP_GAP);
        assert!(s.nodes.iter().all(|n| n.rect.y > s.strip.y + s.strip.h));
        // PREROUTING … KUBE-SEP (DNAT → [fd00:10:244:1::2]:8080), FORWARD,
        // POSTROUTING (ACCEPT · MASQ → fc00:f853:ccd:e793::3).
        let chars = [
            (10, 10),
            (13, 13),
            (14, 14),
            (8, 14),
            (8, 14),
            (8, 35),
            (7, 7),
            (11, 40),
        ];
        let rects: Vec<Rect> = (0..chars.len()).map(|k| s.strip_box(k, &chars)).collect();
        for (r, (_, want)) in rects.iter().zip(chars) {
            assert!(
                r.w >= want as f64 * STRIP_CHAR_W + STRIP_PAD - 1e-9,
                "{want}: {r:?}"
            );
            assert!(r.x + r.w <= s.strip.x + s.strip.w + 1e-9, "{r:?}");
        }
        let rows = crate::util::order::set(rects.iter().map(|r| r.y as i64));
        assert_eq!(rows.len(), 3);
        // The same texts in an IPv4 scene: two rows, as before.
        let seed = scene();
        assert_eq!(seed.strip.h, 2.0 * STRIP_ROW_H + STRIP_GAP);
        let rows =
            crate::util::order::set((0..chars.len()).map(|k| seed.strip_box(k, &chars).y as i64));
        assert_eq!(rows.len(), 2);
    }

    #[test]
    fn strip_boxes_are_as_wide_as_their_texts_and_share_the_rest() {
        let s = scene();
        let inside =
            |r: &Rect| r.x >= s.strip.x - 1e-9 && r.x + r.w <= s.strip.x + s.strip.w + 1e-9;
        // Eight boxes: two rows of four. `DNAT → 10.244.2.5:8080` (22) and
        // `ACCEPT · MASQ → 10.244.2.1` (26) get their room whole.
        let chars = [12, 15, 10, 15, 16, 22, 9, 26].map(|c| (9, c));
        let rects: Vec<Rect> = (0..chars.len()).map(|k| s.strip_box(k, &chars)).collect();
        for (r, (_, c)) in rects.iter().zip(chars) {
            assert!(
                r.w >= c as f64 * STRIP_CHAR_W + STRIP_PAD - 1e-9,
                "{c}: {r:?}"
            );
            assert!(inside(r), "{r:?}");
        }
        for row in rects.chunks(4) {
            for w in row.windows(2) {
                assert!((w[1].x - (w[0].x + w[0].w) - STRIP_GAP).abs() < 1e-9);
            }
            let end = row[3].x + row[3].w;
            assert!(
                (end - (s.strip.x + s.strip.w)).abs() < 1e-9,
                "a row fills the strip"
            );
        }
        // More text than room: every name whole, the details' lack shared
        // in proportion, still inside.
        let long = [(10, 60), (10, 30), (10, 30), (20, 20)];
        let r: Vec<Rect> = (0..4).map(|k| s.strip_box(k, &long)).collect();
        assert!(r.iter().all(inside));
        assert!(r
            .iter()
            .zip(long)
            .all(|(r, (name, _))| r.w >= name as f64 * STRIP_CHAR_W + STRIP_PAD));
        assert!(
            (r[3].w - (20.0 * STRIP_CHAR_W + STRIP_PAD)).abs() < 1e-9,
            "{r:?}"
        );
        assert!(r[0].w > r[1].w && (r[1].w - r[2].w).abs() < 1e-9, "{r:?}");
        // Equal texts: equal boxes, as the skeleton at rest is drawn.
        let even: Vec<f64> = (0..5).map(|k| s.strip_box(k, &[(10, 10); 5]).w).collect();
        assert!(even.windows(2).all(|w| (w[0] - w[1]).abs() < 1e-9));
    }

    /// A frame too small for 12 px text gets a window that follows the
    /// packet, inside the scene; a large enough one shows everything.
    #[test]
    fn a_narrow_frame_follows_the_packet_at_a_readable_scale() {
        let (cluster, _) = crate::Code::ALL.parse(
            "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {ports: [{port: 80}]}\n",
        );
        let s = layout(&cluster, &[]);
        let mid = Point {
            x: s.width / 2.0,
            y: s.height / 2.0,
        };
        assert_eq!(s.camera((1280.0, 900.0), 16.5, 12.0, mid), None);
        assert_eq!(s.camera((0.0, 0.0), 16.5, 12.0, mid), None);
        let at = |x: f64, y: f64| s.camera((400.0, 250.0), 16.5, 12.0, Point { x, y });
        let r = at(mid.x, mid.y).expect("a window");
        // Drawn at 400 px wide, the window's text is 12 px.
        assert!((400.0 / r.w * 16.5 - 12.0).abs() < 1e-9, "{r:?}");
        assert!(
            (r.w / r.h - 400.0 / 250.0).abs() < 1e-9 || r.h == s.height,
            "{r:?}"
        );
        assert!((r.x + r.w / 2.0 - mid.x).abs() < 1e-9, "centred: {r:?}");
        // At the scene's corner it stops at the edges.
        let c = at(0.0, 0.0).expect("a window");
        assert_eq!((c.x, c.y), (0.0, 0.0));
        let c = at(s.width, s.height).expect("a window");
        assert!((c.x + c.w - s.width).abs() < 1e-9 && (c.y + c.h - s.height).abs() < 1e-9);
    }

    #[test]
    fn a_service_box_is_as_wide_as_its_name_when_the_row_has_room() {
        let band = ServiceBand::of(3);
        let slots = service_slots(&[(24, 10), (3, 10), (8, 10)], &band, SERVICE_Y);
        assert!(
            slots[0].w >= 24.0 * SERVICE_CHAR_W + SERVICE_PAD - 1e-9,
            "{slots:?}"
        );
        assert!(
            slots[1].w >= 180.0,
            "short names keep the even share: {slots:?}"
        );
        for w in slots.windows(2) {
            assert!(w[1].x >= w[0].x + w[0].w + GAP - 1e-9, "{slots:?}");
        }
        assert!(slots[2].x + slots[2].w <= WIDTH - MARGIN + 1e-9);
        // Four 40-character names cannot all fit: shared, inside the view.
        let band = ServiceBand::of(4);
        let slots = service_slots(&[(40, 10); 4], &band, SERVICE_Y);
        assert!(slots
            .iter()
            .all(|r| r.x >= MARGIN - 1e-9 && r.x + r.w <= WIDTH - MARGIN + 1e-9));
        // The Gateway preset's row: four short names and the Envoy proxy's
        // 24-character Service. Too full at the title size, so every box
        // gets its text at 16.5 units first (the gaps close up to 8): the
        // long name stays whole and no address is cut.
        let band = ServiceBand::of(5);
        let row = [(4, 10), (8, 10), (8, 10), (24, 14), (4, 10)];
        let slots = service_slots(&row, &band, SERVICE_Y);
        for (r, &(name, line)) in slots.iter().zip(&row) {
            let text = name.max(line) as f64 * SERVICE_TIGHT_CHAR_W + 20.0;
            assert!(r.w >= text - 1e-9, "{r:?} for {name}/{line}: {slots:?}");
        }
        assert!(
            slots[4].x + slots[4].w <= WIDTH - MARGIN + 1e-9,
            "{slots:?}"
        );
        for w in slots.windows(2) {
            assert!(w[1].x >= w[0].x + w[0].w + TIGHT_GAP - 1e-9, "{slots:?}");
        }
    }

    #[test]
    fn many_services_take_rows_at_the_usual_width() {
        let mut yaml = String::from(
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {addresses: [{type: InternalIP, address: 10.0.0.1}]}\n",
        );
        for i in 0..12 {
            yaml.push_str(&format!(
                "---\napiVersion: v1\nkind: Service\nmetadata: {{name: s{i}}}\nspec: {{ports: [{{port: 80}}]}}\n"
            ));
        }
        let (cluster, _) = crate::Code::ALL.parse(&yaml);
        let s = layout(&cluster, &[]);
        // Twelve Services: three rows of four, every one drawn, nothing wider.
        assert_eq!(s.services.len(), 12);
        assert!(s.more_services.is_none());
        assert_eq!(s.width, WIDTH);
        let rows: std::collections::BTreeSet<u64> =
            s.services.iter().map(|b| b.rect.y as u64).collect();
        assert_eq!(rows.len(), SERVICE_ROWS);
        for b in &s.services {
            assert!(
                b.rect.w >= 180.0,
                "room for a 17-character name: {:?}",
                b.rect
            );
            assert!(
                b.rect.x >= 0.0 && b.rect.x + b.rect.w <= s.width,
                "{:?}",
                b.rect
            );
        }
        // The strip and the nodes sit below the last row.
        let last = s
            .services
            .iter()
            .map(|b| b.rect.y + b.rect.h)
            .fold(0.0, f64::max);
        assert!(s.strip.y > last, "{} > {last}", s.strip.y);
        assert!(s.nodes.iter().all(|n| n.rect.y > s.strip.y + s.strip.h));
        assert_eq!(
            scene().width,
            WIDTH,
            "a small cluster keeps the usual width"
        );
        assert_eq!(scene().strip.y, STRIP_Y, "and its single row");
    }

    #[test]
    fn services_past_the_cap_are_counted_in_one_box() {
        let mut yaml = String::from(
            "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {addresses: [{type: InternalIP, address: 10.0.0.1}]}\n\
             ---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {app: a}}\nspec: {nodeName: n1}\n\
             status: {podIP: 10.244.0.5, conditions: [{type: Ready, status: 'True'}]}\n",
        );
        let n = MAX_SERVICE_BOXES + 25;
        for i in 0..n {
            yaml.push_str(&format!(
                "---\napiVersion: v1\nkind: Service\nmetadata: {{name: s{i:03}}}\nspec: {{selector: {{app: a}}, ports: [{{port: 80}}]}}\n"
            ));
        }
        let (cluster, diags) = crate::Code::ALL.parse(&yaml);
        assert!(!crate::util::diag::has_errors(&diags), "{diags:?}");
        let slices = crate::net::controller::steady_slices(&cluster);
        let s = layout(&cluster, &slices);
        assert_eq!(s.services.len(), MAX_SERVICE_BOXES);
        assert_eq!(
            s.services[0].id.name, "s000",
            "the first Services by name are drawn"
        );
        let more = s.more_services.expect("a box for the rest");
        assert_eq!(more.count, 25);
        let last = s.services[MAX_SERVICE_BOXES - 1].rect;
        assert!(
            more.rect.x > last.x + last.w && more.rect.y == last.y,
            "after the last drawn box, in its row"
        );
        assert!(more.rect.x + more.rect.w <= s.width);
        // Every drawn Service selects the Pod; the others have no edge.
        assert_eq!(s.edges.len(), MAX_SERVICE_BOXES);
        assert!(s
            .edges
            .iter()
            .all(|e| s.services.iter().any(|b| b.id == e.service)));
        assert!(
            scene().more_services.is_none(),
            "a small cluster draws every Service"
        );
    }

    #[test]
    fn boxes_stay_inside_the_view_and_do_not_overlap() {
        let s = scene();
        let mut rects: Vec<Rect> = s.services.iter().map(|x| x.rect).collect();
        rects.extend(s.pods.iter().map(|p| p.rect));
        for r in &rects {
            assert!(
                r.x >= 0.0 && r.x + r.w <= s.width && r.y >= 0.0 && r.y + r.h <= s.height,
                "{r:?}"
            );
        }
        for (i, a) in rects.iter().enumerate() {
            for b in &rects[i + 1..] {
                let apart =
                    a.x + a.w <= b.x || b.x + b.w <= a.x || a.y + a.h <= b.y || b.y + b.h <= a.y;
                assert!(apart, "{a:?} overlaps {b:?}");
            }
        }
        for p in &s.pods {
            let node = s.nodes.iter().find(|n| n.name == p.node);
            let inside = node.is_some_and(|n| {
                p.rect.x >= n.rect.x
                    && p.rect.x + p.rect.w <= n.rect.x + n.rect.w
                    && p.rect.y + p.rect.h <= n.rect.y + n.rect.h
            });
            assert!(inside, "{} not inside its node", p.id);
        }
    }
}
