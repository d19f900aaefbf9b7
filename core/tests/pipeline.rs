//! The node pipeline the learner's view draws (`kpv_core::view::pipeline`): for a
//! load-balancer connection, the steps each mode really takes, in order; and
//! over every preset, mode and "send to" target, that each hop of a trace
//! either moves the packet on the diagram or rewrites its header — no hop is
//! spent standing still — with at most nine steps per node.

use kpv_core::model::{Cluster, Mode};
use kpv_core::net::controller::steady_slices;
use kpv_core::net::trace::{trace, HopKind, Sim, Trace};
use kpv_core::session::replay::{self, TargetKind};
use kpv_core::util::choose::Chooser;
use kpv_core::view::pipeline::{pipelines, skeleton, Chip};
use kpv_core::view::timeline::Flight;
use std::path::PathBuf;

fn scenarios() -> Vec<(String, Cluster)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/scenarios");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    names.sort();
    names
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            let name = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            (name, kpv_core::Code::ALL.parse(&text).0)
        })
        .collect()
}

fn traced(cluster: &Cluster, mode: Mode, kind: TargetKind) -> Option<Trace> {
    let slices = steady_slices(cluster);
    let sim = Sim::new(
        cluster,
        &slices,
        mode,
        None,
        kpv_core::net::modes::Compilers::ALL,
    );
    let target = replay::targets(cluster, kpv_core::session::replay::Code::ALL.http)
        .into_iter()
        .find(|t| t.kind == kind)?;
    let origin = replay::default_origin(cluster, &target);
    let req = replay::request(&target, origin, 0);
    Some(trace(
        &sim,
        &req,
        &mut Default::default(),
        &mut Chooser::new(1),
        0,
    ))
}

fn keys(t: &Trace) -> Vec<Vec<&'static str>> {
    pipelines(t)
        .0
        .iter()
        .map(|p| p.boxes.iter().map(|b| b.key).collect())
        .collect()
}

#[test]
fn a_load_balancer_connection_takes_each_modes_own_path() {
    let all = scenarios();
    let Some((_, cluster)) = all.iter().find(|(n, _)| n == "loadbalancer-cluster") else {
        panic!("no loadbalancer-cluster preset")
    };
    let table: [(Mode, &[&str]); 4] = [
        (
            Mode::Iptables,
            &[
                "PREROUTING",
                "KUBE-SERVICES",
                "KUBE-NODEPORTS",
                "KUBE-EXT",
                "KUBE-SVC",
                "KUBE-SEP",
                "FORWARD",
                "POSTROUTING",
            ],
        ),
        (
            Mode::Ipvs,
            &[
                "PREROUTING",
                "KUBE-SERVICES",
                "KUBE-NODEPORTS",
                "kube-ipvs0",
                "ipvs-virtual-server",
                "ipvs-real-server",
                "OUTPUT",
                "POSTROUTING",
            ],
        ),
        (
            Mode::Nftables,
            &[
                "PREROUTING",
                "nft-services-map",
                "nft-external",
                "nft-service-chain",
                "nft-endpoint-chain",
                "FORWARD",
                "POSTROUTING",
            ],
        ),
        (
            Mode::Userspace,
            &[
                "PREROUTING",
                "KUBE-PORTALS",
                "KUBE-NODEPORT-CONTAINER",
                "INPUT",
                "kube-proxy-process",
                "kube-proxy-dial",
            ],
        ),
    ];
    let mut seen = Vec::new();
    for (mode, want) in table {
        let Some(t) = traced(cluster, mode, TargetKind::LoadBalancer) else {
            panic!("{mode:?}: no load-balancer target")
        };
        let got = keys(&t);
        assert_eq!(
            got,
            vec![want.to_vec()],
            "{mode:?}\n{}",
            kpv_core::net::trace::render_text(&t)
        );
        seen.push(got);
    }
    // No two modes draw the same pipeline.
    for (i, a) in seen.iter().enumerate() {
        for b in &seen[i + 1..] {
            assert_ne!(a, b);
        }
    }
}

#[test]
fn rewrites_are_chips_on_the_box_that_made_them() {
    let all = scenarios();
    let Some((_, cluster)) = all.iter().find(|(n, _)| n == "loadbalancer-cluster") else {
        panic!("no loadbalancer-cluster preset")
    };
    for mode in [Mode::Iptables, Mode::Ipvs, Mode::Nftables] {
        let Some(t) = traced(cluster, mode, TargetKind::LoadBalancer) else {
            panic!("no trace")
        };
        let (pipes, _) = pipelines(&t);
        let chips = |key: &str| {
            pipes[0]
                .boxes
                .iter()
                .find(|b| b.key == key)
                .map(|b| b.chips.clone())
                .unwrap_or_default()
        };
        let dnat_box = match mode {
            Mode::Iptables => "KUBE-SEP",
            Mode::Ipvs => "ipvs-real-server",
            _ => "nft-endpoint-chain",
        };
        let endpoint = t.verdict.endpoint();
        // IPVS picks the real server and rewrites to it in one box: the pick
        // names the address once, and no second DNAT chip repeats it.
        let said = |c: &Chip| match (mode, c) {
            (Mode::Ipvs, Chip::Pick { chosen, .. }) => Some(*chosen) == endpoint,
            (Mode::Ipvs, Chip::Dnat { .. }) => false,
            (_, Chip::Dnat { to }) => Some(*to) == endpoint,
            _ => false,
        };
        assert!(
            chips(dnat_box).iter().any(said),
            "{mode:?}: {:?}",
            chips(dnat_box)
        );
        if mode == Mode::Ipvs {
            assert!(
                !chips(dnat_box)
                    .iter()
                    .any(|c| matches!(c, Chip::Dnat { .. })),
                "{:?}",
                chips(dnat_box)
            );
        }
        assert!(
            chips("POSTROUTING")
                .iter()
                .any(|c| matches!(c, Chip::Masquerade { .. })),
            "{mode:?}: masquerade chip on POSTROUTING"
        );
        // The live counter ends at the trace's own count (iptables and
        // nftables walk rule by rule; IPVS's hash lookups are counted by it).
        let so_far = kpv_core::view::pipeline::compared_so_far(&t);
        assert!(
            so_far.windows(2).all(|w| w[0] <= w[1]),
            "{mode:?}: never decreases"
        );
        let last = so_far.last().copied().unwrap_or(0);
        assert!(
            last > 0 && last <= t.rules_compared,
            "{mode:?}: {last} of {}",
            t.rules_compared
        );
        if mode == Mode::Iptables {
            assert_eq!(last, t.rules_compared, "{mode:?}");
        }
    }
    // The random pick among three is a chip on KUBE-SVC naming the chosen one.
    let t = traced(cluster, Mode::Nftables, TargetKind::LoadBalancer);
    let t = t.unwrap_or_else(|| panic!("no trace"));
    let (pipes, _) = pipelines(&t);
    let picked = pipes[0]
        .boxes
        .iter()
        .find(|b| b.key == "nft-service-chain")
        .map(|b| b.chips.clone())
        .unwrap_or_default();
    assert!(
        picked.iter().any(|c| matches!(c, Chip::Pick { among: 3, chosen } if Some(*chosen) == t.verdict.endpoint())),
        "{picked:?}"
    );
}

#[test]
fn every_hop_moves_the_packet_or_rewrites_it_and_no_node_has_more_than_nine_steps() {
    let mut checked = 0;
    for (name, cluster) in scenarios() {
        let slices = steady_slices(&cluster);
        let scene = kpv_core::view::scene::layout(&cluster, &slices);
        for mode in Mode::ALL {
            let sim = Sim::new(
                &cluster,
                &slices,
                mode,
                None,
                kpv_core::net::modes::Compilers::ALL,
            );
            for target in replay::targets(&cluster, kpv_core::session::replay::Code::ALL.http) {
                let origin = replay::default_origin(&cluster, &target);
                let req = replay::request(&target, origin, 0);
                let t = trace(&sim, &req, &mut Default::default(), &mut Chooser::new(1), 0);
                let (pipes, slots) = pipelines(&t);
                assert_eq!(slots.len(), t.hops.len());
                for p in &pipes {
                    assert!(
                        p.boxes.len() <= 9,
                        "{name} {mode:?} {}: {} steps on {}: {:?}",
                        target.key,
                        p.boxes.len(),
                        p.node,
                        p.boxes.iter().map(|b| b.key).collect::<Vec<_>>()
                    );
                }
                let f = Flight::new(&scene, &t, 0);
                for (i, w) in f.legs.windows(2).enumerate() {
                    let (a, b) = (w[0].points.last(), w[1].points.last());
                    let hop = &t.hops[i + 1];
                    let rewrote = hop.before != hop.after;
                    let first_send = matches!(hop.what, HopKind::Send) && i == 0;
                    assert!(
                        a != b || rewrote || first_send,
                        "{name} {mode:?} {}: hop {} ({:?}) stands still\n{}",
                        target.key,
                        i + 2,
                        hop.what,
                        kpv_core::net::trace::render_text(&t)
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "only {checked} traces checked");
}

#[test]
fn the_four_modes_have_different_shapes_at_rest() {
    let shapes: Vec<&[&str]> = Mode::ALL.into_iter().map(skeleton).collect();
    for (i, a) in shapes.iter().enumerate() {
        for b in &shapes[i + 1..] {
            assert_ne!(a, b);
        }
    }
    for s in &shapes {
        assert!(s.len() <= 9 && s.len() >= 4);
    }
}
