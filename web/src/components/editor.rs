//! The YAML editor: paste your own manifests, see kpv-core's diagnostics next
//! to their lines, apply when valid. The text is saved in local storage on
//! every change, and the diagram keeps the last valid scenario meanwhile.
//! A file can be dropped on the editor or opened with its button; the text it
//! replaces can be restored.

use super::{lang, t};
use crate::env;
use crate::i18n::tr;
use crate::state::Store;
use leptos::prelude::*;
use std::collections::BTreeSet;
use wasm_bindgen::JsCast;

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
            "{name}: {} ({:.1} MiB > {} MiB)",
            tr(l, "editor.file-too-large"),
            bytes / 1_048_576.0,
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

/// The gutter's line numbers as runs of text: (in error, "n\nn+1\n…").
pub fn gutter_runs(lines: usize, bad: &BTreeSet<usize>) -> Vec<(bool, String)> {
    let mut runs: Vec<(bool, String)> = Vec::new();
    for i in 1..=lines {
        let is_bad = bad.contains(&i);
        match runs.last_mut() {
            Some((b, text)) if *b == is_bad && !is_bad => {
                text.push_str(&i.to_string());
                text.push('\n');
            }
            _ => runs.push((is_bad, format!("{i}\n"))),
        }
    }
    runs
}

/// Read `file` and put its text in the editor (keeping the old text to restore).
fn load_file(
    file: web_sys::File,
    draft: RwSignal<String>,
    previous: RwSignal<Option<String>>,
    problem: RwSignal<Option<String>>,
) {
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
                previous.set(Some(draft.get_untracked()));
                problem.set(None);
                draft.set(text);
            }
            Err(p) => problem.set(Some(problem_text(l.get_untracked(), &name, &p))),
        }
    });
}

#[component]
pub fn Editor(draft: RwSignal<String>, storage_problem: bool) -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    let diags = Memo::new(move |_| draft.with(|d| kpv_core::model::parse(d).1));
    let errors = Memo::new(move |_| {
        diags.with(|ds| {
            ds.iter()
                .filter(|d| d.is_error())
                .cloned()
                .collect::<Vec<_>>()
        })
    });
    let error_lines = Memo::new(move |_| {
        errors.with(|es| kpv_core::order::set(es.iter().filter_map(|d| d.span.map(|s| s.line))))
    });
    let applied = RwSignal::new(false);
    // Every change is saved (an effect on the outside world, not on signals).
    // Saving can fail (storage full, disabled): say so rather than pretend.
    // The text shown at start is not saved: it is what storage holds, or a
    // preset, and a stored value this version cannot read (damaged, or from
    // a newer version) stays until the user writes something of their own.
    let unsaved = RwSignal::new(false);
    Effect::new(move |started: Option<()>| {
        let ok = draft.with(|d| started.is_none() || env::save_editor(d));
        if unsaved.get_untracked() == ok {
            unsaved.set(!ok);
        }
    });
    let gutter = NodeRef::<leptos::html::Pre>::new();
    let previous = RwSignal::new(None::<String>);
    let file_problem = RwSignal::new(None::<String>);
    let dragging = RwSignal::new(false);
    let on_drop = move |ev: leptos::ev::DragEvent| {
        ev.prevent_default();
        dragging.set(false);
        if let Some(f) = ev
            .data_transfer()
            .and_then(|d| d.files())
            .and_then(|f| f.get(0))
        {
            load_file(f, draft, previous, file_problem);
        }
    };
    let on_pick = move |ev: leptos::ev::Event| {
        let input = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok());
        if let Some(input) = input {
            if let Some(f) = input.files().and_then(|f| f.get(0)) {
                load_file(f, draft, previous, file_problem);
            }
            // Picking the same file again must load it again.
            input.set_value("");
        }
    };
    let apply = move |_| {
        if errors.with(Vec::is_empty) {
            let text = draft.get_untracked();
            store.load_custom(&text);
            applied.set(true);
        }
    };
    view! {
        <section class="panel editor-panel">
            <h2>{t("panel.editor")}</h2>
            <p class="small muted">{t("editor.hint")}</p>
            {storage_problem.then(|| view! { <p class="notice" data-testid="storage-notice">{t("editor.storage-bad")}</p> })}
            <div class="editor" class:dragging=move || dragging.get()
                on:dragover=move |ev: leptos::ev::DragEvent| { ev.prevent_default(); dragging.set(true); }
                on:dragleave=move |_| dragging.set(false)
                on:drop=on_drop>
                <pre class="gutter" aria-hidden="true" node_ref=gutter>
                    {move || {
                        // Plain text runs with a span only per line in error: a
                        // 50,000-line paste makes a handful of nodes, not 50,000.
                        let lines = draft.with(|d| d.lines().count().max(1));
                        gutter_runs(lines, &error_lines.get()).into_iter().map(|(bad, text)| {
                            if bad { view! { <span class="bad">{text}</span> }.into_any() } else { text.into_any() }
                        }).collect_view()
                    }}
                </pre>
                <textarea data-testid="yaml-editor" spellcheck="false" aria-label=t("panel.editor")
                    prop:value=move || draft.get()
                    on:input=move |ev| { applied.set(false); draft.set(event_target_value(&ev)); }
                    on:scroll=move |ev| {
                        let top = event_target::<web_sys::HtmlTextAreaElement>(&ev).scroll_top();
                        if let Some(g) = gutter.get() { g.set_scroll_top(top); }
                    }></textarea>
            </div>
            {move || file_problem.get().map(|p| view! { <p class="notice" role="alert" data-testid="file-error">{p}</p> })}
            <Show when=move || unsaved.get()>
                <p class="notice" data-testid="editor-unsaved">{t("editor.unsaved")}</p>
            </Show>
            <ul class="yaml-errors" aria-live="polite">
                {move || errors.get().into_iter().map(|d| {
                    let (line, col) = d.span.map(|s| (s.line, s.column)).unwrap_or((0, 0));
                    let text = format!(
                        "{} {line}, {} {col}: {}{}{}",
                        tr(l.get(), "editor.line"), tr(l.get(), "editor.column"),
                        d.object.as_ref().map(|o| format!("{o}: ")).unwrap_or_default(),
                        d.field.as_ref().map(|f| format!("{f}: ")).unwrap_or_default(),
                        d.message
                    );
                    let hint = d.hint.clone().unwrap_or_default();
                    view! { <li data-testid="yaml-error" data-line=line.to_string() data-column=col.to_string()>{text}<br/><span class="muted small">{hint}</span></li> }
                }).collect_view()}
            </ul>
            <div class="buttons">
                <button data-testid="yaml-apply" class="primary" on:click=apply
                    disabled=move || !errors.with(Vec::is_empty)>{t("btn.apply")}</button>
                <span class="small" data-testid="yaml-status">
                    {move || {
                        let n = errors.with(Vec::len);
                        if n > 0 { format!("✖ {n} {}", tr(l.get(), "editor.errors")) }
                        else if applied.get() { format!("✔ {}", tr(l.get(), "editor.applied")) }
                        else { format!("✔ {}", tr(l.get(), "editor.ok")) }
                    }}
                </span>
                <button data-testid="yaml-load-current" on:click=move |_| {
                    previous.set(Some(draft.get_untracked()));
                    draft.set(store.yaml.get_untracked());
                }>{t("btn.load-current")}</button>
                <label class="file-button">
                    <span>{t("btn.open-file")}</span>
                    <input data-testid="yaml-file" type="file" accept=".yaml,.yml,.json,text/yaml,application/yaml" on:change=on_pick />
                </label>
                <Show when=move || previous.with(Option::is_some)>
                    <button data-testid="yaml-restore" on:click=move |_| {
                        if let Some(p) = previous.get_untracked() {
                            previous.set(Some(draft.get_untracked()));
                            draft.set(p);
                        }
                    }>{t("btn.restore-text")}</button>
                </Show>
            </div>
        </section>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gutter_is_a_few_runs() {
        let bad: BTreeSet<usize> = [3, 4].into_iter().collect();
        assert_eq!(
            gutter_runs(6, &bad),
            vec![
                (false, "1\n2\n".to_string()),
                (true, "3\n".to_string()),
                (true, "4\n".to_string()),
                (false, "5\n6\n".to_string()),
            ]
        );
        assert_eq!(gutter_runs(50_000, &BTreeSet::new()).len(), 1);
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
