//! The lesson bar's model: the open lesson, the step, what it played and
//! the learner's answer, as plain signals the bar binds to, and the one
//! place that sets the Store's inputs for a step (kpv-core's
//! [`kpv_core::session::lesson::play`] says what is in force). Keeps the
//! address on `?lesson=ID&page=N` so it can be shared.

use crate::lessons::INDEX;
use crate::scenarios::PRESETS;
use crate::state::Store;
use kpv_core::net::trace::Origin;
use kpv_core::session::lesson::{self, Lesson, Played};
use leptos::prelude::*;

/// The open lesson and where the learner is in it.
#[derive(Clone, Copy)]
pub struct LessonModel {
    /// The open lesson (fetched); `open` is its place in [`INDEX`].
    pub lesson: StoredValue<Option<Lesson>>,
    pub open: RwSignal<Option<usize>>,
    pub step: RwSignal<usize>,
    pub played: RwSignal<Option<Played>>,
    pub choice: RwSignal<Option<usize>>,
    pub result: RwSignal<Option<bool>>,
    /// The hop of the focused packet that settled the last checked answer.
    pub settled: RwSignal<Option<usize>>,
    /// The step entered while its mode's code was on its way: entered
    /// again when the code is here (the lesson bar watches for it).
    pub waiting: StoredValue<Option<usize>>,
}

impl LessonModel {
    pub fn new() -> LessonModel {
        LessonModel {
            lesson: StoredValue::new(None),
            open: RwSignal::new(None),
            step: RwSignal::new(0),
            played: RwSignal::new(None),
            choice: RwSignal::new(None),
            result: RwSignal::new(None),
            settled: RwSignal::new(None),
            waiting: StoredValue::new(None),
        }
    }

    /// Open `lesson` (fetched, with its scenario) at step `step` (0-based);
    /// false if it is not in the index.
    pub fn open_loaded(&self, store: &Store, lesson: Lesson, step: usize) -> bool {
        let Some(i) = INDEX.iter().position(|e| e.id == lesson.id) else {
            return false;
        };
        self.lesson.set_value(Some(lesson));
        self.open.set(Some(i));
        self.enter(store, step);
        true
    }

    /// The open lesson's id and page (counted from 1, as `?page=` is).
    pub fn at(&self) -> Option<(&'static str, usize)> {
        let i = self.open.get_untracked()?;
        let entry = INDEX.get(i)?;
        Some((entry.id, self.step.get_untracked().saturating_add(1)))
    }

    fn lesson(&self) -> Option<Lesson> {
        self.open.get_untracked()?;
        self.lesson.get_value()
    }

    /// Set the Store up for step `k` of the open lesson.
    pub fn enter(&self, store: &Store, k: usize) {
        let Some(lesson) = self.lesson() else {
            return;
        };
        let k = k.min(lesson.steps.len().saturating_sub(1));
        // Its scenario was fetched with it.
        if let Some((p, text)) = PRESETS
            .iter()
            .find(|p| p.key == lesson.scenario)
            .and_then(|p| Some((p, crate::scenarios::preset_text(p)?)))
        {
            store.load(p.key, &text);
        }
        let seed = store.seed.get_untracked();
        let mut played = store.parsed.with_untracked(|(c, _)| {
            lesson::play(c, &lesson, k, seed, &crate::code::now().lesson())
        });
        // A step in a mode whose code is not here yet: its traces (and so
        // the answers) are computed again once the code has come, and the
        // step waits with nothing to play or check meanwhile.
        let unready = played
            .as_ref()
            .map(|p| p.mode)
            .filter(|m| !store.loads.with_untracked(|l| l.ready(*m)));
        if let Some(mode) = unready {
            played = None;
            store.mode.set(mode);
        }
        self.waiting.set_value(unready.map(|_| k));
        if let Some(p) = &played {
            store.mode.set(p.mode);
            if let Some(s) = p.scheduler {
                store.scheduler.set(s);
            }
            store.changes.set(p.changes.clone());
            store.target.set(p.target.key.clone());
            store.origin.set(origin_key(&p.origin));
            let at = p
                .packets
                .first()
                .map(|x| x.at_ms)
                .unwrap_or(k as u64 * lesson::STEP_MS + lesson::SETTLE_MS);
            store.now.set(at);
        }
        self.step.set(k);
        self.played.set(played);
        self.choice.set(None);
        self.result.set(None);
        self.settled.set(None);
        show_in_address(&lesson.id, k);
    }

    /// Send the step's packets and play them.
    pub fn play(&self, store: &Store) {
        let Some(p) = self.played.get_untracked() else {
            return;
        };
        if let Some(first) = p.packets.first() {
            store.now.set(first.at_ms);
            store.focus.set(Some(first.id));
        }
        store.packets.set(p.packets);
        // A step that sends an HTTP request sends it through the request
        // form, as a learner would: the form shows what the lesson sent.
        let spec = self
            .lesson()
            .and_then(|l| l.steps.get(self.step.get_untracked()).cloned())
            .and_then(|s| s.set.request);
        if let (Some(spec), Some(http)) = (spec, &p.http) {
            let headers: String = spec
                .headers
                .iter()
                .map(|(k, v)| format!("{k}: {v}\n"))
                .collect();
            if store
                .send_request(&spec.method, &spec.url, &headers)
                .is_ok()
            {
                let more = u32::try_from(http.journeys.len()).unwrap_or(1);
                if more > 1 {
                    store.send(more - 1, 60);
                }
            }
        }
        store.playing.set(true);
    }

    /// Check the chosen answer, send the step's packets and stop at the hop
    /// that settles the question (kpv-core's [`kpv_core::session::settle`]).
    pub fn check(&self, store: &Store) {
        let (Some(lesson), Some(choice), Some(played)) = (
            self.lesson(),
            self.choice.get_untracked(),
            self.played.get_untracked(),
        ) else {
            return;
        };
        let step = self.step.get_untracked();
        let answer = lesson
            .steps
            .get(step)
            .and_then(|s| s.predict.as_ref())
            .and_then(|p| p.choices.get(choice))
            .map(|c| c.answer.clone());
        if let Some(answer) = answer {
            let right = store.parsed.with_untracked(|(c, _)| {
                lesson::check_prediction(c, &answer, &played, &crate::code::now().lesson())
            });
            self.result.set(Some(right));
        }
        self.play(store);
        // Stop at the hop that settles the question, so its caption says why.
        let kind = lesson
            .steps
            .get(step)
            .and_then(|s| s.predict.as_ref())
            .map(|p| p.kind);
        let hop = kind
            .and_then(|k| {
                store.with_focused_trace(|t| kpv_core::session::settle::settling_hop(t, k))
            })
            .flatten();
        if let Some(at) = hop
            .and_then(|i| store.with_focused_flight(|f| f.hop_time(i)))
            .flatten()
        {
            store.playing.set(false);
            store.now.set(at);
        }
        self.settled.set(hop);
        // The side column scrolls so the verdict and its hop are in view.
        request_animation_frame(reveal_settled);
    }

    pub fn close(&self) {
        self.open.set(None);
        self.played.set(None);
        self.result.set(None);
        let lang = lang_param();
        let query = if lang.is_empty() {
            String::new()
        } else {
            format!("?{lang}")
        };
        crate::share::replace_address(&format!("{}{query}", crate::share::base_url()));
    }
}

impl Default for LessonModel {
    fn default() -> Self {
        LessonModel::new()
    }
}

/// Scroll the side column (not the page) so the checked answer's verdict
/// and the hop that settled it are in view.
fn reveal_settled() {
    use wasm_bindgen::JsCast;
    let doc = web_sys::window().and_then(|w| w.document());
    let find = |sel: &str| {
        doc.as_ref()
            .and_then(|d| d.query_selector(sel).ok().flatten())
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    };
    let (Some(side), Some(el)) = (
        find(".first-screen .side"),
        find("[data-testid=lesson-settled]").or_else(|| find("[data-testid=lesson-result]")),
    ) else {
        return;
    };
    let bottom = el.offset_top() + el.offset_height() + 8;
    let shown = side.offset_top() + side.scroll_top() + side.client_height();
    if bottom > shown {
        side.set_scroll_top(side.scroll_top() + bottom - shown);
    }
}

/// The origin's key in the traffic bar's list.
fn origin_key(o: &Origin) -> String {
    kpv_core::net::trace::OriginKey::of(o).to_string()
}

/// The page's language as the address gives it (`lang=ko`), read from the
/// document, whose `lang` follows the chosen language: every address the
/// app writes keeps it.
fn lang_param() -> String {
    web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
        .and_then(|e| e.get_attribute("lang"))
        .and_then(|code| crate::i18n::Lang::parse(&code))
        .map(|l| format!("lang={}", l.code()))
        .unwrap_or_default()
}

/// Keep the address bar on `?lesson=ID&page=N&lang=L` so it can be shared.
fn show_in_address(id: &str, k: usize) {
    let lang = lang_param();
    let sep = if lang.is_empty() { "" } else { "&" };
    let url = format!(
        "{}?lesson={id}&page={}{sep}{lang}",
        crate::share::base_url(),
        k + 1
    );
    crate::share::replace_address(&url);
}
