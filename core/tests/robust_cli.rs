//! The `kpv` command line under misuse: output into a closed pipe or a full
//! disk (the built binary, run as a process), options given twice or to the
//! wrong command, traces that mix address families, the trace's outcome in
//! its text, and diagnostics that count documents from 1 and never print
//! "line 0".

use kpv_core::cli::{parse_args, run, Output};
use kpv_core::util::diag::{Diagnostic, Span};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

const SEED: &str = include_str!("../../tests/scenarios/alpaca-bandicoot.yaml");
const IPV6: &str = include_str!("../../tests/scenarios/ipvs-ipv6.yaml");
const FLOWS: &str = include_str!("../../tests/scenarios/packet-flows.yaml");

fn kpv(args: &[&str], input: &str) -> Output {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    match parse_args(&args) {
        Ok(cmd) => {
            let texts: Vec<String> = cmd.files().iter().map(|_| input.to_string()).collect();
            run(&cmd, &texts, cmd.files())
        }
        Err(e) => Output {
            stdout: String::new(),
            stderr: e,
            code: 2,
        },
    }
}

/// A cluster whose rules run to hundreds of kilobytes: far more than a
/// pipe's buffer, so a writer meets a closed pipe rather than filling it.
fn big_cluster() -> String {
    let mut s = String::from(
        "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nspec: {podCIDR: 10.244.1.0/24}\nstatus: {addresses: [{type: InternalIP, address: 192.168.0.1}]}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: c, image: x, ports: [{containerPort: 80}]}]}\n",
    );
    for i in 0..300 {
        s.push_str(&format!(
            "---\napiVersion: v1\nkind: Service\nmetadata: {{name: svc-{i}}}\nspec: {{selector: {{app: web}}, ports: [{{port: 80}}]}}\n"
        ));
    }
    s
}

/// The big cluster as a file (written once per test binary run).
fn big_file() -> PathBuf {
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("robust-cli-big.yaml");
    let text = big_cluster();
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
        std::fs::write(&path, &text).expect("write the test input");
    }
    path
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kpv"))
}

/// Each command, as the process is run, on the big cluster.
fn commands(file: &str) -> Vec<Vec<String>> {
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        owned(&["rules", file]),
        owned(&["rules", file, "--mode", "nftables", "--format", "json"]),
        owned(&["rules", file, "--mode", "ipvs"]),
        owned(&["check", file]),
        owned(&[
            "trace",
            file,
            "--src",
            "10.244.1.9",
            "--dst",
            "svc-7",
            "--port",
            "80",
        ]),
        owned(&["share", file, "--packets", "3"]),
        owned(&["--help"]),
    ]
}

#[test]
fn the_big_cluster_really_outgrows_a_pipe() {
    let out = kpv(&["rules", "big.yaml"], &big_cluster());
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.len() > 256 * 1024, "{}", out.stdout.len());
    assert!(out.stderr.is_empty(), "{}", out.stderr);
}

/// `kpv … | head -1`: the reader goes away; kpv ends quietly, as any Unix
/// filter does, with its own exit code and nothing on stderr.
#[test]
fn a_closed_pipe_ends_the_run_quietly() {
    let file = big_file();
    let file = file.to_str().unwrap_or_default();
    for args in commands(file) {
        for read_first_line in [false, true] {
            let mut child = bin()
                .args(&args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start kpv");
            let stdout = child.stdout.take().expect("stdout");
            if read_first_line {
                // `head -1`.
                let mut line = String::new();
                let _ = BufReader::new(stdout).read_line(&mut line);
            } else {
                drop(stdout);
            }
            let out = child.wait_with_output().expect("kpv ends");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
            assert!(stderr.is_empty(), "{args:?}: {stderr}");
        }
    }
    // Standard input as the manifests, standard output closed.
    let mut child = bin()
        .args(["rules", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start kpv");
    drop(child.stdout.take());
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(big_cluster().as_bytes())
            .expect("feed stdin");
    }
    let out = child.wait_with_output().expect("kpv ends");
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Output to a full disk is one line on stderr and exit code 1.
#[test]
fn a_full_disk_is_one_line_and_exit_1() {
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        // Not Linux: nothing to write to that is always full.
        return;
    };
    let file = big_file();
    let file = file.to_str().unwrap_or_default();
    for args in commands(file) {
        let out = bin()
            .args(&args)
            .stdout(full.try_clone().expect("a second handle on /dev/full"))
            .stderr(Stdio::piped())
            .output()
            .expect("run kpv");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{args:?}: {stderr}");
        assert!(
            lines[0].starts_with("kpv: cannot write the output: ")
                && lines[0].contains("No space left on device"),
            "{args:?}: {stderr}"
        );
    }
}

/// A closed stderr, or an argument that is not UTF-8, is no panic either.
#[test]
fn a_closed_stderr_and_odd_arguments_are_no_panic() {
    let mut child = bin()
        .args(["rules", "/nonexistent/kpv.yaml"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start kpv");
    drop(child.stderr.take());
    let out = child.wait_with_output().expect("kpv ends");
    assert_eq!(out.status.code(), Some(2));

    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let odd = std::ffi::OsStr::from_bytes(b"\xff.yaml");
        let out = bin().arg("check").arg(odd).output().expect("run kpv");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("is not UTF-8 text"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// Which options each command takes.
const TAKES: [(&str, &[&str]); 4] = [
    ("check", &["--format"]),
    ("rules", &["--mode", "--scheduler", "--node", "--format"]),
    (
        "trace",
        &[
            "--src",
            "--dst",
            "--port",
            "--protocol",
            "--mode",
            "--scheduler",
            "--node",
            "--seed",
            "--from",
            "--format",
        ],
    ),
    (
        "share",
        &[
            "--mode",
            "--scheduler",
            "--seed",
            "--packets",
            "--gap-ms",
            "--at-ms",
            "--speed",
            "--lang",
        ],
    ),
];

/// A valid value for each option.
fn value_of(opt: &str) -> &'static str {
    match opt {
        "--mode" => "ipvs",
        "--scheduler" => "rr",
        "--node" => "worker-1",
        "--format" => "json",
        "--src" => "10.0.0.1",
        "--dst" => "10.96.0.1",
        "--port" => "80",
        "--protocol" => "UDP",
        "--seed" => "7",
        "--from" => "external",
        "--packets" => "2",
        "--gap-ms" => "5",
        "--at-ms" => "10",
        "--speed" => "50",
        _ => "en",
    }
}

fn args_of(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// Options that do not apply to a command, or are given twice, are refused
/// with a message that names them; every option a command takes is
/// accepted once.
#[test]
fn options_apply_to_their_commands_once() {
    let all: Vec<&str> = TAKES[2]
        .1
        .iter()
        .chain(TAKES[3].1)
        .chain(&["--via", "--sni", "-X", "-H", "--backend-header"])
        .copied()
        .collect();
    for (cmd, takes) in TAKES {
        let base: &[&str] = if cmd == "trace" {
            &[
                "trace",
                "f.yaml",
                "--src",
                "10.0.0.1",
                "--dst",
                "10.96.0.1",
                "--port",
                "80",
            ]
        } else {
            &[cmd, "f.yaml"]
        };
        for opt in &all {
            let mut a: Vec<&str> = base.to_vec();
            if !base.contains(opt) {
                a.extend([*opt, value_of(opt)]);
            }
            let parsed = parse_args(&args_of(&a));
            if takes.contains(opt) {
                assert!(parsed.is_ok(), "{a:?}: {parsed:?}");
                // Twice is refused.
                a.extend([*opt, value_of(opt)]);
                match parse_args(&args_of(&a)) {
                    Err(e) => assert_eq!(e, format!("{opt} is given twice; give it once"), "{a:?}"),
                    Ok(c) => panic!("{a:?} parsed as {c:?}"),
                }
            } else {
                match parsed {
                    Err(e) => assert!(
                        e.starts_with(&format!("{opt} does not apply to `kpv {cmd}`")),
                        "{a:?}: {e}"
                    ),
                    Ok(c) => panic!("{a:?} parsed as {c:?}"),
                }
            }
        }
    }
    // Twice with different values, files in between; and `kpv http`'s.
    for a in [
        vec![
            "http",
            "a.yaml",
            "http://x/",
            "--mode",
            "ipvs",
            "--mode",
            "ipvs",
        ],
        vec![
            "http",
            "a.yaml",
            "http://x/",
            "-X",
            "GET",
            "-H",
            "a: b",
            "-X",
            "PUT",
        ],
        vec!["routes", "a.yaml", "--format", "json", "--format", "text"],
        vec![
            "rules", "a.yaml", "--mode", "ipvs", "b.yaml", "--mode", "iptables",
        ],
        vec![
            "trace", "a.yaml", "--src", "1.2.3.4", "--src", "1.2.3.4", "--dst", "x", "--port", "1",
        ],
        vec!["share", "a.yaml", "--lang", "en", "--lang", "ko"],
    ] {
        let e = parse_args(&args_of(&a)).expect_err("refused");
        assert!(e.contains("is given twice"), "{a:?}: {e}");
    }
    // Headers may repeat.
    let a = [
        "http",
        "a.yaml",
        "http://x/",
        "-H",
        "a: b",
        "-H",
        "c: d",
        "--backend-header",
        "e: f",
    ];
    assert!(parse_args(&args_of(&a)).is_ok(), "{a:?}");
    // Through the process: exit code 2 and the message on stderr.
    let out = bin()
        .args(["check", "x.yaml", "--mode", "ipvs"])
        .output()
        .expect("run kpv");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.starts_with("kpv: --mode does not apply to `kpv check`; it takes --format"),
        "{stderr}"
    );
}

/// A packet has one address family: `--src` (or the Pod the trace starts
/// from) and the destination, by address or by the name's answer, must
/// agree.
#[test]
fn trace_refuses_mixed_address_families() {
    let (cluster, _) = kpv_core::Code::ALL.parse(SEED);
    let pod = cluster
        .pods
        .first()
        .map(|p| format!("pod:{}/{}", p.id.namespace, p.id.name))
        .unwrap_or_default();
    for (input, args, refused) in [
        (
            SEED,
            vec!["--src", "fd00::1", "--dst", "10.96.0.10"],
            Some("--src fd00::1 is IPv6 but --dst 10.96.0.10 is IPv4"),
        ),
        (
            SEED,
            vec!["--src", "10.0.0.1", "--dst", "fd00::10"],
            Some("--src 10.0.0.1 is IPv4 but --dst fd00::10 is IPv6"),
        ),
        (
            SEED,
            vec!["--src", "::ffff:10.0.0.1", "--dst", "10.96.0.10"],
            Some("is IPv6 but"),
        ),
        (
            SEED,
            vec![
                "--src",
                "fd00::1",
                "--dst",
                "alpaca-service.default.svc.cluster.local",
            ],
            Some("(it resolves to 10."),
        ),
        (
            SEED,
            vec![
                "--src",
                "0.0.0.0",
                "--dst",
                "fd00::10",
                "--from",
                pod.as_str(),
            ],
            Some("Pod default/"),
        ),
        (
            SEED,
            vec![
                "--src",
                "fd00::1",
                "--dst",
                "10.96.0.10",
                "--from",
                "external",
            ],
            Some("is IPv6 but"),
        ),
        (
            IPV6,
            vec!["--src", "10.0.0.1", "--dst", "fd00:10::a"],
            Some("is IPv4 but --dst fd00:10::a is IPv6"),
        ),
        (
            IPV6,
            vec![
                "--src",
                "10.0.0.1",
                "--dst",
                "web6.default.svc.cluster.local",
            ],
            Some("resolves to fd00:10::a"),
        ),
        // Same family: traced.
        (SEED, vec!["--src", "10.0.0.1", "--dst", "10.96.0.10"], None),
        (
            SEED,
            vec![
                "--src",
                "10.0.0.1",
                "--dst",
                "alpaca-service.default.svc.cluster.local",
            ],
            None,
        ),
        (IPV6, vec!["--src", "fd00::99", "--dst", "fd00:10::a"], None),
        (
            IPV6,
            vec![
                "--src",
                "fd00::99",
                "--dst",
                "web6.default.svc.cluster.local",
            ],
            None,
        ),
        // A name nobody answers has no family to clash with.
        (
            SEED,
            vec![
                "--src",
                "fd00::1",
                "--dst",
                "nope.default.svc.cluster.local",
            ],
            None,
        ),
    ] {
        let mut a = vec!["trace", "in.yaml", "--port", "8080"];
        a.extend(args.iter().copied());
        let out = kpv(&a, input);
        match refused {
            Some(msg) => {
                assert_eq!(out.code, 2, "{a:?}: {}", out.stdout);
                assert!(out.stdout.is_empty(), "{a:?}");
                assert!(
                    out.stderr.contains(msg)
                        && out.stderr.contains("a packet has one address family"),
                    "{a:?}: {}",
                    out.stderr
                );
            }
            None => assert_eq!(out.code, 0, "{a:?}: {}", out.stderr),
        }
    }
}

/// The text trace says how it ended, as the JSON's `outcome` does, for
/// every kind of ending.
#[test]
fn trace_text_shows_the_outcome_the_json_has() {
    let mut seen = std::collections::BTreeSet::new();
    for (input, args) in [
        (
            SEED,
            vec![
                "--src",
                "10.0.0.1",
                "--dst",
                "nope.default.svc.cluster.local",
                "--port",
                "80",
            ],
        ),
        (
            SEED,
            vec![
                "--src",
                "10.0.0.1",
                "--dst",
                "192.168.99.99",
                "--port",
                "80",
            ],
        ),
        (
            SEED,
            vec![
                "--src",
                "10.0.0.1",
                "--dst",
                "alpaca-service.default.svc.cluster.local",
                "--port",
                "8080",
            ],
        ),
        (
            SEED,
            vec!["--src", "10.0.0.1", "--dst", "10.96.0.10", "--port", "9"],
        ),
        (
            IPV6,
            vec!["--src", "fd00::99", "--dst", "fd00:10::a", "--port", "8080"],
        ),
        (
            IPV6,
            vec![
                "--src",
                "fd00::99",
                "--dst",
                "fd00:10::b",
                "--port",
                "8080",
                "--mode",
                "nftables",
            ],
        ),
        (
            FLOWS,
            vec!["--src", "10.0.0.1", "--dst", "10.96.0.19", "--port", "80"],
        ),
        (
            FLOWS,
            vec![
                "--src",
                "10.0.0.1",
                "--dst",
                "10.96.0.99",
                "--port",
                "80",
                "--mode",
                "nftables",
            ],
        ),
        (
            FLOWS,
            vec![
                "--src",
                "10.0.0.1",
                "--dst",
                "10.96.0.10",
                "--port",
                "81",
                "--mode",
                "nftables",
            ],
        ),
        (
            FLOWS,
            vec![
                "--src",
                "203.0.113.5",
                "--dst",
                "192.168.0.2",
                "--port",
                "30015",
                "--from",
                "external",
            ],
        ),
        (
            FLOWS,
            vec![
                "--src",
                "198.51.100.1",
                "--dst",
                "192.168.0.2",
                "--port",
                "32014",
            ],
        ),
    ] {
        let mut a = vec!["trace", "in.yaml"];
        a.extend(args.iter().copied());
        let text = kpv(&a, input);
        assert_eq!(text.code, 0, "{a:?}: {}", text.stderr);
        a.extend(["--format", "json"]);
        let json = kpv(&a, input);
        let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap_or_default();
        let kind = v["outcome"]["kind"].as_str().unwrap_or("?").to_string();
        let line = text
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("outcome: "))
            .unwrap_or_else(|| panic!("{a:?}: no outcome line in\n{}", text.stdout));
        let expected = match kind.as_str() {
            "no-such-name" => format!(
                "no such name: {}",
                v["outcome"]["name"].as_str().unwrap_or("?")
            ),
            "unrouted" => "unrouted".into(),
            "delivered" => "delivered to".into(),
            "timed-out" => "timed out".into(),
            "dropped" => "dropped: ".into(),
            "rejected" => "rejected: ".into(),
            "accepted-by-node" => "accepted by node".into(),
            k => panic!("{a:?}: an outcome this test does not know: {k}"),
        };
        assert!(line.starts_with(&expected), "{a:?}: {kind}: {line}");
        seen.insert(kind);
    }
    for kind in [
        "no-such-name",
        "unrouted",
        "delivered",
        "dropped",
        "rejected",
        "accepted-by-node",
    ] {
        assert!(seen.contains(kind), "no case ended {kind}: {seen:?}");
    }
}

/// Diagnostics count documents from 1 and print a position (document, line,
/// column) only when they have one.
#[test]
fn diagnostics_number_documents_from_one_and_never_print_line_0() {
    let mut d = Diagnostic::error("input is too large");
    assert_eq!(d.to_string(), "error: input is too large");
    d.span = Some(Span { line: 0, column: 0 });
    assert_eq!(d.position(), None);
    assert_eq!(d.to_string(), "error: input is too large");
    d.span = Some(Span { line: 3, column: 0 });
    assert_eq!(d.position(), None);
    d.object = Some("Service/default/web".into());
    d.document = 4;
    assert_eq!(
        d.to_string(),
        "error: Service/default/web: input is too large"
    );
    d.span = Some(Span { line: 3, column: 7 });
    assert_eq!(d.document_number(), 5);
    assert_eq!(
        d.to_string(),
        "error: document 5, line 3, column 7: Service/default/web: input is too large"
    );

    // Through `kpv check`: an error in the second and in the third document.
    let two = format!(
        "{SEED}---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n  ports:\n  - port: -1\n"
    );
    let docs = SEED.matches("\n---").count() + 1;
    let out = kpv(&["check", "two.yaml"], &two);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains(&format!("two.yaml: error: document {}, line", docs + 1)),
        "{}",
        out.stderr
    );
    for (src, want) in [
        ("a: [1\n", "document 1, line 1, column 4"),
        ("kind: Node\n---\nkind: [\n", "document 2, line 3, column 7"),
        ("---\nx: 1\n---\n---\ny: *q\n", "document 3, line 5"),
    ] {
        let out = kpv(&["check", "in.yaml"], src);
        assert_eq!(out.code, 1, "{src:?}");
        assert!(out.stderr.contains(want), "{src:?}: {}", out.stderr);
        assert!(!out.stderr.contains("document 0"), "{}", out.stderr);
    }
    // Errors about the whole input have no position.
    let huge = "#".repeat(kpv_core::yaml::Limits::default().max_bytes + 1);
    let out = kpv(&["check", "huge.yaml"], &huge);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.starts_with("huge.yaml: error: input is "),
        "{}",
        out.stderr
    );
    // Warnings about the cluster as a whole name no document either.
    let out = kpv(
        &["check", "svc.yaml"],
        "kind: Service\napiVersion: v1\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n",
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("svc.yaml: warning: Node: no Node objects given"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("line 0"), "{}", out.stderr);
}

/// `--scheduler` outside IPVS mode is refused, not silently ignored.
#[test]
fn a_scheduler_outside_ipvs_is_refused() {
    let o = kpv(
        &["rules", "-", "--mode", "iptables", "--scheduler", "rr"],
        SEED,
    );
    assert_eq!(o.code, 2, "a usage error: {}", o.stderr);
    assert!(
        o.stderr.contains("--scheduler rr") && o.stderr.contains("--mode ipvs"),
        "{}",
        o.stderr
    );
    let o = kpv(&["rules", "-", "--mode", "ipvs", "--scheduler", "rr"], SEED);
    assert_eq!(o.code, 0, "{}", o.stderr);
}

/// An EndpointSlice in another namespace than the Service it names, and a
/// ClusterIP outside the range kpv assumes, are said.
#[test]
fn misplaced_slices_and_clusterips_are_said() {
    let yaml = "apiVersion: v1\nkind: Service\nmetadata: {name: db, namespace: data}\nspec: {clusterIP: 172.20.0.10, ports: [{port: 5432}]}\n---\napiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata:\n  name: db-1\n  namespace: default\n  labels: {kubernetes.io/service-name: db}\naddressType: IPv4\nports: [{port: 5432}]\nendpoints: [{addresses: [10.1.2.3]}]\n";
    let o = kpv(&["check", "-"], yaml);
    assert!(
        o.stderr.contains(
            "EndpointSlice default/db-1 names Service `db`, but the Service is in namespace data"
        ),
        "{}",
        o.stderr
    );
    assert!(
        o.stderr.contains(
            "ClusterIP 172.20.0.10 is outside the service range kpv assumes (10.96.0.0/12)"
        ),
        "{}",
        o.stderr
    );
}
