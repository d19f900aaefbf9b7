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
use crate::i18n::{tr, Lang};
pub use crate::lesson_model::LessonModel;
use crate::lessons::INDEX;
use crate::state::Store;
use kpv_core::session::lesson::{self, Played};
use kpv_core::view::noun::{self, Segment};
use leptos::prelude::*;

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

/// What the open step waits for or shows as things arrive: a step whose
/// mode's code was on its way is entered again once it is here (also after
/// a Retry); a step's nouns light up on the diagram for a moment when it
/// opens; a step that sends an HTTP request is played once HTTP routing's
/// code is here.
fn follow_arrivals(store: Store, ls: LessonModel, l: RwSignal<Lang>) {
    Effect::new(move |_| {
        if store.live_mode.get().is_some() {
            if let Some(k) = ls.waiting.get_value() {
                ls.enter(&store, k);
            }
        }
    });
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
    Effect::new(move |was_ready: Option<bool>| {
        let ready = store.http_ready.get();
        if ready && was_ready == Some(false) && ls.played.with_untracked(Option::is_none) {
            ls.enter(&store, ls.step.get_untracked());
        }
        ready
    });
}

#[component]
pub fn LessonBar() -> impl IntoView {
    let store = expect_context::<Store>();
    let ls = expect_context::<LessonModel>();
    let loader = expect_context::<Loader>();
    let l = lang();
    follow_arrivals(store, ls, l);
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
