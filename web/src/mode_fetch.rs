//! When the app fetches the modes' code (decided here, once), recording
//! each outcome in the Store's input `loads` ([`crate::modes`] holds the
//! code itself).
//!
//! - the mode in use is fetched as soon as it is chosen — at start-up
//!   before the first frame is painted, so `?mode=ipvs`, a share link or a
//!   `KubeProxyConfiguration` saying `mode: ipvs` waits as little as it can
//!   ([`follow`]);
//! - the other modes are prefetched one after another once the first screen
//!   is drawn and the browser is idle ([`prefetch_when_idle`]): they never
//!   compete with start-up for the network or the CPU, and a later click on
//!   another mode usually finds its code already here (not in an embed,
//!   which shows one mode and fetches only its code);
//! - a view that needs other modes (compare, the scaling lab) asks for them
//!   with [`ensure`] when it is used; a failed fetch is tried again only when
//!   the user asks (Retry, or choosing the mode again), never in a loop.

use crate::load::Fetch;
use crate::modes::{load, LoadFailed, Loads};
use crate::state::Store;
use kpv_core::model::Mode;
use leptos::prelude::*;

/// Make `mode` ready: fetch its code unless it is here (a fetch already on
/// its way is joined, not repeated), and record the outcome in
/// `store.loads`.
pub async fn ensure(store: Store, mode: Mode) -> Result<(), LoadFailed> {
    if crate::modes::ready(mode) {
        if !store.loads.with_untracked(|l| l.ready(mode)) {
            store.loads.try_update(|l| l.finish(mode, true));
        }
        return Ok(());
    }
    store.loads.maybe_update(|l| l.begin(mode));
    let result = load(mode).await;
    store.loads.try_update(|l| l.finish(mode, result.is_ok()));
    result
}

/// [`ensure`] each of `modes` in turn; the first that failed, if any.
pub async fn ensure_all(store: Store, modes: &[Mode]) -> Result<(), LoadFailed> {
    for m in modes {
        ensure(store, *m).await?;
    }
    Ok(())
}

/// Start fetching `modes` that are not here (Retry, a view opened).
pub fn request(store: Store, modes: &[Mode]) {
    let wanted: Vec<Mode> = modes
        .iter()
        .copied()
        .filter(|m| !store.loads.with_untracked(|l| l.ready(*m)))
        .collect();
    for m in wanted {
        leptos::task::spawn_local(async move {
            let _ = ensure(store, m).await;
        });
    }
}

/// Fetch the mode in use whenever it changes to one whose code is not here
/// (the buttons, a lesson step, `?mode=`, a share link, the scenario's
/// `KubeProxyConfiguration`: all of them set `store.mode`). Only the mode
/// is tracked: a failed fetch waits for Retry or another choice.
pub fn follow(store: Store) {
    Effect::new(move |_| {
        let mode = store.mode.get();
        if !store.loads.with_untracked(|l| l.ready(mode)) {
            request(store, &[mode]);
        }
    });
}

/// Once the first screen has been painted and the browser is idle, fetch
/// the modes never asked for, one at a time (see the module comment).
pub fn prefetch_when_idle(store: Store) {
    let run = move || {
        leptos::task::spawn_local(async move {
            for m in store.loads.with_untracked(Loads::to_prefetch) {
                // One the user has asked for meanwhile is on its way already.
                if store.loads.with_untracked(|l| l.of(m)) == Fetch::Absent {
                    let _ = ensure(store, m).await;
                }
            }
        })
    };
    // The first screen is drawn by then, and an animation playing is never
    // interrupted for code nobody has asked for yet.
    crate::load::after_first_paint(crate::load::Idle::Whenever, run);
}
