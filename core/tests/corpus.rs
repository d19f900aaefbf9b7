//! Manifests of the shapes people paste (`tests/corpus/`: a microservice
//! demo, versions of one app, a guestbook, a Gateway quickstart on port
//! 8080, an Ingress with TLS and a default backend, Helm output, an
//! IPv6-only cluster as `kubectl get -o yaml` lists it), written
//! for these tests. Each parses without errors, repeats no warning, and
//! every entry point the app offers, sent to from its default origin once
//! the cluster has settled, is delivered (an HTTP entry point's pre-filled
//! request is routed to a backend, not answered by the proxy itself).

use kpv_core::model::Mode;
use kpv_core::net::controller::{self, Timing};
use kpv_core::net::trace::{HopKind, Outcome};
use kpv_core::session::replay::{self, Code, HttpCode, Inputs, SentPacket, TargetKind};
use kpv_core::util::diag::has_errors;

const CORPUS: &[(&str, &str)] = &[
    (
        "microservices",
        include_str!("../../tests/corpus/microservices.yaml"),
    ),
    ("versions", include_str!("../../tests/corpus/versions.yaml")),
    (
        "guestbook",
        include_str!("../../tests/corpus/guestbook.yaml"),
    ),
    (
        "gateway-quickstart",
        include_str!("../../tests/corpus/gateway-quickstart.yaml"),
    ),
    (
        "ingress-tls",
        include_str!("../../tests/corpus/ingress-tls.yaml"),
    ),
    (
        "helm-output",
        include_str!("../../tests/corpus/helm-output.yaml"),
    ),
    (
        "ipv6-only",
        include_str!("../../tests/corpus/ipv6-only.yaml"),
    ),
];

#[test]
fn every_corpus_file_parses_and_says_each_thing_once() {
    for (name, text) in CORPUS {
        let (c, diags) = kpv_core::Code::ALL.parse(text);
        assert!(!has_errors(&diags), "{name}: {diags:#?}");
        assert!(!c.services.is_empty(), "{name}");
        let mut messages: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
        messages.sort();
        let before = messages.len();
        messages.dedup();
        assert_eq!(
            messages.len(),
            before,
            "{name}: a warning repeated: {diags:#?}"
        );
        let kinds_listed = diags
            .iter()
            .filter(|d| {
                d.hint
                    .as_deref()
                    .is_some_and(|h| h.starts_with("supported kinds"))
            })
            .count();
        assert!(kinds_listed <= 1, "{name}: the kinds are listed once");
    }
}

#[test]
fn every_entry_point_of_every_corpus_file_delivers_once_settled() {
    let code = Code::ALL;
    for (name, text) in CORPUS {
        let (c, _) = kpv_core::Code::ALL.parse(text);
        let settled = controller::settled_ms(&c, Timing::default());
        let targets = replay::targets(&c, code.http);
        assert!(!targets.is_empty(), "{name}");
        let packets: Vec<SentPacket> = targets
            .iter()
            .enumerate()
            .map(|(i, t)| SentPacket {
                id: i as u32,
                at_ms: settled + i as u64,
                request: replay::request(t, replay::default_origin(&c, t), i as u32),
                seed: 1,
            })
            .collect();
        for mode in Mode::ALL {
            let traces = replay::replay(&Inputs {
                code,
                cluster: &c,
                mode,
                scheduler: None,
                timing: Timing::default(),
                changes: &[],
                packets: &packets,
            });
            for (t, tr) in targets.iter().zip(&traces) {
                assert!(
                    matches!(tr.outcome, Outcome::Delivered { .. }),
                    "{name} {mode:?} {}: {:?}",
                    t.key,
                    tr.outcome
                );
                if t.kind == TargetKind::Http {
                    let routed = tr.hops.iter().any(|h| {
                        matches!(&h.what, HopKind::Http(p) if p.connect.is_some() && p.respond.is_none())
                    });
                    assert!(routed, "{name} {mode:?} {}: not routed to a backend", t.key);
                }
            }
        }
    }
}

/// The Gateway quickstart listens on 8080: the pre-filled request says so.
#[test]
fn a_gateway_entry_point_prefills_its_listeners_port_and_a_routed_host() {
    let (c, _) = kpv_core::Code::ALL.parse(CORPUS[3].1);
    let targets = replay::targets(&c, Some(HttpCode::LINKED));
    let http: Vec<_> = targets
        .iter()
        .filter(|t| t.kind == TargetKind::Http)
        .collect();
    assert_eq!(http.len(), 1);
    assert_eq!(http[0].port, 8080);
    let request = replay::request(http[0], replay::default_origin(&c, http[0]), 0);
    assert_eq!(request.dst_text(), "GET http://www.example.com:8080/");
}
