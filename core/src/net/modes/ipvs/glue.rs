//! The iptables "glue" kube-proxy's IPVS mode installs next to the virtual
//! servers (`writeIptablesRules` in `pkg/proxy/ipvs/proxier.go`): typed rules,
//! their `iptables-save` text, and the kernel's test of each match.
//!
//! Rules are generated in kube-proxy's restore-payload order; `iptables-save`
//! then prints built-in chains first and user chains alphabetically (libiptc
//! keeps them sorted), each chain's rules in the order they were appended.
//! The text is `iptables-save`'s normalised form, not the restore payload:
//! `-s`/`-p` move before the matches, `/32` is added to host sources, marks
//! lose their zero padding, `MARK --or-mark X` prints as `--set-xmark X/X`,
//! `--xor-mark X` as `--set-xmark X/0x0`, a bare `REJECT` gains
//! `--reject-with icmp-port-unreachable`, and the `ipvs` match prints its
//! protocol as a number before `--vaddr` (libxt_ipvs `ipvs_mt_dump`).
//!
//! Never: decide which rules exist here (that is `compile.rs`); this module
//! only models and prints them.

use super::ipset::{Dir, IpSet, PacketView, SetId};
use crate::model::packet::{IpFamily, Protocol};
use ipnet::IpNet;
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::IpAddr;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum Table {
    Nat,
    Filter,
}

impl Table {
    pub fn as_str(self) -> &'static str {
        match self {
            Table::Nat => "nat",
            Table::Filter => "filter",
        }
    }

    /// Built-in chains in the order `iptables-save` prints them.
    pub fn builtin_chains(self) -> &'static [&'static str] {
        match self {
            Table::Nat => &["PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"],
            Table::Filter => &["INPUT", "FORWARD", "OUTPUT"],
        }
    }

    /// kube-proxy's own chains in this table (`iptablesChains`).
    pub fn kube_chains(self) -> &'static [&'static str] {
        match self {
            Table::Nat => &[
                "KUBE-SERVICES",
                "KUBE-POSTROUTING",
                "KUBE-NODE-PORT",
                "KUBE-LOAD-BALANCER",
                "KUBE-MARK-MASQ",
            ],
            Table::Filter => &[
                "KUBE-FORWARD",
                "KUBE-NODE-PORT",
                "KUBE-PROXY-FIREWALL",
                "KUBE-SOURCE-RANGES-FIREWALL",
                "KUBE-IPVS-FILTER",
                "KUBE-IPVS-OUT-FILTER",
            ],
        }
    }
}

/// One match of a rule, in the order kube-proxy writes them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Match {
    /// `[!] -s NET`
    Source { net: IpNet, negate: bool },
    /// `-p tcp`
    Protocol(Protocol),
    /// `-m comment --comment "…"`
    Comment(String),
    /// `-m set --match-set NAME dst,dst,src`
    Set { set: SetId, dirs: Vec<Dir> },
    /// `-m addrtype [!] --src-type LOCAL` / `--dst-type LOCAL`
    AddrTypeLocal { source: bool, negate: bool },
    /// `-m physdev ! --physdev-is-in`
    PhysdevNotIn,
    /// `-m mark [!] --mark V/V`
    Mark { value: u32, negate: bool },
    /// `-m conntrack --ctstate …`
    CtState(CtState),
    /// `-m ipvs --vaddr A --vproto P --vport N`
    Ipvs {
        vaddr: IpAddr,
        vproto: Protocol,
        vport: u16,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum CtState {
    New,
    RelatedEstablished,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Target {
    Jump(String),
    Return,
    Accept,
    Drop,
    Reject,
    Masquerade {
        random_fully: bool,
    },
    /// `MARK --or-mark`
    MarkOr(u32),
    /// `MARK --xor-mark`
    MarkXor(u32),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Rule {
    pub table: Table,
    pub chain: String,
    pub matches: Vec<Match>,
    pub target: Target,
}

/// Everything a match can look at.
pub struct EvalCtx<'a> {
    pub pkt: PacketView,
    pub mark: u32,
    pub src_local: bool,
    pub dst_local: bool,
    /// Came in through a bridge port (`physdev-is-in`).
    pub physdev_in: bool,
    /// The IPVS virtual server this packet belongs to, once IPVS handled it.
    pub ipvs: Option<(IpAddr, Protocol, u16)>,
    pub sets: &'a BTreeMap<SetId, IpSet>,
}

impl Match {
    pub fn test(&self, c: &EvalCtx<'_>) -> bool {
        match self {
            Match::Source { net, negate } => net.contains(&c.pkt.src) != *negate,
            Match::Protocol(p) => c.pkt.protocol == *p,
            Match::Comment(_) => true,
            Match::Set { set, dirs } => c
                .sets
                .get(set)
                .map(|s| s.matches(&c.pkt, dirs))
                .unwrap_or(false),
            Match::AddrTypeLocal { source, negate } => {
                (if *source { c.src_local } else { c.dst_local }) != *negate
            }
            Match::PhysdevNotIn => !c.physdev_in,
            Match::Mark { value, negate } => (c.mark & value == *value) != *negate,
            // The first packet of a new connection.
            Match::CtState(s) => *s == CtState::New,
            Match::Ipvs {
                vaddr,
                vproto,
                vport,
            } => c.ipvs == Some((*vaddr, *vproto, *vport)),
        }
    }
}

impl Rule {
    pub fn new(table: Table, chain: &str, matches: Vec<Match>, target: Target) -> Rule {
        Rule {
            table,
            chain: chain.to_string(),
            matches,
            target,
        }
    }

    pub fn matches(&self, c: &EvalCtx<'_>) -> bool {
        self.matches.iter().all(|m| m.test(c))
    }

    /// The rule as `iptables-save` prints it.
    pub fn render(&self, family: IpFamily, sets: &BTreeMap<SetId, IpSet>) -> String {
        let mut s = format!("-A {}", self.chain);
        // iptables-save prints the IP header part (-s, -p) first.
        for m in &self.matches {
            if let Match::Source { net, negate } = m {
                if *negate {
                    s.push_str(" !");
                }
                s.push_str(&format!(" -s {net}"));
            }
        }
        for m in &self.matches {
            if let Match::Protocol(p) = m {
                s.push_str(&format!(" -p {}", p.as_lower()));
            }
        }
        for m in &self.matches {
            match m {
                Match::Source { .. } | Match::Protocol(_) => {}
                Match::Comment(text) => {
                    s.push_str(" -m comment --comment");
                    save_string(&mut s, text);
                }
                Match::Set { set, dirs } => {
                    let name = sets
                        .get(set)
                        .map(|x| x.name.clone())
                        .unwrap_or_else(|| set.name(family));
                    let d: Vec<&str> = dirs
                        .iter()
                        .map(|d| match d {
                            Dir::Src => "src",
                            Dir::Dst => "dst",
                        })
                        .collect();
                    s.push_str(&format!(" -m set --match-set {name} {}", d.join(",")));
                }
                Match::AddrTypeLocal { source, negate } => {
                    s.push_str(" -m addrtype");
                    if *negate {
                        s.push_str(" !");
                    }
                    s.push_str(if *source {
                        " --src-type LOCAL"
                    } else {
                        " --dst-type LOCAL"
                    });
                }
                Match::PhysdevNotIn => s.push_str(" -m physdev ! --physdev-is-in"),
                Match::Mark { value, negate } => {
                    s.push_str(" -m mark");
                    if *negate {
                        s.push_str(" !");
                    }
                    s.push_str(&format!(" --mark {value:#x}/{value:#x}"));
                }
                Match::CtState(st) => s.push_str(match st {
                    CtState::New => " -m conntrack --ctstate NEW",
                    CtState::RelatedEstablished => " -m conntrack --ctstate RELATED,ESTABLISHED",
                }),
                Match::Ipvs {
                    vaddr,
                    vproto,
                    vport,
                } => {
                    let proto = match vproto {
                        Protocol::Tcp => 6,
                        Protocol::Udp => 17,
                        Protocol::Sctp => 132,
                    };
                    s.push_str(&format!(
                        " -m ipvs --vproto {proto} --vaddr {vaddr} --vport {vport}"
                    ));
                }
            }
        }
        match &self.target {
            Target::Jump(c) => s.push_str(&format!(" -j {c}")),
            Target::Return => s.push_str(" -j RETURN"),
            Target::Accept => s.push_str(" -j ACCEPT"),
            Target::Drop => s.push_str(" -j DROP"),
            Target::Reject => s.push_str(match family {
                IpFamily::V4 => " -j REJECT --reject-with icmp-port-unreachable",
                IpFamily::V6 => " -j REJECT --reject-with icmp6-port-unreachable",
            }),
            Target::Masquerade { random_fully } => {
                s.push_str(" -j MASQUERADE");
                if *random_fully {
                    s.push_str(" --random-fully");
                }
            }
            Target::MarkOr(v) => s.push_str(&format!(" -j MARK --set-xmark {v:#x}/{v:#x}")),
            Target::MarkXor(v) => s.push_str(&format!(" -j MARK --set-xmark {v:#x}/0x0")),
        }
        s
    }
}

/// `xtables_save_string`: bare when only `[A-Za-z0-9_-]`, else double-quoted
/// with `"`, `\` and `'` backslash-escaped.
fn save_string(out: &mut String, value: &str) {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    out.push(' ');
    if plain {
        out.push_str(value);
        return;
    }
    out.push('"');
    for c in value.chars() {
        if matches!(c, '"' | '\\' | '\'') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
}
