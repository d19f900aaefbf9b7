//! Which mode compilers [`super::compile`] can call.
//!
//! Every build but one links all four. The web app's release build enables
//! `lazy-modes`: only iptables (the default mode) is linked in, and the
//! userspace, IPVS and nftables compilers live in code the app loads when a
//! scenario first needs them, then [`register`]s here. Nothing in this module
//! decides anything about packets or rules; it only says which compiler
//! renders a mode, and refuses (with [`Unloaded`], never a guess) when the
//! code for it is not there.

use super::{CompileFn, Dataplane, Hook, NodeOutcome, NodeState, Verdict, World};
use crate::choose::Chooser;
use crate::model::Mode;
use crate::packet::Packet;

/// The compiler of `mode`, if its code is in this build or has been
/// registered.
pub fn compiler(mode: Mode) -> Option<CompileFn> {
    linked(mode).or_else(|| loaded(mode))
}

/// True when [`super::compile`] renders `mode` for real.
pub fn ready(mode: Mode) -> bool {
    compiler(mode).is_some()
}

#[cfg(not(feature = "lazy-modes"))]
fn linked(mode: Mode) -> Option<CompileFn> {
    Some(match mode {
        Mode::Userspace => super::compile_userspace,
        Mode::Iptables => super::compile_iptables,
        Mode::Ipvs => super::compile_ipvs,
        Mode::Nftables => super::compile_nftables,
    })
}

#[cfg(feature = "lazy-modes")]
fn linked(mode: Mode) -> Option<CompileFn> {
    (mode == Mode::Iptables).then_some(super::compile_iptables as CompileFn)
}

#[cfg(not(feature = "lazy-modes"))]
fn loaded(_mode: Mode) -> Option<CompileFn> {
    None
}

#[cfg(feature = "lazy-modes")]
static LOADED: [std::sync::OnceLock<CompileFn>; 4] = [const { std::sync::OnceLock::new() }; 4];

#[cfg(feature = "lazy-modes")]
fn loaded(mode: Mode) -> Option<CompileFn> {
    LOADED[mode.index()].get().copied()
}

/// Make `f` the compiler of `mode` (its code has just loaded). The first
/// registration stands; a mode linked into the build keeps its own.
#[cfg(feature = "lazy-modes")]
pub fn register(mode: Mode, f: CompileFn) {
    let _ = LOADED[mode.index()].set(f);
}

/// The data plane of a mode whose code is not loaded: it has no rules and
/// leaves every packet alone. The app never shows it: it waits for
/// [`ready`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unloaded(pub Mode);

impl Dataplane for Unloaded {
    fn mode(&self) -> Mode {
        self.0
    }

    fn render_text(&self) -> String {
        String::new()
    }

    #[cfg(feature = "json")]
    fn render_json(&self) -> serde_json::Value {
        serde_json::Value::Null
    }

    fn process(
        &self,
        _packet: &Packet,
        _hook: Hook,
        _state: &mut NodeState,
        _chooser: &mut Chooser,
        _world: &dyn World,
        _now_ms: u64,
    ) -> NodeOutcome {
        NodeOutcome {
            verdict: Verdict::None,
            candidates: Vec::new(),
            masquerade: false,
            steps: Vec::new(),
            rules_compared: 0,
        }
    }

    fn rule_count(&self) -> usize {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_mode_has_its_own_place_in_the_per_mode_tables() {
        for (i, mode) in Mode::ALL.into_iter().enumerate() {
            assert_eq!(mode.index(), i, "{mode:?}");
        }
    }

    #[test]
    fn an_unloaded_mode_leaves_packets_alone_and_has_no_rules() {
        let plane = Unloaded(Mode::Ipvs);
        assert_eq!(plane.mode(), Mode::Ipvs);
        assert_eq!(plane.render_text(), "");
        assert_eq!(plane.rule_count(), 0);
    }

    #[cfg(not(feature = "lazy-modes"))]
    #[test]
    fn every_mode_is_ready_without_lazy_modes() {
        for mode in Mode::ALL {
            assert!(ready(mode), "{mode:?}");
            assert_eq!(
                compiler(mode).map(|f| f as usize),
                linked(mode).map(|f| f as usize)
            );
        }
    }
}
