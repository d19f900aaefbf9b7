//! Text and JSON renderers of a compiled userspace data plane.
//!
//! The text is `iptables-save` output for the `nat` and `filter` tables
//! (only what kube-proxy writes), then the kube-proxy process's listeners as
//! `#` comment lines, so the whole text still feeds `iptables-restore`.
//! Renderers only format; they never decide anything.

use super::rules::{Chain, Table};
use super::{Listener, UserspaceDataplane};
#[cfg(feature = "json")]
use serde_json::json;

const BUILTIN_NAT: [&str; 4] = ["PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"];
const BUILTIN_FILTER: [&str; 3] = ["INPUT", "FORWARD", "OUTPUT"];
const USER_NAT: [Chain; 4] = [
    Chain::NodePortContainer,
    Chain::NodePortHost,
    Chain::PortalsContainer,
    Chain::PortalsHost,
];
const USER_FILTER: [Chain; 1] = [Chain::NodePortNonLocal];

/// The title line: the mode is legacy.
pub const TITLE: &str =
    "# kube-proxy mode: userspace (legacy: removed in Kubernetes 1.26; last shipped in 1.25)";
pub const LISTENERS_HEADER: &str = "# kube-proxy (userspace) listeners";

/// Render the text; returns it with the line of every rule and listener.
pub fn text(dp: &UserspaceDataplane) -> (String, Vec<usize>, Vec<usize>) {
    build(dp, true)
}

/// Only the line of every rule and listener: the same code as [`text`]
/// without writing the lines (compiling needs the numbers; the text is
/// written when someone reads it).
pub fn layout(dp: &UserspaceDataplane) -> (Vec<usize>, Vec<usize>) {
    let (_, rule_lines, listener_lines) = build(dp, false);
    (rule_lines, listener_lines)
}

use crate::net::modes::lines::Lines;

fn build(dp: &UserspaceDataplane, write: bool) -> (String, Vec<usize>, Vec<usize>) {
    let mut lines = Lines::new(write);
    let mut rule_lines = vec![0; dp.rules.len()];
    lines.push(|| TITLE.into());
    let save = match dp.family {
        crate::model::packet::IpFamily::V4 => "iptables-save",
        crate::model::packet::IpFamily::V6 => "ip6tables-save",
    };
    lines.push(|| {
        format!(
            "# node {}: {save} of the nat and filter rules kube-proxy writes",
            dp.node_name
        )
    });
    if dp.node_port_addresses_ignored {
        lines.push(|| {
            "# nodePortAddresses is ignored: the userspace proxier matches NodePorts on \
             every local address"
                .into()
        });
    }
    for (table, builtins, users) in [
        (Table::Nat, &BUILTIN_NAT[..], &USER_NAT[..]),
        (Table::Filter, &BUILTIN_FILTER[..], &USER_FILTER[..]),
    ] {
        lines.push(|| format!("*{}", table.name()));
        for b in builtins {
            lines.push(|| format!(":{b} ACCEPT [0:0]"));
        }
        for u in users {
            lines.push(|| format!(":{} - [0:0]", u.name()));
        }
        for (i, r) in dp.rules.iter().enumerate() {
            if r.chain.table() == table {
                rule_lines[i] = lines.len();
                lines.push(|| r.render());
            }
        }
        lines.push(|| "COMMIT".into());
    }

    lines.push(|| "#".into());
    lines.push(|| LISTENERS_HEADER.into());
    lines.push(|| {
        "# sockets of the kube-proxy process (not iptables rules). The kernel picks each proxy \
         port (bind to port 0);"
            .into()
    });
    lines.push(|| {
        "# kpv derives it from a hash of the service port name within 32768-60999 \
         (odd ports for TCP, as the kernel prefers)."
            .into()
    });
    let rows: Vec<[String; 3]> = dp
        .listeners
        .iter()
        .filter(|_| write)
        .map(|l| {
            [
                l.key.clone(),
                l.protocol.as_upper().to_string(),
                l.listen_addr(dp.family)
                    .map(|a| a.to_string())
                    .unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    let header = [
        "SERVICE PORT".to_string(),
        "PROTO".into(),
        "PROXY PORT".into(),
    ];
    let mut widths = [0usize; 3];
    for row in rows.iter().chain(std::iter::once(&header)) {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let fmt_row = |row: &[String; 3], last: &str| {
        format!(
            "# {:w0$}  {:w1$}  {:w2$}  {last}",
            row[0],
            row[1],
            row[2],
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2]
        )
    };
    lines.push(|| fmt_row(&header, "BACKENDS (round-robin order)"));
    let mut listener_lines = Vec::with_capacity(dp.listeners.len());
    for (i, l) in dp.listeners.iter().enumerate() {
        listener_lines.push(lines.len());
        lines.push(|| match rows.get(i) {
            Some(row) => fmt_row(row, &backends_cell(l)),
            None => String::new(),
        });
        for note in notes(l) {
            lines.push(|| format!("#     {note}"));
        }
    }
    if dp.listeners.is_empty() {
        lines.push(|| "# (no Service ports)".into());
    }
    if !write {
        return (String::new(), rule_lines, listener_lines);
    }
    let mut text = lines.take_lines().join("\n");
    text.push('\n');
    (text, rule_lines, listener_lines)
}

fn backends_cell(l: &Listener) -> String {
    if let Some(why) = &l.skipped {
        return format!("(not proxied: {why})");
    }
    if l.backends.is_empty() {
        return "(no endpoints: connections are accepted, then closed)".into();
    }
    l.backends
        .iter()
        .map(|b| b.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn notes(l: &Listener) -> Vec<String> {
    let mut v = Vec::new();
    if l.skipped.is_some() {
        return v;
    }
    if let Some(s) = l.affinity_seconds {
        v.push(format!(
            "sessionAffinity: ClientIP, timeout {s}s (per client IP, refreshed on every use)"
        ));
    }
    if !l.held.is_empty() {
        v.push(format!("holds open: {}", l.held.join(", ")));
    }
    if !l.ignored.is_empty() {
        v.push(format!(
            "ignored (the userspace proxier predates them): {}",
            l.ignored.join(", ")
        ));
    }
    v
}

#[cfg(feature = "json")]
pub fn json(dp: &UserspaceDataplane) -> serde_json::Value {
    let tables: Vec<serde_json::Value> = [
        (Table::Nat, &USER_NAT[..], &BUILTIN_NAT[..]),
        (Table::Filter, &USER_FILTER[..], &BUILTIN_FILTER[..]),
    ]
    .into_iter()
    .map(|(table, users, builtins)| {
        let rules: Vec<serde_json::Value> = dp
            .rules
            .iter()
            .enumerate()
            .filter(|(_, r)| r.chain.table() == table)
            .map(|(i, r)| {
                json!({
                    "chain": r.chain.name(),
                    "line": dp.rule_lines.get(i),
                    "rule": r.render(),
                    "service_port": r.service.as_ref().map(|s| s.to_string()),
                    "portal": r.portal,
                })
            })
            .collect();
        json!({
            "table": table.name(),
            "builtin_chains": builtins,
            "chains": users.iter().map(|c| c.name()).collect::<Vec<_>>(),
            "rules": rules,
        })
    })
    .collect();
    let listeners: Vec<serde_json::Value> = dp
        .listeners
        .iter()
        .enumerate()
        .map(|(i, l)| {
            json!({
                "service_port": l.key,
                "protocol": l.protocol,
                "line": dp.listener_lines.get(i),
                "listen": l.listen_addr(dp.family).map(|a| a.to_string()),
                "proxy_port": l.proxy_port,
                "backends": l.backends.iter().map(|b| b.to_string()).collect::<Vec<_>>(),
                "session_affinity_seconds": l.affinity_seconds,
                "portals": l.portals.iter().map(|(k, a)| json!({"kind": k, "address": a.to_string()})).collect::<Vec<_>>(),
                "held_ports": l.held,
                "ignored": l.ignored,
                "skipped": l.skipped,
            })
        })
        .collect();
    json!({
        "mode": "userspace",
        "legacy": "removed in Kubernetes 1.26",
        "node": dp.node_name,
        "listen_ip": match dp.family {
            crate::model::packet::IpFamily::V4 => "0.0.0.0",
            crate::model::packet::IpFamily::V6 => "::",
        },
        "host_ip": dp.host_ip.to_string(),
        "dial_timeouts_ms": super::DIAL_TIMEOUTS_MS,
        "tables": tables,
        "listeners": listeners,
    })
}
