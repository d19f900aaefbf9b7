//! Packet routes on the diagram: the shortest path between two places
//! along the topology graph, found exactly as `petgraph::algo::astar`
//! finds it (same heap, same edge order, same ties).

use super::{Place, Point, Scene};
use petgraph::graph::NodeIndex;

impl Scene {
    /// The points a packet passes going from `a` to `b` along the topology
    /// (shortest path by drawn distance), both ends included.
    pub fn route(&self, a: &Place, b: &Place) -> Vec<Point> {
        let (Some(ia), Some(ib)) = (self.index(a), self.index(b)) else {
            return Vec::new();
        };
        match self.astar(ia, ib) {
            Some(path) => path.into_iter().map(|i| self.places[i].1).collect(),
            None => vec![self.places[ia].1, self.places[ib].1],
        }
    }

    /// The path `petgraph::algo::astar` finds from vertex `start` to `goal`
    /// (edge cost and estimate: the drawn distance), step for step the same
    /// search — the same heap, the same order of edges, the same ties — with
    /// its hash maps replaced by vectors indexed by vertex (their code and
    /// their randomly seeded hasher, foldhash, were used nowhere else).
    fn astar(&self, start: usize, goal: usize) -> Option<Vec<usize>> {
        use petgraph::visit::EdgeRef;
        use std::collections::BinaryHeap;
        let dist = |i: usize, j: usize| self.places[i].1.distance(self.places[j].1);
        let n = self.places.len();
        // (f, h, g) per vertex, and the vertex each was reached from.
        let mut scores: Vec<Option<(f64, f64, f64)>> = vec![None; n];
        let mut came_from: Vec<Option<usize>> = vec![None; n];
        let mut next = BinaryHeap::new();
        let h = dist(start, goal);
        scores[start] = Some((h, h, 0.0));
        next.push(MinScored((h, h, 0.0), start));
        while let Some(MinScored((f, h, g), node)) = next.pop() {
            if node == goal {
                let mut path = vec![node];
                let mut at = node;
                while let Some(prev) = came_from[at] {
                    path.push(prev);
                    at = prev;
                }
                path.reverse();
                return Some(path);
            }
            if scores[node].is_some_and(|(_, _, old_g)| old_g < g) {
                continue;
            }
            scores[node] = Some((f, h, g));
            for e in self.graph.edges(NodeIndex::new(node)) {
                let neigh = e.target().index();
                let neigh_g = g + dist(e.source().index(), neigh);
                let neigh_h = dist(neigh, goal);
                let score = (neigh_g + neigh_h, neigh_h, neigh_g);
                if scores[neigh].is_some_and(|(_, _, old_g)| neigh_g >= old_g) {
                    continue;
                }
                scores[neigh] = Some(score);
                came_from[neigh] = Some(node);
                next.push(MinScored(score, neigh));
            }
        }
        None
    }
}

/// A heap entry ordered as petgraph's `MinScored`: the smallest score first
/// (NaN last), the vertex not compared.
struct MinScored((f64, f64, f64), usize);

impl PartialEq for MinScored {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl Eq for MinScored {}

impl PartialOrd for MinScored {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for MinScored {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        use std::cmp::Ordering::*;
        let (a, b) = (&self.0, &other.0);
        #[allow(clippy::eq_op)]
        let nan = |x: &(f64, f64, f64)| x.ne(x);
        if a == b {
            Equal
        } else if a < b {
            Greater
        } else if a > b {
            Less
        } else if nan(a) && nan(b) {
            Equal
        } else if nan(a) {
            Less
        } else {
            Greater
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::scene;
    use super::super::{layout, Place};
    use petgraph::graph::NodeIndex;

    #[test]
    fn astar_finds_petgraphs_paths() {
        // Every shipped scenario, every pair of places: the same path as
        // petgraph's own astar, ties and all.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/scenarios");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        assert!(files.len() > 10, "scenarios in {}", dir.display());
        let mut pairs = 0;
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            let (cluster, _) = crate::Code::ALL.parse(&text);
            let slices = crate::net::controller::steady_slices(&cluster);
            let s = layout(&cluster, &slices);
            let dist = |i: usize, j: usize| s.places[i].1.distance(s.places[j].1);
            for a in 0..s.places.len() {
                for b in 0..s.places.len() {
                    let want = petgraph::algo::astar(
                        &s.graph,
                        NodeIndex::new(a),
                        |n| n.index() == b,
                        |e| {
                            use petgraph::visit::EdgeRef;
                            dist(e.source().index(), e.target().index())
                        },
                        |n| dist(n.index(), b),
                    )
                    .map(|(_, p)| p.into_iter().map(|n| n.index()).collect::<Vec<_>>());
                    assert_eq!(s.astar(a, b), want, "{} {a} → {b}", f.display());
                    pairs += 1;
                }
            }
        }
        assert!(pairs > 1000, "{pairs}");
    }

    #[test]
    fn routes_follow_the_topology() {
        let s = scene();
        let pod_on_2 = s
            .pods
            .iter()
            .find(|p| p.node == "worker-2")
            .map(|p| p.id.clone());
        let Some(pod) = pod_on_2 else {
            panic!("no pod on worker-2")
        };
        let route = s.route(
            &Place::NodeProxy("worker-1".into()),
            &Place::Pod(pod.clone()),
        );
        // worker-1's rules → worker-2's → the Pod.
        assert_eq!(route.len(), 3, "{route:?}");
        assert_eq!(
            route.first().copied(),
            s.anchor(&Place::NodeProxy("worker-1".into()))
        );
        assert_eq!(route.last().copied(), s.anchor(&Place::Pod(pod)));
        let from_client = s.route(&Place::Client, &Place::NodeEth("worker-3".into()));
        assert_eq!(from_client.len(), 2);
    }
}
