//! One button that puts a Pod's app into a state and back to healthy
//! (fail readiness, stop the app, fail liveness), for the Pod list and the
//! Pod's controls on the diagram.

use super::lang;
use crate::i18n::tr;
use crate::state::Store;
use kpv_core::model::NamespacedName;
use kpv_core::net::controller::AppState;
use leptos::prelude::*;

/// The button for `state`: pressed while the app is in it; a click toggles
/// between it and healthy and plays the clock. `keys` are the labels to
/// enter and to leave the state.
#[component]
pub fn AppToggle(
    pod: NamespacedName,
    state: AppState,
    keys: (&'static str, &'static str),
    #[prop(optional)] testid: Option<String>,
    #[prop(optional)] action: Option<&'static str>,
) -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    // Plain closures, not a memo: a memo's code is not worth a button.
    let id = pod.clone();
    let on = move || store.app_state(&pod) == state;
    let (on_label, on_click) = (on.clone(), on.clone());
    view! {
        <button data-testid=testid data-action=action aria-pressed=move || on().to_string()
            on:click=move |_| {
                let next = if on_click() { AppState::Healthy } else { state };
                store.set_app(&id, next);
                store.playing.set(true);
            }>
            {move || tr(l.get(), if on_label() { keys.1 } else { keys.0 })}
        </button>
    }
}
