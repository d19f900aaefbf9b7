//! Which hop of a trace settles a lesson's question: the learner who checks
//! an answer is shown that hop (the endpoint's DNAT for "which Pod", the
//! MASQUERADE or the delivery for "which source address", the last word of
//! the connection for "answered or not").
//!
//! Reads a trace only; never decides the answer itself (that is
//! [`crate::session::lesson::check_prediction`]) and never words anything.

use crate::http::send::ProxyStage;
use crate::net::trace::{HopKind, Trace};
use crate::session::lesson::PredictKind;

/// The index in `trace.hops` of the hop that settles a `kind` question, if
/// the trace has one.
pub fn settling_hop(trace: &Trace, kind: PredictKind) -> Option<usize> {
    let hops = &trace.hops;
    let end = || {
        hops.iter().rposition(|h| {
            matches!(
                h.what,
                HopKind::Deliver
                    | HopKind::NoAnswer
                    | HopKind::Drop { .. }
                    | HopKind::Reject { .. }
            )
        })
    };
    let proxy = |stage: ProxyStage| {
        hops.iter()
            .position(|h| matches!(&h.what, HopKind::Http(p) if p.stage == stage))
    };
    match kind {
        // Where the destination became an endpoint (a DNAT, an IPVS real
        // server, the userspace proxy's dial, or an established flow's).
        PredictKind::WhichPod => hops
            .iter()
            .position(|h| {
                matches!(h.what, HopKind::Established { .. })
                    || (matches!(h.what, HopKind::Rule) && h.after.dst != h.before.dst)
            })
            .or_else(end),
        PredictKind::WhereTranslated => trace.translated_at().or_else(end),
        PredictKind::SourceIp => hops
            .iter()
            .position(|h| matches!(h.what, HopKind::Masquerade { .. }))
            .or_else(|| hops.iter().position(|h| matches!(h.what, HopKind::Deliver)))
            .or_else(end),
        PredictKind::Verdict => end().or_else(|| hops.len().checked_sub(1)),
        // An HTTP request's journey: the proxy's rule decides the backend,
        // its backend step the status (a connection, or its own answer);
        // TLS ends on the listener step; the backend Pod's delivery shows
        // the source it saw.
        PredictKind::HttpBackend => proxy(ProxyStage::Rule).or_else(end),
        PredictKind::HttpStatus => proxy(ProxyStage::Backend).or_else(end),
        PredictKind::TlsEndsAt => proxy(ProxyStage::Listener).or_else(end),
        PredictKind::HttpSource => hops
            .iter()
            .rposition(|h| matches!(h.what, HopKind::Deliver))
            .or_else(|| proxy(ProxyStage::Backend))
            .or_else(end),
    }
}
