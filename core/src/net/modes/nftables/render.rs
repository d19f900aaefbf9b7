//! Text and JSON forms of the typed `kube-proxy` table.
//!
//! Two text forms: `nft list table ip kube-proxy` (the nested block format nft
//! prints, what a user sees on a node) and the knftables transaction form
//! (`add rule ip kube-proxy …`, what kube-proxy writes and what its unit tests
//! compare). This is the only place that produces nft syntax; it never decides
//! what the rules are.

use super::model::*;
use crate::model::packet::IpFamily;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Which of nft's two spellings to produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// As kube-proxy writes it (knftables): `mark set mark or 0x4000`.
    Knft,
    /// As `nft list` prints it: `meta mark set meta mark | 0x00004000`.
    List,
}

fn ipx(f: IpFamily) -> &'static str {
    match f {
        IpFamily::V4 => "ip",
        IpFamily::V6 => "ip6",
    }
}

fn family_word(f: IpFamily) -> &'static str {
    ipx(f)
}

fn addr_type(f: IpFamily) -> &'static str {
    match f {
        IpFamily::V4 => "ipv4_addr",
        IpFamily::V6 => "ipv6_addr",
    }
}

fn key_type(f: IpFamily, k: KeyType) -> String {
    match k {
        KeyType::Addr => addr_type(f).to_string(),
        KeyType::AddrProtoPort => format!("{} . inet_proto . inet_service", addr_type(f)),
        KeyType::ProtoPort => "inet_proto . inet_service".to_string(),
    }
}

fn spec(a: &AddrSpec) -> String {
    match a {
        AddrSpec::Ip(ip) => ip.to_string(),
        AddrSpec::Net(n) => n.to_string(),
    }
}

pub fn verdict_text(v: &Verdict) -> String {
    match v {
        Verdict::Jump(c) => format!("jump {}", c.name),
        Verdict::Goto(c) => format!("goto {}", c.name),
        Verdict::Return => "return".into(),
        Verdict::Drop => "drop".into(),
        Verdict::Reject => "reject".into(),
    }
}

fn mark_list(m: u32) -> String {
    format!("0x{m:08x}")
}

/// One expression in the given style.
pub fn expr_text(f: IpFamily, e: &Expr, style: Style) -> String {
    let ip = ipx(f);
    match e {
        Expr::CtStateNew => "ct state new".into(),
        Expr::DaddrInSet(s) => format!("{ip} daddr @{s}"),
        Expr::Daddr(a) => format!("{ip} daddr {a}"),
        Expr::DaddrNot(n) => format!("{ip} daddr != {}", host_or_net(n)),
        Expr::DaddrInAnon(v) => {
            let items: Vec<String> = v.iter().map(|n| n.to_string()).collect();
            match style {
                // kube-proxy joins its service CIDRs with "," inside "{ }".
                Style::Knft => format!("{ip} daddr {{ {} }}", items.join(",")),
                Style::List if items.len() == 1 => format!("{ip} daddr {}", items[0]),
                Style::List => format!("{ip} daddr {{ {} }}", items.join(", ")),
            }
        }
        Expr::Saddr(a) => format!("{ip} saddr {}", spec(a)),
        Expr::SaddrNot(a) => format!("{ip} saddr != {}", spec(a)),
        Expr::SaddrNotInAnon(v) => match style {
            Style::Knft => {
                let items: Vec<String> = v.iter().map(spec).collect();
                format!("{ip} saddr != {{ {} }}", items.join(" , "))
            }
            Style::List => {
                let mut sorted = v.clone();
                crate::util::order::sort_by_key(&mut sorted, |a| match a {
                    AddrSpec::Ip(i) => (*i, 0u8),
                    AddrSpec::Net(n) => (n.network(), n.prefix_len()),
                });
                let items: Vec<String> = sorted.iter().map(spec).collect();
                if items.len() == 1 {
                    format!("{ip} saddr != {}", items[0])
                } else {
                    format!("{ip} saddr != {{ {} }}", items.join(", "))
                }
            }
        },
        Expr::SaddrInSet(s) => format!("{ip} saddr @{s}"),
        Expr::FibSaddrLocal => "fib saddr type local".into(),
        Expr::FibDaddrLocal => "fib daddr type local".into(),
        Expr::MarkAndIsZero(m) => match style {
            Style::Knft => format!("mark and {m:#x} == 0"),
            Style::List => format!("meta mark & {} == {}", mark_list(*m), mark_list(0)),
        },
        Expr::L4Proto(p) => format!("meta l4proto {}", p.as_lower()),
        Expr::MarkSetOr(m) => match style {
            Style::Knft => format!("mark set mark or {m:#x}"),
            Style::List => format!("meta mark set meta mark | {}", mark_list(*m)),
        },
        Expr::MarkSetXor(m) => match style {
            Style::Knft => format!("mark set mark xor {m:#x}"),
            Style::List => format!("meta mark set meta mark ^ {}", mark_list(*m)),
        },
        Expr::UpdateSaddr(s) => format!("update @{s} {{ {ip} saddr }}"),
        Expr::DnatTo(a) => format!("dnat to {a}"),
        Expr::MasqueradeFullyRandom => "masquerade fully-random".into(),
        Expr::Vmap { key, map } => match key {
            LookupKey::DaddrProtoPort => {
                format!("{ip} daddr . meta l4proto . th dport vmap @{map}")
            }
            LookupKey::ProtoPort => format!("meta l4proto . th dport vmap @{map}"),
        },
        Expr::NumgenVmap(chains) => {
            let sep = match style {
                Style::Knft => " , ",
                Style::List => ", ",
            };
            let items: Vec<String> = chains
                .iter()
                .enumerate()
                .map(|(i, c)| format!("{i} : goto {}", c.name))
                .collect();
            format!(
                "numgen random mod {} vmap {{ {} }}",
                chains.len(),
                items.join(sep)
            )
        }
        Expr::Verdict(v) => verdict_text(v),
    }
}

fn host_or_net(n: &ipnet::IpNet) -> String {
    // `ip6 daddr != ::1` is written without /128.
    if n.prefix_len() == IpFamily::of(&n.addr()).host_bits() {
        n.addr().to_string()
    } else {
        n.to_string()
    }
}

/// A whole rule in the given style.
pub fn rule_text(f: IpFamily, r: &Rule, style: Style) -> String {
    let mut s: Vec<String> = r.exprs.iter().map(|e| expr_text(f, e, style)).collect();
    if let Some(c) = &r.comment {
        s.push(format!("comment \"{c}\""));
    }
    s.join(" ")
}

fn elem_key_text(k: &ElemKey) -> String {
    match k.addr {
        Some(a) => format!("{a} . {} . {}", k.protocol.as_lower(), k.port),
        None => format!("{} . {}", k.protocol.as_lower(), k.port),
    }
}

/// `KEY [comment "…"] : VERDICT`
pub fn map_elem_text(e: &MapElem) -> String {
    let mut s = elem_key_text(&e.key);
    if let Some(c) = &e.comment {
        let _ = write!(s, " comment \"{c}\"");
    }
    let _ = write!(s, " : {}", verdict_text(&e.verdict));
    s
}

/// The knftables transaction form kube-proxy writes (and its unit tests dump):
/// table, chains, sets, maps, rules, elements.
pub fn render_add_commands(t: &Table) -> String {
    let fam = family_word(t.family);
    let pre = format!("{fam} kube-proxy");
    let mut out = String::new();
    let _ = writeln!(out, "add table {pre} {{ comment \"{}\" ; }}", t.comment);
    for c in &t.chains {
        let mut props = Vec::new();
        if let Some(b) = &c.base {
            props.push(format!(
                "type {} hook {} priority {}",
                b.kind.as_str(),
                b.hook.as_str(),
                b.priority
            ));
        }
        if let Some(cm) = &c.comment {
            props.push(format!("comment \"{cm}\""));
        }
        if props.is_empty() {
            let _ = writeln!(out, "add chain {pre} {}", c.name);
        } else {
            let _ = writeln!(
                out,
                "add chain {pre} {} {{ {} ; }}",
                c.name,
                props.join(" ; ")
            );
        }
    }
    for s in &t.sets {
        let mut props = vec![format!("type {}", addr_type(t.family))];
        if let Some(to) = s.timeout_seconds {
            props.push("flags dynamic,timeout".into());
            props.push(format!("timeout {to}s"));
        }
        if let Some(cm) = &s.comment {
            props.push(format!("comment \"{cm}\""));
        }
        let _ = writeln!(
            out,
            "add set {pre} {} {{ {} ; }}",
            s.name,
            props.join(" ; ")
        );
    }
    for m in &t.maps {
        let mut props = vec![format!("type {} : verdict", key_type(t.family, m.key))];
        if let Some(cm) = &m.comment {
            props.push(format!("comment \"{cm}\""));
        }
        let _ = writeln!(
            out,
            "add map {pre} {} {{ {} ; }}",
            m.name,
            props.join(" ; ")
        );
    }
    for c in &t.chains {
        for r in &c.rules {
            let _ = writeln!(
                out,
                "add rule {pre} {} {}",
                c.name,
                rule_text(t.family, r, Style::Knft)
            );
        }
    }
    for s in &t.sets {
        for e in &s.elements {
            let _ = writeln!(out, "add element {pre} {} {{ {e} }}", s.name);
        }
    }
    for m in &t.maps {
        for e in &m.elements {
            let _ = writeln!(
                out,
                "add element {pre} {} {{ {} }}",
                m.name,
                map_elem_text(e)
            );
        }
    }
    out
}

/// nft's way of printing a base chain priority: a standard name (± offset up
/// to 10) where that name is valid for the hook, else the number.
pub fn priority_text(hook: NfHook, prio: i32) -> String {
    let named: [(&str, i32, bool); 6] = [
        ("raw", -300, true),
        ("mangle", -150, true),
        ("dstnat", -100, hook == NfHook::Prerouting),
        ("filter", 0, true),
        ("security", 50, true),
        ("srcnat", 100, hook == NfHook::Postrouting),
    ];
    for (name, val, ok) in named {
        if !ok {
            continue;
        }
        let diff = prio - val;
        if diff == 0 {
            return name.to_string();
        }
        if diff.abs() <= 10 {
            let sign = if diff > 0 { '+' } else { '-' };
            return format!("{name} {sign} {}", diff.abs());
        }
    }
    prio.to_string()
}

/// nft's time format: `3h`, `1m30s`.
pub fn duration_text(secs: u32) -> String {
    if secs == 0 {
        return "0s".into();
    }
    let (d, h, m, s) = (
        secs / 86400,
        (secs % 86400) / 3600,
        (secs % 3600) / 60,
        secs % 60,
    );
    let mut out = String::new();
    for (v, u) in [(d, "d"), (h, "h"), (m, "m"), (s, "s")] {
        if v > 0 {
            let _ = write!(out, "{v}{u}");
        }
    }
    out
}

/// `nft list table` text plus where each rule and element landed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Listing {
    pub text: String,
    /// Every rule's 0-based line, chain after chain in table order (one
    /// list rather than one per chain: 100,000s of chains).
    pub rule_lines: Vec<usize>,
    /// Per chain: where its rules start in `rule_lines`.
    pub chain_rules: Vec<usize>,
    /// Per map name, per element: 0-based line.
    pub map_elem_lines: BTreeMap<String, Vec<usize>>,
    /// Per set name: line of each element.
    pub set_elem_lines: BTreeMap<String, Vec<usize>>,
    /// Per chain: line of `chain NAME {`.
    pub chain_lines: Vec<usize>,
    pub lines: usize,
}

impl Listing {
    /// The line of rule `rule` of chain `chain` (table order).
    pub fn rule_line(&self, chain: usize, rule: usize) -> Option<usize> {
        let start = *self.chain_rules.get(chain)?;
        let end = self
            .chain_rules
            .get(chain + 1)
            .copied()
            .unwrap_or(self.rule_lines.len());
        let i = start.checked_add(rule).filter(|&i| i < end)?;
        self.rule_lines.get(i).copied()
    }
}

struct Lines {
    text: String,
    n: usize,
}

impl Lines {
    fn push(&mut self, s: &str) -> usize {
        let at = self.n;
        self.text.push_str(s);
        self.text.push('\n');
        self.n += s.matches('\n').count() + 1;
        at
    }
}

const ELEM_NEWLINE: &str = ",\n\t\t\t     ";

/// `nft list table ip kube-proxy`: the nested block format, with tabs as nft
/// prints them. Named sets and maps come first, then chains, each in
/// creation order (as `table_print` does); elements are sorted by key.
pub fn render_listing(t: &Table) -> Listing {
    let mut l = Lines {
        text: String::new(),
        n: 0,
    };
    let mut listing = Listing::default();
    l.push(&format!("table {} kube-proxy {{", family_word(t.family)));
    l.push(&format!("\tcomment \"{}\"", t.comment));
    for s in &t.sets {
        l.push("");
        l.push(&format!("\tset {} {{", s.name));
        l.push(&format!("\t\ttype {}", addr_type(t.family)));
        if let Some(to) = s.timeout_seconds {
            l.push("\t\tflags dynamic,timeout");
            l.push(&format!("\t\ttimeout {}", duration_text(to)));
        }
        if let Some(c) = &s.comment {
            l.push(&format!("\t\tcomment \"{c}\""));
        }
        let mut elem_lines = Vec::new();
        if !s.elements.is_empty() {
            // nft puts two IPv4 addresses per line, one IPv6 address.
            let per_line = match t.family {
                IpFamily::V4 => 2,
                IpFamily::V6 => 1,
            };
            let mut text = String::from("\t\telements = { ");
            let start = l.n;
            for (i, e) in s.elements.iter().enumerate() {
                if i > 0 {
                    if i % per_line == 0 {
                        text.push_str(ELEM_NEWLINE);
                    } else {
                        text.push_str(", ");
                    }
                }
                elem_lines.push(start + i / per_line);
                let _ = write!(text, "{e}");
            }
            text.push_str(" }");
            l.push(&text);
        }
        listing.set_elem_lines.insert(s.name.clone(), elem_lines);
        l.push("\t}");
    }
    for m in &t.maps {
        l.push("");
        l.push(&format!("\tmap {} {{", m.name));
        l.push(&format!("\t\ttype {} : verdict", key_type(t.family, m.key)));
        if let Some(c) = &m.comment {
            l.push(&format!("\t\tcomment \"{c}\""));
        }
        let mut elem_lines = Vec::new();
        if !m.elements.is_empty() {
            let start = l.n;
            let items: Vec<String> = m.elements.iter().map(map_elem_text).collect();
            for i in 0..items.len() {
                elem_lines.push(start + i);
            }
            l.push(&format!(
                "\t\telements = {{ {} }}",
                items.join(ELEM_NEWLINE)
            ));
        }
        listing.map_elem_lines.insert(m.name.clone(), elem_lines);
        l.push("\t}");
    }
    for c in &t.chains {
        l.push("");
        listing
            .chain_lines
            .push(l.push(&format!("\tchain {} {{", c.name)));
        if let Some(cm) = &c.comment {
            l.push(&format!("\t\tcomment \"{cm}\""));
        }
        if let Some(b) = &c.base {
            l.push(&format!(
                "\t\ttype {} hook {} priority {}; policy accept;",
                b.kind.as_str(),
                b.hook.as_str(),
                priority_text(b.hook, b.priority)
            ));
        }
        listing.chain_rules.push(listing.rule_lines.len());
        for r in &c.rules {
            let at = l.push(&format!("\t\t{}", rule_text(t.family, r, Style::List)));
            listing.rule_lines.push(at);
        }
        l.push("\t}");
    }
    l.push("}");
    listing.lines = l.n;
    listing.text = l.text;
    listing
}

/// Newlines in a name or comment that ends up inside a line.
fn nl(s: &str) -> usize {
    // `contains` on bytes is a memchr: the usual answer, none, is quick.
    if !s.as_bytes().contains(&b'\n') {
        return 0;
    }
    s.bytes().filter(|&b| b == b'\n').count()
}

/// Newlines [`rule_text`] would write for `r` (only names and comments can
/// hold any; addresses and numbers never do).
fn rule_newlines(r: &Rule) -> usize {
    let exprs: usize = r
        .exprs
        .iter()
        .map(|e| match e {
            Expr::DaddrInSet(s) | Expr::SaddrInSet(s) | Expr::UpdateSaddr(s) => nl(s),
            Expr::Vmap { map, .. } => nl(map),
            Expr::NumgenVmap(chains) => chains.iter().map(|c| nl(&c.name)).sum(),
            Expr::Verdict(v) => verdict_newlines(v),
            _ => 0,
        })
        .sum();
    exprs + r.comment.as_deref().map_or(0, nl)
}

fn verdict_newlines(v: &Verdict) -> usize {
    match v {
        Verdict::Jump(c) | Verdict::Goto(c) => nl(&c.name),
        _ => 0,
    }
}

/// Where every line of [`render_listing`] lands, without writing the text
/// (a 10,000-Service table is 600,000 lines nobody may read; a packet's walk
/// only needs the line numbers). Must count exactly as `render_listing`
/// writes: `listing_layout_matches_the_text` checks it.
pub fn listing_layout(t: &Table) -> Listing {
    let mut n = 0usize;
    let mut listing = Listing::default();
    n += 1; // table ... {
    n += 1 + nl(&t.comment);
    for s in &t.sets {
        n += 2 + nl(&s.name) + 1; // blank, set NAME {, type
        if s.timeout_seconds.is_some() {
            n += 2;
        }
        if let Some(c) = &s.comment {
            n += 1 + nl(c);
        }
        let per_line = match t.family {
            IpFamily::V4 => 2,
            IpFamily::V6 => 1,
        };
        let start = n;
        let elem_lines: Vec<usize> = (0..s.elements.len())
            .map(|i| start + i / per_line)
            .collect();
        n += s.elements.len().div_ceil(per_line);
        listing.set_elem_lines.insert(s.name.clone(), elem_lines);
        n += 1; // }
    }
    for m in &t.maps {
        n += 2 + nl(&m.name) + 1; // blank, map NAME {, type
        if let Some(c) = &m.comment {
            n += 1 + nl(c);
        }
        let start = n;
        let elem_lines: Vec<usize> = (start..start + m.elements.len()).collect();
        if !m.elements.is_empty() {
            let inner: usize = m
                .elements
                .iter()
                .map(|e| e.comment.as_deref().map_or(0, nl) + verdict_newlines(&e.verdict))
                .sum();
            n += m.elements.len() + inner;
        }
        listing.map_elem_lines.insert(m.name.clone(), elem_lines);
        n += 1; // }
    }
    listing.chain_lines.reserve(t.chains.len());
    listing.chain_rules.reserve(t.chains.len());
    listing
        .rule_lines
        .reserve(t.chains.iter().map(|c| c.rules.len()).sum());
    for c in &t.chains {
        n += 1; // blank
        listing.chain_lines.push(n);
        n += 1 + nl(&c.name);
        if let Some(cm) = &c.comment {
            n += 1 + nl(cm);
        }
        if c.base.is_some() {
            n += 1;
        }
        listing.chain_rules.push(listing.rule_lines.len());
        for r in &c.rules {
            listing.rule_lines.push(n);
            n += 1 + rule_newlines(r);
        }
        n += 1; // }
    }
    n += 1; // }
    listing.lines = n;
    listing
}

/// A structured dump of the table (`kpv rules --format json`).
#[cfg(feature = "json")]
pub fn render_json(t: &Table) -> serde_json::Value {
    use serde_json::json;
    let f = t.family;
    let sets: Vec<_> = t
        .sets
        .iter()
        .map(|s| {
            json!({
                "name": s.name,
                "type": addr_type(f),
                "flags": if s.timeout_seconds.is_some() { vec!["dynamic", "timeout"] } else { vec![] },
                "timeout": s.timeout_seconds,
                "comment": s.comment,
                "elements": s.elements.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
            })
        })
        .collect();
    let maps: Vec<_> = t
        .maps
        .iter()
        .map(|m| {
            json!({
                "name": m.name,
                "type": format!("{} : verdict", key_type(f, m.key)),
                "comment": m.comment,
                "elements": m.elements.iter().map(|e| json!({
                    "key": elem_key_text(&e.key),
                    "comment": e.comment,
                    "verdict": verdict_text(&e.verdict),
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let chains: Vec<_> = t
        .chains
        .iter()
        .map(|c| {
            json!({
                "name": c.name,
                "type": c.base.map(|b| b.kind.as_str()),
                "hook": c.base.map(|b| b.hook.as_str()),
                "priority": c.base.map(|b| b.priority),
                "comment": c.comment,
                "rules": c.rules.iter().map(|r| rule_text(f, r, Style::List)).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "table": {
            "family": family_word(f),
            "name": "kube-proxy",
            "comment": t.comment,
        },
        "sets": sets,
        "maps": maps,
        "chains": chains,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The counted layout is the text's, for every scenario and family.
    #[test]
    fn listing_layout_matches_the_text() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/scenarios");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("tests/scenarios")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
            .collect();
        files.sort();
        let mut checked = 0;
        for path in files {
            let text = std::fs::read_to_string(&path).expect("scenario");
            let (cluster, _) = crate::Code::ALL.parse(&text);
            let slices = crate::net::controller::steady_slices(&cluster);
            for node in &cluster.nodes {
                for family in [IpFamily::V4, IpFamily::V6] {
                    let Some(input) =
                        crate::net::proxy::build_input(&cluster, &slices, &node.name, family)
                    else {
                        continue;
                    };
                    let t = super::super::compile::compile_table(&input).table;
                    let mut full = render_listing(&t);
                    assert_eq!(full.lines, full.text.lines().count(), "{}", path.display());
                    full.text.clear();
                    assert_eq!(listing_layout(&t), full, "{} {}", path.display(), node.name);
                    checked += 1;
                }
            }
        }
        assert!(checked > 10, "only {checked} tables checked");
    }
}
