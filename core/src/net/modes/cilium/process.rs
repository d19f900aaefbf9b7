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
        let mut steps = Vec::new();
        let hook = at.hook_name();
        let step = |table: String, rule: String, action: StepAction| Step {
            table_chain: table,
            rule,
            line: None,
            compared: 1,
            action,
        };
        let Some(entry) = self.find(pkt, at) else {
            let wild = self.maps.wildcards.iter().any(|w| {
                w.ip == pkt.dst.ip()
                    && !(at.outside()
                        && w.kind == FrontendType::ClusterIp
                        && !self.external_clusterip)
            });
            if wild {
                steps.push(step(
                    hook.into(),
                    format!("{}", pkt.dst),
                    StepAction::Lookup {
                        matched: format!("{}:0/ANY", pkt.dst.ip()),
                    },
                ));
                steps.push(step(
                    map(family, "services_v2"),
                    format!("{}:0/ANY", pkt.dst.ip()),
                    StepAction::Drop,
                ));
                return outcome(
                    Verdict::Drop {
                        reason: DropReason::UnknownPort,
                    },
                    steps,
                    Vec::new(),
                    false,
                );
            }
            return outcome(Verdict::None, steps, Vec::new(), false);
        };
        let fe = &entry.frontend;
        let key = super::render::frontend_addr(fe);
        steps.push(step(
            hook.into(),
            format!("{}", pkt.dst),
            StepAction::Lookup {
                matched: key.clone(),
            },
        ));
        let master = self.line_of(entry);
        steps.push(Step {
            line: master.1,
            ..step(
                map(family, "services_v2"),
                master.0,
                StepAction::Lookup {
                    matched: key.clone(),
                },
            )
        });
        if fe.flags.check_source_range && at.outside() {
            let inside = fe.source_ranges.iter().any(|r| r.contains(&pkt.src.ip()));
            let allowed = inside != fe.flags.deny;
            let rule = format!("{} from {}", key, pkt.src.ip());
            if !allowed {
                steps.push(step(map(family, "source_range"), rule, StepAction::Drop));
                return outcome(
                    Verdict::Drop {
                        reason: DropReason::SourceRange,
                    },
                    steps,
                    Vec::new(),
                    false,
                );
            }
            steps.push(step(map(family, "source_range"), rule, StepAction::Accept));
        }
        let usable: Vec<BackendId> = entry
            .slots
            .iter()
            .take(entry.count)
            .map(|(id, _)| *id)
            .collect();
        let candidates: Vec<SocketAddr> = usable
            .iter()
            .filter_map(|id| self.maps.backend(*id).map(|b| b.addr))
            .collect();
        let Some(&first) = candidates.first() else {
            steps.push(step(
                map(family, "services_v2"),
                format!("{key} COUNT=0"),
                StepAction::Drop,
            ));
            return outcome(
                Verdict::Drop {
                    reason: DropReason::NoEndpoints,
                },
                steps,
                candidates,
                false,
            );
        };
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
        let chosen = if let Some(addr) = remembered {
            steps.push(step(
                map(family, "affinity"),
                format!("{} → {addr}", pkt.src.ip()),
                StepAction::Choose {
                    chosen: addr,
                    among: candidates.len(),
                    how: "affinity".into(),
                },
            ));
            addr
        } else if !entry.maglev.is_empty() {
            let m = entry.maglev.len();
            let text = format!("{}-{}-{}", pkt.src, pkt.dst, pkt.protocol.as_upper());
            let (h, _) = super::maglev::murmur3_x64_128(text.as_bytes(), self.maglev_seed);
            let slot = (h % m as u64) as usize;
            let id = entry.maglev.get(slot).copied().unwrap_or_default();
            let addr = self.maps.backend(BackendId(id)).map_or(first, |b| b.addr);
            steps.push(step(
                map(family, "maglev"),
                format!("slot {slot} of {m} → backend {id}"),
                StepAction::Choose {
                    chosen: addr,
                    among: candidates.len(),
                    how: "maglev".into(),
                },
            ));
            addr
        } else {
            let i = chooser.below(candidates.len());
            let addr = candidates.get(i).copied().unwrap_or(first);
            steps.push(step(
                "bpf select".into(),
                format!("slot {} of {}", i + 1, candidates.len()),
                StepAction::Choose {
                    chosen: addr,
                    among: candidates.len(),
                    how: "random".into(),
                },
            ));
            addr
        };
        if fe.flags.session_affinity {
            state.affinity.insert(aff_key, (chosen, now_ms));
        }
        let be_line = self
            .maps
            .backends
            .iter()
            .find(|b| b.addr == chosen)
            .map(|b| {
                format!(
                    "BE: ID={} ADDR={}/{} STATE={}",
                    b.id.0,
                    b.addr,
                    b.protocol.as_upper(),
                    b.state.word()
                )
            })
            .unwrap_or_default();
        steps.push(step(
            map(family, "backends_v3"),
            be_line,
            StepAction::Dnat { to: chosen },
        ));
        // From outside to a backend on another node: SNAT to this node, or
        // hand the packet over with the Service's address (DSR).
        let remote = fe
            .backends
            .iter()
            .find(|b| b.addr == chosen)
            .is_some_and(|b| b.node.as_deref().is_some_and(|n| n != self.node));
        let mut masq = false;
        if at.outside() && remote {
            if fe.flags.dsr {
                steps.push(step(
                    "bpf nodeport".into(),
                    format!("DSR {} via {}", pkt.dst, self.dsr_dispatch.as_str()),
                    StepAction::Dsr { service: pkt.dst },
                ));
            } else {
                steps.push(step(
                    "bpf nodeport".into(),
                    format!("SNAT to {}", self.node_ip),
                    StepAction::Snat { to: self.node_ip },
                ));
                masq = true;
            }
        }
        outcome(Verdict::Dnat { endpoint: chosen }, steps, candidates, masq)
    }
}
