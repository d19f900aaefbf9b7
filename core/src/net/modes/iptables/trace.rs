//! Walk a new connection's first packet through the compiled tables, the way
//! netfilter does: the nat hook (PREROUTING or OUTPUT) first, then the filter
//! hook chosen by routing (INPUT for local destinations, FORWARD otherwise; a
//! locally sent packet passes filter OUTPUT and, when it stays on the node,
//! INPUT as well).
//!
//! Rules are compared one by one, in order; a rule's plain matches are tested
//! before the ones with side effects (`statistic`, `recent`), as the kernel
//! tests the IP header part of a rule before its extensions. Randomness comes
//! only from the [`Chooser`], `-m recent` lists live in [`NodeState`]. A
//! first packet is conntrack state NEW (plus DNAT once it was DNATed). This
//! module never panics on any input and never changes the compiled rules.

use super::compile::Compiled;
use super::render::rule_line;
use super::rules::{names, CtState, Match, Rule, Side, Table, Target};
use crate::model::packet::{Packet, Protocol};
use crate::net::modes::{DropReason, Hook, NodeOutcome, NodeState, Step, StepAction, Verdict};
use crate::util::choose::Chooser;
use std::net::{IpAddr, SocketAddr};

/// Deeper than any chain nesting kube-proxy writes (hook → SERVICES → FW →
/// EXT → SVC → SEP → MARK-MASQ is 6).
const MAX_DEPTH: usize = 16;

/// How a chain walk ended.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Flow {
    /// Fell off the end or RETURNed: go on in the caller.
    Continue,
    /// ACCEPT in this chain.
    Accept(String),
    Drop(DropReason),
    Reject(DropReason),
    /// DNAT (ends the nat table).
    Dnat,
}

struct Walker<'a> {
    c: &'a Compiled,
    state: &'a mut NodeState,
    chooser: &'a mut Chooser,
    now_ms: u64,
    src: SocketAddr,
    dst: SocketAddr,
    protocol: Protocol,
    mark: u32,
    dnat: Option<SocketAddr>,
    candidates: Vec<SocketAddr>,
    steps: Vec<Step>,
    compared: usize,
}

impl Walker<'_> {
    fn is_local(&self, ip: &IpAddr) -> bool {
        ip.is_loopback() || self.c.local_ips.contains(ip)
    }

    /// The rule's matches without side effects.
    fn plain_match(&self, m: &Match) -> bool {
        match m {
            Match::Comment(_) | Match::Nfacct(_) => true,
            Match::Proto(p) => *p == self.protocol,
            Match::Src { addr, negate } => addr.contains(&self.src.ip()) != *negate,
            Match::Dst { addr, negate } => addr.contains(&self.dst.ip()) != *negate,
            Match::DPort(p) => self.dst.port() == *p,
            Match::AddrTypeLocal(Side::Src) => self.is_local(&self.src.ip()),
            Match::AddrTypeLocal(Side::Dst) => self.is_local(&self.dst.ip()),
            Match::Mark { mark, negate } => ((self.mark & *mark) == *mark) != *negate,
            Match::Conntrack { state, negate } => {
                let is = match state {
                    CtState::New => true,
                    CtState::Invalid | CtState::RelatedEstablished => false,
                    // The virtual DNAT state: the original destination was
                    // rewritten.
                    CtState::RelatedEstablishedDnat => self.dnat.is_some(),
                };
                is != *negate
            }
            Match::Statistic { .. } | Match::RecentCheck { .. } | Match::RecentSet { .. } => true,
        }
    }

    /// The matches with side effects, in rule order.
    fn effect_match(&mut self, m: &Match, rule: &Rule) -> bool {
        match m {
            Match::Statistic { n } => {
                // iptables parses the printed decimal; use exactly that value.
                self.chooser
                    .statistic_match(super::rules::statistic_threshold(*n))
            }
            Match::RecentCheck { list, seconds } => {
                let window = u64::from(*seconds) * 1000;
                let now = self.now_ms;
                // --reap: forget this list's expired addresses.
                self.state.affinity.retain(|(l, _), (_, seen)| {
                    l.as_str() != list.as_str() || now.saturating_sub(*seen) < window
                });
                self.state
                    .affinity
                    .contains_key(&(list.to_string(), self.src.ip()))
            }
            Match::RecentSet { list } => {
                let ep = match rule.target {
                    Target::Dnat(a) => a,
                    _ => self.dst,
                };
                self.state
                    .affinity
                    .insert((list.to_string(), self.src.ip()), (ep, self.now_ms));
                true
            }
            _ => true,
        }
    }

    fn matches(&mut self, rule: &Rule) -> bool {
        if !rule.matches.iter().all(|m| self.plain_match(m)) {
            return false;
        }
        for m in &rule.matches {
            if !self.effect_match(m, rule) {
                return false;
            }
        }
        true
    }

    fn step(
        &mut self,
        where_: String,
        rule: String,
        line: Option<usize>,
        compared: usize,
        action: StepAction,
    ) {
        self.steps.push(Step {
            table_chain: where_,
            rule,
            line,
            compared,
            action,
        });
    }

    /// Apply a matched rule's target. `Some(flow)` ends this chain.
    fn apply(
        &mut self,
        table: Table,
        chain: &str,
        rule: &Rule,
        line: Option<usize>,
        compared: usize,
        depth: usize,
    ) -> Option<Flow> {
        let where_ = format!("{} {}", table.name(), chain);
        let text = rule_line(chain, rule);
        match &rule.target {
            Target::Jump(to) => {
                self.step(
                    where_,
                    text,
                    line,
                    compared,
                    StepAction::Jump { to: to.to_string() },
                );
                match self.walk_chain(table, to, depth + 1) {
                    Flow::Continue => None,
                    other => Some(other),
                }
            }
            Target::Accept | Target::Masquerade => {
                self.step(where_, text, line, compared, StepAction::Accept);
                Some(Flow::Accept(chain.to_string()))
            }
            Target::Drop(r) => {
                self.step(where_, text, line, compared, StepAction::Drop);
                Some(Flow::Drop(*r))
            }
            Target::Reject(r) => {
                self.step(where_, text, line, compared, StepAction::Reject);
                Some(Flow::Reject(*r))
            }
            Target::Return => {
                self.step(where_, text, line, compared, StepAction::Return);
                Some(Flow::Continue)
            }
            Target::Dnat(to) => {
                self.step(where_, text, line, compared, StepAction::Dnat { to: *to });
                self.dst = *to;
                self.dnat = Some(*to);
                Some(Flow::Dnat)
            }
            Target::OrMark(m) => {
                self.mark |= m;
                self.step(where_, text, line, compared, StepAction::MarkMasq);
                None
            }
            Target::XorMark(m) => {
                self.mark ^= m;
                self.step(where_, text, line, compared, StepAction::Return);
                None
            }
            Target::Nothing => {
                // A counting rule: it matches and the walk goes on.
                self.step(where_, text, line, compared, StepAction::Return);
                None
            }
        }
    }

    fn walk_chain(&mut self, table: Table, name: &str, depth: usize) -> Flow {
        if depth > MAX_DEPTH {
            return Flow::Continue;
        }
        let c = self.c;
        let Some(chain) = c.table(table).and_then(|t| t.chain(name)) else {
            return Flow::Continue;
        };
        if let Some(eps) = &chain.endpoints {
            self.candidates = eps.to_vec();
        }
        // With an index, only the rules that can match this destination are
        // tried, but every rule before them counts as compared, as in the
        // kernel's linear walk. The destination only changes by DNAT, which
        // ends the walk; should it change otherwise, go on rule by rule.
        let dst = self.dst;
        let candidates = chain.index.as_ref().map(|ix| ix.candidates(dst));
        let n = chain.rules.len();
        let mut next = 0; // rules before this one are accounted for
        let mut k = 0;
        loop {
            let i = match &candidates {
                Some(c) if self.dst == dst => match c[k..].iter().position(|&i| i >= next) {
                    Some(off) => {
                        k += off + 1;
                        c[k - 1]
                    }
                    None => break,
                },
                _ if next < n => next,
                _ => break,
            };
            self.compared += i + 1 - next;
            next = i + 1;
            let compared = next;
            let Some(rule) = chain.rules.get(i) else {
                break;
            };
            if !self.matches(rule) {
                continue;
            }
            let line = chain.line(i);
            if let Some(flow) = self.apply(table, name, rule, line, compared, depth) {
                return flow;
            }
        }
        self.compared += n.saturating_sub(next);
        let compared = n;
        self.step(
            format!("{} {}", table.name(), name),
            format!("(end of {name}: return)"),
            None,
            compared,
            StepAction::Return,
        );
        Flow::Continue
    }

    /// A built-in chain: its kube-proxy jumps only; falling off is the
    /// chain's ACCEPT policy (we model no other rules there).
    fn walk_hook(&mut self, table: Table, name: &str) -> Flow {
        let c = self.c;
        let Some(hook) = c.hooks.iter().find(|h| h.table == table && h.name == name) else {
            return Flow::Continue;
        };
        let mut compared = 0;
        for rule in &hook.rules {
            compared += 1;
            self.compared += 1;
            if !self.matches(rule) {
                continue;
            }
            if let Some(flow) = self.apply(table, hook.name, rule, None, compared, 0) {
                return flow;
            }
        }
        Flow::Continue
    }
}

/// Walk one new connection's first packet.
pub fn process(
    c: &Compiled,
    packet: &Packet,
    hook: Hook,
    state: &mut NodeState,
    chooser: &mut Chooser,
    now_ms: u64,
) -> NodeOutcome {
    let mut w = Walker {
        c,
        state,
        chooser,
        now_ms,
        src: packet.src,
        dst: packet.dst,
        protocol: packet.protocol,
        mark: 0,
        dnat: None,
        candidates: Vec::new(),
        steps: Vec::new(),
        compared: 0,
    };
    let nat_hook = match hook {
        Hook::Prerouting => "PREROUTING",
        Hook::Output => "OUTPUT",
    };
    w.walk_hook(Table::Nat, nat_hook);
    // Routing after nat: local destinations go to INPUT.
    let local = w.is_local(&w.dst.ip());
    let filter_hooks: &[&str] = match (hook, local) {
        (Hook::Prerouting, true) => &["INPUT"],
        (Hook::Prerouting, false) => &["FORWARD"],
        (Hook::Output, true) => &["OUTPUT", "INPUT"],
        (Hook::Output, false) => &["OUTPUT"],
    };
    let mut end: Option<Flow> = None;
    let mut accepted_by: Option<String> = None;
    let mut mark_at_postrouting = None;
    for h in filter_hooks {
        match w.walk_hook(Table::Filter, h) {
            f @ (Flow::Drop(_) | Flow::Reject(_)) => {
                end = Some(f);
                break;
            }
            Flow::Accept(chain) => accepted_by = Some(chain),
            Flow::Continue | Flow::Dnat => {}
        }
        // A packet leaving the node (forwarded, or sent by the node) passes
        // nat POSTROUTING next, where KUBE-POSTROUTING masquerades marked
        // packets (and clears the mark while doing it).
        if matches!(*h, "FORWARD" | "OUTPUT") && mark_at_postrouting.is_none() {
            mark_at_postrouting = Some(w.mark);
            w.walk_hook(Table::Nat, "POSTROUTING");
        }
    }
    let verdict = match end {
        Some(Flow::Drop(reason)) => Verdict::Drop { reason },
        Some(Flow::Reject(reason)) => Verdict::Reject { reason },
        _ => match w.dnat {
            Some(endpoint) => Verdict::Dnat { endpoint },
            None if accepted_by.as_deref() == Some(names::NODEPORTS) => Verdict::Accept,
            None => Verdict::None,
        },
    };
    let mut candidates = if w.dnat.is_some() {
        w.candidates.clone()
    } else {
        Vec::new()
    };
    if let Some(ep) = w.dnat {
        if !candidates.contains(&ep) {
            candidates.push(ep);
        }
    }
    NodeOutcome {
        verdict,
        candidates,
        masquerade: mark_at_postrouting.unwrap_or(w.mark) & c.masquerade_mark != 0,
        steps: w.steps,
        rules_compared: w.compared,
    }
}

#[cfg(test)]
mod tests {
    //! The indexed walk must be the linear walk: same verdicts, steps, lines
    //! and "rules compared", on chains long enough to be indexed.
    use super::*;
    use crate::model::packet::IpFamily;
    use crate::net::modes::NodeState;

    #[test]
    fn indexed_walk_equals_linear_walk() {
        let (cluster, diags) = crate::Code::ALL.parse(&crate::net::modes::testdata::cluster_yaml());
        assert!(!crate::util::diag::has_errors(&diags), "{diags:#?}");
        let input = crate::net::proxy::build_input(
            &cluster,
            &cluster.endpoint_slices,
            "node-a",
            IpFamily::V4,
        )
        .expect("node-a");
        let indexed = super::super::compile::compile(&input);
        assert!(
            indexed
                .tables
                .iter()
                .flat_map(|t| t.chains.iter())
                .any(|c| c.index.is_some()),
            "no chain is long enough to be indexed"
        );
        let mut linear = indexed.clone();
        for t in linear.tables.iter_mut() {
            for c in t.chains.iter_mut() {
                c.index = None;
            }
        }
        let (dests, sources) = crate::net::modes::testdata::packets();
        let (mut s1, mut s2) = (NodeState::default(), NodeState::default());
        let (mut dnats, mut most) = (0, 0);
        for dst in &dests {
            for &(src, hook) in &sources {
                let pkt = Packet::new(src, *dst, Protocol::Tcp);
                let a = process(&indexed, &pkt, hook, &mut s1, &mut Chooser::new(3), 0);
                let b = process(&linear, &pkt, hook, &mut s2, &mut Chooser::new(3), 0);
                assert_eq!(a, b, "{src} -> {dst}");
                dnats += usize::from(matches!(a.verdict, Verdict::Dnat { .. }));
                most = most.max(a.rules_compared);
            }
        }
        assert!(dnats > 100, "{dnats} DNATs");
        assert!(most > 40, "at most {most} rules compared");
    }
}
