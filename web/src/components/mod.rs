//! The app's components: markup over values computed by kpv-core.
//!
//! Components read the [`crate::state::Store`] from context and render it;
//! they make no networking or geometry decisions.

pub mod app_toggle;
pub mod card;
pub mod chips;
pub mod compare;
pub mod controls;
pub mod diagram;
#[cfg(feature = "full")]
pub mod dns;
#[cfg(feature = "full")]
pub mod editor;
pub mod events;
#[cfg(feature = "full")]
pub mod exports;
#[cfg(feature = "full")]
pub mod keys;
#[cfg(feature = "full")]
pub mod labs;
#[cfg(feature = "full")]
pub mod lessons;
#[cfg(feature = "full")]
pub mod maglev;
pub mod modewait;
pub mod panels;
pub mod pointing;
pub mod request;
#[cfg(feature = "full")]
pub mod rules;
#[cfg(feature = "full")]
pub mod textarea;
#[cfg(feature = "full")]
pub mod textwindow;
#[cfg(feature = "full")]
pub mod undo;

use crate::i18n::{tr, Lang};
pub use crate::numbers::{one_decimal, seconds};
use kpv_core::net::trace::Outcome;
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
        // A proxy's own answer: a redirect or a preflight succeeds.
        Outcome::Answered { status, .. } => match status {
            Some(s) if *s < 400 => "delivered",
            _ => "rejected",
        },
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
        Outcome::Answered { status, .. } => match status {
            Some(s) if *s < 400 => "✓",
            _ => "⊘",
        },
    }
}

/// The URL parameters that were ignored, each with how to fix it (shown in
/// the full app and in embeds, where a documentation author needs it most).
#[component]
pub fn UrlProblems(problems: RwSignal<Vec<crate::env::UrlProblem>>) -> impl IntoView {
    let l = lang();
    move || {
        let problems = problems.get();
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
}

/// A preset or lesson being fetched, or the fetch that failed with a retry
/// (the Store and the editor's text are as they were).
#[component]
pub fn DataStatus() -> impl IntoView {
    let loader = expect_context::<crate::data::Loader>();
    move || {
        if loader.busy.with(Option::is_some) {
            return Some(
                view! {
                    <p class="data-loading small muted" role="status" data-testid="data-loading">
                        <span class="spinner" aria-hidden="true"></span>
                        {t("data.loading")}
                    </p>
                }
                .into_any(),
            );
        }
        let (_, e) = loader.failed.get()?;
        Some(
            view! {
                <div class="errors" role="alert" data-testid="data-error">
                    <p>{t("data.failed")}</p>
                    <p class="small muted">{e.0}</p>
                    <button data-testid="data-retry" on:click=move |_| loader.retry()>{t("data.retry")}</button>
                </div>
            }
            .into_any(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::{one_decimal, seconds};

    /// No format string in the crate asks for a float with a precision
    /// (`{:.1}`, `{x:.2}`): that pulls float formatting into the `.wasm`;
    /// [`one_decimal`] and [`seconds`] write numbers instead.
    #[test]
    fn no_float_precision_in_format_strings() {
        let mut found = Vec::new();
        for (path, lit) in crate::i18n::tests::source_literals("\0") {
            let b = lit.as_bytes();
            let hit = b.windows(3).enumerate().any(|(i, w)| {
                w[0] == b':'
                    && w[1] == b'.'
                    && w[2].is_ascii_digit()
                    && lit[..i]
                        .rfind('{')
                        .is_some_and(|o| !lit[o..i].contains('}'))
            });
            if hit {
                found.push(format!("{}: {lit}", path.display()));
            }
        }
        assert!(found.is_empty(), "{found:#?}");
    }

    #[test]
    fn one_decimal_in_integers() {
        for (v, want) in [
            (0.0, "0.0"),
            (12.34, "12.3"),
            (12.36, "12.4"),
            (-0.04, "0.0"),
            (-0.26, "-0.3"),
            (839.95, "840.0"),
            (f64::INFINITY, "0.0"),
            (f64::NAN, "0.0"),
            (100.0 * 2.0 / 3.0, "66.7"),
        ] {
            assert_eq!(one_decimal(v), want, "{v}");
        }
        for (ms, want) in [
            (0, "0.0"),
            (949, "0.9"),
            (950, "1.0"),
            (1250, "1.3"),
            (61_040, "61.0"),
        ] {
            assert_eq!(seconds(ms), want, "{ms}");
        }
    }
}
