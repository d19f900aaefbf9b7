//! The app's components: markup over values computed by kpv-core.
//!
//! Components read the [`crate::state::Store`] from context and render it;
//! they make no networking or geometry decisions.

pub mod controls;
pub mod diagram;
pub mod editor;
pub mod labs;
pub mod lessons;
pub mod panels;

use crate::i18n::{tr, Lang};
use leptos::prelude::*;

/// The current language, from context.
pub fn lang() -> RwSignal<Lang> {
    use_context::<RwSignal<Lang>>().unwrap_or_else(|| RwSignal::new(Lang::En))
}

/// A reactive translated string.
pub fn t(key: &'static str) -> impl Fn() -> &'static str + Copy + Send + Sync + 'static {
    let l = lang();
    move || tr(l.get(), key)
}
