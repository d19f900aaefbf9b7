//! HTTP routing (Ingress, Gateway API) as code the app loads when a
//! scenario first has routing objects.
//!
//! With the `split` feature (the release build) kpv-core's HTTP table
//! ([`kpv_core::http::registry::FNS`]) is a split point, like the mode
//! compilers in [`crate::modes`]: `cargo xtask build` cuts everything only
//! it reaches into a file of its own, fetched on first use and then
//! registered with kpv-core. Without it (development builds, the tests)
//! routing is linked in and [`ready`] is always true. The app's code never
//! calls HTTP routing except through [`fns`]; the store says "loading"
//! until it is here. This module never decides anything about requests.

use kpv_core::http::registry::{self, Fns};

/// True when HTTP requests can be routed now.
pub fn ready() -> bool {
    registry::ready()
}

/// The table, when routing's code is here.
pub fn fns() -> Option<Fns> {
    registry::fns()
}

/// Routing's code did not arrive (the browser's console says more).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadFailed;

/// Fetch routing's code if it is not here yet, and register it.
pub async fn load() -> Result<(), LoadFailed> {
    if ready() {
        return Ok(());
    }
    #[cfg(feature = "split")]
    {
        match split::http().await {
            Ok(f) => registry::register(f),
            Err(_) => return Err(LoadFailed),
        }
    }
    if ready() {
        Ok(())
    } else {
        Err(LoadFailed)
    }
}

#[cfg(feature = "split")]
mod split {
    //! The split point: it returns the table, whose code (and everything
    //! only it reaches) lives in the routing file.
    use kpv_core::http::registry::{Fns, FNS};

    split_points! {
        kpv_http { pub fn http -> Fns = FNS; }
    }
}
