//! kpv-web: the Leptos front end that draws what kpv-core computes.
//!
//! State holds inputs only (see [`state::Store`]); the cluster, the endpoint
//! slices, traces, flights, rules and the diagram's layout are derived with
//! `Memo`s over kpv-core functions. One `requestAnimationFrame` loop advances
//! simulated time while playing and is cancelled when paused. Keys are bound
//! on the visualizer's own element, never on `window`, so a page embedding it
//! keeps its keys. This crate makes no networking or geometry decisions.
//!
//! Two builds come from it: the whole app (feature `full`, the default) and
//! the embed build (`--no-default-features --features embed`), which keeps
//! the diagram, playback, the five modes, the captions and opening share
//! links, and compiles out the editor, labs, lessons, exports and share-link
//! writing. Those are gated here, where they are mounted. In the full app
//! the parts off the first screen are mounted through `lazy::Lazy`: in the
//! release build their code is loaded on first use.

/// Split points (the release build's `split` feature): each `fn name -> T =
/// value;` becomes an async function giving `value`, whose code (and
/// everything only it reaches) `cargo xtask build` cuts into the site file
/// named after `file`, fetched the first time it is called. Functions of one
/// `file` share it.
#[cfg(feature = "split")]
macro_rules! split_points {
    ($($file:ident { $($vis:vis fn $name:ident -> $ty:ty = $value:expr;)* })*) => {$($(
        #[wasm_split_helpers::wasm_split($file, fallible)]
        $vis fn $name() -> Result<$ty, wasm_split_helpers::SplitLoaderError> {
            Ok($value)
        }
    )*)*};
}

pub mod code;
pub mod components;
pub mod data;
#[cfg(feature = "full")]
pub mod download;
pub mod env;
#[cfg(feature = "full")]
pub mod export;
pub mod fetch;
pub mod forms;
pub mod hops;
pub mod hops_http;
pub mod i18n;
pub mod keyboard;
#[cfg(feature = "full")]
pub mod lazy;
pub mod lazy_http;
#[cfg(feature = "full")]
pub mod lesson_model;
#[cfg(feature = "full")]
pub mod lessons;
pub mod load;
pub mod measure;
pub mod mode_fetch;
pub mod modes;
pub mod numbers;
pub mod scenarios;
pub mod share;
pub mod state;
#[cfg(feature = "full")]
pub mod why;
#[cfg(feature = "full")]
pub mod work;

use components::controls::PlaybackBar;
use components::diagram::Diagram;
#[cfg(feature = "full")]
use components::{
    compare::CompareToggle,
    controls::{Preferences, Toolbar, TrafficBar},
    lessons::LessonBar,
    panels::{HopCaption, HopList, VerdictPanel},
};
use components::{t, UrlProblems};
use env::Embedded;
#[cfg(feature = "full")]
use env::Theme;
use i18n::Lang;
use leptos::prelude::*;
use state::Store;
use std::cell::RefCell;
use std::rc::Rc;

/// Simulated milliseconds between packets of continuous traffic.
const CONTINUOUS_GAP_MS: u64 = 900;
/// The longest frame step, so a hidden tab does not jump minutes ahead.
const MAX_FRAME_MS: f64 = 100.0;

fn prefers_reduced_motion() -> bool {
    web_sys::window()
        .and_then(|w| {
            w.match_media("(prefers-reduced-motion: reduce)")
                .ok()
                .flatten()
        })
        .is_some_and(|m| m.matches())
}

/// Run the one animation loop while `playing` is true and the mode in use
/// is ready.
fn animation_loop(store: Store) {
    type Slot = Rc<RefCell<Option<gloo_render::AnimationFrame>>>;
    let slot: Slot = Rc::new(RefCell::new(None));
    fn schedule(store: Store, slot: Slot, last: Option<f64>) {
        let next = slot.clone();
        let handle = gloo_render::request_animation_frame(move |ts| {
            // Stops by itself once paused or unmounted (signals disposed).
            if store.playing.try_get_untracked() != Some(true) {
                return;
            }
            let dt = last
                .map(|l| (ts - l).clamp(0.0, MAX_FRAME_MS))
                .unwrap_or(0.0);
            let step = (dt * store.speed.get_untracked()) as u64;
            let before = store.now.get_untracked();
            let after = before + step;
            if store.continuous.get_untracked()
                && after / CONTINUOUS_GAP_MS > before / CONTINUOUS_GAP_MS
            {
                store.send(1, 0);
            }
            store.now.set(after);
            schedule(store, next, Some(ts));
        });
        *slot.borrow_mut() = Some(handle);
    }
    let slot_for_effect = slot.clone();
    Effect::new(move |_| {
        // Time stands still while the mode's code is on its way: no packet
        // moves through a mode that cannot be computed yet.
        if store.playing.get() && store.live_mode.with(Option::is_some) {
            schedule(store, slot_for_effect.clone(), None);
        } else {
            // Dropping the handle cancels the pending frame.
            slot_for_effect.borrow_mut().take();
        }
    });
    let guard = send_wrapper::SendWrapper::new(slot);
    on_cleanup(move || {
        guard.borrow_mut().take();
    });
}

/// The event list, the Events feed, the routing table and the DNS lookup,
/// one at a time, in the side column.
#[cfg(feature = "full")]
#[component]
fn SideLists() -> impl IntoView {
    let store = expect_context::<Store>();
    let components::events::Events(all) = expect_context::<components::events::Events>();
    let tab = RwSignal::new(0u8);
    let has_http = Memo::new(move |_| {
        store.http_pending.get()
            || store.targets.with(|ts| {
                ts.iter()
                    .any(|t| t.kind == kpv_core::session::replay::TargetKind::Http)
            })
    });
    let count = Memo::new(move |_| {
        let now = store.now.get();
        all.with(|ev| ev.partition_point(|e| e.at_ms <= now))
    });
    // A Pod's app changed (Fail readiness, Take down) with no packet to
    // follow: the Events feed is what shows it, not an empty hop list.
    Effect::new(move |before: Option<usize>| {
        let changes = store.changes.with(Vec::len);
        if before.is_some_and(|b| changes > b)
            && store.packets.with_untracked(Vec::is_empty)
            && tab.get_untracked() == 0
        {
            tab.set(1);
        }
        changes
    });
    view! {
        <div class="side-lists">
            <div class="tabs side-tabs" role="tablist">
                <button role="tab" data-testid="tab-hops" aria-selected=move || (tab.get() == 0).to_string()
                    on:click=move |_| tab.set(0)>{t("events.hops")}</button>
                <button role="tab" data-testid="tab-events" aria-selected=move || (tab.get() == 1).to_string()
                    on:click=move |_| tab.set(1)>{t("events.title")}" ("{move || count.get()}")"</button>
                <Show when=move || has_http.get()>
                    <button role="tab" data-testid="tab-routing" aria-selected=move || (tab.get() == 2).to_string()
                        on:click=move |_| {
                            tab.set(2);
                            request_animation_frame(|| reveal_in_side(".side-lists"));
                        }>{t("http.table.title")}</button>
                </Show>
                <button role="tab" data-testid="tab-dns" aria-selected=move || (tab.get() == 3).to_string()
                    on:click=move |_| tab.set(3)>{components::dns::tab_label()}</button>
            </div>
            <div class="side-list" class:hidden=move || tab.get() != 0><HopList /></div>
            <div class="side-list events-wrap" class:hidden=move || tab.get() != 1><components::events::EventsFeed /></div>
            <Show when=move || tab.get() == 2 && has_http.get()>
                <div class="side-list"><components::request::RoutingTable /></div>
            </Show>
            <Show when=move || tab.get() == 3>
                <div class="side-list"><lazy::Lazy part=lazy::Part::Dns when=lazy::When::Now /></div>
            </Show>
        </div>
    }
}

/// Scroll the side column (not the page) so its element `selector` is in
/// view: a tab opened at the bottom of a short column shows its list.
#[cfg(feature = "full")]
fn reveal_in_side(selector: &str) {
    use wasm_bindgen::JsCast;
    let doc = web_sys::window().and_then(|w| w.document());
    let find = |sel: &str| {
        doc.as_ref()
            .and_then(|d| d.query_selector(sel).ok().flatten())
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    };
    let (Some(side), Some(el)) = (find(".first-screen .side"), find(selector)) else {
        return;
    };
    let bottom = el.offset_top() + el.offset_height();
    let shown = side.offset_top() + side.scroll_top() + side.client_height();
    if bottom > shown {
        side.set_scroll_top(side.scroll_top() + bottom - shown);
    }
}

/// Fetch the Korean words whenever Korean is chosen and they are not here
/// yet (the release build; elsewhere they are compiled in), then draw every
/// text anew. What went wrong, if anything, is returned for
/// [`KoreanStatus`].
fn korean_words(lang: RwSignal<Lang>) -> RwSignal<Option<String>> {
    let problem = RwSignal::new(None::<String>);
    let attempt = RwSignal::new(0u32);
    Effect::new(move |_| {
        attempt.track();
        if lang.get() != Lang::Ko || i18n::korean_ready() {
            return;
        }
        leptos::task::spawn_local(async move {
            match i18n::load_korean().await {
                Ok(()) => {
                    problem.set(None);
                    if lang.get_untracked() == Lang::Ko {
                        lang.set(Lang::Ko);
                    }
                }
                Err(e) => problem.set(Some(e.0)),
            }
        });
    });
    provide_context(KoreanRetry(attempt));
    problem
}

/// Asks [`korean_words`] to fetch again.
#[derive(Clone, Copy)]
struct KoreanRetry(RwSignal<u32>);

/// The Korean words did not arrive: said in both languages (the Korean
/// words of this one message are compiled in), with a retry.
#[component]
fn KoreanStatus(problem: RwSignal<Option<String>>, lang: RwSignal<Lang>) -> impl IntoView {
    let retry = use_context::<KoreanRetry>();
    move || {
        let why = problem.get()?;
        (lang.get() == Lang::Ko).then(|| {
            view! {
                <div class="errors" role="alert" data-testid="korean-error">
                    <p>"한국어 문구를 불러오지 못해 영어로 보여 줍니다 · The Korean text could not be loaded; showing English"</p>
                    <p class="small muted">{why}</p>
                    <button type="button" data-testid="korean-retry" on:click=move |_| {
                        if let Some(r) = retry {
                            r.0.update(|n| *n += 1);
                        }
                    }>"다시 시도 · Try again"</button>
                </div>
            }
        })
    }
}

/// Mount [`App`] on the page body. A reader who starts in Korean gets the
/// Korean words first (the release build fetches them, see [`i18n`]), so the
/// first screen is Korean rather than English for the moment they take; if
/// they cannot come, or take longer than [`KOREAN_WAIT_MS`], the app starts
/// in English, and switches to Korean when they arrive or says what failed
/// ([`KoreanStatus`]).
pub fn start() {
    if env::start_lang() != Lang::Ko || i18n::korean_ready() {
        leptos::mount::mount_to_body(App);
        return;
    }
    let mounted = Rc::new(std::cell::Cell::new(false));
    let mount_once = move || {
        if !mounted.replace(true) {
            leptos::mount::mount_to_body(App);
        }
    };
    let on_time = mount_once.clone();
    set_timeout(on_time, std::time::Duration::from_millis(KOREAN_WAIT_MS));
    wasm_bindgen_futures::spawn_local(async move {
        let _ = i18n::load_korean().await;
        mount_once();
    });
}

/// How long the first screen waits for the Korean words at most.
const KOREAN_WAIT_MS: u64 = 1500;

/// Open what the address asks for: a share link in the fragment, else a
/// lesson, else a preset (another than the default is fetched), stopped at
/// `step=` or, in an embed, at its poster. Whether the address named a
/// preset other than the default `first`.
fn open_address(
    store: Store,
    loader: data::Loader,
    opts: &env::UrlOptions,
    problems: RwSignal<Vec<env::UrlProblem>>,
    open_fragment: impl Fn(String),
    first: &'static str,
) -> bool {
    #[cfg(feature = "full")]
    let lesson = opts.lesson.clone();
    // The embed build has no lessons (a `lesson=` is reported as unknown).
    #[cfg(not(feature = "full"))]
    let lesson = None::<String>;
    if let Some(f) = share::current_fragment() {
        open_fragment(f);
        return false;
    }
    if let Some(id) = lesson {
        #[cfg(feature = "full")]
        loader.run(data::Job::Lesson {
            id,
            page: opts.page.unwrap_or(1).max(1) as usize - 1,
        });
        #[cfg(not(feature = "full"))]
        let _ = id;
        return false;
    }
    // An embed at rest is a poster: one packet stopped at its telling hop,
    // with its caption, until the reader plays or steps (`play=1`: the
    // reader already asked, on a click-to-load poster).
    let poster = if opts.play {
        data::Stop::PosterPlaying
    } else {
        data::Stop::Poster
    };
    let stop = opts
        .step
        .map(data::Stop::Hop)
        .or_else(|| (opts.embed || cfg!(not(feature = "full"))).then_some(poster));
    match opts.scenario.filter(|k| *k != first) {
        Some(key) => {
            loader.run(data::Job::Preset {
                key,
                mode: opts.mode,
                stop,
            });
            true
        }
        None => {
            data::start_at(store, opts.mode, stop, problems);
            false
        }
    }
}

/// The full app's page: the top bar, the scenario's errors, the address's
/// and share link's problems, the first screen (the diagram, or the
/// compare view or scaling lab in its place, and the side column) and the
/// parts below it, each loaded when the browser is idle after drawing it.
#[cfg(feature = "full")]
fn full_page(
    url_problems: AnyView,
    share_view: AnyView,
    errors: Memo<Vec<String>>,
    theme: RwSignal<&'static str>,
    large: RwSignal<bool>,
) -> AnyView {
    use lazy::{Lazy, Part, When};
    let comparing = RwSignal::new(false);
    let scaling = RwSignal::new(false);
    view! {
        <header class="topbar">
            <h1 title=t("app.subtitle")>{t("app.title")}</h1>
            <Toolbar />
            <Preferences theme=theme large=large />
        </header>
        <Show when=move || !errors.with(Vec::is_empty)>
            <div class="errors" role="alert" data-testid="errors">
                <p>{t("error.scenario")}</p>
                <ul>
                    <For each=move || errors.get() key=|e| e.clone() let:e>
                        <li>{e}</li>
                    </For>
                </ul>
            </div>
        </Show>
        {url_problems}
        {share_view}
        // The first screen: the diagram, and beside it what drives it.
        <div class="first-screen">
            <div class="diagram-wrap">
                // The compare view takes the diagram's place, on the first screen.
                // So does the scaling lab.
                <Show when=move || !comparing.get() && !scaling.get() fallback=move || if scaling.get() {
                    view! { <Lazy part=Part::ScaleLab when=When::Now /> }.into_any()
                } else {
                    view! { <Lazy part=Part::Compare when=When::Now /> }.into_any()
                }>
                    <Diagram />
                </Show>
                <div class="view-toggles">
                    <components::labs::ScaleToggle scaling=scaling comparing=comparing />
                    <CompareToggle comparing=comparing others=scaling />
                </div>
            </div>
            <aside class="side">
                <LessonBar />
                <HopCaption />
                <TrafficBar />
                <PlaybackBar />
                <components::request::RequestCard />
                <VerdictPanel />
                <SideLists />
            </aside>
        </div>
        <div class="below">
            <Lazy part=Part::Pods when=When::Idle />
            <Lazy part=Part::Exports when=When::Idle />
            <div class="below-grid">
                <Lazy part=Part::Rules when=When::Idle />
                <Lazy part=Part::Endpoints when=When::Idle />
            </div>
            <Lazy part=Part::Editor when=When::Idle />
            <Lazy part=Part::LbLab when=When::Idle />
        </div>
    }
    .into_any()
}

/// The whole app.
/// Fetch kpv-core's code as it is needed: the mode in use when chosen,
/// the others once the first screen is drawn (web/src/modes.rs says why),
/// except in an embed, which shows the mode its page asked for and has no
/// mode list; HTTP routing when a scenario first has routing objects
/// (never for one without).
fn fetch_code(store: Store, embed: bool) {
    mode_fetch::follow(store);
    if !embed {
        mode_fetch::prefetch_when_idle(store);
    }
    Effect::new(move |_| {
        if store.http_pending.get() && store.http_load.get() == load::Fetch::Absent {
            store.load_http();
        }
    });
}

/// The document's language follows the chosen one (screen readers, fonts).
fn document_lang(lang: RwSignal<Lang>) {
    Effect::new(move |_| {
        let code = lang.get().code();
        if let Some(el) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.document_element())
        {
            let _ = el.set_attribute("lang", code);
        }
    });
}

/// The editor's inputs, provided before the editor is loaded: its text
/// lives here, so until the editor arrives nothing can be typed and
/// nothing is lost. The editor shows the address's preset once it has
/// arrived, as it shows the default one at start (a stored text of the
/// user's wins).
#[cfg(feature = "full")]
fn provide_editor_inputs(address_preset: bool) {
    let stored = env::load_editor();
    let follow_first_load = !matches!(stored, env::Stored::Text { .. }) && address_preset;
    let draft = RwSignal::new(match &stored {
        env::Stored::Text { yaml, .. } => yaml.clone(),
        _ => scenarios::SEED.to_string(),
    });
    provide_context(lazy::EditorInputs {
        draft,
        stored,
        follow_first_load,
    });
}

#[component]
pub fn App() -> impl IntoView {
    #[cfg(feature = "full")]
    let lessons = lesson_model::LessonModel::new();
    #[cfg(feature = "full")]
    let opts = env::url_options(
        &crate::lessons::INDEX
            .iter()
            .map(|e| (e.id, e.pages))
            .collect::<Vec<_>>(),
    );
    // The embed build has no lessons: a `lesson=` is reported as unknown.
    #[cfg(not(feature = "full"))]
    let opts = env::url_options(&[]);
    let initial_lang = opts.lang.or_else(env::browser_lang).unwrap_or_default();
    let lang = RwSignal::new(initial_lang);
    provide_context(lang);
    let korean_problem = korean_words(lang);
    // The default preset is compiled in: start-up never waits. Another one
    // the address asks for is fetched, and loaded when it arrives.
    let first = &scenarios::PRESETS[0];
    let store = Store::new(first.key, scenarios::SEED);
    store.reduced_motion.set(prefers_reduced_motion());
    provide_context(store);
    provide_context(components::events::Events::new(store));
    animation_loop(store);
    fetch_code(store, opts.embed || cfg!(not(feature = "full")));
    let problems = RwSignal::new(opts.problems.clone());
    #[cfg(feature = "full")]
    provide_context(lessons);
    let loader = data::Loader::new(
        store,
        problems,
        #[cfg(feature = "full")]
        lessons,
    );
    provide_context(loader);
    provide_context(components::pointing::Pointed::new());
    // A share link in the fragment wins over the query's scenario; a bad one
    // is reported and the default scenario stays.
    let share_link = share::Opening::new(store, lang, opts.lang.is_some());
    let open_fragment = move |fragment: String| share_link.open(fragment);
    let address_preset = open_address(store, loader, &opts, problems, open_fragment, first.key);
    // A link pasted into the address bar of an open page.
    let hash_listener = window_event_listener(leptos::ev::hashchange, move |_| {
        if let Some(f) = share::current_fragment() {
            open_fragment(f);
        }
    });
    on_cleanup(move || hash_listener.remove());
    let theme = RwSignal::new(opts.theme.unwrap_or("auto"));
    // `auto` follows the system's colour scheme: the loader keeps
    // `data-dark` on the root element, and the style sheet reads it.
    let large = RwSignal::new(false);
    let embed = opts.embed || cfg!(not(feature = "full"));
    provide_context(Embedded(embed));
    let url_problems = view! {
        <UrlProblems problems=problems />
        <components::DataStatus />
        <components::request::HttpStatus />
        <KoreanStatus problem=korean_problem lang=lang />
    }
    .into_any();
    let share_error = move || share_link.status();
    #[cfg(feature = "full")]
    provide_editor_inputs(address_preset);
    #[cfg(not(feature = "full"))]
    let _ = address_preset;
    #[cfg(feature = "full")]
    provide_context(Theme(theme));
    document_lang(lang);
    #[cfg(feature = "full")]
    let errors = Memo::new(move |_| {
        store.parsed.with(|(_, diags)| {
            diags
                .iter()
                .filter(|d| d.is_error())
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
        })
    });
    // The `?` overlay that lists the keys (full app).
    #[cfg(feature = "full")]
    let keys_shown = RwSignal::new(false);
    #[cfg(feature = "full")]
    let on_key = keyboard::on_key(store, keys_shown);
    #[cfg(not(feature = "full"))]
    let on_key = keyboard::on_key(store);
    // The bar comes first for the keyboard (its controls are the first Tab
    // stops, before the Pods) and last on screen (`order` in style.css).
    let embedded = move |url_problems: AnyView| {
        view! { {url_problems} {share_error} <PlaybackBar /> <Diagram /> }.into_any()
    };
    #[cfg(feature = "full")]
    let body = if embed {
        embedded(url_problems)
    } else {
        full_page(
            url_problems,
            view! { {share_error} }.into_any(),
            errors,
            theme,
            large,
        )
    };
    #[cfg(not(feature = "full"))]
    let body = embedded(url_problems);
    #[cfg(feature = "full")]
    let keys_overlay = view! { <components::keys::KeysOverlay shown=keys_shown /> };
    #[cfg(feature = "full")]
    let keys_described = components::keys::described().into_any();
    #[cfg(not(feature = "full"))]
    let keys_described = t("a11y.keys").into_any();
    #[cfg(not(feature = "full"))]
    let keys_overlay = ();
    view! {
        <main class="app" class:embed=embed class:large=move || large.get() data-theme=move || theme.get()
            data-testid="app" tabindex="0" on:keydown=on_key aria-describedby="kpv-keys">
            <p id="kpv-keys" class="sr-only">{keys_described}</p>
            {keys_overlay}
            {body}
        </main>
    }
}
