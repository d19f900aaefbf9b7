//! Where each box of the diagram goes: the entry row, the Service band
//! (as many boxes per row as their names allow, a "+N more" box past the
//! cap), the open node's pipeline strip, the nodes with their Pods, and
//! the graph of what connects to what that routes follow.

use super::*;

/// How the Service band is laid out: the boxes drawn, the columns of a row
/// and the rows (a "+N more" box takes the last slot when some are not
/// drawn).
pub(super) struct ServiceBand {
    drawn: usize,
    cols: usize,
    rows: usize,
}

impl ServiceBand {
    pub(super) fn of(services: usize) -> ServiceBand {
        let room = SERVICE_COLS * SERVICE_ROWS;
        let drawn = if services > room {
            MAX_SERVICE_BOXES
        } else {
            services
        };
        let slots = (drawn + usize::from(services > drawn)).max(1);
        // Five still fit one row (each about 150 wide); past that, rows of
        // four.
        let cols = if slots <= SERVICE_COLS + 1 {
            slots
        } else {
            SERVICE_COLS
        };
        ServiceBand {
            drawn,
            cols,
            rows: slots.div_ceil(cols),
        }
    }
}

/// A Service box's title: 17 units, 0.62 em a character, and its padding.
pub(super) const SERVICE_CHAR_W: f64 = 17.0 * 0.62;
pub(super) const SERVICE_PAD: f64 = 24.0;
/// The narrowest a Service box gets while its row has room: its second
/// line (type and address) still fits.
const SERVICE_MIN_W: f64 = 180.0;
/// What a box's text must have at least, in a row too full for every name
/// at the title size: the name and the shortest second line at 16.5 units
/// (the size of the box's address, at which the app then draws the name),
/// and the 20 units the app leaves.
pub(super) const SERVICE_TIGHT_CHAR_W: f64 = 16.5 * 0.62;
const SERVICE_TEXT_PAD: f64 = 20.0;
/// Between the boxes of such a row.
pub(super) const TIGHT_GAP: f64 = 8.0;

/// Where the Service band's boxes go, for boxes whose names and shortest
/// second lines have `texts` characters: rows of `band.cols`, centred. A
/// box is as wide as its name needs (at least [`SERVICE_MIN_W`]), and the
/// row's spare room widens each up to the row's even share (110 to 320). A
/// row whose names do not all fit first gives every box what its text
/// needs at 16.5 units (with narrower gaps), then shares the rest in
/// proportion to what each still lacks; only a row too narrow even for
/// that is shared in proportion to the needs.
pub(super) fn service_slots(texts: &[(usize, usize)], band: &ServiceBand, top: f64) -> Vec<Rect> {
    let cols = band.cols.max(1);
    let m = cols as f64;
    let even = ((WIDTH - 2.0 * MARGIN - (m - 1.0) * GAP) / m).clamp(110.0, 320.0);
    let mut out = Vec::with_capacity(texts.len());
    for (row, chunk) in texts.chunks(cols).enumerate() {
        let k = chunk.len() as f64;
        let room = WIDTH - 2.0 * MARGIN - (k - 1.0) * GAP;
        let needs: Vec<f64> = chunk
            .iter()
            .map(|&(c, _)| (c as f64 * SERVICE_CHAR_W + SERVICE_PAD).max(SERVICE_MIN_W.min(even)))
            .collect();
        let total: f64 = needs.iter().sum();
        // A too-full row closes up its gaps before any text is cut.
        let gap = if total > room { TIGHT_GAP } else { GAP };
        let widths: Vec<f64> = if total > room {
            tight_widths(chunk, &needs, WIDTH - 2.0 * MARGIN - (k - 1.0) * gap)
        } else {
            let spare = (room - total) / k;
            needs
                .iter()
                .map(|&w| (w + spare).min(w.max(even)))
                .collect()
        };
        // A short last row lines up under the first ones, as before.
        let row_w = if chunk.len() < cols && widths.iter().all(|&w| w <= even) {
            m * even + (m - 1.0) * GAP
        } else {
            widths.iter().sum::<f64>() + (k - 1.0) * gap
        };
        let mut x = MARGIN.max((WIDTH - row_w) / 2.0);
        for w in widths {
            out.push(Rect {
                x,
                y: top + row as f64 * (SERVICE_H + SERVICE_ROW_GAP),
                w,
                h: SERVICE_H,
            });
            x += w + gap;
        }
    }
    out
}

/// A too-full row's widths: each box's text at 16.5 units first, the rest of
/// `room` in proportion to what each still lacks of its `needs`.
fn tight_widths(chunk: &[(usize, usize)], needs: &[f64], room: f64) -> Vec<f64> {
    let hard: Vec<f64> = chunk
        .iter()
        .map(|&(c, l)| c.max(l) as f64 * SERVICE_TIGHT_CHAR_W + SERVICE_TEXT_PAD)
        .collect();
    let hard_total: f64 = hard.iter().sum();
    if hard_total >= room {
        return needs
            .iter()
            .map(|w| w * room / needs.iter().sum::<f64>())
            .collect();
    }
    let lack: Vec<f64> = needs
        .iter()
        .zip(&hard)
        .map(|(n, h)| (n - h).max(0.0))
        .collect();
    let lack_total: f64 = lack.iter().sum();
    let extra = room - hard_total;
    hard.iter()
        .zip(&lack)
        .map(|(h, l)| {
            h + if lack_total > 0.0 {
                l * extra / lack_total
            } else {
                extra / hard.len().max(1) as f64
            }
        })
        .collect()
}

/// The narrowest a Pod box gets side by side with another: its name's
/// start, its address and "✔ Ready" still fit.
pub(super) const POD_MIN_W: f64 = 180.0;
/// Between two Pod boxes side by side.
const POD_GAP_X: f64 = 8.0;

/// How many Pod boxes a node of width `node_w` holds side by side when its
/// fullest node has `most` Pods: two once a node holds four or more and
/// there is room for two, so a few wide nodes do not make the diagram tall
/// (and its text small in a short frame).
fn pod_columns(node_w: f64, most: usize) -> usize {
    if most >= 4 && node_w - 16.0 - POD_GAP_X >= 2.0 * POD_MIN_W {
        2
    } else {
        1
    }
}

/// Whether any Service, Pod or node address is IPv6.
fn has_ipv6(cluster: &Cluster) -> bool {
    let v6 = |ip: &std::net::IpAddr| ip.is_ipv6();
    cluster
        .services
        .iter()
        .any(|s| s.cluster_ips.iter().any(v6))
        || cluster.pods.iter().any(|p| p.ips.iter().any(v6))
        || cluster
            .nodes
            .iter()
            .any(|n| n.primary_ip(IpFamily::V6).is_some())
}

/// The sizes every box is placed by, decided before any is placed.
struct Frame {
    node_w: f64,
    node_h: f64,
    node_top: f64,
    pod_cols: usize,
    pod_w: f64,
    band: ServiceBand,
    card_lines: usize,
    /// How much taller the card is than two lines.
    card_extra: f64,
    /// How far the strip moves down (the card's extra lines, the band's
    /// extra rows).
    shift: f64,
    strip_rows: f64,
    height: f64,
}

impl Frame {
    fn of(cluster: &Cluster, most_pods: usize) -> Frame {
        let n = cluster.nodes.len().max(1) as f64;
        let node_w = ((WIDTH - 2.0 * MARGIN - (n - 1.0) * GAP) / n).max(120.0);
        let pod_cols = pod_columns(node_w, most_pods);
        let pod_rows = most_pods.div_ceil(pod_cols).max(1) as f64;
        let pod_w = (node_w - 16.0 - (pod_cols - 1) as f64 * POD_GAP_X) / pod_cols as f64;
        let node_h = NODE_HEADER + pod_rows * (POD_H + POD_GAP) + 6.0;
        // The Service band: how many boxes, in how many rows; each row past
        // the first moves the strip and the nodes down.
        let band = ServiceBand::of(cluster.services.len());
        // An HTTP proxy's hops are told in longer sentences: the card gets
        // a third line, and everything below it moves down.
        let card_lines = if cluster.routing.is_empty() { 2 } else { 3 };
        let card_extra = card_h(card_lines) - CARD_H;
        let shift = card_extra + band.rows.saturating_sub(1) as f64 * (SERVICE_H + SERVICE_ROW_GAP);
        // IPv6 addresses make the strip's values about twice as long: a
        // third row is kept for them, so none is cut (Scene::strip_box uses
        // it only when two rows cannot hold the texts).
        let strip_rows = if has_ipv6(cluster) { 3.0 } else { 2.0 };
        let node_top = NODE_TOP + shift + (strip_rows - 2.0) * (STRIP_ROW_H + STRIP_GAP);
        Frame {
            node_w,
            node_h,
            node_top,
            pod_cols,
            pod_w,
            band,
            card_lines,
            card_extra,
            shift,
            strip_rows,
            height: node_top + node_h + MARGIN,
        }
    }
}

/// The places routes go through and what connects them: vertex i of the
/// graph is place i.
struct Places {
    places: Vec<(Place, Point)>,
    graph: UnGraph<(), ()>,
}

impl Places {
    fn add(&mut self, p: Place, pt: Point) -> usize {
        self.places.push((p, pt));
        self.graph.add_node(()).index()
    }
    fn edge(&mut self, a: usize, b: usize) {
        self.graph
            .add_edge(NodeIndex::new(a), NodeIndex::new(b), ());
    }
}

/// The entry row: the client, and the load balancer when a Service has an
/// address on one.
struct Entry {
    client: Rect,
    load_balancer: Option<Rect>,
    lb_ips: Vec<String>,
    assumed: bool,
    /// The place traffic enters the nodes from (the load balancer, else
    /// the client).
    from: usize,
}

fn entry_row(cluster: &Cluster, at: &mut Places, links: &mut Vec<Link>) -> Entry {
    let client = Rect {
        x: MARGIN,
        y: ENTRY_Y,
        w: 170.0,
        h: ENTRY_H,
    };
    let client_i = at.add(Place::Client, client.center());
    let lb_ips: Vec<String> = cluster
        .services
        .iter()
        .filter(|s| s.service_type == ServiceType::LoadBalancer)
        .flat_map(|s| s.load_balancer_addresses().map(|ip| ip.to_string()))
        .collect();
    let assumed = cluster
        .services
        .iter()
        .any(|s| s.service_type == ServiceType::LoadBalancer && s.load_balancer_assumed);
    let load_balancer = (!lb_ips.is_empty()).then_some(Rect {
        x: client.x + client.w + 1.5 * GAP,
        y: ENTRY_Y,
        w: 220.0,
        h: ENTRY_H,
    });
    let mut from = client_i;
    if let Some(lb) = load_balancer {
        from = at.add(Place::LoadBalancer, lb.center());
        at.edge(client_i, from);
        links.push(Link {
            from: Point {
                x: client.x + client.w,
                y: client.center().y,
            },
            to: Point {
                x: lb.x,
                y: lb.center().y,
            },
            kind: "entry",
            nodes: Vec::new(),
        });
    }
    Entry {
        client,
        load_balancer,
        lb_ips,
        assumed,
        from,
    }
}

/// Each node's Pods, by node name.
type PodsByNode<'c> = BTreeMap<&'c str, Vec<&'c crate::model::Pod>>;

/// A Pod's box, its labels with `app=` first.
fn pod_box(pod: &crate::model::Pod, node: &str, rect: Rect) -> PodBox {
    let mut labels: Vec<String> = pod
        .labels
        .iter()
        .filter(|(k, _)| k.as_str() != "pod-template-hash")
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    crate::util::order::sort_by_key(&mut labels, |l| !l.starts_with("app="));
    PodBox {
        id: pod.id.clone(),
        node: node.to_string(),
        ip: pod
            .ips
            .first()
            .map(|i| i.to_string())
            .unwrap_or_else(|| "—".into()),
        labels,
        rect,
    }
}

/// The nodes left to right, each with its eth0, its kube-proxy and its
/// Pods (left to right, then down); the links from the entry and between
/// neighbours. Returns the nodes, the Pods and each node's kube-proxy place.
fn node_columns(
    cluster: &Cluster,
    pods_by_node: &PodsByNode,
    f: &Frame,
    entry: &Entry,
    at: &mut Places,
    links: &mut Vec<Link>,
) -> (Vec<NodeBox>, Vec<PodBox>, Vec<usize>) {
    let into = entry.load_balancer.unwrap_or(entry.client);
    let (node_w, node_top) = (f.node_w, f.node_top);
    let mut nodes: Vec<NodeBox> = Vec::new();
    let mut pods = Vec::new();
    let mut proxies = Vec::new();
    for (k, node) in cluster.nodes.iter().enumerate() {
        let x = MARGIN + k as f64 * (node_w + GAP);
        let eth = Rect {
            x: x + 8.0,
            y: node_top + 34.0,
            w: node_w - 16.0,
            h: 24.0,
        };
        // The mode glyph and word at the header's right end: where the
        // node's kube-proxy rules are entered.
        let proxy = Rect {
            x: x + node_w - 8.0 - (node_w * 0.5).min(140.0),
            y: node_top + 6.0,
            w: (node_w * 0.5).min(140.0),
            h: 24.0,
        };
        let eth_top = Point {
            x: eth.x + eth.w / 2.0,
            y: eth.y,
        };
        let eth_i = at.add(Place::NodeEth(node.name.clone()), eth_top);
        let proxy_i = at.add(Place::NodeProxy(node.name.clone()), proxy.center());
        at.edge(eth_i, proxy_i);
        at.edge(entry.from, eth_i);
        links.push(Link {
            from: Point {
                x: into.center().x,
                y: into.y + into.h,
            },
            to: Point {
                x: x + node_w / 2.0,
                y: node_top,
            },
            kind: "entry",
            nodes: vec![node.name.clone()],
        });
        if let (Some(prev), Some(prev_node)) = (nodes.last(), cluster.nodes.get(k.wrapping_sub(1)))
        {
            links.push(Link {
                from: Point {
                    x: prev.rect.x + prev.rect.w,
                    y: eth.y + eth.h / 2.0,
                },
                to: Point {
                    x,
                    y: eth.y + eth.h / 2.0,
                },
                kind: "pod-network",
                nodes: vec![prev_node.name.clone(), node.name.clone()],
            });
        }
        for &other in &proxies {
            at.edge(proxy_i, other);
        }
        proxies.push(proxy_i);
        let on_node = pods_by_node.get(node.name.as_str()).into_iter().flatten();
        for (j, pod) in on_node.enumerate() {
            let (row, col) = (j / f.pod_cols, j % f.pod_cols);
            let r = Rect {
                x: x + 8.0 + col as f64 * (f.pod_w + POD_GAP_X),
                y: node_top + NODE_HEADER + row as f64 * (POD_H + POD_GAP),
                w: f.pod_w,
                h: POD_H,
            };
            let pi = at.add(Place::Pod(pod.id.clone()), r.center());
            at.edge(proxy_i, pi);
            pods.push(pod_box(pod, &node.name, r));
        }
        nodes.push(NodeBox {
            name: node.name.clone(),
            ip: node
                .primary_ip(IpFamily::V4)
                .or_else(|| node.primary_ip(IpFamily::V6))
                .map(|i| i.to_string())
                .unwrap_or_default(),
            pod_cidr: node.pod_cidrs.first().map(|c| c.to_string()),
            zone: node.zone.clone(),
            rect: Rect {
                x,
                y: node_top,
                w: node_w,
                h: f.node_h,
            },
            proxy,
            eth,
        });
    }
    (nodes, pods, proxies)
}

/// The characters of a Service box's shortest second line: its address,
/// after `NP `, `LB ` or `ExternalName ` for those types (as the app
/// abbreviates a narrow box's).
fn short_line_chars(svc: &crate::model::Service) -> usize {
    let ip = address_text(svc).chars().count();
    ip + match svc.service_type {
        ServiceType::ClusterIP => 0,
        ServiceType::NodePort | ServiceType::LoadBalancer => 3,
        ServiceType::ExternalName => 13,
    }
}

/// The address a Service box shows: its first ClusterIP, "None
/// (headless)", or "—" without one.
fn address_text(svc: &crate::model::Service) -> String {
    if svc.headless {
        "None (headless)".into()
    } else {
        svc.cluster_ips
            .first()
            .map(|i| i.to_string())
            .unwrap_or_else(|| "—".into())
    }
}

/// A Service's box: its address, its ports.
fn service_box(svc: &crate::model::Service, rect: Rect) -> ServiceBox {
    ServiceBox {
        id: svc.id.clone(),
        service_type: svc.service_type,
        cluster_ip: address_text(svc),
        ports: svc
            .ports
            .iter()
            .map(|p| match p.node_port {
                Some(np) => format!(
                    "{}/{} → {} (NodePort {np})",
                    p.port, p.protocol, p.target_port
                ),
                None => format!("{}/{} → {}", p.port, p.protocol, p.target_port),
            })
            .collect(),
        rect,
    }
}

/// The Service band under the entry row; past the band's room, one more
/// box counts the rest. Each drawn Service connects to every kube-proxy.
fn service_band(
    cluster: &Cluster,
    f: &Frame,
    proxies: &[usize],
    at: &mut Places,
) -> (Vec<ServiceBox>, Option<MoreServices>) {
    let svcs: Vec<_> = cluster.services.iter().take(f.band.drawn).collect();
    let hidden = cluster.services.len() - svcs.len();
    let mut texts: Vec<(usize, usize)> = svcs
        .iter()
        .map(|s| (s.id.name.chars().count(), short_line_chars(s)))
        .collect();
    if hidden > 0 {
        texts.push((0, 0));
    }
    let slots = service_slots(&texts, &f.band, SERVICE_Y + f.card_extra);
    let slot = |k: usize| slots.get(k).copied().unwrap_or_default();
    let mut services = Vec::new();
    for (k, svc) in svcs.iter().enumerate() {
        let rect = slot(k);
        let si = at.add(
            Place::Service(svc.id.clone()),
            Point {
                x: rect.x + rect.w / 2.0,
                y: rect.y + rect.h / 2.0,
            },
        );
        for &p in proxies {
            at.edge(si, p);
        }
        services.push(service_box(svc, rect));
    }
    let more = (hidden > 0).then(|| MoreServices {
        count: hidden,
        rect: slot(svcs.len()),
    });
    (services, more)
}

/// The drawn Services' endpoint edges, once per (Service, Pod), with the
/// endpoint's readiness.
fn endpoint_edges(
    slices: &[EndpointSlice],
    services: &[ServiceBox],
    pods: &[PodBox],
) -> Vec<EndpointEdge> {
    let drawn = crate::util::order::set(services.iter().map(|b| &b.id));
    let pod_ids = crate::util::order::set(pods.iter().map(|p| &p.id));
    let mut edges: BTreeMap<(NamespacedName, NamespacedName), bool> = BTreeMap::new();
    for s in slices {
        let svc = NamespacedName::new(s.id.namespace.clone(), s.service_name.clone());
        if !drawn.contains(&svc) {
            continue;
        }
        for e in &s.endpoints {
            if let Some(pod) = e.target_pod.as_ref().filter(|p| pod_ids.contains(p)) {
                edges.entry((svc.clone(), pod.clone())).or_insert(e.ready);
            }
        }
    }
    edges
        .into_iter()
        .map(|((service, pod), ready)| EndpointEdge {
            service,
            pod,
            ready,
        })
        .collect()
}

/// Lay out the cluster. `slices` gives the endpoint edges (readiness shown).
pub fn layout(cluster: &Cluster, slices: &[EndpointSlice]) -> Scene {
    let mut pods_by_node: PodsByNode = BTreeMap::new();
    for p in &cluster.pods {
        pods_by_node
            .entry(p.node_name.as_deref().unwrap_or(""))
            .or_default()
            .push(p);
    }
    let most = pods_by_node.values().map(Vec::len).max().unwrap_or(0);
    let f = Frame::of(cluster, most);
    let mut at = Places {
        places: Vec::new(),
        graph: UnGraph::new_undirected(),
    };
    let mut links = Vec::new();
    let entry = entry_row(cluster, &mut at, &mut links);
    let (nodes, pods, proxies) =
        node_columns(cluster, &pods_by_node, &f, &entry, &mut at, &mut links);
    let (services, more_services) = service_band(cluster, &f, &proxies, &mut at);
    let edges = endpoint_edges(slices, &services, &pods);
    // Many Services do not fit the usual width: the view widens (the app
    // scales it to its container) rather than cut boxes off.
    let width = more_services
        .map(|b| b.rect)
        .or(services.last().map(|b| b.rect))
        .map(|r| r.x + r.w + MARGIN)
        .unwrap_or(0.0)
        .max(WIDTH);
    let strip = Rect {
        x: MARGIN,
        y: STRIP_Y + f.shift,
        w: WIDTH - 2.0 * MARGIN,
        h: f.strip_rows * STRIP_ROW_H + (f.strip_rows - 1.0) * STRIP_GAP,
    };
    Scene {
        width,
        height: f.height,
        client: entry.client,
        load_balancer: entry.load_balancer,
        load_balancer_ips: entry.lb_ips,
        load_balancer_assumed: entry.assumed,
        nodes,
        pods,
        services,
        more_services,
        edges,
        links,
        strip,
        step_names: Vec::new(),
        card_lines: f.card_lines,
        graph: at.graph,
        places: at.places,
    }
}
