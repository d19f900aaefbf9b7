//! Walk a new connection's first packet through the typed `kube-proxy` table,
//! as the kernel's nf_tables would: base chains by hook and priority, rules in
//! order, `jump`/`goto`/`return`, named-set and verdict-map lookups, `numgen`.
//!
//! It never decides anything kube-proxy did not write into the table: every
//! outcome comes from evaluating a rule. Random picks come only from the
//! [`Chooser`]; affinity state lives in [`NodeState::affinity`].

use super::compile::*;
use super::model::{self, AddrSpec, ElemKey, Expr, LookupKey, NfHook, Rule, Table};
use super::render::{map_elem_text, rule_text, Listing, Style};
use crate::model::packet::Packet;
use crate::net::modes::{DropReason, Hook, NodeOutcome, NodeState, Step, StepAction, Verdict};
use crate::util::choose::Chooser;
use std::net::{IpAddr, SocketAddr};

/// Deepest chain nesting followed (nft's own limit is 16 jumps).
const MAX_DEPTH: usize = 16;

/// What evaluating a chain ended with.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Flow {
    /// Fell off the end, or `return`: back to the caller.
    Return,
    /// Terminal for this hook: accepted after NAT.
    Accept,
    Drop(DropReason),
    Reject(DropReason),
}

pub struct Ctx<'a> {
    pub table: &'a Table,
    pub listing: &'a Listing,
    /// Endpoint chain → endpoint it DNATs to.
    pub endpoints: &'a [Option<SocketAddr>],
    /// Addresses `fib … type local` treats as local.
    pub local_ips: &'a [IpAddr],
}

/// A rule being evaluated: its chain, its index there, the rules compared
/// in the chain so far and the depth of jumps.
struct At<'r> {
    chain: usize,
    ri: usize,
    rule: &'r Rule,
    compared: usize,
    depth: usize,
}

struct Walk<'a, 'b> {
    ctx: &'b Ctx<'a>,
    packet: Packet,
    state: &'b mut NodeState,
    chooser: &'b mut Chooser,
    now_ms: u64,
    steps: Vec<Step>,
    compared: usize,
    mark: bool,
    masqueraded: bool,
    dnat: Option<SocketAddr>,
    candidates: Vec<SocketAddr>,
    /// The endpoint chain being evaluated (for `update @affinity…`).
    current_endpoint: Option<SocketAddr>,
}

pub fn process(
    ctx: &Ctx<'_>,
    packet: &Packet,
    hook: Hook,
    state: &mut NodeState,
    chooser: &mut Chooser,
    now_ms: u64,
) -> NodeOutcome {
    let mut w = Walk {
        ctx,
        packet: *packet,
        state,
        chooser,
        now_ms,
        steps: Vec::new(),
        compared: 0,
        mark: false,
        masqueraded: false,
        dnat: None,
        candidates: Vec::new(),
        current_endpoint: None,
    };
    let result = w.run(hook);
    let verdict = match result {
        Flow::Drop(reason) => Verdict::Drop { reason },
        Flow::Reject(reason) => Verdict::Reject { reason },
        Flow::Accept | Flow::Return => match w.dnat {
            Some(endpoint) => Verdict::Dnat { endpoint },
            None => Verdict::None,
        },
    };
    let candidates = if matches!(verdict, Verdict::Dnat { .. }) {
        w.candidates
    } else {
        Vec::new()
    };
    NodeOutcome {
        verdict,
        candidates,
        masquerade: w.masqueraded,
        steps: w.steps,
        rules_compared: w.compared,
    }
}

impl Walk<'_, '_> {
    fn is_local(&self, ip: &IpAddr) -> bool {
        ip.is_loopback() || self.ctx.local_ips.contains(ip)
    }

    /// The hooks the packet meets, in order, and the base chains on each by
    /// priority.
    fn run(&mut self, hook: Hook) -> Flow {
        let first: &[NfHook] = match hook {
            Hook::Prerouting => &[NfHook::Prerouting],
            Hook::Output => &[NfHook::Output, NfHook::Postrouting],
        };
        for h in first {
            let f = self.run_hook(*h);
            if f != Flow::Return && f != Flow::Accept {
                return f;
            }
        }
        // Routing decision on the (possibly DNATed) destination.
        let dst = self.packet.dst.ip();
        let rest: &[NfHook] = match (hook, self.is_local(&dst)) {
            (Hook::Prerouting, true) => &[NfHook::Input],
            (Hook::Prerouting, false) => &[NfHook::Forward, NfHook::Postrouting],
            // Sent to a local address: it loops back through lo into INPUT.
            (Hook::Output, true) => &[NfHook::Input],
            (Hook::Output, false) => &[],
        };
        for h in rest {
            let f = self.run_hook(*h);
            if f != Flow::Return && f != Flow::Accept {
                return f;
            }
        }
        Flow::Accept
    }

    fn run_hook(&mut self, hook: NfHook) -> Flow {
        // Base chains come first (the compiler creates them before any other
        // chain): stop at the first regular chain rather than scanning every
        // Service's and endpoint's chain, which cost ~1 ms a packet at
        // 10,000 Services.
        let mut bases: Vec<(i32, usize)> = self
            .ctx
            .table
            .chains
            .iter()
            .take_while(|c| c.base.is_some())
            .enumerate()
            .filter_map(|(i, c)| c.base.filter(|b| b.hook == hook).map(|b| (b.priority, i)))
            .collect();
        crate::util::order::sort(&mut bases);
        for (_, idx) in bases {
            match self.eval_chain(idx, 0) {
                Flow::Return => continue,
                // An accept (after NAT) ends this base chain only; the packet
                // goes on to the next base chain of the hook.
                Flow::Accept => continue,
                f => return f,
            }
        }
        Flow::Return
    }

    fn chain_label(&self, idx: usize) -> String {
        format!("chain {}", self.ctx.table.chains[idx].name)
    }

    fn rule_line(&self, chain: usize, rule: usize) -> Option<usize> {
        self.ctx.listing.rule_line(chain, rule)
    }

    fn step(&mut self, at: &At<'_>, action: StepAction) {
        self.steps.push(Step {
            table_chain: self.chain_label(at.chain),
            rule: rule_text(self.ctx.table.family, at.rule, Style::List),
            line: self.rule_line(at.chain, at.ri),
            compared: at.compared,
            action,
        });
    }

    fn eval_chain(&mut self, idx: usize, depth: usize) -> Flow {
        let table = self.ctx.table;
        let Some(chain) = table.chains.get(idx) else {
            return Flow::Return;
        };
        if depth > MAX_DEPTH {
            return Flow::Return;
        }
        for (ri, rule) in chain.rules.iter().enumerate() {
            self.compared += 1;
            let at = At {
                chain: idx,
                ri,
                rule,
                compared: ri + 1,
                depth,
            };
            match self.eval_rule(&at) {
                None => continue,
                Some(Flow::Return) => return Flow::Return,
                Some(f) => return f,
            }
        }
        if chain.base.is_none() && !chain.rules.is_empty() {
            self.steps.push(Step {
                table_chain: self.chain_label(idx),
                rule: "(end of chain)".into(),
                line: None,
                compared: chain.rules.len(),
                action: StepAction::Return,
            });
        }
        Flow::Return
    }

    /// Evaluate one rule. `None` = did not match (or matched and continues to
    /// the next rule); `Some(flow)` = the chain ends with `flow`.
    fn eval_rule(&mut self, at: &At<'_>) -> Option<Flow> {
        let src = self.packet.src.ip();
        for e in &at.rule.exprs {
            match e {
                Expr::MarkSetOr(_) => {
                    self.mark = true;
                    self.step(at, StepAction::MarkMasq);
                }
                Expr::MarkSetXor(_) => {
                    self.mark = !self.mark;
                }
                Expr::UpdateSaddr(s) => {
                    if let Some(ep) = self.current_endpoint {
                        self.state
                            .affinity
                            .insert((s.clone(), src), (ep, self.now_ms));
                    }
                }
                Expr::DnatTo(a) => {
                    self.dnat = Some(*a);
                    self.packet.dst = *a;
                    self.step(at, StepAction::Dnat { to: *a });
                    return Some(Flow::Accept);
                }
                Expr::MasqueradeFullyRandom => {
                    self.masqueraded = true;
                    self.step(at, StepAction::Accept);
                    return Some(Flow::Accept);
                }
                Expr::Vmap { key, map } => return self.vmap(at, key, map),
                Expr::NumgenVmap(chains) => return self.numgen_vmap(at, chains),
                Expr::Verdict(v) => {
                    let reason = self.reason_for(at.chain, v);
                    self.step(at, verdict_action(v, reason));
                    // An affinity hit names exactly one endpoint.
                    if let (model::Verdict::Goto(c), Some(Expr::SaddrInSet(_))) =
                        (v, at.rule.exprs.first())
                    {
                        if let Some(ep) = self.endpoint_of(c) {
                            self.candidates = vec![ep];
                        }
                    }
                    return self.apply_verdict(at.chain, v, at.depth, reason);
                }
                test => {
                    if !self.test(test) {
                        return None;
                    }
                }
            }
        }
        None
    }

    /// Whether the packet passes one of a rule's tests (an expression
    /// that only compares; statements are `eval_rule`'s).
    fn test(&mut self, e: &Expr) -> bool {
        let src = self.packet.src.ip();
        let dst = self.packet.dst.ip();
        match e {
            Expr::DaddrInSet(s) => {
                self.compared += 1;
                self.in_set(s, &dst)
            }
            Expr::Daddr(a) => dst == *a,
            Expr::DaddrNot(n) => !n.contains(&dst),
            Expr::DaddrInAnon(v) => {
                self.compared += 1;
                v.iter().any(|n| n.contains(&dst))
            }
            Expr::Saddr(a) => a.contains(&src),
            Expr::SaddrNot(a) => !a.contains(&src),
            Expr::SaddrNotInAnon(v) => {
                self.compared += 1;
                !v.iter().any(|a: &AddrSpec| a.contains(&src))
            }
            Expr::SaddrInSet(s) => {
                self.compared += 1;
                self.affinity_endpoint(s, &src).is_some()
            }
            Expr::FibSaddrLocal => self.is_local(&src),
            Expr::FibDaddrLocal => self.is_local(&dst),
            Expr::MarkAndIsZero(_) => !self.mark,
            Expr::L4Proto(p) => self.packet.protocol == *p,
            Expr::CtStateNew
            | Expr::MarkSetOr(_)
            | Expr::MarkSetXor(_)
            | Expr::UpdateSaddr(_)
            | Expr::DnatTo(_)
            | Expr::MasqueradeFullyRandom
            | Expr::Vmap { .. }
            | Expr::NumgenVmap(_)
            | Expr::Verdict(_) => true,
        }
    }

    /// A verdict map: one lookup of the packet's key, then the element's
    /// verdict.
    fn vmap(&mut self, at: &At<'_>, key: &LookupKey, map: &str) -> Option<Flow> {
        self.compared += 1;
        let k = ElemKey {
            addr: match key {
                LookupKey::DaddrProtoPort => Some(self.packet.dst.ip()),
                LookupKey::ProtoPort => None,
            },
            protocol: self.packet.protocol,
            port: self.packet.dst.port(),
        };
        let m = self.ctx.table.map(map)?;
        let (ei, elem) = m.lookup(&k)?;
        let text = map_elem_text(elem);
        let verdict = elem.verdict.clone();
        self.step(
            at,
            StepAction::Lookup {
                matched: text.clone(),
            },
        );
        let line = self
            .ctx
            .listing
            .map_elem_lines
            .get(map)
            .and_then(|v| v.get(ei))
            .copied();
        let reason_drop = if map == NO_ENDPOINT_SERVICES || map == NO_ENDPOINT_NODEPORTS {
            DropReason::NoLocalEndpoints
        } else {
            DropReason::Invalid
        };
        self.steps.push(Step {
            table_chain: format!("map {map}"),
            rule: text,
            line,
            compared: 1,
            action: verdict_action(&verdict, reason_drop),
        });
        self.apply_verdict(at.chain, &verdict, at.depth, reason_drop)
    }

    /// `numgen random mod N vmap { … }`: the random pick among a
    /// Service's endpoint chains.
    fn numgen_vmap(&mut self, at: &At<'_>, chains: &[model::ChainRef]) -> Option<Flow> {
        self.compared += 1;
        let n = chains.len();
        if n == 0 {
            return None;
        }
        let i = self.chooser.below(n).min(n - 1);
        let eps: Vec<SocketAddr> = chains.iter().filter_map(|c| self.endpoint_of(c)).collect();
        let target = chains[i].clone();
        let chosen = self.endpoint_of(&target);
        self.candidates = eps.clone();
        if let Some(chosen) = chosen {
            self.step(
                at,
                StepAction::Choose {
                    chosen,
                    among: n,
                    how: format!("numgen random mod {n} = {i}"),
                },
            );
        }
        self.apply_verdict(
            at.chain,
            &model::Verdict::Goto(target),
            at.depth,
            DropReason::Invalid,
        )
    }

    fn reason_for(&self, chain: usize, v: &model::Verdict) -> DropReason {
        let name: &str = &self.ctx.table.chains[chain].name;
        match v {
            model::Verdict::Reject if name == CLUSTER_IPS_CHECK => DropReason::UnknownPort,
            model::Verdict::Drop if name == CLUSTER_IPS_CHECK => DropReason::UnallocatedClusterIp,
            model::Verdict::Drop if name.starts_with("firewall-") => DropReason::SourceRange,
            model::Verdict::Reject if name == REJECT_CHAIN => DropReason::NoEndpoints,
            _ => DropReason::Invalid,
        }
    }

    fn apply_verdict(
        &mut self,
        _chain: usize,
        v: &model::Verdict,
        depth: usize,
        reason: DropReason,
    ) -> Option<Flow> {
        match v {
            model::Verdict::Jump(c) | model::Verdict::Goto(c) => {
                let goto = matches!(v, model::Verdict::Goto(_));
                let Some(target) = c.index.filter(|&i| i < self.ctx.table.chains.len()) else {
                    // A missing chain: nft would have refused the whole
                    // transaction; treat as no-op.
                    return None;
                };
                let saved = self.current_endpoint;
                if let Some(ep) = self.endpoint_of(c) {
                    self.current_endpoint = Some(ep);
                }
                let f = self.eval_chain(target, depth + 1);
                self.current_endpoint = saved;
                match f {
                    Flow::Return if goto => Some(Flow::Return),
                    Flow::Return => None,
                    other => Some(other),
                }
            }
            model::Verdict::Return => Some(Flow::Return),
            model::Verdict::Drop => Some(Flow::Drop(reason)),
            model::Verdict::Reject => Some(Flow::Reject(reason)),
        }
    }

    /// The endpoint an endpoint chain DNATs to.
    fn endpoint_of(&self, c: &model::ChainRef) -> Option<SocketAddr> {
        self.ctx.endpoints.get(c.index?).copied().flatten()
    }

    fn in_set(&self, set: &str, ip: &IpAddr) -> bool {
        // Set elements are sorted.
        self.ctx
            .table
            .set(set)
            .is_some_and(|s| s.elements.binary_search(ip).is_ok())
    }

    /// A live element of an affinity set for this client.
    fn affinity_endpoint(&self, set: &str, client: &IpAddr) -> Option<SocketAddr> {
        // The node's state first: a new client is in no set, and then the
        // set itself (one among 100,000s on a large node) is not looked up.
        if self.state.affinity.is_empty() {
            return None;
        }
        let (ep, last) = self.state.affinity.get(&(set.to_string(), *client))?;
        let timeout_ms = u64::from(self.ctx.table.set(set)?.timeout_seconds?) * 1000;
        (self.now_ms < last.saturating_add(timeout_ms)).then_some(*ep)
    }
}

fn verdict_action(v: &model::Verdict, _reason: DropReason) -> StepAction {
    match v {
        model::Verdict::Jump(c) | model::Verdict::Goto(c) => StepAction::Jump {
            to: c.name.to_string(),
        },
        model::Verdict::Return => StepAction::Return,
        model::Verdict::Drop => StepAction::Drop,
        model::Verdict::Reject => StepAction::Reject,
    }
}
