//! `cargo xtask bench`: runs kpv-core's criterion benchmarks and the browser
//! benchmark, and prints one line per figure with its budget. Figures are
//! measured here, never asserted by timed tests.

use super::{describe, die, output_of, say, trunk_build, Tools};
use std::fs;
use std::io::{BufRead, BufReader};
use std::process::Stdio;

/// `cargo xtask bench [FILTER]`: run kpv-core's criterion benchmarks
/// (`core/benches/scale.rs`) and print one line per figure with its budget:
/// compiling a node's rules within 100 ms, one packet's walk within 50 µs
/// (rendering the text and parsing have no budget). Returns how many figures
/// are over budget.
pub fn core(tools: &Tools, args: &[String]) -> usize {
    let mut cmd = tools.cmd("cargo");
    cmd.args(["bench", "-p", "kpv-core", "--bench", "scale", "--"]);
    cmd.args(args);
    say(&format!("running {}", describe(&cmd)));
    let mut child = cmd
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| die(&format!("could not start cargo bench: {e}")));
    // Criterion prints `group/function/size   time:   [low est high]`, the id
    // alone on its line when it is long and `time:` on the next one.
    let mut figures: Vec<(String, f64)> = Vec::new();
    let mut id = String::new();
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            println!("{line}");
            let (head, time) = match line.split_once("time:") {
                Some((h, t)) => (h.trim(), Some(t)),
                None => (line.trim(), None),
            };
            if !line.starts_with(char::is_whitespace) && head.contains('/') {
                id = head.to_string();
            }
            let Some(time) = time else { continue };
            // "[41.1 ms 41.2 ms 41.3 ms]": the middle pair is the estimate.
            let words: Vec<&str> = time
                .trim()
                .trim_matches(|c| c == '[' || c == ']')
                .split_whitespace()
                .collect();
            let seconds = match words.as_slice() {
                [_, _, n, unit, _, _] => n.parse::<f64>().ok().and_then(|n| {
                    let scale = match *unit {
                        "s" => 1.0,
                        "ms" => 1e-3,
                        "µs" | "us" => 1e-6,
                        "ns" => 1e-9,
                        "ps" => 1e-12,
                        _ => return None,
                    };
                    Some(n * scale)
                }),
                _ => None,
            };
            if let (Some(s), false) = (seconds, id.is_empty()) {
                figures.push((std::mem::take(&mut id), s));
            }
        }
    }
    let ok = child.wait().map(|s| s.success()).unwrap_or(false);
    let show = |s: f64| -> String {
        if s >= 1e-3 {
            format!("{:.1} ms", s * 1e3)
        } else {
            format!("{:.1} µs", s * 1e6)
        }
    };
    let mut over = 0;
    eprintln!();
    for (id, s) in &figures {
        let parts: Vec<&str> = id.split('/').collect();
        let (what, budget) = match parts.as_slice() {
            ["compile", mode, n] => (
                format!("compile {mode} {n} services"),
                Some((0.1, "100 ms")),
            ),
            ["process", mode, n] => (
                format!("trace {mode} to the last of {n} services"),
                Some((50e-6, "50 µs")),
            ),
            ["process-affinity", mode, n] => (
                format!("trace {mode} to the last of {n} services, ClientIP affinity"),
                Some((50e-6, "50 µs")),
            ),
            ["render", mode, n] => (format!("render {mode} text of {n} services"), None),
            ["parse", n] => (format!("parse {n} services"), None),
            ["routes", n] => (
                format!("compile the routing of {n} HTTPRoutes"),
                Some((0.3, "300 ms")),
            ),
            _ => (id.clone(), None),
        };
        match budget {
            Some((b, budget)) => {
                let verdict = if *s <= b { "ok" } else { "OVER BUDGET" };
                if *s > b {
                    over += 1;
                }
                println!("{what}: {} (budget {budget}) {verdict}", show(*s));
            }
            None => println!("{what}: {} (no budget)", show(*s)),
        }
    }
    if !ok {
        die("cargo bench failed");
    }
    if figures.is_empty() {
        die("no criterion figures found in the output");
    }
    over
}

/// A share link of the seed scenario with `packets` sent `gap_ms` apart
/// (`kpv share`, release build), for the browser benchmark.
fn share_link(tools: &Tools, packets: &str, gap_ms: &str, extra: &[&str]) -> String {
    let mut cmd = tools.cmd("cargo");
    cmd.args([
        "run",
        "-q",
        "--release",
        "-p",
        "kpv-core",
        "--bin",
        "kpv",
        "--",
        "share",
        "tests/scenarios/alpaca-bandicoot.yaml",
        "--packets",
        packets,
        "--gap-ms",
        gap_ms,
    ])
    .args(extra);
    output_of(&mut cmd)
        .map(|s| s.trim().to_string())
        .filter(|s| s.starts_with("v1."))
        .unwrap_or_else(|| die("kpv share did not print a share link"))
}

/// The browser half of `cargo xtask bench`: builds the release site, makes a
/// share link with 500 packets on the alpaca/bandicoot scenario (`kpv share`),
/// and runs `tests/e2e/bench/browser.mjs` in headless Chromium. Prints
/// start-up (budget 500 ms median), frame intervals (median 17.5 ms, p95
/// 25 ms) with 500 packets in flight and with continuous traffic after
/// 10,000 packets, and the latency of one Send after those (median 50 ms).
/// Returns how many are over budget.
pub fn browser(tools: &Tools) -> usize {
    tools.ensure_web();
    tools.ensure_browser_tests();
    if !trunk_build(tools, "/", "dist") {
        die("the release build failed");
    }
    let fragment = share_link(tools, "500", "0", &["--at-ms", "30000", "--speed", "25"]);
    // A session's history: 10,000 packets, 50 ms apart (the bench moves the
    // clock past them), to show a send and a frame cost the same after them.
    let history = share_link(tools, "10000", "50", &[]);
    // Too long for one command-line argument: handed over in a file.
    let history_file = tools.root.join("target/bench-history-link.txt");
    if let Err(e) = fs::write(&history_file, &history) {
        die(&format!("cannot write {}: {e}", history_file.display()));
    }
    say("measuring start-up, frame time and send latency in headless Chromium (about 1 min)");
    let out = tools
        .cmd("node")
        .args(["bench/browser.mjs", "../../dist", &fragment])
        .arg(&history_file)
        .current_dir(tools.root.join("tests/e2e"))
        .stderr(Stdio::inherit())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_else(|| die("the browser benchmark failed (node tests/e2e/bench/browser.mjs)"));
    let mut over = 0;
    let mut found = 0;
    eprintln!();
    for line in out.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let ["BENCH", name, value, unit] = words.as_slice() else {
            continue;
        };
        found += 1;
        let v: f64 = value.parse().unwrap_or(f64::NAN);
        let (what, budget) = match *name {
            "startup_median" => ("start-up to the diagram drawn, median of 7", Some(500.0)),
            "frame_median" => ("frame interval with 500 packets, median", Some(17.5)),
            "frame_p95" => (
                "frame interval with 500 packets, 95th percentile",
                Some(25.0),
            ),
            "frames_dropped" => ("frames dropped in 5 s", None),
            "history_packets" => ("packets sent before (history)", None),
            "send_median" => (
                "one Send after 10,000 packets, click to idle, median of 15",
                Some(50.0),
            ),
            "send_max" => ("one Send after 10,000 packets, slowest of 15", None),
            "history_frame_median" => (
                "frame interval, continuous traffic after 10,000 packets, median",
                Some(17.5),
            ),
            "history_frame_max" => (
                "frame interval, continuous traffic after 10,000 packets, longest",
                Some(50.0),
            ),
            "history_frames_dropped" => (
                "frames dropped in 5 s of continuous traffic after 10,000 packets",
                None,
            ),
            "history_frame_p95" => (
                "frame interval, continuous traffic after 10,000 packets, 95th percentile",
                Some(25.0),
            ),
            "frames_sampled" => ("frames sampled in 5 s", None),
            "type_8mb_median" => (
                "a key at the end of an 8 MB editor text, key to frame, median of 15",
                Some(100.0),
            ),
            "type_8mb_max" => ("a key in an 8 MB editor text, slowest of 15", None),
            "in_flight_start" => ("packets in flight when sampling starts", None),
            "in_flight_end" => ("packets in flight when sampling ends", None),
            other => (other, None),
        };
        match budget {
            Some(b) => {
                let ok = v <= b;
                if !ok {
                    over += 1;
                }
                println!(
                    "{what}: {value} {unit} (budget {b} {unit}) {}",
                    if ok { "ok" } else { "OVER BUDGET" }
                );
            }
            None => println!("{what}: {value} {unit}"),
        }
    }
    if found == 0 {
        die("the browser benchmark printed no figures");
    }
    over
}
