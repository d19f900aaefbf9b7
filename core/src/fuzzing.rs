//! The body of the fuzz targets, shared by `core/fuzz` (cargo-fuzz) and the
//! replay test `core/tests/fuzz_corpus.rs`, so a corpus file that once crashed
//! keeps being checked by a plain `cargo test`.
//!
//! Not part of the public API: hidden from the docs and free to change.

use crate::choose::Chooser;
use crate::model::Mode;
use crate::modes::Dataplane;
use crate::packet::{IpFamily, Protocol};
use crate::trace::{self, Dest, Origin, Request, Sim, WorldState};

/// `yaml_import`: arbitrary bytes (read as lossy UTF-8) through the parser and,
/// when they parse without errors, through the controller, every mode's
/// compiler and renderers for the first node, and one traced packet per mode.
///
/// Panics (the fuzzer's "crash") are the only failure; there is no result.
pub fn fuzz_one(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    let (cluster, diags) = crate::model::parse(&text);
    if crate::diag::has_errors(&diags) {
        return;
    }
    let Some(node) = cluster.nodes.first() else {
        return;
    };
    let slices = crate::controller::steady_slices(&cluster);
    // The first Service with a ClusterIP and a port: the packet's destination.
    let target = cluster.services.iter().find_map(|s| {
        let ip = *s.cluster_ips.first()?;
        let p = s.ports.first()?;
        Some((ip, p.port, p.protocol))
    });
    for mode in Mode::ALL {
        let sim = Sim::new(&cluster, &slices, mode, None);
        for family in [IpFamily::V4, IpFamily::V6] {
            if let Some(dp) = sim.dataplane(&node.name, family) {
                exercise_renderers(dp);
            }
        }
        let (dst, port, protocol) = match target {
            Some(t) => t,
            None => match node.primary_ip(IpFamily::V4) {
                Some(ip) => (ip, 30000, Protocol::Tcp),
                None => continue,
            },
        };
        let src = node
            .primary_ip(IpFamily::of(&dst))
            .unwrap_or_else(|| crate::proxy::loopback(IpFamily::of(&dst)));
        let req = Request {
            origin: Origin::Node {
                node: node.name.clone(),
                src,
            },
            dst: Dest::Ip(dst),
            port,
            protocol,
            src_port: 40000,
            keep_open: false,
        };
        let mut state = WorldState::default();
        let mut chooser = Chooser::new(1);
        let t = trace::trace(&sim, &req, &mut state, &mut chooser, 0);
        let _ = trace::render_text(&t);
        #[cfg(feature = "json")]
        let _ = trace::to_json(&t);
        let _ = trace::stages(&cluster, &t);
    }
}

fn exercise_renderers(dp: &dyn Dataplane) {
    let _ = dp.render_text();
    #[cfg(feature = "json")]
    let _ = dp.render_json();
    let _ = dp.rule_count();
}
