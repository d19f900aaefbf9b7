//! The lesson bar: pick a guided lesson, read a step, predict, then watch.
//!
//! Entering a step loads the lesson's scenario and sets the Store's inputs
//! to what kpv-core's [`kpv_core::session::lesson::play`] says the step has in force
//! (mode, scheduler, broken or healed apps, destination, origin) with the
//! clock at the moment its packets leave; the packets are sent when the
//! learner plays the step or checks an answer. Whether an answer is right is
//! computed from the traces by [`kpv_core::session::lesson::check_prediction`].

use super::pointing;
use super::{lang, t};
use crate::data::{Job, Loader};
use crate::i18n::tr;
use crate::lessons::INDEX;
use crate::scenarios::PRESETS;
use crate::state::Store;
use kpv_core::net::trace::Origin;
use kpv_core::session::lesson::{self, Lesson, Played};
use kpv_core::view::noun::{self, Segment};
use leptos::prelude::*;

/// The open lesson and where the learner is in it.
#[derive(Clone, Copy)]
pub struct LessonState {
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
    waiting: StoredValue<Option<usize>>,
}

impl LessonState {
    pub fn new() -> LessonState {
        LessonState {
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
            .and_then(|p| Some((p, crate::data::preset_text(p)?)))
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

impl Default for LessonState {
    fn default() -> Self {
        LessonState::new()
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

/// The diagram keys of the nouns `text` marks that name something in the
/// Store's cluster.
fn noun_keys(store: &Store, text: &str) -> Vec<String> {
    store.parsed.with_untracked(|(c, _)| {
        noun::segments(text)
            .into_iter()
            .filter_map(|s| match s {
                Segment::Noun { target, .. } => {
                    noun::resolve(c, &target).map(|r| pointing::key(&r))
                }
                Segment::Text(_) => None,
            })
            .collect()
    })
}

/// A step's text with its nouns pointing at the diagram: hovering or
/// focusing one highlights what it names (a noun naming nothing in the
/// cluster is plain text).
fn lesson_text(store: &Store, text: &str) -> impl IntoView {
    let pointed = pointing::pointed();
    let segs: Vec<(String, Option<String>)> = store.parsed.with_untracked(|(c, _)| {
        noun::segments(text)
            .into_iter()
            .map(|s| match s {
                Segment::Text(t) => (t.to_string(), None),
                Segment::Noun { target, words } => (
                    words.to_string(),
                    noun::resolve(c, &target).map(|r| pointing::key(&r)),
                ),
            })
            .collect()
    });
    segs.into_iter()
        .map(|(words, key)| match key {
            None => words.into_any(),
            Some(key) => {
                let (k1, k2) = (key.clone(), key.clone());
                view! {
                    <span class="noun" tabindex="0" data-testid="lesson-noun" data-ref=key
                        on:mouseenter=move |_| pointed.show(vec![k1.clone()])
                        on:focus=move |_| pointed.show(vec![k2.clone()])
                        on:mouseleave=move |_| pointed.clear()
                        on:blur=move |_| pointed.clear()>{words}</span>
                }
                .into_any()
            }
        })
        .collect_view()
}

#[component]
pub fn LessonBar() -> impl IntoView {
    let store = expect_context::<Store>();
    let ls = expect_context::<LessonState>();
    let loader = expect_context::<Loader>();
    let l = lang();
    // A step whose mode's code was on its way is entered again once it is
    // here (also after a Retry).
    Effect::new(move |_| {
        if store.live_mode.get().is_some() {
            if let Some(k) = ls.waiting.get_value() {
                ls.enter(&store, k);
            }
        }
    });
    // When a step opens, its nouns light up on the diagram for a moment.
    let pointed = pointing::pointed();
    Effect::new(move |_| {
        let (Some(_), k, lg) = (ls.open.get(), ls.step.get(), l.get()) else {
            return;
        };
        let text = ls.lesson.with_value(|v| {
            v.as_ref()
                .and_then(|x| x.steps.get(k))
                .map(|s| s.text.get(lg.code()).to_string())
        });
        if let Some(text) = text {
            pointed.flash(noun_keys(&store, &text));
        }
    });
    // A step that sends an HTTP request is played once HTTP routing's code
    // is here (its scenario's routing objects asked for it).
    Effect::new(move |was_ready: Option<bool>| {
        let ready = store.http_ready.get();
        if ready && was_ready == Some(false) && ls.played.with_untracked(Option::is_none) {
            ls.enter(&store, ls.step.get_untracked());
        }
        ready
    });
    let current = move || {
        ls.open.get()?;
        ls.lesson.get_value()
    };
    let picker = INDEX
        .iter()
        .enumerate()
        .map(|(i, e)| {
            view! {
                <option value=e.id data-content="lesson" selected=move || ls.open.get() == Some(i)>
                    {move || e.title(l.get())}
                </option>
            }
        })
        .collect_view();
    let body = move || {
        let lesson = current()?;
        let lang = l.get().code();
        let k = ls.step.get();
        let n = lesson.steps.len();
        let step = lesson.steps.get(k)?.clone();
        let predict = step.predict.clone();
        let (first, last) = (k == 0, k + 1 >= n);
        let right_text = move |played: &Played| {
            let p = lesson.steps.get(k)?.predict.as_ref()?;
            store.parsed.with_untracked(|(c, _)| {
                p.choices
                    .iter()
                    .find(|ch| {
                        lesson::check_prediction(
                            c,
                            &ch.answer,
                            played,
                            &crate::code::now().lesson(),
                        )
                    })
                    .map(|ch| ch.text.get(lang).to_string())
            })
        };
        Some(view! {
            <div class="lesson-body">
                <p class="lesson-step small muted" data-testid="lesson-progress">{format!("{} {} / {n}", tr(l.get(), "lesson.step"), k + 1)}</p>
                <p data-testid="lesson-text" class="lesson-text" data-content="lesson">{lesson_text(&store, step.text.get(lang))}</p>
                {match predict {
                    Some(p) => view! {
                        <fieldset class="lesson-predict" data-testid="lesson-predict">
                            <legend data-content="lesson">{p.question.get(lang).to_string()}</legend>
                            {p.choices.iter().enumerate().map(|(i, c)| {
                                let answer = c.answer.key();
                                view! {
                                    <label class="check">
                                        <input type="radio" name="lesson-choice" data-testid="lesson-choice" data-answer=answer
                                            prop:checked=move || ls.choice.get() == Some(i)
                                            on:change=move |_| { ls.choice.set(Some(i)); ls.result.set(None); } />
                                        <span data-content="lesson">{c.text.get(lang).to_string()}</span>
                                    </label>
                                }
                            }).collect_view()}
                            <div class="buttons">
                                <button data-testid="lesson-check" class="primary" disabled=move || ls.choice.get().is_none()
                                    on:click=move |_| ls.check(&store)>{t("lesson.check")}</button>
                            </div>
                            {move || ls.result.get().map(|right| {
                                let answer = ls.played.with(|p| p.as_ref().and_then(&right_text)).unwrap_or_default();
                                view! {
                                    <p data-testid="lesson-result" data-correct=right.to_string() role="status"
                                        class=if right { "result right" } else { "result wrong" }>
                                        {if right { format!("✔ {}", tr(l.get(), "lesson.right")) } else { format!("✖ {} ", tr(l.get(), "lesson.wrong")) }}
                                        {(!right).then(|| view! { <span data-content="lesson">{answer}</span> })}
                                    </p>
                                    {move || {
                                        // The hop that settles it, in the caption's words.
                                        let lg = l.get();
                                        let i = ls.settled.get()?;
                                        let line = store.with_focused_trace(|t| t.hops.get(i).map(|h| crate::hops::summary(lg, h))).flatten()?;
                                        Some(view! {
                                            <p class="lesson-settled" data-testid="lesson-settled" data-hop=(i + 1).to_string()>
                                                <strong>{tr(lg, "lesson.settled").replace("{i}", &(i + 1).to_string())}</strong>" "{line}
                                            </p>
                                        })
                                    }}
                                }
                            })}
                        </fieldset>
                    }.into_any(),
                    None => view! {
                        <div class="buttons">
                            <button data-testid="lesson-play" class="primary" on:click=move |_| ls.play(&store)>{t("lesson.play")}</button>
                        </div>
                    }.into_any(),
                }}
                <nav class="buttons lesson-nav">
                    <button data-testid="lesson-prev" disabled=first on:click=move |_| ls.enter(&store, k.saturating_sub(1))>{move || format!("◀ {}", tr(l.get(), "lesson.prev"))}</button>
                    <button data-testid="lesson-next" disabled=last on:click=move |_| ls.enter(&store, k + 1)>{move || format!("{} ▶", tr(l.get(), "lesson.next"))}</button>
                    <button data-testid="lesson-close" on:click=move |_| ls.close()>{t("lesson.close")}</button>
                </nav>
            </div>
        })
    };
    view! {
        <section class="panel lesson" class:open=move || ls.open.get().is_some() data-testid="lesson-panel">
            <label class="lesson-pick">
                <span>{t("lesson.title")}</span>
                <select data-testid="lesson-select" on:change=move |ev| {
                    let id = event_target_value(&ev);
                    if id.is_empty() { ls.close(); } else { loader.run(Job::Lesson { id, page: 0 }); }
                }>
                    <option value="" selected=move || ls.open.get().is_none()>{t("lesson.none")}</option>
                    {picker}
                </select>
            </label>
            {body}
        </section>
    }
}
