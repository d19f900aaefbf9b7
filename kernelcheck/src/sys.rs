//! Everything that touches the machine: network namespaces (named
//! `kpvk-<pid>-…`), veths, addresses, routes and sysctls through `ip`, the
//! rules through `iptables-restore` / `ip6tables-restore` / `nft -f`,
//! nfacct objects, and the server and client processes inside namespaces.
//!
//! Every namespace it makes is recorded and deleted at the end, on failure
//! and on SIGINT/SIGTERM; namespaces left by an earlier run that was killed
//! (whose process is gone) are deleted at start. It never changes the
//! namespace it runs in, and every command and wait has a time limit.

use crate::plan::{Client, PodNs, World};
use kpv_core::model::packet::IpFamily;
use kpv_core::model::Mode;
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::IpAddr;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// The prefix of every namespace this program makes.
pub const PREFIX: &str = "kpvk-";

static STOP: AtomicBool = AtomicBool::new(false);
static LIVE: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

extern "C" fn on_signal(_: i32) {
    STOP.store(true, Ordering::SeqCst);
}

extern "C" {
    fn signal(signum: i32, handler: extern "C" fn(i32)) -> usize;
}

/// SIGINT and SIGTERM set a flag the check polls; it then cleans up.
pub fn catch_signals() {
    // SAFETY: `on_signal` only stores to an atomic, which is
    // async-signal-safe; SIGINT = 2 and SIGTERM = 15 on Linux.
    unsafe {
        signal(2, on_signal);
        signal(15, on_signal);
    }
}

pub fn stopped() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// A command's result: stdout, or the error with its stderr.
pub fn run(args: &[&str], stdin: Option<&str>, limit: Duration) -> Result<String, String> {
    let Some((prog, rest)) = args.split_first() else {
        return Err("empty command".into());
    };
    let mut child = Command::new(prog)
        .args(rest)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {prog}: {e}"))?;
    if let (Some(text), Some(mut w)) = (stdin, child.stdin.take()) {
        let text = text.to_string();
        thread::spawn(move || {
            let _ = w.write_all(text.as_bytes());
        });
    }
    let out = child.stdout.take().map(reader);
    let err = child.stderr.take().map(reader);
    let status = wait_for(&mut child, limit);
    let stdout = out.and_then(|h| h.join().ok()).unwrap_or_default();
    let stderr = err.and_then(|h| h.join().ok()).unwrap_or_default();
    match status {
        Some(true) => Ok(stdout),
        Some(false) => Err(format!("{} failed: {}", args.join(" "), stderr.trim_end())),
        None => Err(format!(
            "{} took over {} s",
            args.join(" "),
            limit.as_secs()
        )),
    }
}

fn reader<R: Read + Send + 'static>(mut r: R) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut s = String::new();
        let _ = r.read_to_string(&mut s);
        s
    })
}

/// Wait for a child at most `limit`; kill it past that. Some(success).
pub fn wait_for(child: &mut Child, limit: Duration) -> Option<bool> {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return Some(s.success()),
            Ok(None) if start.elapsed() < limit => thread::sleep(Duration::from_millis(2)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

const CMD: Duration = Duration::from_secs(20);

/// Why the check cannot run here, if it cannot.
pub fn preflight() -> Result<(), String> {
    let uid = run(&["id", "-u"], None, CMD).unwrap_or_default();
    if uid.trim() != "0" {
        return Err("not root (network namespaces need root with CAP_NET_ADMIN)".into());
    }
    for tool in [
        "ip",
        "nft",
        "iptables-restore",
        "ip6tables-restore",
        "nfacct",
    ] {
        if run(&["sh", "-c", &format!("command -v {tool}")], None, CMD).is_err() {
            return Err(format!(
                "`{tool}` is missing (Debian: apt-get install iptables nftables nfacct iproute2)"
            ));
        }
    }
    let probe = format!("{PREFIX}{}-probe", std::process::id());
    run(&["ip", "netns", "add", &probe], None, CMD)
        .map_err(|e| format!("cannot make a network namespace (no CAP_NET_ADMIN?): {e}"))?;
    let nft = run(
        &["ip", "netns", "exec", &probe, "nft", "list", "ruleset"],
        None,
        CMD,
    );
    let _ = run(&["ip", "netns", "del", &probe], None, CMD);
    nft.map_err(|e| format!("nftables does not work in a namespace: {e}"))?;
    Ok(())
}

/// Delete namespaces of earlier runs whose process is gone.
pub fn remove_leftovers() -> usize {
    let Ok(dir) = std::fs::read_dir("/run/netns") else {
        return 0;
    };
    let mut gone = Vec::new();
    for e in dir.filter_map(Result::ok) {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(PREFIX) else {
            continue;
        };
        let pid = rest.split('-').next().unwrap_or("");
        let alive = !pid.is_empty()
            && std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .map(|c| c.trim().starts_with("kpv-kernelchec"))
                .unwrap_or(false);
        if !alive {
            gone.push(name);
        }
    }
    for n in &gone {
        let _ = run(&["ip", "netns", "del", n], None, CMD);
    }
    gone.len()
}

/// Delete every namespace this run still has.
pub fn remove_all() {
    let names: Vec<String> = LIVE
        .lock()
        .map(|l| l.iter().cloned().collect())
        .unwrap_or_default();
    delete(&names);
}

fn delete(names: &[String]) {
    if names.is_empty() {
        return;
    }
    let batch: String = names.iter().map(|n| format!("netns del {n}\n")).collect();
    let _ = run(&["ip", "-force", "-batch", "-"], Some(&batch), CMD);
    if let Ok(mut l) = LIVE.lock() {
        for n in names {
            l.remove(n);
        }
    }
}

/// A server or client process in a namespace.
pub struct Proc {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub lines: mpsc::Receiver<String>,
    pub err: Option<thread::JoinHandle<String>>,
}

impl Proc {
    fn spawn(ns: &str, args: &[String]) -> Result<Proc, String> {
        let exe = std::env::current_exe().map_err(|e| format!("cannot find myself: {e}"))?;
        let mut child = Command::new("ip")
            .args(["netns", "exec", ns])
            .arg(exe)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start a process in {ns}: {e}"))?;
        let (tx, rx) = mpsc::channel();
        if let Some(out) = child.stdout.take() {
            thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
        }
        let err = child.stderr.take().map(reader);
        Ok(Proc {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            err,
        })
    }

    fn end(mut self) -> String {
        drop(self.stdin.take());
        let _ = wait_for(&mut self.child, Duration::from_secs(3));
        self.err
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default()
    }
}

/// A built world: its namespaces and server processes.
pub struct Built {
    pub ns_node: String,
    pub ns_rest: String,
    pub ns_clients: Vec<String>,
    pub ns_pods: Vec<String>,
    servers: Vec<Proc>,
    names: Vec<String>,
}

impl Built {
    /// Stop the servers and delete the namespaces.
    pub fn teardown(mut self) {
        for s in self.servers.drain(..) {
            let _ = s.end();
        }
        delete(&self.names);
    }
}

fn host(ip: &IpAddr) -> String {
    match ip {
        IpAddr::V4(_) => format!("{ip}/32"),
        IpAddr::V6(_) => format!("{ip}/128"),
    }
}

/// `ip -n NS -batch -` with these commands.
fn ip_batch(ns: &str, lines: &[String]) -> Result<(), String> {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    run(&["ip", "-n", ns, "-batch", "-"], Some(&text), CMD)
        .map(|_| ())
        .map_err(|e| format!("setting up {ns}: {e}"))
}

fn sysctl(ns: &str, settings: &[&str]) -> Result<(), String> {
    let mut args = vec!["ip", "netns", "exec", ns, "sysctl", "-q", "-w"];
    args.extend_from_slice(settings);
    run(&args, None, CMD).map(|_| ())
}

/// The address the rest of the network answers the node's default route on.
const REST_GW4: &str = "169.254.0.1";
const REST_GW6: &str = "fe80::1";
/// The node's side of an external client's veth (IPv6 needs one to answer
/// neighbour solicitations; IPv4 clients use the node's address on-link).
const CLIENT_GW6: &str = "fe80::2";

/// Build the namespaces of `w` (world number `n` of this run), but load no
/// rules and start no servers yet.
pub fn build(w: &World, n: usize) -> Result<Built, String> {
    let base = format!("{PREFIX}{}-{n}-", std::process::id());
    let ns_node = format!("{base}node");
    let ns_rest = format!("{base}rest");
    let ns_clients: Vec<String> = (0..w.clients.len())
        .map(|i| format!("{base}c{i}"))
        .collect();
    let ns_pods: Vec<String> = (0..w.pods.len()).map(|i| format!("{base}p{i}")).collect();
    let mut names = vec![ns_node.clone(), ns_rest.clone()];
    names.extend(ns_clients.iter().cloned());
    names.extend(ns_pods.iter().cloned());
    if let Ok(mut l) = LIVE.lock() {
        l.extend(names.iter().cloned());
    }
    let built = Built {
        ns_node,
        ns_rest,
        ns_clients,
        ns_pods,
        servers: Vec::new(),
        names,
    };
    let batch: String = built
        .names
        .iter()
        .map(|n| format!("netns add {n}\n"))
        .collect();
    if let Err(e) = run(&["ip", "-batch", "-"], Some(&batch), CMD) {
        built.teardown();
        return Err(e);
    }
    match configure(w, &built) {
        Ok(()) => Ok(built),
        Err(e) => {
            built.teardown();
            Err(e)
        }
    }
}

/// Give the namespaces of `w` their sysctls, links, addresses and routes:
/// the node's, the rest of the network's, then each client's and Pod's.
fn configure(w: &World, b: &Built) -> Result<(), String> {
    set_sysctls(w, b)?;
    ip_batch(&b.ns_node, &node_links(w, b))?;
    ip_batch(&b.ns_rest, &rest_links(w))?;
    for (i, c) in w.clients.iter().enumerate() {
        ip_batch(&b.ns_clients[i], &client_links(w, c))?;
    }
    for (i, p) in w.pods.iter().enumerate() {
        ip_batch(&b.ns_pods[i], &pod_links(w, p))?;
    }
    Ok(())
}

/// The sysctls of every namespace, of the node (forwarding, route_localnet
/// when kpv's rules need it) and of the two that answer with ICMP errors.
fn set_sysctls(w: &World, b: &Built) -> Result<(), String> {
    // No duplicate address detection (addresses are usable at once), no
    // reverse-path filter (the node routes between its veths).
    for ns in &b.names {
        sysctl(
            ns,
            &[
                "net.ipv6.conf.all.accept_dad=0",
                "net.ipv6.conf.default.accept_dad=0",
                "net.ipv4.conf.all.rp_filter=0",
                "net.ipv4.conf.default.rp_filter=0",
            ],
        )?;
    }
    let mut node_sys = vec!["net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"];
    if w.route_localnet {
        node_sys.push("net.ipv4.conf.all.route_localnet=1");
    }
    sysctl(&b.ns_node, &node_sys)?;
    // ICMP errors are rate-limited per destination (6 at once, then one a
    // second): a client refused many times in a row would see timeouts.
    // REJECT is checked, not the rate limit.
    for ns in [&b.ns_node, &b.ns_rest] {
        sysctl(
            ns,
            &["net.ipv4.icmp_ratelimit=0", "net.ipv6.icmp.ratelimit=0"],
        )?;
        let _ = sysctl(
            ns,
            &[
                "net.ipv4.icmp_msgs_per_sec=100000",
                "net.ipv4.icmp_msgs_burst=100000",
            ],
        );
    }
    Ok(())
}

/// The node's `ip -batch` commands: its veth to the rest of the network
/// with its addresses and default routes, and a veth to every external
/// client and Pod.
fn node_links(w: &World, b: &Built) -> Vec<String> {
    let mut node = vec!["link set lo up".to_string()];
    // The node's link to the rest of the network.
    node.push(format!(
        "link add eth0 type veth peer name r0 netns {}",
        b.ns_rest
    ));
    for ip in &w.node_ips {
        let nodad = if ip.is_ipv6() { " nodad" } else { "" };
        node.push(format!("addr add {} dev eth0{nodad}", host(ip)));
    }
    node.push("link set eth0 up".into());
    if w.primary(IpFamily::V4).is_some() {
        node.push(format!(
            "route add 0.0.0.0/0 via {REST_GW4} dev eth0 onlink"
        ));
    }
    if w.primary(IpFamily::V6).is_some() {
        node.push(format!("route add ::/0 via {REST_GW6} dev eth0"));
    }
    // External clients.
    for (i, c) in w.clients.iter().enumerate() {
        let dev = format!("x{i}");
        node.push(format!(
            "link add {dev} type veth peer name eth0 netns {}",
            b.ns_clients[i]
        ));
        node.push(format!("addr add {CLIENT_GW6}/64 dev {dev} nodad"));
        node.push(format!("link set {dev} up"));
        for ip in &c.ips {
            node.push(format!("route add {} dev {dev}", host(ip)));
        }
    }
    // Pods: the node's side holds the gateway.
    for (i, p) in w.pods.iter().enumerate() {
        let dev = format!("p{i}");
        node.push(format!(
            "link add {dev} type veth peer name eth0 netns {}",
            b.ns_pods[i]
        ));
        for (f, gw) in &w.gateways {
            if p.ips.iter().any(|ip| IpFamily::of(ip) == *f) {
                let nodad = if gw.is_ipv6() { " nodad" } else { "" };
                node.push(format!("addr add {} dev {dev}{nodad}", host(gw)));
            }
        }
        node.push(format!("link set {dev} up"));
        for ip in &p.ips {
            node.push(format!("route add {} dev {dev}", host(ip)));
        }
    }
    node
}

/// The rest of the network's `ip -batch` commands: the gateway addresses
/// on its veth, the addresses it owns, routes to the node and, through the
/// node, to every client and Pod; everything else is unreachable.
fn rest_links(w: &World) -> Vec<String> {
    let primary4 = w.primary(IpFamily::V4);
    let primary6 = w.primary(IpFamily::V6);
    let mut rest = vec!["link set lo up".to_string()];
    rest.push(format!("addr add {REST_GW4}/32 dev r0"));
    rest.push(format!("addr add {REST_GW6}/64 dev r0 nodad"));
    rest.push("link set r0 up".into());
    for ip in &w.rest_ips {
        let nodad = if ip.is_ipv6() { " nodad" } else { "" };
        rest.push(format!("addr add {} dev lo{nodad}", host(ip)));
    }
    for ip in &w.node_ips {
        rest.push(format!("route add {} dev r0", host(ip)));
    }
    let via = |ip: &IpAddr| -> Option<IpAddr> {
        if ip.is_ipv4() {
            primary4
        } else {
            primary6
        }
    };
    let behind_node: Vec<IpAddr> = w
        .clients
        .iter()
        .flat_map(|c| c.ips.iter())
        .chain(w.pods.iter().flat_map(|p| p.ips.iter()))
        .copied()
        .collect();
    for ip in &behind_node {
        if let Some(gw) = via(ip) {
            rest.push(format!("route add {} via {gw} dev r0", host(ip)));
        }
    }
    rest.push("route add unreachable 0.0.0.0/0".into());
    rest.push("route add unreachable ::/0".into());
    rest
}

/// An external client's `ip -batch` commands: its addresses and default
/// routes through the node.
fn client_links(w: &World, c: &Client) -> Vec<String> {
    let mut l = vec!["link set lo up".to_string()];
    for ip in &c.ips {
        let nodad = if ip.is_ipv6() { " nodad" } else { "" };
        l.push(format!("addr add {} dev eth0{nodad}", host(ip)));
    }
    l.push("link set eth0 up".into());
    if c.ips.iter().any(IpAddr::is_ipv4) {
        if let Some(p) = w.primary(IpFamily::V4) {
            l.push(format!("route add 0.0.0.0/0 via {p} dev eth0 onlink"));
        }
    }
    if c.ips.iter().any(IpAddr::is_ipv6) {
        l.push(format!("route add ::/0 via {CLIENT_GW6} dev eth0"));
    }
    l
}

/// A Pod's `ip -batch` commands: its addresses and, per family it has, a
/// default route via the node's gateway.
fn pod_links(w: &World, p: &PodNs) -> Vec<String> {
    let mut l = vec!["link set lo up".to_string()];
    for ip in &p.ips {
        let nodad = if ip.is_ipv6() { " nodad" } else { "" };
        l.push(format!("addr add {} dev eth0{nodad}", host(ip)));
    }
    l.push("link set eth0 up".into());
    for (f, gw) in &w.gateways {
        if p.ips.iter().any(|ip| IpFamily::of(ip) == *f) {
            let any = if gw.is_ipv4() { "0.0.0.0/0" } else { "::/0" };
            l.push(format!("route add {} dev eth0", host(gw)));
            l.push(format!("route add {any} via {gw} dev eth0"));
        }
    }
    l
}

/// What kube-proxy installs outside its `iptables-save` text: the jumps
/// from the built-in chains into its own (upstream's `iptablesJumpChains`
/// and `iptablesKubeletJumpChains`), each inserted at the top in that order
/// (`EnsureRule(Prepend, …)`), after creating any chain the text lacks
/// (`EnsureChain`).
pub const JUMPS: &[(&str, &str, &str, &str, bool)] = &[
    // (table, from, to, comment, new connections only)
    (
        "filter",
        "INPUT",
        "KUBE-EXTERNAL-SERVICES",
        "kubernetes externally-visible service portals",
        true,
    ),
    (
        "filter",
        "FORWARD",
        "KUBE-EXTERNAL-SERVICES",
        "kubernetes externally-visible service portals",
        true,
    ),
    (
        "filter",
        "INPUT",
        "KUBE-NODEPORTS",
        "kubernetes health check service ports",
        false,
    ),
    (
        "filter",
        "FORWARD",
        "KUBE-SERVICES",
        "kubernetes service portals",
        true,
    ),
    (
        "filter",
        "OUTPUT",
        "KUBE-SERVICES",
        "kubernetes service portals",
        true,
    ),
    (
        "filter",
        "FORWARD",
        "KUBE-FORWARD",
        "kubernetes forwarding rules",
        false,
    ),
    (
        "filter",
        "INPUT",
        "KUBE-PROXY-FIREWALL",
        "kubernetes load balancer firewall",
        true,
    ),
    (
        "filter",
        "OUTPUT",
        "KUBE-PROXY-FIREWALL",
        "kubernetes load balancer firewall",
        true,
    ),
    (
        "filter",
        "FORWARD",
        "KUBE-PROXY-FIREWALL",
        "kubernetes load balancer firewall",
        true,
    ),
    (
        "nat",
        "OUTPUT",
        "KUBE-SERVICES",
        "kubernetes service portals",
        false,
    ),
    (
        "nat",
        "PREROUTING",
        "KUBE-SERVICES",
        "kubernetes service portals",
        false,
    ),
    (
        "nat",
        "POSTROUTING",
        "KUBE-POSTROUTING",
        "kubernetes postrouting rules",
        false,
    ),
    // The kubelet's firewall chain, which kube-proxy also ensures.
    ("filter", "INPUT", "KUBE-FIREWALL", "", false),
    ("filter", "OUTPUT", "KUBE-FIREWALL", "", false),
];

/// The `iptables-restore --noflush` text of [`JUMPS`] for a fresh node:
/// the chains are made empty (`EnsureChain`; the rules text then fills
/// them), and the jumps inserted at the top one after the other.
pub fn jump_text() -> String {
    let mut out = String::new();
    for t in ["filter", "nat"] {
        out.push_str(&format!("*{t}\n"));
        let mut made = BTreeSet::new();
        for (_, _, to, _, _) in JUMPS.iter().filter(|j| j.0 == t) {
            if made.insert(*to) {
                out.push_str(&format!(":{to} - [0:0]\n"));
            }
        }
        for (_, from, to, comment, new_only) in JUMPS.iter().filter(|j| j.0 == t) {
            let mut rule = format!("-I {from}");
            if *new_only {
                rule.push_str(" -m conntrack --ctstate NEW");
            }
            if !comment.is_empty() {
                rule.push_str(&format!(" -m comment --comment \"{comment}\""));
            }
            rule.push_str(&format!(" -j {to}\n"));
            out.push_str(&rule);
        }
        out.push_str("COMMIT\n");
    }
    out
}

/// Which iptables programs to load with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Nft,
    Legacy,
}

/// Load the world's rules into its node namespace: the kernel's refusal is
/// the error.
pub fn load_rules(w: &World, b: &Built, backend: Backend) -> Result<(), String> {
    let ns = b.ns_node.as_str();
    match w.mode {
        Mode::Nftables => run(
            &["ip", "netns", "exec", ns, "nft", "-f", "-"],
            Some(&w.rules_output),
            CMD,
        )
        .map(|_| ()),
        _ => {
            for name in &w.nfacct {
                run(
                    &["ip", "netns", "exec", ns, "nfacct", "add", name],
                    None,
                    CMD,
                )?;
            }
            for (family, text) in &w.rules {
                let prog = match (family, backend) {
                    (IpFamily::V4, Backend::Nft) => "iptables-restore",
                    (IpFamily::V6, Backend::Nft) => "ip6tables-restore",
                    (IpFamily::V4, Backend::Legacy) => "iptables-legacy-restore",
                    (IpFamily::V6, Backend::Legacy) => "ip6tables-legacy-restore",
                };
                run(
                    &["ip", "netns", "exec", ns, prog, "--noflush"],
                    Some(&jump_text()),
                    CMD,
                )
                .map_err(|e| format!("the jumps kube-proxy adds: {e}"))?;
                run(
                    &["ip", "netns", "exec", ns, prog, "--noflush"],
                    Some(text),
                    CMD,
                )?;
            }
            Ok(())
        }
    }
}

/// Start a server in every namespace that answers on something.
pub fn start_servers(w: &World, b: &mut Built) -> Result<(), String> {
    let mut todo: Vec<(String, String, &crate::plan::Listen)> = vec![
        (b.ns_node.clone(), "node".into(), &w.listen_node),
        (b.ns_rest.clone(), "rest".into(), &w.listen_rest),
    ];
    for (i, l) in w.listen_pods.iter().enumerate() {
        todo.push((b.ns_pods[i].clone(), format!("pod{i}"), l));
    }
    for (ns, who, l) in todo {
        if l.tcp.is_empty() && l.udp.is_empty() {
            continue;
        }
        let mut args = vec!["serve".to_string(), "--who".into(), who.clone()];
        if !l.tcp.is_empty() {
            args.push("--tcp".into());
            args.push(
                l.tcp
                    .iter()
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            );
        }
        if !l.udp.is_empty() {
            args.push("--udp".into());
            args.push(
                l.udp
                    .iter()
                    .map(|a| a.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            );
        }
        let p = Proc::spawn(&ns, &args)?;
        match p.lines.recv_timeout(Duration::from_secs(10)) {
            Ok(l) if l == "ready" => b.servers.push(p),
            _ => {
                let err = p.end();
                return Err(format!(
                    "the server in {ns} did not start: {}",
                    err.trim_end()
                ));
            }
        }
    }
    Ok(())
}

/// Run a client in `ns` over `flows` (lines for [`crate::probe::client`]);
/// return its output lines. Gives up after `limit`.
pub fn run_client(ns: &str, flows: &[String], limit: Duration) -> Result<Vec<String>, String> {
    let mut p = Proc::spawn(ns, &["client".to_string()])?;
    if let Some(mut w) = p.stdin.take() {
        let text: String = flows.iter().map(|f| format!("{f}\n")).collect();
        thread::spawn(move || {
            let _ = w.write_all(text.as_bytes());
        });
    }
    let start = Instant::now();
    let mut lines = Vec::new();
    loop {
        if stopped() {
            let _ = p.child.kill();
            let _ = p.end();
            return Err("interrupted".into());
        }
        match p.lines.recv_timeout(Duration::from_millis(100)) {
            Ok(l) => lines.push(l),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if start.elapsed() > limit {
                    let _ = p.child.kill();
                    let _ = p.end();
                    return Err(format!("the client in {ns} ran over {} s", limit.as_secs()));
                }
            }
        }
    }
    let err = p.end();
    if !err.trim().is_empty() {
        return Err(format!("the client in {ns}: {}", err.trim_end()));
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jumps_are_prepended_in_upstream_order_after_the_chains_are_made() {
        let t = jump_text();
        assert!(t.contains(":KUBE-FIREWALL - [0:0]\n"), "{t}");
        assert_eq!(t.matches(":KUBE-SERVICES - [0:0]").count(), 2, "{t}");
        assert!(t.contains(
            "-I INPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes externally-visible service portals\" -j KUBE-EXTERNAL-SERVICES\n"
        ));
        assert!(t.contains(
            "-I PREROUTING -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES\n"
        ));
        assert!(t.contains("-I OUTPUT -j KUBE-FIREWALL\n"));
        let first = t.find("KUBE-EXTERNAL-SERVICES\n").unwrap_or(usize::MAX);
        let last = t.find("-I INPUT -j KUBE-FIREWALL").unwrap_or(0);
        assert!(first < last, "{t}");
    }
}
