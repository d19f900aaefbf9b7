//! The typed `kube-proxy` nftables table: chains, rules, sets and verdict maps.
//!
//! These types hold exactly what kube-proxy writes with knftables and nothing
//! else. They carry no text: `render.rs` turns them into `nft` syntax, and
//! `trace.rs` evaluates them. Nothing here may look at the cluster model again.

use crate::model::packet::{IpFamily, Protocol};
use ipnet::IpNet;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

/// A chain name, shared by the chain and every verdict naming it.
pub type Name = Arc<str>;

/// A chain a verdict names: its name (what is rendered) and its position in
/// [`Table::chains`] (what a packet's walk follows, without a lookup by name
/// among 100,000s of chains). The compiler resolves both together.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ChainRef {
    pub name: Name,
    /// `None` for a chain that does not exist (nft would refuse it; the walk
    /// ignores the verdict).
    pub index: Option<usize>,
}

/// A fixed hash of a set name (SipHash with zero keys: the same on every
/// run and machine; only used to find a set, never for order).
fn name_hash(name: &str) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default().hash_one(name)
}

/// The one table kube-proxy owns per IP family (`table ip kube-proxy`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub family: IpFamily,
    pub comment: String,
    /// Named sets, in creation order.
    pub sets: Vec<Set>,
    /// Named verdict maps, in creation order.
    pub maps: Vec<Map>,
    /// Chains in creation order (base chains first).
    pub chains: Vec<Chain>,
    /// (hash of the name, position in `sets`), sorted (see
    /// [`Table::index_sets`]): with ClientIP affinity a large node has one
    /// set per endpoint, 100,000s, and a returning client's packet looks
    /// several up.
    pub set_order: Vec<(u64, usize)>,
}

impl Table {
    /// The chain of that name (a linear scan: packet walks follow
    /// [`ChainRef::index`] instead).
    pub fn chain(&self, name: &str) -> Option<&Chain> {
        self.chains.iter().find(|c| &*c.name == name)
    }
    /// The set of that name: a binary search once [`Table::index_sets`] has
    /// run, a scan otherwise.
    pub fn set(&self, name: &str) -> Option<&Set> {
        if self.set_order.len() != self.sets.len() {
            return self.sets.iter().find(|s| s.name == name);
        }
        let h = name_hash(name);
        let start = self.set_order.partition_point(|&(x, _)| x < h);
        self.set_order[start..]
            .iter()
            .take_while(|&&(x, _)| x == h)
            .filter_map(|&(_, i)| self.sets.get(i))
            .find(|s| s.name == name)
    }
    /// Index the sets by a hash of their names for [`Table::set`] (after
    /// the last set is added). Sorting 100,000 integers is quick; sorting
    /// the names themselves made compiling a quarter slower.
    pub fn index_sets(&mut self) {
        let mut order: Vec<(u64, usize)> = self
            .sets
            .iter()
            .enumerate()
            .map(|(i, s)| (name_hash(&s.name), i))
            .collect();
        order.sort_unstable();
        self.set_order = order;
    }
    pub fn map(&self, name: &str) -> Option<&Map> {
        self.maps.iter().find(|m| m.name == name)
    }
    pub fn rule_count(&self) -> usize {
        self.chains.iter().map(|c| c.rules.len()).sum()
    }
}

/// Netfilter hooks kube-proxy's base chains attach to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum NfHook {
    Prerouting,
    Input,
    Forward,
    Output,
    Postrouting,
}

impl NfHook {
    pub fn as_str(self) -> &'static str {
        match self {
            NfHook::Prerouting => "prerouting",
            NfHook::Input => "input",
            NfHook::Forward => "forward",
            NfHook::Output => "output",
            NfHook::Postrouting => "postrouting",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChainType {
    Filter,
    Nat,
}

impl ChainType {
    pub fn as_str(self) -> &'static str {
        match self {
            ChainType::Filter => "filter",
            ChainType::Nat => "nat",
        }
    }
}

/// A base chain's attachment: `type filter hook prerouting priority -110`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BaseHook {
    pub kind: ChainType,
    pub hook: NfHook,
    /// Numeric priority (knftables writes numbers: dstnat = -100 ...).
    pub priority: i32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chain {
    pub name: Name,
    pub base: Option<BaseHook>,
    pub comment: Option<String>,
    /// Up to two inline: most chains of a big table are endpoint chains of
    /// two rules.
    pub rules: crate::net::modes::small::Small<Rule>,
}

/// One rule: a sequence of expressions (matches, then statements), and an
/// optional trailing comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// Up to two inline (most rules of a big table are endpoint chains').
    pub exprs: crate::net::modes::small::Small<Expr>,
    pub comment: Option<String>,
}

impl Rule {
    pub fn new(exprs: impl Into<crate::net::modes::small::Small<Expr>>) -> Rule {
        Rule {
            exprs: exprs.into(),
            comment: None,
        }
    }
    pub fn commented(
        exprs: impl Into<crate::net::modes::small::Small<Expr>>,
        comment: &str,
    ) -> Rule {
        Rule {
            exprs: exprs.into(),
            comment: Some(comment.to_string()),
        }
    }
}

/// An address or prefix as written in a rule (`10.180.0.1`, `10.0.0.0/8`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum AddrSpec {
    Ip(IpAddr),
    Net(IpNet),
}

impl AddrSpec {
    pub fn contains(&self, ip: &IpAddr) -> bool {
        match self {
            AddrSpec::Ip(a) => a == ip,
            AddrSpec::Net(n) => n.contains(ip),
        }
    }
}

/// The key of a verdict-map lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LookupKey {
    /// `ip daddr . meta l4proto . th dport`
    DaddrProtoPort,
    /// `meta l4proto . th dport`
    ProtoPort,
}

/// What a rule matches on or does. Matches come first; a rule fires when all
/// its matches hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    // ---- matches ----
    /// `ct state new`
    CtStateNew,
    /// `ip daddr @set`
    DaddrInSet(String),
    /// `ip daddr 172.30.0.41`
    Daddr(IpAddr),
    /// `ip daddr != 127.0.0.0/8`
    DaddrNot(IpNet),
    /// `ip daddr { 172.30.0.0/16 }`
    DaddrInAnon(Vec<IpNet>),
    /// `ip saddr 10.0.0.0/8` / `ip saddr 10.180.0.1`
    Saddr(AddrSpec),
    /// `ip saddr != 10.0.0.0/8`
    SaddrNot(AddrSpec),
    /// `ip saddr != { 203.0.113.0/25 , 1.2.3.4 }`
    SaddrNotInAnon(Vec<AddrSpec>),
    /// `ip saddr @affinity-…` (a dynamic set with timeouts)
    SaddrInSet(String),
    /// `fib saddr type local`
    FibSaddrLocal,
    /// `fib daddr type local`
    FibDaddrLocal,
    /// `mark and 0x4000 == 0`
    MarkAndIsZero(u32),
    /// `meta l4proto tcp`
    L4Proto(Protocol),
    // ---- statements ----
    /// `mark set mark or 0x4000`
    MarkSetOr(u32),
    /// `mark set mark xor 0x4000`
    MarkSetXor(u32),
    /// `update @affinity-… { ip saddr }`
    UpdateSaddr(String),
    /// `dnat to 10.180.0.1:80`
    DnatTo(SocketAddr),
    /// `masquerade fully-random`
    MasqueradeFullyRandom,
    /// `<key> vmap @map`
    Vmap { key: LookupKey, map: String },
    /// `numgen random mod N vmap { 0 : goto c0 , 1 : goto c1 }`
    NumgenVmap(Vec<ChainRef>),
    /// A terminal verdict.
    Verdict(Verdict),
}

/// nftables verdicts kube-proxy writes.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Jump(ChainRef),
    Goto(ChainRef),
    Return,
    Drop,
    Reject,
}

/// The element type of a named set or map key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyType {
    /// `ipv4_addr` / `ipv6_addr`
    Addr,
    /// `ipv4_addr . inet_proto . inet_service`
    AddrProtoPort,
    /// `inet_proto . inet_service`
    ProtoPort,
}

/// A named set of addresses (`cluster-ips`, `nodeport-ips`, `affinity-…`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Set {
    pub name: String,
    pub comment: Option<String>,
    /// `flags dynamic,timeout` + `timeout Ns` (affinity sets).
    pub timeout_seconds: Option<u32>,
    /// Sorted.
    pub elements: Vec<IpAddr>,
}

/// The key of one map element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ElemKey {
    /// None for `inet_proto . inet_service` maps.
    pub addr: Option<IpAddr>,
    pub protocol: Protocol,
    pub port: u16,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapElem {
    pub key: ElemKey,
    pub comment: Option<String>,
    pub verdict: Verdict,
}

/// A named verdict map (`service-ips`, `no-endpoint-services`, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Map {
    pub name: String,
    pub key: KeyType,
    pub comment: Option<String>,
    /// Sorted by key.
    pub elements: Vec<MapElem>,
}

impl Map {
    /// The first element with this key: a binary search, since `elements`
    /// is sorted by key (a linear scan of 10,000 Services' elements cost
    /// most of a packet's walk).
    pub fn lookup(&self, key: &ElemKey) -> Option<(usize, &MapElem)> {
        let i = self.elements.partition_point(|e| e.key < *key);
        self.elements
            .get(i)
            .filter(|e| e.key == *key)
            .map(|e| (i, e))
    }
}
