//! The bodies of the fuzz targets (`yaml_import`, `share_decode`), shared by
//! `core/fuzz` (cargo-fuzz) and the replay test `core/tests/fuzz_corpus.rs`,
//! so a corpus file that once crashed keeps being checked by a plain
//! `cargo test`.
//!
//! Not part of the public API: hidden from the docs and free to change.

use crate::model::packet::{IpFamily, Protocol};
use crate::model::Mode;
use crate::net::modes::Dataplane;
use crate::net::trace::{self, Dest, Origin, Request, Sim, WorldState};
use crate::util::choose::Chooser;

/// `yaml_import`: arbitrary bytes (read as lossy UTF-8) through the parser and,
/// when they parse without errors, through the controller, every mode's
/// compiler and renderers for the first node, and one traced packet per mode.
///
/// Panics (the fuzzer's "crash") are the only failure; there is no result.
pub fn fuzz_one(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    yaml_promises(&text);
    let (cluster, diags) = crate::Code::ALL.parse(&text);
    for d in &diags {
        real_position(d);
    }
    if crate::util::diag::has_errors(&diags) {
        return;
    }
    let Some(node) = cluster.nodes.first() else {
        return;
    };
    let slices = crate::net::controller::steady_slices(&cluster);
    // The first Service with a ClusterIP and a port: the packet's destination.
    let target = cluster.services.iter().find_map(|s| {
        let ip = *s.cluster_ips.first()?;
        let p = s.ports.first()?;
        Some((ip, p.port, p.protocol))
    });
    for mode in Mode::ALL {
        let sim = Sim::new(&cluster, &slices, mode, None, crate::Code::ALL.compilers);
        for family in [IpFamily::V4, IpFamily::V6] {
            if let Some(dp) = sim.dataplane(&node.name, family) {
                exercise_renderers(dp);
            }
        }
        let (dst, port, protocol) = match target {
            Some(t) => t,
            None => match node.primary_ip(IpFamily::V4) {
                Some(ip) => (ip, 30000, Protocol::Tcp),
                None => continue,
            },
        };
        let src = node
            .primary_ip(IpFamily::of(&dst))
            .unwrap_or_else(|| crate::net::proxy::loopback(IpFamily::of(&dst)));
        let req = Request {
            origin: Origin::Node {
                node: node.name.clone(),
                src,
            },
            dst: Dest::Ip(dst),
            port,
            protocol,
            src_port: 40000,
            keep_open: false,
        };
        let mut state = WorldState::default();
        let mut chooser = Chooser::new(1);
        let t = trace::trace(&sim, &req, &mut state, &mut chooser, 0);
        let _ = trace::render_text(&t);
        #[cfg(feature = "json")]
        let _ = trace::to_json(&t);
        let _ = trace::stages(&cluster, &t);
    }
    exercise_http(&cluster);
}

/// HTTP routing: compile the tables, place the proxies, and send one HTTP
/// and one HTTPS request through every entry point.
fn exercise_http(cluster: &crate::model::Cluster) {
    if cluster.routing.is_empty() {
        return;
    }
    let crate::http::Prepared {
        cluster,
        table: rt,
        proxies,
    } = crate::http::prepare(cluster);
    let _ = crate::http::render::render_text(&rt);
    let _ = crate::http::report::diagnostics(&rt);
    let slices = crate::net::controller::steady_slices(&cluster);
    let sim = Sim::new(
        &cluster,
        &slices,
        cluster.proxy.mode,
        None,
        crate::Code::ALL.compilers,
    );
    for proxy in &proxies {
        for scheme in [crate::http::Scheme::Http, crate::http::Scheme::Https] {
            let req = crate::http::HttpRequest {
                scheme,
                port: scheme.default_port(),
                authority: "example.com".into(),
                host: "example.com".into(),
                host_port: None,
                sni: Some("example.com".into()),
                method: "GET".into(),
                path: "/a/b".into(),
                query: "x=1".into(),
                headers: vec![("x".into(), "y".into())],
            };
            let start = crate::http::journey::Start {
                origin: Origin::External {
                    client: crate::session::replay::client_ip(),
                },
                seed: 1,
            };
            let _ = crate::http::journey::journey(&sim, &slices, &rt, proxy, &req, &start);
        }
    }
}

/// What the YAML reader promises on any input, checked with limits small
/// enough for short inputs to reach: what it returns never holds more nodes
/// or text than the limits allow (so alias expansion is bounded), and every
/// diagnostic's position is a real one.
fn yaml_promises(text: &str) {
    use crate::yaml::{footprint, parse_stream, Limits};
    let limits = Limits {
        max_nodes: 20_000,
        max_text_bytes: 256 * 1024,
        ..Limits::default()
    };
    let (docs, diags) = parse_stream(text, &limits);
    let (nodes, text_bytes) = docs
        .iter()
        .map(|d| footprint(&d.root))
        .fold((0, 0), |(n, t), f| (n + f.nodes, t + f.text_bytes));
    assert!(
        nodes <= limits.max_nodes && text_bytes <= limits.max_text_bytes,
        "the tree holds {nodes} nodes and {text_bytes} bytes of text, past the limits"
    );
    for d in &diags {
        real_position(d);
    }
}

/// A diagnostic's position, when it has one, is on a real line and column
/// (a renderer would otherwise print "line 0").
fn real_position(d: &crate::util::diag::Diagnostic) {
    if let Some(s) = d.span {
        assert!(
            s.line >= 1 && s.column >= 1,
            "a position that is none: {d:?}"
        );
    }
}

fn exercise_renderers(dp: &dyn Dataplane) {
    let _ = dp.render_text();
    #[cfg(feature = "json")]
    let _ = dp.render_json();
    let _ = dp.rule_count();
}

/// `share_decode`: arbitrary bytes as a share link, three ways — as the
/// fragment text itself (lossy UTF-8), as the compressed payload of a `v1.`
/// link (so the fuzzer reaches the inflater without having to write valid
/// base64), and as the JSON inside a well-formed link (so it reaches the
/// deserializer and [`crate::session::share::validate`]). Whenever a link decodes,
/// encoding the state and decoding that again must give the same state.
///
/// Panics (the fuzzer's "crash") are the only failure; there is no result.
pub fn fuzz_share_decode(bytes: &[u8]) {
    use crate::session::share::PREFIX;
    use crate::util::base_n::push_base64url;
    share_round_trip(&String::from_utf8_lossy(bytes));
    let mut link = String::from(PREFIX);
    push_base64url(&mut link, bytes);
    share_round_trip(&link);
    let packed = miniz_oxide::deflate::compress_to_vec(bytes, 1);
    let mut link = String::from(PREFIX);
    push_base64url(&mut link, &packed);
    share_round_trip(&link);
}

/// Decode `link`; when that works, re-encode and decode again: same state.
/// Then derive from it what the app derives when it opens the link.
fn share_round_trip(link: &str) {
    let Ok(state) = crate::session::share::decode(link) else {
        return;
    };
    share_replay(&state);
    let again = crate::session::share::encode(&state);
    match crate::session::share::decode(&again) {
        Ok(back) => assert!(
            back == state,
            "re-encoded link decodes to another state:\n{state:?}\n{back:?}"
        ),
        Err(e) => panic!("re-encoded link does not decode: {e}\n{state:?}"),
    }
}

/// What the app computes from an opened link: the cluster, every packet's
/// trace through the rules of its time, the scene, and each packet's flight
/// at the link's clock and focused hop (a link whose packet comes from a Pod
/// the YAML lacks, with a trace of no hops, once stopped the app).
fn share_replay(state: &crate::session::share::ShareState) {
    use crate::net::controller::{self, Timing};
    use crate::session::replay::{self, Inputs};
    let (cluster, _) = crate::Code::ALL.parse(&state.yaml);
    let timing = Timing::default();
    let traces = replay::replay(&Inputs {
        code: crate::Code::ALL.replay(),
        cluster: &cluster,
        mode: state.mode,
        scheduler: state.scheduler,
        timing,
        changes: &state.changes,
        packets: &state.packets,
    });
    let snap = controller::snapshot(&cluster, &state.changes, timing, state.time_ms);
    let scene = crate::view::scene::layout(&cluster, &snap.slices);
    let mut sent: Vec<&crate::session::replay::SentPacket> = state.packets.iter().collect();
    crate::util::order::sort_by_key(&mut sent, |p| (p.at_ms, p.id));
    for (t, p) in traces.iter().zip(sent) {
        let flight = crate::view::timeline::Flight::new(&scene, t, p.at_ms);
        let _ = flight.position(state.time_ms, false);
        let _ = flight.hop_at(state.time_ms);
        if let Some(h) = state.step {
            let _ = flight.hop_time(h as usize);
        }
        let _ = trace::stages(&cluster, t);
    }
}
