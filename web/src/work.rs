//! Long computations in slices between frames, so the page stays responsive.
//!
//! The labs trace thousands of packets and compile rulesets for thousands of
//! Services; done in one go that would freeze the page. [`in_frames`] calls a
//! slice of work once per animation frame until it says it is finished; each
//! slice does about [`SLICE_MS`] of work and the browser paints in between
//! (progress bars and charts update as the numbers come in).

use leptos::prelude::{GetUntracked, RwSignal, Set};
use std::cell::RefCell;
use std::rc::Rc;

/// The work one slice aims to do per frame, in milliseconds.
pub const SLICE_MS: f64 = 12.0;

/// Milliseconds on the page's clock (for slicing only; the model never reads it).
pub fn now_ms() -> f64 {
    js_sys::Date::now()
}

/// Call `slice` once per animation frame until it returns `false`.
pub fn in_frames(slice: impl FnMut() -> bool + 'static) {
    type Slot = Rc<RefCell<Option<gloo_render::AnimationFrame>>>;
    fn schedule(slot: Slot, slice: Rc<RefCell<dyn FnMut() -> bool>>) {
        let next = slot.clone();
        let handle = gloo_render::request_animation_frame(move |_| {
            let more = (slice.borrow_mut())();
            if more {
                schedule(next, slice);
            } else {
                next.borrow_mut().take();
            }
        });
        *slot.borrow_mut() = Some(handle);
    }
    let slot: Slot = Rc::new(RefCell::new(None));
    schedule(slot, Rc::new(RefCell::new(slice)));
}

/// [`in_frames`] for a lab's run: stops as soon as `running` is turned off
/// (its Stop button), and turns it off when `slice` says it is finished.
pub fn while_running(running: RwSignal<bool>, mut slice: impl FnMut() -> bool + 'static) {
    running.set(true);
    in_frames(move || {
        // A view closed mid-run disposes its signals: the run ends with it.
        if !running.try_get_untracked().unwrap_or(false) {
            return false;
        }
        let more = slice();
        if !more {
            running.try_set(false);
        }
        more
    });
}
