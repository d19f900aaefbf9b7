//! A trace in words and as data: the text of `kpv trace --format text`
//! (one English line per hop and for the outcome) and the JSON contract of
//! `--format json`.
//!
//! Renderers only: this module reads a finished [`Trace`] and never decides
//! anything about the packet's path (that is [`super`]'s stages). The web app
//! words hops in its own languages; these English lines are the CLI's.

use super::Place;
use super::{Hop, HopKind, Outcome, ReplyVia, Trace};
use crate::model::NamespacedName;
use crate::net::modes::DropReason;
use std::fmt::Write as _;
use std::net::SocketAddr;

/// The `kpv trace --format json` contract.
#[cfg(feature = "json")]
pub fn to_json(t: &Trace) -> serde_json::Value {
    serde_json::json!({
        "verdict": t.verdict.word(),
        "endpoints": t.endpoints.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
        "endpoint": t.verdict.endpoint().map(|e| e.to_string()),
        "masquerade": t.masquerade,
        "node": t.node,
        "mode": t.mode.as_str(),
        "rules_compared": t.rules_compared,
        "outcome": t.outcome,
        "hops": t.hops.iter().map(hop_json).collect::<Vec<_>>(),
    })
}

/// One hop of the `kpv trace` JSON contract (`kpv http` prints its network
/// hops the same way).
#[cfg(feature = "json")]
pub fn hop_json(h: &Hop) -> serde_json::Value {
    serde_json::json!({
        "place": h.place,
        "what": h.what,
        "before": { "src": h.before.src.to_string(), "dst": h.before.dst.to_string() },
        "after": { "src": h.after.src.to_string(), "dst": h.after.dst.to_string() },
        "table_chain": h.step.as_ref().map(|s| s.table_chain.clone()),
        "rule": h.step.as_ref().map(|s| s.rule.clone()),
        "line": h.step.as_ref().and_then(|s| s.line),
    })
}

/// A one-line description of a hop (English; the web app has its own translations).
pub fn describe_hop(h: &Hop) -> String {
    match &h.what {
        HopKind::Dns { name, answer } => format!("DNS: {name} → {answer}"),
        HopKind::Send => format!("send {}", h.before),
        HopKind::LoadBalancer {
            node,
            healthy_nodes,
            total_nodes,
        } => format!(
            "load balancer → {node} ({} → {}; {healthy_nodes} of {total_nodes} nodes healthy)",
            h.before.dst, h.after.dst
        ),
        HopKind::Arrive { node } => format!("arrives at {node} eth0"),
        HopKind::Established { endpoint } => {
            format!("conntrack: established flow → {endpoint} (rules not consulted)")
        }
        HopKind::Rule => match &h.step {
            Some(s) => format!("{}: {}", s.table_chain, s.rule),
            None => "rule".into(),
        },
        HopKind::Masquerade { to } => format!("masquerade: source {} → {to}", h.before.src),
        HopKind::PodNetwork { from, to } => format!("pod network: {from} → {to}"),
        HopKind::Deliver => format!(
            "delivered: {} (the Pod sees source {})",
            h.after.dst, h.after.src
        ),
        HopKind::NoAnswer => format!("{} does not answer: connection times out", h.after.dst),
        HopKind::Drop { reason } if h.place == Place::LoadBalancer => format!(
            "load balancer: DROP ({}; on the NodePort path the cloud provider enforces them, not kube-proxy)",
            reason_text(*reason)
        ),
        HopKind::Drop { reason } => format!("DROP ({})", reason_text(*reason)),
        HopKind::Reject { reason } => format!("REJECT ({})", reason_text(*reason)),
        HopKind::Reply { via } => {
            let how = match via {
                ReplyVia::Conntrack => "conntrack reverses the NAT".to_string(),
                ReplyVia::Dsr => format!(
                    "direct server return: {} restores the Service address and sends it straight to the client",
                    h.node.as_deref().unwrap_or("the backend's node")
                ),
                ReplyVia::Socket => {
                    "the client's socket restores the Service address at recvmsg()".to_string()
                }
            };
            format!("reply {} → {} ({how})", h.after.src, h.after.dst)
        }
        HopKind::Http(p) => format!("proxy {}: {}", p.proxy, p.stage.key()),
    }
}

pub fn reason_text(r: DropReason) -> &'static str {
    match r {
        DropReason::NoEndpoints => "the Service has no endpoints",
        DropReason::NoLocalEndpoints => "externalTrafficPolicy Local and no endpoint on this node",
        DropReason::SourceRange => "source not in loadBalancerSourceRanges",
        DropReason::UnallocatedClusterIp => "no Service has this cluster IP",
        DropReason::UnknownPort => "no Service port there",
        DropReason::AllBackendsFailed => "no backend answered",
        DropReason::Invalid => "invalid packet",
    }
}

/// What happened in the end, in one line (English, as [`describe_hop`]):
/// the `outcome` of `kpv trace --format json` for the text rendering.
pub fn describe_outcome(o: &Outcome) -> String {
    let who = |pod: &Option<NamespacedName>, ep: &SocketAddr| match pod {
        Some(p) => format!("Pod {p} ({ep})"),
        None => ep.to_string(),
    };
    match o {
        Outcome::Delivered {
            pod,
            endpoint,
            source,
        } => format!(
            "delivered to {}, which sees the source {source}",
            who(pod, endpoint)
        ),
        Outcome::TimedOut { pod, endpoint } => {
            format!("timed out: {} does not answer", who(pod, endpoint))
        }
        Outcome::Dropped { reason } => format!("dropped: {}", reason_text(*reason)),
        Outcome::Rejected { reason } => format!("rejected: {}", reason_text(*reason)),
        Outcome::AcceptedByNode { node } => format!("accepted by node {node} itself"),
        Outcome::Unrouted => {
            "unrouted: no Service matched and the address is nobody's in the cluster".into()
        }
        Outcome::NoSuchName { name } => format!("no such name: {name}"),
        Outcome::ExternalName { name, target } => format!(
            "DNS answers {name} with a CNAME to {target}: an ExternalName Service, kube-proxy installs nothing for it"
        ),
        Outcome::Answered {
            pod,
            status: Some(status),
        } => format!("answered {status} by the proxy Pod {pod} itself; no backend was asked"),
        Outcome::Answered { pod, status: None } => {
            format!("no HTTP answer: the proxy Pod {pod} took the connection but answered nothing")
        }
    }
}

/// `kpv trace --format text`.
pub fn render_text(t: &Trace) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "mode: {}   node: {}",
        t.mode.as_str(),
        t.node.as_deref().unwrap_or("-")
    );
    for (i, h) in t.hops.iter().enumerate() {
        let _ = writeln!(s, "{:>3}. {}", i + 1, describe_hop(h));
    }
    let _ = writeln!(
        s,
        "verdict: {}{}",
        t.verdict.word(),
        t.verdict
            .endpoint()
            .map(|e| format!(" → {e}"))
            .unwrap_or_default()
    );
    let _ = writeln!(s, "outcome: {}", describe_outcome(&t.outcome));
    let eps: Vec<String> = t.endpoints.iter().map(|e| e.to_string()).collect();
    let _ = writeln!(
        s,
        "could reach: {}",
        if eps.is_empty() {
            "-".into()
        } else {
            eps.join(", ")
        }
    );
    let _ = writeln!(
        s,
        "masquerade: {}   rules compared: {}",
        t.masquerade, t.rules_compared
    );
    s
}
