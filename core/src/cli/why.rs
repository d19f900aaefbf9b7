//! The CLI's words for [`crate::net::why`]: the lines under a "no
//! endpoints" verdict that say which objects are the cause and when that
//! changes.

use crate::net::controller::AppState;
use crate::net::why::{NoEndpoints, PodWhy, Unready};
use std::fmt::Write as _;

/// `t = 12.5 s` for a simulated instant.
fn at(ms: u64) -> String {
    let s = ms / 1000;
    match ms % 1000 {
        0 => format!("t = {s} s"),
        r => format!("t = {s}.{} s", format!("{r:03}").trim_end_matches('0')),
    }
}

fn pod_line(p: &PodWhy) -> String {
    let why = match &p.why {
        Unready::NotScheduled => "not scheduled to any node".to_string(),
        Unready::Finished => "finished: it holds no address".to_string(),
        Unready::Terminating => "terminating: it leaves the endpoints".to_string(),
        Unready::InitialDelay { first_probe_ms } => format!(
            "not Ready yet: its first readiness probe runs at {} (initialDelaySeconds)",
            at(*first_probe_ms)
        ),
        Unready::ProbeFailing { app } => match app {
            AppState::Down => "not Ready: its app is down, every probe fails".to_string(),
            _ => "not Ready: its readiness probe fails".to_string(),
        },
        Unready::Recovering => {
            "not Ready yet: its app answers again, readiness needs successThreshold passing probes"
                .to_string()
        }
        Unready::ProbePortMissing { port } => format!(
            "never Ready: its readiness probe names port {port}, which its container does not declare"
        ),
        Unready::ReportedNotReady => "not Ready: its status has condition Ready False".to_string(),
        Unready::PortMissing { port } => format!(
            "Ready, but no container declares the Service's targetPort {port}"
        ),
        Unready::NotYetSynced => {
            "Ready: the EndpointSlice controller and kube-proxy have not caught up yet".to_string()
        }
    };
    let when = p
        .endpoint_from_ms
        .map(|t| format!("; kube-proxy's rules have it from {}", at(t)))
        .unwrap_or_default();
    format!("  {}: {why}{when}", p.pod)
}

/// The `why:` lines for `cause`.
pub fn render(cause: &NoEndpoints) -> String {
    let mut s = String::new();
    match cause {
        NoEndpoints::NoSelector { service } => {
            let _ = writeln!(
                s,
                "why: Service {service} has no selector and no EndpointSlice names it (write its EndpointSlices, or give it a selector)"
            );
        }
        NoEndpoints::SelectorMatchesNoPod { service, selector } => {
            let _ = writeln!(
                s,
                "why: the selector {selector} of Service {service} matches no Pod in namespace {}",
                service.namespace
            );
        }
        NoEndpoints::Pods { service, pods } => {
            let _ = writeln!(
                s,
                "why: Service {service} selects {} Pod{}, none of them a ready endpoint:",
                pods.len(),
                if pods.len() == 1 { "" } else { "s" }
            );
            for p in pods {
                let _ = writeln!(s, "{}", pod_line(p));
            }
        }
    }
    s
}
