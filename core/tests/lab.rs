//! The labs: measured load-balancing distributions and rule growth.

use kpv_core::model::{Cluster, Mode, Scheduler};
use kpv_core::net::trace::Origin;
use kpv_core::session::lab::{self, Bucket, Expectation, LabRun, ScaleLab};
use kpv_core::session::replay::{self, Target, TargetKind};
use std::time::Instant;

fn scenario(name: &str) -> Cluster {
    let path = format!(
        "{}/../tests/scenarios/{name}.yaml",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let (c, d) = kpv_core::Code::ALL.parse(&text);
    assert!(!kpv_core::util::diag::has_errors(&d), "{d:#?}");
    c
}

fn cluster_ip(c: &Cluster, svc: &str) -> Target {
    replay::targets(c, kpv_core::session::replay::Code::ALL.http)
        .into_iter()
        .find(|t| t.kind == TargetKind::ClusterIp && t.service.name == svc)
        .unwrap()
}

fn run<'a>(
    mode: Mode,
    scheduler: Option<Scheduler>,
    target: &'a Target,
    origin: &'a Origin,
    connections: u32,
    seed: u64,
    long_lived: bool,
) -> LabRun<'a> {
    LabRun {
        connections,
        seed,
        long_lived,
        ..LabRun::new(
            mode,
            scheduler,
            target,
            origin,
            kpv_core::session::replay::Code::ALL,
        )
    }
}

fn counts(b: &[Bucket]) -> Vec<u32> {
    b.iter().map(|b| b.count).collect()
}

#[test]
fn round_robin_is_exact() {
    let c = scenario("alpaca-bandicoot");
    let t = cluster_ip(&c, "alpaca-service");
    let o = replay::default_origin(&c, &t);
    let d = lab::distribution(
        &c,
        &run(Mode::Ipvs, Some(Scheduler::Rr), &t, &o, 300, 7, false),
    );
    assert_eq!(counts(&d), vec![100, 100, 100], "{d:?}");
    assert!(d.iter().all(|b| b.label.starts_with("alpaca-prod-")));
    assert!(matches!(
        lab::expected_share(&c, &LabRun::new(Mode::Ipvs, Some(Scheduler::Rr), &t, &o, kpv_core::session::replay::Code::ALL)),
        Expectation::RoundRobin { ref endpoints, .. } if endpoints.len() == 3
    ));
}

#[test]
fn iptables_random_is_near_a_third() {
    let c = scenario("alpaca-bandicoot");
    let t = cluster_ip(&c, "alpaca-service");
    let o = replay::default_origin(&c, &t);
    let d = lab::distribution(&c, &run(Mode::Iptables, None, &t, &o, 3000, 11, false));
    assert_eq!(d.len(), 3, "{d:?}");
    for b in &d {
        assert!((900..=1100).contains(&b.count), "{d:?}");
    }
    assert_eq!(counts(&d).iter().sum::<u32>(), 3000);
    match lab::expected_share(
        &c,
        &LabRun::new(
            Mode::Iptables,
            None,
            &t,
            &o,
            kpv_core::session::replay::Code::ALL,
        ),
    ) {
        Expectation::Random { endpoints, share } => {
            assert_eq!(endpoints.len(), 3);
            assert!((share - 1.0 / 3.0).abs() < 1e-9);
        }
        e => panic!("{e:?}"),
    }
}

#[test]
fn least_connection_with_long_lived_connections_stays_level() {
    let c = scenario("alpaca-bandicoot");
    let t = cluster_ip(&c, "alpaca-service");
    let o = replay::default_origin(&c, &t);
    for s in [Scheduler::Lc, Scheduler::Sed, Scheduler::Nq] {
        let d = lab::distribution(&c, &run(Mode::Ipvs, Some(s), &t, &o, 301, 3, true));
        let v = counts(&d);
        assert_eq!(v.len(), 3, "{s:?} {d:?}");
        let (lo, hi) = (v.iter().min().unwrap(), v.iter().max().unwrap());
        assert!(hi - lo <= 1, "{s:?} {d:?}");
    }
}

#[test]
fn affinity_and_source_hashing_give_one_endpoint() {
    let c = scenario("session-affinity");
    let t = cluster_ip(&c, "cart");
    let o = replay::default_origin(&c, &t);
    for mode in [Mode::Iptables, Mode::Nftables, Mode::Ipvs] {
        let d = lab::distribution(&c, &run(mode, None, &t, &o, 200, 5, false));
        assert_eq!(d.len(), 1, "{mode:?} {d:?}");
        assert_eq!(d[0].count, 200);
        assert!(matches!(
            lab::expected_share(
                &c,
                &LabRun::new(mode, None, &t, &o, kpv_core::session::replay::Code::ALL)
            ),
            Expectation::OneEndpoint { .. }
        ));
    }
    let c = scenario("alpaca-bandicoot");
    let t = cluster_ip(&c, "alpaca-service");
    let o = replay::default_origin(&c, &t);
    let d = lab::distribution(
        &c,
        &run(Mode::Ipvs, Some(Scheduler::Sh), &t, &o, 200, 5, false),
    );
    assert_eq!(d.len(), 1, "{d:?}");
}

#[test]
fn ten_thousand_packets_are_fast_enough() {
    let c = scenario("alpaca-bandicoot");
    let t = cluster_ip(&c, "alpaca-service");
    let o = replay::default_origin(&c, &t);
    for mode in [Mode::Iptables, Mode::Ipvs] {
        let start = Instant::now();
        let d = lab::distribution(&c, &run(mode, None, &t, &o, 10_000, 1, false));
        let took = start.elapsed();
        println!("10,000-packet distribution, {mode:?}: {took:?} ({d:?})");
        assert_eq!(counts(&d).iter().sum::<u32>(), 10_000);
    }
}

#[test]
fn external_origin_through_the_load_balancer() {
    let c = scenario("loadbalancer-local");
    let t = replay::targets(&c, kpv_core::session::replay::Code::ALL.http)
        .into_iter()
        .find(|t| t.kind == TargetKind::LoadBalancer)
        .unwrap();
    let o = replay::default_origin(&c, &t);
    assert!(matches!(o, Origin::External { .. }));
    let d = lab::distribution(&c, &run(Mode::Iptables, None, &t, &o, 400, 9, false));
    assert_eq!(counts(&d).iter().sum::<u32>(), 400);
    assert!(d.iter().all(|b| b.endpoint.is_some()), "{d:?}");
}

#[test]
fn scale_iptables_linear_ipvs_and_nftables_constant() {
    let sizes = [10, 100, 1000];
    let pts: Vec<_> = Mode::ALL
        .iter()
        .flat_map(|m| {
            sizes
                .iter()
                .map(move |n| lab::scale_point(*n, 3, *m, kpv_core::net::modes::Compilers::ALL))
        })
        .collect();
    let get = |m: Mode, n: usize| {
        *pts.iter()
            .find(|p| p.mode == m && p.n_services == n)
            .unwrap()
    };
    for p in &pts {
        println!("{p:?}");
    }
    for m in Mode::ALL {
        assert!(get(m, 10).rules < get(m, 100).rules, "{m:?}");
        assert!(get(m, 100).rules < get(m, 1000).rules, "{m:?}");
    }
    // iptables: KUBE-SERVICES is walked rule by rule.
    let (a, b, c) = (
        get(Mode::Iptables, 10).compared_last,
        get(Mode::Iptables, 100).compared_last,
        get(Mode::Iptables, 1000).compared_last,
    );
    assert!(b > 4 * a && c > 8 * b, "{a} {b} {c}");
    let slope1 = (b - a) as f64 / 90.0;
    let slope2 = (c - b) as f64 / 900.0;
    assert!((slope1 - slope2).abs() < 0.1 * slope2, "{slope1} {slope2}");
    assert!(get(Mode::Iptables, 1000).compared_first < c / 10);
    // IPVS: one hash lookup plus fixed glue; nftables: verdict maps.
    for m in [Mode::Ipvs, Mode::Nftables] {
        let v: Vec<usize> = sizes.iter().map(|n| get(m, *n).compared_last).collect();
        assert!(v.iter().all(|x| *x == v[0]), "{m:?} {v:?}");
        assert!(v[0] < 30, "{m:?} {v:?}");
        assert_eq!(get(m, 1000).compared_first, v[0], "{m:?}");
    }
}

#[test]
fn scale_lab_steps_one_point_per_call() {
    let mut lab = ScaleLab::new(
        &[5, 50],
        &[Mode::Iptables, Mode::Ipvs],
        2,
        kpv_core::net::modes::Compilers::ALL,
    );
    assert_eq!(lab.total(), 4);
    let mut got = Vec::new();
    while let Some(p) = lab.step() {
        got.push((p.n_services, p.mode));
        assert_eq!(lab.done(), got.len());
    }
    assert_eq!(
        got,
        vec![
            (5, Mode::Iptables),
            (5, Mode::Ipvs),
            (50, Mode::Iptables),
            (50, Mode::Ipvs)
        ]
    );
    assert_eq!(lab.points.len(), 4);
    assert!(lab.step().is_none());
    assert!(
        ScaleLab::new(&[5], &[], 1, kpv_core::net::modes::Compilers::ALL)
            .step()
            .is_none()
    );
    assert_eq!(
        lab::scale_point(0, 3, Mode::Iptables, kpv_core::net::modes::Compilers::ALL).compared_last,
        0
    );
}

#[test]
fn fast_path_equals_replay() {
    let c = scenario("alpaca-bandicoot");
    let t = cluster_ip(&c, "alpaca-service");
    let o = replay::default_origin(&c, &t);
    for (mode, sched, long) in [
        (Mode::Iptables, None, false),
        (Mode::Ipvs, Some(Scheduler::Lc), true),
        (Mode::Userspace, None, false),
    ] {
        let packets = lab::lab_packets(&t, &o, 200, 3, long);
        let fast = lab::run(&c, (mode, sched), &packets, replay::Code::ALL);
        let slow = replay::replay(&replay::Inputs {
            code: kpv_core::session::replay::Code::ALL,
            cluster: &c,
            mode,
            scheduler: sched,
            timing: Default::default(),
            changes: &[],
            packets: &packets,
        });
        assert_eq!(fast, slow, "{mode:?}");
    }
}

#[test]
fn lab_in_slices_counts_what_one_run_counts() {
    let c = scenario("alpaca-bandicoot");
    let t = cluster_ip(&c, "alpaca-service");
    let o = replay::default_origin(&c, &t);
    for (mode, sched, long_lived) in [
        (Mode::Iptables, None, false),
        (Mode::Ipvs, Some(Scheduler::Rr), false),
        (Mode::Ipvs, Some(Scheduler::Lc), true),
        (Mode::Nftables, None, false),
        (Mode::Userspace, None, false),
    ] {
        let whole = lab::distribution(&c, &run(mode, sched, &t, &o, 257, 9, long_lived));
        let mut sliced = lab::LbLab::new(&c, &run(mode, sched, &t, &o, 257, 9, long_lived));
        assert_eq!(sliced.total(), 257);
        let mut steps = 0;
        while sliced.step(10) > 0 {
            steps += 1;
            assert_eq!(
                sliced.buckets().iter().map(|b| b.count).sum::<u32>() as usize,
                sliced.done()
            );
        }
        assert_eq!(steps, 26, "{mode:?}");
        assert_eq!(sliced.buckets(), whole, "{mode:?} {sched:?}");
        // And both agree with the traces themselves.
        let packets = lab::lab_packets(&t, &o, 257, 9, long_lived);
        let delivered = lab::run(&c, (mode, sched), &packets, replay::Code::ALL)
            .iter()
            .filter(|tr| matches!(tr.outcome, kpv_core::net::trace::Outcome::Delivered { .. }))
            .count() as u32;
        let counted: u32 = whole
            .iter()
            .filter(|b| b.landing == lab::Landing::Delivered)
            .map(|b| b.count)
            .sum();
        assert_eq!(counted, delivered, "{mode:?}");
    }
}

#[test]
fn lab_buckets_name_what_happened() {
    let c = scenario("no-endpoints");
    let t = replay::targets(&c, kpv_core::session::replay::Code::ALL.http)
        .into_iter()
        .next()
        .unwrap();
    let o = replay::default_origin(&c, &t);
    let d = lab::distribution(&c, &run(Mode::Iptables, None, &t, &o, 20, 1, false));
    assert!(!d.is_empty());
    assert!(
        d.iter().all(|b| b.landing != lab::Landing::Delivered),
        "{d:?}"
    );
    assert_eq!(d.iter().map(|b| b.count).sum::<u32>(), 20);
}
