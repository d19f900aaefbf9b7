//! HTTP requests replayed like packets: a request sent through an Ingress or
//! Gateway becomes one trace (client → load balancer → node → kube-proxy →
//! proxy Pod, the proxy's listener → route → rule → filters → backend steps,
//! a new connection to the backend Pod, the reply); the same inputs give the
//! same trace whatever was sent before; share links carry the request; the
//! request form's errors are located.

use kpv_core::http::send::{
    decision, default_url, parse_request, proxy_hops, request_packet, ProxyStage, RequestField,
    RequestProblem,
};
use kpv_core::http::table::EntryPoint;
use kpv_core::model::{Cluster, Mode, NamespacedName};
use kpv_core::net::controller::Timing;
use kpv_core::net::trace::{Dest, HopKind, Origin, Outcome, Trace};
use kpv_core::session::replay::{self, Inputs, SentPacket};
use kpv_core::view::pipeline::{connections, pipelines};
use kpv_core::view::scene::Place;

const INGRESS: &str = include_str!("../../tests/scenarios/ingress.yaml");
const GATEWAY: &str = include_str!("../../tests/scenarios/gateway-api.yaml");

fn prepared(yaml: &str) -> Cluster {
    let (c, diags) = kpv_core::Code::ALL.parse(yaml);
    assert!(diags.iter().all(|d| !d.is_error()), "{diags:?}");
    kpv_core::http::prepare(&c).cluster
}

fn nginx() -> EntryPoint {
    EntryPoint::IngressClass("nginx".into())
}

fn web() -> EntryPoint {
    EntryPoint::Gateway(NamespacedName::new("default", "web"))
}

fn packet(id: u32, entry: EntryPoint, url: &str, headers: &str, seed: u64) -> SentPacket {
    let req = parse_request("GET", url, headers).expect("a valid request");
    SentPacket {
        id,
        at_ms: u64::from(id) * 10,
        request: request_packet(
            entry,
            req,
            Origin::External {
                client: replay::client_ip(),
            },
        ),
        seed,
    }
}

fn run(c: &Cluster, mode: Mode, packets: &[SentPacket]) -> Vec<Trace> {
    replay::replay(&Inputs {
        code: kpv_core::session::replay::Code::ALL,
        cluster: c,
        mode,
        scheduler: None,
        timing: Timing::default(),
        changes: &[],
        packets,
    })
}

fn stages(t: &Trace) -> Vec<&'static str> {
    proxy_hops(t).map(|(_, p)| p.stage.key()).collect()
}

fn delivered_pod(t: &Trace) -> Option<String> {
    match &t.outcome {
        Outcome::Delivered { pod: Some(p), .. } => Some(p.to_string()),
        _ => None,
    }
}

/// Per preset and mode: the whole journey, with the proxy's steps in order,
/// TLS ended with the host's certificate, and a second connection from the
/// proxy Pod's own address to a backend Pod.
#[test]
fn https_requests_reach_a_backend_pod_on_a_second_connection() {
    /// (scenario, entry, URL, certificate, backend Pods, proxy namespace, steps)
    type Case<'a> = (
        &'a str,
        EntryPoint,
        &'a str,
        &'a str,
        &'a [&'a str],
        &'a str,
        &'a [&'a str],
    );
    let table: [Case; 3] = [
        (
            INGRESS,
            nginx(),
            "https://testhost.com/anything",
            "default/my-ssl-secret",
            &["default/test-1", "default/test-2"],
            "ingress-nginx/",
            &["listener", "route", "rule", "backend"],
        ),
        (
            GATEWAY,
            web(),
            "https://www.example.com/store",
            "default/example-cert",
            &[
                "default/store-v1-a",
                "default/store-v1-b",
                "default/store-v2-a",
            ],
            "envoy-gateway-system/",
            &["listener", "route", "rule", "backend"],
        ),
        (
            GATEWAY,
            web(),
            "https://www.example.com/",
            "default/example-cert",
            &["default/home-a"],
            "envoy-gateway-system/",
            &["listener", "route", "rule", "filters", "backend"],
        ),
    ];
    for (yaml, entry, url, cert, pods, proxy_ns, want_stages) in table {
        let c = prepared(yaml);
        for mode in [Mode::Iptables, Mode::Ipvs, Mode::Nftables] {
            let t = &run(&c, mode, &[packet(0, entry.clone(), url, "", 7)])[0];
            let what = format!("{url} in {mode:?}");
            assert_eq!(stages(t), want_stages, "{what}");
            let (li, listener) = proxy_hops(t).next().expect("a listener step");
            let tls = listener.tls.as_ref().expect("TLS ends at the proxy");
            assert_eq!(
                tls.certificate.as_ref().map(|c| c.to_string()).as_deref(),
                Some(cert)
            );
            assert!(listener.proxy.to_string().starts_with(proxy_ns), "{what}");
            // Before the proxy: the load balancer and kube-proxy's rules.
            assert!(t.hops[..li]
                .iter()
                .any(|h| matches!(h.what, HopKind::LoadBalancer { .. })));
            assert!(t.hops[..li].iter().any(|h| h.what == HopKind::Rule));
            assert_eq!(t.hops[li].place, Place::Pod(listener.proxy.clone()));
            // The backend step opens a new connection from the proxy Pod's IP.
            let (bi, backend) = proxy_hops(t).last().expect("a backend step");
            let (from, to, via) = backend.connect.expect("a new connection");
            assert!(!via, "{what}: straight to the Pod, not the ClusterIP");
            let proxy_ip = c.pod(&listener.proxy).and_then(|p| p.ips.first().copied());
            assert_eq!(Some(from.ip()), proxy_ip, "{what}");
            assert_eq!(t.hops[bi].after.src, from);
            assert_eq!(t.hops[bi].after.dst, to);
            let pod = delivered_pod(t).expect("delivered");
            assert!(pods.contains(&pod.as_str()), "{what}: {pod}");
            assert!(matches!(
                t.hops.last().map(|h| &h.what),
                Some(HopKind::Reply {
                    via: kpv_core::net::trace::ReplyVia::Conntrack
                })
            ));
            assert_eq!(decision(t).and_then(|d| d.status), Some(200));
            // Two connections, each a leg of the trail: the client's up to
            // the proxy's backend step (and its reply), then the proxy's own.
            let conns = connections(t);
            assert_eq!(conns.len(), t.hops.len());
            let last = t.hops.len() - 1;
            assert!(conns[..=bi].iter().all(|&n| n == 0), "{what}: {conns:?}");
            assert!(
                conns[bi + 1..last].iter().all(|&n| n == 1),
                "{what}: {conns:?}"
            );
            assert!(bi + 1 < last, "{what}: the second connection has hops");
            assert_eq!(conns[last], 0, "{what}: the reply is the client's");
            // The proxy's steps are one pipeline whose boxes are the stages.
            let (pipes, slots) = pipelines(t);
            let p = slots[li]
                .expect("the listener step is in a pipeline")
                .pipeline;
            let keys: Vec<&str> = pipes[p].boxes.iter().map(|b| b.key).collect();
            assert_eq!(keys, want_stages, "{what}");
            assert_eq!(pipes[p].proxy.as_ref(), Some(&listener.proxy));
            let proxy_pod = c.pod(&listener.proxy).expect("the proxy Pod");
            assert_eq!(proxy_pod.node_name.as_deref(), Some(pipes[p].node.as_str()));
        }
    }
}

/// Redirects and answers without a backend end at the proxy with the status.
#[test]
fn the_proxy_answers_itself_when_nothing_is_forwarded() {
    let table: [(&str, EntryPoint, &str, u16); 3] = [
        (INGRESS, nginx(), "http://testhost.com/", 308),
        (GATEWAY, web(), "http://www.example.com/store?x=1", 301),
        (INGRESS, nginx(), "http://other.example/", 404),
    ];
    for (yaml, entry, url, status) in table {
        let c = prepared(yaml);
        let t = &run(&c, Mode::Iptables, &[packet(0, entry, url, "", 1)])[0];
        let (_, last) = proxy_hops(t).last().expect("proxy steps");
        assert_eq!(last.stage, ProxyStage::Backend, "{url}");
        assert_eq!(last.respond, Some(status), "{url}");
        assert!(last.connect.is_none(), "{url}");
        assert!(
            proxy_hops(t).next().is_some_and(|(_, p)| p.tls.is_none()),
            "{url}: no TLS"
        );
        assert!(
            connections(t).iter().all(|&n| n == 0),
            "{url}: one connection"
        );
        // The proxy answered itself: not a delivery to any backend.
        assert_eq!(
            t.outcome,
            kpv_core::net::trace::Outcome::Answered {
                pod: last.proxy.clone(),
                status: Some(status),
            },
            "{url}"
        );
    }
}

/// Same seed, same trace; a request's trace does not depend on what was
/// sent before it; different seeds spread a weighted split.
#[test]
fn requests_replay_deterministically_and_independently_of_history() {
    let c = prepared(GATEWAY);
    let url = "https://www.example.com/store";
    let alone = run(&c, Mode::Iptables, &[packet(50, web(), url, "", 99)]);
    let mut many: Vec<SentPacket> = (0..50)
        .map(|i| packet(i, web(), url, "", u64::from(i)))
        .collect();
    many.push(packet(50, web(), url, "", 99));
    let after = run(&c, Mode::Iptables, &many);
    assert_eq!(after[50], alone[0]);
    assert_eq!(run(&c, Mode::Iptables, &many), after);
    let v2 = after
        .iter()
        .filter(|t| delivered_pod(t).as_deref() == Some("default/store-v2-a"))
        .count();
    assert!(
        (1..15).contains(&v2),
        "about 10% of 51 go to store-v2: {v2}"
    );
    // On `/` the header match wins over the catch-all prefix (on `/store`
    // the longer prefix wins first, as the API's precedence says).
    let home = "https://www.example.com/";
    let canary = run(
        &c,
        Mode::Iptables,
        &[packet(0, web(), home, "env: canary", 3)],
    );
    assert_eq!(
        delivered_pod(&canary[0]).as_deref(),
        Some("default/store-v2-a")
    );
}

/// The app's raw cluster works too: replay places the proxies itself, and
/// preparing a prepared cluster changes nothing.
#[test]
fn preparing_twice_changes_nothing() {
    for yaml in [
        INGRESS,
        GATEWAY,
        include_str!("../../tests/http/article-ingress.yaml"),
    ] {
        let (c, _) = kpv_core::Code::ALL.parse(yaml);
        let once = kpv_core::http::prepare(&c);
        let twice = kpv_core::http::prepare(&once.cluster);
        assert_eq!(once.cluster, twice.cluster);
        assert_eq!(once.proxies, twice.proxies);
    }
}

#[test]
fn default_urls_reach_a_host_with_tls_first() {
    let (c, _) = kpv_core::Code::ALL.parse(INGRESS);
    let p = kpv_core::http::prepare(&c);
    assert_eq!(default_url(&p, &nginx()), "https://testhost.com/");
    let (c, _) = kpv_core::Code::ALL.parse(GATEWAY);
    let p = kpv_core::http::prepare(&c);
    assert_eq!(default_url(&p, &web()), "https://www.example.com/");
}

#[test]
fn request_forms_are_read_with_located_errors() {
    let ok = parse_request(
        "get",
        " https://TestHost.com:8443/a/b?q=1 ",
        "X-A: 1\n\nHost: other.example:81",
    )
    .expect("valid");
    // The method is sent as written (methods are case-sensitive, as curl's
    // -X sends them); the app's form upper-cases what it sends.
    assert_eq!(ok.method, "get");
    assert_eq!((ok.authority.as_str(), ok.port), ("testhost.com", 8443));
    assert_eq!((ok.path.as_str(), ok.query.as_str()), ("/a/b", "q=1"));
    assert_eq!(
        (ok.host.as_str(), ok.host_port),
        ("other.example", Some(81))
    );
    assert_eq!(ok.sni.as_deref(), Some("testhost.com"));
    assert_eq!(ok.headers, vec![("x-a".to_string(), "1".to_string())]);
    assert_eq!(ok.url(), "https://testhost.com:8443/a/b?q=1");
    let bad: [(&str, &str, &str, RequestField, usize, RequestProblem); 7] = [
        (
            "G3T",
            "http://a/",
            "",
            RequestField::Method,
            1,
            RequestProblem::BadMethod,
        ),
        (
            "GET",
            "testhost.com/x",
            "",
            RequestField::Url,
            1,
            RequestProblem::NoScheme,
        ),
        (
            "GET",
            "ftp://a/",
            "",
            RequestField::Url,
            1,
            RequestProblem::NoScheme,
        ),
        (
            "GET",
            "https:///x",
            "",
            RequestField::Url,
            9,
            RequestProblem::BadAuthority,
        ),
        (
            "GET",
            "http://a:99999/",
            "",
            RequestField::Url,
            8,
            RequestProblem::BadAuthority,
        ),
        (
            "GET",
            "http://a/b c",
            "",
            RequestField::Url,
            11,
            RequestProblem::BadCharacter,
        ),
        (
            "GET",
            "http://a/",
            "X-A: 1\nnocolon",
            RequestField::Header(2),
            8,
            RequestProblem::HeaderNoColon,
        ),
    ];
    for (m, u, h, field, column, problem) in bad {
        let e = parse_request(m, u, h).expect_err(u);
        assert_eq!(
            (e.field, e.column, e.problem),
            (field, column, problem),
            "{m} {u} {h:?}"
        );
    }
}

/// A share link carries an HTTP request and decodes to the same trace.
#[test]
fn share_links_carry_requests() {
    let p = packet(
        0,
        nginx(),
        "https://testhost.com/anything?x=1",
        "X-Env: a\nHost: testhost.com:443",
        5,
    );
    let state = kpv_core::session::share::ShareState {
        yaml: INGRESS.to_string(),
        mode: Mode::Iptables,
        scheduler: None,
        seed: 1,
        speed_percent: 100,
        time_ms: 0,
        focus: Some(0),
        step: None,
        changes: Vec::new(),
        packets: vec![p.clone()],
        lang: None,
        rules_node: None,
    };
    let back = kpv_core::session::share::decode(&kpv_core::session::share::encode(&state))
        .expect("decodes");
    assert_eq!(back, state);
    assert!(matches!(back.packets[0].request.dst, Dest::Http(_)));
}
