//! Property tests: the parser never panics on any bytes, and for generated
//! small clusters every packet to any Service address walks every mode to a
//! verdict, DNATing only to a serving endpoint of the Service it targeted.

use kpv_core::generate::{self, yaml, GenEndpoint as Ep, GenService as Svc};
use kpv_core::model::packet::{IpFamily, Packet, Protocol};
use kpv_core::model::Mode;
use kpv_core::net::modes::{self, AllAnswer, Hook, NodeState, Verdict};
use kpv_core::net::proxy::build_input;
use kpv_core::util::choose::Chooser;
use proptest::prelude::*;
use std::net::{IpAddr, SocketAddr};

const SEED: &str = include_str!("../../tests/scenarios/alpaca-bandicoot.yaml");

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn parse_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = kpv_core::Code::ALL.parse(&text);
    }

    /// Real YAML cut at a random place with random bytes spliced in: deeper
    /// into the lowering than pure noise gets.
    #[test]
    fn parse_never_panics_on_damaged_yaml(
        cut in 0usize..SEED.len(),
        at in 0usize..SEED.len(),
        junk in prop::collection::vec(any::<u8>(), 0..40),
    ) {
        let mut bytes = SEED.as_bytes()[..cut].to_vec();
        let at = at.min(bytes.len());
        bytes.splice(at..at, junk);
        let text = String::from_utf8_lossy(&bytes);
        let _ = kpv_core::Code::ALL.parse(&text);
    }
}

fn ep() -> impl Strategy<Value = Ep> {
    (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>())
        .prop_map(|(on_a, ready, serving, terminating)| Ep::new(on_a, ready, serving, terminating))
}

fn svc() -> impl Strategy<Value = Svc> {
    (
        0u8..3,
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(ep(), 0..=4),
    )
        .prop_map(|(kind, etp_local, itp_local, affinity, eps)| {
            Svc::new(kind, etp_local, itp_local, affinity, eps)
        })
}

fn ep_ip(i: usize, j: usize, e: &Ep) -> String {
    generate::endpoint_ip(i, j, e)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn every_packet_to_a_service_reaches_a_verdict_and_only_serving_endpoints(
        svcs in prop::collection::vec(svc(), 1..=5),
        seed in any::<u64>(),
    ) {
        let text = yaml(&svcs);
        let (cluster, diags) = kpv_core::Code::ALL.parse(&text);
        prop_assert!(!kpv_core::util::diag::has_errors(&diags), "{:#?}\n{}", diags, text);
        let input = build_input(&cluster, &cluster.endpoint_slices, "node-a", IpFamily::V4)
            .expect("node-a");
        let sources: [(&str, Hook); 3] = [
            ("10.244.1.200", Hook::Prerouting), // a local Pod
            ("192.168.0.2", Hook::Output),      // the node itself
            ("198.51.100.7", Hook::Prerouting), // outside
        ];
        for mode in Mode::ALL {
            let dp = modes::Compilers::ALL.compile(mode, &input, Default::default());
            let text = dp.render_text();
            prop_assert!(!text.is_empty());
            let mut state = NodeState::default();
            let mut chooser = Chooser::new(seed);
            for (i, s) in svcs.iter().enumerate() {
                let port = 80 + i as u16;
                let mut dests = vec![(format!("10.96.0.{}", 10 + i), port, false)];
                if s.kind > 0 {
                    dests.push(("192.168.0.2".into(), 30000 + i as u16, true));
                }
                if s.kind == 2 {
                    dests.push((format!("192.0.2.{}", 10 + i), port, true));
                }
                let serving: Vec<(SocketAddr, &Ep)> = s
                    .endpoints
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| e.serving)
                    .map(|(j, e)| {
                        let ip: IpAddr = ep_ip(i, j, e).parse().expect("ip");
                        (SocketAddr::new(ip, 8080), e)
                    })
                    .collect();
                for (dst, dport, external_addr) in &dests {
                    for (src, hook) in sources {
                        let pkt = Packet::new(
                            SocketAddr::new(src.parse().expect("src"), 40000),
                            SocketAddr::new(dst.parse().expect("dst"), *dport),
                            Protocol::Tcp,
                        );
                        let out = dp.process(&pkt, hook, &mut state, &mut chooser, &AllAnswer, 0);
                        let Some(chosen) = out.verdict.endpoint() else {
                            continue;
                        };
                        let why = format!(
                            "{mode:?} {src} -> {dst}:{dport}: {:?}\n{:#?}\n{text}",
                            out.verdict, s
                        );
                        // Only ever a serving endpoint of the targeted Service.
                        let hit = serving.iter().find(|(a, _)| *a == chosen);
                        prop_assert!(hit.is_some(), "not a serving endpoint: {}", why);
                        prop_assert!(out.candidates.contains(&chosen), "{}", why);
                        for c in &out.candidates {
                            prop_assert!(serving.iter().any(|(a, _)| a == c), "candidate {c}: {}", why);
                        }
                        // Terminating endpoints are a fallback: never used
                        // while the set they fall back from has a ready one.
                        // (For Local policies the set is this node's
                        // endpoints, and IPVS falls back to the cluster set
                        // when it is empty — kubernetes#97081 — so check the
                        // plain Cluster/Cluster case only.)
                        let local_policy = s.itp_local || (s.etp_local && *external_addr);
                        if !local_policy && s.endpoints.iter().any(|e| e.ready) {
                            let e = hit.map(|(_, e)| *e).expect("checked");
                            prop_assert!(e.ready, "terminating used though a ready one exists: {}", why);
                        }
                        if mode != Mode::Ipvs && matches!(out.verdict, Verdict::Dnat { .. }) {
                            // iptables/nftables: external traffic from outside
                            // with eTP Local only reaches this node's endpoints.
                            if s.etp_local && *external_addr && src == "198.51.100.7" {
                                let e = hit.map(|(_, e)| *e).expect("checked");
                                prop_assert!(e.on_a, "eTP Local left the node: {}", why);
                            }
                        }
                    }
                }
            }
        }
    }
}
