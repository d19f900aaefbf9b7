//! A node's packet pipeline as the learner's view draws it: the steps one
//! connection actually took through netfilter and kube-proxy on a node, one
//! box per step, with the hop of the trace that sits in each.
//!
//! A trace lists every rule the packet was compared against; a learner needs
//! the shape of that walk. [`pipelines`] groups a trace's rule hops into at
//! most a handful of boxes per node — the netfilter hooks and kube-proxy's
//! chain families (iptables: `KUBE-SERVICES → KUBE-SVC-… → KUBE-SEP-…`;
//! IPVS: the ipset match, `kube-ipvs0`, the virtual server and its real
//! server; nftables: the `services` verdict map, the service and endpoint
//! chains; userspace: the REDIRECT, the kube-proxy process and its dials).
//! Helper chains that only set a mark or reject (`KUBE-MARK-MASQ`,
//! `mark-for-masquerade`, filter chains under a hook) fold into the box that
//! called them. Each hop gets the box it is in and its index inside the box,
//! so every hop moves the packet.
//!
//! The grouping is decided here, once, from the trace's typed steps; the web
//! app only draws it. Box keys are stable names (`data-step` in the app);
//! the words for them live in the web crate. Never reads anything but the
//! trace.

use crate::model::Mode;
use crate::net::modes::StepAction;
use crate::net::trace::{HopKind, Place, Trace};

use serde::Serialize;
use std::net::SocketAddr;

/// What a box did to the packet (shown as a chip on the box).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Chip {
    /// Destination rewritten (DNAT, IPVS masq forwarding).
    Dnat {
        to: SocketAddr,
    },
    /// Redirected to the kube-proxy process's port (userspace).
    Redirect {
        to: SocketAddr,
    },
    /// Marked for masquerade (`KUBE-MARK-MASQ`, `mark-for-masquerade`).
    MarkMasq,
    /// Source rewritten to the node's address.
    Masquerade {
        to: SocketAddr,
    },
    /// A random pick or scheduler chose one of `among`.
    Pick {
        chosen: SocketAddr,
        among: usize,
    },
    /// The userspace proxy dialled a backend; `answered` or not.
    Dial {
        to: SocketAddr,
        answered: bool,
    },
    /// The connection ended here.
    Drop,
    Reject,
    Accept,
    /// TLS ended at an HTTP proxy (the server name, the Secret presented;
    /// `None`: the controller's own certificate).
    Tls {
        sni: String,
        certificate: Option<crate::model::NamespacedName>,
    },
    /// The HTTP proxy answered with this status itself.
    Status {
        status: u16,
    },
    /// Sent on by direct server return, the Service's address carried
    /// along (Cilium).
    Dsr {
        service: SocketAddr,
    },
}

impl Chip {
    /// About how many characters the chip takes when drawn: its values
    /// (addresses, names) whole plus a short label. The strip widens a box
    /// by this much, so the values a learner is asked about are never cut.
    pub fn chars(&self) -> usize {
        let addr = |a: &SocketAddr| a.to_string().len();
        match self {
            Chip::Dnat { to } => 7 + addr(to),
            Chip::Redirect { to } => 12 + to.port().to_string().len(),
            Chip::MarkMasq => 13,
            Chip::Masquerade { to } => 7 + to.ip().to_string().len(),
            Chip::Pick { chosen, among } => 7 + among.to_string().len() + addr(chosen),
            Chip::Dial { to, .. } => 7 + addr(to),
            Chip::Drop => 4,
            Chip::Reject | Chip::Accept => 6,
            Chip::Tls {
                certificate: Some(c),
                ..
            } => 11 + c.to_string().len(),
            Chip::Tls { .. } => 28,
            Chip::Status { .. } => 11,
            Chip::Dsr { service } => 6 + addr(service),
        }
    }
}

/// Characters of a chain name drawn in a box with no chip: it names where
/// the packet is, not what was done to it, and may be shortened (a
/// `KUBE-SVC-<hash>` keeps its family).
const CHAIN_CHARS: usize = 14;

/// One step of a node's pipeline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PipelineBox {
    /// Stable name: `PREROUTING`, `KUBE-SERVICES`, `KUBE-SVC`, `KUBE-SEP`,
    /// `ipvs-virtual-server`, `nft-services-map`, `kube-proxy-process`, …
    pub key: &'static str,
    /// The first chain (or object) of the box, as the node names it.
    pub chain: String,
    /// Hops of the trace in this box, in order (indices into `Trace::hops`).
    pub hops: Vec<usize>,
    pub chips: Vec<Chip>,
}

impl PipelineBox {
    /// About how many characters the box needs, its name drawn in
    /// `name_chars` (the name the app gives its key, in the app's language):
    /// (its name's, with the current or passed mark; its wider line's: the
    /// name, or its chips joined by ` · `, or else its first chain). See
    /// [`crate::view::scene::Scene::strip_box`].
    pub fn chars(&self, name_chars: usize) -> (usize, usize) {
        let name = name_room(name_chars);
        let detail = if self.chips.is_empty() {
            self.chain.chars().count().min(CHAIN_CHARS)
        } else {
            self.chips
                .iter()
                .map(|c| c.chars() + 3)
                .sum::<usize>()
                .saturating_sub(3)
        };
        (name, name.max(detail))
    }
}

/// Characters a box's name line takes for a name of `chars`: the mark
/// (`▶ `, `✓ `) and the bolder, larger name font besides.
pub fn name_room(chars: usize) -> usize {
    chars + 3
}

/// The boxes of one node, in the order the packet first reached them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Pipeline {
    pub node: String,
    /// An HTTP proxy Pod's steps (listener → route → rule → filters →
    /// backend), not the node's rules.
    pub proxy: Option<crate::model::NamespacedName>,
    /// The Pod whose socket these steps run at (Cilium's socket load
    /// balancing, at `connect()`): no packet exists yet.
    pub socket: Option<crate::model::NamespacedName>,
    pub mode: Mode,
    pub boxes: Vec<PipelineBox>,
}

/// Where a hop sits in the pipelines of its trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Slot {
    /// Index into the result of [`pipelines`].
    pub pipeline: usize,
    pub boxed: usize,
    /// The hop's place among the box's hops (0-based).
    pub within: usize,
}

/// The generic shape of a mode's pipeline, for a node no packet is in: how
/// the mode is recognised with its labels hidden.
pub fn skeleton(mode: Mode) -> &'static [&'static str] {
    match mode {
        Mode::Iptables => &[
            "PREROUTING",
            "KUBE-SERVICES",
            "KUBE-SVC",
            "KUBE-SEP",
            "POSTROUTING",
        ],
        Mode::Ipvs => &[
            "PREROUTING",
            "KUBE-SERVICES",
            "kube-ipvs0",
            "ipvs-virtual-server",
            "ipvs-real-server",
            "POSTROUTING",
        ],
        Mode::Nftables => &[
            "PREROUTING",
            "nft-services-map",
            "nft-service-chain",
            "nft-endpoint-chain",
            "POSTROUTING",
        ],
        Mode::Userspace => &[
            "PREROUTING",
            "KUBE-PORTALS",
            "kube-proxy-process",
            "kube-proxy-dial",
        ],
        Mode::Cilium => &[
            "bpf-hook",
            "lb-service",
            "lb-select",
            "lb-backend",
            "lb-nat",
        ],
    }
}

/// Strip the table (`nat `, `filter `) or object kind (`chain `, `map `).
fn bare(table_chain: &str) -> &str {
    for p in ["nat ", "filter ", "mangle ", "raw ", "chain ", "map "] {
        if let Some(rest) = table_chain.strip_prefix(p) {
            return rest;
        }
    }
    table_chain
}

/// The box a rule step belongs to, or `None` when it folds into the box
/// that called it.
fn key_of(mode: Mode, table_chain: &str, action: &StepAction) -> Option<&'static str> {
    let chain = bare(table_chain);
    let nat = table_chain.starts_with("nat ");
    let hook = match chain {
        "PREROUTING" => Some("PREROUTING"),
        "OUTPUT" => Some("OUTPUT"),
        "INPUT" if mode == Mode::Ipvs => Some("kube-ipvs0"),
        "INPUT" => Some("INPUT"),
        "FORWARD" => Some("FORWARD"),
        "POSTROUTING" | "KUBE-POSTROUTING" => Some("POSTROUTING"),
        _ => None,
    };
    if hook.is_some() {
        return hook;
    }
    match mode {
        Mode::Nftables => nft_key(chain),
        Mode::Cilium => cilium_key(chain),
        _ if table_chain == "IPVS" => Some(match action {
            StepAction::Lookup { .. } | StepAction::Reject | StepAction::Drop => {
                "ipvs-virtual-server"
            }
            _ => "ipvs-real-server",
        }),
        _ if table_chain == "kube-proxy process" => Some(match action {
            StepAction::Connect { .. } => "kube-proxy-dial",
            _ => "kube-proxy-process",
        }),
        _ => {
            let starts = |p: &str| chain.starts_with(p);
            if nat && chain == "KUBE-SERVICES" {
                Some("KUBE-SERVICES")
            } else if nat && (chain == "KUBE-NODEPORTS" || chain == "KUBE-NODE-PORT") {
                Some("KUBE-NODEPORTS")
            } else if starts("KUBE-EXT-") || starts("KUBE-XLB-") {
                Some("KUBE-EXT")
            } else if starts("KUBE-FW-") || chain == "KUBE-LOAD-BALANCER" {
                Some("KUBE-FW")
            } else if starts("KUBE-SVC-") || starts("KUBE-SVL-") {
                Some("KUBE-SVC")
            } else if starts("KUBE-SEP-") {
                Some("KUBE-SEP")
            } else if starts("KUBE-PORTALS-") {
                Some("KUBE-PORTALS")
            } else if nat && starts("KUBE-NODEPORT-") {
                Some("KUBE-NODEPORT-CONTAINER")
            } else {
                // KUBE-MARK-MASQ, filter chains under a hook, and the like.
                None
            }
        }
    }
}

/// Cilium's steps: the BPF program's hook, then its map lookups.
fn cilium_key(chain: &str) -> Option<&'static str> {
    // A map's name without its family (`cilium_lb4_`, `cilium_lb6_`).
    let name = chain
        .strip_prefix("cilium_lb4_")
        .or_else(|| chain.strip_prefix("cilium_lb6_"))
        .unwrap_or(chain);
    [
        ("bpf sock", "bpf-hook"),
        ("bpf lxc", "bpf-hook"),
        ("bpf host", "bpf-hook"),
        ("bpf select", "lb-select"),
        ("bpf nodeport", "lb-nat"),
        ("services", "lb-service"),
        ("source_range", "lb-service"),
        ("affinity", "lb-select"),
        ("maglev", "lb-select"),
        ("backends", "lb-backend"),
        ("reverse_nat", "lb-nat"),
    ]
    .iter()
    .find(|(p, _)| name.starts_with(p))
    .map(|(_, k)| *k)
}

fn nft_key(chain: &str) -> Option<&'static str> {
    let starts = |p: &str| chain.starts_with(p);
    if starts("nat-prerouting") || starts("filter-prerouting") {
        Some("PREROUTING")
    } else if starts("nat-output") || starts("filter-output") {
        Some("OUTPUT")
    } else if starts("filter-input") {
        Some("INPUT")
    } else if starts("filter-forward") {
        Some("FORWARD")
    } else if starts("nat-postrouting") || chain == "masquerading" {
        Some("POSTROUTING")
    } else if matches!(chain, "services" | "service-ips" | "service-nodeports") {
        Some("nft-services-map")
    } else if starts("external-") {
        Some("nft-external")
    } else if starts("firewall-") && chain.contains('/') {
        Some("nft-firewall")
    } else if (starts("service-") || starts("local-")) && chain.contains('/') {
        Some("nft-service-chain")
    } else if starts("endpoint-") {
        Some("nft-endpoint-chain")
    } else {
        // mark-for-masquerade, firewall-check, the *-check filter chains,
        // reject-chain: part of whatever called them.
        None
    }
}

fn chip_of(action: &StepAction) -> Option<Chip> {
    Some(match action {
        StepAction::Dnat { to } => Chip::Dnat { to: *to },
        StepAction::Redirect { to } => Chip::Redirect { to: *to },
        StepAction::MarkMasq => Chip::MarkMasq,
        StepAction::Choose { chosen, among, .. } => Chip::Pick {
            chosen: *chosen,
            among: *among,
        },
        StepAction::Connect { to, answered } => Chip::Dial {
            to: *to,
            answered: *answered,
        },
        StepAction::Drop => Chip::Drop,
        StepAction::Reject => Chip::Reject,
        StepAction::Accept => Chip::Accept,
        StepAction::Snat { to } => Chip::Masquerade {
            to: SocketAddr::new(*to, 0),
        },
        StepAction::Dsr { service } => Chip::Dsr { service: *service },
        StepAction::Jump { .. } | StepAction::Lookup { .. } | StepAction::Return => return None,
    })
}

/// The box `key` of a pipeline's boxes, added at the end (named `chain`)
/// the first time the packet reaches it. Node and proxy pipelines alike.
fn box_for(
    boxes: &mut Vec<PipelineBox>,
    key: &'static str,
    chain: impl FnOnce() -> String,
) -> usize {
    match boxes.iter().position(|b| b.key == key) {
        Some(b) => b,
        None => {
            boxes.push(PipelineBox {
                key,
                chain: chain(),
                hops: Vec::new(),
                chips: Vec::new(),
            });
            boxes.len() - 1
        }
    }
}

/// Hop `i` into box `b` of pipeline `p`, with what it did as a chip (once
/// per box): the hop's slot.
fn put(out: &mut [Pipeline], p: usize, b: usize, i: usize, chip: Option<Chip>) -> Slot {
    let bx = &mut out[p].boxes[b];
    let within = bx.hops.len();
    bx.hops.push(i);
    // A destination rewritten to the endpoint the box's pick named (IPVS
    // masquerade forwarding) is said once, by the pick: the card marks the
    // rewrite.
    let picked = |to: &SocketAddr, chips: &[Chip]| {
        chips
            .iter()
            .any(|c| matches!(c, Chip::Pick { chosen, .. } if chosen == to))
    };
    // A box that rewrote the packet passed it on: its ACCEPT goes unsaid.
    let rewrote = |chips: &[Chip]| {
        chips.iter().any(|c| {
            matches!(
                c,
                Chip::Dnat { .. }
                    | Chip::Masquerade { .. }
                    | Chip::Redirect { .. }
                    | Chip::Pick { .. }
            )
        })
    };
    if let Some(c) = chip {
        if let Chip::Pick { chosen, .. } = &c {
            bx.chips
                .retain(|d| !matches!(d, Chip::Dnat { to } if to == chosen));
        }
        if rewrote(std::slice::from_ref(&c)) {
            bx.chips.retain(|d| *d != Chip::Accept);
        }
        let said = matches!(&c, Chip::Dnat { to } if picked(to, &bx.chips))
            || (c == Chip::Accept && rewrote(&bx.chips));
        if !said && !bx.chips.contains(&c) {
            bx.chips.push(c);
        }
    }
    Slot {
        pipeline: p,
        boxed: b,
        within,
    }
}

/// The pipelines of a trace (one per node whose rules it met, in order) and,
/// for each hop, its slot (`None` for hops outside any node's rules: the
/// client, the load balancer, the Pod).
pub fn pipelines(trace: &Trace) -> (Vec<Pipeline>, Vec<Option<Slot>>) {
    let mut out: Vec<Pipeline> = Vec::new();
    let mut slots: Vec<Option<Slot>> = Vec::with_capacity(trace.hops.len());
    // The box the last rule hop was in (what a folded chain belongs to).
    let mut last: Option<(usize, usize)> = None;
    for (i, hop) in trace.hops.iter().enumerate() {
        if let HopKind::Http(h) = &hop.what {
            let p = match out.last() {
                Some(pl) if pl.proxy.as_ref() == Some(&h.proxy) && last.is_some() => out.len() - 1,
                _ => {
                    out.push(Pipeline {
                        node: hop.node.clone().unwrap_or_default(),
                        proxy: Some(h.proxy.clone()),
                        socket: None,
                        mode: trace.mode,
                        boxes: Vec::new(),
                    });
                    out.len() - 1
                }
            };
            let key = h.stage.key();
            let b = box_for(&mut out[p].boxes, key, || key.to_string());
            let chip = match (&h.tls, h.respond) {
                (Some(tls), _) => Some(Chip::Tls {
                    sni: tls.sni.clone(),
                    certificate: tls.certificate.clone(),
                }),
                (_, Some(status)) => Some(Chip::Status { status }),
                _ => None,
            };
            slots.push(Some(put(&mut out, p, b, i, chip)));
            last = Some((p, b));
            continue;
        }
        let node = match (&hop.what, &hop.node) {
            (HopKind::Rule | HopKind::Masquerade { .. } | HopKind::Established { .. }, Some(n)) => {
                n
            }
            (HopKind::Drop { .. } | HopKind::Reject { .. }, Some(n)) if last.is_some() => n,
            _ => {
                slots.push(None);
                last = None;
                continue;
            }
        };
        // The same node's walk goes on; after any other hop a new one starts.
        let p = match (out.last(), last) {
            (Some(pl), Some(_)) if &pl.node == node && pl.proxy.is_none() => out.len() - 1,
            _ => {
                out.push(Pipeline {
                    node: node.clone(),
                    proxy: None,
                    // A rule met at a Pod rather than at its node: the Pod's socket.
                    socket: match &hop.place {
                        Place::Pod(pod) => Some(pod.clone()),
                        _ => None,
                    },
                    mode: trace.mode,
                    boxes: Vec::new(),
                });
                out.len() - 1
            }
        };
        let (key, chain, chip) = match (&hop.what, &hop.step) {
            (HopKind::Masquerade { to }, _) => (
                Some("POSTROUTING"),
                "POSTROUTING".to_string(),
                Some(Chip::Masquerade { to: *to }),
            ),
            (HopKind::Established { .. }, _) => (Some("conntrack"), "conntrack".to_string(), None),
            (HopKind::Drop { .. }, _) => (None, String::new(), Some(Chip::Drop)),
            (HopKind::Reject { .. }, _) => (None, String::new(), Some(Chip::Reject)),
            (_, Some(step)) => (
                key_of(trace.mode, &step.table_chain, &step.action),
                bare(&step.table_chain).to_string(),
                chip_of(&step.action),
            ),
            (_, None) => (None, String::new(), None),
        };
        let b = match key {
            // A folded step stays in the box before it, if there is one.
            None if last.is_some_and(|l| l.0 == p) => last.map(|l| l.1).unwrap_or(0),
            _ => box_for(&mut out[p].boxes, key.unwrap_or("rules"), || chain),
        };
        slots.push(Some(put(&mut out, p, b, i, chip)));
        last = Some((p, b));
    }
    (out, slots)
}

/// Which connection each hop of a trace belongs to: 0 for the client's, 1
/// for an HTTP proxy's new connection to the backend (the hops after the
/// proxy's `Backend` step that connects), and the reply to the client's
/// connection again. The path trail draws each connection as its own leg.
pub fn connections(trace: &Trace) -> Vec<usize> {
    let mut now = 0;
    trace
        .hops
        .iter()
        .map(|h| match &h.what {
            HopKind::Reply { .. } => 0,
            HopKind::Http(p) if p.connect.is_some() => {
                now += 1;
                now - 1
            }
            _ => now,
        })
        .collect()
}

/// Rules compared by the time each hop is reached: a chain's count is the
/// furthest rule reached in it (a walk that returns from a jump resumes where
/// it left), summed over the chains met so far — the live counter of the
/// learner's view. After the last hop it is the trace's `rules_compared`
/// where the mode counts rules one by one.
pub fn compared_so_far(trace: &Trace) -> Vec<usize> {
    let mut furthest: Vec<(&str, usize)> = Vec::new();
    let mut total = 0;
    trace
        .hops
        .iter()
        .map(|h| {
            if let Some(step) = &h.step {
                let key = step.table_chain.as_str();
                match furthest.iter_mut().find(|(c, _)| *c == key) {
                    Some((_, n)) if step.compared > *n => {
                        total += step.compared - *n;
                        *n = step.compared;
                    }
                    Some(_) => {}
                    None => {
                        total += step.compared;
                        furthest.push((key, step.compared));
                    }
                }
            }
            total
        })
        .collect()
}
