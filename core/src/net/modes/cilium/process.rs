//! A new connection through the node's BPF programs: at the socket
//! (`connect()`/`sendmsg()`, before any packet exists) or per packet at the
//! Pod's veth or the node's device, the same lookups: the services map
//! (frontend, scope), source ranges, affinity, the backend pick (random, or
//! the Maglev table), the backends map; then, for a packet from outside to
//! a backend on another node, SNAT or DSR.
//!
//! Maglev's slot is a hash of the connection's addresses and ports; kpv
//! uses its own Murmur3 of them where the datapath uses jhash, so which
//! backend one connection gets differs from a live node while every
//! backend's share is the table's.

use super::frontends::{FrontendType, Scope};
use super::maps::{BackendId, ServiceEntry};
use super::CiliumDataplane;
use crate::model::packet::{IpFamily, Packet};
use crate::net::modes::{DropReason, NodeOutcome, NodeState, Step, StepAction, Verdict};
use crate::util::choose::Chooser;
use std::net::SocketAddr;

/// Where the programs met the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum At {
    /// A socket of a Pod or of the node's own processes.
    Socket,
    /// A packet from one of this node's Pods, at its veth.
    PodVeth,
    /// A packet arriving on the node's device from outside.
    Device,
    /// A packet the node itself sends with no socket hook.
    Host,
}

impl At {
    fn hook_name(self) -> &'static str {
        match self {
            At::Socket => "bpf sock",
            At::PodVeth => "bpf lxc",
            At::Device => "bpf host",
            At::Host => "bpf host",
        }
    }

    fn outside(self) -> bool {
        self == At::Device
    }
}

/// The map names of the packet's family.
fn map(family: IpFamily, name: &str) -> String {
    let n = match family {
        IpFamily::V4 => 4,
        IpFamily::V6 => 6,
    };
    format!("map cilium_lb{n}_{name}")
}

fn outcome(
    verdict: Verdict,
    steps: Vec<Step>,
    candidates: Vec<SocketAddr>,
    masq: bool,
) -> NodeOutcome {
    let compared = steps.len();
    NodeOutcome {
        verdict,
        candidates,
        masquerade: masq,
        steps,
        rules_compared: compared,
    }
}

impl CiliumDataplane {
    /// The frontend a connection to `dst` finds: the internal scope's for
    /// traffic from inside when there is one, and from outside only a
    /// routable one. At the socket the NodePort surrogate answers for any
    /// of the node's own addresses, loopback included.
    fn find(&self, pkt: &Packet, at: At) -> Option<&ServiceEntry> {
        let want = |s: &&ServiceEntry, scope: Scope| {
            let fe = &s.frontend;
            fe.protocol == pkt.protocol
                && fe.scope == scope
                && (fe.addr == pkt.dst
                    || (at == At::Socket
                        && fe.surrogate()
                        && fe.addr.port() == pkt.dst.port()
                        && (pkt.dst.ip().is_loopback() || self.node_ips.contains(&pkt.dst.ip()))))
                && (!at.outside() || fe.flags.routable)
        };
        let services = &self.maps.services;
        if !at.outside() {
            if let Some(s) = services.iter().find(|s| want(s, Scope::Internal)) {
                return Some(s);
            }
        }
        services.iter().find(|s| want(s, Scope::External))
    }

    /// Walk a new connection through the programs at `at`.
    pub(super) fn walk(
        &self,
        pkt: &Packet,
        at: At,
        state: &mut NodeState,
        chooser: &mut Chooser,
        now_ms: u64,
    ) -> NodeOutcome {
        let family = self.family;
        let hook = at.hook_name();
        let Some(entry) = self.find(pkt, at) else {
            return self.no_frontend(pkt, at);
        };
        let fe = &entry.frontend;
        let key = super::render::frontend_addr(fe);
        let (master, line) = self.line_of(entry);
        let lookup = || StepAction::Lookup {
            matched: key.clone(),
        };
        let mut steps = vec![
            step(hook.into(), pkt.dst.to_string(), lookup()),
            Step {
                line,
                ..step(map(family, "services_v2"), master, lookup())
            },
        ];
        let drop = |mut steps: Vec<Step>, last: Step, reason, candidates| {
            steps.push(last);
            outcome(Verdict::Drop { reason }, steps, candidates, false)
        };
        if fe.flags.check_source_range && at.outside() {
            let inside = fe.source_ranges.iter().any(|r| r.contains(&pkt.src.ip()));
            let rule = format!("{} from {}", key, pkt.src.ip());
            let table = map(family, "source_range");
            if inside == fe.flags.deny {
                let last = step(table, rule, StepAction::Drop);
                return drop(steps, last, DropReason::SourceRange, Vec::new());
            }
            steps.push(step(table, rule, StepAction::Accept));
        }
        let candidates: Vec<SocketAddr> = entry
            .slots
            .iter()
            .take(entry.count)
            .filter_map(|(id, _)| self.maps.backend(*id).map(|b| b.addr))
            .collect();
        if candidates.is_empty() {
            let last = step(
                map(family, "services_v2"),
                format!("{key} COUNT=0"),
                StepAction::Drop,
            );
            return drop(steps, last, DropReason::NoEndpoints, candidates);
        }
        let (chosen, pick) = self.pick(entry, pkt, &candidates, state, chooser, now_ms);
        steps.push(pick);
        let be_line = self
            .maps
            .backends
            .iter()
            .find(|b| b.addr == chosen)
            .map(super::render::backend_line)
            .unwrap_or_default();
        steps.push(step(
            map(family, "backends_v3"),
            be_line,
            StepAction::Dnat { to: chosen },
        ));
        let nat = self.nat(entry, chosen, pkt, at);
        let masq = nat
            .as_ref()
            .is_some_and(|s| matches!(s.action, StepAction::Snat { .. }));
        steps.extend(nat);
        outcome(Verdict::Dnat { endpoint: chosen }, steps, candidates, masq)
    }

    /// No frontend: a wildcard entry of the address drops the packet (a
    /// port with no Service), else the programs leave it alone.
    fn no_frontend(&self, pkt: &Packet, at: At) -> NodeOutcome {
        let wild = self.maps.wildcards.iter().any(|w| {
            w.ip == pkt.dst.ip()
                && !(at.outside() && w.kind == FrontendType::ClusterIp && !self.external_clusterip)
        });
        if !wild {
            return outcome(Verdict::None, Vec::new(), Vec::new(), false);
        }
        let any = format!("{}:0/ANY", pkt.dst.ip());
        let steps = vec![
            step(
                at.hook_name().into(),
                pkt.dst.to_string(),
                StepAction::Lookup {
                    matched: any.clone(),
                },
            ),
            step(map(self.family, "services_v2"), any, StepAction::Drop),
        ];
        let reason = DropReason::UnknownPort;
        outcome(Verdict::Drop { reason }, steps, Vec::new(), false)
    }

    /// The backend a new connection gets among `candidates` (not empty):
    /// the client's remembered one under session affinity, else the Maglev
    /// table's slot for its addresses and ports, else a random slot.
    fn pick(
        &self,
        entry: &ServiceEntry,
        pkt: &Packet,
        candidates: &[SocketAddr],
        state: &mut NodeState,
        chooser: &mut Chooser,
        now_ms: u64,
    ) -> (SocketAddr, Step) {
        let fe = &entry.frontend;
        let among = candidates.len();
        let first = candidates.first().copied().unwrap_or(pkt.dst);
        let aff_key = (format!("cilium {}", entry.id.0), pkt.src.ip());
        let remembered = fe
            .flags
            .session_affinity
            .then(|| state.affinity.get(&aff_key).copied())
            .flatten()
            .filter(|(addr, seen)| {
                candidates.contains(addr)
                    && now_ms.saturating_sub(*seen) <= u64::from(fe.affinity_seconds) * 1000
            })
            .map(|(addr, _)| addr);
        let choose = |chosen, how: &str| StepAction::Choose {
            chosen,
            among,
            how: how.into(),
        };
        let (chosen, picked) = if let Some(addr) = remembered {
            let rule = format!("{} → {addr}", pkt.src.ip());
            (
                addr,
                step(map(self.family, "affinity"), rule, choose(addr, "affinity")),
            )
        } else if !entry.maglev.is_empty() {
            let m = entry.maglev.len();
            let text = format!("{}-{}-{}", pkt.src, pkt.dst, pkt.protocol.as_upper());
            let (h, _) = super::maglev::murmur3_x64_128(text.as_bytes(), self.maglev_seed);
            let slot = (h % m as u64) as usize;
            let id = entry.maglev.get(slot).copied().unwrap_or_default();
            let addr = self.maps.backend(BackendId(id)).map_or(first, |b| b.addr);
            let rule = format!("slot {slot} of {m} → backend {id}");
            (
                addr,
                step(map(self.family, "maglev"), rule, choose(addr, "maglev")),
            )
        } else {
            let i = chooser.below(among);
            let addr = candidates.get(i).copied().unwrap_or(first);
            let rule = format!("slot {} of {among}", i + 1);
            (
                addr,
                step("bpf select".into(), rule, choose(addr, "random")),
            )
        };
        if fe.flags.session_affinity {
            state.affinity.insert(aff_key, (chosen, now_ms));
        }
        (chosen, picked)
    }

    /// From outside to a backend on another node: SNAT to this node, or the
    /// packet handed over with the Service's address (DSR).
    fn nat(&self, entry: &ServiceEntry, chosen: SocketAddr, pkt: &Packet, at: At) -> Option<Step> {
        let fe = &entry.frontend;
        let remote = fe
            .backends
            .iter()
            .find(|b| b.addr == chosen)
            .is_some_and(|b| b.node.as_deref().is_some_and(|n| n != self.node));
        if !(at.outside() && remote) {
            return None;
        }
        Some(if fe.flags.dsr {
            let rule = format!("DSR {} via {}", pkt.dst, self.dsr_dispatch.as_str());
            step(
                "bpf nodeport".into(),
                rule,
                StepAction::Dsr { service: pkt.dst },
            )
        } else {
            let rule = format!("SNAT to {}", self.node_ip);
            step(
                "bpf nodeport".into(),
                rule,
                StepAction::Snat { to: self.node_ip },
            )
        })
    }
}

/// One step of the programs' walk.
fn step(table: String, rule: String, action: StepAction) -> Step {
    Step {
        table_chain: table,
        rule,
        line: None,
        compared: 1,
        action,
    }
}
