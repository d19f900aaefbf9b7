//! The full app's parts that are not on its first screen, as code loaded on
//! first use, and [`Lazy`], which shows one of them: "loading…", the part
//! itself, or what failed with a Retry.
//!
//! With the `split` feature (the release build) each group of parts is a
//! split point: `cargo xtask build` cuts the code only it reaches (its
//! component, and kpv-core's code only that component calls) out of the
//! first `.wasm` into a file of its own. A split function returns a plain
//! `fn() -> AnyView` that builds the part; [`Lazy`] keeps it once loaded and
//! calls it in its own place in the view, so the part is owned, and finds
//! its context, exactly as if it had been written there. Without `split`
//! (development builds, the tests) every part is linked in and shown at once.
//!
//! This module never holds a part's state: what the user has (the editor's
//! text, the scenario, the theme) lives in signals owned by `App` and given
//! to the parts through context, so a part loaded late, or loaded again
//! after a failure, shows exactly what the user had. It never decides
//! anything about packets or rules, and never blocks the first screen: a
//! part is fetched when the browser is idle after the first screen is
//! drawn, or when the user asks for it.

use crate::components::t;
use leptos::prelude::*;

/// Builds one part, in the caller's place in the view.
pub type ViewFn = fn() -> AnyView;

/// A part of the full app loaded on first use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Pods,
    Exports,
    Rules,
    Endpoints,
    Editor,
    LbLab,
    ScaleLab,
    Compare,
    Dns,
}

/// When a [`Lazy`] part starts loading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// Below the first screen: once the browser is idle after drawing it,
    /// so that scrolling down rarely finds the part still loading.
    Idle,
    /// On request (the part is mounted because the user asked for it).
    Now,
}

impl Part {
    pub const ALL: [Part; 9] = [
        Part::Pods,
        Part::Exports,
        Part::Rules,
        Part::Endpoints,
        Part::Editor,
        Part::LbLab,
        Part::ScaleLab,
        Part::Compare,
        Part::Dns,
    ];

    /// A stable name: the `data-part` of its placeholder.
    pub fn as_str(self) -> &'static str {
        match self {
            Part::Pods => "pods",
            Part::Exports => "exports",
            Part::Rules => "rules",
            Part::Endpoints => "endpoints",
            Part::Editor => "editor",
            Part::LbLab => "lb-lab",
            Part::ScaleLab => "scale-lab",
            Part::Compare => "compare",
            Part::Dns => "dns",
        }
    }

    /// The translation key of its name, as its placeholder says it.
    pub fn title_key(self) -> &'static str {
        match self {
            Part::Pods => "panel.pods",
            Part::Exports => "lazy.exports",
            Part::Rules => "panel.rules",
            Part::Endpoints => "panel.endpoints",
            Part::Editor => "panel.editor",
            Part::LbLab => "lab.lb.title",
            Part::ScaleLab => "lab.scale.title",
            Part::Compare => "compare.title",
            Part::Dns => "dns.tab",
        }
    }

    #[cfg(any(feature = "split", test))]
    fn slot(self) -> usize {
        match self {
            Part::Pods => 0,
            Part::Exports => 1,
            Part::Rules => 2,
            Part::Endpoints => 3,
            Part::Editor => 4,
            Part::LbLab => 5,
            Part::ScaleLab => 6,
            Part::Compare => 7,
            Part::Dns => 8,
        }
    }
}

/// The parts whose code has arrived (a remounted part shows at once).
#[cfg(feature = "split")]
static LOADED: [std::sync::OnceLock<ViewFn>; 9] = [const { std::sync::OnceLock::new() }; 9];

/// The part's builder, if its code is here.
pub fn ready(part: Part) -> Option<ViewFn> {
    #[cfg(not(feature = "split"))]
    {
        Some(views::of(part))
    }
    #[cfg(feature = "split")]
    {
        LOADED[part.slot()].get().copied()
    }
}

/// Why a part's code did not arrive (the browser says more in its console).
pub type LoadFailed = crate::load::LoadFailed<Part>;

/// Fetch `part`'s code if it is not here yet. A failure is not remembered:
/// the next call tries again.
pub async fn load(part: Part) -> Result<ViewFn, LoadFailed> {
    if let Some(f) = ready(part) {
        return Ok(f);
    }
    #[cfg(feature = "split")]
    {
        let f = split::load(part)
            .await
            .map_err(|_| crate::load::LoadFailed(part))?;
        let _ = LOADED[part.slot()].set(f);
    }
    ready(part).ok_or(crate::load::LoadFailed(part))
}

/// What `App` gives the editor through context: the text and what was
/// stored live in `App`, so the editor, built late, starts from them.
#[derive(Clone, Debug)]
pub struct EditorInputs {
    pub draft: RwSignal<String>,
    pub stored: crate::env::Stored,
    pub follow_first_load: bool,
}

/// What a [`Lazy`] shows.
#[derive(Clone, Copy, Debug)]
enum Shown {
    Loading,
    Failed,
    Ready(ViewFn),
}

/// One part loaded on first use: its placeholder while loading, the part
/// once its code is here, or what failed with a Retry.
#[component]
pub fn Lazy(part: Part, when: When) -> impl IntoView {
    let shown = RwSignal::new(ready(part).map_or(Shown::Loading, Shown::Ready));
    let fetch = move || {
        shown.set(Shown::Loading);
        leptos::task::spawn_local(async move {
            let next = match load(part).await {
                Ok(f) => Shown::Ready(f),
                Err(_) => Shown::Failed,
            };
            // The part may have been unmounted meanwhile (the compare view
            // closed): its code stays loaded for next time.
            let _ = shown.try_set(next);
        });
    };
    if matches!(shown.get_untracked(), Shown::Loading) {
        match when {
            When::Now => fetch(),
            When::Idle => crate::load::when_idle(crate::load::Idle::Soon, move || {
                if shown.try_get_untracked().is_some() {
                    fetch();
                }
            }),
        }
    }
    let title = t(part.title_key());
    move || {
        match shown.get() {
        // Built untracked, as a component written here would be.
        Shown::Ready(f) => untrack(f),
        Shown::Loading => view! {
            <section class="panel lazy" data-testid="lazy-loading" data-part=part.as_str() role="status">
                <h2>{title}</h2>
                <p class="small muted"><span class="spinner" aria-hidden="true"></span>{t("lazy.loading")}</p>
            </section>
        }
        .into_any(),
        Shown::Failed => view! {
            <section class="panel lazy errors" data-testid="lazy-error" data-part=part.as_str() role="alert">
                <h2>{title}</h2>
                <p>{t("lazy.failed")}</p>
                <button data-testid="lazy-retry" on:click=move |_| fetch()>{t("data.retry")}</button>
            </section>
        }
        .into_any(),
    }
    }
}

/// Each part's builder. They take what they need from context (provided by
/// `App` before any part is drawn), never from a capture.
mod views {
    use crate::components::{compare, dns, editor, exports, labs, panels, rules};
    use leptos::prelude::*;

    use super::EditorInputs;

    #[cfg(not(feature = "split"))]
    pub fn of(part: super::Part) -> super::ViewFn {
        use super::Part;
        match part {
            Part::Pods => pods,
            Part::Exports => exports,
            Part::Rules => rules,
            Part::Endpoints => endpoints,
            Part::Editor => editor,
            Part::LbLab => lb_lab,
            Part::ScaleLab => scale_lab,
            Part::Compare => compare,
            Part::Dns => dns,
        }
    }

    pub fn pods() -> AnyView {
        view! { <panels::PodsPanel /> }.into_any()
    }

    pub fn rules() -> AnyView {
        view! { <rules::RulesView /> }.into_any()
    }

    pub fn endpoints() -> AnyView {
        view! { <panels::EndpointList /> }.into_any()
    }

    pub fn exports() -> AnyView {
        let crate::env::Theme(theme) = expect_context::<crate::env::Theme>();
        view! { <exports::Exports theme=theme /> }.into_any()
    }

    pub fn editor() -> AnyView {
        let EditorInputs {
            draft,
            stored,
            follow_first_load,
        } = expect_context::<EditorInputs>();
        view! { <editor::Editor draft=draft stored=stored follow_first_load=follow_first_load /> }
            .into_any()
    }

    pub fn lb_lab() -> AnyView {
        view! { <labs::LoadBalancingLab /> }.into_any()
    }

    pub fn scale_lab() -> AnyView {
        view! { <labs::ScalingLab /> }.into_any()
    }

    pub fn compare() -> AnyView {
        view! { <compare::CompareView /> }.into_any()
    }

    pub fn dns() -> AnyView {
        view! { <dns::DnsPanel /> }.into_any()
    }
}

#[cfg(feature = "split")]
mod split {
    //! The split points: one file per group of parts (those drawn together
    //! share one fetch). Each returns its part's builder, whose code (and
    //! everything only it reaches) lives in that group's file.
    use super::{views, Part, ViewFn};
    use wasm_split_helpers::SplitLoaderError;

    pub async fn load(part: Part) -> Result<ViewFn, SplitLoaderError> {
        match part {
            Part::Pods => pods().await,
            Part::Rules => rules().await,
            Part::Endpoints => endpoints().await,
            Part::Exports => exports().await,
            Part::Editor => editor().await,
            Part::LbLab => lb_lab().await,
            Part::ScaleLab => scale_lab().await,
            Part::Compare => compare().await,
            Part::Dns => dns().await,
        }
    }

    split_points! {
        kpv_panels {
            fn pods -> ViewFn = views::pods;
            fn rules -> ViewFn = views::rules;
            fn endpoints -> ViewFn = views::endpoints;
        }
        kpv_exports { fn exports -> ViewFn = views::exports; }
        kpv_editor { fn editor -> ViewFn = views::editor; }
        kpv_labs {
            fn lb_lab -> ViewFn = views::lb_lab;
            fn scale_lab -> ViewFn = views::scale_lab;
        }
        kpv_compare { fn compare -> ViewFn = views::compare; }
        kpv_dns { fn dns -> ViewFn = views::dns; }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::{tr, Lang};

    #[test]
    fn every_part_has_a_name_a_title_and_a_slot_of_its_own() {
        let mut slots = std::collections::BTreeSet::new();
        let mut names = std::collections::BTreeSet::new();
        for part in Part::ALL {
            assert!(slots.insert(part.slot()), "{part:?}");
            assert!(names.insert(part.as_str()), "{part:?}");
            assert!(part.slot() < Part::ALL.len());
            for l in Lang::ALL {
                assert_ne!(tr(l, part.title_key()), part.title_key(), "{part:?}");
            }
        }
    }

    #[cfg(not(feature = "split"))]
    #[test]
    fn without_split_every_part_is_here_at_once() {
        for part in Part::ALL {
            assert!(ready(part).is_some(), "{part:?}");
        }
    }
}
