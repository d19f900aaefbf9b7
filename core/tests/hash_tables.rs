//! The consistent-hash tables a node picks backends from, as the app's
//! Maglev view shows them: every slot of M belongs to one backend, the
//! shares are as even as Maglev makes them, and they follow the backends.
#![cfg(feature = "hash-tables")]

use kpv_core::model::packet::IpFamily;
use kpv_core::model::{Mode, Scheduler};
use kpv_core::net::modes::hash_table::HashTable;
use kpv_core::net::modes::{node_planes, CompileOptions};

const CILIUM: &str = include_str!("../../tests/scenarios/cilium.yaml");
const FLOWS: &str = include_str!("../../tests/scenarios/packet-flows.yaml");

fn tables(text: &str, node: &str, mode: Mode, opts: CompileOptions) -> Vec<HashTable> {
    let (cluster, diags) = kpv_core::Code::ALL.parse(text);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    // The slices kube-proxy has synced once every Pod is Ready.
    let synced = kpv_core::net::controller::steady_slices(&cluster);
    let planes = node_planes(
        &cluster,
        &synced,
        node,
        mode,
        opts,
        kpv_core::Code::ALL.compilers,
    );
    planes
        .iter()
        .filter(|(f, _)| *f == IpFamily::V4)
        .flat_map(|(_, dp)| dp.hash_tables())
        .collect()
}

fn slots(t: &HashTable) -> Vec<usize> {
    let mut s: Vec<usize> = t.shares.iter().map(|s| s.slots).collect();
    s.sort_unstable();
    s
}

#[test]
fn cilium_preset_tables_fill_all_1021_slots_among_three_backends() {
    let t = tables(CILIUM, "worker-1", Mode::Cilium, Default::default());
    let fronts: Vec<String> = t.iter().map(|t| t.frontend.to_string()).collect();
    // NodePort on the node's address and the load balancer's address; the
    // ClusterIP (no `bpf-lb-external-clusterip`) and the `0.0.0.0`
    // surrogate pick at random.
    assert_eq!(fronts, ["192.168.49.11:30080", "203.0.113.10:80"]);
    for t in &t {
        assert_eq!(t.size, 1021);
        assert_eq!(t.filled(), 1021);
        assert_eq!(slots(t), [340, 340, 341]);
    }
}

#[test]
fn a_backend_gone_leaves_its_slots_to_the_others() {
    // web-3 deleted: its Pod's document dropped.
    let text: Vec<&str> = CILIUM
        .split("\n---\n")
        .filter(|d| !d.contains("name: web-3"))
        .collect();
    let t = tables(
        &text.join("\n---\n"),
        "worker-1",
        Mode::Cilium,
        Default::default(),
    );
    assert_eq!(t.len(), 2);
    for t in &t {
        assert_eq!(t.filled(), 1021);
        assert_eq!(slots(t), [510, 511]);
        assert!(t
            .shares
            .iter()
            .all(|s| s.backend.ip().to_string() != "10.244.2.5"));
    }
}

#[test]
fn ipvs_mh_has_a_table_per_virtual_server_and_other_schedulers_none() {
    let mh = CompileOptions {
        scheduler: Some(Scheduler::Mh),
    };
    let t = tables(FLOWS, "node-a", Mode::Ipvs, mh);
    assert!(!t.is_empty());
    for t in &t {
        assert_eq!(t.size, 4093, "{}", t.frontend);
        assert_eq!(t.filled(), t.size, "{}", t.frontend);
        let s = slots(t);
        // Equal weights: shares differ by at most one turn's worth.
        let (lo, hi) = (s[0], s[s.len() - 1]);
        assert!(hi - lo <= 1, "{}: {s:?}", t.frontend);
    }
    for mode in [Mode::Iptables, Mode::Nftables] {
        assert!(tables(FLOWS, "node-a", mode, Default::default()).is_empty());
    }
    let rr = CompileOptions {
        scheduler: Some(Scheduler::Rr),
    };
    assert!(tables(FLOWS, "node-a", Mode::Ipvs, rr).is_empty());
}
