//! Files the app fetches on demand from its own origin: the presets' YAML
//! (`data/scenarios/`, `data/http/`) and, in the whole app, the lessons
//! (`data/lessons/`). Trunk copies them into the site beside the app's own
//! files (`index.html`, `embed.html`), so the first download carries none of
//! them; the default preset stays compiled in so start-up never waits.
//!
//! [`Loader`] runs one [`Job`] at a time (a later one supersedes an earlier
//! one), shows that it is loading, and on failure keeps the job for a retry.
//! A job changes the Store only once everything it needs has arrived, so a
//! failed fetch never touches the scenario or the editor's text. Never asks
//! another origin: every address is relative to the folder the app's files
//! are served from.

use crate::env::UrlProblem;
use crate::fetch::FetchError;
#[cfg(feature = "full")]
use crate::fetch::{cached, get};
use crate::scenarios::{preset, preset_text, PRESETS};
use crate::state::Store;
use kpv_core::model::Mode;
use leptos::prelude::*;

/// What is being loaded, and what to do with it once it is there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Job {
    /// Load a preset; at start-up also the address's `mode=` and where
    /// the first packet stops.
    Preset {
        key: &'static str,
        mode: Option<Mode>,
        stop: Option<Stop>,
    },
    /// Open a lesson at a page (0-based), with its scenario.
    #[cfg(feature = "full")]
    Lesson { id: String, page: usize },
}

/// Runs [`Job`]s: fetches, then applies them to the Store.
#[derive(Clone, Copy)]
pub struct Loader {
    store: Store,
    /// The address's problems: a `step=` past the last hop is found only
    /// once the preset is loaded.
    problems: RwSignal<Vec<UrlProblem>>,
    #[cfg(feature = "full")]
    lessons: crate::lesson_model::LessonModel,
    /// The job being fetched.
    pub busy: RwSignal<Option<Job>>,
    /// The job whose fetch failed, and why (offered again by the retry).
    pub failed: RwSignal<Option<(Job, FetchError)>>,
    /// Bumped by every job: a slow fetch a later job superseded is dropped.
    generation: StoredValue<u32>,
}

impl Loader {
    pub fn new(
        store: Store,
        problems: RwSignal<Vec<UrlProblem>>,
        #[cfg(feature = "full")] lessons: crate::lesson_model::LessonModel,
    ) -> Loader {
        Loader {
            store,
            problems,
            #[cfg(feature = "full")]
            lessons,
            busy: RwSignal::new(None),
            failed: RwSignal::new(None),
            generation: StoredValue::new(0),
        }
    }

    /// Run `job`: at once when its files are at hand, else after fetching.
    pub fn run(self, job: Job) {
        let generation = self.generation.get_value().wrapping_add(1);
        self.generation.set_value(generation);
        self.failed.set(None);
        if self.apply(&job) {
            self.busy.set(None);
            return;
        }
        self.busy.set(Some(job.clone()));
        wasm_bindgen_futures::spawn_local(async move {
            let fetched = self.fetch(&job).await;
            if self.generation.try_get_value() != Some(generation) {
                return;
            }
            self.busy.set(None);
            match fetched {
                Ok(()) if self.apply(&job) => {}
                Ok(()) => self
                    .failed
                    .set(Some((job, FetchError("not loaded".to_string())))),
                Err(e) => {
                    // The scenario picker goes back to what is loaded.
                    self.store.scenario.update(|_| {});
                    self.failed.set(Some((job, e)));
                }
            }
        });
    }

    /// Run the failed job again.
    pub fn retry(self) {
        if let Some((job, _)) = self.failed.get_untracked() {
            self.run(job);
        }
    }

    async fn fetch(&self, job: &Job) -> Result<(), FetchError> {
        match job {
            Job::Preset { key, .. } => preset(key).await.map(|_| ()),
            #[cfg(feature = "full")]
            Job::Lesson { id, .. } => {
                let text = get(&crate::lessons::path(id)).await?;
                let lesson = crate::lessons::parse(&text)
                    .ok_or_else(|| FetchError(format!("lesson {id} has errors")))?;
                preset(&lesson.scenario).await.map(|_| ())
            }
        }
    }

    /// Apply `job` if everything it needs is at hand; false if not.
    fn apply(&self, job: &Job) -> bool {
        match job {
            Job::Preset { key, mode, stop } => {
                let Some(text) = PRESETS.iter().find(|p| p.key == *key).and_then(preset_text)
                else {
                    return false;
                };
                self.store.load(key, &text);
                start_at(self.store, *mode, *stop, self.problems);
                true
            }
            #[cfg(feature = "full")]
            Job::Lesson { id, page } => {
                let Some(lesson) = cached(&crate::lessons::path(id))
                    .as_deref()
                    .and_then(crate::lessons::parse)
                else {
                    return false;
                };
                let ready = PRESETS
                    .iter()
                    .find(|p| p.key == lesson.scenario)
                    .and_then(preset_text)
                    .is_some();
                ready && self.lessons.open_loaded(&self.store, lesson, *page)
            }
        }
    }
}

/// Where the first packet of a page stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The address's `step=N` (from 1): documentation pages link to a hop.
    Hop(u32),
    /// An embed at rest: the packet's telling hop (`Trace::poster_hop`),
    /// so a docs page shows a packet and its caption before any click.
    Poster,
    /// The poster's hop, playing on from there (`play=1`).
    PosterPlaying,
}

/// The address's `mode=` and where the first packet stops, on the loaded
/// scenario: one packet sent and stopped there.
///
/// The packet is sent once it can go where it should (an HTTP entry point
/// waits for routing's code) and stopped once its flight exists (the mode's
/// code is here): code still on its way, or a Retry after a failed fetch,
/// delays the step but never changes it. Whatever the reader does meanwhile
/// (another scenario or target, a packet of their own, a reset) is their
/// own choice, and the step gives way.
pub fn start_at(
    store: Store,
    mode: Option<Mode>,
    stop: Option<Stop>,
    problems: RwSignal<Vec<UrlProblem>>,
) {
    if let Some(m) = mode {
        store.mode.set(m);
    }
    let Some(step) = stop else {
        return;
    };
    let scenario = store.scenario.get_untracked();
    let target = store.target.get_untracked();
    Effect::new(move |prev: Option<Stepping>| match prev {
        None | Some(Stepping::Waiting) => {
            let moved_on = store.scenario.with(|s| *s != scenario)
                || store.target.with(|t| *t != target)
                || store.packets.with(|p| !p.is_empty());
            if moved_on {
                return Stepping::Done;
            }
            if store.entry_waits() {
                return Stepping::Waiting;
            }
            let sent = untrack(|| {
                let id = store.send_ids(1, 0);
                store.playing.set(false);
                id
            });
            match sent {
                Some(id) => stopped(store, id, step, problems),
                None => Stepping::Done,
            }
        }
        Some(Stepping::Sent(id)) => stopped(store, id, step, problems),
        Some(Stepping::Done) => Stepping::Done,
    });
}

/// Where [`start_at`] is: waiting to send, waiting for packet `id`'s
/// flight, or done.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stepping {
    Waiting,
    Sent(u32),
    Done,
}

/// Stop packet `id` at `step` once its flight exists; done at once if the
/// reader has moved on to another packet.
fn stopped(store: Store, id: u32, step: Stop, problems: RwSignal<Vec<UrlProblem>>) -> Stepping {
    if store.focus.get() != Some(id) {
        return Stepping::Done;
    }
    if store.with_focused_flight(|_| ()).is_none() {
        return Stepping::Sent(id);
    }
    untrack(|| stop_at(store, step, problems));
    Stepping::Done
}

/// Stop the focused packet at `stop` (a hop from 1; past the last one: at
/// the last, and say so).
fn stop_at(store: Store, stop: Stop, problems: RwSignal<Vec<UrlProblem>>) {
    let Some(f) = store.focused_flight() else {
        return;
    };
    let hops = f.legs.len();
    let hop = match stop {
        Stop::Hop(step) => {
            if step as usize > hops {
                problems.update(|p| p.push(UrlProblem::step_beyond(step, hops)));
            }
            (step as usize).min(hops).saturating_sub(1)
        }
        Stop::Poster | Stop::PosterPlaying => {
            store.with_focused_trace(|t| t.poster_hop()).unwrap_or(0)
        }
    };
    if let Some(t) = f.hop_time(hop) {
        store.now.set(t);
    }
    if stop == Stop::PosterPlaying {
        store.playing.set(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every preset's text is there to fetch, and its parts join as the
    /// app joins them.
    #[test]
    fn every_preset_file_is_in_the_repository() {
        for p in PRESETS {
            for f in p.files {
                assert!(f.starts_with("data/"), "{}: {f}", p.key);
                assert!(!crate::fetch::from_disk(f).is_empty(), "{f}");
            }
            assert_eq!(p.yaml.is_some(), p.files.is_empty(), "{}", p.key);
        }
    }
}
