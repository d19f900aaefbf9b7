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

/// The mark as kube-proxy's tests write it (`0x4000`). Real kube-proxy writes
/// `fmt.Sprintf("%#08x", 1<<bit)`, i.e. `0x00004000`.
pub fn mark(m: u32) -> String {
    format!("{m:#x}")
}

fn addr(a: &Addr) -> String {
    match a {
        Addr::Ip(ip) => ip.to_string(),
        Addr::Net(n) => n.to_string(),
    }
}

/// kube-proxy quotes comments itself (`"%s cluster IP"`); plain Service port
/// names (no space) go unquoted.
fn comment(c: &str) -> String {
    if c.contains(' ') {
        format!("\"{c}\"")
    } else {
        c.to_string()
    }
}

fn push_match(out: &mut Vec<String>, m: &Match) {
    let mut w = |s: &str| out.push(s.to_string());
    match m {
        Match::Comment(c) => {
            w("-m");
            w("comment");
            w("--comment");
            w(&comment(c));
        }
        Match::Proto(p) => {
            w("-m");
            w(p.as_lower());
            w("-p");
            w(p.as_lower());
        }
        Match::Src { addr: a, negate } | Match::Dst { addr: a, negate } => {
            if *negate {
                w("!");
            }
            w(if matches!(m, Match::Src { .. }) {
                "-s"
            } else {
                "-d"
            });
            w(&addr(a));
        }
        Match::DPort(p) => {
            w("--dport");
            w(&p.to_string());
        }
        Match::AddrTypeLocal(side) => {
            w("-m");
            w("addrtype");
            w(match side {
                Side::Src => "--src-type",
                Side::Dst => "--dst-type",
            });
            w("LOCAL");
        }
        Match::Statistic { n } => {
            w("-m");
            w("statistic");
            w("--mode");
            w("random");
            w("--probability");
            w(&super::rules::probability(*n));
        }
        Match::RecentCheck { list, seconds } => {
            w("-m");
            w("recent");
            w("--name");
            w(list);
            w("--rcheck");
            w("--seconds");
            w(&seconds.to_string());
            w("--reap");
        }
        Match::RecentSet { list } => {
            w("-m");
            w("recent");
            w("--name");
            w(list);
            w("--set");
        }
        Match::Mark { mark: mk, negate } => {
            w("-m");
            w("mark");
            if *negate {
                w("!");
            }
            w("--mark");
            w(&format!("{}/{}", mark(*mk), mark(*mk)));
        }
        Match::Conntrack { state, negate } => {
            w("-m");
            w("conntrack");
            if *negate {
                w("!");
            }
            w("--ctstate");
            w(state.text());
        }
        Match::Nfacct(n) => {
            w("-m");
            w("nfacct");
            w("--nfacct-name");
            w(n);
        }
    }
}

fn push_target(out: &mut Vec<String>, t: &Target) {
    let mut w = |s: &str| out.push(s.to_string());
    match t {
        Target::Jump(c) => {
            w("-j");
            w(c);
        }
        Target::Accept => {
            w("-j");
            w("ACCEPT");
        }
        Target::Drop(_) => {
            w("-j");
            w("DROP");
        }
        Target::Reject(_) => {
            w("-j");
            w("REJECT");
        }
        Target::Return => {
            w("-j");
            w("RETURN");
        }
        Target::Dnat(to) => {
            w("-j");
            w("DNAT");
            w("--to-destination");
            w(&to.to_string());
        }
        Target::OrMark(m) => {
            w("-j");
            w("MARK");
            w("--or-mark");
            w(&mark(*m));
        }
        Target::XorMark(m) => {
            w("-j");
            w("MARK");
            w("--xor-mark");
            w(&mark(*m));
        }
        Target::Masquerade => {
            w("-j");
            w("MASQUERADE");
        }
        Target::Nothing => {}
    }
}

/// `-A CHAIN <matches> <target>`.
pub fn rule_line(chain: &str, rule: &Rule) -> String {
    let mut words = vec!["-A".to_string(), chain.to_string()];
    for m in &rule.matches {
        push_match(&mut words, m);
    }
    push_target(&mut words, &rule.target);
    words.join(" ")
}

/// `:CHAIN - [0:0]` (`utiliptables.MakeChainLine`).
pub fn chain_line(chain: &Chain) -> String {
    format!(":{} - [0:0]", chain.name)
}

/// Lay the tables out as text lines, recording each chain's and rule's line.
pub fn layout(tables: &mut [TableRules]) -> Vec<String> {
    let mut lines = Vec::new();
    for t in tables.iter_mut() {
        lines.push(format!("*{}", t.table.name()));
        for c in t.chains.iter_mut() {
            c.decl_line = lines.len();
            lines.push(chain_line(c));
        }
        for c in t.chains.iter_mut() {
            c.lines.clear();
            for r in &c.rules {
                c.lines.push(lines.len());
                lines.push(rule_line(&c.name, r));
            }
        }
        lines.push("COMMIT".into());
    }
    lines
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
                        .zip(&c.lines)
                        .map(|(r, l)| json!({"line": l, "text": rule_line(&c.name, r)}))
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
