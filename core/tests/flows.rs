//! One packet-flow table, kube-proxy style, run through every mode.
//!
//! Rows are {name, source IP, dest IP, dest port} → every endpoint the packet
//! could reach ("10.244.1.2:8080, 10.244.2.2:8080"), "REJECT", "DROP" or
//! "none" (no kube-proxy rule took it), plus whether it is masqueraded, over
//! `tests/scenarios/packet-flows.yaml` seen from node-a. The invariant: the
//! iptables, IPVS and nftables modes AGREE on every row, except where real
//! kube-proxy modes genuinely differ; each such difference is an explicit
//! [`Except`] with the reason, never a silent skip. The userspace proxy has
//! its own, smaller table at the end.

use kpv_core::model::packet::{IpFamily, Packet, Protocol};
use kpv_core::model::Mode;
use kpv_core::net::modes::{self, AllAnswer, Dataplane, Hook, NodeOutcome, NodeState, Verdict};
use kpv_core::net::proxy::build_input;
use kpv_core::util::choose::Chooser;
use std::net::{IpAddr, SocketAddr};

const SCENARIO: &str = include_str!("../../tests/scenarios/packet-flows.yaml");
const NODE_IPS: [&str; 2] = ["192.168.0.2", "2001:db8::2"];

/// A documented difference between real kube-proxy modes.
struct Except {
    mode: Mode,
    out: &'static str,
    masq: bool,
    why: &'static str,
}

struct Row {
    name: &'static str,
    src: &'static str,
    dst: &'static str,
    port: u16,
    out: &'static str,
    masq: bool,
    except: &'static [Except],
}

const fn row(
    name: &'static str,
    src: &'static str,
    dst: &'static str,
    port: u16,
    out: &'static str,
    masq: bool,
) -> Row {
    Row {
        name,
        src,
        dst,
        port,
        out,
        masq,
        except: &[],
    }
}

const POD: &str = "10.244.1.100";
const POD6: &str = "fd00:10:244:1::100";
const NODE: &str = "192.168.0.2";
const NODE6: &str = "2001:db8::2";
const CLIENT: &str = "198.51.100.7"; // inside loadBalancerSourceRanges
const OUTSIDER: &str = "203.0.113.7"; // outside them
const CLIENT6: &str = "2001:db8:ff::7";

const BOTH_CLUSTER_IP: &str = "10.244.1.2:8080, 10.244.2.2:8080";
const BOTH_NODE_PORT: &str = "10.244.1.3:8080, 10.244.2.3:8080";
const BOTH_LB: &str = "10.244.1.4:8080, 10.244.2.4:8080";
const BOTH_ETP: &str = "10.244.1.6:8080, 10.244.2.6:8080";
const BOTH_V6: &str = "[fd00:10:244:1::2]:8080, [fd00:10:244:2::2]:8080";

static ROWS: &[Row] = &[
    // ClusterIP
    row(
        "pod to ClusterIP",
        POD,
        "10.96.0.10",
        80,
        BOTH_CLUSTER_IP,
        false,
    ),
    row(
        "node to ClusterIP",
        NODE,
        "10.96.0.10",
        80,
        BOTH_CLUSTER_IP,
        true,
    ),
    row(
        "external to ClusterIP",
        CLIENT,
        "10.96.0.10",
        80,
        BOTH_CLUSTER_IP,
        true,
    ),
    Row {
        except: &[
            Except {
                mode: Mode::Ipvs,
                out: "REJECT",
                masq: false,
                why: "the ClusterIP is bound on kube-ipvs0; KUBE-IPVS-FILTER rejects new \
                      connections to a kube-ipvs0 address that is no service ip:port",
            },
            Except {
                mode: Mode::Nftables,
                out: "REJECT",
                masq: false,
                why: "nftables' cluster-ips-check rejects traffic to a ClusterIP on a port \
                      no Service uses",
            },
        ],
        ..row(
            "pod to ClusterIP, unknown port",
            POD,
            "10.96.0.10",
            81,
            "none",
            false,
        )
    },
    Row {
        except: &[Except {
            mode: Mode::Nftables,
            out: "DROP",
            masq: false,
            why: "nftables drops traffic to an unallocated address of the service CIDR \
                  (cluster-ips-check); iptables and IPVS know no service CIDR",
        }],
        ..row(
            "pod to unallocated ClusterIP",
            POD,
            "10.96.0.99",
            80,
            "none",
            false,
        )
    },
    // NodePort
    row(
        "external to NodePort",
        CLIENT,
        NODE,
        30011,
        BOTH_NODE_PORT,
        true,
    ),
    row(
        "node to own NodePort",
        NODE,
        NODE,
        30011,
        BOTH_NODE_PORT,
        true,
    ),
    row("pod to NodePort", POD, NODE, 30011, BOTH_NODE_PORT, true),
    row(
        "external to unknown NodePort",
        CLIENT,
        NODE,
        30999,
        "none",
        false,
    ),
    Row {
        except: &[
            Except {
                mode: Mode::Nftables,
                out: "none",
                masq: false,
                why: "nftables NodePorts only listen on nodePortAddresses (default: the \
                      primary IP), never on localhost (route_localnet is an iptables-only hack)",
            },
            Except {
                mode: Mode::Ipvs,
                out: "none",
                masq: false,
                why: "IPVS creates NodePort virtual servers for the node's addresses only, \
                      not 127.0.0.1 (kube-proxy IPVS has no localhost NodePorts)",
            },
        ],
        ..row(
            "localhost NodePort",
            "127.0.0.1",
            "127.0.0.1",
            30011,
            BOTH_NODE_PORT,
            true,
        )
    },
    // LoadBalancer with loadBalancerSourceRanges
    row(
        "allowed client to LB IP",
        CLIENT,
        "192.0.2.12",
        80,
        BOTH_LB,
        true,
    ),
    row(
        "disallowed client to LB IP",
        OUTSIDER,
        "192.0.2.12",
        80,
        "DROP",
        false,
    ),
    row(
        "disallowed client to LB's NodePort",
        OUTSIDER,
        NODE,
        30012,
        BOTH_LB,
        true,
    ),
    row(
        "pod to LB IP (not in source ranges)",
        POD,
        "192.0.2.12",
        80,
        "DROP",
        false,
    ),
    row(
        "LB ClusterIP ignores source ranges",
        OUTSIDER,
        "10.96.0.12",
        80,
        BOTH_LB,
        true,
    ),
    // externalIPs
    row(
        "external to externalIP",
        CLIENT,
        "192.0.2.13",
        80,
        "10.244.2.5:8080",
        true,
    ),
    row(
        "pod to externalIP",
        POD,
        "192.0.2.13",
        80,
        "10.244.2.5:8080",
        true,
    ),
    // externalTrafficPolicy: Local, endpoints on both nodes
    row(
        "external to eTP Local LB IP",
        CLIENT,
        "192.0.2.14",
        80,
        "10.244.1.6:8080",
        false,
    ),
    row(
        "external to eTP Local NodePort",
        CLIENT,
        NODE,
        30014,
        "10.244.1.6:8080",
        false,
    ),
    Row {
        except: &[Except {
            mode: Mode::Ipvs,
            out: "10.244.1.6:8080",
            masq: false,
            why: "IPVS cannot tell sources apart: the LB IP's virtual server has only the \
                  local endpoints (syncEndpoint with onlyNodeLocalEndpoints), for Pods too; \
                  iptables/nftables short-circuit Pod traffic to the cluster endpoints",
        }],
        ..row(
            "pod to eTP Local LB IP: cluster endpoints",
            POD,
            "192.0.2.14",
            80,
            BOTH_ETP,
            false,
        )
    },
    Row {
        except: &[Except {
            mode: Mode::Ipvs,
            out: "10.244.1.6:8080",
            masq: false,
            why: "the NodePort virtual server has only local endpoints and \
                  KUBE-NODE-PORT-LOCAL-TCP RETURNs before KUBE-MARK-MASQ; iptables/nftables \
                  send node-local traffic to cluster endpoints, masqueraded",
        }],
        ..row(
            "node to eTP Local NodePort: cluster, masq",
            NODE,
            NODE,
            30014,
            BOTH_ETP,
            true,
        )
    },
    row(
        "external to eTP Local ClusterIP",
        CLIENT,
        "10.96.0.14",
        80,
        BOTH_ETP,
        true,
    ),
    row(
        "health check NodePort is the node's",
        CLIENT,
        NODE,
        32014,
        "none",
        false,
    ),
    // externalTrafficPolicy: Local, the only endpoint on node-b
    Row {
        except: &[Except {
            mode: Mode::Ipvs,
            out: "10.244.2.7:8080",
            masq: false,
            why: "kube-proxy IPVS syncEndpoint falls back to all cluster endpoints when a \
                  Local policy has no local endpoint (kubernetes#97081), without masquerade",
        }],
        ..row(
            "external to eTP Local NodePort, no local endpoint",
            CLIENT,
            NODE,
            30015,
            "DROP",
            false,
        )
    },
    row(
        "pod to eTP Local NodePort, no local endpoint",
        POD,
        NODE,
        30015,
        "10.244.2.7:8080",
        false,
    ),
    // internalTrafficPolicy: Local
    row(
        "pod to iTP Local",
        POD,
        "10.96.0.16",
        80,
        "10.244.1.8:8080",
        false,
    ),
    row(
        "node to iTP Local",
        NODE,
        "10.96.0.16",
        80,
        "10.244.1.8:8080",
        true,
    ),
    Row {
        except: &[Except {
            mode: Mode::Ipvs,
            out: "REJECT",
            masq: false,
            why: "IPVS syncEndpoint's #97081 fallback takes the cluster endpoints, but a \
                  ClusterIP-only Service with iTP Local has none (UsesClusterEndpoints is \
                  false): the virtual server has no real server and the connection is \
                  refused, where iptables/nftables DROP (\"has no local endpoints\")",
        }],
        ..row(
            "pod to iTP Local, no local endpoint",
            POD,
            "10.96.0.17",
            80,
            "DROP",
            false,
        )
    },
    // Terminating endpoints
    row(
        "serving-terminating fallback",
        POD,
        "10.96.0.18",
        80,
        "10.244.1.10:8080",
        false,
    ),
    // No endpoints
    row(
        "pod to Service without endpoints",
        POD,
        "10.96.0.19",
        80,
        "REJECT",
        false,
    ),
    row(
        "external to NodePort without endpoints",
        CLIENT,
        NODE,
        30019,
        "REJECT",
        false,
    ),
    // Session affinity: the first connection is balanced as usual
    row(
        "pod to ClientIP-affinity Service",
        POD,
        "10.96.0.20",
        80,
        "10.244.1.11:8080, 10.244.2.11:8080",
        false,
    ),
    // Hairpin: a Pod reaching itself through its Service is masqueraded
    row(
        "hairpin",
        "10.244.1.12",
        "10.96.0.21",
        80,
        "10.244.1.12:8080",
        true,
    ),
    // IPv6
    row(
        "IPv6 pod to ClusterIP",
        POD6,
        "fd00:10:96::22",
        80,
        BOTH_V6,
        false,
    ),
    row(
        "IPv6 node to ClusterIP",
        NODE6,
        "fd00:10:96::22",
        80,
        BOTH_V6,
        true,
    ),
    row(
        "IPv6 external to NodePort",
        CLIENT6,
        NODE6,
        30022,
        BOTH_V6,
        true,
    ),
];

fn dataplane(mode: Mode, family: IpFamily) -> Box<dyn Dataplane> {
    let (mut cluster, diags) = kpv_core::Code::ALL.parse(SCENARIO);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    cluster.proxy.mode = mode;
    let input = build_input(&cluster, &cluster.endpoint_slices, "node-a", family)
        .expect("node-a has addresses of both families");
    modes::Compilers::ALL.compile(mode, &input, Default::default())
}

fn ip(s: &str) -> IpAddr {
    s.parse().expect("test IP")
}

fn run(dp: &dyn Dataplane, r: &Row) -> NodeOutcome {
    let src = ip(r.src);
    let hook = if src.is_loopback() || NODE_IPS.iter().any(|n| ip(n) == src) {
        Hook::Output
    } else {
        Hook::Prerouting
    };
    let pkt = Packet::new(
        SocketAddr::new(src, 40000),
        SocketAddr::new(ip(r.dst), r.port),
        Protocol::Tcp,
    );
    dp.process(
        &pkt,
        hook,
        &mut NodeState::default(),
        &mut Chooser::new(3),
        &AllAnswer,
        0,
    )
}

/// The row's output word: sorted candidates, REJECT, DROP or none.
fn output_of(o: &NodeOutcome) -> String {
    match &o.verdict {
        Verdict::Dnat { endpoint } | Verdict::Proxied { endpoint, .. } => {
            assert!(
                o.candidates.contains(endpoint),
                "{endpoint} not a candidate"
            );
            let mut c: Vec<SocketAddr> = o.candidates.clone();
            c.sort();
            c.iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        }
        Verdict::Drop { .. } => "DROP".into(),
        Verdict::Reject { .. } => "REJECT".into(),
        // The health-check NodePort ACCEPT and "untouched" both leave the
        // packet to the node's own stack.
        Verdict::None | Verdict::Accept => "none".into(),
    }
}

/// Run the rows in `mode`; return a failure report per mismatching row,
/// listing the matched rules so the difference can be read.
fn check(mode: Mode, rows: &[Row]) -> Vec<String> {
    let v4 = dataplane(mode, IpFamily::V4);
    let v6 = dataplane(mode, IpFamily::V6);
    let mut failures = Vec::new();
    for r in rows {
        let dp = if ip(r.dst).is_ipv6() { &v6 } else { &v4 };
        let (want, want_masq) = match r.except.iter().find(|e| e.mode == mode) {
            Some(e) => (e.out, e.masq),
            None => (r.out, r.masq),
        };
        let o = run(dp.as_ref(), r);
        let got = output_of(&o);
        let masq_matters = !matches!(want, "DROP" | "REJECT" | "none");
        if got != want || (masq_matters && o.masquerade != want_masq) {
            let steps: Vec<String> = o
                .steps
                .iter()
                .map(|s| format!("      {}: {}", s.table_chain, s.rule))
                .collect();
            failures.push(format!(
                "{mode:?} / {}: {} -> {}:{}\n    want {want:?} masq {want_masq}\n    got  {got:?} masq {}\n    steps:\n{}",
                r.name,
                r.src,
                r.dst,
                r.port,
                o.masquerade,
                steps.join("\n")
            ));
        }
    }
    failures
}

fn assert_mode(mode: Mode) {
    let failures = check(mode, ROWS);
    assert!(
        failures.is_empty(),
        "{} of {} rows differ:\n{}",
        failures.len(),
        ROWS.len(),
        failures.join("\n")
    );
}

#[test]
fn iptables_flows() {
    assert_mode(Mode::Iptables);
}

#[test]
fn ipvs_flows() {
    assert_mode(Mode::Ipvs);
}

#[test]
fn nftables_flows() {
    assert_mode(Mode::Nftables);
}

#[test]
fn exceptions_are_documented_and_real() {
    // Every exception names a rule-based mode other than iptables (the
    // reference), says why, and really differs from the row's default.
    for r in ROWS {
        for e in r.except {
            assert!(matches!(e.mode, Mode::Ipvs | Mode::Nftables), "{}", r.name);
            assert!(e.why.len() > 40, "{}: say why", r.name);
            assert!(
                e.out != r.out || e.masq != r.masq,
                "{}: no difference",
                r.name
            );
        }
    }
    // And the three modes agree on every row without an exception.
    let plain: Vec<&Row> = ROWS.iter().filter(|r| r.except.is_empty()).collect();
    assert!(plain.len() * 4 > ROWS.len() * 3, "too many exceptions");
    for r in plain {
        let outs: Vec<String> = [Mode::Iptables, Mode::Ipvs, Mode::Nftables]
            .into_iter()
            .map(|m| {
                let dp = dataplane(m, IpFamily::of(&ip(r.dst)));
                output_of(&run(dp.as_ref(), r))
            })
            .collect();
        assert!(
            outs.windows(2).all(|w| w[0] == w[1]),
            "{}: {outs:?}",
            r.name
        );
    }
}

/// The userspace proxy: where it is meaningful it reaches the same endpoints,
/// but it proxies (the backend always sees the node as source) and it predates
/// traffic policies and terminating endpoints.
#[test]
fn userspace_flows() {
    struct U {
        name: &'static str,
        src: &'static str,
        dst: &'static str,
        port: u16,
        out: &'static str,
    }
    let rows = [
        U {
            name: "pod to ClusterIP",
            src: POD,
            dst: "10.96.0.10",
            port: 80,
            out: BOTH_CLUSTER_IP,
        },
        U {
            name: "external to NodePort",
            src: CLIENT,
            dst: NODE,
            port: 30011,
            out: BOTH_NODE_PORT,
        },
        U {
            name: "allowed client to LB IP",
            src: CLIENT,
            dst: "192.0.2.12",
            port: 80,
            out: BOTH_LB,
        },
        U {
            name: "external to externalIP",
            src: CLIENT,
            dst: "192.0.2.13",
            port: 80,
            out: "10.244.2.5:8080",
        },
        U {
            name: "pod to Service without endpoints",
            src: POD,
            dst: "10.96.0.19",
            port: 80,
            out: "REJECT",
        },
        U {
            name: "IPv6 pod to ClusterIP",
            src: POD6,
            dst: "fd00:10:96::22",
            port: 80,
            out: BOTH_V6,
        },
    ];
    let v4 = dataplane(Mode::Userspace, IpFamily::V4);
    let v6 = dataplane(Mode::Userspace, IpFamily::V6);
    let mut failures = Vec::new();
    for u in rows {
        let r = row(u.name, u.src, u.dst, u.port, u.out, false);
        let dp = if ip(r.dst).is_ipv6() { &v6 } else { &v4 };
        let o = run(dp.as_ref(), &r);
        let got = output_of(&o);
        if got != u.out {
            failures.push(format!(
                "{}: want {:?} got {got:?}\n  {:#?}",
                u.name, u.out, o.steps
            ));
        }
        if let Verdict::Proxied { source, .. } = o.verdict {
            assert!(
                NODE_IPS.iter().any(|n| ip(n) == source.ip()),
                "{}: the proxy dials from the node, not {source}",
                u.name
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
