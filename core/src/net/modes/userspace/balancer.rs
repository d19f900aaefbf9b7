//! The userspace proxy's `LoadBalancerRR` (`roundrobin.go`) over
//! [`NodeState`], and `TryConnectEndpoints` (`proxysocket.go`).
//!
//! Round robin: one index per Service port (`NodeState.rr`, keyed by the
//! Service port name text) into the backend list, which is a shuffled copy of
//! the endpoints, reset to 0 whenever the endpoint set changes. ClientIP
//! affinity (`NodeState.affinity`, keyed by (Service port name text, client
//! IP)) wins while `int(seconds since last use) < timeout`; a hit refreshes
//! the last-use time. Connecting: up to four attempts with the dial timeouts
//! 250ms, 500ms, 1s, 2s; every attempt asks the balancer again (so the index
//! advances), and after the first failure affinity is ignored.
//!
//! This module never picks at random: the shuffle was made at compile time
//! and everything else is a strict cycle.

use crate::model::packet::Protocol;
use crate::net::modes::{NodeState, World};
use std::net::{IpAddr, SocketAddr};

/// `EndpointDialTimeouts` in proxysocket.go.
pub const DIAL_TIMEOUTS_MS: [u64; 4] = [250, 500, 1000, 2000];

/// One Service port as the balancer knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Balanced<'a> {
    /// `ns/name:port`: the key of the balancer's state.
    pub key: &'a str,
    pub protocol: Protocol,
    /// In round-robin order.
    pub backends: &'a [SocketAddr],
    /// ClientIP affinity timeout in seconds (0 never happens: kube-proxy
    /// turns 0 into 10800).
    pub affinity_seconds: Option<u32>,
}

/// How `NextEndpoint` chose.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pick {
    Affinity { idle_ms: u64 },
    RoundRobin { index: usize },
}

/// One `NextEndpoint` + dial.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attempt {
    pub endpoint: SocketAddr,
    pub pick: Pick,
    pub timeout_ms: u64,
    pub answered: bool,
}

/// What `TryConnectEndpoints` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Connected {
    /// `ErrMissingEndpoints`: no attempt at all.
    NoEndpoints,
    /// The last attempt answered.
    Ok(Vec<Attempt>),
    /// "failed to connect to an endpoint."
    Failed(Vec<Attempt>),
}

fn fingerprint_key(key: &str) -> String {
    format!("{key} userspace-endpoints")
}

/// `OnEndpointsUpdate`: when the backend set differs from the one the state
/// was built for, reset the index to 0 and forget affinity to endpoints that
/// are gone (`removeStaleAffinity`).
fn sync_endpoints(b: &Balanced, state: &mut NodeState) {
    let mut sorted: Vec<String> = b.backends.iter().map(|e| e.to_string()).collect();
    crate::util::order::sort(&mut sorted);
    let fp = (crate::util::sha256::prefix64(&sorted.join(",")) >> 1) as i64;
    let fk = fingerprint_key(b.key);
    match state.counters.get(&fk) {
        Some(&old) if old == fp => {}
        Some(_) => {
            state.counters.insert(fk, fp);
            state.rr.insert(b.key.to_string(), 0);
            state
                .affinity
                .retain(|(k, _), (ep, _)| k != b.key || b.backends.contains(ep));
        }
        None => {
            state.counters.insert(fk, fp);
        }
    }
}

/// `LoadBalancerRR.NextEndpoint`. `None` = `ErrMissingEndpoints`.
pub fn next_endpoint(
    b: &Balanced,
    client: IpAddr,
    affinity_reset: bool,
    state: &mut NodeState,
    now_ms: u64,
) -> Option<(SocketAddr, Pick)> {
    if b.backends.is_empty() {
        return None;
    }
    let akey = (b.key.to_string(), client);
    if let Some(ttl) = b.affinity_seconds {
        if !affinity_reset {
            if let Some(&(ep, last)) = state.affinity.get(&akey) {
                let idle_ms = now_ms.saturating_sub(last);
                // int(time.Since(lastUsed).Seconds()) < ttlSeconds
                if idle_ms / 1000 < u64::from(ttl) && b.backends.contains(&ep) {
                    state.affinity.insert(akey, (ep, now_ms));
                    return Some((ep, Pick::Affinity { idle_ms }));
                }
            }
        }
    }
    let len = b.backends.len();
    let index = state
        .rr
        .get(b.key)
        .map(|&i| i.rem_euclid(len as i64) as usize)
        .unwrap_or(0);
    let ep = b.backends[index];
    state
        .rr
        .insert(b.key.to_string(), ((index + 1) % len) as i64);
    if b.affinity_seconds.is_some() {
        state.affinity.insert(akey, (ep, now_ms));
    }
    Some((ep, Pick::RoundRobin { index }))
}

/// `TryConnectEndpoints`: at most one attempt per dial timeout.
///
/// A UDP "dial" only creates a connected socket and sends nothing, so it
/// cannot fail on a backend that does not answer: the first pick is used.
pub fn try_connect(
    b: &Balanced,
    client: IpAddr,
    state: &mut NodeState,
    world: &dyn World,
    now_ms: u64,
) -> Connected {
    sync_endpoints(b, state);
    let mut attempts = Vec::new();
    let mut reset = false;
    for timeout_ms in DIAL_TIMEOUTS_MS {
        let Some((endpoint, pick)) = next_endpoint(b, client, reset, state, now_ms) else {
            return Connected::NoEndpoints;
        };
        let answered = b.protocol == Protocol::Udp || world.answers(endpoint);
        attempts.push(Attempt {
            endpoint,
            pick,
            timeout_ms,
            answered,
        });
        if answered {
            return Connected::Ok(attempts);
        }
        reset = true;
    }
    Connected::Failed(attempts)
}
