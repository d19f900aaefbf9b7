//! The kernel's IPVS schedulers, checked against hand-computed expectations
//! from net/netfilter/ipvs/ip_vs_*.c (list order = most recently added first).

use kpv_core::net::modes::ipvs::sched::{self, Dest, WrrMark};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

fn sa(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn abc(weights: [i32; 3]) -> Vec<Dest> {
    vec![
        Dest::new(sa("10.244.0.1:80"), weights[0]),
        Dest::new(sa("10.244.0.2:80"), weights[1]),
        Dest::new(sa("10.244.0.3:80"), weights[2]),
    ]
}

#[test]
fn rr_cycles_in_list_order_and_skips_weight_zero() {
    let d = abc([1, 1, 1]);
    let mut cur = None;
    let picks: Vec<usize> = (0..7).map(|_| sched::rr(&d, &mut cur).unwrap()).collect();
    assert_eq!(picks, vec![0, 1, 2, 0, 1, 2, 0]);

    let d = abc([1, 0, 1]);
    let mut cur = None;
    let picks: Vec<usize> = (0..4).map(|_| sched::rr(&d, &mut cur).unwrap()).collect();
    assert_eq!(picks, vec![0, 2, 0, 2]);

    // Nothing available: NULL, cursor unchanged.
    let d = abc([0, 0, 0]);
    let mut cur = Some(1);
    assert_eq!(sched::rr(&d, &mut cur), None);
    assert_eq!(cur, Some(1));
    assert_eq!(sched::rr(&[], &mut None), None);
}

#[test]
fn rr_weights_above_one_are_ignored() {
    let d = abc([5, 1, 1]);
    let mut cur = None;
    let picks: Vec<usize> = (0..6).map(|_| sched::rr(&d, &mut cur).unwrap()).collect();
    assert_eq!(picks, vec![0, 1, 2, 0, 1, 2]);
}

#[test]
fn wrr_with_weights_4_3_2() {
    let d = abc([4, 3, 2]);
    // ip_vs_wrr_init_svc with all dests present: cw = mw = 4.
    let mut mark = WrrMark { cl: None, cw: 4 };
    let picks: Vec<usize> = (0..18)
        .map(|_| sched::wrr(&d, &mut mark).unwrap())
        .collect();
    let cycle = vec![0, 0, 1, 0, 1, 2, 0, 1, 2];
    assert_eq!(picks[..9], cycle[..]);
    assert_eq!(picks[9..], cycle[..]);
    let count = |k| picks.iter().filter(|&&p| p == k).count();
    assert_eq!((count(0), count(1), count(2)), (8, 6, 4));
}

#[test]
fn wrr_after_incremental_adds_starts_at_cw_1() {
    // kube-proxy creates the VS empty and adds dests one by one (oldest is
    // last in the list): C(2) → cw=mw=1; B(3), A(4) leave cw=1 (dest_changed
    // only resets cw when it is 0 or above mw).
    let d = abc([4, 3, 2]);
    let mut mark = sched::wrr_mark_after_adds(&d);
    assert_eq!(mark, WrrMark { cl: None, cw: 1 });
    let picks: Vec<usize> = (0..12)
        .map(|_| sched::wrr(&d, &mut mark).unwrap())
        .collect();
    assert_eq!(picks, vec![0, 1, 2, 0, 0, 1, 0, 1, 2, 0, 1, 2]);
}

#[test]
fn wrr_all_weight_one_is_rr_and_gcd_steps() {
    let d = abc([1, 1, 1]);
    let mut mark = sched::wrr_mark_after_adds(&d);
    let picks: Vec<usize> = (0..6).map(|_| sched::wrr(&d, &mut mark).unwrap()).collect();
    assert_eq!(picks, vec![0, 1, 2, 0, 1, 2]);
    // gcd 2: weights 4,2 → di=2, mw=3: cw 3 → A; cw 1 → A, B.
    let d = vec![
        Dest::new(sa("10.0.0.1:1"), 4),
        Dest::new(sa("10.0.0.2:1"), 2),
    ];
    assert_eq!(sched::wrr_gcd_weight(&d), 2);
    let mut mark = WrrMark { cl: None, cw: 3 };
    let picks: Vec<usize> = (0..6).map(|_| sched::wrr(&d, &mut mark).unwrap()).collect();
    assert_eq!(picks, vec![0, 0, 1, 0, 0, 1]);
    assert_eq!(sched::wrr(&abc([0, 0, 0]), &mut WrrMark::default()), None);
}

#[test]
fn lc_least_overhead_ties_to_list_order() {
    // overhead = active*256 + inactive: A 256, B 300, C 256 → A (tie with C).
    let d = vec![
        Dest::new(sa("10.0.0.1:1"), 1).with_conns(1, 0),
        Dest::new(sa("10.0.0.2:1"), 1).with_conns(0, 300),
        Dest::new(sa("10.0.0.3:1"), 1).with_conns(1, 0),
    ];
    assert_eq!(sched::lc(&d), Some(0));
    // 255 inactive conns weigh less than one active one.
    let d = vec![
        Dest::new(sa("10.0.0.1:1"), 1).with_conns(1, 0),
        Dest::new(sa("10.0.0.2:1"), 1).with_conns(0, 255),
    ];
    assert_eq!(sched::lc(&d), Some(1));
    // lc ignores weights but skips weight 0.
    let d = vec![
        Dest::new(sa("10.0.0.1:1"), 0),
        Dest::new(sa("10.0.0.2:1"), 1).with_conns(5, 5),
    ];
    assert_eq!(sched::lc(&d), Some(1));
}

#[test]
fn wlc_overhead_over_weight() {
    // A: 256/1, B: 512/3 → 256*3 > 512*1 → B.
    let d = vec![
        Dest::new(sa("10.0.0.1:1"), 1).with_conns(1, 0),
        Dest::new(sa("10.0.0.2:1"), 3).with_conns(2, 0),
    ];
    assert_eq!(sched::wlc(&d), Some(1));
    // Equal ratio: strict '>' keeps the earlier one.
    let d = vec![
        Dest::new(sa("10.0.0.1:1"), 1).with_conns(1, 0),
        Dest::new(sa("10.0.0.2:1"), 2).with_conns(2, 0),
    ];
    assert_eq!(sched::wlc(&d), Some(0));
    // A weight-0 dest can never win.
    let d = vec![
        Dest::new(sa("10.0.0.1:1"), 1).with_conns(9, 0),
        Dest::new(sa("10.0.0.2:1"), 0),
    ];
    assert_eq!(sched::wlc(&d), Some(0));
}

#[test]
fn sed_and_nq() {
    // sed: A (2+1)/1 = 3, B (5+1)/3 = 2 → B; inactive conns do not count.
    let d = vec![
        Dest::new(sa("10.0.0.1:1"), 1).with_conns(2, 0),
        Dest::new(sa("10.0.0.2:1"), 3).with_conns(5, 1000),
    ];
    assert_eq!(sched::sed(&d), Some(1));
    assert_eq!(sched::nq(&d), Some(1));
    // nq: an idle server wins at once even with a worse ratio; sed does not.
    let d = vec![
        Dest::new(sa("10.0.0.1:1"), 10).with_conns(1, 0),
        Dest::new(sa("10.0.0.2:1"), 1).with_conns(0, 50),
    ];
    assert_eq!(sched::sed(&d), Some(0)); // 2/10 < 1/1
    assert_eq!(sched::nq(&d), Some(1));
}

#[test]
fn sh_buckets_and_hash() {
    // hash_32(addr, 8): 10.0.0.1 → 39, 192.168.5.5 → 50 (computed by hand).
    assert_eq!(sched::sh_hashkey(ip("10.0.0.1"), 0, 0), 39);
    assert_eq!(sched::sh_hashkey(ip("192.168.5.5"), 0, 0), 50);
    // Weights fill consecutive buckets: A=2, B=1 → A A B A A B …
    let d = vec![
        Dest::new(sa("10.0.0.1:1"), 2),
        Dest::new(sa("10.0.0.2:1"), 1),
    ];
    let t = sched::sh_table(&d);
    assert_eq!(
        &t[..6],
        &[Some(0), Some(0), Some(1), Some(0), Some(0), Some(1)]
    );
    // Three equal dests: bucket 39 → 39 % 3 = 0, bucket 50 → 2.
    let d = abc([1, 1, 1]);
    assert_eq!(sched::sh(&d, ip("10.0.0.1")), Some(0));
    assert_eq!(sched::sh(&d, ip("192.168.5.5")), Some(2));
}

#[test]
fn sh_is_stable_per_source_and_spreads() {
    let d = abc([1, 1, 1]);
    let mut seen: BTreeMap<usize, usize> = BTreeMap::new();
    for i in 0..200u32 {
        let src = IpAddr::from(std::net::Ipv4Addr::from(0x0a00_0000 + i * 7919));
        let a = sched::sh(&d, src).unwrap();
        assert_eq!(sched::sh(&d, src), Some(a), "same source, same server");
        *seen.entry(a).or_default() += 1;
    }
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen.values().all(|&n| n > 30), "{seen:?}");
    // An unavailable bucket owner gives NULL (no fallback flag from kube-proxy).
    let d = abc([0, 1, 1]);
    assert_eq!(sched::sh(&d, ip("10.0.0.1")), None);
}

#[test]
fn dh_hashes_the_destination() {
    // (addr * 2654435761) & 0xff: 10.96.0.10 → 234, 10.0.0.1 → 177.
    assert_eq!(sched::dh_hashkey(ip("10.96.0.10")), 234);
    assert_eq!(sched::dh_hashkey(ip("10.0.0.1")), 177);
    let d = abc([1, 1, 1]);
    assert_eq!(sched::dh(&d, ip("10.96.0.10")), Some(234 % 3));
    assert_eq!(sched::dh(&d, ip("10.0.0.1")), Some(177 % 3));
    let mut seen = std::collections::BTreeSet::new();
    for i in 0..64u32 {
        let dst = IpAddr::from(std::net::Ipv4Addr::from(0x0a60_0000 + i));
        let a = sched::dh(&d, dst).unwrap();
        assert_eq!(sched::dh(&d, dst), Some(a));
        seen.insert(a);
    }
    assert_eq!(seen.len(), 3);
}

#[test]
fn hsiphash_matches_the_python_reference() {
    // /tmp/research/siphash_check.py (SipHash-1-3, validated on the
    // official SipHash-2-4 vectors).
    assert_eq!(sched::hsiphash_u32(0, sched::MH_HASH1), 492_468_162);
    assert_eq!(sched::hsiphash_u32(0, sched::MH_HASH2), 4_169_286_463);
    assert_eq!(sched::hsiphash_u32(1, sched::MH_HASH1), 384_591_538);
    assert_eq!(sched::mh_offset_skip(sa("10.244.1.5:8080")), (2688, 2769));
    assert_eq!(sched::mh_offset_skip(sa("10.244.2.7:8080")), (808, 2829));
}

#[test]
fn mh_table_properties() {
    let d = abc([1, 1, 1]);
    let t = sched::mh_table(&d);
    assert_eq!(t.len(), sched::MH_TAB_SIZE);
    assert!(t.iter().all(Option::is_some), "every slot is filled");
    let count = |t: &[Option<usize>], k| t.iter().filter(|s| **s == Some(k)).count();
    // Equal weights claim slots round robin: 4093 = 1365 + 1364 + 1364.
    let c: Vec<usize> = (0..3).map(|k| count(&t, k)).collect();
    assert_eq!(c.iter().sum::<usize>(), 4093);
    assert!(c.iter().all(|&n| n == 1364 || n == 1365), "{c:?}");
    // Each dest's first slot is its offset.
    for (k, dest) in d.iter().enumerate() {
        let (offset, _) = sched::mh_offset_skip(dest.addr);
        if k == 0 {
            assert_eq!(t[offset], Some(0));
        }
    }
    // Weights 2:1 → two turns per round for A.
    let w = vec![
        Dest::new(sa("10.0.0.1:80"), 2),
        Dest::new(sa("10.0.0.2:80"), 1),
    ];
    let tw = sched::mh_table(&w);
    assert_eq!((count(&tw, 0), count(&tw, 1)), (2729, 1364));
    // Minimal disruption: dropping C keeps most of A's and B's slots.
    let t2 = sched::mh_table(&d[..2]);
    let kept = (0..sched::MH_TAB_SIZE)
        .filter(|&i| matches!(t[i], Some(0) | Some(1)))
        .filter(|&i| t2[i] == t[i])
        .count();
    let before = count(&t, 0) + count(&t, 1);
    assert!(kept * 10 >= before * 8, "kept {kept} of {before}");
    // Empty or all-zero last_weight: empty table → NULL.
    assert!(sched::mh_table(&abc([0, 0, 0])).iter().all(Option::is_none));
    assert_eq!(sched::mh(&[], ip("10.0.0.1"), 1234), None);
}

#[test]
fn mh_is_stable_and_hashes_the_source_port() {
    let d = abc([1, 1, 1]);
    let t = sched::mh_table(&d);
    let a = sched::mh_with_table(&d, &t, ip("192.168.5.5"), 40000);
    assert_eq!(sched::mh(&d, ip("192.168.5.5"), 40000), a);
    let mut seen = std::collections::BTreeSet::new();
    for port in 40000..40064 {
        seen.insert(sched::mh_with_table(&d, &t, ip("192.168.5.5"), port).unwrap());
    }
    assert_eq!(seen.len(), 3, "source port is part of the hash");
    // A weight-0 dest keeps its slots (built from last_weight) but is
    // unavailable: connections hashing there get NULL.
    let mut q = d.clone();
    q[0].weight = 0;
    let tq = sched::mh_table(&q);
    assert_eq!(tq, t);
    let hit = (40000..41000)
        .find(|&p| sched::mh_with_table(&d, &t, ip("192.168.5.5"), p) == Some(0))
        .unwrap();
    assert_eq!(sched::mh_with_table(&q, &tq, ip("192.168.5.5"), hit), None);
}
