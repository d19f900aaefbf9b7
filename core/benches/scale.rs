//! Scaling benchmarks (criterion): synthetic clusters of 1,000 / 5,000 /
//! 10,000 Services × 10 endpoints, given as EndpointSlices so no Pods are
//! needed. Measured for iptables, IPVS, nftables and userspace:
//!
//! * `compile/<mode>/<n>`: one node's data plane (`kpv_core::net::modes::compile`)
//!   from an already built `ProxyInput`; budget 100 ms at 10,000 Services.
//! * `process/<mode>/<n>`: the first packet of a connection to the *last*
//!   Service (the end of iptables' linear `KUBE-SERVICES` walk); budget 50 µs.
//!   `process-affinity/<mode>/10000`: the same with `sessionAffinity:
//!   ClientIP` on every Service.
//! * `render/<mode>/<n>`: the first `render_text` of a freshly compiled data
//!   plane (compiling counts line numbers only; the text is written when
//!   first asked for); no budget, shown so the cost is not hidden.
//! * `parse/1000`: `kpv_core::model::parse` of the 1,000-Service YAML.
//! * `routes/10000`: `kpv_core::http::compile` of 10,000 HTTPRoutes attached
//!   to one Gateway listener (the routing tables and every route's status);
//!   budget 300 ms.
//!
//! `cargo xtask bench` runs this and compares the figures with the budgets.
//! Sample sizes are small so the whole run takes a few minutes on two cores.

use criterion::measurement::WallTime;
use criterion::{
    criterion_group, criterion_main, BatchSize, BenchmarkGroup, BenchmarkId, Criterion,
};
use kpv_core::model::packet::{IpFamily, Packet, Protocol};
use kpv_core::model::{Input, Mode};
use kpv_core::net::modes::{self, AllAnswer, CompileOptions, Hook, NodeState, Verdict};
use kpv_core::net::proxy::{self, ProxyInput};
use kpv_core::util::choose::Chooser;
use std::fmt::Write as _;
use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;

const SIZES: [usize; 3] = [1_000, 5_000, 10_000];
const MODES: [Mode; 4] = [Mode::Iptables, Mode::Ipvs, Mode::Nftables, Mode::Userspace];
const ENDPOINTS: usize = 10;
const NODES: usize = 4;

/// ClusterIP of Service `i` in 172.30.0.0/16 (skipping the first few addresses).
fn service_ip(i: usize) -> Ipv4Addr {
    let k = i + 10;
    Ipv4Addr::new(172, 30, (k / 256) as u8, (k % 256) as u8)
}

/// Pod IP of endpoint `j` of Service `i`, in 10.0.0.0/8.
fn endpoint_ip(i: usize, j: usize) -> Ipv4Addr {
    let k = i * ENDPOINTS + j + 2;
    Ipv4Addr::new(
        10,
        1 + (k / 65_536) as u8,
        (k / 256 % 256) as u8,
        (k % 256) as u8,
    )
}

/// The cluster as YAML files: proxy configuration, ServiceCIDR, nodes, then
/// `n` selector-less Services each with one EndpointSlice of 10 ready
/// endpoints spread over the nodes. Split into files of at most 2,000 objects
/// (10,000 Services in one file would exceed the parser's 8 MiB and
/// 20,000-document limits), as `kpv rules a.yaml b.yaml ...` would read them.
fn cluster_yaml(n: usize, affinity: bool) -> Vec<String> {
    let mut objects: Vec<String> = vec![
        "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\n\
         hostnameOverride: node-0\nclusterCIDR: 10.0.0.0/8\n"
            .into(),
        "apiVersion: networking.k8s.io/v1\nkind: ServiceCIDR\nmetadata: {name: kubernetes}\n\
         spec: {cidrs: [172.30.0.0/16]}\n"
            .into(),
    ];
    for k in 0..NODES {
        objects.push(format!(
            "apiVersion: v1\nkind: Node\nmetadata: {{name: node-{k}}}\nspec: {{podCIDR: 10.{}.0.0/16}}\n\
             status:\n  addresses:\n  - {{type: InternalIP, address: 192.168.0.{}}}\n",
            200 + k,
            10 + k
        ));
    }
    for i in 0..n {
        objects.push(format!(
            "apiVersion: v1\nkind: Service\nmetadata: {{name: svc-{i:05}, namespace: bench}}\n\
             spec:\n{}  clusterIP: {}\n  ports:\n  - {{name: http, port: 80, targetPort: 8080, protocol: TCP}}\n",
            if affinity { "  sessionAffinity: ClientIP\n" } else { "" },
            service_ip(i)
        ));
        let mut s = format!(
            "apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: svc-{i:05}-a\n  \
             namespace: bench\n  labels: {{kubernetes.io/service-name: svc-{i:05}}}\n\
             addressType: IPv4\nports:\n- {{name: http, port: 8080, protocol: TCP}}\nendpoints:\n"
        );
        for j in 0..ENDPOINTS {
            let _ = writeln!(
                s,
                "- {{addresses: [\"{}\"], nodeName: node-{}, conditions: {{ready: true}}}}",
                endpoint_ip(i, j),
                (i + j) % NODES
            );
        }
        objects.push(s);
    }
    objects.chunks(2_010).map(|c| c.join("---\n")).collect()
}

/// node-0's kube-proxy input for a cluster of `n` Services.
fn input(n: usize, affinity: bool) -> ProxyInput {
    let files = cluster_yaml(n, affinity);
    let inputs: Vec<Input<'_>> = files.iter().map(|text| Input { text }).collect();
    let (cluster, diags) = kpv_core::Code::ALL.parse_files(&inputs);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:#?}");
    assert_eq!(cluster.services.len(), n);
    let input = proxy::build_input(&cluster, &cluster.endpoint_slices, "node-0", IpFamily::V4)
        .expect("node-0 has an IPv4 address");
    assert_eq!(input.services.len(), n);
    assert!(input.endpoints.values().all(|e| e.len() == ENDPOINTS));
    input
}

/// A Pod on node-0 opens a connection to the last Service.
fn packet_to_last(n: usize) -> Packet {
    Packet::new(
        SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 200, 0, 5)), 40_000),
        SocketAddr::new(IpAddr::V4(service_ip(n - 1)), 80),
        Protocol::Tcp,
    )
}

/// The first packet of a new connection to the last Service, in every mode.
fn process(c: &mut Criterion, group: &str, inputs: &[(usize, ProxyInput)]) {
    let mut g = c.benchmark_group(group);
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for mode in MODES {
        for (n, input) in inputs {
            let plane = modes::Compilers::ALL.compile(mode, input, CompileOptions::default());
            let pkt = packet_to_last(*n);
            // The packet really reaches one of the last Service's endpoints.
            let out = plane.process(
                &pkt,
                Hook::Prerouting,
                &mut NodeState::default(),
                &mut Chooser::new(7),
                &AllAnswer,
                0,
            );
            assert!(
                matches!(out.verdict, Verdict::Dnat { .. } | Verdict::Proxied { .. }),
                "{mode:?} {n}: {:?}",
                out.verdict
            );
            g.bench_with_input(BenchmarkId::new(mode.as_str(), n), &pkt, |b, pkt| {
                b.iter(|| {
                    let mut state = NodeState::default();
                    let mut chooser = Chooser::new(7);
                    plane.process(
                        black_box(pkt),
                        Hook::Prerouting,
                        &mut state,
                        &mut chooser,
                        &AllAnswer,
                        0,
                    )
                })
            });
        }
    }
    g.finish();
}

/// A group whose iterations take milliseconds (whole rulesets, a whole
/// parse): few samples, so the run stays within minutes on two cores.
fn slow_group<'a>(c: &'a mut Criterion, name: &str) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(name);
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3));
    g
}

fn scale(c: &mut Criterion) {
    let inputs: Vec<(usize, ProxyInput)> = SIZES.iter().map(|&n| (n, input(n, false))).collect();

    let mut g = slow_group(c, "compile");
    for mode in MODES {
        for (n, input) in &inputs {
            g.bench_with_input(BenchmarkId::new(mode.as_str(), n), input, |b, input| {
                // Freeing 100,000s of rules is not compiling: drop outside the timing.
                b.iter_with_large_drop(|| {
                    modes::Compilers::ALL.compile(mode, black_box(input), CompileOptions::default())
                })
            });
        }
    }
    g.finish();

    process(c, "process", &inputs);
    // ClientIP affinity: one affinity check per endpoint (and in nftables
    // one set per endpoint, 100,000 sets at this size).
    process(c, "process-affinity", &[(10_000, input(10_000, true))]);

    let mut g = slow_group(c, "render");
    for mode in MODES {
        for (n, input) in &inputs {
            g.bench_with_input(BenchmarkId::new(mode.as_str(), n), input, |b, input| {
                b.iter_batched(
                    || modes::Compilers::ALL.compile(mode, input, CompileOptions::default()),
                    |plane| (plane.render_text(), plane),
                    BatchSize::PerIteration,
                )
            });
        }
    }
    g.finish();

    let files = cluster_yaml(1_000, false);
    assert_eq!(files.len(), 1);
    let yaml = &files[0];
    let mut g = slow_group(c, "parse");
    g.bench_function(BenchmarkId::from_parameter(1_000), |b| {
        b.iter(|| kpv_core::Code::ALL.parse(black_box(yaml)))
    });
    g.finish();
}

/// One Gateway, one Service, and `n` HTTPRoutes each attached to the
/// Gateway with its own hostname and a PathPrefix and a header match.
fn routes_yaml(n: usize) -> String {
    let mut s = String::from(
        "apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: eg}\nspec: {controllerName: gateway.envoyproxy.io/gatewayclass-controller}\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gw}\nspec:\n  gatewayClassName: eg\n  listeners: [{name: http, port: 80, protocol: HTTP}]\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {clusterIP: 10.96.0.10, ports: [{port: 80}]}\n",
    );
    for i in 0..n {
        let _ = write!(
            s,
            "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {{name: r{i}}}\nspec:\n  parentRefs: [{{name: gw}}]\n  hostnames: [h{i}.example.com]\n  rules:\n  - matches: [{{path: {{type: PathPrefix, value: /p{i}}}, headers: [{{name: x-v, value: \"{i}\"}}]}}]\n    backendRefs: [{{name: web, port: 80}}]\n"
        );
    }
    s
}

fn routes(c: &mut Criterion) {
    let yaml = routes_yaml(10_000);
    let (cluster, diags) = kpv_core::Code::ALL.parse(&yaml);
    assert!(!kpv_core::util::diag::has_errors(&diags), "{diags:?}");
    let mut g = slow_group(c, "routes");
    g.bench_function(BenchmarkId::from_parameter(10_000), |b| {
        b.iter_with_large_drop(|| kpv_core::http::compile(black_box(&cluster.routing), &cluster))
    });
    g.finish();
}

criterion_group!(benches, scale, routes);
criterion_main!(benches);
