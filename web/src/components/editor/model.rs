//! The editor's state and what its buttons and events do, as one Copy
//! value of signals the editor's markup binds to: the text and whose it is,
//! the text set aside, the save state, the checked text and its
//! diagnostics, another tab's text, and the pause timer.
use super::file::load_file;
use super::{checked_while_typing, size_text, CHECK_AFTER_MS};
use crate::components::textarea::Area;
use crate::env::{self, SaveError, Stored};
use crate::i18n::{tr, Lang};
use crate::state::{Store, CUSTOM};
use kpv_core::util::diag::Diagnostic;
use leptos::prelude::*;
use std::time::Duration;
use wasm_bindgen::JsCast;

/// Whether the last save worked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Saved {
    Yes,
    /// Not saved on purpose: the user has a choice to make first.
    Held,
    Failed(SaveError),
}

/// The parse of the checked text, kept so Apply does not parse it again.
type LastParse = StoredValue<Option<(String, crate::state::Parsed)>, LocalStorage>;

/// What the checked text's diagnostics are, as the editor shows them.
#[derive(Clone, Copy)]
pub(super) struct Checked {
    pub(super) errors: Memo<Vec<Diagnostic>>,
    pub(super) warnings: Memo<Vec<Diagnostic>>,
    /// The lines that have an error, a warning (marked in the gutter).
    pub(super) error_lines: Memo<std::collections::BTreeSet<usize>>,
    pub(super) warning_lines: Memo<std::collections::BTreeSet<usize>>,
}

impl Checked {
    /// Parse `checked` (keeping the parse in `last_parse`); a text with
    /// Ingress or Gateway objects fetches HTTP routing's code and is checked
    /// again when it is here.
    fn of(store: Store, checked: RwSignal<Option<String>>, last_parse: LastParse) -> Checked {
        // Ingress and Gateway objects are checked once HTTP routing's code is
        // here: a text that has them fetches it, and is checked again then.
        let awaiting = RwSignal::new(false);
        let diags = Memo::new(move |_| {
            checked.with(|c| {
                c.as_ref().map(|text| {
                    let parsed = crate::code::now().parse(text);
                    let waits = parsed.0.routing.awaiting_code;
                    if waits {
                        // Only such a text is parsed again when the code comes.
                        let _ = store.http_ready.get();
                    }
                    if awaiting.get_untracked() != waits {
                        awaiting.set(waits);
                    }
                    let diags = parsed.1.clone();
                    last_parse.set_value(Some((text.clone(), parsed)));
                    diags
                })
            })
        });
        Effect::new(move |_| {
            if awaiting.get() && store.http_load.get() == crate::load::Fetch::Absent {
                store.load_http();
            }
        });
        let errors = Memo::new(move |_| {
            diags.with(|ds| {
                ds.iter()
                    .flatten()
                    .filter(|d| d.is_error())
                    .cloned()
                    .collect::<Vec<_>>()
            })
        });
        let warnings = Memo::new(move |_| {
            diags.with(|ds| {
                ds.iter()
                    .flatten()
                    .filter(|d| !d.is_error())
                    .cloned()
                    .collect::<Vec<_>>()
            })
        });
        let error_lines = Memo::new(move |_| {
            errors.with(|es| {
                kpv_core::util::order::set(es.iter().filter_map(|d| d.span.map(|s| s.line)))
            })
        });
        let warning_lines = Memo::new(move |_| {
            warnings.with(|ws| {
                kpv_core::util::order::set(ws.iter().filter_map(|d| d.span.map(|s| s.line)))
            })
        });
        Checked {
            errors,
            warnings,
            error_lines,
            warning_lines,
        }
    }
}

/// The editor: its inputs as signals, and what each action does to them.
#[derive(Clone, Copy)]
pub(super) struct EditorModel {
    pub(super) store: Store,
    pub(super) l: RwSignal<Lang>,
    pub(super) draft: RwSignal<String>,
    pub(super) area: Area,
    /// Is the editor's text the user's own (typed), or one the app loaded?
    own: RwSignal<bool>,
    /// The user's last own text while the editor shows a loaded one.
    pub(super) kept: RwSignal<Option<String>>,
    /// A stored value this version cannot read: kept until the user decides.
    pub(super) unreadable: RwSignal<Option<(String, String)>>,
    /// Another tab's text, saved while this one was open: the user chooses.
    pub(super) conflict: RwSignal<Option<String>>,
    pub(super) saved: RwSignal<Saved>,
    /// The text last checked (parsed): what the diagnostics are about. A
    /// large text is not checked at start; it waits for Check or Apply.
    checked: RwSignal<Option<String>>,
    pub(super) dirty: RwSignal<bool>,
    pub(super) busy: RwSignal<Option<String>>,
    applied: RwSignal<bool>,
    pub(super) file_problem: RwSignal<Option<String>>,
    pub(super) dragging: RwSignal<bool>,
    last_parse: LastParse,
    pub(super) diags: Checked,
    /// The pending pause's timer.
    timer: StoredValue<Option<TimeoutHandle>, LocalStorage>,
}

impl EditorModel {
    pub(super) fn new(store: Store, draft: RwSignal<String>, stored: &Stored) -> EditorModel {
        let checked = RwSignal::new(
            draft.with_untracked(|d| checked_while_typing(d.len()).then(|| d.clone())),
        );
        let last_parse: LastParse = StoredValue::new_local(None);
        EditorModel {
            store,
            l: crate::components::lang(),
            draft,
            area: Area::new(draft),
            own: RwSignal::new(match stored {
                Stored::Text { own, .. } => *own,
                _ => false,
            }),
            kept: RwSignal::new(env::load_own()),
            unreadable: RwSignal::new(match stored {
                Stored::Unreadable { reason, raw } => Some((reason.clone(), raw.clone())),
                _ => None,
            }),
            conflict: RwSignal::new(None),
            saved: RwSignal::new(if *stored == Stored::Unavailable {
                Saved::Failed(SaveError::Unavailable)
            } else {
                Saved::Yes
            }),
            checked,
            dirty: RwSignal::new(checked.with_untracked(Option::is_none)),
            busy: RwSignal::new(None),
            applied: RwSignal::new(false),
            file_problem: RwSignal::new(None),
            dragging: RwSignal::new(false),
            last_parse,
            diags: Checked::of(store, checked, last_parse),
            timer: StoredValue::new_local(None),
        }
    }

    /// Save the text now, unless the user has a choice to make first.
    pub(super) fn save_now(self) {
        if self.unreadable.with_untracked(Option::is_some)
            || self.conflict.with_untracked(Option::is_some)
        {
            self.saved.set(Saved::Held);
            return;
        }
        let result = self
            .draft
            .with_untracked(|d| env::save_editor(d, self.own.get_untracked()));
        self.saved.set(match result {
            Ok(()) => Saved::Yes,
            Err(e) => Saved::Failed(e),
        });
    }

    fn keep_aside(self, text: Option<String>) {
        let _ = env::save_own(text.as_deref());
        self.kept.set(text);
    }

    /// Check and save after a pause in typing.
    fn after_pause(self) {
        if let Some(h) = self.timer.try_update_value(Option::take).flatten() {
            h.clear();
        }
        let h = set_timeout_with_handle(
            move || {
                self.save_now();
                if self.draft.with_untracked(|d| checked_while_typing(d.len())) {
                    self.checked.set(Some(self.draft.get_untracked()));
                    self.dirty.set(false);
                }
            },
            Duration::from_millis(CHECK_AFTER_MS),
        );
        self.timer.set_value(h.ok());
    }

    /// Show `text` in the editor, as the user's own or not, and check and
    /// save it after the pause.
    fn show(self, text: String, own: bool) {
        self.draft.set(text);
        self.area.show();
        self.own.set(own);
        self.dirty.set(true);
        self.after_pause();
        self.save_now();
    }

    /// The user typed.
    pub(super) fn edited(self) {
        self.applied.set(false);
        self.own.set(true);
        self.dirty.set(true);
        self.after_pause();
    }

    /// Put a text the app loaded in the editor: the user's own text is set
    /// aside first (a loaded text replacing a loaded text keeps the aside one).
    pub(super) fn load_text(self, text: String) {
        if self.own.get_untracked()
            && self
                .draft
                .with_untracked(|d| *d != text && !d.trim().is_empty())
        {
            self.keep_aside(Some(self.draft.get_untracked()));
        }
        self.applied.set(false);
        self.show(text, false);
    }

    /// Bring back the text set aside.
    pub(super) fn restore(self) {
        let Some(text) = self.kept.get_untracked() else {
            return;
        };
        // Swapping two own texts keeps the other aside; a loaded one can be loaded again.
        self.keep_aside(self.own.get_untracked().then(|| self.draft.get_untracked()));
        self.show(text, true);
    }

    /// A preset the address asked for arrives after start-up: the editor
    /// takes its text once, as it would have if it had been there at start.
    pub(super) fn follow_first_load(self, armed: bool) {
        let armed = StoredValue::new(armed);
        Effect::new(move |_| {
            let text = self.store.yaml.get();
            if !armed.get_value() {
                return;
            }
            if self.own.get_untracked() {
                armed.set_value(false);
                return;
            }
            if self.draft.with_untracked(|d| *d == text) {
                return;
            }
            armed.set_value(false);
            self.draft.set(text);
            self.area.show();
        });
    }

    /// Listen to the page: another tab's different text is a choice for
    /// the user; leaving the page saves what a pending pause has not.
    pub(super) fn listen(self) {
        let storage = window_event_listener(leptos::ev::storage, move |ev| {
            if ev.key().as_deref() != Some(env::EDITOR_KEY) {
                return;
            }
            if let Stored::Text { yaml, .. } = env::decode_stored(ev.new_value().as_deref()) {
                if self.draft.with_untracked(|d| *d != yaml) {
                    self.conflict.set(Some(yaml));
                    self.saved.set(Saved::Held);
                } else {
                    self.conflict.set(None);
                }
            }
        });
        let leave = window_event_listener(leptos::ev::pagehide, move |_| {
            if self
                .timer
                .try_update_value(Option::take)
                .flatten()
                .is_some()
            {
                self.save_now();
            }
        });
        on_cleanup(move || {
            storage.remove();
            leave.remove();
        });
    }

    /// Take the other tab's text (keeping this one's aside).
    pub(super) fn use_theirs(self) {
        let Some(theirs) = self.conflict.get_untracked() else {
            return;
        };
        self.conflict.set(None);
        if self.own.get_untracked() && self.draft.with_untracked(|d| *d != theirs) {
            self.keep_aside(Some(self.draft.get_untracked()));
        }
        self.show(theirs, true);
    }

    /// Keep this tab's text (setting the other tab's aside).
    pub(super) fn keep_mine(self) {
        let Some(theirs) = self.conflict.get_untracked() else {
            return;
        };
        self.conflict.set(None);
        self.keep_aside(Some(theirs));
        self.save_now();
    }

    /// A file dropped on the editor.
    pub(super) fn drop_file(self, ev: leptos::ev::DragEvent) {
        ev.prevent_default();
        self.dragging.set(false);
        if let Some(f) = ev
            .data_transfer()
            .and_then(|d| d.files())
            .and_then(|f| f.get(0))
        {
            load_file(f, move |t| self.load_text(t), self.file_problem);
        }
    }

    /// A file picked with the file button.
    pub(super) fn pick_file(self, ev: leptos::ev::Event) {
        let input = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok());
        if let Some(input) = input {
            if let Some(f) = input.files().and_then(|f| f.get(0)) {
                load_file(f, move |t| self.load_text(t), self.file_problem);
            }
            // Picking the same file again must load it again.
            input.set_value("");
        }
    }

    /// Check now (a large text only here), with what is happening shown
    /// first; then apply, if asked.
    pub(super) fn check_then(self, apply: bool) {
        let size = self.draft.with_untracked(|d| d.len());
        let key = if apply {
            "editor.busy-apply"
        } else {
            "editor.busy-check"
        };
        self.busy.set(Some(
            tr(self.l.get_untracked(), key).replace("{size}", &size_text(size)),
        ));
        // Two frames: the message is painted before the work starts.
        request_animation_frame(move || {
            request_animation_frame(move || {
                if self.dirty.get_untracked() || self.checked.with_untracked(Option::is_none) {
                    self.checked.set(Some(self.draft.get_untracked()));
                    self.dirty.set(false);
                }
                if apply {
                    self.do_apply();
                }
                self.busy.set(None);
            })
        });
    }

    fn do_apply(self) {
        if !self.diags.errors.with_untracked(Vec::is_empty) {
            return;
        }
        let text = self.draft.get_untracked();
        match self.last_parse.try_update_value(Option::take).flatten() {
            Some((t, parsed)) if t == text => self.store.load_parsed(CUSTOM, &text, parsed),
            _ => self.store.load_custom(&text),
        }
        self.applied.set(true);
    }

    /// Apply: check first when the text is large or changed.
    pub(super) fn apply(self) {
        let large = self
            .draft
            .with_untracked(|d| !checked_while_typing(d.len()));
        if large || self.dirty.get_untracked() {
            self.check_then(true);
        } else {
            self.do_apply();
        }
    }

    /// The status line: busy, waiting, or the diagnostics' counts.
    pub(super) fn status(self) -> String {
        let lg = self.l.get();
        if let Some(b) = self.busy.get() {
            return b;
        }
        if self.dirty.get() {
            let size = self.draft.with(|d| d.len());
            return if !checked_while_typing(size) {
                tr(lg, "editor.pending-large").replace("{size}", &size_text(size))
            } else {
                tr(lg, "editor.pending").to_string()
            };
        }
        let n = self.diags.errors.with(Vec::len);
        let w = self.diags.warnings.with(Vec::len);
        let warned = if w > 0 {
            format!(" · ⚠ {w} {}", tr(lg, "editor.warnings"))
        } else {
            String::new()
        };
        if n > 0 {
            format!("✖ {n} {}", tr(lg, "editor.errors"))
        } else if self.applied.get() {
            format!("✔ {}{warned}", tr(lg, "editor.applied"))
        } else {
            format!("✔ {}{warned}", tr(lg, "editor.ok"))
        }
    }
}
