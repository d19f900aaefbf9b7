//! The two roles this binary plays inside a network namespace (started with
//! `ip netns exec NS kpv-kernelcheck serve|client`):
//!
//! - `serve`: answer every TCP connection and UDP datagram on the given
//!   ports with one line, `KPVK <who> <local address> <peer address>`, so
//!   the client learns which namespace answered, on which address, and what
//!   source address it saw. It exits when its standard input closes (the
//!   check that started it is gone), so it never outlives the check.
//! - `client`: read flows from standard input, try each the given number of
//!   times with bounded timeouts, and print how each try ended.
//!
//! It only ever talks to the addresses it is given, from inside the
//! namespace it runs in; every wait has a timeout and every loop a bound.

use std::collections::BTreeMap;
use std::io::{self, BufRead, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// The reply's first word.
const MAGIC: &str = "KPVK";
/// Threads a client runs its lanes on (mostly waiting on timeouts).
const LANES: usize = 32;

fn canonical(a: SocketAddr) -> SocketAddr {
    SocketAddr::new(a.ip().to_canonical(), a.port())
}

/// `serve --who NAME [--tcp P,P,...] [--udp ADDR,ADDR,...]`.
pub fn serve(args: &[String]) -> i32 {
    let mut who = String::from("?");
    let mut tcp: Vec<u16> = Vec::new();
    let mut udp: Vec<SocketAddr> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let v = it.next().cloned().unwrap_or_default();
        match a.as_str() {
            "--who" => who = v,
            "--tcp" => tcp.extend(v.split(',').filter_map(|p| p.parse::<u16>().ok())),
            "--udp" => udp.extend(v.split(',').filter_map(|p| p.parse::<SocketAddr>().ok())),
            _ => {
                eprintln!("serve: unknown option {a}");
                return 2;
            }
        }
    }
    let who = Arc::new(who);
    for port in tcp {
        // One socket for both families (IPV6_V6ONLY is off by default).
        let l = match TcpListener::bind(SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), port))
            .or_else(|_| {
                TcpListener::bind(SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), port))
            }) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("serve {who}: cannot listen on TCP port {port}: {e}");
                return 1;
            }
        };
        let who = Arc::clone(&who);
        thread::spawn(move || {
            // Lives as long as the process; a listener that keeps failing
            // (out of descriptors) gives up rather than spin.
            let mut failures = 0u32;
            for conn in l.incoming() {
                let Ok(mut s) = conn else {
                    failures += 1;
                    if failures > 1000 {
                        break;
                    }
                    thread::sleep(Duration::from_millis(1));
                    continue;
                };
                let (Ok(local), Ok(peer)) = (s.local_addr(), s.peer_addr()) else {
                    continue;
                };
                let _ = s.set_write_timeout(Some(Duration::from_secs(2)));
                // One write: the reply arrives whole.
                let line = format!("{MAGIC} {who} {} {}\n", canonical(local), canonical(peer));
                let _ = s.write_all(line.as_bytes());
            }
        });
    }
    for at in udp {
        let sock = match UdpSocket::bind(at) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("serve {who}: cannot bind UDP {at}: {e}");
                return 1;
            }
        };
        let who = Arc::clone(&who);
        thread::spawn(move || {
            let mut buf = [0u8; 512];
            let mut failures = 0u32;
            while failures <= 1000 {
                let Ok((_, peer)) = sock.recv_from(&mut buf) else {
                    failures += 1;
                    thread::sleep(Duration::from_millis(1));
                    continue;
                };
                let line = format!("{MAGIC} {who} {} {}\n", canonical(at), canonical(peer));
                let _ = sock.send_to(line.as_bytes(), peer);
            }
        });
    }
    println!("ready");
    let _ = io::stdout().flush();
    // Live as long as the check: its end (or death) closes our stdin.
    let mut sink = Vec::new();
    let _ = io::stdin().lock().read_to_end(&mut sink);
    0
}

/// How one try ended.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Try {
    /// `who` answered on `local` and saw the connection come from `peer`.
    Reply {
        who: String,
        local: SocketAddr,
        peer: SocketAddr,
    },
    Refused,
    Timeout,
    /// The node's own netfilter dropped what the node itself sent: the
    /// kernel fails the send with EPERM instead of letting it time out.
    LocalDrop,
    Unreachable,
    Error(String),
}

impl Try {
    pub fn to_line(&self) -> String {
        match self {
            Try::Reply { who, local, peer } => format!("reply {who} {local} {peer}"),
            Try::Refused => "refused".into(),
            Try::Timeout => "timeout".into(),
            Try::LocalDrop => "local-drop".into(),
            Try::Unreachable => "unreachable".into(),
            Try::Error(e) => format!("error {e}"),
        }
    }

    pub fn parse(words: &[&str]) -> Option<Try> {
        Some(match words {
            ["reply", who, local, peer] => Try::Reply {
                who: (*who).to_string(),
                local: local.parse().ok()?,
                peer: peer.parse().ok()?,
            },
            ["refused"] => Try::Refused,
            ["timeout"] => Try::Timeout,
            ["local-drop"] => Try::LocalDrop,
            ["unreachable"] => Try::Unreachable,
            ["error", rest @ ..] => Try::Error(rest.join(" ")),
            _ => return None,
        })
    }

    pub fn is_timeout(&self) -> bool {
        matches!(self, Try::Timeout | Try::LocalDrop)
    }
}

fn from_error(e: &io::Error) -> Try {
    match (e.kind(), e.raw_os_error()) {
        (io::ErrorKind::ConnectionRefused, _) => Try::Refused,
        (io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock, _) => Try::Timeout,
        (_, Some(101 | 113)) => Try::Unreachable,
        (_, Some(1)) => Try::LocalDrop,
        _ => Try::Error(e.to_string().replace(' ', "_")),
    }
}

fn parse_reply(text: &str) -> Try {
    let words: Vec<&str> = text.split_whitespace().collect();
    match words.as_slice() {
        [m, who, local, peer] if *m == MAGIC => match (local.parse(), peer.parse()) {
            (Ok(local), Ok(peer)) => Try::Reply {
                who: (*who).to_string(),
                local,
                peer,
            },
            _ => Try::Error(format!("bad_reply:{}", text.trim())),
        },
        _ => Try::Error(format!("bad_reply:{}", text.trim().replace(' ', "_"))),
    }
}

/// One try of a TCP connection; the local address it used when it connected.
fn tcp_try(dst: SocketAddr, timeout: Duration) -> (Try, Option<SocketAddr>) {
    match TcpStream::connect_timeout(&dst, timeout) {
        Ok(mut s) => {
            let local = s.local_addr().ok().map(canonical);
            let _ = s.set_read_timeout(Some(timeout));
            let mut text = String::new();
            let mut buf = [0u8; 256];
            // A bounded number of reads: the server writes one short line and closes.
            for _ in 0..64 {
                match s.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        text.push_str(&String::from_utf8_lossy(&buf[..n]));
                        if text.ends_with('\n') {
                            break;
                        }
                    }
                    Err(e) => return (from_error(&e), local),
                }
            }
            (parse_reply(&text), local)
        }
        Err(e) => (from_error(&e), None),
    }
}

/// One try of a UDP datagram and its answer.
fn udp_try(dst: SocketAddr, timeout: Duration) -> (Try, Option<SocketAddr>) {
    let any: SocketAddr = match dst {
        SocketAddr::V4(_) => SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
        SocketAddr::V6(_) => SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), 0),
    };
    let sock = match UdpSocket::bind(any) {
        Ok(s) => s,
        Err(e) => return (from_error(&e), None),
    };
    if let Err(e) = sock.connect(dst) {
        return (from_error(&e), None);
    }
    let local = sock.local_addr().ok().map(canonical);
    let _ = sock.set_read_timeout(Some(timeout));
    if let Err(e) = sock.send(b"KPVK?\n") {
        return (from_error(&e), local);
    }
    let mut buf = [0u8; 512];
    match sock.recv(&mut buf) {
        Ok(n) => (parse_reply(&String::from_utf8_lossy(&buf[..n])), local),
        Err(e) => (from_error(&e), local),
    }
}

/// A flow as the client reads it:
/// `F <id> <lane> <tcp|udp> <dst> <tries> <max timeouts> <timeout ms>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowLine {
    pub id: usize,
    pub lane: usize,
    pub udp: bool,
    pub dst: SocketAddr,
    pub tries: u32,
    pub max_timeouts: u32,
    pub timeout_ms: u64,
}

impl FlowLine {
    pub fn to_line(&self) -> String {
        format!(
            "F {} {} {} {} {} {} {}",
            self.id,
            self.lane,
            if self.udp { "udp" } else { "tcp" },
            self.dst,
            self.tries,
            self.max_timeouts,
            self.timeout_ms
        )
    }

    pub fn parse(line: &str) -> Option<FlowLine> {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["F", id, lane, proto, dst, tries, maxt, ms] => Some(FlowLine {
                id: id.parse().ok()?,
                lane: lane.parse().ok()?,
                udp: *proto == "udp",
                dst: dst.parse().ok()?,
                tries: tries.parse::<u32>().ok()?.min(1000),
                max_timeouts: maxt.parse::<u32>().ok()?.max(1),
                timeout_ms: ms.parse::<u64>().ok()?.clamp(10, 10_000),
            }),
            _ => None,
        }
    }
}

/// Run one flow: its tries, counted by outcome.
fn run_flow(f: &FlowLine) -> (BTreeMap<Try, u32>, Option<SocketAddr>) {
    let mut counts: BTreeMap<Try, u32> = BTreeMap::new();
    let mut first_local = None;
    let mut timeouts = 0;
    let timeout = Duration::from_millis(f.timeout_ms);
    for _ in 0..f.tries {
        let (t, local) = if f.udp {
            udp_try(f.dst, timeout)
        } else {
            tcp_try(f.dst, timeout)
        };
        if first_local.is_none() && matches!(t, Try::Reply { .. }) {
            first_local = local;
        }
        let t = match t {
            Try::Reply { who, local, peer } => Try::Reply {
                who,
                local,
                peer: SocketAddr::new(peer.ip(), 0),
            },
            other => other,
        };
        let timed_out = t.is_timeout();
        *counts.entry(t).or_default() += 1;
        if timed_out {
            timeouts += 1;
            if timeouts >= f.max_timeouts {
                break;
            }
        }
    }
    (counts, first_local)
}

/// `client`: flows on stdin; per flow, lines `R <id> <count> <try>`, then
/// `L <id> <local address>` when a try got through, then `D <id>`.
pub fn client() -> i32 {
    let mut flows: Vec<FlowLine> = Vec::new();
    for line in io::stdin()
        .lock()
        .lines()
        .map_while(Result::ok)
        .take(100_000)
    {
        if let Some(f) = FlowLine::parse(&line) {
            flows.push(f);
        }
    }
    // Flows of one lane run one after another (ClientIP affinity stays in
    // order); lanes run side by side.
    let mut lanes: BTreeMap<usize, Vec<FlowLine>> = BTreeMap::new();
    for f in flows {
        lanes.entry(f.lane).or_default().push(f);
    }
    let queue = Arc::new(Mutex::new(lanes.into_values().collect::<Vec<_>>()));
    let out = Arc::new(Mutex::new(io::stdout()));
    let workers: Vec<_> = (0..LANES)
        .map(|_| {
            let queue = Arc::clone(&queue);
            let out = Arc::clone(&out);
            thread::spawn(move || loop {
                let lane = match queue.lock() {
                    Ok(mut q) => q.pop(),
                    Err(_) => None,
                };
                let Some(lane) = lane else { break };
                for f in lane {
                    let (counts, local) = run_flow(&f);
                    let mut text = String::new();
                    for (t, n) in &counts {
                        text.push_str(&format!("R {} {n} {}\n", f.id, t.to_line()));
                    }
                    if let Some(l) = local {
                        text.push_str(&format!("L {} {l}\n", f.id));
                    }
                    text.push_str(&format!("D {}\n", f.id));
                    if let Ok(mut o) = out.lock() {
                        let _ = o.write_all(text.as_bytes());
                        let _ = o.flush();
                    }
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_and_try_lines_round_trip() {
        let f = FlowLine {
            id: 7,
            lane: 2,
            udp: true,
            dst: "[fd00::1]:53".parse().unwrap_or_else(|e| panic!("{e}")),
            tries: 12,
            max_timeouts: 2,
            timeout_ms: 300,
        };
        assert_eq!(FlowLine::parse(&f.to_line()), Some(f));
        for t in [
            Try::Refused,
            Try::Timeout,
            Try::LocalDrop,
            Try::Unreachable,
            Try::Reply {
                who: "rest".into(),
                local: "10.0.0.1:80".parse().unwrap_or_else(|e| panic!("{e}")),
                peer: "[::1]:4000".parse().unwrap_or_else(|e| panic!("{e}")),
            },
        ] {
            let line = t.to_line();
            let words: Vec<&str> = line.split_whitespace().collect();
            assert_eq!(Try::parse(&words), Some(t));
        }
        assert_eq!(
            parse_reply("nonsense"),
            Try::Error("bad_reply:nonsense".into())
        );
    }

    #[test]
    fn a_server_and_a_client_talk_over_loopback() {
        // The roles work without namespaces too: a listener on an ephemeral
        // port answers the way `serve` does.
        let l = TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
        let at = l.local_addr().unwrap_or_else(|e| panic!("{e}"));
        let h = thread::spawn(move || {
            if let Ok((mut s, peer)) = l.accept() {
                let _ = writeln!(s, "{MAGIC} me {at} {peer}");
            }
        });
        let (t, local) = tcp_try(at, Duration::from_secs(2));
        let _ = h.join();
        match t {
            Try::Reply {
                who,
                local: l2,
                peer,
            } => {
                assert_eq!(who, "me");
                assert_eq!(l2, at);
                assert_eq!(Some(peer), local);
            }
            other => panic!("{other:?}"),
        }
        // Nobody listens there any more: refused, quickly.
        let (t, _) = tcp_try(at, Duration::from_secs(2));
        assert_eq!(t, Try::Refused);
    }
}
