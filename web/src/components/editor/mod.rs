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
//!
//! [`model`] holds the editor's state and actions, [`file`] reads files;
//! this module is the markup.
mod file;
mod model;

use super::t;
use super::textarea::AreaView;
use crate::env::{SaveError, Stored};
use crate::i18n::{tr, Lang};
use crate::state::Store;
use file::max_file_bytes;
pub use file::{decode_file, FileProblem};
use kpv_core::util::diag::Diagnostic;
use leptos::prelude::*;
use model::{EditorModel, Saved};

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

#[component]
pub fn Editor(
    draft: RwSignal<String>,
    stored: Stored,
    /// The address asked for a preset that is fetched after start-up: the
    /// editor shows its text when it arrives, unless the user typed first.
    follow_first_load: bool,
) -> impl IntoView {
    let m = EditorModel::new(expect_context::<Store>(), draft, &stored);
    m.follow_first_load(follow_first_load);
    m.listen();
    let (error_lines, warning_lines) = (m.diags.error_lines, m.diags.warning_lines);
    view! {
        <section class="panel editor-panel">
            <h2>{t("panel.editor")}</h2>
            <p class="small muted">{t("editor.hint")}</p>
            <Notices m />
            <div class="editor" class:dragging=move || m.dragging.get()
                on:dragover=move |ev: leptos::ev::DragEvent| { ev.prevent_default(); m.dragging.set(true); }
                on:dragleave=move |_| m.dragging.set(false)
                on:drop=move |ev| m.drop_file(ev)>
                <AreaView area=m.area errors=error_lines warnings=warning_lines on_edit=Callback::new(move |()| m.edited()) />
            </div>
            {move || m.file_problem.get().map(|p| view! { <p class="notice" role="alert" data-testid="file-error">{p}</p> })}
            {move || match m.saved.get() {
                Saved::Yes => None,
                Saved::Held => Some(view! { <p class="notice" data-testid="editor-held">{t("editor.held")}</p> }.into_any()),
                Saved::Failed(SaveError::Full) => Some(view! { <p class="notice" data-testid="editor-unsaved">{t("editor.unsaved")}</p> }.into_any()),
                Saved::Failed(SaveError::Unavailable) => Some(view! { <p class="notice" data-testid="editor-storage-off">{t("editor.storage-off")}</p> }.into_any()),
            }}
            <Diagnostics m />
            <Buttons m />
        </section>
    }
}

/// A stored text this version cannot read, and another tab's text: each a
/// choice for the user.
#[component]
fn Notices(m: EditorModel) -> impl IntoView {
    let l = m.l;
    view! {
        {move || m.unreadable.get().map(|(reason, raw)| {
            let raw2 = raw.clone();
            view! {
                <div class="notice" role="alert" data-testid="storage-notice">
                    <p>{move || tr(l.get(), "editor.stored-bad").replace("{reason}", &reason)}</p>
                    <button data-testid="stored-download" on:click=move |_| {
                        crate::download::text("kpv-editor-saved.txt", "text/plain", &raw2);
                    }>{t("editor.stored-download")}</button>
                    <button data-testid="stored-replace" on:click=move |_| {
                        m.unreadable.set(None);
                        m.save_now();
                    }>{t("editor.stored-replace")}</button>
                    <span class="small muted">{format!(" ({})", size_text(raw.len()))}</span>
                </div>
            }
        })}
        {move || m.conflict.get().map(|theirs| view! {
            <div class="notice" role="alert" data-testid="editor-conflict">
                <p>{move || tr(l.get(), "editor.conflict").replace("{n}", &theirs.lines().count().to_string())}</p>
                <button data-testid="conflict-theirs" on:click=move |_| m.use_theirs()>{t("editor.conflict.theirs")}</button>
                <button data-testid="conflict-mine" on:click=move |_| m.keep_mine()>{t("editor.conflict.mine")}</button>
            </div>
        })}
    }
}

/// The checked text's errors and warnings, each jumping to its line.
#[component]
fn Diagnostics(m: EditorModel) -> impl IntoView {
    let (l, area) = (m.l, m.area);
    let (errors, warnings) = (m.diags.errors, m.diags.warnings);
    view! {
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
    }
}

/// Apply, Check, the status, loading a text and restoring the one set aside.
#[component]
fn Buttons(m: EditorModel) -> impl IntoView {
    let (l, draft, dirty) = (m.l, m.draft, m.dirty);
    view! {
        <div class="buttons">
            <button data-testid="yaml-apply" class="primary" on:click=move |_| m.apply()
                disabled=move || m.busy.with(Option::is_some) || (!dirty.get() && !m.diags.errors.with(Vec::is_empty))>{t("btn.apply")}</button>
            <Show when=move || dirty.get() && draft.with(|d| !checked_while_typing(d.len()))>
                <button data-testid="yaml-check" on:click=move |_| m.check_then(false)>{t("btn.check")}</button>
            </Show>
            <span class="small" data-testid="yaml-status" role="status">{move || m.status()}</span>
            <button data-testid="yaml-load-current" on:click=move |_| m.load_text(m.store.yaml.get_untracked())>{t("btn.load-current")}</button>
            <label class="file-button">
                <span>{t("btn.open-file")}</span>
                <input data-testid="yaml-file" type="file" accept=".yaml,.yml,.json,text/yaml,application/yaml" on:change=move |ev| m.pick_file(ev) />
            </label>
            <Show when=move || m.kept.with(Option::is_some)>
                <button data-testid="yaml-restore" on:click=move |_| m.restore()>{t("btn.restore-text")}</button>
                <span class="small muted" data-testid="restore-what">
                    {move || m.kept.with(|k| k.as_deref().map(|k| restore_what(l.get(), k)).unwrap_or_default())}
                </span>
            </Show>
        </div>
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
