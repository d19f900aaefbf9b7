//! Text and JSON of a compiled IPVS [`Ruleset`]: `ipvsadm -Ln`, then
//! `ipset list`, then the iptables glue as `iptables-save` prints it.
//!
//! `ipvsadm -Ln` uses ipvsadm's printf formats (`"%s  %s"` service name,
//! `"  -> %-28s %-7s %-6d %-10u %-10u"` destinations, trailing spaces kept).
//! Order: ipvsadm sorts services by protocol number, address, port and
//! destinations by address, port. Its address comparator is the sign of the
//! *wrapped 32-bit difference*, which is not a total order (it is
//! intransitive for addresses more than 2^31 apart, so the result then
//! depends on glibc's qsort); this renderer uses the plain numeric order.
//! Connection counters are printed as 0 (a static listing).
//!
//! `ipset list`: all sets kube-proxy creates, in its `ipsetInfo` order,
//! members sorted (as `ipset list -sorted`). `Revision:`, `Size in memory:`
//! and the `bucketsize`/`initval` header fields depend on the kernel (initval
//! is random), so they are left out rather than invented; `References:` is
//! the number of iptables rules that use the set.
//!
//! Never: decide anything about the rules; only print them.

use super::compile::{proto_number, Ruleset, VirtualServer, FLAG_SCHED2};
use super::glue::{Match, Table};
use super::ipset::SetId;
use crate::model::packet::Protocol;
use crate::model::Scheduler;
#[cfg(feature = "json")]
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::net::SocketAddr;

/// The rendered text, with the line of every virtual server, real server
/// and iptables rule (for highlighting a packet's path).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rendered {
    pub lines: Vec<String>,
    /// Per virtual server (in `Ruleset::virtual_servers` order).
    pub vs_line: Vec<usize>,
    /// Per virtual server, per real server in kernel list order.
    pub rs_line: Vec<Vec<usize>>,
    /// Per rule (in `Ruleset::rules` order).
    pub rule_line: Vec<usize>,
    /// Per rule, its text.
    pub rule_text: Vec<String>,
}

fn proto_label(p: Protocol) -> &'static str {
    p.as_upper()
}

/// `ipvsadm -Ln`'s service line.
pub fn service_line(vs: &VirtualServer) -> String {
    let vname = SocketAddr::new(vs.address, vs.port).to_string();
    let mut svc_name = format!("{}  {}", proto_label(vs.protocol), vname);
    if vs.address.is_ipv4() {
        svc_name.truncate(33);
    }
    let mut s = format!("{} {}", svc_name, vs.scheduler.as_str());
    if vs.flags & FLAG_SCHED2 != 0 {
        // ipvsadm names scheduler flags per scheduler (SCHED2 = mh-port/sh-port).
        s.push_str(match vs.scheduler {
            Scheduler::Mh => " (mh-port)",
            Scheduler::Sh => " (sh-port)",
            _ => " (flag-2)",
        });
    }
    if vs.persistent() {
        s.push_str(&format!(" persistent {}", vs.timeout));
    }
    s
}

/// `ipvsadm -Ln`'s destination line.
pub fn dest_line(addr: SocketAddr, weight: i32, active: u32, inactive: u32) -> String {
    let mut dname = addr.to_string();
    if addr.is_ipv4() {
        dname.truncate(28);
    }
    format!(
        "  -> {dname:<28} {:<7} {weight:<6} {active:<10} {inactive:<10}",
        "Masq"
    )
}

/// The whole text, with every line number.
pub fn render(rs: &Ruleset) -> Rendered {
    build(rs, true)
}

/// Only the line numbers (and the few iptables rule texts a walk shows):
/// what compiling needs, without writing 100,000s of lines nobody may read.
/// The same code as [`render`], so the numbers are the text's.
pub fn layout(rs: &Ruleset) -> Rendered {
    build(rs, false)
}

use crate::net::modes::lines::Lines;

fn build(rs: &Ruleset, write: bool) -> Rendered {
    let mut out = Rendered::default();
    let mut lines = Lines::new(write);
    let lines = &mut lines;
    lines.push(|| "# ipvsadm -Ln".to_string());
    lines.push(|| "IP Virtual Server version 1.2.1 (size=4096)".to_string());
    lines.push(|| "Prot LocalAddress:Port Scheduler Flags".to_string());
    lines.push(|| {
        "  -> RemoteAddress:Port           Forward Weight ActiveConn InActConn".to_string()
    });
    // Services are already in ipvsadm's order (protocol, address, port).
    debug_assert!(rs.virtual_servers.windows(2).all(|w| (
        proto_number(w[0].protocol),
        w[0].address,
        w[0].port
    ) <= (
        proto_number(w[1].protocol),
        w[1].address,
        w[1].port
    )));
    for vs in &rs.virtual_servers {
        out.vs_line.push(lines.len());
        lines.push(|| service_line(vs));
        let mut order: Vec<usize> = (0..vs.real_servers.len()).collect();
        crate::util::order::sort_by_key(&mut order, |&i| {
            (vs.real_servers[i].addr.ip(), vs.real_servers[i].addr.port())
        });
        let mut rs_lines = vec![0; vs.real_servers.len()];
        for i in order {
            let r = &vs.real_servers[i];
            rs_lines[i] = lines.len();
            lines.push(|| dest_line(r.addr, r.weight, 0, 0));
        }
        out.rs_line.push(rs_lines);
    }

    // ipset list.
    let mut refs: BTreeMap<SetId, usize> = BTreeMap::new();
    for rule in &rs.rules {
        for m in &rule.matches {
            if let Match::Set { set, .. } = m {
                *refs.entry(*set).or_default() += 1;
            }
        }
    }
    lines.push(String::new);
    lines.push(|| "# ipset list".to_string());
    for (n, id) in SetId::ALL.iter().enumerate() {
        let Some(set) = rs.sets.get(id) else { continue };
        if n > 0 {
            lines.push(String::new);
        }
        lines.push(|| format!("Name: {}", set.name));
        lines.push(|| format!("Type: {}", set.set_type.as_str()));
        lines.push(|| format!("Header: {}", set.header()));
        lines.push(|| format!("References: {}", refs.get(id).copied().unwrap_or(0)));
        lines.push(|| format!("Number of entries: {}", set.members.len()));
        lines.push(|| "Members:".to_string());
        for m in &set.members {
            lines.push(|| m.to_string());
        }
    }

    // iptables-save.
    lines.push(String::new);
    lines.push(|| "# iptables-save (kube-proxy's chains and jumps)".to_string());
    out.rule_line = vec![0; rs.rules.len()];
    out.rule_text = rs
        .rules
        .iter()
        .map(|r| r.render(rs.family, &rs.sets))
        .collect();
    for table in [Table::Nat, Table::Filter] {
        lines.push(|| format!("*{}", table.as_str()));
        for c in table.builtin_chains() {
            lines.push(|| format!(":{c} ACCEPT [0:0]"));
        }
        let mut user: Vec<&str> = table.kube_chains().to_vec();
        crate::util::order::sort(&mut user);
        for c in &user {
            lines.push(|| format!(":{c} - [0:0]"));
        }
        let chains: Vec<&str> = table
            .builtin_chains()
            .iter()
            .copied()
            .chain(user.iter().copied())
            .collect();
        for c in chains {
            for (i, rule) in rs.rules.iter().enumerate() {
                if rule.table == table && rule.chain == c {
                    out.rule_line[i] = lines.len();
                    lines.push(|| out.rule_text[i].clone());
                }
            }
        }
        lines.push(|| "COMMIT".to_string());
    }
    out.lines = lines.take_lines();
    out
}

/// `kpv rules --format json` for IPVS (the shared contract plus extra keys).
#[cfg(feature = "json")]
pub fn json(rs: &Ruleset) -> Value {
    let vss: Vec<Value> = rs
        .virtual_servers
        .iter()
        .map(|vs| {
            let mut reals: Vec<(usize, &super::compile::RealServer)> =
                vs.real_servers.iter().enumerate().collect();
            crate::util::order::sort_by_key(&mut reals, |(_, r)| (r.addr.ip(), r.addr.port()));
            let mut o = json!({
                "address": vs.address.to_string(),
                "port": vs.port,
                "protocol": vs.protocol.as_upper(),
                "scheduler": vs.scheduler.as_str(),
                "flags": vs.flags,
                "kind": vs.kind,
                "service": vs.service.to_string(),
                "key": vs.key(),
                "real_servers": reals.iter().map(|(pos, r)| json!({
                    "address": r.addr.ip().to_string(),
                    "port": r.addr.port(),
                    "weight": r.weight,
                    "forward": "Masq",
                    "list_position": pos,
                })).collect::<Vec<_>>(),
            });
            if vs.persistent() {
                o["persistence_timeout"] = json!(vs.timeout);
            }
            if vs.local_fallback {
                o["local_fallback"] = json!(true);
            }
            o
        })
        .collect();
    let sets: Vec<Value> = SetId::ALL
        .iter()
        .filter_map(|id| rs.sets.get(id))
        .map(|s| {
            json!({
                "name": s.name,
                "type": s.set_type.as_str(),
                "header": s.header(),
                "comment": s.id.comment(),
                "members": s.members.iter().map(|m| m.to_string()).collect::<Vec<_>>(),
            })
        })
        .collect();
    let rules: Vec<Value> = rs
        .rules
        .iter()
        .map(|r| {
            json!({
                "table": r.table.as_str(),
                "chain": r.chain,
                "rule": r.render(rs.family, &rs.sets),
            })
        })
        .collect();
    json!({
        "virtual_servers": vss,
        "ipsets": sets,
        "interface": {
            "name": rs.interface.name,
            "addresses": rs.interface.addresses.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        },
        "iptables": rules,
        "masquerade_mark": format!("{:#x}", rs.masquerade_mark),
    })
}
