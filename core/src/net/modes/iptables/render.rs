//! Typed rules → `iptables-restore` text, exactly as kube-proxy writes it.
//!
//! Words are joined with single spaces in the order kube-proxy passes them to
//! its `LineBuffer`. The masquerade mark is printed the way kube-proxy's unit
//! tests print it (`0x4000`); a real kube-proxy formats it with `%#08x` and
//! prints `0x00004000` — same value, different spelling. This module must
//! never decide anything: it only spells out what the compiler built.

use super::rules::{Addr, Chain, Match, Rule, Side, TableRules, Target};
#[cfg(feature = "json")]
use serde_json::json;
use std::fmt::Write as _;

/// The mark as kube-proxy's tests write it (`0x4000`). Real kube-proxy writes
/// `fmt.Sprintf("%#08x", 1<<bit)`, i.e. `0x00004000`.
pub fn mark(m: u32) -> String {
    format!("{m:#x}")
}

fn addr(out: &mut String, a: &Addr) {
    let _ = match a {
        Addr::Ip(ip) => write!(out, "{ip}"),
        Addr::Net(n) => write!(out, "{n}"),
    };
}

/// kube-proxy quotes comments itself (`"%s cluster IP"`); plain Service port
/// names (no space) go unquoted.
fn comment(out: &mut String, c: &str) {
    if c.contains(' ') {
        out.push('"');
        out.push_str(c);
        out.push('"');
    } else {
        out.push_str(c);
    }
}

/// Appends ` word` (every word of a rule follows `-A CHAIN`).
fn w(out: &mut String, word: &str) {
    out.push(' ');
    out.push_str(word);
}

fn push_match(out: &mut String, m: &Match) {
    match m {
        Match::Comment(c) => {
            out.push_str(" -m comment --comment ");
            comment(out, c);
        }
        Match::Proto(p) => {
            w(out, "-m");
            w(out, p.as_lower());
            w(out, "-p");
            w(out, p.as_lower());
        }
        Match::Src { addr: a, negate } | Match::Dst { addr: a, negate } => {
            if *negate {
                w(out, "!");
            }
            w(
                out,
                if matches!(m, Match::Src { .. }) {
                    "-s"
                } else {
                    "-d"
                },
            );
            out.push(' ');
            addr(out, a);
        }
        Match::DPort(p) => {
            let _ = write!(out, " --dport {p}");
        }
        Match::AddrTypeLocal(side) => {
            w(out, "-m addrtype");
            w(
                out,
                match side {
                    Side::Src => "--src-type",
                    Side::Dst => "--dst-type",
                },
            );
            w(out, "LOCAL");
        }
        Match::Statistic { n } => {
            w(out, "-m statistic --mode random --probability");
            w(out, &super::rules::probability(*n));
        }
        Match::RecentCheck { list, seconds } => {
            w(out, "-m recent --name");
            w(out, list);
            let _ = write!(out, " --rcheck --seconds {seconds} --reap");
        }
        Match::RecentSet { list } => {
            w(out, "-m recent --name");
            w(out, list);
            w(out, "--set");
        }
        Match::Mark { mark: mk, negate } => {
            w(out, "-m mark");
            if *negate {
                w(out, "!");
            }
            let _ = write!(out, " --mark {}/{}", mark(*mk), mark(*mk));
        }
        Match::Conntrack { state, negate } => {
            w(out, "-m conntrack");
            if *negate {
                w(out, "!");
            }
            w(out, "--ctstate");
            w(out, state.text());
        }
        Match::Nfacct(n) => {
            w(out, "-m nfacct --nfacct-name");
            w(out, n);
        }
    }
}

fn push_target(out: &mut String, t: &Target) {
    match t {
        Target::Jump(c) => {
            w(out, "-j");
            w(out, c);
        }
        Target::Accept => w(out, "-j ACCEPT"),
        Target::Drop(_) => w(out, "-j DROP"),
        Target::Reject(_) => w(out, "-j REJECT"),
        Target::Return => w(out, "-j RETURN"),
        Target::Dnat(to) => {
            let _ = write!(out, " -j DNAT --to-destination {to}");
        }
        Target::OrMark(m) => {
            let _ = write!(out, " -j MARK --or-mark {}", mark(*m));
        }
        Target::XorMark(m) => {
            let _ = write!(out, " -j MARK --xor-mark {}", mark(*m));
        }
        Target::Masquerade => w(out, "-j MASQUERADE"),
        Target::Nothing => {}
    }
}

/// Appends `-A CHAIN <matches> <target>` (no newline).
fn write_rule(out: &mut String, chain: &str, rule: &Rule) {
    out.push_str("-A ");
    out.push_str(chain);
    for m in &rule.matches {
        push_match(out, m);
    }
    push_target(out, &rule.target);
}

/// `-A CHAIN <matches> <target>`.
pub fn rule_line(chain: &str, rule: &Rule) -> String {
    let mut s = String::with_capacity(96);
    write_rule(&mut s, chain, rule);
    s
}

/// `:CHAIN - [0:0]` (`utiliptables.MakeChainLine`).
pub fn chain_line(chain: &Chain) -> String {
    format!(":{} - [0:0]", chain.name)
}

/// Record each chain's and rule's line in the text [`text`] writes: per
/// table `*table`, the chain declarations, every chain's rules, `COMMIT`.
/// Every entry is exactly one line, so no text is needed to count them.
pub fn layout(tables: &mut [TableRules]) -> usize {
    let mut n = 0;
    for t in tables.iter_mut() {
        n += 1; // *table
        for c in t.chains.iter_mut() {
            c.decl_line = n;
            n += 1;
        }
        for c in t.chains.iter_mut() {
            c.first_line = n;
            n += c.rules.len();
        }
        n += 1; // COMMIT
    }
    n
}

/// The `iptables-restore` text, one line per entry as [`layout`] counted.
pub fn text(tables: &[TableRules]) -> String {
    let rules: usize = tables
        .iter()
        .flat_map(|t| t.chains.iter())
        .map(|c| c.rules.len() * 2 + 1)
        .sum();
    let mut out = String::with_capacity(rules * 48 + 64);
    for t in tables {
        out.push('*');
        out.push_str(t.table.name());
        out.push('\n');
        for c in &t.chains {
            out.push(':');
            out.push_str(&c.name);
            out.push_str(" - [0:0]\n");
        }
        for c in &t.chains {
            for r in &c.rules {
                write_rule(&mut out, &c.name, r);
                out.push('\n');
            }
        }
        out.push_str("COMMIT\n");
    }
    out
}

/// The structured dump: tables → chains → rules with their text and line.
#[cfg(feature = "json")]
pub fn json(tables: &[TableRules], family: &str) -> serde_json::Value {
    let tables: Vec<serde_json::Value> = tables
        .iter()
        .map(|t| {
            let chains: Vec<serde_json::Value> = t
                .chains
                .iter()
                .map(|c| {
                    let rules: Vec<serde_json::Value> = c
                        .rules
                        .iter()
                        .enumerate()
                        .map(|(i, r)| json!({"line": c.first_line + i, "text": rule_line(&c.name, r)}))
                        .collect();
                    json!({"name": c.name, "line": c.decl_line, "rules": rules})
                })
                .collect();
            json!({"name": t.table.name(), "chains": chains})
        })
        .collect();
    json!({
        "mode": "iptables",
        "format": if family == "IPv6" { "ip6tables-restore" } else { "iptables-restore" },
        "family": family,
        "tables": tables,
    })
}
