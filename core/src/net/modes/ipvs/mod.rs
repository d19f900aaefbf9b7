//! kube-proxy's IPVS mode (`pkg/proxy/ipvs`): virtual servers in the
//! kernel's IPVS table, their addresses on the `kube-ipvs0` dummy interface,
//! ipsets, and a little iptables glue for masquerade and filtering.
//!
//! [`compile`] turns a [`ProxyInput`] into a typed [`Ruleset`] (what one
//! `syncProxyRules` leaves on a fresh node); [`render`] prints it as
//! `ipvsadm -Ln` + `ipset list` + `iptables-save`; `process` walks a new
//! connection's first packet through it; [`sched`] holds the kernel's
//! schedulers, exactly as `net/netfilter/ipvs/ip_vs_*.c` choose.
//!
//! ```text
//!  from outside / a local Pod                      a host process
//!           │                                            │
//!   nat PREROUTING                                 nat OUTPUT
//!     └─ KUBE-SERVICES ─┬─ -s 127/8 RETURN           └─ KUBE-SERVICES (same chain)
//!                       ├─ KUBE-LOAD-BALANCER set → KUBE-LOAD-BALANCER
//!                       │     (LOCAL set → RETURN, else KUBE-MARK-MASQ)
//!                       ├─ KUBE-CLUSTER-IP set (! -s clusterCIDR) → KUBE-MARK-MASQ
//!                       ├─ KUBE-EXTERNAL-IP(-LOCAL) sets → MARK-MASQ / ACCEPT
//!                       ├─ dst-type LOCAL → KUBE-NODE-PORT
//!                       │     (LOCAL-<proto> → RETURN, NODE-PORT-<proto> → MARK-MASQ)
//!                       └─ CLUSTER-IP / LOAD-BALANCER sets → ACCEPT
//!           │                                            │
//!   routing: dst local? ── no ─→ filter FORWARD          │
//!           │ yes               (KUBE-PROXY-FIREWALL,    │
//!   filter INPUT                 KUBE-FORWARD)           │
//!     ├─ KUBE-IPVS-FILTER (NEW to a kube-ipvs0 address   │
//!     │    that is no service ip:port → REJECT)          │
//!     ├─ KUBE-PROXY-FIREWALL (LB source ranges → DROP)   │
//!     └─ KUBE-NODE-PORT (health-check port → ACCEPT)     │
//!           │                                            │
//!   IPVS (LOCAL_IN, prio 99)                       IPVS (LOCAL_OUT, prio -98)
//!     one hash lookup (proto, vip, port) → persistence template?
//!     → scheduler (rr wrr lc wlc sed nq sh dh mh) → Masq (DNAT)
//!     no real server → ICMP port unreachable
//!           │                                            │
//!           └──── re-sent through LOCAL_OUT ─────────────┘
//!                 filter OUTPUT: KUBE-IPVS-OUT-FILTER (node → LB ip not in
//!                                source ranges → DROP)
//!                 nat POSTROUTING: KUBE-POSTROUTING
//!                   (KUBE-LOOP-BACK hairpin → MASQUERADE; mark 0x4000 → MASQUERADE)
//! ```
//!
//! Fidelity notes (where the model departs from a live node, and why):
//! * One sync on a fresh node: no real server in graceful deletion (weight
//!   0), no stale services; kube-proxy's Go map orders are replaced by sorted
//!   order. The kernel's destination list is "most recently added first", so
//!   with endpoints added in kube-proxy's endpoint order (sorted by
//!   `ip:port`) the list is that order reversed; rr/wrr cycle and lc-style
//!   ties resolve in that list order.
//! * `externalTrafficPolicy: Local` (or `internalTrafficPolicy: Local`) with
//!   no local endpoint: kube-proxy's `syncEndpoint` gives the VS all cluster
//!   endpoints (kubernetes#97081); the NodePort/LB/externalIP rules do not
//!   masquerade it, so an external client's reply is lost — as on a node.
//! * A new TCP/SCTP connection counts as active, UDP as inactive (the caller
//!   moves closed connections); persistence templates live in
//!   `NodeState::affinity` and expire `timeout` after their last use (the
//!   kernel also keeps them while a connection they control lives: not
//!   tracked here).
//!
//! Never: pick endpoints differently from [`ProxyInput::categorize`] (plus
//! kube-proxy's IPVS fallback above), use randomness, or panic on input.

mod compile;
pub mod glue;
pub mod ipset;
mod process;
pub mod render;
pub mod sched;

pub use compile::{
    Interface, RealServer, Ruleset, VirtualServer, VsKind, DEFAULT_AFFINITY_SECONDS, DUMMY_DEVICE,
    FLAG_HASHED, FLAG_PERSISTENT, FLAG_SCHED2,
};

use super::*;
use glue::Table;
use std::collections::BTreeMap as Map;

/// One node's compiled IPVS mode.
pub struct IpvsDataplane {
    pub ruleset: Ruleset,
    /// Line numbers and rule texts (the lines themselves are not kept).
    rendered: render::Rendered,
    /// The text, written on first use.
    text: std::sync::OnceLock<String>,
    /// (protocol number, address, port) → index in `ruleset.virtual_servers`:
    /// the kernel's service hash table.
    vs_index: Map<(u8, IpAddr, u16), usize>,
    /// (table, chain) → rule indices in order.
    chains: Map<(Table, String), Vec<usize>>,
}

/// Compile a node's IPVS state with the given scheduler.
pub fn compile(input: &ProxyInput, scheduler: crate::model::Scheduler) -> IpvsDataplane {
    let ruleset = compile::build(input, scheduler);
    let rendered = render::layout(&ruleset);
    let vs_index = crate::util::order::map(
        ruleset
            .virtual_servers
            .iter()
            .enumerate()
            .map(|(i, vs)| ((compile::proto_number(vs.protocol), vs.address, vs.port), i)),
    );
    let mut chains: Map<(Table, String), Vec<usize>> = Map::new();
    for (i, r) in ruleset.rules.iter().enumerate() {
        chains
            .entry((r.table, r.chain.clone()))
            .or_default()
            .push(i);
    }
    IpvsDataplane {
        ruleset,
        rendered,
        text: std::sync::OnceLock::new(),
        vs_index,
        chains,
    }
}

impl IpvsDataplane {
    /// The line of each virtual server in [`Dataplane::render_text`].
    pub fn vs_lines(&self) -> &[usize] {
        &self.rendered.vs_line
    }
}

impl Dataplane for IpvsDataplane {
    fn mode(&self) -> Mode {
        Mode::Ipvs
    }

    fn render_text(&self) -> String {
        self.text
            .get_or_init(|| {
                let mut s = render::render(&self.ruleset).lines.join("\n");
                s.push('\n');
                s
            })
            .clone()
    }

    #[cfg(feature = "json")]
    fn render_json(&self) -> serde_json::Value {
        render::json(&self.ruleset)
    }

    fn process(
        &self,
        packet: &Packet,
        hook: Hook,
        state: &mut NodeState,
        _chooser: &mut Chooser,
        _world: &dyn World,
        now_ms: u64,
    ) -> NodeOutcome {
        self.run(packet, hook, state, now_ms)
    }

    /// Virtual servers + real servers + iptables rules.
    fn rule_count(&self) -> usize {
        let vs = self.ruleset.virtual_servers.len();
        let rs: usize = self
            .ruleset
            .virtual_servers
            .iter()
            .map(|v| v.real_servers.len())
            .sum();
        vs + rs + self.ruleset.rules.len()
    }

    /// The `mh` scheduler's table of each virtual server that uses it.
    #[cfg(feature = "hash-tables")]
    fn hash_tables(&self) -> Vec<super::hash_table::HashTable> {
        self.ruleset
            .virtual_servers
            .iter()
            .filter(|vs| vs.scheduler == crate::model::Scheduler::Mh)
            .filter(|vs| !vs.real_servers.is_empty())
            .map(|vs| {
                let dests: Vec<sched::Dest> = vs
                    .real_servers
                    .iter()
                    .map(|r| sched::Dest::new(r.addr, r.weight))
                    .collect();
                let slots = sched::mh_table(&dests)
                    .into_iter()
                    .map(|i| i.and_then(|i| dests.get(i)).map(|d| d.addr));
                super::hash_table::HashTable::count(
                    std::net::SocketAddr::new(vs.address, vs.port),
                    vs.protocol,
                    slots,
                )
            })
            .collect()
    }
}
