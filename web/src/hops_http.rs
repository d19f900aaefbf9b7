//! Words for the HTTP proxy's hops, pipeline steps and chips (TLS ended,
//! the route and rule chosen, filters, the new connection or the proxy's
//! own answer), and for a request form's errors, in each language. Only
//! object names, addresses, paths and the API's own terms stay as they
//! are; every other word comes from [`crate::i18n::http`].

use crate::i18n::{tr, Lang};
use kpv_core::http::send::{ProxyHop, ProxyStage, RequestError, RequestField, RequestProblem};
use kpv_core::http::walk::{Decision, Reason};
use kpv_core::net::trace::Hop;
use kpv_core::view::pipeline::Chip;

pub fn step_name(l: Lang, key: &str) -> &'static str {
    match key {
        "listener" => tr(l, "http.step.listener"),
        "route" => tr(l, "http.step.route"),
        "rule" => tr(l, "http.step.rule"),
        "filters" => tr(l, "http.step.filters"),
        _ => tr(l, "http.step.backend"),
    }
}

pub fn chip_text(l: Lang, c: &Chip) -> String {
    match c {
        Chip::Tls {
            certificate: Some(cert),
            ..
        } => tr(l, "http.chip.tls").replace("{cert}", &cert.to_string()),
        Chip::Tls { .. } => tr(l, "http.chip.tls-default").into(),
        Chip::Status { status } => {
            tr(l, "http.chip.status").replace("{status}", &status.to_string())
        }
        _ => String::new(),
    }
}

pub fn reason_key(r: &Reason) -> &'static str {
    match r {
        Reason::Routed => "http.reason.routed",
        Reason::DefaultBackend => "http.reason.default-backend",
        Reason::ControllerDefaultBackend => "http.reason.controller-default-backend",
        Reason::NoListener => "http.reason.no-listener",
        Reason::TlsHandshakeFailed => "http.reason.tls-handshake-failed",
        Reason::Misdirected => "http.reason.misdirected",
        Reason::NoMatchingRoute => "http.reason.no-matching-route",
        Reason::Redirect => "http.reason.redirect",
        Reason::CorsPreflight => "http.reason.cors-preflight",
        Reason::HttpsRedirect => "http.reason.https-redirect",
        Reason::NoBackends => "http.reason.no-backends",
        Reason::InvalidBackend { .. } => "http.reason.invalid-backend",
        Reason::ServiceNotFound => "http.reason.service-not-found",
        Reason::NoReadyEndpoints => "http.reason.no-ready-endpoints",
        Reason::UnsupportedMatch => "http.reason.unsupported-match",
        Reason::BadRequest => "http.reason.bad-request",
    }
}

/// The listener as the learner knows it: `gateway/listener`, or the port.
pub fn listener_text(l: Lang, p: &ProxyHop) -> String {
    match &p.decision.listener {
        Some((gw, name)) => format!("{}/{name}", gw.name),
        None => tr(l, "http.listener.port").replace("{port}", &p.request.port.to_string()),
    }
}

/// The route that decided, as `Ingress default/test` or `HTTPRoute default/store`.
pub fn route_text(d: &Decision) -> Option<(String, String)> {
    d.route
        .as_ref()
        .map(|r| (r.kind.to_string(), r.name.to_string()))
}

/// One proxy hop in plain words.
pub fn summary(l: Lang, _h: &Hop, p: &ProxyHop) -> String {
    let w = |k: &'static str| tr(l, k).to_string();
    let d = &p.decision;
    match p.stage {
        ProxyStage::Listener => match &p.tls {
            Some(tls) => match &tls.certificate {
                Some(c) => w("http.sum.tls").replace("{cert}", &c.to_string()),
                None => w("http.sum.tls-default"),
            }
            .replace("{sni}", &tls.sni)
            .replace("{listener}", &listener_text(l, p)),
            None => w("http.sum.listener").replace("{listener}", &listener_text(l, p)),
        },
        ProxyStage::Route => {
            let (kind, name) = route_text(d).unwrap_or_default();
            w("http.sum.route")
                .replace("{host}", &p.request.host)
                .replace("{kind}", &kind)
                .replace("{name}", &name)
        }
        ProxyStage::Rule => {
            let (rule, index) = d.route.as_ref().map_or((0, 0), |r| (r.rule, r.index));
            w("http.sum.rule")
                .replace("{rule}", &(rule + 1).to_string())
                .replace("{match}", &(index + 1).to_string())
                .replace("{method}", &p.request.method)
                .replace(
                    "{path}",
                    &match &d.matched_path {
                        // The proxy's normalisation changed the path it matched.
                        Some(m) => format!("{} → {m}", p.request.path),
                        None => p.request.path.clone(),
                    },
                )
                .replace("{n}", &d.compared.len().to_string())
        }
        ProxyStage::Filters => {
            let list = w("http.sum.filters").replace("{list}", &d.filters.join(", "));
            let (a, b) = (&p.request, &d.request);
            if (&a.path, &a.query) == (&b.path, &b.query) {
                return list;
            }
            let line = |path: &str, query: &str| match query {
                "" => path.to_string(),
                q => format!("{path}?{q}"),
            };
            w("http.sum.path")
                .replace("{list}", &list)
                .replace("{from}", &line(&a.path, &a.query))
                .replace("{to}", &line(&b.path, &b.query))
        }
        ProxyStage::Backend => match (p.connect, p.respond) {
            (Some((from, to, via)), _) => {
                let svc = d
                    .backend
                    .as_ref()
                    .map(|b| format!("{}:{}", b.service, b.port))
                    .unwrap_or_default();
                w(if via {
                    "http.sum.connect-cluster-ip"
                } else {
                    "http.sum.connect"
                })
                .replace("{from}", &from.to_string())
                .replace("{to}", &to.to_string())
                .replace("{svc}", &svc)
            }
            (None, status) => {
                let status = status.or(d.status).unwrap_or(0).to_string();
                match &d.redirect {
                    Some(r) => w("http.sum.redirect")
                        .replace("{status}", &status)
                        .replace("{location}", &r.location),
                    None => w("http.sum.respond")
                        .replace("{status}", &status)
                        .replace("{reason}", tr(l, reason_key(&d.reason))),
                }
            }
        },
    }
}

/// A request form's error, located and worded.
pub fn error_text(l: Lang, e: &RequestError) -> String {
    let field = match e.field {
        RequestField::Method => tr(l, "http.field.method").to_string(),
        RequestField::Url => tr(l, "http.field.url").to_string(),
        RequestField::Header(n) => tr(l, "http.field.header").replace("{n}", &n.to_string()),
    };
    let problem = tr(
        l,
        match e.problem {
            RequestProblem::BadMethod => "http.err.bad-method",
            RequestProblem::NoScheme => "http.err.no-scheme",
            RequestProblem::BadAuthority => "http.err.bad-authority",
            RequestProblem::BadCharacter => "http.err.bad-character",
            RequestProblem::HeaderNoColon => "http.err.header-no-colon",
            RequestProblem::HeaderBadName => "http.err.header-bad-name",
            RequestProblem::BadHostHeader => "http.err.bad-host",
            RequestProblem::HeaderBadValue => "http.err.header-bad-value",
        },
    );
    tr(l, "http.err.at")
        .replace("{field}", &field)
        .replace("{col}", &e.column.to_string())
        .replace("{problem}", problem)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kpv_core::net::controller::Timing;
    use kpv_core::session::replay::{self, Inputs, SentPacket};

    /// Every hop of an HTTP request's journey, in Korean, has Hangul and
    /// differs from the English; the proxy's steps name their objects.
    #[test]
    fn proxy_hops_are_worded_in_both_languages() {
        for yaml in [
            include_str!("../../tests/scenarios/ingress.yaml"),
            include_str!("../../tests/scenarios/gateway-api.yaml"),
        ] {
            let (c, _) = kpv_core::Code::ALL.parse(yaml);
            let c = kpv_core::http::prepare(&c).cluster;
            let targets = replay::targets(&c, kpv_core::Code::ALL.replay().http);
            let t = targets.first().expect("an HTTP target");
            let packets = [SentPacket {
                id: 0,
                at_ms: 0,
                request: replay::request(t, replay::default_origin(&c, t), 0),
                seed: 3,
            }];
            let traces = replay::replay(&Inputs {
                code: kpv_core::Code::ALL.replay(),
                cluster: &c,
                mode: c.proxy.mode,
                scheduler: None,
                timing: Timing::default(),
                changes: &[],
                packets: &packets,
            });
            let trace = &traces[0];
            let proxy: Vec<&Hop> = trace
                .hops
                .iter()
                .filter(|h| matches!(h.what, kpv_core::net::trace::HopKind::Http(_)))
                .collect();
            assert!(proxy.len() >= 4, "{:?}", trace.hops.len());
            for h in &trace.hops {
                let ko = crate::hops::summary(Lang::Ko, h);
                let en = crate::hops::summary(Lang::En, h);
                assert!(ko.chars().any(|c| ('가'..='힣').contains(&c)), "{ko}");
                assert_ne!(ko, en);
                assert!(!ko.contains('{') && !en.contains('{'), "{en}");
            }
            let first = crate::hops::summary(Lang::En, proxy[0]);
            assert!(first.contains("TLS ends"), "{first}");
        }
    }

    #[test]
    fn form_errors_say_where_and_what() {
        let e = kpv_core::http::send::parse_request("GET", "http://a/", "X: 1\nbroken")
            .expect_err("no colon");
        assert_eq!(
            error_text(Lang::En, &e),
            "header line 2, column 7: write Name: value (the colon is missing)"
        );
        assert_eq!(
            error_text(Lang::Ko, &e),
            "헤더 2번째 줄, 7번째 글자: 이름: 값 형식으로 쓰세요 (콜론이 없습니다)"
        );
    }
}
