//! HTTP routing (Ingress, Gateway API) as code the app loads when a
//! scenario first has routing objects.
//!
//! With the `split` feature (the release build) kpv-core's HTTP routing
//! ([`kpv_core::code::Http::LINKED`]) is a split point, like the mode
//! compilers in [`crate::modes`]: `cargo xtask build` cuts everything only
//! it reaches into a file of its own, fetched on first use and then kept
//! here. Without it (development builds, the tests) routing is linked in
//! and [`ready`] is always true. The app hands it to kpv-core through
//! [`crate::code`]; the store says "loading" until it is here. This module
//! never decides anything about requests.

use kpv_core::code::Http;

/// Routing's code, once it has arrived.
#[cfg(feature = "split")]
static LOADED: std::sync::OnceLock<Http> = std::sync::OnceLock::new();

/// HTTP routing, when its code is here.
pub fn http() -> Option<Http> {
    #[cfg(feature = "split")]
    {
        LOADED.get().copied()
    }
    #[cfg(not(feature = "split"))]
    {
        Some(LINKED)
    }
}

/// HTTP routing as this build links it: the embed has no lessons, so it
/// leaves their part (and its words) out.
#[cfg(feature = "full")]
const LINKED: Http = Http::LINKED;
#[cfg(not(feature = "full"))]
const LINKED: Http = Http::WITHOUT_LESSONS;

/// True when HTTP requests can be routed now.
pub fn ready() -> bool {
    http().is_some()
}

/// Routing's code did not arrive (the browser's console says more).
pub type LoadFailed = crate::load::LoadFailed;

/// Fetch routing's code if it is not here yet, and keep it.
pub async fn load() -> Result<(), LoadFailed> {
    if ready() {
        return Ok(());
    }
    #[cfg(feature = "split")]
    {
        match split::http().await {
            Ok(f) => {
                // The first arrival stands.
                let _ = LOADED.set(f);
            }
            Err(_) => return Err(crate::load::LoadFailed(())),
        }
    }
    if ready() {
        Ok(())
    } else {
        Err(crate::load::LoadFailed(()))
    }
}

#[cfg(feature = "split")]
mod split {
    //! The split point: it returns HTTP routing's functions, whose code (and
    //! everything only it reaches) lives in the routing file.
    use kpv_core::code::Http;

    split_points! {
        kpv_http { pub fn http -> Http = super::LINKED; }
    }
}
