//! `kpv-kernelcheck`: kpv's rules loaded into the Linux kernel's netfilter,
//! and real packets compared with `kpv trace`.
//!
//! For every scenario of `tests/scenarios/` (and a few generated clusters),
//! for iptables and nftables mode and for every node, it builds the node's
//! world in network namespaces ([`plan`] decides it, [`sys`] builds it),
//! loads exactly what `kpv rules --node N --mode M` prints plus what
//! kube-proxy adds outside that text, sends TCP connections and UDP
//! datagrams from an external client, a Pod, the node itself and each
//! endpoint to its own Service ([`probe`]), and checks each flow against
//! `kpv trace` ([`judge`]). It prints one line per mode and ends with
//! `kernelcheck: N passed, N failed`.
//!
//! Usage: `kpv-kernelcheck [run] [--scenarios DIR] [--only TEXT] [--modes
//! iptables,nftables] [--generated N] [--jobs N] [--backend nft|legacy]
//! [--verbose]`. Exit code 0 when everything agrees, 1 when not, 3 when the
//! machine cannot run it (the one-line reason is printed). The roles `serve`
//! and `client` are what it runs inside the namespaces.

mod judge;
mod plan;
mod probe;
mod sys;

use judge::{Observed, Spread};
use kpv_core::model::Mode;
use plan::{Case, Expect, Source, World};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::process::exit;
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

struct Options {
    scenarios: String,
    only: Option<String>,
    modes: Vec<Mode>,
    generated: u64,
    jobs: usize,
    backend: sys::Backend,
    verbose: bool,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve") => exit(probe::serve(&args[1..])),
        Some("client") => exit(probe::client()),
        Some("run") => exit(run(&args[1..])),
        Some("-h" | "--help") => {
            println!("usage: kpv-kernelcheck [run] [--scenarios DIR] [--only TEXT] [--modes iptables,nftables] [--generated N] [--jobs N] [--backend nft|legacy] [--verbose]");
        }
        _ => exit(run(&args)),
    }
}

fn parse_options(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        scenarios: "tests/scenarios".into(),
        only: None,
        modes: vec![Mode::Iptables, Mode::Nftables],
        generated: 8,
        jobs: 4,
        backend: sys::Backend::Nft,
        verbose: false,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "--scenarios" => o.scenarios = value()?,
            "--only" => o.only = Some(value()?),
            "--modes" => {
                o.modes = value()?
                    .split(',')
                    .map(|m| match Mode::parse(m) {
                        Some(m @ (Mode::Iptables | Mode::Nftables)) => Ok(m),
                        _ => Err(format!(
                            "--modes: `{m}` cannot be checked here (iptables, nftables)"
                        )),
                    })
                    .collect::<Result<_, _>>()?
            }
            "--generated" => {
                o.generated = value()?
                    .parse::<u64>()
                    .ok()
                    .filter(|n| *n <= 100)
                    .ok_or("--generated: 0 to 100")?
            }
            "--jobs" => {
                o.jobs = value()?
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=16).contains(n))
                    .ok_or("--jobs: 1 to 16")?
            }
            "--backend" => {
                o.backend = match value()?.as_str() {
                    "nft" => sys::Backend::Nft,
                    "legacy" => sys::Backend::Legacy,
                    b => return Err(format!("--backend `{b}`: nft or legacy")),
                }
            }
            "--verbose" | "-v" => o.verbose = true,
            _ => return Err(format!("unknown option `{a}`")),
        }
    }
    Ok(o)
}

fn cases(o: &Options) -> Result<(Vec<Case>, usize), String> {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&o.scenarios)
        .map_err(|e| format!("cannot read {}: {e}", o.scenarios))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    let mut v = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
        let name = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        v.push(Case { name, text });
    }
    let presets = v.len();
    // Generated clusters: odd seeds IPv4, even seeds IPv6.
    for seed in 1..=o.generated {
        let (family, suffix) = if seed % 2 == 0 {
            (kpv_core::model::packet::IpFamily::V6, "-ipv6")
        } else {
            (kpv_core::model::packet::IpFamily::V4, "")
        };
        let services = kpv_core::generate::from_seed(seed);
        v.push(Case {
            name: format!("generated-{seed}{suffix}"),
            text: kpv_core::generate::yaml_in(&services, family),
        });
    }
    if let Some(only) = &o.only {
        v.retain(|c| c.name.contains(only.as_str()));
    }
    let presets = v
        .iter()
        .filter(|c| !c.name.starts_with("generated-"))
        .count()
        .min(presets);
    Ok((v, presets))
}

/// One world's outcome.
#[derive(Default)]
struct Outcome {
    checked: usize,
    agreeing: usize,
    skipped: usize,
    load_error: Option<String>,
    harness_error: Option<String>,
    /// (case, service, candidates) → spread, for the evenness test.
    spreads: BTreeMap<(String, String, Vec<SocketAddr>), Spread>,
    messages: Vec<String>,
    /// Flows checked by what kpv expects, and by protocol and family.
    kinds: BTreeMap<&'static str, usize>,
}

/// One mode's totals.
#[derive(Default)]
struct Totals {
    worlds: usize,
    checked: usize,
    agreeing: usize,
    skipped: usize,
    load_errors: usize,
    harness_errors: usize,
    spreads: BTreeMap<(String, String, Vec<SocketAddr>), Spread>,
    kinds: BTreeMap<&'static str, usize>,
}

/// What a flow is counted as in the per-mode line.
fn kinds_of(f: &plan::Flow) -> [&'static str; 3] {
    [
        match f.expect {
            Expect::Reach { .. } => "reach an endpoint",
            Expect::Refused => "refused",
            Expect::Timeout => "dropped",
            Expect::Node => "to the node",
            Expect::Leaves => "leave the node",
        },
        if f.protocol == kpv_core::model::packet::Protocol::Udp {
            "UDP"
        } else {
            "TCP"
        },
        if f.dst.is_ipv6() { "IPv6" } else { "IPv4" },
    ]
}

/// A node's world to check: (index into the cases, mode, node).
type Job = (usize, Mode, String);

/// `kpv-kernelcheck run`: check every world and report; the exit code.
fn run(args: &[String]) -> i32 {
    let o = match parse_options(args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("kernelcheck: {e}");
            return 2;
        }
    };
    if let Err(reason) = sys::preflight() {
        println!("kernelcheck: skipped: {reason}");
        return 3;
    }
    sys::catch_signals();
    let left = sys::remove_leftovers();
    if left > 0 {
        eprintln!("kernelcheck: removed {left} namespace(s) an interrupted run left behind");
    }
    let started = Instant::now();
    let (cases, presets) = match cases(&o) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("kernelcheck: {e}");
            return 2;
        }
    };
    let (jobs, setup_errors) = jobs_of(&o, &cases);
    let cases = Arc::new(cases);
    let per_mode = check_all(&o, &cases, &jobs);
    sys::remove_all();
    if sys::stopped() {
        eprintln!("kernelcheck: interrupted; every namespace it made is removed");
        return 130;
    }
    summarize(&o, &cases, presets, &per_mode, &setup_errors, started)
}

/// Every node of every case in every mode, as jobs; and the cases whose
/// nodes could not be read, as errors.
fn jobs_of(o: &Options, cases: &[Case]) -> (Vec<Job>, Vec<String>) {
    let mut jobs: Vec<Job> = Vec::new();
    let mut setup_errors: Vec<String> = Vec::new();
    for mode in &o.modes {
        for (ci, c) in cases.iter().enumerate() {
            match plan::nodes_of(c) {
                Ok(nodes) => jobs.extend(nodes.into_iter().map(|n| (ci, *mode, n))),
                Err(e) => setup_errors.push(format!("{}: {e}", c.name)),
            }
        }
    }
    (jobs, setup_errors)
}

/// Check the jobs' worlds on `o.jobs` worker threads, report each world as
/// it finishes and add it to its mode's totals. After an interrupt the
/// worlds still finishing are not counted.
fn check_all(o: &Options, cases: &Arc<Vec<Case>>, jobs: &[Job]) -> BTreeMap<Mode, Totals> {
    let queue = Arc::new(Mutex::new(
        jobs.iter().cloned().enumerate().rev().collect::<Vec<_>>(),
    ));
    let (tx, rx) = mpsc::channel();
    let workers: Vec<_> = (0..o.jobs)
        .map(|_| {
            let (queue, cases, tx) = (Arc::clone(&queue), Arc::clone(cases), tx.clone());
            let (backend, verbose) = (o.backend, o.verbose);
            thread::spawn(move || loop {
                if sys::stopped() {
                    break;
                }
                let job = queue.lock().ok().and_then(|mut q| q.pop());
                let Some((n, (ci, mode, node))) = job else {
                    break;
                };
                let Some(case) = cases.get(ci) else { break };
                let out = check_world(case, mode, &node, n, backend, verbose);
                if tx.send((ci, mode, node, out)).is_err() {
                    break;
                }
            })
        })
        .collect();
    drop(tx);
    let mut per_mode: BTreeMap<Mode, Totals> = BTreeMap::new();
    for (ci, mode, node, out) in rx.iter() {
        if sys::stopped() {
            continue; // interrupted: what is left half-done is not a result
        }
        let name = cases.get(ci).map(|c| c.name.as_str()).unwrap_or("?");
        report_world(o.verbose, name, mode, &node, &out);
        per_mode.entry(mode).or_default().add(out);
    }
    for w in workers {
        let _ = w.join();
    }
    per_mode
}

/// One world's lines on stderr: its count (when verbose, or when it has
/// something to say), its messages, and its load or harness error.
fn report_world(verbose: bool, name: &str, mode: Mode, node: &str, out: &Outcome) {
    let line = format!(
        "kernel {} {name} {node}: {}/{} flows agree{}",
        mode.as_str(),
        out.agreeing,
        out.checked,
        if out.skipped > 0 {
            format!(" ({} skipped)", out.skipped)
        } else {
            String::new()
        }
    );
    if verbose || !out.messages.is_empty() || out.load_error.is_some() {
        eprintln!("{line}");
    }
    for m in &out.messages {
        eprintln!("  {m}");
    }
    if let Some(e) = &out.load_error {
        eprintln!("  the kernel refused kpv's rules: {e}");
    }
    if let Some(e) = &out.harness_error {
        eprintln!("  harness: {e}");
    }
}

impl Totals {
    /// Add one world's outcome.
    fn add(&mut self, out: Outcome) {
        self.worlds += 1;
        self.checked += out.checked;
        self.agreeing += out.agreeing;
        self.skipped += out.skipped;
        for (k, n) in &out.kinds {
            *self.kinds.entry(k).or_default() += n;
        }
        self.load_errors += usize::from(out.load_error.is_some());
        self.harness_errors += usize::from(out.harness_error.is_some());
        for (k, s) in out.spreads {
            let t = self.spreads.entry(k).or_default();
            for (e, c) in s.counts {
                *t.counts.entry(e).or_default() += c;
            }
        }
    }
}

/// The closing report: the setup errors, one line per mode and the
/// `kernelcheck: N passed, N failed` line; the exit code.
fn summarize(
    o: &Options,
    cases: &[Case],
    presets: usize,
    per_mode: &BTreeMap<Mode, Totals>,
    setup_errors: &[String],
    started: Instant,
) -> i32 {
    let (mut passed, mut failed) = (0usize, setup_errors.len());
    for e in setup_errors {
        eprintln!("kernelcheck: {e}");
    }
    let generated = cases
        .iter()
        .filter(|c| c.name.starts_with("generated-"))
        .count();
    for mode in &o.modes {
        let Some(t) = per_mode.get(mode) else {
            continue;
        };
        let (p, f) = report_mode(*mode, t, presets, generated);
        passed += p;
        failed += f;
    }
    println!(
        "kernelcheck: {passed} passed, {failed} failed (took {:.0} s)",
        started.elapsed().as_secs_f64()
    );
    i32::from(failed > 0)
}

/// One mode's report: a line per unevenly spread random choice, then the
/// mode's summary line; what it adds to the passed and failed counts.
fn report_mode(mode: Mode, t: &Totals, presets: usize, generated: usize) -> (usize, usize) {
    let (worlds, load_errors, harness) = (t.worlds, t.load_errors, t.harness_errors);
    let mut skewed = 0;
    for ((case, svc, _), s) in &t.spreads {
        if s.skewed() {
            skewed += 1;
            eprintln!(
                "kernel {} {case}: {svc}: connections not spread evenly over kpv's candidates (chi-square {:.1} > {:.1}): {}",
                mode.as_str(),
                s.chi_square(),
                judge::critical(s.counts.len().saturating_sub(1)),
                s.counts
                    .iter()
                    .map(|(e, c)| format!("{e} {c}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    let spreads = t.spreads.values().filter(|s| s.counts.len() > 1).count();
    let kinds = [
        "reach an endpoint",
        "refused",
        "dropped",
        "to the node",
        "leave the node",
        "TCP",
        "UDP",
        "IPv4",
        "IPv6",
    ]
    .iter()
    .map(|k| format!("{} {k}", t.kinds.get(k).copied().unwrap_or(0)))
    .collect::<Vec<_>>();
    println!(
        "kernel check, {} mode: {} flows checked ({}; {}; {}), {} agreeing; {} scenarios ({presets} presets, {generated} generated) on {worlds} nodes; {load_errors} load errors; {spreads} random choices tested for evenness, {skewed} uneven; {} flows skipped{}",
        mode.as_str(),
        t.checked,
        kinds[..5].join(", "),
        kinds[5..7].join(", "),
        kinds[7..].join(", "),
        t.agreeing,
        presets + generated,
        t.skipped,
        if harness > 0 {
            format!("; {harness} harness errors")
        } else {
            String::new()
        }
    );
    (
        t.agreeing + (spreads - skewed),
        (t.checked - t.agreeing) + load_errors + harness + skewed,
    )
}

/// Build, load, probe, judge and tear down one node's world.
fn check_world(
    case: &Case,
    mode: Mode,
    node: &str,
    n: usize,
    backend: sys::Backend,
    verbose: bool,
) -> Outcome {
    let mut out = Outcome::default();
    let w = match plan::plan(case, mode, node) {
        Ok(w) => w,
        Err(e) => {
            out.harness_error = Some(format!("planning: {e}"));
            return out;
        }
    };
    out.skipped = w.skipped.len();
    let mut built = match sys::build(&w, n) {
        Ok(b) => b,
        Err(e) => {
            out.harness_error = Some(e);
            return out;
        }
    };
    let result = probe_world(&w, &mut built, backend, verbose, &mut out);
    built.teardown();
    if let Err(e) = result {
        out.harness_error = Some(e);
    }
    out
}

/// Load the rules into a built world, start its servers, run its clients
/// and judge every flow into `out`. A load error is an outcome, not an
/// error.
fn probe_world(
    w: &World,
    b: &mut sys::Built,
    backend: sys::Backend,
    verbose: bool,
    out: &mut Outcome,
) -> Result<(), String> {
    let joined: Vec<&str> = w.rules.iter().map(|(_, t)| t.as_str()).collect();
    if joined.join("\n") != w.rules_output {
        return Err("the per-family rules do not join into kpv rules' output".into());
    }
    if let Err(e) = sys::load_rules(w, b, backend) {
        out.load_error = Some(e);
        return Ok(());
    }
    sys::start_servers(w, b)?;
    let (by_ns, worst_ms) = client_lines(w, b);
    let observed = run_clients(by_ns, &worst_ms)?;
    judge_flows(w, observed, verbose, out);
    Ok(())
}

/// The flows as client input lines, grouped by the namespace they are sent
/// from; and per namespace, the longest its flows can take (in ms).
fn client_lines(
    w: &World,
    b: &sys::Built,
) -> (BTreeMap<String, Vec<String>>, BTreeMap<String, u64>) {
    let mut lanes: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_ns: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut worst_ms: BTreeMap<String, u64> = BTreeMap::new();
    for f in &w.flows {
        let ns = match f.source {
            Source::Node => b.ns_node.clone(),
            Source::Client(i) => b.ns_clients.get(i).cloned().unwrap_or_default(),
            Source::Pod(p) => b.ns_pods.get(p).cloned().unwrap_or_default(),
        };
        // Flows to a Service with ClientIP affinity share one lane (its
        // memory of the client must not be raced); every other flow has its
        // own, so timeouts overlap.
        let sticky = matches!(f.expect, Expect::Reach { sticky: true, .. });
        let key = match (&f.service, sticky) {
            (Some(s), true) => s.to_string(),
            _ => format!("flow {}", f.id),
        };
        let next = lanes.len();
        let lane = *lanes.entry(key).or_insert(next);
        let (tries, max_timeouts) = judge::tries(&f.expect);
        let timeout_ms = judge::TIMEOUT_MS;
        *worst_ms.entry(ns.clone()).or_default() +=
            u64::from(max_timeouts.min(tries)) * timeout_ms + u64::from(tries) * 20;
        by_ns.entry(ns).or_default().push(
            probe::FlowLine {
                id: f.id,
                lane,
                udp: f.protocol == kpv_core::model::packet::Protocol::Udp,
                dst: f.dst,
                tries,
                max_timeouts,
                timeout_ms,
            }
            .to_line(),
        );
    }
    (by_ns, worst_ms)
}

/// One client per source namespace, side by side, each with a time limit
/// from its flows' worst case; what they observed, by flow id.
fn run_clients(
    by_ns: BTreeMap<String, Vec<String>>,
    worst_ms: &BTreeMap<String, u64>,
) -> Result<BTreeMap<usize, Observed>, String> {
    let handles: Vec<_> = by_ns
        .into_iter()
        .map(|(ns, lines)| {
            let limit = Duration::from_millis(
                (10_000 + worst_ms.get(&ns).copied().unwrap_or(0) / 4).min(180_000),
            );
            thread::spawn(move || sys::run_client(&ns, &lines, limit))
        })
        .collect();
    let mut observed: BTreeMap<usize, Observed> = BTreeMap::new();
    let mut errors = Vec::new();
    for h in handles {
        match h.join() {
            Ok(Ok(lines)) => observed.extend(judge::read_lines(&lines)),
            Ok(Err(e)) => errors.push(e),
            Err(_) => errors.push("a client thread panicked".into()),
        }
    }
    if !errors.is_empty() {
        return Err(errors.join("; "));
    }
    Ok(observed)
}

/// Judge every flow of `w` against what was observed: count it, keep a
/// message for a disagreement (and, when verbose, an agreement), and add
/// an agreeing random choice to its Service's spread.
fn judge_flows(
    w: &World,
    mut observed: BTreeMap<usize, Observed>,
    verbose: bool,
    out: &mut Outcome,
) {
    for f in &w.flows {
        let o = observed.remove(&f.id).unwrap_or_default();
        out.checked += 1;
        for k in kinds_of(f) {
            *out.kinds.entry(k).or_default() += 1;
        }
        let flow = format!(
            "{} {} {}: {} {} → {} {} ({})",
            w.case,
            w.mode.as_str(),
            w.node,
            plan::source_label(w, f.source),
            f.src,
            f.dst,
            f.protocol.as_lower(),
            f.what,
        );
        let both = format!("{}\n    {}", f.kpv, judge::describe(w, &o));
        match judge::judge(f, &o) {
            Ok(()) => {
                out.agreeing += 1;
                if verbose {
                    out.messages.push(format!("agree {flow}\n    {both}"));
                }
                if let Expect::Reach {
                    candidates,
                    sticky: false,
                    ..
                } = &f.expect
                {
                    let mut c: Vec<SocketAddr> = candidates.iter().map(|c| c.endpoint).collect();
                    c.sort();
                    let svc = f
                        .service
                        .as_ref()
                        .map(|s| s.to_string())
                        .unwrap_or_default();
                    out.spreads
                        .entry((w.case.clone(), svc, c))
                        .or_default()
                        .add(&o);
                }
            }
            Err(why) => out
                .messages
                .push(format!("DISAGREE {flow}: {why}\n    {both}")),
        }
    }
}
