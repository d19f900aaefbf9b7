//! The Cilium mode's text: the BPF maps in the line format of Cilium's
//! `lb/maps-dump` (its script tests' format, sorted byte-wise as there),
//! and the agent's `db/show frontends | backends | services` tables.
//!
//! Only this module writes text; the maps are typed values.

use super::frontends::{BackendState, Flags, Frontend, FrontendType, Scope};
use super::maps::{BackendEntry, Maps, ServiceEntry};
use std::fmt::Write as _;
use std::net::SocketAddr;

/// The maps dump: one line per entry, sorted as plain text.
pub fn maps_dump(maps: &Maps) -> Vec<String> {
    let mut out = Vec::new();
    out.extend(maps.backends.iter().map(backend_line));
    for w in &maps.wildcards {
        out.push(format!(
            "SVC: ID=0 ADDR={}/ANY SLOT=0 LBALG=undef AFFTimeout=0 COUNT=0 QCOUNT=0 FLAGS={}+non-routable",
            SocketAddr::new(w.ip, 0),
            type_word(w.kind)
        ));
    }
    for s in &maps.services {
        service_lines(s, &mut out);
    }
    out.sort();
    out
}

/// A backend's entry: `BE: ID=1 ADDR=10.244.1.1:80/TCP STATE=active`.
pub fn backend_line(b: &BackendEntry) -> String {
    format!(
        "BE: ID={} ADDR={}/{} STATE={}",
        b.id.0,
        b.addr,
        b.protocol.as_upper(),
        b.state.word()
    )
}

fn service_lines(s: &ServiceEntry, out: &mut Vec<String>) {
    let fe = &s.frontend;
    let id = s.id.0;
    let addr = frontend_addr(fe);
    out.push(format!("REV: ID={id} ADDR={}", fe.addr));
    out.push(format!(
        "SVC: ID={id} ADDR={addr} SLOT=0 LBALG={} AFFTimeout={} COUNT={} QCOUNT={} FLAGS={}",
        fe.algorithm.map_or("undef", |a| a.as_str()),
        fe.affinity_seconds,
        s.count,
        s.qcount,
        flag_words(fe.kind, &fe.flags, None)
    ));
    for (k, (bid, state)) in s.slots.iter().enumerate() {
        out.push(format!(
            "SVC: ID={id} ADDR={addr} SLOT={} BEID={} COUNT=0 QCOUNT=0 FLAGS={}",
            k + 1,
            bid.0,
            flag_words(fe.kind, &fe.flags, Some(*state))
        ));
        if fe.flags.session_affinity && *state == BackendState::Active {
            out.push(format!("AFF: ID={id} BEID={}", bid.0));
        }
    }
    for r in &fe.source_ranges {
        out.push(format!("SRCRANGE: ID={id} CIDR={}", r.trunc()));
    }
    if !s.maglev.is_empty() {
        let inner: Vec<String> = super::maglev::histogram(&s.maglev)
            .iter()
            .map(|(bid, n)| format!("{bid}({n})"))
            .collect();
        out.push(format!("MAGLEV: ID={id} INNER=[{}]", inner.join(", ")));
    }
}

/// `10.96.0.10:80/TCP`, with `/i` for the internal scope.
pub fn frontend_addr(fe: &Frontend) -> String {
    let scope = match fe.scope {
        Scope::External => "",
        Scope::Internal => "/i",
    };
    format!("{}/{}{scope}", fe.addr, fe.protocol.as_upper())
}

pub fn type_word(kind: FrontendType) -> &'static str {
    match kind {
        FrontendType::ClusterIp => "ClusterIP",
        FrontendType::NodePort => "NodePort",
        FrontendType::LoadBalancer => "LoadBalancer",
        FrontendType::ExternalIps => "ExternalIPs",
    }
}

/// The `FLAGS=` words: of the master entry (`slot` None) or of a backend
/// slot (no source-range words; `quarantined` for a quarantined backend).
pub fn flag_words(kind: FrontendType, f: &Flags, slot: Option<BackendState>) -> String {
    let mut words = vec![type_word(kind)];
    let mut add = |on: bool, w: &'static str| {
        if on {
            words.push(w);
        }
    };
    add(f.ext_local, "Local");
    add(f.int_local, "InternalLocal");
    add(f.two_scopes, "two-scopes");
    add(f.session_affinity, "sessionAffinity");
    add(!f.routable, "non-routable");
    add(slot.is_none() && f.check_source_range, "check source-range");
    add(slot.is_none() && f.deny, "deny");
    add(slot == Some(BackendState::Quarantined), "quarantined");
    add(f.dsr, "dsr");
    words.join("+")
}

/// Columns padded to their widest cell, as the agent's tables print.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.len());
        }
    }
    let mut out = String::new();
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut l = String::new();
        for (i, (c, w)) in cells.zip(&widths).enumerate() {
            if i + 1 < widths.len() {
                let _ = write!(l, "{c:<w$}   ");
            } else {
                l.push_str(c);
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(&mut header.iter().copied());
    for r in rows {
        line(&mut r.iter().map(String::as_str));
    }
    out
}

fn backend_list(fe: &Frontend) -> String {
    fe.slots()
        .map(|b| format!("{}/{}", b.addr, b.protocol.as_upper()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `db/show frontends`: the frontends the agent derived (NodePort by its
/// surrogate only; the node-address copies live only in the maps).
pub fn frontends_table(maps: &Maps) -> String {
    let rows: Vec<Vec<String>> = maps
        .services
        .iter()
        .filter(|s| !s.frontend.expanded)
        .map(|s| {
            let fe = &s.frontend;
            vec![
                frontend_addr(fe),
                type_word(fe.kind).to_string(),
                fe.service.service.to_string(),
                fe.service.port.clone(),
                backend_list(fe),
                "Done".to_string(),
            ]
        })
        .collect();
    table(
        &[
            "Address",
            "Type",
            "ServiceName",
            "PortName",
            "Backends",
            "Status",
        ],
        &rows,
    )
}

/// `db/show backends`: each backend with the Service ports it serves.
pub fn backends_table(maps: &Maps) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for b in &maps.backends {
        let mut instances: Vec<String> = Vec::new();
        let mut node = String::new();
        for s in &maps.services {
            let fe = &s.frontend;
            if let Some(be) = fe
                .backends
                .iter()
                .find(|x| x.addr == b.addr && x.protocol == b.protocol)
            {
                let name = if fe.service.port.is_empty() {
                    fe.service.service.to_string()
                } else {
                    format!("{} ({})", fe.service.service, fe.service.port)
                };
                if !instances.contains(&name) {
                    instances.push(name);
                }
                node = be.node.clone().unwrap_or_default();
            }
        }
        rows.push(vec![
            format!("{}/{}", b.addr, b.protocol.as_upper()),
            instances.join(", "),
            node,
        ]);
    }
    crate::util::order::sort_by(&mut rows, |a, b| a.cmp(b));
    table(&["Address", "Instances", "NodeName"], &rows)
}

/// `db/show services`: each Service with its ports, traffic policy and
/// flags.
pub fn services_table(maps: &Maps) -> String {
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for s in &maps.services {
        let fe = &s.frontend;
        let name = fe.service.service.to_string();
        let port = format!(
            "{}={}",
            if fe.service.port.is_empty() {
                ""
            } else {
                &fe.service.port
            },
            service_port(s)
        );
        match seen.iter().position(|n| *n == name) {
            Some(i) => {
                if let Some(row) = rows.get_mut(i) {
                    if !row[1].split(", ").any(|p| p == port) {
                        row[1] = format!("{}, {port}", row[1]);
                    }
                }
            }
            None => {
                seen.push(name.clone());
                let policy = match (fe.flags.ext_local, fe.flags.int_local) {
                    (false, false) => "Cluster",
                    (true, true) => "Local",
                    (true, false) => "Local (external), Cluster (internal)",
                    (false, true) => "Cluster (external), Local (internal)",
                };
                let flags = if fe.flags.session_affinity {
                    format!("SessionAffinity={}s", fe.affinity_seconds)
                } else {
                    String::new()
                };
                rows.push(vec![name, port, policy.to_string(), flags]);
            }
        }
    }
    let rows: Vec<Vec<String>> = rows
        .into_iter()
        .map(|r| {
            let mut r = r;
            r.insert(1, "k8s".into());
            r
        })
        .collect();
    table(
        &["Name", "Source", "PortNames", "TrafficPolicy", "Flags"],
        &rows,
    )
}

/// The Service port a frontend stands for (a NodePort frontend listens on
/// the node port; the Service's port is the ClusterIP's).
fn service_port(s: &ServiceEntry) -> u16 {
    s.frontend.service_port
}
