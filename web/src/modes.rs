//! The modes' compilers, as code the app loads when a scenario first
//! needs one: the first download carries none of them.
//!
//! With the `split` feature (the release build) each of them is a split
//! point: `cargo xtask build` cuts its code out of the first `.wasm` into a
//! file of its own, fetched from the app's origin on first use and then
//! kept here (the only place that keeps loaded code: kpv-core is handed
//! the compilers, [`compilers`]). Without it (development builds, the
//! tests) every compiler is linked in and loading is immediate.
//!
//! Which modes are here is an input of the Store ([`Loads`] in
//! `Store::loads`): everything computed with a mode waits for it, so a
//! memo never keeps a result computed without the mode's code. This module
//! never decides anything about packets, and no other module knows about
//! split points.
//!
//! When to fetch is decided in [`crate::mode_fetch`].

use crate::load::Fetch;
use kpv_core::model::Mode;
use kpv_core::net::modes::Compilers;

/// The compilers whose code has arrived (by [`Mode::index`]).
#[cfg(feature = "split")]
static LOADED: [std::sync::OnceLock<kpv_core::net::modes::CompileFn>; Mode::COUNT] =
    [const { std::sync::OnceLock::new() }; Mode::COUNT];

/// The compilers this app can hand kpv-core now: those that have arrived
/// (all of them in a build without `split`).
pub fn compilers() -> Compilers {
    #[cfg(feature = "split")]
    {
        Mode::ALL
            .into_iter()
            .fold(Compilers::NONE, |c, m| match LOADED[m.index()].get() {
                Some(f) => c.with(m, *f),
                None => c,
            })
    }
    #[cfg(not(feature = "split"))]
    {
        Compilers::ALL
    }
}

/// True when `mode`'s rules can be computed now (its code is linked in or
/// has arrived).
pub fn ready(mode: Mode) -> bool {
    compilers().ready(mode)
}

/// Where every mode's code is: the Store's input that says which modes
/// computations may use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Loads([Fetch; Mode::COUNT]);

/// The order the modes not in use are prefetched in: the ones a learner
/// most often turns to first (IPVS and nftables are what the lessons and
/// the compare view contrast with iptables, Cilium what replaces them;
/// userspace is history).
const PREFETCH_ORDER: [Mode; Mode::COUNT] = [
    Mode::Iptables,
    Mode::Ipvs,
    Mode::Nftables,
    Mode::Cilium,
    Mode::Userspace,
];

impl Loads {
    /// Every mode as `ready` says: ready, or not asked for yet.
    pub fn from_ready(ready: impl Fn(Mode) -> bool) -> Loads {
        Loads(Mode::ALL.map(|m| Fetch::of(ready(m))))
    }

    /// As this build has them: the linked modes (all of them without
    /// `split`, none with it) and any already registered.
    pub fn now() -> Loads {
        Loads::from_ready(ready)
    }

    pub fn of(&self, mode: Mode) -> Fetch {
        self.0[mode.index()]
    }

    pub fn ready(&self, mode: Mode) -> bool {
        self.of(mode) == Fetch::Ready
    }

    /// A fetch of `mode` starts: true if one was needed (it was absent or
    /// had failed); a mode on its way or here stays as it is.
    pub fn begin(&mut self, mode: Mode) -> bool {
        self.0[mode.index()].begin()
    }

    /// A fetch of `mode` ended. A mode once ready stays ready.
    pub fn finish(&mut self, mode: Mode, ok: bool) {
        self.0[mode.index()].finish(ok)
    }

    /// What a view that needs `modes` waits for: the first that failed
    /// (say so, offer Retry), else the first not here yet; `None` when all
    /// are ready.
    pub fn waiting(&self, modes: &[Mode]) -> Option<(Mode, Fetch)> {
        let not_ready = modes.iter().map(|m| (*m, self.of(*m)));
        not_ready
            .clone()
            .find(|(_, l)| *l == Fetch::Failed)
            .or_else(|| not_ready.clone().find(|(_, l)| *l != Fetch::Ready))
    }

    /// The modes worth prefetching: those never asked for (one that failed
    /// waits for the user), in [`PREFETCH_ORDER`].
    pub fn to_prefetch(&self) -> Vec<Mode> {
        PREFETCH_ORDER
            .into_iter()
            .filter(|m| self.of(*m) == Fetch::Absent)
            .collect()
    }
}

/// Why a mode's code did not arrive (the browser says more in its console).
pub type LoadFailed = crate::load::LoadFailed<Mode>;

/// Fetch `mode`'s code if it is not here yet, and keep it.
pub async fn load(mode: Mode) -> Result<(), LoadFailed> {
    if ready(mode) {
        return Ok(());
    }
    #[cfg(feature = "split")]
    {
        let loaded = match mode {
            Mode::Userspace => split::userspace().await,
            Mode::Ipvs => split::ipvs().await,
            Mode::Nftables => split::nftables().await,
            Mode::Iptables => split::iptables().await,
            Mode::Cilium => split::cilium().await,
        };
        match loaded {
            Ok(f) => {
                // The first arrival stands (two fetches of one file give
                // the same function).
                let _ = LOADED[mode.index()].set(f);
            }
            Err(_) => return Err(crate::load::LoadFailed(mode)),
        }
    }
    if ready(mode) {
        Ok(())
    } else {
        Err(crate::load::LoadFailed(mode))
    }
}

#[cfg(feature = "split")]
mod split {
    //! One split point per mode: each returns its compiler, whose code (and
    //! everything only it reaches) lives in that mode's own file.
    use kpv_core::net::modes::{self, CompileFn};

    split_points! {
        kpv_userspace { pub fn userspace -> CompileFn = modes::compile_userspace; }
        kpv_iptables { pub fn iptables -> CompileFn = modes::compile_iptables; }
        kpv_ipvs { pub fn ipvs -> CompileFn = modes::compile_ipvs; }
        kpv_nftables { pub fn nftables -> CompileFn = modes::compile_nftables; }
        kpv_cilium { pub fn cilium -> CompileFn = modes::compile_cilium; }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The release build once the mode in use (iptables) has arrived.
    fn release() -> Loads {
        Loads::from_ready(|m| m == Mode::Iptables)
    }

    #[test]
    fn every_mode_is_ready_in_a_build_without_split() {
        let l = Loads::now();
        for m in Mode::ALL {
            assert!(l.ready(m), "{m:?}");
        }
        assert_eq!(l.to_prefetch(), Vec::<Mode>::new());
        assert_eq!(l.waiting(&Mode::ALL), None);
    }

    #[test]
    fn a_fetch_begins_once_and_a_failed_one_begins_again_when_asked() {
        // (state before, begin() says, state after begin)
        for (before, starts, after) in [
            (Fetch::Absent, true, Fetch::Loading),
            (Fetch::Loading, false, Fetch::Loading),
            (Fetch::Ready, false, Fetch::Ready),
            (Fetch::Failed, true, Fetch::Loading),
        ] {
            let mut l = release();
            l.0[Mode::Ipvs.index()] = before;
            assert_eq!(l.begin(Mode::Ipvs), starts, "{before:?}");
            assert_eq!(l.of(Mode::Ipvs), after, "{before:?}");
        }
    }

    #[test]
    fn a_fetch_ends_ready_or_failed_and_ready_stays() {
        for (ok, want) in [(true, Fetch::Ready), (false, Fetch::Failed)] {
            let mut l = release();
            l.begin(Mode::Nftables);
            l.finish(Mode::Nftables, ok);
            assert_eq!(l.of(Mode::Nftables), want);
        }
        let mut l = release();
        l.finish(Mode::Iptables, false);
        assert!(l.ready(Mode::Iptables), "a late failure does not unload");
    }

    #[test]
    fn a_view_waits_for_a_failure_first_then_for_what_is_coming() {
        let mut l = release();
        assert_eq!(l.waiting(&[Mode::Iptables]), None);
        assert_eq!(
            l.waiting(&[Mode::Iptables, Mode::Ipvs, Mode::Nftables]),
            Some((Mode::Ipvs, Fetch::Absent))
        );
        l.begin(Mode::Ipvs);
        l.begin(Mode::Nftables);
        l.finish(Mode::Nftables, false);
        assert_eq!(
            l.waiting(&[Mode::Iptables, Mode::Ipvs, Mode::Nftables]),
            Some((Mode::Nftables, Fetch::Failed))
        );
        l.finish(Mode::Ipvs, true);
        assert_eq!(l.waiting(&[Mode::Ipvs]), None);
    }

    #[test]
    fn prefetch_takes_what_was_never_asked_for_in_order() {
        let mut l = release();
        assert_eq!(
            l.to_prefetch(),
            vec![Mode::Ipvs, Mode::Nftables, Mode::Cilium, Mode::Userspace]
        );
        // The mode in use is already on its way; one that failed waits for
        // the user.
        l.begin(Mode::Nftables);
        l.begin(Mode::Userspace);
        l.finish(Mode::Userspace, false);
        assert_eq!(l.to_prefetch(), vec![Mode::Ipvs, Mode::Cilium]);
    }
}
