//! The app's components: markup over values computed by kpv-core.
//!
//! Components read the [`crate::state::Store`] from context and render it;
//! they make no networking or geometry decisions.

pub mod compare;
pub mod controls;
pub mod diagram;
pub mod editor;
pub mod events;
pub mod labs;
pub mod lessons;
pub mod panels;
pub mod request;

use crate::i18n::{tr, Lang};
use kpv_core::trace::Outcome;
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

/// A packet's outcome as a CSS class (the diagram's packets and the
/// verdict panel).
pub fn outcome_class(o: &Outcome) -> &'static str {
    match o {
        Outcome::Delivered { .. } | Outcome::AcceptedByNode { .. } => "delivered",
        Outcome::TimedOut { .. } => "timed-out",
        Outcome::Dropped { .. } => "dropped",
        Outcome::Rejected { .. } => "rejected",
        Outcome::Unrouted | Outcome::NoSuchName { .. } | Outcome::ExternalName { .. } => "unrouted",
    }
}

/// A packet's outcome as a symbol: shapes, never colour alone.
pub fn outcome_mark(o: &Outcome) -> &'static str {
    match o {
        Outcome::Delivered { .. } | Outcome::AcceptedByNode { .. } => "✓",
        Outcome::TimedOut { .. } => "…",
        Outcome::Dropped { .. } => "✕",
        Outcome::Rejected { .. } => "⊘",
        Outcome::Unrouted | Outcome::NoSuchName { .. } => "?",
        Outcome::ExternalName { .. } => "↗",
    }
}

/// The URL parameters that were ignored, each with how to fix it (shown in
/// the full app and in embeds, where a documentation author needs it most).
#[component]
pub fn UrlProblems(problems: Vec<crate::env::UrlProblem>) -> impl IntoView {
    let l = lang();
    (!problems.is_empty()).then(|| {
        view! {
            <div class="errors" role="alert" data-testid="url-problems">
                <ul>
                    {problems
                        .into_iter()
                        .map(|p| view! { <li data-param=p.param>{let p = p.clone(); move || p.describe(l.get())}</li> })
                        .collect_view()}
                </ul>
            </div>
        }
    })
}
