//! The YAML editor: paste your own manifests, see kpv-core's diagnostics
//! (errors and warnings) next to their lines, apply when valid.
//!
//! Typing stays quick at the size limits: the text is checked (parsed) and
//! saved only after a pause in typing, and a large text only when asked
//! (Check / Apply), with what is happening shown first. The textarea is
//! written only when the app loads a text, never back on each keystroke;
//! it and its gutter are [`super::textarea`], which edits a large text
//! through a window.
//!
//! The user's own text is never lost: a text the app loads (the current
//! scenario, a file) sets the user's last own text aside (kept in storage
//! too), and Restore brings it back — the button says what it is. Another
//! tab saving a different text is noticed (`storage` events) and the user
//! chooses; until then this tab saves nothing. A stored value this version
//! cannot read is kept until the user has had the chance to download it.
use super::textarea::{Area, AreaView};
use super::{lang, t};
use crate::env::{self, SaveError, Stored};
use crate::i18n::{tr, Lang};
use crate::state::{Store, CUSTOM};
use kpv_core::util::diag::Diagnostic;
use leptos::prelude::*;
use std::time::Duration;
use wasm_bindgen::JsCast;

/// Texts larger than this are checked only when asked (Check, Apply):
/// parsing them takes longer than a pause between keystrokes.
pub const LARGE_TEXT: usize = 256 * 1024;
/// Errors (and warnings) listed; the rest are counted.
pub const MAX_LISTED: usize = 100;
/// The pause in typing after which the text is checked and saved.
pub const CHECK_AFTER_MS: u64 = 300;

/// Is a text of `len` bytes checked after a pause in typing? Small ones
/// are; so is one over the reader's limit (refused at once, unparsed).
pub fn checked_while_typing(len: usize) -> bool {
    len <= LARGE_TEXT || len > max_file_bytes()
}

/// A text's size for people: "812 KB", "2.0 MB".
pub fn size_text(bytes: usize) -> String {
    if bytes >= 1_048_576 {
        format!("{} MB", super::one_decimal(bytes as f64 / 1_048_576.0))
    } else {
        format!("{} KB", bytes.div_ceil(1024))
    }
}

/// What Restore brings back, in `l`: the text's length and first line.
pub fn restore_what(l: Lang, text: &str) -> String {
    // The first line that says something: not a comment, else any.
    let mut lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && *l != "---");
    let first: String = lines
        .clone()
        .find(|l| !l.starts_with('#'))
        .or_else(|| lines.next())
        .unwrap_or("")
        .chars()
        .take(40)
        .collect();
    tr(l, "editor.restore-what")
        .replace("{n}", &text.lines().count().to_string())
        .replace("{first}", &first)
}

/// Where a diagnostic is, when it has a place ("line 3, column 7: ").
fn located(l: Lang, d: &Diagnostic) -> String {
    // No position is printed when there is none (never "line 0, column 0").
    let place = d
        .position()
        .map(|s| {
            format!(
                "{} {}, {} {}: ",
                tr(l, "editor.line"),
                s.line,
                tr(l, "editor.column"),
                s.column
            )
        })
        .unwrap_or_default();
    format!(
        "{place}{}{}{}",
        d.object
            .as_ref()
            .map(|o| format!("{o}: "))
            .unwrap_or_default(),
        d.field
            .as_ref()
            .map(|f| format!("{f}: "))
            .unwrap_or_default(),
        d.message
    )
}

/// Whether the last save worked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Saved {
    Yes,
    /// Not saved on purpose: the user has a choice to make first.
    Held,
    Failed(SaveError),
}

/// Why a file could not be loaded into the editor.
#[derive(Clone, Debug, PartialEq)]
pub enum FileProblem {
    TooLarge { bytes: f64 },
    NotUtf8 { at: usize },
    Unreadable,
}

/// Largest file accepted (the YAML reader's own limit).
pub fn max_file_bytes() -> usize {
    kpv_core::yaml::Limits::default().max_bytes
}

/// A file's bytes as editor text: UTF-8 (a byte-order mark is dropped).
pub fn decode_file(bytes: &[u8]) -> Result<String, FileProblem> {
    if bytes.len() > max_file_bytes() {
        return Err(FileProblem::TooLarge {
            bytes: bytes.len() as f64,
        });
    }
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    std::str::from_utf8(bytes)
        .map(str::to_string)
        .map_err(|e| FileProblem::NotUtf8 {
            at: e.valid_up_to(),
        })
}

/// The message for a file problem, in the UI language.
fn problem_text(l: crate::i18n::Lang, name: &str, p: &FileProblem) -> String {
    match p {
        FileProblem::TooLarge { bytes } => format!(
            "{name}: {} ({} MiB > {} MiB)",
            tr(l, "editor.file-too-large"),
            super::one_decimal(bytes / 1_048_576.0),
            max_file_bytes() / 1_048_576
        ),
        FileProblem::NotUtf8 { at } => {
            format!(
                "{name}: {} ({} {at})",
                tr(l, "editor.file-not-utf8"),
                tr(l, "editor.byte")
            )
        }
        FileProblem::Unreadable => format!("{name}: {}", tr(l, "editor.file-unreadable")),
    }
}

/// Read `file` and hand its text to `load` (which keeps the user's text).
fn load_file(file: web_sys::File, load: Callback<String>, problem: RwSignal<Option<String>>) {
    let l = super::lang();
    let name = file.name();
    let size = file.size();
    if size > max_file_bytes() as f64 {
        problem.set(Some(problem_text(
            l.get_untracked(),
            &name,
            &FileProblem::TooLarge { bytes: size },
        )));
        return;
    }
    leptos::task::spawn_local(async move {
        let bytes = wasm_bindgen_futures::JsFuture::from(file.array_buffer())
            .await
            .map(|buf| js_sys::Uint8Array::new(&buf).to_vec())
            .map_err(|_| FileProblem::Unreadable);
        match bytes.and_then(|b| decode_file(&b)) {
            Ok(text) => {
                problem.set(None);
                load.run(text);
            }
            Err(p) => problem.set(Some(problem_text(l.get_untracked(), &name, &p))),
        }
    });
}

/// The parse of the checked text, kept so Apply does not parse it again.
type LastParse = StoredValue<Option<(String, crate::state::Parsed)>, LocalStorage>;

/// What the checked text's diagnostics are, as the editor shows them.
struct Checked {
    errors: Memo<Vec<Diagnostic>>,
    warnings: Memo<Vec<Diagnostic>>,
    /// The lines that have an error, a warning (marked in the gutter).
    error_lines: Memo<std::collections::BTreeSet<usize>>,
    warning_lines: Memo<std::collections::BTreeSet<usize>>,
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

#[component]
pub fn Editor(
    draft: RwSignal<String>,
    stored: Stored,
    /// The address asked for a preset that is fetched after start-up: the
    /// editor shows its text when it arrives, unless the user typed first.
    follow_first_load: bool,
) -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    // Is the editor's text the user's own (typed), or one the app loaded?
    let own = RwSignal::new(match &stored {
        Stored::Text { own, .. } => *own,
        _ => false,
    });
    // The user's last own text while the editor shows a loaded one.
    let kept = RwSignal::new(env::load_own());
    // A stored value this version cannot read: kept until the user decides.
    let unreadable = RwSignal::new(match &stored {
        Stored::Unreadable { reason, raw } => Some((reason.clone(), raw.clone())),
        _ => None,
    });
    // Another tab's text, saved while this one was open: the user chooses.
    let conflict = RwSignal::new(None::<String>);
    let saved = RwSignal::new(if stored == Stored::Unavailable {
        Saved::Failed(SaveError::Unavailable)
    } else {
        Saved::Yes
    });
    // The text last checked (parsed): what the diagnostics are about. A
    // large text is not checked at start; it waits for Check or Apply.
    let checked =
        RwSignal::new(draft.with_untracked(|d| checked_while_typing(d.len()).then(|| d.clone())));
    let dirty = RwSignal::new(checked.with_untracked(Option::is_none));
    let busy = RwSignal::new(None::<String>);
    let applied = RwSignal::new(false);
    let file_problem = RwSignal::new(None::<String>);
    let dragging = RwSignal::new(false);
    let area = Area::new(draft);
    let last_parse: LastParse = StoredValue::new_local(None);
    let Checked {
        errors,
        warnings,
        error_lines,
        warning_lines,
    } = Checked::of(store, checked, last_parse);

    let save_now = move || {
        if unreadable.with_untracked(Option::is_some) || conflict.with_untracked(Option::is_some) {
            saved.set(Saved::Held);
            return;
        }
        let result = draft.with_untracked(|d| env::save_editor(d, own.get_untracked()));
        saved.set(match result {
            Ok(()) => Saved::Yes,
            Err(e) => Saved::Failed(e),
        });
    };
    let keep_aside = move |text: Option<String>| {
        let _ = env::save_own(text.as_deref());
        kept.set(text);
    };
    // Check and save after a pause in typing.
    let timer = StoredValue::new_local(None::<TimeoutHandle>);
    let after_pause = move || {
        if let Some(h) = timer.try_update_value(Option::take).flatten() {
            h.clear();
        }
        let h = set_timeout_with_handle(
            move || {
                save_now();
                if draft.with_untracked(|d| checked_while_typing(d.len())) {
                    checked.set(Some(draft.get_untracked()));
                    dirty.set(false);
                }
            },
            Duration::from_millis(CHECK_AFTER_MS),
        );
        timer.set_value(h.ok());
    };
    // Put a text the app loaded in the editor: the user's own text is set
    // aside first (a loaded text replacing a loaded text keeps the aside one).
    let load_text = move |text: String| {
        if own.get_untracked() && draft.with_untracked(|d| *d != text && !d.trim().is_empty()) {
            keep_aside(Some(draft.get_untracked()));
        }
        draft.set(text);
        area.show();
        own.set(false);
        applied.set(false);
        dirty.set(true);
        after_pause();
        save_now();
    };
    let load = Callback::new(load_text);
    let restore = move |_| {
        let Some(text) = kept.get_untracked() else {
            return;
        };
        // Swapping two own texts keeps the other aside; a loaded one can be loaded again.
        keep_aside(own.get_untracked().then(|| draft.get_untracked()));
        draft.set(text);
        area.show();
        own.set(true);
        dirty.set(true);
        after_pause();
        save_now();
    };
    // A preset the address asked for arrives after start-up: the editor
    // takes its text once, as it would have if it had been there at start.
    let armed = StoredValue::new(follow_first_load);
    Effect::new(move |_| {
        let text = store.yaml.get();
        if !armed.get_value() {
            return;
        }
        if own.get_untracked() {
            armed.set_value(false);
            return;
        }
        if draft.with_untracked(|d| *d == text) {
            return;
        }
        armed.set_value(false);
        draft.set(text);
        area.show();
    });
    // Other tabs: a different text saved there is a choice for the user.
    let storage_listener = window_event_listener(leptos::ev::storage, move |ev| {
        if ev.key().as_deref() != Some(env::EDITOR_KEY) {
            return;
        }
        if let Stored::Text { yaml, .. } = env::decode_stored(ev.new_value().as_deref()) {
            if draft.with_untracked(|d| *d != yaml) {
                conflict.set(Some(yaml));
                saved.set(Saved::Held);
            } else {
                conflict.set(None);
            }
        }
    });
    // Leaving the page saves what a pending pause has not saved yet.
    let leave_listener = window_event_listener(leptos::ev::pagehide, move |_| {
        if timer.try_update_value(Option::take).flatten().is_some() {
            save_now();
        }
    });
    on_cleanup(move || {
        storage_listener.remove();
        leave_listener.remove();
    });
    let use_theirs = move |_| {
        let Some(theirs) = conflict.get_untracked() else {
            return;
        };
        conflict.set(None);
        if own.get_untracked() && draft.with_untracked(|d| *d != theirs) {
            keep_aside(Some(draft.get_untracked()));
        }
        draft.set(theirs);
        area.show();
        own.set(true);
        dirty.set(true);
        after_pause();
        save_now();
    };
    let keep_mine = move |_| {
        let Some(theirs) = conflict.get_untracked() else {
            return;
        };
        conflict.set(None);
        keep_aside(Some(theirs));
        save_now();
    };
    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        if let Some(f) = ev
            .data_transfer()
            .and_then(|d| d.files())
            .and_then(|f| f.get(0))
        {
            load_file(f, load, file_problem);
        }
    };
    let on_pick = move |ev: leptos::ev::Event| {
        let input = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok());
        if let Some(input) = input {
            if let Some(f) = input.files().and_then(|f| f.get(0)) {
                load_file(f, load, file_problem);
            }
            // Picking the same file again must load it again.
            input.set_value("");
        }
    };
    // Check now (a large text only here), with what is happening shown first.
    let check_then = move |then: Option<Box<dyn FnOnce()>>| {
        let size = draft.with_untracked(|d| d.len());
        let key = if then.is_some() {
            "editor.busy-apply"
        } else {
            "editor.busy-check"
        };
        busy.set(Some(
            tr(l.get_untracked(), key).replace("{size}", &size_text(size)),
        ));
        // Two frames: the message is painted before the work starts.
        request_animation_frame(move || {
            request_animation_frame(move || {
                if dirty.get_untracked() || checked.with_untracked(Option::is_none) {
                    checked.set(Some(draft.get_untracked()));
                    dirty.set(false);
                }
                if let Some(f) = then {
                    f();
                }
                busy.set(None);
            })
        });
    };
    let do_apply = move || {
        if !errors.with_untracked(Vec::is_empty) {
            return;
        }
        let text = draft.get_untracked();
        match last_parse.try_update_value(Option::take).flatten() {
            Some((t, parsed)) if t == text => store.load_parsed(CUSTOM, &text, parsed),
            _ => store.load_custom(&text),
        }
        applied.set(true);
    };
    let apply = move |_| {
        let large = draft.with_untracked(|d| !checked_while_typing(d.len()));
        if large || dirty.get_untracked() {
            check_then(Some(Box::new(do_apply)));
        } else {
            do_apply();
        }
    };
    let status = move || {
        let lg = l.get();
        if let Some(b) = busy.get() {
            return b;
        }
        if dirty.get() {
            let size = draft.with(|d| d.len());
            return if !checked_while_typing(size) {
                tr(lg, "editor.pending-large").replace("{size}", &size_text(size))
            } else {
                tr(lg, "editor.pending").to_string()
            };
        }
        let n = errors.with(Vec::len);
        let w = warnings.with(Vec::len);
        let warned = if w > 0 {
            format!(" · ⚠ {w} {}", tr(lg, "editor.warnings"))
        } else {
            String::new()
        };
        if n > 0 {
            format!("✖ {n} {}", tr(lg, "editor.errors"))
        } else if applied.get() {
            format!("✔ {}{warned}", tr(lg, "editor.applied"))
        } else {
            format!("✔ {}{warned}", tr(lg, "editor.ok"))
        }
    };
    view! {
        <section class="panel editor-panel">
            <h2>{t("panel.editor")}</h2>
            <p class="small muted">{t("editor.hint")}</p>
            {move || unreadable.get().map(|(reason, raw)| {
                let raw2 = raw.clone();
                view! {
                    <div class="notice" role="alert" data-testid="storage-notice">
                        <p>{move || tr(l.get(), "editor.stored-bad").replace("{reason}", &reason)}</p>
                        <button data-testid="stored-download" on:click=move |_| {
                            crate::download::text("kpv-editor-saved.txt", "text/plain", &raw2);
                        }>{t("editor.stored-download")}</button>
                        <button data-testid="stored-replace" on:click=move |_| {
                            unreadable.set(None);
                            save_now();
                        }>{t("editor.stored-replace")}</button>
                        <span class="small muted">{format!(" ({})", size_text(raw.len()))}</span>
                    </div>
                }
            })}
            {move || conflict.get().map(|theirs| view! {
                <div class="notice" role="alert" data-testid="editor-conflict">
                    <p>{move || tr(l.get(), "editor.conflict").replace("{n}", &theirs.lines().count().to_string())}</p>
                    <button data-testid="conflict-theirs" on:click=use_theirs>{t("editor.conflict.theirs")}</button>
                    <button data-testid="conflict-mine" on:click=keep_mine>{t("editor.conflict.mine")}</button>
                </div>
            })}
            <div class="editor" class:dragging=move || dragging.get()
                on:dragover=move |ev: leptos::ev::DragEvent| { ev.prevent_default(); dragging.set(true); }
                on:dragleave=move |_| dragging.set(false)
                on:drop=on_drop>
                <AreaView area errors=error_lines warnings=warning_lines on_edit=Callback::new(move |()| {
                    applied.set(false);
                    own.set(true);
                    dirty.set(true);
                    after_pause();
                }) />
            </div>
            {move || file_problem.get().map(|p| view! { <p class="notice" role="alert" data-testid="file-error">{p}</p> })}
            {move || match saved.get() {
                Saved::Yes => None,
                Saved::Held => Some(view! { <p class="notice" data-testid="editor-held">{t("editor.held")}</p> }.into_any()),
                Saved::Failed(SaveError::Full) => Some(view! { <p class="notice" data-testid="editor-unsaved">{t("editor.unsaved")}</p> }.into_any()),
                Saved::Failed(SaveError::Unavailable) => Some(view! { <p class="notice" data-testid="editor-storage-off">{t("editor.storage-off")}</p> }.into_any()),
            }}
            <ul class="yaml-errors" aria-live="polite">
                {move || errors.get().into_iter().take(MAX_LISTED).map(|d| {
                    let (line, col) = d.position().map(|s| (s.line, s.column)).unwrap_or((0, 0));
                    let text = located(l.get(), &d);
                    let hint = d.hint.clone().unwrap_or_default();
                    view! { <li data-testid="yaml-error" data-line=line.to_string() data-column=col.to_string() class:jumps={line > 0} on:click=move |_| { if line > 0 { area.jump(line) } }>{text}<br/><span class="muted small">{hint}</span></li> }
                }).collect_view()}
                {move || warnings.get().into_iter().take(MAX_LISTED).map(|d| {
                    let line = d.position().map(|s| s.line).unwrap_or(0);
                    let text = format!("⚠ {}", located(l.get(), &d));
                    let hint = d.hint.clone().unwrap_or_default();
                    view! { <li class="warning" data-testid="yaml-warning" data-line=line.to_string() class:jumps={line > 0} on:click=move |_| { if line > 0 { area.jump(line) } }>{text}<br/><span class="muted small">{hint}</span></li> }
                }).collect_view()}
                {move || {
                    // A long list is shown short: the first of each, and how many more.
                    let more = errors.with(Vec::len).saturating_sub(MAX_LISTED) + warnings.with(Vec::len).saturating_sub(MAX_LISTED);
                    (more > 0).then(|| view! { <li class="muted" data-testid="yaml-more">{move || tr(l.get(), "editor.more").replace("{n}", &more.to_string())}</li> })
                }}
            </ul>
            <div class="buttons">
                <button data-testid="yaml-apply" class="primary" on:click=apply
                    disabled=move || busy.with(Option::is_some) || (!dirty.get() && !errors.with(Vec::is_empty))>{t("btn.apply")}</button>
                <Show when=move || dirty.get() && draft.with(|d| !checked_while_typing(d.len()))>
                    <button data-testid="yaml-check" on:click=move |_| check_then(None)>{t("btn.check")}</button>
                </Show>
                <span class="small" data-testid="yaml-status" role="status">{status}</span>
                <button data-testid="yaml-load-current" on:click=move |_| load_text(store.yaml.get_untracked())>{t("btn.load-current")}</button>
                <label class="file-button">
                    <span>{t("btn.open-file")}</span>
                    <input data-testid="yaml-file" type="file" accept=".yaml,.yml,.json,text/yaml,application/yaml" on:change=on_pick />
                </label>
                <Show when=move || kept.with(Option::is_some)>
                    <button data-testid="yaml-restore" on:click=restore>{t("btn.restore-text")}</button>
                    <span class="small muted" data-testid="restore-what">
                        {move || kept.with(|k| k.as_deref().map(|k| restore_what(l.get(), k)).unwrap_or_default())}
                    </span>
                </Show>
            </div>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restore_says_what_it_brings_back() {
        let text = "# my notes\n---\napiVersion: v1\nkind: Service\n";
        assert_eq!(
            restore_what(Lang::En, text),
            "Restore brings back the text you wrote yourself (4 lines, starting “apiVersion: v1”); \
             a text the app loaded (the current scenario, a file) can be loaded again."
        );
        assert!(restore_what(Lang::Ko, text).contains("apiVersion: v1"));
        assert!(restore_what(Lang::En, "\n# only a note\n")
            .contains("(2 lines, starting “# only a note”)"));
        assert_eq!(size_text(2 * 1_048_576), "2.0 MB");
        assert_eq!(size_text(1500), "2 KB");
    }

    #[test]
    fn files_must_be_utf8_and_within_the_limit() {
        assert_eq!(
            decode_file(b"kind: Service\n"),
            Ok("kind: Service\n".into())
        );
        assert_eq!(decode_file(b"\xEF\xBB\xBFa: 1"), Ok("a: 1".into()));
        assert_eq!(
            decode_file(b"name: caf\xE9"),
            Err(FileProblem::NotUtf8 { at: 9 })
        );
        let big = vec![b'#'; max_file_bytes() + 1];
        assert!(matches!(
            decode_file(&big),
            Err(FileProblem::TooLarge { .. })
        ));
    }
}
