//! Comparing what the kernel did with what `kpv trace` said: per flow (the
//! set of endpoints reached, refused, timed out, who answered, the source
//! address the endpoint saw) and, over many flows, whether a random choice
//! spread connections evenly among kpv's candidates.
//!
//! Pure: it reads the client's result lines and the plan, never the machine.

use crate::plan::{Expect, Flow, Owner, World};
use crate::probe::Try;
use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;

/// The timeout of one try, the same for every flow whatever kpv expects
/// of it, so the expectation cannot change what is seen. A connection
/// inside namespaces answers in well under a millisecond, so it only costs
/// time when a packet is dropped; it must outlast the first SYN
/// retransmission (1 s), because a TCP client over IPv6 gives up on a REJECT
/// only when the retransmitted SYN is rejected too (measured on this
/// kernel: refused after 1.02–1.04 s; over IPv4 at once).
pub const TIMEOUT_MS: u64 = 2000;

/// How many times to try a flow, and after how many timeouts to stop.
pub fn tries(e: &Expect) -> (u32, u32) {
    match e {
        Expect::Reach {
            candidates, sticky, ..
        } => {
            if *sticky {
                (6, 2)
            } else {
                // Enough to reach every candidate of a uniform pick (the
                // chance of missing one of n is n·(1−1/n)^(20n) < 1e-8), and
                // counts for the evenness test.
                ((20 * candidates.len() as u32).clamp(8, 200), 2)
            }
        }
        Expect::Refused | Expect::Node | Expect::Leaves => (3, 2),
        // One timeout is a DROP; a refusal would come before it.
        Expect::Timeout => (2, 1),
    }
}

/// The server name a namespace answers with (see `sys::start_servers`).
pub fn who(o: Owner) -> String {
    match o {
        Owner::Node => "node".into(),
        Owner::Rest => "rest".into(),
        Owner::Pod(i) => format!("pod{i}"),
    }
}

/// What the client reported for one flow.
#[derive(Clone, Debug, Default)]
pub struct Observed {
    pub counts: BTreeMap<Try, u32>,
    /// The client's own address on a try that got through.
    pub local: Option<SocketAddr>,
    pub done: bool,
}

/// Read a client's lines into observations by flow id.
pub fn read_lines(lines: &[String]) -> BTreeMap<usize, Observed> {
    let mut m: BTreeMap<usize, Observed> = BTreeMap::new();
    for l in lines {
        let w: Vec<&str> = l.split_whitespace().collect();
        match w.as_slice() {
            ["R", id, n, rest @ ..] => {
                if let (Ok(id), Ok(n), Some(t)) = (id.parse(), n.parse::<u32>(), Try::parse(rest)) {
                    *m.entry(id).or_default().counts.entry(t).or_default() += n;
                }
            }
            ["L", id, a] => {
                if let (Ok(id), Ok(a)) = (id.parse(), a.parse()) {
                    m.entry(id).or_default().local = Some(a);
                }
            }
            ["D", id] => {
                if let Ok(id) = id.parse() {
                    m.entry(id).or_default().done = true;
                }
            }
            _ => {}
        }
    }
    m
}

/// The kernel's side in words, for a disagreement.
pub fn describe(w: &World, o: &Observed) -> String {
    let owner_name = |who: &str| -> String {
        match who {
            "node" => w.owner_label(Owner::Node),
            "rest" => w.owner_label(Owner::Rest),
            p => p
                .strip_prefix("pod")
                .and_then(|i| i.parse().ok())
                .map(|i| w.owner_label(Owner::Pod(i)))
                .unwrap_or_else(|| p.to_string()),
        }
    };
    let parts: Vec<String> = o
        .counts
        .iter()
        .map(|(t, n)| match t {
            Try::Reply { who, local, peer } => format!(
                "{n}× answered by {} on {local}, seeing source {}",
                owner_name(who),
                peer.ip()
            ),
            Try::Refused => format!("{n}× refused"),
            Try::Timeout => format!("{n}× timed out"),
            Try::LocalDrop => format!("{n}× dropped on sending (EPERM)"),
            Try::Unreachable => format!("{n}× unreachable"),
            Try::Error(e) => format!("{n}× error {e}"),
        })
        .collect();
    if parts.is_empty() {
        "kernel: no result".into()
    } else {
        format!("kernel: {}", parts.join("; "))
    }
}

/// Does the kernel agree with kpv on this flow? Err says how not.
pub fn judge(f: &Flow, o: &Observed) -> Result<(), String> {
    if !o.done {
        return Err("the client reported nothing for this flow".into());
    }
    if let Some(local) = o.local {
        if local.ip() != f.src {
            return Err(format!(
                "harness: the kernel sent from {}, the trace was asked for {}",
                local.ip(),
                f.src
            ));
        }
    }
    let all = |pred: &dyn Fn(&Try) -> bool| o.counts.keys().all(pred) && !o.counts.is_empty();
    match &f.expect {
        Expect::Refused => all(&|t| *t == Try::Refused)
            .then_some(())
            .ok_or_else(|| "expected refused (REJECT)".to_string()),
        Expect::Timeout => all(&|t| matches!(t, Try::Timeout | Try::LocalDrop))
            .then_some(())
            .ok_or_else(|| "expected a timeout (DROP)".to_string()),
        Expect::Node => {
            all(&|t| matches!(t, Try::Reply { who, local, .. } if who == "node" && *local == f.dst))
                .then_some(())
                .ok_or_else(|| "expected the node itself to answer".to_string())
        }
        Expect::Leaves => {
            all(&|t| matches!(t, Try::Reply { who, local, .. } if who == "rest" && *local == f.dst))
                .then_some(())
                .ok_or_else(|| "expected the packet to leave the node untranslated".to_string())
        }
        Expect::Reach { candidates, sticky } => {
            let mut reached: BTreeSet<SocketAddr> = BTreeSet::new();
            for t in o.counts.keys() {
                let Try::Reply {
                    who: w,
                    local,
                    peer,
                } = t
                else {
                    return Err("expected every try to reach an endpoint".into());
                };
                let Some(c) = candidates.iter().find(|c| c.endpoint == *local) else {
                    return Err(format!("reached {local}, not one of kpv's candidates"));
                };
                if *w != who(c.owner) {
                    return Err(format!(
                        "{} answered from the wrong namespace ({w})",
                        c.endpoint
                    ));
                }
                if peer.ip() != c.seen_source {
                    return Err(format!(
                        "{} saw source {}, kpv says {} (masquerade {})",
                        c.endpoint,
                        peer.ip(),
                        c.seen_source,
                        c.masquerade
                    ));
                }
                reached.insert(*local);
            }
            let want: BTreeSet<SocketAddr> = candidates.iter().map(|c| c.endpoint).collect();
            if *sticky {
                if reached.len() != 1 {
                    return Err(format!(
                        "ClientIP affinity: expected one endpoint every time, got {}",
                        reached.len()
                    ));
                }
            } else if reached != want {
                let missing: Vec<String> =
                    want.difference(&reached).map(|e| e.to_string()).collect();
                return Err(format!("never reached {}", missing.join(", ")));
            }
            Ok(())
        }
    }
}

/// Connections per endpoint of one random choice (a Service's candidate
/// set), summed over flows.
#[derive(Clone, Debug, Default)]
pub struct Spread {
    pub counts: BTreeMap<SocketAddr, u64>,
}

impl Spread {
    pub fn add(&mut self, o: &Observed) {
        for (t, n) in &o.counts {
            if let Try::Reply { local, .. } = t {
                *self.counts.entry(*local).or_default() += u64::from(*n);
            }
        }
    }

    /// Pearson's chi-square against an even spread over the candidates.
    pub fn chi_square(&self) -> f64 {
        let n = self.counts.len() as f64;
        let total: u64 = self.counts.values().sum();
        if n < 2.0 || total == 0 {
            return 0.0;
        }
        let expected = total as f64 / n;
        self.counts
            .values()
            .map(|c| (*c as f64 - expected).powi(2) / expected)
            .sum()
    }

    /// Is it uneven beyond chance (p < 1e-6)?
    pub fn skewed(&self) -> bool {
        let df = self.counts.len().saturating_sub(1);
        df > 0 && self.chi_square() > critical(df)
    }
}

/// The chi-square value exceeded with probability 1e-6 at `df` degrees of
/// freedom (a table to 10, Wilson–Hilferty's approximation above).
pub fn critical(df: usize) -> f64 {
    const TABLE: [f64; 10] = [
        23.93, 27.63, 30.66, 33.38, 35.89, 38.26, 40.52, 42.70, 44.81, 46.86,
    ];
    match df {
        0 => f64::INFINITY,
        1..=10 => TABLE[df - 1],
        _ => {
            let k = df as f64;
            let z = 4.753;
            k * (1.0 - 2.0 / (9.0 * k) + z * (2.0 / (9.0 * k)).sqrt()).powi(3)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Candidate, Source};
    use kpv_core::model::packet::Protocol;

    fn sa(s: &str) -> SocketAddr {
        s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn flow(expect: Expect) -> Flow {
        Flow {
            id: 0,
            source: Source::Node,
            src: sa("10.0.0.1:1").ip(),
            dst: sa("10.96.0.1:80"),
            protocol: Protocol::Tcp,
            what: "test".into(),
            service: None,
            expect,
            kpv: String::new(),
        }
    }

    fn observed(tries: &[(Try, u32)]) -> Observed {
        Observed {
            counts: tries.iter().cloned().collect(),
            local: None,
            done: true,
        }
    }

    fn reply(who: &str, local: &str, peer: &str) -> Try {
        Try::Reply {
            who: who.into(),
            local: sa(local),
            peer: sa(peer),
        }
    }

    #[test]
    fn a_reach_agrees_only_with_every_candidate_the_right_source_and_namespace() {
        let cand = |e: &str, owner| Candidate {
            endpoint: sa(e),
            owner,
            seen_source: sa("10.0.0.1:1").ip(),
            masquerade: false,
        };
        let f = flow(Expect::Reach {
            candidates: vec![
                cand("10.1.0.1:80", Owner::Pod(0)),
                cand("10.2.0.1:80", Owner::Rest),
            ],
            sticky: false,
        });
        let a = reply("pod0", "10.1.0.1:80", "10.0.0.1:5000");
        let b = reply("rest", "10.2.0.1:80", "10.0.0.1:5001");
        assert_eq!(
            judge(&f, &observed(&[(a.clone(), 20), (b.clone(), 20)])),
            Ok(())
        );
        assert!(
            judge(&f, &observed(&[(a.clone(), 40)])).is_err(),
            "one never reached"
        );
        let masq = reply("rest", "10.2.0.1:80", "192.168.0.2:5001");
        assert!(judge(&f, &observed(&[(a.clone(), 20), (masq, 20)])).is_err());
        let wrong_ns = reply("rest", "10.1.0.1:80", "10.0.0.1:5000");
        assert!(judge(&f, &observed(&[(wrong_ns, 20), (b.clone(), 20)])).is_err());
        assert!(judge(&f, &observed(&[(a, 20), (b, 19), (Try::Timeout, 1)])).is_err());
    }

    #[test]
    fn drop_reject_node_and_leaving_are_told_apart() {
        let t = observed(&[(Try::Timeout, 2)]);
        let r = observed(&[(Try::Refused, 3)]);
        assert_eq!(judge(&flow(Expect::Timeout), &t), Ok(()));
        // The node's own datagram dropped in OUTPUT fails to send.
        let local = observed(&[(Try::LocalDrop, 2)]);
        assert_eq!(judge(&flow(Expect::Timeout), &local), Ok(()));
        assert!(judge(&flow(Expect::Refused), &local).is_err());
        assert!(
            judge(&flow(Expect::Timeout), &r).is_err(),
            "REJECT is not DROP"
        );
        assert!(
            judge(&flow(Expect::Refused), &t).is_err(),
            "DROP is not REJECT"
        );
        let rest = observed(&[(reply("rest", "10.96.0.1:80", "10.0.0.1:9"), 3)]);
        assert_eq!(judge(&flow(Expect::Leaves), &rest), Ok(()));
        assert!(judge(&flow(Expect::Node), &rest).is_err());
    }

    #[test]
    fn an_uneven_spread_is_found_and_an_even_one_is_not() {
        let even = Spread {
            counts: [
                (sa("10.0.0.1:80"), 205),
                (sa("10.0.0.2:80"), 190),
                (sa("10.0.0.3:80"), 205),
            ]
            .into_iter()
            .collect(),
        };
        assert!(!even.skewed(), "{}", even.chi_square());
        // 1/3, 2/9, 4/9: what probabilities of 1/n on every rule give.
        let skew = Spread {
            counts: [
                (sa("10.0.0.1:80"), 200),
                (sa("10.0.0.2:80"), 133),
                (sa("10.0.0.3:80"), 267),
            ]
            .into_iter()
            .collect(),
        };
        assert!(skew.skewed(), "{}", skew.chi_square());
        // The approximation above the table continues it.
        assert!(critical(11) > critical(10) && critical(11) < critical(10) + 4.0);
        assert!((60.0..70.0).contains(&critical(20)), "{}", critical(20));
    }
}
