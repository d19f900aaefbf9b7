//! The app's words for [`kpv_core::net::why`]: the lines under a "no
//! endpoints" verdict naming which Pods are not Ready and why, the selector
//! that matches nothing, and when kube-proxy will have an endpoint; and the
//! one line that says how the chosen IPVS scheduler picks (and so why a
//! burst spreads as it does). Full app only (its words are in
//! [`crate::i18n::full`]).

use crate::i18n::{tr, Lang};
use crate::numbers::seconds;
use kpv_core::model::Scheduler;
use kpv_core::net::controller::AppState;
use kpv_core::net::why::{NoEndpoints, PodWhy, Unready};

fn pod_line(lg: Lang, p: &PodWhy) -> String {
    let why = match &p.why {
        Unready::NotScheduled => tr(lg, "why.not-scheduled").to_string(),
        Unready::Finished => tr(lg, "why.finished").to_string(),
        Unready::Terminating => tr(lg, "why.terminating").to_string(),
        Unready::InitialDelay { first_probe_ms } => {
            tr(lg, "why.initial-delay").replace("{t}", &seconds(*first_probe_ms))
        }
        Unready::ProbeFailing {
            app: AppState::Down,
        } => tr(lg, "why.app-down").to_string(),
        Unready::ProbeFailing { .. } => tr(lg, "why.probe-failing").to_string(),
        Unready::Recovering => tr(lg, "why.recovering").to_string(),
        Unready::ProbePortMissing { port } => tr(lg, "why.probe-port").replace("{port}", port),
        Unready::ReportedNotReady => tr(lg, "why.reported").to_string(),
        Unready::PortMissing { port } => tr(lg, "why.port-missing").replace("{port}", port),
        Unready::NotYetSynced => tr(lg, "why.not-synced").to_string(),
    };
    let when = p
        .endpoint_from_ms
        .map(|t| tr(lg, "why.from").replace("{t}", &seconds(t)))
        .unwrap_or_default();
    format!("{}: {why}{when}", p.pod.name)
}

/// The cause's lines: a heading, then one line per Pod.
pub fn lines(lg: Lang, cause: &NoEndpoints) -> Vec<String> {
    match cause {
        NoEndpoints::NoSelector { service } => {
            vec![tr(lg, "why.no-selector").replace("{svc}", &service.name)]
        }
        NoEndpoints::SelectorMatchesNoPod { service, selector } => vec![tr(lg, "why.no-pod")
            .replace("{svc}", &service.name)
            .replace("{selector}", selector)
            .replace("{ns}", &service.namespace)],
        NoEndpoints::Pods { service, pods } => {
            let mut out = vec![tr(lg, "why.pods")
                .replace("{svc}", &service.name)
                .replace("{n}", &pods.len().to_string())];
            out.extend(pods.iter().map(|p| pod_line(lg, p)));
            out
        }
    }
}

/// How the IPVS scheduler `s` picks a real server, in one line.
pub fn scheduler_line(lg: Lang, s: Scheduler) -> &'static str {
    tr(
        lg,
        match s {
            Scheduler::Rr => "sched.line.rr",
            Scheduler::Wrr => "sched.line.wrr",
            Scheduler::Lc => "sched.line.lc",
            Scheduler::Wlc => "sched.line.wlc",
            Scheduler::Sh => "sched.line.sh",
            Scheduler::Dh => "sched.line.dh",
            Scheduler::Sed => "sched.line.sed",
            Scheduler::Nq => "sched.line.nq",
            Scheduler::Mh => "sched.line.mh",
        },
    )
}

/// The scheduler's name in the list: its ipvsadm word and what it means.
pub fn scheduler_name(lg: Lang, s: Scheduler) -> &'static str {
    tr(
        lg,
        match s {
            Scheduler::Rr => "sched.rr",
            Scheduler::Wrr => "sched.wrr",
            Scheduler::Lc => "sched.lc",
            Scheduler::Wlc => "sched.wlc",
            Scheduler::Sh => "sched.sh",
            Scheduler::Dh => "sched.dh",
            Scheduler::Sed => "sched.sed",
            Scheduler::Nq => "sched.nq",
            Scheduler::Mh => "sched.mh",
        },
    )
}

/// Why the diagram's load balancer is "assumed" (its tooltip).
pub fn lb_assumed(lg: Lang) -> String {
    tr(lg, "diagram.lb_assumed_why").replace("{range}", &kpv_core::model::ASSUMED_POOLS.join(", "))
}
