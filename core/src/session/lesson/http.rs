//! HTTP requests in lessons: a step's `set.request` (method, URL, headers)
//! is sent through the scenario's Ingress controller or Gateway with
//! [`crate::http::prepare`] and [`crate::http::journey::journey`], and the
//! HTTP questions (`http-backend`, `http-status`, `tls-ends-at`,
//! `http-source`) are decided from those journeys.
//!
//! Like the rest of [`super`], it never stores a right answer: a choice
//! holds exactly when the journeys bear it out. It never reads the
//! lesson's words, and it never changes the scenario except through
//! `prepare` (which adds the controller a real cluster would run).

use super::{origin_of, Answer, Lesson, OriginSpec, PredictKind};
use crate::http::journey::{self, Journey, JourneyHop, ProxyStep};
use crate::http::proxies::ProxyWorkload;
use crate::http::{self, HttpRequest, Prepared, Scheme};
use crate::model::{Cluster, Mode, NamespacedName, Scheduler};
use crate::net::trace::Origin;
use crate::net::trace::Place;
use crate::util::choose::Chooser;
use crate::util::diag::Diagnostic;
use serde::Serialize;
use std::net::IpAddr;

/// An HTTP request a step sends (`set.request`). `headers` keep the order
/// written; a `Host` header overrides the URL's host as curl's `-H` does.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RequestSpec {
    pub method: String,
    pub url: String,
    pub headers: Vec<(String, String)>,
}

impl RequestSpec {
    /// The request as the proxy receives it (the error says what in the
    /// URL, method or headers cannot be read).
    pub fn to_request(&self) -> Result<HttpRequest, String> {
        HttpRequest::from_url(&self.url, &self.method, &self.headers, None)
    }
}

/// Where TLS ends on the way to the backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TlsEnd {
    /// The cloud load balancer (kpv's load balancers pass TCP through, as
    /// a LoadBalancer Service's network load balancer does).
    LoadBalancer,
    /// The Ingress controller's or Gateway's proxy Pod.
    ProxyPod,
    /// The backend Pod itself (TLS passed through untouched).
    BackendPod,
    /// Plain HTTP: no TLS anywhere.
    NoTls,
}

impl TlsEnd {
    pub(super) const ALL: [(&'static str, TlsEnd); 4] = [
        ("load-balancer", TlsEnd::LoadBalancer),
        ("proxy-pod", TlsEnd::ProxyPod),
        ("backend-pod", TlsEnd::BackendPod),
        ("no-tls", TlsEnd::NoTls),
    ];

    pub(super) fn key(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, t)| *t == self)
            .map_or("", |(k, _)| k)
    }
}

/// Whose address an address is, as the backend sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Seen {
    /// The client's own address.
    Client,
    /// A node's address (after kube-proxy's masquerade).
    Node,
    /// The proxy Pod's address.
    ProxyPod,
}

impl Seen {
    pub(super) const ALL: [(&'static str, Seen); 3] = [
        ("client", Seen::Client),
        ("node", Seen::Node),
        ("proxy-pod", Seen::ProxyPod),
    ];

    pub(super) fn key(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, s)| *s == self)
            .map_or("", |(k, _)| k)
    }
}

/// A step's HTTP requests played: the request and one journey per
/// request sent (each with its own seed, so weighted picks vary).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct HttpPlayed {
    pub request: HttpRequest,
    pub journeys: Vec<Journey>,
}

/// The entry point a request goes to (see [`http::proxy_for_host`]).
pub fn pick_proxy<'p>(prepared: &'p Prepared, req: &HttpRequest) -> Option<&'p ProxyWorkload> {
    http::proxy_for_host(&prepared.table, &prepared.proxies, &req.authority)
}

/// Send `count` requests (`spec`) through the scenario's controller.
/// `None` when the request cannot be read or no entry point takes it.
pub(crate) fn play(
    cluster: &Cluster,
    spec: &RequestSpec,
    origin: Option<&OriginSpec>,
    (mode, scheduler, compilers): (Mode, Option<Scheduler>, crate::net::modes::Compilers),
    count: u32,
    seeds: &mut Chooser,
) -> Option<HttpPlayed> {
    let request = spec.to_request().ok()?;
    let prepared = http::prepare(cluster);
    let proxy = pick_proxy(&prepared, &request)?;
    let origin = origin
        .and_then(|o| origin_of(&prepared.cluster, o))
        .unwrap_or(Origin::External {
            client: crate::session::replay::client_ip(),
        });
    let slices = crate::net::controller::steady_slices(&prepared.cluster);
    let sim = crate::net::trace::Sim::new(&prepared.cluster, &slices, mode, scheduler, compilers);
    let journeys = (0..count)
        .map(|_| {
            journey::journey(
                &sim,
                &slices,
                &prepared.table,
                proxy,
                &request,
                &journey::Start {
                    origin: origin.clone(),
                    seed: seeds.next_u64(),
                },
            )
        })
        .collect();
    Some(HttpPlayed { request, journeys })
}

fn service_named(want: &str, got: &NamespacedName) -> bool {
    match want.split_once('/') {
        Some((ns, name)) => got.namespace == ns && got.name == name,
        None => got.name == want,
    }
}

/// The Service that served a journey (status 200 and a Pod answered).
fn served_by(j: &Journey) -> Option<&NamespacedName> {
    let d = j.decision.as_ref()?;
    if d.status != Some(200) || j.pod.is_none() {
        return None;
    }
    d.backend.as_ref().map(|b| &b.service)
}

/// Where TLS ended on one journey.
fn tls_end(j: &Journey, req: &HttpRequest) -> TlsEnd {
    let ended_at = j.hops.iter().find_map(|h| match h {
        JourneyHop::Proxy {
            place,
            step: ProxyStep::TlsTerminate { .. },
        } => Some(place),
        _ => None,
    });
    match ended_at {
        Some(Place::LoadBalancer) => TlsEnd::LoadBalancer,
        Some(_) => TlsEnd::ProxyPod,
        None if req.scheme == Scheme::Https && j.pod.is_some() => TlsEnd::BackendPod,
        None => TlsEnd::NoTls,
    }
}

/// Whose address `ip` is on journey `j`.
fn whose(cluster: &Cluster, j: &Journey, ip: IpAddr) -> Option<Seen> {
    let client = j.to_proxy.hops.first().map(|h| h.before.src.ip());
    let proxy = j
        .to_backend
        .as_ref()
        .and_then(|t| t.hops.first())
        .map(|h| h.before.src.ip());
    let node = cluster.nodes.iter().any(|n| {
        n.addresses.iter().any(|(_, a)| *a == ip)
            || (n.pod_cidrs.iter().any(|c| c.contains(&ip))
                && !cluster.pods.iter().any(|p| p.ips.contains(&ip)))
    });
    if client == Some(ip) {
        Some(Seen::Client)
    } else if proxy == Some(ip) {
        Some(Seen::ProxyPod)
    } else if node {
        Some(Seen::Node)
    } else {
        None
    }
}

/// The address the proxy added last to `X-Forwarded-For`.
fn forwarded_for(j: &Journey) -> Option<IpAddr> {
    let d = j.decision.as_ref()?;
    let v = d.request.headers.get("x-forwarded-for")?;
    v.rsplit(',').next()?.trim().parse().ok()
}

/// Does an HTTP answer hold for every journey of the step?
pub(crate) fn holds(cluster: &Cluster, answer: &Answer, played: &HttpPlayed) -> bool {
    let js = &played.journeys;
    if js.is_empty() {
        return false;
    }
    match answer {
        Answer::Service(name) => js
            .iter()
            .all(|j| served_by(j).is_some_and(|s| service_named(name, s))),
        Answer::Split => {
            let mut services: Vec<&NamespacedName> = js.iter().filter_map(served_by).collect();
            let all_served = services.len() == js.len();
            crate::util::order::sort(&mut services);
            services.dedup();
            all_served && services.len() >= 2
        }
        Answer::NoBackend => js.iter().all(|j| j.decision.is_some() && j.pod.is_none()),
        Answer::Status(s) => js
            .iter()
            .all(|j| j.decision.as_ref().and_then(|d| d.status) == Some(*s)),
        Answer::TlsEndsAt(t) => js.iter().all(|j| tls_end(j, &played.request) == *t),
        Answer::Peer(who) => js.iter().all(|j| {
            j.backend_peer
                .is_some_and(|p| whose(cluster, j, p.ip()) == Some(*who))
        }),
        Answer::ForwardedFor(who) => js.iter().all(|j| {
            j.pod.is_some()
                && forwarded_for(j).is_some_and(|ip| whose(cluster, j, ip) == Some(*who))
        }),
        _ => false,
    }
}

/// Check a lesson's requests and HTTP choices against its scenario: each
/// request reaches an entry point, HTTP questions are asked only of steps
/// that send a request (and only HTTP questions of those), no app change
/// precedes a request (requests see the scenario at rest), and a choice
/// naming a Service names one that exists.
pub(crate) fn check(lesson: &Lesson, cluster: &Cluster, out: &mut Vec<Diagnostic>) {
    if !lesson.steps.iter().any(|s| s.set.request.is_some()) {
        for (i, s) in lesson.steps.iter().enumerate() {
            check_kinds(i, s, false, out);
        }
        return;
    }
    let prepared = http::prepare(cluster);
    let mut changed = false;
    for (i, s) in lesson.steps.iter().enumerate() {
        changed |= s.set.app_changes().iter().any(|(_, p, _)| p.is_some());
        check_kinds(i, s, s.set.request.is_some(), out);
        let Some(spec) = &s.set.request else {
            continue;
        };
        let mut err = |field: &str, msg: String| {
            let mut d = Diagnostic::error(msg).at(s.span);
            d.field = Some(format!("steps[{i}].{field}"));
            out.push(d);
        };
        if changed {
            err(
                "set.request",
                "a request is sent to the scenario at rest: no step before it may fail, stop or heal a Pod".into(),
            );
        }
        let req = match spec.to_request() {
            Ok(r) => r,
            Err(e) => {
                err("set.request.url", e);
                continue;
            }
        };
        if pick_proxy(&prepared, &req).is_none() {
            let names: Vec<String> = prepared
                .proxies
                .iter()
                .map(|p| p.entry.to_string())
                .collect();
            err(
                "set.request.url",
                format!(
                    "scenario `{}` has no single Ingress controller or Gateway for `{}` (entry points: {})",
                    lesson.scenario,
                    req.authority,
                    if names.is_empty() { "none".to_string() } else { names.join(", ") }
                ),
            );
        }
        let Some(p) = &s.predict else { continue };
        for (c, ch) in p.choices.iter().enumerate() {
            if let Answer::Service(name) = &ch.answer {
                if !prepared
                    .cluster
                    .services
                    .iter()
                    .any(|svc| service_named(name, &svc.id))
                {
                    let mut d = Diagnostic::error(format!(
                        "scenario `{}` has no Service `{name}`",
                        lesson.scenario
                    ))
                    .at(ch.span);
                    d.field = Some(format!("steps[{i}].predict.choices[{c}].answer"));
                    out.push(d);
                }
            }
        }
    }
}

/// Is this a question about an HTTP request?
pub(super) fn is_http(kind: PredictKind) -> bool {
    matches!(
        kind,
        PredictKind::HttpBackend
            | PredictKind::HttpStatus
            | PredictKind::TlsEndsAt
            | PredictKind::HttpSource
    )
}

fn check_kinds(i: usize, s: &super::LessonStep, has_request: bool, out: &mut Vec<Diagnostic>) {
    let Some(p) = &s.predict else { return };
    if is_http(p.kind) != has_request {
        let msg = if has_request {
            "this step sends an HTTP request: ask an HTTP question (http-backend, http-status, tls-ends-at, http-source)"
        } else {
            "an HTTP question needs `set.request` on its step"
        };
        let mut d = Diagnostic::error(msg).at(s.span);
        d.field = Some(format!("steps[{i}].predict.kind"));
        out.push(d);
    }
}
