//! The userspace, IPVS and nftables compilers, as code the app loads when a
//! scenario first needs one.
//!
//! With the `split` feature (the release build) each of them is a split
//! point: `cargo xtask build` cuts its code out of the first `.wasm` into a
//! file of its own, fetched from the app's origin on first use and then
//! registered with kpv-core ([`kpv_core::modes::registry`]). Without it
//! (development builds, the tests) every compiler is linked in and loading
//! is immediate. This module never decides anything about packets; the
//! store asks [`ready`] and shows "loading" until it is true.

use kpv_core::model::Mode;

/// True when `mode`'s rules can be computed now.
pub fn ready(mode: Mode) -> bool {
    kpv_core::modes::registry::ready(mode)
}

/// Why a mode's code did not arrive (the browser says more in its console).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadFailed(pub Mode);

/// Fetch `mode`'s code if it is not here yet, and register it.
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
            Mode::Iptables => return Ok(()),
        };
        match loaded {
            Ok(f) => kpv_core::modes::registry::register(mode, f),
            Err(_) => return Err(LoadFailed(mode)),
        }
    }
    if ready(mode) {
        Ok(())
    } else {
        Err(LoadFailed(mode))
    }
}

#[cfg(feature = "split")]
mod split {
    //! One split point per mode: each returns its compiler, whose code (and
    //! everything only it reaches) lives in that mode's own file.
    use kpv_core::modes::CompileFn;
    use wasm_split_helpers::{wasm_split, SplitLoaderError};

    #[wasm_split(kpv_userspace, fallible)]
    pub fn userspace() -> Result<CompileFn, SplitLoaderError> {
        Ok(kpv_core::modes::compile_userspace)
    }

    #[wasm_split(kpv_ipvs, fallible)]
    pub fn ipvs() -> Result<CompileFn, SplitLoaderError> {
        Ok(kpv_core::modes::compile_ipvs)
    }

    #[wasm_split(kpv_nftables, fallible)]
    pub fn nftables() -> Result<CompileFn, SplitLoaderError> {
        Ok(kpv_core::modes::compile_nftables)
    }
}
