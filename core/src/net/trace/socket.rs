//! The socket stage of a trace: a mode that balances at the socket
//! (Cilium's socket LB) connects a Pod's or the node's own socket straight
//! to a backend before any packet exists. Kube-proxy's modes never act
//! here ([`crate::net::modes::Dataplane::balances_at_socket`]).

use super::{
    rule_hops, ConntrackEntry, Hop, HopKind, Origin, Outcome, Place, Request, Sim, Trace,
    WorldState,
};
use crate::model::packet::{IpFamily, Packet, Protocol};
use crate::net::modes::Verdict;
use crate::util::choose::Chooser;

/// The socket stage: a mode that balances at the socket (Cilium's socket
/// LB) connects a Pod's or the node's own socket straight to a backend when
/// the client connects (the Send hop), so the packet leaves already
/// addressed to it. `Ok(Some(verdict))` when it did (`pkt` is now what
/// leaves), `Ok(None)` when nothing at the socket touched the connection,
/// `Err` when the socket refused it (the outcome is set). A connected
/// socket stays connected to its backend: a second connect of the same
/// client address and port finds it in the socket's own state.
#[allow(clippy::too_many_arguments)]
pub(super) fn socket(
    sim: &Sim<'_>,
    req: &Request,
    pkt: &mut Packet,
    state: &mut WorldState,
    chooser: &mut Chooser,
    now_ms: u64,
    t: &mut Trace,
) -> Result<Option<Verdict>, ()> {
    let (node, from_pod, place) = match &req.origin {
        Origin::Pod { pod } => {
            let Some(n) = sim.cluster.pod(pod).and_then(|p| p.node_name.clone()) else {
                return Ok(None);
            };
            (n, true, Place::Pod(pod.clone()))
        }
        Origin::Node { node, src } => {
            let own = src.is_loopback()
                || sim
                    .cluster
                    .node(node)
                    .is_some_and(|n| n.addresses.iter().any(|(_, a)| a == src));
            if !own {
                return Ok(None);
            }
            (node.clone(), false, Place::NodeProxy(node.clone()))
        }
        Origin::External { .. } => return Ok(None),
    };
    let family = IpFamily::of(&pkt.dst.ip());
    let Some(dp) = sim
        .dataplane(&node, family)
        .filter(|d| d.balances_at_socket(from_pod))
    else {
        return Ok(None);
    };
    let key = (pkt.protocol, pkt.src, pkt.dst);
    if let Some(entry) = state.conntrack.get(&key).filter(|e| e.node == node) {
        if let Some(ep) = entry.verdict.endpoint() {
            t.established = true;
            t.hops.push(Hop {
                place,
                what: HopKind::Established { endpoint: ep },
                before: *pkt,
                after: Packet::new(pkt.src, ep, pkt.protocol),
                step: None,
                node: Some(node),
            });
            pkt.dst = ep;
            return Ok(Some(entry.verdict.clone()));
        }
    }
    let ns = state
        .nodes
        .get_or_insert_with(node.clone(), crate::net::modes::NodeState::default);
    let Some(out) = dp.at_socket(pkt, from_pod, ns, chooser, now_ms) else {
        return Ok(None);
    };
    t.endpoints = out.candidates.clone();
    t.rules_compared += out.rules_compared;
    rule_hops(t, &place, &node, *pkt, &out.steps);
    match out.verdict {
        Verdict::Dnat { endpoint } => {
            if req.protocol != Protocol::Udp || req.keep_open {
                state.conntrack.insert(
                    key,
                    ConntrackEntry {
                        node,
                        verdict: out.verdict.clone(),
                        masquerade: false,
                        created_ms: now_ms,
                    },
                );
            }
            pkt.dst = endpoint;
            Ok(Some(out.verdict))
        }
        Verdict::Drop { reason } | Verdict::Reject { reason } => {
            let what = if matches!(out.verdict, Verdict::Drop { .. }) {
                HopKind::Drop { reason }
            } else {
                HopKind::Reject { reason }
            };
            t.hops.push(Hop {
                place,
                what,
                before: *pkt,
                after: *pkt,
                step: None,
                node: Some(node),
            });
            t.outcome = if matches!(out.verdict, Verdict::Drop { .. }) {
                Outcome::Dropped { reason }
            } else {
                Outcome::Rejected { reason }
            };
            t.verdict = out.verdict;
            Err(())
        }
        _ => Ok(None),
    }
}
