//! A new connection's first packet through one node in IPVS mode: the
//! iptables glue, one IPVS lookup, persistence, the kernel scheduler, the
//! DNAT, then the OUTPUT filter and POSTROUTING masquerade.
//!
//! Netfilter order modelled (see the diagram in `mod.rs`):
//! * PREROUTING hook: nat PREROUTING → (dst local?) filter INPUT → IPVS at
//!   LOCAL_IN (priority 99, after filter) → re-sent through LOCAL_OUT: filter
//!   OUTPUT → nat POSTROUTING. Not local: filter FORWARD → nat POSTROUTING.
//! * OUTPUT hook: nat OUTPUT → IPVS at LOCAL_OUT (priority -98) → filter
//!   OUTPUT → nat POSTROUTING.
//!
//! Assumptions: no packet arrived through a bridge port (`physdev-is-in` is
//! false); the node's local addresses are its `status.addresses`, the
//! kube-ipvs0 addresses and loopback. A host process reaching an address
//! on kube-ipvs0 uses that address as its source (the kernel's choice for a
//! local route), so the caller should pass it as `src` for `Hook::Output`:
//! `KUBE-IPVS-OUT-FILTER`'s `-s <lb ip>` and the `src,dst` ClusterIP rule
//! match only then.
//!
//! Never: panic on odd input, draw randomness (IPVS schedulers are
//! deterministic; the Chooser is unused), or change state other than the
//! chosen real server's count, the scheduler position and the template.

use super::compile::VirtualServer;
use super::glue::{EvalCtx, Table, Target};
use super::ipset::PacketView;
use super::sched::{self, Dest, WrrMark};
use super::IpvsDataplane;
use crate::model::packet::{IpFamily, Packet, Protocol};
use crate::model::Scheduler;
use crate::net::modes::{DropReason, Hook, NodeOutcome, NodeState, Step, StepAction, Verdict};
use std::net::{IpAddr, SocketAddr};
use std::ops::ControlFlow;

enum Flow {
    Continue,
    Accept,
    Drop,
    Reject,
    Masquerade,
}

struct Walker<'a> {
    dp: &'a IpvsDataplane,
    steps: Vec<Step>,
    compared: usize,
}

impl Walker<'_> {
    fn walk(&mut self, table: Table, chain: &str, ctx: &mut EvalCtx<'_>, depth: usize) -> Flow {
        if depth > 16 {
            return Flow::Continue;
        }
        let Some(idxs) = self.dp.chains.get(&(table, chain.to_string())) else {
            return Flow::Continue;
        };
        let rules = &self.dp.ruleset.rules;
        let mut n = 0;
        for &ri in idxs {
            let Some(rule) = rules.get(ri) else { continue };
            n += 1;
            self.compared += 1;
            if !rule.matches(ctx) {
                continue;
            }
            let step = |action: StepAction, w: &mut Self| {
                w.steps.push(Step {
                    table_chain: format!("{} {}", table.as_str(), chain),
                    rule: w.dp.rendered.rule_text.get(ri).cloned().unwrap_or_default(),
                    line: w.dp.rendered.rule_line.get(ri).copied(),
                    compared: n,
                    action,
                })
            };
            match &rule.target {
                Target::Jump(to) => {
                    step(StepAction::Jump { to: to.clone() }, self);
                    match self.walk(table, to, ctx, depth + 1) {
                        Flow::Continue => {}
                        other => return other,
                    }
                }
                Target::Return => {
                    step(StepAction::Return, self);
                    return Flow::Continue;
                }
                Target::Accept => {
                    step(StepAction::Accept, self);
                    return Flow::Accept;
                }
                Target::Drop => {
                    step(StepAction::Drop, self);
                    return Flow::Drop;
                }
                Target::Reject => {
                    step(StepAction::Reject, self);
                    return Flow::Reject;
                }
                Target::Masquerade { .. } => {
                    step(
                        StepAction::Jump {
                            to: "MASQUERADE".to_string(),
                        },
                        self,
                    );
                    return Flow::Masquerade;
                }
                Target::MarkOr(v) => {
                    ctx.mark |= v;
                    step(StepAction::MarkMasq, self);
                }
                Target::MarkXor(v) => {
                    ctx.mark ^= v;
                    step(
                        StepAction::Jump {
                            to: "MARK".to_string(),
                        },
                        self,
                    );
                }
            }
        }
        Flow::Continue
    }
}

fn view(p: &Packet) -> PacketView {
    PacketView {
        src: p.src.ip(),
        src_port: p.src.port(),
        dst: p.dst.ip(),
        dst_port: p.dst.port(),
        protocol: p.protocol,
    }
}

impl IpvsDataplane {
    fn is_local(&self, ip: &IpAddr) -> bool {
        ip.is_loopback()
            || self.ruleset.node_addresses.contains(ip)
            // Sorted: 10,000s of Service addresses on kube-ipvs0.
            || self.ruleset.interface.addresses.binary_search(ip).is_ok()
    }

    fn lookup(&self, proto: Protocol, addr: IpAddr, port: u16) -> Option<usize> {
        self.vs_index
            .get(&(super::compile::proto_number(proto), addr, port))
            .copied()
    }

    pub(super) fn run(
        &self,
        packet: &Packet,
        hook: Hook,
        state: &mut NodeState,
        now_ms: u64,
    ) -> NodeOutcome {
        let mut w = Walker {
            dp: self,
            steps: Vec::new(),
            compared: 0,
        };
        if IpFamily::of(&packet.dst.ip()) != self.ruleset.family
            || IpFamily::of(&packet.src.ip()) != self.ruleset.family
        {
            return w.done(Verdict::None, Vec::new(), false);
        }
        let mut ctx = EvalCtx {
            pkt: view(packet),
            mark: 0,
            src_local: hook == Hook::Output || self.is_local(&packet.src.ip()),
            dst_local: self.is_local(&packet.dst.ip()),
            physdev_in: false,
            ipvs: None,
            sets: &self.ruleset.sets,
        };
        let accepted = match w.before_ipvs(hook, &mut ctx) {
            ControlFlow::Continue(accepted) => accepted,
            ControlFlow::Break(outcome) => return outcome,
        };

        // IPVS: one hash lookup of (protocol, address, port).
        w.compared += 1;
        let Some(vi) = self.lookup(packet.protocol, packet.dst.ip(), packet.dst.port()) else {
            return w.no_virtual_server(packet, hook, &mut ctx, accepted);
        };
        let Some(vs) = self.ruleset.virtual_servers.get(vi) else {
            return w.done(Verdict::None, Vec::new(), false);
        };
        w.through_real_server(vs, vi, packet, &mut ctx, state, now_ms)
    }
}

impl Walker<'_> {
    fn done(
        &mut self,
        verdict: Verdict,
        candidates: Vec<SocketAddr>,
        masquerade: bool,
    ) -> NodeOutcome {
        NodeOutcome {
            verdict,
            candidates,
            masquerade,
            rules_compared: self.compared,
            steps: std::mem::take(&mut self.steps),
        }
    }

    /// Whether the packet carries kube-proxy's masquerade mark.
    fn marked(&self, ctx: &EvalCtx<'_>) -> bool {
        ctx.mark & self.dp.ruleset.masquerade_mark != 0
    }

    /// nat PREROUTING or OUTPUT, then (from PREROUTING) filter INPUT or
    /// FORWARD. `Continue(accepted)` goes on to IPVS; `Break` is the
    /// node's outcome: a drop, a reject, or a packet routed through the node.
    fn before_ipvs(&mut self, hook: Hook, ctx: &mut EvalCtx<'_>) -> ControlFlow<NodeOutcome, bool> {
        // nat PREROUTING / OUTPUT (nat can only ACCEPT or fall through here).
        let first = match hook {
            Hook::Prerouting => "PREROUTING",
            Hook::Output => "OUTPUT",
        };
        self.walk(Table::Nat, first, ctx, 0);
        if hook != Hook::Prerouting {
            return ControlFlow::Continue(false);
        }
        let chain = if ctx.dst_local { "INPUT" } else { "FORWARD" };
        let accepted = match self.walk(Table::Filter, chain, ctx, 0) {
            Flow::Drop => {
                let masq = self.marked(ctx);
                let reason = DropReason::SourceRange;
                return ControlFlow::Break(self.done(Verdict::Drop { reason }, Vec::new(), masq));
            }
            Flow::Reject => {
                let masq = self.marked(ctx);
                let reason = DropReason::UnknownPort;
                return ControlFlow::Break(self.done(Verdict::Reject { reason }, Vec::new(), masq));
            }
            Flow::Accept => true,
            _ => false,
        };
        if !ctx.dst_local {
            // Routed through: nothing of IPVS applies.
            let masq = matches!(
                self.walk(Table::Nat, "POSTROUTING", ctx, 0),
                Flow::Masquerade
            );
            return ControlFlow::Break(self.done(Verdict::None, Vec::new(), masq));
        }
        ControlFlow::Continue(accepted)
    }

    /// No virtual server has the packet's (protocol, address, port): IPVS
    /// lets it pass to the node itself.
    fn no_virtual_server(
        &mut self,
        packet: &Packet,
        hook: Hook,
        ctx: &mut EvalCtx<'_>,
        accepted: bool,
    ) -> NodeOutcome {
        self.steps.push(Step {
            table_chain: "IPVS".to_string(),
            rule: format!(
                "no virtual server {} {}",
                packet.protocol.as_upper(),
                packet.dst
            ),
            line: None,
            compared: 1,
            action: StepAction::Return,
        });
        if hook == Hook::Output {
            self.walk(Table::Filter, "OUTPUT", ctx, 0);
        }
        let masq = self.marked(ctx);
        let verdict = if accepted {
            Verdict::Accept
        } else {
            Verdict::None
        };
        self.done(verdict, Vec::new(), masq)
    }

    /// The virtual server `vs` (index `vi`) matched: persistence and the
    /// scheduler pick a real server, IPVS rewrites the destination and
    /// re-sends the packet through filter OUTPUT and nat POSTROUTING.
    fn through_real_server(
        &mut self,
        vs: &VirtualServer,
        vi: usize,
        packet: &Packet,
        ctx: &mut EvalCtx<'_>,
        state: &mut NodeState,
        now_ms: u64,
    ) -> NodeOutcome {
        let dp = self.dp;
        let vs_key = vs.key();
        let vs_line = dp.rendered.vs_line.get(vi).copied();
        self.steps.push(Step {
            table_chain: "IPVS".to_string(),
            rule: super::render::service_line(vs),
            line: vs_line,
            compared: 1,
            action: StepAction::Lookup {
                matched: vs_key.clone(),
            },
        });
        let mut candidates: Vec<SocketAddr> = vs
            .real_servers
            .iter()
            .filter(|r| r.weight > 0)
            .map(|r| r.addr)
            .collect();
        crate::util::order::sort(&mut candidates);

        let Some((ri, mut how)) = choose(vs, &vs_key, packet, state, now_ms) else {
            // ip_vs_leave(): ICMP port unreachable (the VS has no usable dest).
            self.steps.push(Step {
                table_chain: "IPVS".to_string(),
                rule: super::render::service_line(vs),
                line: vs_line,
                compared: 0,
                action: StepAction::Reject,
            });
            let masq = self.marked(ctx);
            let reason = DropReason::NoEndpoints;
            return self.done(Verdict::Reject { reason }, candidates, masq);
        };
        let Some(rs) = vs.real_servers.get(ri) else {
            return self.done(Verdict::None, candidates, false);
        };
        let endpoint = rs.addr;
        let counts = state.conns.get_or_insert_with(
            (vs_key.clone(), endpoint),
            crate::net::modes::ConnCount::default,
        );
        match packet.protocol {
            Protocol::Udp => counts.inactive = counts.inactive.saturating_add(1),
            Protocol::Tcp | Protocol::Sctp => counts.active = counts.active.saturating_add(1),
        }
        let rs_line = dp.rendered.rs_line.get(vi).and_then(|v| v.get(ri)).copied();
        if vs.local_fallback {
            how.push_str(
                "; Local traffic policy without a local endpoint: kube-proxy gave this \
                 virtual server every cluster endpoint",
            );
        }
        self.steps.push(Step {
            table_chain: "IPVS".to_string(),
            rule: super::render::dest_line(endpoint, rs.weight, 0, 0),
            line: rs_line,
            compared: 0,
            action: StepAction::Choose {
                chosen: endpoint,
                among: candidates.len(),
                how,
            },
        });
        self.steps.push(Step {
            table_chain: "IPVS".to_string(),
            rule: format!("Masq {} -> {}", packet.dst, endpoint),
            line: rs_line,
            compared: 0,
            action: StepAction::Dnat { to: endpoint },
        });

        // Re-sent through LOCAL_OUT: filter OUTPUT, then nat POSTROUTING.
        ctx.pkt.dst = endpoint.ip();
        ctx.pkt.dst_port = endpoint.port();
        ctx.dst_local = dp.is_local(&endpoint.ip());
        ctx.ipvs = Some((vs.address, vs.protocol, vs.port));
        if let Flow::Drop = self.walk(Table::Filter, "OUTPUT", ctx, 0) {
            let masq = self.marked(ctx);
            let reason = DropReason::SourceRange;
            return self.done(Verdict::Drop { reason }, candidates, masq);
        }
        let masq = matches!(
            self.walk(Table::Nat, "POSTROUTING", ctx, 0),
            Flow::Masquerade
        );
        self.done(Verdict::Dnat { endpoint }, candidates, masq)
    }
}

/// Persistence, then the scheduler. Returns the real server's index in the
/// kernel list and a description.
fn choose(
    vs: &VirtualServer,
    vs_key: &str,
    packet: &Packet,
    state: &mut NodeState,
    now_ms: u64,
) -> Option<(usize, String)> {
    let client = packet.src.ip();
    if vs.persistent() {
        let key = (vs_key.to_string(), client);
        let timeout_ms = (vs.timeout as u64).saturating_mul(1000);
        if let Some(&(ep, last)) = state.affinity.get(&key) {
            let alive = now_ms < last.saturating_add(timeout_ms);
            // ip_vs_check_template: the dest must still be there and, with
            // expire_quiescent_template=1, have a weight.
            let dest = vs
                .real_servers
                .iter()
                .position(|r| r.addr == ep && r.weight > 0);
            if let (true, Some(i)) = (alive, dest) {
                state.affinity.insert(key, (ep, now_ms));
                return Some((
                    i,
                    format!(
                        "persistence template {client} -> {ep} (ClientIP affinity, timeout {}s)",
                        vs.timeout
                    ),
                ));
            }
        }
        let (i, how) = schedule(vs, vs_key, packet, state)?;
        let ep = vs.real_servers.get(i)?.addr;
        state.affinity.insert(key, (ep, now_ms));
        return Some((i, format!("{how}; new persistence template for {client}")));
    }
    schedule(vs, vs_key, packet, state)
}

fn schedule(
    vs: &VirtualServer,
    vs_key: &str,
    packet: &Packet,
    state: &mut NodeState,
) -> Option<(usize, String)> {
    let dests: Vec<Dest> = vs
        .real_servers
        .iter()
        .map(|r| {
            let c = state
                .conns
                .get(&(vs_key.to_string(), r.addr))
                .copied()
                .unwrap_or_default();
            Dest {
                addr: r.addr,
                weight: r.weight,
                last_weight: r.weight,
                active: c.active,
                inactive: c.inactive,
            }
        })
        .collect();
    let pick = match vs.scheduler {
        Scheduler::Rr => {
            let mut cur = state.rr.get(vs_key).and_then(|&v| usize::try_from(v).ok());
            let r = sched::rr(&dests, &mut cur);
            state
                .rr
                .insert(vs_key.to_string(), cur.map(|i| i as i64).unwrap_or(-1));
            r.map(|i| {
                (
                    i,
                    "rr: next real server after the last one chosen".to_string(),
                )
            })
        }
        Scheduler::Wrr => {
            let cw_key = format!("{vs_key} wrr cw");
            let mut mark = match (state.rr.get(vs_key), state.counters.get(&cw_key)) {
                (Some(&cl), Some(&cw)) => WrrMark {
                    cl: usize::try_from(cl).ok(),
                    cw,
                },
                _ => sched::wrr_mark_after_adds(&dests),
            };
            let r = sched::wrr(&dests, &mut mark);
            state
                .rr
                .insert(vs_key.to_string(), mark.cl.map(|i| i as i64).unwrap_or(-1));
            state.counters.insert(cw_key, mark.cw);
            r.map(|i| (i, format!("wrr: weight >= current weight {}", mark.cw)))
        }
        Scheduler::Lc => {
            sched::lc(&dests).map(|i| (i, "lc: least (active<<8)+inactive".to_string()))
        }
        Scheduler::Wlc => {
            sched::wlc(&dests).map(|i| (i, "wlc: least ((active<<8)+inactive)/weight".to_string()))
        }
        Scheduler::Sed => {
            sched::sed(&dests).map(|i| (i, "sed: least (active+1)/weight".to_string()))
        }
        Scheduler::Nq => sched::nq(&dests).map(|i| {
            (
                i,
                "nq: first idle server, else least (active+1)/weight".to_string(),
            )
        }),
        Scheduler::Sh => sched::sh(&dests, packet.src.ip()).map(|i| {
            (
                i,
                format!(
                    "sh: bucket {} of 256 for source {}",
                    sched::sh_hashkey(packet.src.ip(), 0, 0),
                    packet.src.ip()
                ),
            )
        }),
        Scheduler::Dh => sched::dh(&dests, packet.dst.ip()).map(|i| {
            (
                i,
                format!(
                    "dh: bucket {} of 256 for destination {}",
                    sched::dh_hashkey(packet.dst.ip()),
                    packet.dst.ip()
                ),
            )
        }),
        Scheduler::Mh => {
            // kube-proxy sets IP_VS_SVC_F_SCHED_MH_PORT: the source port is hashed too.
            sched::mh(&dests, packet.src.ip(), packet.src.port()).map(|i| {
                (
                    i,
                    format!(
                        "mh: Maglev slot {} of {} for {}",
                        sched::mh_hashkey(packet.src.ip(), packet.src.port(), sched::MH_HASH1, 0)
                            as usize
                            % sched::MH_TAB_SIZE,
                        sched::MH_TAB_SIZE,
                        packet.src
                    ),
                )
            })
        }
    };
    pick
}
