//! The `?` overlay that lists the keys of the visualizer (full app only:
//! the embed keeps its few keys in its screen-reader description).

use super::t;
use leptos::prelude::*;

/// The full app's keys in one line, for screen readers (the app's
/// `aria-describedby`).
pub fn described() -> impl IntoView {
    t("a11y.keys-full")
}

/// The keys and what they do; a click or Escape closes it.
#[component]
pub fn KeysOverlay(shown: RwSignal<bool>) -> impl IntoView {
    view! {
        <Show when=move || shown.get()>
            <div class="keys-overlay" role="dialog" aria-modal="false" data-testid="keys-overlay" on:click=move |_| shown.set(false)>
                <h2>{t("keys.title")}</h2>
                <dl>
                    <dt>"S"</dt><dd>{t("keys.send")}</dd>
                    <dt>"Space"</dt><dd>{t("keys.play")}</dd>
                    <dt>"← →"</dt><dd>{t("keys.step")}</dd>
                    <dt>"Home End"</dt><dd>{t("keys.ends")}</dd>
                    <dt>"F"</dt><dd>{t("keys.full")}</dd>
                    <dt>"?"</dt><dd>{t("keys.help")}</dd>
                </dl>
            </div>
        </Show>
    }
}
