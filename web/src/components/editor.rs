//! The YAML editor: paste your own manifests, see kpv-core's diagnostics next
//! to their lines, apply when valid. The text is saved in local storage on
//! every change, and the diagram keeps the last valid scenario meanwhile.

use super::{lang, t};
use crate::env;
use crate::i18n::tr;
use crate::state::Store;
use leptos::prelude::*;
use std::collections::BTreeSet;

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
        errors.with(|es| {
            es.iter()
                .filter_map(|d| d.span.map(|s| s.line))
                .collect::<BTreeSet<usize>>()
        })
    });
    let applied = RwSignal::new(false);
    // Every change is saved (an effect on the outside world, not on signals).
    Effect::new(move |_| {
        draft.with(|d| env::save_editor(d));
    });
    let gutter = NodeRef::<leptos::html::Pre>::new();
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
            <div class="editor">
                <pre class="gutter" aria-hidden="true" node_ref=gutter>
                    {move || {
                        let lines = draft.with(|d| d.lines().count().max(1));
                        let bad = error_lines.get();
                        (1..=lines).map(|i| view! { <span class:bad=bad.contains(&i)>{format!("{i}\n")}</span> }).collect_view()
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
                <button data-testid="yaml-load-current" on:click=move |_| draft.set(store.yaml.get_untracked())>{t("btn.load-current")}</button>
            </div>
        </section>
    }
}
