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
    for c in ["kpv rules", "kpv trace", "kpv check"] {
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
        bad.stderr.contains("bad.yaml: error: document 0, line 6"),
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
    let (cluster, _) = kpv_core::model::parse(SEED);
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
