//! Which mode compilers a computation may call: [`Compilers`], a value the
//! caller hands in.
//!
//! Native builds (the CLI, the tests, the kernel check) hand in
//! [`Compilers::ALL`]. The web app's release build starts with
//! [`Compilers::NONE`] and adds each mode's compiler as its code arrives
//! (the mode in use first); it keeps that state itself. Nothing here
//! is global and nothing decides anything about packets or rules: this
//! module only says which compiler renders a mode, and compiles a mode
//! whose compiler is absent to [`Unloaded`] (never a guess).

use super::{CompileFn, CompileOptions, Dataplane, Hook, NodeOutcome, NodeState, Verdict, World};
use crate::model::packet::Packet;
use crate::model::Mode;
use crate::net::proxy::ProxyInput;
use crate::util::choose::Chooser;

/// The compiler of each mode, when the caller has its code (by
/// [`Mode::index`]).
#[derive(Clone, Copy)]
pub struct Compilers([Option<CompileFn>; Mode::COUNT]);

impl Compilers {
    /// Every mode's compiler. Naming this links all of them in.
    pub const ALL: Compilers = Compilers([
        Some(super::compile_userspace),
        Some(super::compile_iptables),
        Some(super::compile_ipvs),
        Some(super::compile_nftables),
        Some(super::compile_cilium),
    ]);

    /// Only iptables, the default mode.
    pub const IPTABLES: Compilers = Compilers::NONE.with(Mode::Iptables, super::compile_iptables);

    /// No compiler at all.
    pub const NONE: Compilers = Compilers([None; Mode::COUNT]);

    /// These compilers and `f` for `mode` (its code has just arrived).
    #[must_use]
    pub const fn with(mut self, mode: Mode, f: CompileFn) -> Compilers {
        self.0[mode.index()] = Some(f);
        self
    }

    /// The compiler of `mode`, if it is here.
    pub fn get(&self, mode: Mode) -> Option<CompileFn> {
        self.0[mode.index()]
    }

    /// True when [`Compilers::compile`] renders `mode` for real.
    pub fn ready(&self, mode: Mode) -> bool {
        self.get(mode).is_some()
    }

    /// Compile a node's view in `mode`; a mode whose compiler is absent
    /// compiles to [`Unloaded`], which touches no packet (the app asks
    /// [`Compilers::ready`] first).
    pub fn compile(
        &self,
        mode: Mode,
        input: &ProxyInput,
        opts: CompileOptions,
    ) -> Box<dyn Dataplane> {
        match self.get(mode) {
            Some(f) => f(input, opts),
            None => Box::new(Unloaded(mode)),
        }
    }
}

impl std::fmt::Debug for Compilers {
    /// The modes that are here (function addresses say nothing).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(Mode::ALL.into_iter().filter(|m| self.ready(*m)))
            .finish()
    }
}

/// The data plane of a mode whose code is not loaded: it has no rules and
/// leaves every packet alone. The app never shows it: it waits for
/// [`Compilers::ready`].
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

    #[test]
    fn a_mode_is_ready_exactly_when_its_compiler_was_handed_in() {
        for mode in Mode::ALL {
            assert!(Compilers::ALL.ready(mode), "{mode:?}");
            assert!(!Compilers::NONE.ready(mode), "{mode:?}");
            assert_eq!(Compilers::IPTABLES.ready(mode), mode == Mode::Iptables);
        }
        let added = Compilers::IPTABLES.with(Mode::Ipvs, crate::net::modes::compile_ipvs);
        assert!(added.ready(Mode::Ipvs) && added.ready(Mode::Iptables));
        assert!(!added.ready(Mode::Nftables));
        assert_eq!(format!("{added:?}"), "[Iptables, Ipvs]");
    }

    #[test]
    fn an_absent_compiler_compiles_to_unloaded_and_a_present_one_for_real() {
        let (cluster, _) = crate::Code::ALL.parse(
            "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {clusterIP: 10.96.0.10, ports: [{port: 80}]}\n",
        );
        let slices = crate::net::controller::compute_slices(&cluster, &Default::default());
        let Some(node) = cluster.nodes.first() else {
            panic!("the cluster has an assumed node");
        };
        let Some(input) = crate::net::proxy::build_input(
            &cluster,
            &slices,
            &node.name,
            crate::model::packet::IpFamily::V4,
        ) else {
            panic!("the node has an IPv4 view");
        };
        let opts = CompileOptions::default();
        assert_eq!(
            Compilers::NONE
                .compile(Mode::Ipvs, &input, opts)
                .rule_count(),
            0
        );
        assert!(
            Compilers::ALL
                .compile(Mode::Ipvs, &input, opts)
                .rule_count()
                > 0
        );
    }
}
