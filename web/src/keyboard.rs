//! The app's keys: what a key pressed on the app does (the full app's
//! overlay that lists them is `components::keys`).

use leptos::prelude::*;

/// What a key does on the app (outside form controls, without Ctrl, Cmd or
/// Alt): Space plays or pauses, the arrows step; in the full app also S
/// sends, Home and End jump to the first and last hop, F goes full screen
/// and `?` shows the keys (`shown`).
pub fn on_key(
    store: crate::state::Store,
    #[cfg(feature = "full")] shown: RwSignal<bool>,
) -> impl Fn(leptos::ev::KeyboardEvent) + Copy + 'static {
    move |ev: leptos::ev::KeyboardEvent| {
        // Leave keys to form controls that use them.
        let tag = ev
            .target()
            .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
            .map(|e| e.tag_name().to_ascii_lowercase())
            .unwrap_or_default();
        if matches!(tag.as_str(), "input" | "select" | "textarea") {
            return;
        }
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
            return;
        }
        match ev.key().as_str() {
            // Space plays or pauses, also on a focused button: its default
            // (pressing the button: a second Send) is prevented.
            " " => {
                ev.prevent_default();
                store.playing.update(|p| *p = !*p);
            }
            // The full app's keys (the embed keeps space and the arrows).
            #[cfg(feature = "full")]
            "s" | "S" => {
                ev.prevent_default();
                store.send(1, 0);
            }
            #[cfg(feature = "full")]
            "Home" => {
                ev.prevent_default();
                store.step_to_end(false);
            }
            #[cfg(feature = "full")]
            "End" => {
                ev.prevent_default();
                store.step_to_end(true);
            }
            #[cfg(feature = "full")]
            "f" | "F" => {
                ev.prevent_default();
                crate::components::controls::toggle_fullscreen();
            }
            #[cfg(feature = "full")]
            "?" => {
                ev.prevent_default();
                shown.update(|k| *k = !*k);
            }
            #[cfg(feature = "full")]
            "Escape" => shown.set(false),
            "ArrowRight" => {
                ev.prevent_default();
                store.step(true);
            }
            "ArrowLeft" => {
                ev.prevent_default();
                store.step(false);
            }
            _ => {}
        }
    }
}
