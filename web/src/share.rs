//! Share links and embed snippets.
//!
//! A share link carries the Store's inputs (scenario text, mode, scheduler,
//! seed, speed, clock, focused packet and hop, app changes, packets sent,
//! language) in the URL fragment, encoded by kpv-core's [`kpv_core::session::share`]
//! codec; opening it replays the same inputs, so the same view and the same
//! animation come back. A bad fragment is reported and the default scenario
//! stays. The embed snippet is the `<iframe>` for the current view, pointing
//! at the embed build (`embed/` beside the app). Everything that writes a
//! link is compiled only with the `full` feature; the embed build only opens
//! them.

#[cfg(feature = "full")]
use crate::i18n::Lang;
use crate::scenarios::PRESETS;
use crate::state::{Store, CUSTOM};
use kpv_core::session::share::{ShareError, ShareState};
use leptos::prelude::*;

#[cfg(feature = "full")]
/// The Store's inputs as a share state.
pub fn capture(store: &Store, lang: Lang) -> ShareState {
    ShareState {
        yaml: store.yaml.get_untracked(),
        mode: store.mode.get_untracked(),
        scheduler: Some(store.scheduler.get_untracked()),
        seed: store.seed.get_untracked(),
        speed_percent: (store.speed.get_untracked() * 100.0).round().clamp(
            *kpv_core::session::share::SPEED_RANGE.start() as f64,
            *kpv_core::session::share::SPEED_RANGE.end() as f64,
        ) as u16,
        time_ms: store.now.get_untracked(),
        focus: store.focus.get_untracked(),
        step: store.current_hop().map(|h| h as u32),
        changes: store.changes.get_untracked(),
        packets: store.packets.get_untracked(),
        lang: Some(lang.code().to_string()),
        rules_node: store.rules_node.get_untracked(),
    }
}

/// Why a decoded link could not be shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpenError {
    Link(ShareError),
    /// The link decoded, but its scenario has errors (first one given).
    Scenario(String),
    /// The code that reads links did not arrive (release build: it is
    /// fetched when a link is first opened).
    Unavailable,
    /// Opened, but packets start from Pods its scenario does not have
    /// (named): those go nowhere, the rest plays.
    MissingOrigins(String),
}

impl OpenError {
    /// The translation key of the message shown to the user.
    pub fn key(&self) -> &'static str {
        match self {
            OpenError::Link(ShareError::Empty) => "share.err.empty",
            OpenError::Link(ShareError::Version { .. }) => "share.err.version",
            OpenError::Link(ShareError::TooLong { .. } | ShareError::TooLarge) => {
                "share.err.too-large"
            }
            OpenError::Link(ShareError::Base64 | ShareError::Inflate) => "share.err.damaged",
            OpenError::Link(ShareError::Json { .. } | ShareError::OutOfRange { .. }) => {
                "share.err.invalid"
            }
            OpenError::Scenario(_) => "share.err.scenario",
            OpenError::Unavailable => "share.err.unavailable",
            OpenError::MissingOrigins(_) => "share.warn.missing-origin",
        }
    }

    /// The technical detail (English), shown as a secondary line.
    pub fn detail(&self) -> String {
        match self {
            OpenError::Link(e) => e.to_string(),
            OpenError::Scenario(e) | OpenError::MissingOrigins(e) => e.clone(),
            OpenError::Unavailable => String::new(),
        }
    }

    /// True when opening the same link again may work.
    pub fn retryable(&self) -> bool {
        matches!(self, OpenError::Unavailable)
    }
}

/// kpv-core's share-link decoder.
type Decode = fn(&str) -> Result<ShareState, ShareError>;

/// The decoder. Only a reader who opens a link needs it (and the inflate
/// code under it), so in the release build it is a split point, fetched
/// here on first use; elsewhere it is linked in. None when it did not
/// arrive.
async fn decoder() -> Option<Decode> {
    #[cfg(feature = "split")]
    {
        split::decoder().await.ok()
    }
    #[cfg(not(feature = "split"))]
    {
        Some(kpv_core::session::share::decode)
    }
}

#[cfg(feature = "split")]
mod split {
    //! The share-link decoder's split point.
    split_points! {
        kpv_share_open { pub fn decoder -> super::Decode = kpv_core::session::share::decode; }
    }
}

/// The preset whose text this is (known by its fingerprint, so a preset
/// not fetched yet is named too), else the custom key.
pub fn scenario_key(yaml: &str) -> &'static str {
    let sum = crate::scenarios::fingerprint(yaml);
    PRESETS
        .iter()
        .find(|p| p.sum == sum)
        .map(|p| p.key)
        .unwrap_or(CUSTOM)
}

/// Decode `fragment` and load it into the Store (paused). On any error the
/// Store is left as it was.
pub async fn open(store: Store, fragment: &str) -> Result<ShareState, OpenError> {
    let decode = decoder().await.ok_or(OpenError::Unavailable)?;
    let state = decode(fragment).map_err(OpenError::Link)?;
    let mut parsed = crate::code::now().parse(&state.yaml);
    // Its Ingress and Gateway objects are checked too: with routing's code
    // (fetched here if needed; if that fails the app says so, as for any
    // scenario with routing objects).
    if parsed.0.routing.awaiting_code && crate::lazy_http::load().await.is_ok() {
        parsed = crate::code::now().parse(&state.yaml);
    }
    if let Some(d) = parsed.1.iter().find(|d| d.is_error()) {
        return Err(OpenError::Scenario(d.to_string()));
    }
    store.load(scenario_key(&state.yaml), &state.yaml);
    store.mode.set(state.mode);
    if let Some(s) = state.scheduler {
        store.scheduler.set(s);
    }
    store.seed.set(state.seed);
    store.speed.set(f64::from(state.speed_percent) / 100.0);
    store.changes.set(state.changes.clone());
    store.packets.set(state.packets.clone());
    store.focus.set(state.focus);
    store.rules_node.set(state.rules_node.clone());
    store.now.set(state.time_ms);
    if let (Some(step), Some(f)) = (state.step, store.focused_flight()) {
        if f.hop_at(state.time_ms) != step as usize {
            if let Some(t) = f.hop_time(step as usize) {
                store.now.set(t);
            }
        }
    }
    store.playing.set(false);
    Ok(state)
}

/// What to say about a link that opened: its packets that start from Pods
/// its scenario does not have, if any.
pub fn opened_notice(store: Store, state: &ShareState) -> Option<OpenError> {
    let missing = store
        .parsed
        .with_untracked(|(c, _)| state.missing_origins(c));
    let names: Vec<String> = missing.iter().map(|p| format!("pod:{p}")).collect();
    (!names.is_empty()).then(|| OpenError::MissingOrigins(names.join(", ")))
}

#[cfg(feature = "full")]
/// The page's address without query or fragment (keeps a sub-path).
pub fn base_url() -> String {
    web_sys::window()
        .map(|w| {
            let loc = w.location();
            format!(
                "{}{}",
                loc.origin().unwrap_or_default(),
                loc.pathname().unwrap_or_default()
            )
        })
        .unwrap_or_default()
}

#[cfg(feature = "full")]
/// The current state's fragment, only if the app can open it again as this
/// same state (checked against the decoder, limits and all); else the key
/// of the message saying what does not fit.
pub fn fragment(store: &Store, lang: Lang) -> Result<String, ShareError> {
    kpv_core::session::share::encode_checked(&capture(store, lang))
}

#[cfg(feature = "full")]
/// The share link of the current state (see [`fragment`]). It is not
/// written into the address bar: a reload there must not go back to this
/// moment once the author has moved on.
pub fn link(store: &Store, lang: Lang) -> Result<String, ShareError> {
    Ok(format!("{}#{}", base_url(), fragment(store, lang)?))
}

#[cfg(feature = "full")]
/// The link to a lesson at its page, in `lang`: shared from a lesson, it
/// opens the lesson (which sets its own scenario, mode and packets).
pub fn lesson_link(id: &str, page: usize, lang: Lang) -> String {
    format!(
        "{}?lesson={id}&page={page}&lang={}",
        base_url(),
        lang.code()
    )
}

#[cfg(feature = "full")]
/// The `<iframe>` that embeds the current view: a preset with nothing sent
/// (and the IPVS scheduler its scenario sets) is named in the query
/// (readable); anything else travels as a share link, which carries the
/// scheduler too.
pub fn embed_snippet(store: &Store, lang: Lang, theme: &str) -> Result<String, ShareError> {
    let key = store.scenario.get_untracked();
    let own_scheduler = store
        .parsed
        .with_untracked(|(c, _)| c.proxy.ipvs_scheduler == store.scheduler.get_untracked());
    let pristine = key != CUSTOM
        && store.packets.with_untracked(Vec::is_empty)
        && store.changes.with_untracked(Vec::is_empty)
        && own_scheduler;
    // No theme unless the author picked one: the embed then follows the
    // reader's colour scheme (a docs page's dark mode).
    let mut src = format!("{}?lang={}", embed_url(&base_url()), lang.code());
    if theme != "auto" {
        src.push_str(&format!("&amp;theme={theme}"));
    }
    if pristine {
        src.push_str(&format!(
            "&amp;scenario={key}&amp;mode={}",
            store.mode.get_untracked().as_str()
        ));
    } else {
        src.push('#');
        src.push_str(&fragment(store, lang)?);
    }
    let title = crate::scenarios::PRESETS
        .iter()
        .find(|p| p.key == key)
        .map_or_else(
            || crate::i18n::tr(lang, "scenario.custom").to_string(),
            |p| p.title(lang).to_string(),
        );
    let title = title
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;");
    Ok(format!(
        "<iframe src=\"{src}\"\n        title=\"kube-proxy visualizer: {title}\" style=\"width:100%;aspect-ratio:16/10;border:0\"\n        loading=\"lazy\" allowfullscreen></iframe>"
    ))
}

/// The embed build's address for the app at `base` (origin and path, see
/// [`base_url`]): the `embed/` folder beside the app's page, so a sub-path
/// build keeps its path.
pub fn embed_url(base: &str) -> String {
    let dir = base.rfind('/').map_or("", |i| &base[..=i]);
    format!("{dir}embed/")
}

#[cfg(feature = "full")]
/// Show `url` in the address bar without reloading or firing `hashchange`.
pub fn replace_address(url: &str) {
    if let Some(h) = web_sys::window().and_then(|w| w.history().ok()) {
        let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(url));
    }
}

#[cfg(feature = "full")]
/// Put `text` on the clipboard when the browser allows it (best effort: the
/// text is also shown on the page to copy by hand).
pub fn copy(text: &str) {
    if let Some(w) = web_sys::window() {
        let _ = w.navigator().clipboard().write_text(text);
    }
}

/// The fragment of the page's address (without `#`), if any.
pub fn current_fragment() -> Option<String> {
    let hash = web_sys::window()?.location().hash().ok()?;
    let h = hash.trim_start_matches('#');
    (!h.is_empty()).then(|| h.to_string())
}

/// A share link being opened from the address (at start, pasted into the
/// address bar, or again by Retry): whether one is on its way, and what
/// went wrong or what its reader should know.
#[derive(Clone, Copy)]
pub struct Opening {
    store: Store,
    lang: RwSignal<crate::i18n::Lang>,
    /// The reader's own `?lang=` wins over the author's language.
    lang_in_query: bool,
    problem: RwSignal<Option<OpenError>>,
    /// A link being opened (its reader's code may still be on the way).
    busy: RwSignal<bool>,
}

impl Opening {
    pub fn new(store: Store, lang: RwSignal<crate::i18n::Lang>, lang_in_query: bool) -> Opening {
        Opening {
            store,
            lang,
            lang_in_query,
            problem: RwSignal::new(None),
            busy: RwSignal::new(false),
        }
    }

    /// Open the link in `fragment`.
    pub fn open(self, fragment: String) {
        self.busy.set(true);
        leptos::task::spawn_local(async move {
            let opened = open(self.store, &fragment).await;
            self.busy.set(false);
            match opened {
                Ok(state) => {
                    self.problem.set(opened_notice(self.store, &state));
                    let lang = state.lang.as_deref().and_then(crate::i18n::Lang::parse);
                    if let (Some(l), false) = (lang, self.lang_in_query) {
                        self.lang.set(l);
                    }
                }
                Err(e) => self.problem.set(Some(e)),
            }
        });
    }

    /// "Opening the link…", or what went wrong (with Retry when trying
    /// again may help), or nothing.
    pub fn status(self) -> Option<AnyView> {
        let lang = self.lang;
        if self.busy.get() {
            let text = move || crate::i18n::tr(lang.get(), "share.opening");
            return Some(
                view! {
                    <p class="data-loading small muted" role="status" data-testid="share-opening">
                        <span class="spinner" aria-hidden="true"></span>
                        {text}
                    </p>
                }
                .into_any(),
            );
        }
        self.problem.get().map(|e| {
            let retry = e.retryable().then(|| {
                let again = move |_| {
                    if let Some(f) = current_fragment() {
                        self.open(f);
                    }
                };
                view! {
                    <button type="button" data-testid="share-retry" on:click=again>
                        {move || crate::i18n::tr(lang.get(), "data.retry")}
                    </button>
                }
            });
            view! {
                <div class="errors" role="alert" data-testid="share-error">
                    <p>{let key = e.key(); move || crate::i18n::tr(lang.get(), key)}</p>
                    <p class="small muted">{e.detail()}</p>
                    {retry}
                </div>
            }
            .into_any()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::embed_url;

    #[test]
    fn the_embed_build_is_the_embed_folder_beside_the_page() {
        for (base, want) in [
            ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/embed/"),
            (
                "https://docs.example/docs/kpv/",
                "https://docs.example/docs/kpv/embed/",
            ),
            (
                "https://docs.example/docs/kpv/index.html",
                "https://docs.example/docs/kpv/embed/",
            ),
            ("", "embed/"),
        ] {
            assert_eq!(embed_url(base), want, "{base}");
        }
    }
}
