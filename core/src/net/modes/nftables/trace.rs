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

    fn step(
        &mut self,
        chain: usize,
        rule_idx: usize,
        rule: &Rule,
        compared: usize,
        action: StepAction,
    ) {
        self.steps.push(Step {
            table_chain: self.chain_label(chain),
            rule: rule_text(self.ctx.table.family, rule, Style::List),
            line: self.rule_line(chain, rule_idx),
            compared,
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
            match self.eval_rule(idx, ri, rule, ri + 1, depth) {
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
    fn eval_rule(
        &mut self,
        chain: usize,
        ri: usize,
        rule: &Rule,
        compared: usize,
        depth: usize,
    ) -> Option<Flow> {
        let src = self.packet.src.ip();
        let dst = self.packet.dst.ip();
        for e in &rule.exprs {
            match e {
                Expr::CtStateNew => {}
                Expr::DaddrInSet(s) => {
                    self.compared += 1;
                    if !self.in_set(s, &dst) {
                        return None;
                    }
                }
                Expr::Daddr(a) => {
                    if dst != *a {
                        return None;
                    }
                }
                Expr::DaddrNot(n) => {
                    if n.contains(&dst) {
                        return None;
                    }
                }
                Expr::DaddrInAnon(v) => {
                    self.compared += 1;
                    if !v.iter().any(|n| n.contains(&dst)) {
                        return None;
                    }
                }
                Expr::Saddr(a) => {
                    if !a.contains(&src) {
                        return None;
                    }
                }
                Expr::SaddrNot(a) => {
                    if a.contains(&src) {
                        return None;
                    }
                }
                Expr::SaddrNotInAnon(v) => {
                    self.compared += 1;
                    if v.iter().any(|a: &AddrSpec| a.contains(&src)) {
                        return None;
                    }
                }
                Expr::SaddrInSet(s) => {
                    self.compared += 1;
                    self.affinity_endpoint(s, &src)?;
                }
                Expr::FibSaddrLocal => {
                    if !self.is_local(&src) {
                        return None;
                    }
                }
                Expr::FibDaddrLocal => {
                    if !self.is_local(&dst) {
                        return None;
                    }
                }
                Expr::MarkAndIsZero(_) => {
                    if self.mark {
                        return None;
                    }
                }
                Expr::L4Proto(p) => {
                    if self.packet.protocol != *p {
                        return None;
                    }
                }
                Expr::MarkSetOr(_) => {
                    self.mark = true;
                    self.step(chain, ri, rule, compared, StepAction::MarkMasq);
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
                    self.step(chain, ri, rule, compared, StepAction::Dnat { to: *a });
                    return Some(Flow::Accept);
                }
                Expr::MasqueradeFullyRandom => {
                    self.masqueraded = true;
                    self.step(chain, ri, rule, compared, StepAction::Accept);
                    return Some(Flow::Accept);
                }
                Expr::Vmap { key, map } => {
                    self.compared += 1;
                    let k = ElemKey {
                        addr: match key {
                            LookupKey::DaddrProtoPort => Some(dst),
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
                        chain,
                        ri,
                        rule,
                        compared,
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
                    let reason_drop = if map == NO_ENDPOINT_SERVICES || map == NO_ENDPOINT_NODEPORTS
                    {
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
                    return self.apply_verdict(chain, &verdict, depth, reason_drop);
                }
                Expr::NumgenVmap(chains) => {
                    self.compared += 1;
                    let n = chains.len();
                    if n == 0 {
                        return None;
                    }
                    let i = self.chooser.below(n).min(n - 1);
                    let eps: Vec<SocketAddr> =
                        chains.iter().filter_map(|c| self.endpoint_of(c)).collect();
                    let target = chains[i].clone();
                    let chosen = self.endpoint_of(&target);
                    self.candidates = eps.clone();
                    if let Some(chosen) = chosen {
                        self.step(
                            chain,
                            ri,
                            rule,
                            compared,
                            StepAction::Choose {
                                chosen,
                                among: n,
                                how: format!("numgen random mod {n} = {i}"),
                            },
                        );
                    }
                    return self.apply_verdict(
                        chain,
                        &model::Verdict::Goto(target),
                        depth,
                        DropReason::Invalid,
                    );
                }
                Expr::Verdict(v) => {
                    let reason = self.reason_for(chain, v);
                    self.step(chain, ri, rule, compared, verdict_action(v, reason));
                    // An affinity hit names exactly one endpoint.
                    if let (model::Verdict::Goto(c), Some(Expr::SaddrInSet(_))) =
                        (v, rule.exprs.first())
                    {
                        if let Some(ep) = self.endpoint_of(c) {
                            self.candidates = vec![ep];
                        }
                    }
                    return self.apply_verdict(chain, v, depth, reason);
                }
            }
        }
        None
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
