//! Typed iptables rules: the tables, chains, matches and targets kube-proxy's
//! iptables proxier writes, as values.
//!
//! Everything the compiler decides lives here as enums and structs; text only
//! appears in [`super::render`]. Nothing in this module knows about Services:
//! it is plain netfilter vocabulary (and only the part kube-proxy uses).

use crate::model::packet::Protocol;
use crate::net::modes::DropReason;
use arrayvec::ArrayString;
use ipnet::IpNet;
use serde::Serialize;
use std::net::{IpAddr, SocketAddr};

/// A chain name, stored inline. iptables refuses chain names longer than
/// 28 bytes (`XT_EXTENSION_MAXNAMELEN` - 1), so every name kube-proxy
/// writes fits, and the 100,000s of chains and jumps of a large node cost
/// no allocation at all.
pub type Name = ArrayString<28>;

/// `s` as a [`Name`], cut at 28 bytes (a longer name is one iptables would
/// refuse and kube-proxy never writes).
pub fn name(s: &str) -> Name {
    name_of(&[s])
}

/// The parts written one after the other as a [`Name`], cut like [`name`].
pub fn name_of(parts: &[&str]) -> Name {
    let mut n = Name::new();
    for p in parts {
        let mut end = p.len().min(n.remaining_capacity());
        while !p.is_char_boundary(end) {
            end -= 1;
        }
        n.push_str(&p[..end]);
    }
    n
}

/// An iptables table kube-proxy writes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Table {
    Filter,
    Nat,
}

impl Table {
    pub fn name(self) -> &'static str {
        match self {
            Table::Filter => "filter",
            Table::Nat => "nat",
        }
    }
}

/// An address operand of `-s` / `-d`. kube-proxy writes bare IPs for Pods,
/// ClusterIPs, externalIPs and LB IPs (no `/32`), and CIDRs for ranges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Addr {
    Ip(IpAddr),
    Net(IpNet),
}

impl Addr {
    pub fn contains(&self, ip: &IpAddr) -> bool {
        match self {
            Addr::Ip(a) => a == ip,
            Addr::Net(n) => n.contains(ip),
        }
    }
}

/// Which address `-m addrtype` looks at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Side {
    Src,
    Dst,
}

/// `-m conntrack --ctstate` state sets kube-proxy uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum CtState {
    New,
    Invalid,
    RelatedEstablished,
    RelatedEstablishedDnat,
}

impl CtState {
    pub fn text(self) -> &'static str {
        match self {
            CtState::New => "NEW",
            CtState::Invalid => "INVALID",
            CtState::RelatedEstablished => "RELATED,ESTABLISHED",
            CtState::RelatedEstablishedDnat => "RELATED,ESTABLISHED,DNAT",
        }
    }
}

/// One match of a rule, in the order kube-proxy writes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Match {
    /// `-m comment --comment X` (quoted when it contains a space, as kube-proxy
    /// quotes it itself).
    Comment(String),
    /// `-m tcp -p tcp`.
    Proto(Protocol),
    /// `-s X` / `! -s X`.
    Src { addr: Addr, negate: bool },
    /// `-d X` / `! -d X`.
    Dst { addr: Addr, negate: bool },
    /// `--dport N` (an option of the preceding `-m tcp`).
    DPort(u16),
    /// `-m addrtype --src-type LOCAL` / `--dst-type LOCAL`.
    AddrTypeLocal(Side),
    /// `-m statistic --mode random --probability P`, P = 1/n printed `%0.10f`.
    Statistic { n: usize },
    /// `-m recent --name L --rcheck --seconds S --reap`. (The names are boxed:
    /// only session affinity uses them, and inline they would make every
    /// rule of a large node a quarter larger.)
    RecentCheck { list: Box<Name>, seconds: u32 },
    /// `-m recent --name L --set`.
    RecentSet { list: Box<Name> },
    /// `-m mark --mark M/M` / `-m mark ! --mark M/M`.
    Mark { mark: u32, negate: bool },
    /// `-m conntrack --ctstate S` / `-m conntrack ! --ctstate S`.
    Conntrack { state: CtState, negate: bool },
    /// `-m nfacct --nfacct-name N` (a counter; always matches).
    Nfacct(&'static str),
}

/// `computeProbability(n)`: `fmt.Sprintf("%0.10f", 1.0/float64(n))`.
pub fn probability(n: usize) -> String {
    if n == 0 {
        return "<bad value>".into();
    }
    let p = probability_e10(n);
    format!("{}.{:010}", p / E10, p % E10)
}

/// 10¹⁰: the printed probability has ten decimals.
const E10: u64 = 10_000_000_000;

/// The probability kube-proxy prints for `n` (≥ 1) endpoints left, in units
/// of 10⁻¹⁰: the exact binary value of the double `1.0/float64(n)`, rounded
/// at the tenth decimal half to even, as Go's `%0.10f` does. Integer
/// arithmetic on the double's bits (no float formatting code in the app).
pub fn probability_e10(n: usize) -> u64 {
    let bits = (1.0f64 / n.max(1) as f64).to_bits();
    let fraction = bits & ((1u64 << 52) - 1);
    let biased = ((bits >> 52) & 0x7ff) as u32;
    // value = mantissa × 2^-shift (0 < value ≤ 1, so the shift is positive).
    let (mantissa, shift) = if biased == 0 {
        (fraction, 1074)
    } else {
        (fraction | 1 << 52, 1075 - biased)
    };
    if shift >= 128 {
        return 0; // below 10⁻⁷⁰: prints as zero
    }
    let scaled = u128::from(mantissa) * u128::from(E10);
    let q = scaled >> shift;
    let rest = scaled - (q << shift);
    let half = 1u128 << (shift - 1);
    let up = rest > half || (rest == half && q & 1 == 1);
    (q + u128::from(up)) as u64
}

/// What iptables stores for `--probability` of `n` endpoints left: the
/// printed decimal read as a double, times 2³¹, truncated. Exact in integers:
/// `floor(p × 2³¹ / 10¹⁰)` of the printed `p` equals it for every `n` (the
/// double is within 2⁻²⁴ of the decimal below 0.5, and 1.0 and 0.5 are exact;
/// `tests/iptables.rs` checks it against the float reading).
pub fn statistic_threshold(n: usize) -> u64 {
    ((u128::from(probability_e10(n)) << 31) / u128::from(E10)) as u64
}

/// What a matching rule does.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Target {
    /// `-j CHAIN`.
    Jump(Name),
    Accept,
    /// `-j DROP`; the reason is ours (for the verdict), not part of the rule.
    Drop(DropReason),
    /// `-j REJECT`; the reason is ours, not part of the rule.
    Reject(DropReason),
    Return,
    /// `-j DNAT --to-destination ip:port` (`[ip6]:port`).
    Dnat(SocketAddr),
    /// `-j MARK --or-mark M`.
    OrMark(u32),
    /// `-j MARK --xor-mark M`.
    XorMark(u32),
    /// `-j MASQUERADE`.
    Masquerade,
    /// No `-j` at all: a rule that only counts (KUBE-FW's last rule).
    Nothing,
}

/// A rule's matches (up to two inline).
pub type Matches = crate::net::modes::small::Small<Match>;

/// One `-A` rule (its chain is the [`Chain`] holding it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Rule {
    pub matches: Matches,
    pub target: Target,
}

impl Rule {
    pub fn new(matches: impl Into<Matches>, target: Target) -> Rule {
        Rule {
            matches: matches.into(),
            target,
        }
    }

    /// The comment text, if any.
    pub fn comment(&self) -> Option<&str> {
        self.matches.iter().find_map(|m| match m {
            Match::Comment(c) => Some(c.as_str()),
            _ => None,
        })
    }
}

/// A chain with its rules, and where each sits in the rendered text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Chain {
    pub name: Name,
    pub rules: Vec<Rule>,
    /// 0-based line of the `:CHAIN - [0:0]` declaration in the rendered text.
    pub decl_line: usize,
    /// 0-based line of the first rule in the rendered text (a chain's rules
    /// are consecutive lines; see [`Chain::line`]).
    pub first_line: usize,
    /// For long chains (KUBE-SERVICES, KUBE-NODEPORTS...): which rules could
    /// match a destination at all. See [`ChainIndex`].
    #[serde(skip)]
    pub index: Option<Box<ChainIndex>>,
    /// KUBE-SVC-/KUBE-SVL- chains: the endpoints their jumps to KUBE-SEP-
    /// chains DNAT to, in rule order (a packet's candidates).
    #[serde(skip)]
    pub endpoints: Option<Box<[SocketAddr]>>,
}

impl Chain {
    /// 0-based line of rule `i` in the rendered text.
    pub fn line(&self, i: usize) -> Option<usize> {
        (i < self.rules.len()).then_some(self.first_line + i)
    }
}

/// Chains shorter than this are walked rule by rule without an index.
pub const INDEX_MIN_RULES: usize = 16;

/// The rules of a chain grouped by what they require of the destination:
/// a rule with `-d IP` (not negated) can only match a packet to that IP, a
/// rule with `--dport N` only one to that port. A walk visits just the
/// rules that can match, in order, and still *counts* every rule a linear
/// walk would have compared (a skipped rule fails a plain match, so it has
/// no side effects either).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChainIndex {
    /// (destination IP, rule), sorted.
    by_dst: Vec<(IpAddr, usize)>,
    /// (destination port, rule), sorted.
    by_dport: Vec<(u16, usize)>,
    /// Rules with neither: possible for any packet.
    rest: Vec<usize>,
}

/// The rules of `v` (sorted by key, then rule) with key `k`.
fn with_key<K: Ord + Copy>(v: &[(K, usize)], k: K) -> impl Iterator<Item = usize> + '_ {
    let start = v.partition_point(|(x, _)| *x < k);
    v[start..]
        .iter()
        .take_while(move |(x, _)| *x == k)
        .map(|(_, i)| *i)
}

impl ChainIndex {
    pub fn new(rules: &[Rule]) -> ChainIndex {
        let mut ix = ChainIndex::default();
        for (i, r) in rules.iter().enumerate() {
            let dst = r.matches.iter().find_map(|m| match m {
                Match::Dst {
                    addr: Addr::Ip(ip),
                    negate: false,
                } => Some(*ip),
                _ => None,
            });
            let dport = r.matches.iter().find_map(|m| match m {
                Match::DPort(p) => Some(*p),
                _ => None,
            });
            match (dst, dport) {
                (Some(ip), _) => ix.by_dst.push((ip, i)),
                (None, Some(p)) => ix.by_dport.push((p, i)),
                (None, None) => ix.rest.push(i),
            }
        }
        ix.by_dst.sort_unstable();
        ix.by_dport.sort_unstable();
        ix
    }

    /// The rules that may match a packet to `dst`, in chain order.
    pub fn candidates(&self, dst: SocketAddr) -> Vec<usize> {
        let mut v: Vec<usize> = self.rest.clone();
        v.extend(with_key(&self.by_dst, dst.ip()));
        v.extend(with_key(&self.by_dport, dst.port()));
        v.sort_unstable();
        v
    }
}

/// One table in rendering order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TableRules {
    pub table: Table,
    pub chains: Vec<Chain>,
}

impl TableRules {
    /// The chain of that name. Chains are kept in [`chain_key`] order (see
    /// `compile::arrange`), so this is a binary search: a packet's walk and
    /// the compiler look chains up by name once per jump, and a linear scan
    /// over 100,000 chains made both slow at scale. `compile::arrange` (the
    /// only producer) keeps that order.
    pub fn chain(&self, name: &str) -> Option<&Chain> {
        let key = chain_key(name);
        match self
            .chains
            .binary_search_by(|c| chain_key(&c.name).cmp(&key))
        {
            Ok(i) => Some(&self.chains[i]),
            Err(_) => None,
        }
    }
}

/// `sortIPTablesRules`' chain order.
pub(crate) fn chain_key(name: &str) -> (u8, &str) {
    match name {
        names::NODEPORTS => (0, ""),
        names::SERVICES => (1, ""),
        n if n.starts_with("KUBE-") => (2, n),
        n => (3, n),
    }
}

/// A built-in chain's jump rules (PREROUTING, INPUT...): installed by
/// kube-proxy with `iptables -I` on a full sync, not part of the restore data
/// and therefore not in the rendered text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HookChain {
    pub table: Table,
    pub name: &'static str,
    pub rules: Vec<Rule>,
}

/// Chain names kube-proxy uses (`proxier.go` constants).
pub mod names {
    pub const SERVICES: &str = "KUBE-SERVICES";
    pub const EXTERNAL_SERVICES: &str = "KUBE-EXTERNAL-SERVICES";
    pub const NODEPORTS: &str = "KUBE-NODEPORTS";
    pub const POSTROUTING: &str = "KUBE-POSTROUTING";
    pub const MARK_MASQ: &str = "KUBE-MARK-MASQ";
    pub const FORWARD: &str = "KUBE-FORWARD";
    pub const PROXY_FIREWALL: &str = "KUBE-PROXY-FIREWALL";
    /// The kubelet's chain, which kube-proxy also writes when
    /// localhost NodePorts are enabled (IPv4 only).
    pub const FIREWALL: &str = "KUBE-FIREWALL";
    pub const SVC: &str = "KUBE-SVC-";
    pub const SVL: &str = "KUBE-SVL-";
    pub const EXT: &str = "KUBE-EXT-";
    pub const FW: &str = "KUBE-FW-";
    pub const SEP: &str = "KUBE-SEP-";
    /// nfacct counters (`metrics.*NFAcctCounter`).
    pub const NFACCT_LOCALHOST_NPS: &str = "localhost_nps_accepted_pkts";
    pub const NFACCT_CT_INVALID: &str = "ct_state_invalid_dropped_pkts";
}

#[cfg(test)]
mod tests {
    use super::{name, name_of, names};

    #[test]
    fn chain_names_are_kept_whole_up_to_the_iptables_limit() {
        // The longest names kube-proxy writes fit.
        let sep = name_of(&[names::SEP, "ABCDEFGHIJKLMNOP"]);
        assert_eq!(&*sep, "KUBE-SEP-ABCDEFGHIJKLMNOP");
        assert_eq!(&*name(names::EXTERNAL_SERVICES), names::EXTERNAL_SERVICES);
        // 28 bytes is iptables' own limit; longer is cut there, on a
        // character boundary.
        let long = "K".repeat(40);
        assert_eq!(name(&long).len(), 28);
        let accented = format!("{}é", "K".repeat(27));
        assert_eq!(&*name(&accented), "K".repeat(27).as_str());
    }
}
