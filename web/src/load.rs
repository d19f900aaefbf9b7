//! Loading later, one way for every piece of code or data the app fetches
//! after its first screen (the modes' compilers, HTTP routing, the parts
//! below the first screen, share-link reading, presets, lessons, the
//! Korean words): where a piece is ([`Fetch`]), why it did not come
//! ([`LoadFailed`], which the app offers a Retry for), and when to fetch
//! what is not urgent ([`when_idle`], [`after_first_paint`]). Nothing here
//! fetches anything itself or decides what to fetch.

use leptos::prelude::*;

/// Where one piece is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Fetch {
    /// Not asked for yet.
    #[default]
    Absent,
    /// On its way.
    Loading,
    /// Here.
    Ready,
    /// The last fetch failed (offline, not found); asking again retries.
    Failed,
}

impl Fetch {
    /// `Ready` when `here`, else `Absent`.
    pub fn of(here: bool) -> Fetch {
        if here {
            Fetch::Ready
        } else {
            Fetch::Absent
        }
    }

    /// A fetch starts: true if one was needed (absent, or failed before); a
    /// piece on its way or here stays as it is.
    pub fn begin(&mut self) -> bool {
        match self {
            Fetch::Absent | Fetch::Failed => {
                *self = Fetch::Loading;
                true
            }
            Fetch::Loading | Fetch::Ready => false,
        }
    }

    /// A fetch ended. A piece once here stays here.
    pub fn finish(&mut self, ok: bool) {
        if *self != Fetch::Ready {
            *self = if ok { Fetch::Ready } else { Fetch::Failed };
        }
    }
}

/// What did not arrive (the browser's console says more).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadFailed<W = ()>(pub W);

/// How long a piece fetched when the browser is idle may wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Idle {
    /// Until the browser is idle, or a second and a half at the latest
    /// (the parts below the first screen: the reader may scroll to them).
    Soon,
    /// Until the browser is really idle, however long that takes (the
    /// modes not in use: a busy animation is never interrupted for them).
    Whenever,
}

/// Run `f` when the browser is next idle, as `idle` allows; where there is
/// no idle callback, after a short timeout.
pub fn when_idle(idle: Idle, f: impl FnOnce() + 'static) {
    use wasm_bindgen::{closure::Closure, JsCast};
    let Some(window) = web_sys::window() else {
        return;
    };
    let request = js_sys::Reflect::get(&window, &"requestIdleCallback".into())
        .ok()
        .and_then(|v| v.dyn_into::<js_sys::Function>().ok());
    let callback = Closure::once_into_js(f);
    let asked = request.is_some_and(|request| match idle {
        Idle::Soon => {
            let opts = js_sys::Object::new();
            let _ = js_sys::Reflect::set(&opts, &"timeout".into(), &1500.into());
            request.call2(&window, &callback, &opts).is_ok()
        }
        Idle::Whenever => request.call1(&window, &callback).is_ok(),
    });
    if !asked {
        let fallback_ms = match idle {
            Idle::Soon => 50,
            Idle::Whenever => 300,
        };
        if let Ok(cb) = callback.dyn_into::<js_sys::Function>() {
            let _ = window.set_timeout_with_callback_and_timeout_and_arguments_0(&cb, fallback_ms);
        }
    }
}

/// Run `f` once the first screen has been painted (two animation frames)
/// and the browser is then idle, as `idle` allows.
pub fn after_first_paint(idle: Idle, f: impl FnOnce() + 'static) {
    request_animation_frame(move || request_animation_frame(move || when_idle(idle, f)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fetch_begins_once_and_a_failed_one_begins_again_when_asked() {
        // (state before, begin() says, state after begin)
        for (before, starts, after) in [
            (Fetch::Absent, true, Fetch::Loading),
            (Fetch::Loading, false, Fetch::Loading),
            (Fetch::Ready, false, Fetch::Ready),
            (Fetch::Failed, true, Fetch::Loading),
        ] {
            let mut f = before;
            assert_eq!(f.begin(), starts, "{before:?}");
            assert_eq!(f, after, "{before:?}");
        }
    }

    #[test]
    fn a_fetch_ends_ready_or_failed_and_ready_stays() {
        for (ok, want) in [(true, Fetch::Ready), (false, Fetch::Failed)] {
            let mut f = Fetch::Absent;
            f.begin();
            f.finish(ok);
            assert_eq!(f, want);
        }
        let mut f = Fetch::Ready;
        f.finish(false);
        assert_eq!(f, Fetch::Ready, "a late failure does not unload");
        assert_eq!(Fetch::of(true), Fetch::Ready);
        assert_eq!(Fetch::of(false), Fetch::Absent);
    }
}
