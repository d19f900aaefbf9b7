//! The `kpv` command line, through its pure entry points.

use kpv_core::cli::{parse_args, run, Command};

const SEED: &str = include_str!("../../tests/scenarios/alpaca-bandicoot.yaml");

fn kpv(args: &[&str], input: &str) -> kpv_core::cli::Output {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    match parse_args(&args) {
        Ok(cmd) => {
            let texts: Vec<String> = cmd.files().iter().map(|_| input.to_string()).collect();
            let files = cmd.files().to_vec();
            run(&cmd, &texts, &files)
        }
        Err(e) => kpv_core::cli::Output {
            stdout: String::new(),
            stderr: e,
            code: 2,
        },
    }
}

#[test]
fn help_lists_the_three_commands() {
    let out = kpv(&["--help"], "");
    assert_eq!(out.code, 0);
    for c in ["kpv rules", "kpv trace", "kpv check", "kpv share"] {
        assert!(out.stdout.contains(c), "{c}");
    }
    assert!(matches!(parse_args(&[]), Ok(Command::Help(_))));
}

#[test]
fn check_accepts_the_seed_and_rejects_bad_input() {
    let ok = kpv(&["check", "seed.yaml"], SEED);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert!(ok.stdout.contains("3 node(s), 5 pod(s), 2 service(s)"));
    let bad = kpv(
        &["check", "bad.yaml"],
        "kind: Service\nmetadata:\n  name: s\nspec:\n  ports:\n  - port: -1\n",
    );
    assert_eq!(bad.code, 1);
    assert!(
        bad.stderr.contains("bad.yaml: error: document 1, line 6"),
        "{}",
        bad.stderr
    );
    assert!(!bad.stderr.contains("panicked"));
}

#[test]
fn usage_errors_are_clear() {
    for (args, needle) in [
        (vec!["frobnicate"], "unknown command"),
        (vec!["rules"], "needs at least one YAML file"),
        (
            vec!["rules", "x.yaml", "--mode", "ebpf"],
            "unknown mode `ebpf`",
        ),
        (
            vec!["trace", "x.yaml", "--src", "1.2.3.4"],
            "needs --dst, --port",
        ),
        (
            vec!["trace", "x.yaml", "--port", "99999"],
            "not a port number",
        ),
    ] {
        let owned: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match parse_args(&owned) {
            Err(e) => assert!(e.contains(needle), "{args:?}: {e}"),
            Ok(c) => panic!("{args:?} parsed as {c:?}"),
        }
    }
}

#[test]
fn unknown_node_is_reported() {
    let out = kpv(&["rules", "seed.yaml", "--node", "nope"], SEED);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("no node named `nope`; nodes are: worker-1, worker-2, worker-3"),
        "{}",
        out.stderr
    );
}

#[test]
fn trace_by_dns_name_from_a_pod_reaches_an_alpaca() {
    let (cluster, _) = kpv_core::Code::ALL.parse(SEED);
    let pod = cluster
        .pods
        .iter()
        .find(|p| p.id.name.starts_with("bandicoot"))
        .map(|p| p.id.name.clone())
        .unwrap_or_default();
    let from = format!("pod:default/{pod}");
    let out = kpv(
        &[
            "trace",
            "seed.yaml",
            "--src",
            "0.0.0.0",
            "--dst",
            "alpaca-service.default.svc.cluster.local",
            "--port",
            "8080",
            "--from",
            &from,
            "--format",
            "json",
        ],
        SEED,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap_or_default();
    assert_eq!(v["hops"][0]["what"]["kind"], "dns");
    assert!(v["hops"][0]["what"]["answer"]
        .as_str()
        .unwrap_or("")
        .starts_with("10."));
}

#[test]
fn share_prints_a_link_the_app_replays() {
    let out = kpv(
        &[
            "share",
            "seed.yaml",
            "--mode",
            "ipvs",
            "--packets",
            "3",
            "--gap-ms",
            "5",
            "--at-ms",
            "30000",
            "--speed",
            "25",
            "--lang",
            "ko",
        ],
        SEED,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let state = kpv_core::session::share::decode(out.stdout.trim()).expect("a valid link");
    assert_eq!(state.yaml, SEED);
    assert_eq!(state.mode, kpv_core::model::Mode::Ipvs);
    assert_eq!(state.speed_percent, 25);
    assert_eq!(state.lang.as_deref(), Some("ko"));
    assert_eq!(
        state.packets.iter().map(|p| p.at_ms).collect::<Vec<_>>(),
        vec![30_000, 30_005, 30_010]
    );
    assert_eq!(state.time_ms, 30_000);
    // What the app does with it: every connection is delivered.
    let (cluster, _) = kpv_core::Code::ALL.parse(&state.yaml);
    let traces = kpv_core::session::replay::replay(&kpv_core::session::replay::Inputs {
        code: kpv_core::session::replay::Code::ALL,
        cluster: &cluster,
        mode: state.mode,
        scheduler: state.scheduler,
        timing: kpv_core::net::controller::Timing::default(),
        changes: &state.changes,
        packets: &state.packets,
    });
    assert_eq!(traces.len(), 3);
    // Thirty seconds in, the probes have passed: every connection is answered.
    assert!(
        traces
            .iter()
            .all(|t| matches!(t.outcome, kpv_core::net::trace::Outcome::Delivered { .. })),
        "{:?}",
        traces.iter().map(|t| &t.outcome).collect::<Vec<_>>()
    );
}

#[test]
fn share_rejects_bad_options_and_inputs_without_services() {
    for (args, msg) in [
        (vec!["share", "s.yaml", "--packets", "0"], "--packets `0`"),
        (
            vec!["share", "s.yaml", "--packets", "10001"],
            "--packets `10001`",
        ),
        (vec!["share", "s.yaml", "--speed", "0"], "--speed `0`"),
        (vec!["share", "s.yaml", "--lang", "fr"], "--lang `fr`"),
        (vec!["share", "s.yaml", "--gap-ms", "x"], "--gap-ms `x`"),
        (vec!["share", "s.yaml", "--at-ms", "-1"], "--at-ms `-1`"),
    ] {
        let out = kpv(&args, SEED);
        assert_eq!(out.code, 2, "{args:?}");
        assert!(out.stderr.contains(msg), "{args:?}: {}", out.stderr);
    }
    let node_only = "apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {addresses: [{type: InternalIP, address: 10.0.0.1}]}\n";
    let out = kpv(&["share", "n.yaml"], node_only);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("no Service"), "{}", out.stderr);
}

#[test]
fn check_reports_what_the_api_server_would_refuse_and_the_workloads_it_makes() {
    // (input, exit code, text on stdout or stderr)
    let sts = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\nspec:\n  replicas: 3\n  serviceName: db\n  selector: {matchLabels: {app: db}}\n  template:\n    metadata: {labels: {app: db}}\n    spec: {containers: [{name: c, image: pg}]}\n";
    let knative = "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata: {name: hello}\nspec: {template: {spec: {containers: [{image: hello}]}}}\n";
    let two = "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec: {type: NodePort, ports: [{port: 80, nodePort: 30080}]}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: b}\nspec: {type: NodePort, ports: [{port: 80, nodePort: 30080}]}\n";
    let cases: &[(&str, u8, &str)] = &[
        (sts, 0, "3 pod(s)"),
        (knative, 0, "is not the Kubernetes Service"),
        (
            two,
            1,
            "spec.ports[0].nodePort: The Service \"b\" is invalid: Invalid value: 30080: provided port is already allocated",
        ),
    ];
    for (input, code, needle) in cases {
        let out = kpv(&["check", "in.yaml"], input);
        assert_eq!(out.code, *code, "{}{}", out.stdout, out.stderr);
        let all = format!("{}{}", out.stdout, out.stderr);
        assert!(all.contains(needle), "{needle}: {all}");
        assert!(!all.contains("not modelled"), "{all}");
    }
}

/// A trace that ends with "no endpoints" says why: the Pods the Service
/// selects and what each lacks.
#[test]
fn trace_to_a_service_without_endpoints_names_the_pods_and_why() {
    let scenario = include_str!("../../tests/scenarios/no-endpoints.yaml");
    let out = kpv(
        &[
            "trace",
            "-",
            "--src",
            "10.244.1.7",
            "--dst",
            "10.96.30.30",
            "--port",
            "80",
        ],
        scenario,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains(
            "why: Service default/checkout selects 2 Pods, none of them a ready endpoint:\n  \
             default/checkout-1: not Ready: its status has condition Ready False\n  \
             default/checkout-2: not Ready: its status has condition Ready False\n"
        ),
        "{}",
        out.stdout
    );
}
