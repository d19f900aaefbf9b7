//! Lessons as data: bilingual guided tours over a preset scenario, with
//! "predict, then see" questions whose right answer is computed by tracing.
//!
//! A lesson file (`tests/lessons/*.yaml`) names a scenario and lists steps;
//! each step has text in English and Korean, settings to apply (mode,
//! scheduler, destination, origin, an app failing its readiness check or
//! down, packets or an HTTP request to send) and optionally a question.
//! [`parse`] (in `read.rs`) reads a file with the project's spanned YAML
//! reader into a typed [`Lesson`] plus diagnostics; [`check_against`] checks it against its scenario; [`play`]
//! runs a step through [`crate::session::replay::replay`] (or, for an HTTP request,
//! through the HTTP journey of [`http`]); [`check_prediction`] says
//! whether an answer holds for what was traced. No answer is ever stored as
//! "the right one": a choice is right exactly when the traces bear it out.

pub mod http;
mod read;

pub use http::{HttpPlayed, RequestSpec, Seen, TlsEnd};
pub use read::parse;

use crate::model::packet::IpFamily;
use crate::model::{Cluster, Mode, NamespacedName, Scheduler};
use crate::net::controller::{AppChange, AppState, Timing};
use crate::net::modes::Compilers;
use crate::net::trace::{Origin, Outcome, Place, Trace};
use crate::session::replay::{self, Inputs, SentPacket, Target, TargetKind};
use crate::util::diag::{Diagnostic, Span};
use serde::Serialize;

/// The code the lessons may call that a build may not have yet, handed in
/// by the caller: a replay's ([`replay::Code`]) and the lessons' own HTTP
/// part. Native builds hand in [`Code::ALL`].
#[derive(Clone, Copy, Debug)]
pub struct Code {
    pub replay: replay::Code,
    /// `None`: HTTP routing's code is not here; a step's request is not
    /// played and a lesson's requests are not checked (the app checks again
    /// once it is).
    pub http: Option<HttpCode>,
}

impl Code {
    /// Everything linked. Naming this links every mode and HTTP routing in.
    pub const ALL: Code = Code {
        replay: replay::Code::ALL,
        http: Some(HttpCode::LINKED),
    };
}

/// A lesson step's requests played (see [`play`]).
pub type HttpPlayFn = fn(
    &Cluster,
    &RequestSpec,
    Option<&OriginSpec>,
    (Mode, Option<Scheduler>, Compilers),
    u32,
    &mut crate::util::choose::Chooser,
) -> Option<HttpPlayed>;

/// What the lessons call of HTTP routing.
#[derive(Clone, Copy)]
pub struct HttpCode {
    /// A step's requests.
    pub play: HttpPlayFn,
    /// A lesson's requests and HTTP questions checked against its scenario.
    pub check: fn(&Lesson, &Cluster, &mut Vec<Diagnostic>),
    /// Does an HTTP answer hold for the requests played?
    pub holds: fn(&Cluster, &Answer, &HttpPlayed) -> bool,
}

impl HttpCode {
    /// The lessons' HTTP functions. Naming this links HTTP routing in.
    pub const LINKED: HttpCode = HttpCode {
        play: http::play,
        check: http::check,
        holds: http::holds,
    };
}

impl std::fmt::Debug for HttpCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HttpCode")
    }
}

/// A text in both languages of the app.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Text {
    pub en: String,
    pub ko: String,
}

impl Text {
    /// The text in `lang` (`ko`, else English).
    pub fn get(&self, lang: &str) -> &str {
        if lang == "ko" {
            &self.ko
        } else {
            &self.en
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Lesson {
    pub id: String,
    pub title: Text,
    /// A preset under `tests/scenarios`, without `.yaml`.
    pub scenario: String,
    pub steps: Vec<LessonStep>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LessonStep {
    pub text: Text,
    pub set: Settings,
    pub predict: Option<Prediction>,
    /// Where the step is in its file (for diagnostics of [`check_against`]).
    #[serde(skip)]
    pub span: Span,
}

/// What a step changes before its packets are sent. Unset fields keep the
/// previous step's value.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Settings {
    pub mode: Option<Mode>,
    pub scheduler: Option<Scheduler>,
    pub target: Option<TargetSpec>,
    pub origin: Option<OriginSpec>,
    /// The first Pod whose name starts with this fails its readiness check.
    pub fail_readiness: Option<String>,
    /// The first Pod whose name starts with this stops answering.
    pub app_down: Option<String>,
    /// The first Pod whose name starts with this fails its liveness check
    /// (and is restarted by the kubelet).
    pub fail_liveness: Option<String>,
    /// The first Pod whose name starts with this is healthy again.
    pub healthy: Option<String>,
    /// New connections (or, with `request`, HTTP requests) to send.
    pub send: Option<u32>,
    /// An HTTP request to send through the scenario's Ingress controller
    /// or Gateway instead of connections to `target`. Like `send`, it
    /// holds for its own step only.
    pub request: Option<RequestSpec>,
}

impl Settings {
    /// The app changes a step makes: its setting's name, the Pod's name
    /// prefix, and the state that Pod's app is put in.
    pub fn app_changes(&self) -> [(&'static str, &Option<String>, AppState); 4] {
        [
            (
                "fail_readiness",
                &self.fail_readiness,
                AppState::FailingReadiness,
            ),
            (
                "fail_liveness",
                &self.fail_liveness,
                AppState::FailingLiveness,
            ),
            ("app_down", &self.app_down, AppState::Down),
            ("healthy", &self.healthy, AppState::Healthy),
        ]
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TargetSpec {
    pub kind: TargetKind,
    pub service: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "name", rename_all = "lowercase")]
pub enum OriginSpec {
    External,
    /// The first Pod whose name starts with this.
    Pod(String),
    Node(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PredictKind {
    WhichPod,
    Verdict,
    SourceIp,
    /// Which Service serves an HTTP request.
    HttpBackend,
    /// The HTTP status the client gets.
    HttpStatus,
    /// Where TLS ends.
    TlsEndsAt,
    /// Which address the backend Pod sees (its peer, or X-Forwarded-For).
    HttpSource,
    /// Where the Service's address became a backend's: at the client's
    /// socket (Cilium's socket LB) or in a node's rules.
    WhereTranslated,
}

impl PredictKind {
    const ALL: [(&'static str, PredictKind); 8] = [
        ("which-pod", PredictKind::WhichPod),
        ("verdict", PredictKind::Verdict),
        ("source-ip", PredictKind::SourceIp),
        ("http-backend", PredictKind::HttpBackend),
        ("http-status", PredictKind::HttpStatus),
        ("tls-ends-at", PredictKind::TlsEndsAt),
        ("http-source", PredictKind::HttpSource),
        ("where-translated", PredictKind::WhereTranslated),
    ];
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Prediction {
    pub question: Text,
    pub kind: PredictKind,
    pub choices: Vec<Choice>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Choice {
    pub text: Text,
    pub answer: Answer,
    /// Where the choice is in its file (for diagnostics of [`check_against`]).
    #[serde(skip)]
    pub span: Span,
}

/// A claim about the step's traces; [`check_prediction`] decides it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "kebab-case")]
pub enum Answer {
    // which-pod
    /// Connections reached two or more different Pods.
    Spread,
    /// Every connection reached one and the same Pod.
    OnePod,
    /// Every connection reached a Pod whose name starts with this.
    Pod(String),
    /// Every connection reached an endpoint that is no Pod (outside the cluster).
    OutsideCluster,
    /// Some connection reached the Pod the lesson broke or healed.
    WatchedReached,
    /// Connections reached Pods, but never the one the lesson broke or healed.
    WatchedAvoided,
    /// No connection reached any endpoint.
    Nowhere,
    // verdict
    /// Every connection got an answer.
    Delivered,
    /// Some got an answer, some timed out.
    SomeTimedOut,
    /// Every connection timed out.
    TimedOut,
    Dropped,
    Rejected,
    // where-translated
    /// At the client's socket, before any packet left it.
    AtSocket,
    /// In the rules of a node the packet passed.
    OnNode,
    // source-ip
    /// The Pod saw the client's own address.
    ClientIp,
    /// The Pod saw a node's address.
    NodeIp,
    // http-backend
    /// Every request was served by this Service (`name` or `namespace/name`).
    Service(String),
    /// Requests were served by two or more Services (weights).
    Split,
    /// No request reached a backend: the proxy answered itself.
    NoBackend,
    // http-status
    /// Every request got this status.
    Status(u16),
    // tls-ends-at
    TlsEndsAt(TlsEnd),
    // http-source
    /// The backend Pod's peer address is this one's.
    Peer(Seen),
    /// The address the proxy put last in `X-Forwarded-For` is this one's.
    ForwardedFor(Seen),
}

impl Answer {
    fn parse(s: &str) -> Option<Answer> {
        Some(match s {
            "spread" => Answer::Spread,
            "one-pod" => Answer::OnePod,
            "outside-cluster" => Answer::OutsideCluster,
            "watched-reached" => Answer::WatchedReached,
            "watched-avoided" => Answer::WatchedAvoided,
            "nowhere" => Answer::Nowhere,
            "delivered" => Answer::Delivered,
            "some-timed-out" => Answer::SomeTimedOut,
            "timed-out" => Answer::TimedOut,
            "dropped" => Answer::Dropped,
            "rejected" => Answer::Rejected,
            "client-ip" => Answer::ClientIp,
            "node-ip" => Answer::NodeIp,
            "at-socket" => Answer::AtSocket,
            "on-node" => Answer::OnNode,
            "split" => Answer::Split,
            "no-backend" => Answer::NoBackend,
            _ => {
                if let Some(t) = TlsEnd::ALL.iter().find(|(k, _)| *k == s) {
                    return Some(Answer::TlsEndsAt(t.1));
                }
                if let Some(n) = s.strip_prefix("service:").filter(|n| !n.is_empty()) {
                    return Some(Answer::Service(n.to_string()));
                }
                if let Some(n) = s.strip_prefix("status:") {
                    return n
                        .parse::<u16>()
                        .ok()
                        .filter(|n| (100..=599).contains(n))
                        .map(Answer::Status);
                }
                let seen = |k: &str| Seen::ALL.iter().find(|(x, _)| *x == k).map(|x| x.1);
                if let Some(w) = s.strip_prefix("peer:") {
                    return seen(w).map(Answer::Peer);
                }
                if let Some(w) = s.strip_prefix("forwarded-for:") {
                    return seen(w).map(Answer::ForwardedFor);
                }
                let p = s.strip_prefix("pod:")?;
                if p.is_empty() {
                    return None;
                }
                Answer::Pod(p.to_string())
            }
        })
    }

    /// The answer as written in lesson files (`outside-cluster`, `pod:alpaca`).
    pub fn key(&self) -> String {
        let s = match self {
            Answer::Spread => "spread",
            Answer::OnePod => "one-pod",
            Answer::Pod(p) => return format!("pod:{p}"),
            Answer::OutsideCluster => "outside-cluster",
            Answer::WatchedReached => "watched-reached",
            Answer::WatchedAvoided => "watched-avoided",
            Answer::Nowhere => "nowhere",
            Answer::Delivered => "delivered",
            Answer::SomeTimedOut => "some-timed-out",
            Answer::TimedOut => "timed-out",
            Answer::Dropped => "dropped",
            Answer::Rejected => "rejected",
            Answer::ClientIp => "client-ip",
            Answer::NodeIp => "node-ip",
            Answer::AtSocket => "at-socket",
            Answer::OnNode => "on-node",
            Answer::Service(n) => return format!("service:{n}"),
            Answer::Split => "split",
            Answer::NoBackend => "no-backend",
            Answer::Status(n) => return format!("status:{n}"),
            Answer::TlsEndsAt(t) => t.key(),
            Answer::Peer(w) => return format!("peer:{}", w.key()),
            Answer::ForwardedFor(w) => return format!("forwarded-for:{}", w.key()),
        };
        s.to_string()
    }

    /// The kind of question this answers.
    pub fn kind(&self) -> PredictKind {
        match self {
            Answer::Spread
            | Answer::OnePod
            | Answer::Pod(_)
            | Answer::OutsideCluster
            | Answer::WatchedReached
            | Answer::WatchedAvoided
            | Answer::Nowhere => PredictKind::WhichPod,
            Answer::Delivered
            | Answer::SomeTimedOut
            | Answer::TimedOut
            | Answer::Dropped
            | Answer::Rejected => PredictKind::Verdict,
            Answer::ClientIp | Answer::NodeIp => PredictKind::SourceIp,
            Answer::AtSocket | Answer::OnNode => PredictKind::WhereTranslated,
            Answer::Service(_) | Answer::Split | Answer::NoBackend => PredictKind::HttpBackend,
            Answer::Status(_) => PredictKind::HttpStatus,
            Answer::TlsEndsAt(_) => PredictKind::TlsEndsAt,
            Answer::Peer(_) | Answer::ForwardedFor(_) => PredictKind::HttpSource,
        }
    }
}

/// The first Pod whose name starts with `prefix`.
fn pod_by_prefix<'c>(cluster: &'c Cluster, prefix: &str) -> Option<&'c crate::model::Pod> {
    cluster.pods.iter().find(|p| p.id.name.starts_with(prefix))
}

fn find_target(cluster: &Cluster, spec: &TargetSpec, code: &Code) -> Option<Target> {
    replay::targets(cluster, code.replay.http)
        .into_iter()
        .find(|t| t.kind == spec.kind && spec.service.as_ref().is_none_or(|s| t.service.name == *s))
}

pub(crate) fn origin_of(cluster: &Cluster, spec: &OriginSpec) -> Option<Origin> {
    match spec {
        OriginSpec::External => Some(Origin::External {
            client: replay::client_ip(),
        }),
        OriginSpec::Pod(prefix) => {
            pod_by_prefix(cluster, prefix).map(|p| Origin::Pod { pod: p.id.clone() })
        }
        OriginSpec::Node(name) => {
            let n = cluster.node(name)?;
            let src = n
                .primary_ip(IpFamily::V4)
                .or_else(|| n.primary_ip(IpFamily::V6))?;
            Some(Origin::Node {
                node: name.clone(),
                src,
            })
        }
    }
}

/// The lesson file's word for a target kind (what `read` accepts).
fn target_kind_name(k: TargetKind) -> &'static str {
    match k {
        TargetKind::LoadBalancer => "load-balancer",
        TargetKind::NodePort => "node-port",
        TargetKind::ClusterIp => "cluster-ip",
        TargetKind::DnsName => "dns-name",
        TargetKind::ExternalIp => "external-ip",
        // Not a `target:` a lesson writes: HTTP steps use `request:`.
        TargetKind::Http => "http",
    }
}

/// An origin as the lesson file writes it: `external`, `pod:<prefix>`, `node:<name>`.
fn origin_name(o: &OriginSpec) -> String {
    match o {
        OriginSpec::External => "external".to_string(),
        OriginSpec::Pod(p) => format!("pod:{p}"),
        OriginSpec::Node(n) => format!("node:{n}"),
    }
}

/// Check a parsed lesson against its scenario: every target, origin and Pod
/// it names exists.
pub fn check_against(lesson: &Lesson, cluster: &Cluster, code: &Code) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (i, s) in lesson.steps.iter().enumerate() {
        let mut err = |field: &str, msg: String| {
            let mut d = Diagnostic::error(msg).at(s.span);
            let at = if field.starts_with("text.") {
                ""
            } else {
                "set."
            };
            d.field = Some(format!("steps[{i}].{at}{field}"));
            out.push(d);
        };
        if let Some(t) = &s.set.target {
            if find_target(cluster, t, code).is_none() {
                err(
                    "target",
                    format!(
                        "scenario `{}` has no {} destination{}",
                        lesson.scenario,
                        target_kind_name(t.kind),
                        t.service
                            .as_ref()
                            .map(|s| format!(" of Service {s}"))
                            .unwrap_or_default()
                    ),
                );
            }
        }
        if let Some(o) = &s.set.origin {
            if origin_of(cluster, o).is_none() {
                err(
                    "origin",
                    format!(
                        "scenario `{}` has no such origin: {}",
                        lesson.scenario,
                        origin_name(o)
                    ),
                );
            }
        }
        for (lang, text) in [("en", &s.text.en), ("ko", &s.text.ko)] {
            for msg in crate::view::noun::problems(cluster, text) {
                err(&format!("text.{lang}"), msg);
            }
        }
        for (field, p, _) in s.set.app_changes() {
            if let Some(p) = p {
                if pod_by_prefix(cluster, p).is_none() {
                    err(field, format!("no Pod's name starts with `{p}`"));
                }
            }
        }
    }
    // Without HTTP routing's code (not loaded yet) requests are not
    // checked: the app checks a lesson again once it is.
    if let Some(f) = code.http {
        (f.check)(lesson, cluster, &mut out);
    }
    if replay::targets(cluster, code.replay.http).is_empty() {
        out.push(Diagnostic::error(format!(
            "scenario `{}` has no destination to send to",
            lesson.scenario
        )));
    }
    out
}

/// Simulated time between steps: long enough for probes, the EndpointSlice
/// controller and kube-proxy's sync to settle.
pub const STEP_MS: u64 = 60_000;
/// When a step's packets start, after its changes.
pub const SETTLE_MS: u64 = 30_000;
/// Between two packets of a step.
pub const PACKET_GAP_MS: u64 = 100;

/// A step played: the settings in force and what its packets did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Played {
    pub mode: Mode,
    pub scheduler: Option<Scheduler>,
    pub target: Target,
    pub origin: Origin,
    /// Every app change so far (at their simulated times).
    pub changes: Vec<AppChange>,
    /// The step's packets.
    pub packets: Vec<SentPacket>,
    pub traces: Vec<Trace>,
    /// Pods the lesson has broken or healed so far (for `watched-*`).
    pub watched: Vec<NamespacedName>,
    /// The step's HTTP requests, when it sends one (then `packets` and
    /// `traces` are empty: the journeys hold both connections).
    pub http: Option<HttpPlayed>,
}

/// Play steps `0..=step` of `lesson` on `cluster` (settings accumulate) and
/// trace step `step`'s packets. Step `k` starts at `k × STEP_MS`; its app
/// changes happen then, its packets from `SETTLE_MS` later. A step with a
/// `request` sends that many HTTP requests (seeded like packets) through
/// the scenario at rest instead. `None` when the step does not exist, the
/// scenario has no destination, or the step's request reaches no entry
/// point.
pub fn play(
    cluster: &Cluster,
    lesson: &Lesson,
    step: usize,
    seed: u64,
    code: &Code,
) -> Option<Played> {
    if step >= lesson.steps.len() {
        return None;
    }
    let mut mode = cluster.proxy.mode;
    let mut scheduler = None;
    let mut target = replay::targets(cluster, code.replay.http)
        .into_iter()
        .next()?;
    let mut origin_spec: Option<OriginSpec> = None;
    let mut changes = Vec::new();
    let mut watched: Vec<NamespacedName> = Vec::new();
    let mut send = 1;
    for (k, s) in lesson.steps.iter().enumerate().take(step + 1) {
        let t0 = k as u64 * STEP_MS;
        if let Some(m) = s.set.mode {
            mode = m;
        }
        if s.set.scheduler.is_some() {
            scheduler = s.set.scheduler;
        }
        if let Some(t) = s
            .set
            .target
            .as_ref()
            .and_then(|t| find_target(cluster, t, code))
        {
            target = t;
        }
        if s.set.origin.is_some() {
            origin_spec = s.set.origin.clone();
        }
        for (_, p, state) in s.set.app_changes() {
            if let Some(pod) = p.as_deref().and_then(|p| pod_by_prefix(cluster, p)) {
                changes.push(AppChange {
                    at_ms: t0,
                    pod: pod.id.clone(),
                    state,
                });
                if !watched.contains(&pod.id) {
                    watched.push(pod.id.clone());
                }
            }
        }
        send = s.set.send.unwrap_or(1);
    }
    let request = lesson.steps[step].set.request.as_ref();
    let origin = origin_spec
        .as_ref()
        .and_then(|o| origin_of(cluster, o))
        .unwrap_or_else(|| replay::default_origin(cluster, &target));
    let start = step as u64 * STEP_MS + SETTLE_MS;
    let mut seeds =
        crate::util::choose::Chooser::new(seed ^ (step as u64).wrapping_mul(0x9E37_79B9));
    if let Some(spec) = request {
        let http = (code.http?.play)(
            cluster,
            spec,
            origin_spec.as_ref(),
            (mode, scheduler, code.replay.compilers),
            send,
            &mut seeds,
        )?;
        return Some(Played {
            mode,
            scheduler,
            target,
            origin,
            changes,
            packets: Vec::new(),
            traces: Vec::new(),
            watched,
            http: Some(http),
        });
    }
    let packets: Vec<SentPacket> = (0..send)
        .map(|i| SentPacket {
            id: i,
            at_ms: start + u64::from(i) * PACKET_GAP_MS,
            request: replay::request(&target, origin.clone(), i),
            seed: seeds.next_u64(),
        })
        .collect();
    let traces = replay::replay(&Inputs {
        code: code.replay,
        cluster,
        mode,
        scheduler,
        timing: Timing::default(),
        changes: &changes,
        packets: &packets,
    });
    Some(Played {
        mode,
        scheduler,
        target,
        origin,
        changes,
        packets,
        traces,
        watched,
        http: None,
    })
}

/// Does `answer` hold for the step's traces?
pub fn check_prediction(cluster: &Cluster, answer: &Answer, played: &Played, code: &Code) -> bool {
    if http::is_http(answer.kind()) {
        return played
            .http
            .as_ref()
            .zip(code.http)
            .is_some_and(|(h, f)| (f.holds)(cluster, answer, h));
    }
    let traces = &played.traces;
    if traces.is_empty() {
        return false;
    }
    // Endpoints reached (answered or not), and the Pods behind them.
    let reached: Vec<(Option<&NamespacedName>, std::net::SocketAddr)> = traces
        .iter()
        .filter_map(|t| match &t.outcome {
            Outcome::Delivered { pod, endpoint, .. } | Outcome::TimedOut { pod, endpoint } => {
                Some((pod.as_ref(), *endpoint))
            }
            _ => None,
        })
        .collect();
    let mut pods: Vec<&NamespacedName> = reached.iter().filter_map(|(p, _)| *p).collect();
    crate::util::order::sort(&mut pods);
    pods.dedup();
    let all = |f: &dyn Fn(&Outcome) -> bool| traces.iter().all(|t| f(&t.outcome));
    let delivered = |o: &Outcome| matches!(o, Outcome::Delivered { .. });
    let timed_out = |o: &Outcome| matches!(o, Outcome::TimedOut { .. });
    let sources: Vec<(std::net::IpAddr, std::net::IpAddr)> = traces
        .iter()
        .filter_map(|t| match &t.outcome {
            Outcome::Delivered { source, .. } => {
                t.hops.first().map(|h| (h.before.src.ip(), source.ip()))
            }
            _ => None,
        })
        .collect();
    // A node's own address, or its address on the Pod network (the bridge
    // or gateway address a masquerade towards a local Pod picks).
    let is_node_ip = |ip: std::net::IpAddr| {
        cluster.nodes.iter().any(|n| {
            n.addresses.iter().any(|(_, a)| *a == ip)
                || (n.pod_cidrs.iter().any(|c| c.contains(&ip))
                    && !cluster.pods.iter().any(|p| p.ips.contains(&ip)))
        })
    };
    match answer {
        Answer::Spread => pods.len() >= 2,
        Answer::OnePod => pods.len() == 1 && reached.iter().all(|(p, _)| p.is_some()),
        Answer::Pod(prefix) => {
            !reached.is_empty()
                && reached
                    .iter()
                    .all(|(p, _)| p.is_some_and(|p| p.name.starts_with(prefix.as_str())))
        }
        Answer::OutsideCluster => !reached.is_empty() && reached.iter().all(|(p, _)| p.is_none()),
        Answer::WatchedReached => pods.iter().any(|p| played.watched.contains(p)),
        Answer::WatchedAvoided => {
            !pods.is_empty() && !pods.iter().any(|p| played.watched.contains(p))
        }
        Answer::Nowhere => reached.is_empty(),
        Answer::Delivered => all(&delivered),
        Answer::TimedOut => all(&timed_out),
        Answer::SomeTimedOut => {
            all(&|o| delivered(o) || timed_out(o))
                && traces.iter().any(|t| delivered(&t.outcome))
                && traces.iter().any(|t| timed_out(&t.outcome))
        }
        Answer::Dropped => all(&|o| matches!(o, Outcome::Dropped { .. })),
        Answer::Rejected => all(&|o| matches!(o, Outcome::Rejected { .. })),
        Answer::ClientIp => !sources.is_empty() && sources.iter().all(|(c, s)| c == s),
        Answer::NodeIp => {
            !sources.is_empty() && sources.iter().all(|(c, s)| c != s && is_node_ip(*s))
        }
        // Where each connection's destination was first rewritten.
        Answer::AtSocket | Answer::OnNode => traces.iter().all(|t| {
            let at = t
                .translated_at()
                .and_then(|i| t.hops.get(i))
                .map(|h| &h.place);
            match answer {
                Answer::AtSocket => matches!(at, Some(Place::Pod(_))),
                _ => matches!(at, Some(Place::NodeProxy(_))),
            }
        }),
        _ => false,
    }
}
