//! The full app's exports: the downloads (scenario, rules, transcript,
//! diagram pictures), the share link and the embed snippet, with their
//! words (the embed build has none of these).

use super::{lang, t};
use crate::i18n::tr;
use crate::state::Store;
use kpv_core::session::share::ShareError;
use leptos::prelude::*;

/// Downloads (scenario, rules, transcript, diagram pictures), the share link
/// and the embed snippet.
#[component]
pub fn Exports(theme: RwSignal<&'static str>) -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    let share_url = RwSignal::new(None::<String>);
    let embed_code = RwSignal::new(None::<String>);
    let status = RwSignal::new(None::<&'static str>);
    view! {
        <div class="buttons exports">
            <button data-testid="share-link" class="primary" on:click=move |_| {
                // Only a link the app can open is offered; else what does not fit.
                // In a lesson, the link opens the lesson at its page.
                let lesson = use_context::<crate::lesson_model::LessonModel>().and_then(|m| m.at());
                let link = match lesson {
                    Some((id, page)) => Ok(crate::share::lesson_link(id, page, l.get_untracked())),
                    None => crate::share::link(&store, l.get_untracked()).map_err(|e| misfit_key(&e)),
                };
                embed_code.set(None);
                if let Ok(url) = &link {
                    crate::share::copy(url);
                }
                status.set(Some(link.as_ref().map_or_else(|k| *k, |_| "share.copied")));
                share_url.set(link.ok());
            }>{t("btn.share")}</button>
            <button data-testid="embed-snippet" on:click=move |_| {
                let code = crate::share::embed_snippet(&store, l.get_untracked(), theme.get_untracked()).map_err(|e| misfit_key(&e));
                if let Ok(c) = &code {
                    crate::share::copy(c);
                }
                share_url.set(None);
                status.set(Some(code.as_ref().map_or_else(|k| *k, |_| "embed.copied")));
                embed_code.set(code.ok());
            }>{t("btn.embed")}</button>
            <button data-testid="export-svg" on:click=move |_| {
                status.set((!crate::export::svg()).then_some("export.failed"));
            }>{t("btn.export-svg")}</button>
            <button data-testid="export-png" on:click=move |_| {
                status.set(None);
                crate::export::png(move |ok| status.set((!ok).then_some("export.png-failed")));
            }>{t("btn.export-png")}</button>
            <button data-testid="export-yaml" on:click=move |_| {
                crate::download::text("scenario.yaml", "application/yaml", &store.yaml.get_untracked());
            }>{t("btn.export-yaml")}</button>
            <button data-testid="export-rules" on:click=move |_| {
                let text = store.rules.with_untracked(|r| r.as_ref().map(|r| (r.node.clone(), r.text.clone())));
                if let Some((node, text)) = text {
                    crate::download::text(&format!("{node}-{}-rules.txt", store.mode.get_untracked().as_str()), "text/plain", &text);
                }
            }>{t("btn.export-rules")}</button>
            <button data-testid="export-transcript" on:click=move |_| {
                if let Some(tr) = store.focused_trace() {
                    crate::download::text("trace.txt", "text/plain", &kpv_core::net::trace::render_text(&tr));
                }
            }>{t("btn.export-transcript")}</button>
        </div>
        <Show when=move || status.get().is_some() || share_url.with(Option::is_some) || embed_code.with(Option::is_some)>
            <div class="panel share-panel">
                {move || status.get().map(|k| view! { <p class="small" data-testid="share-status" role="status">{move || tr(l.get(), k)}</p> })}
                {move || share_url.get().map(|u| view! {
                    <label>
                        <span>{t("share.url")}</span>
                        <input data-testid="share-url" type="text" readonly=true prop:value=u
                            on:focus=move |ev| { event_target::<web_sys::HtmlInputElement>(&ev).select(); } />
                    </label>
                })}
                {move || embed_code.get().map(|c| view! {
                    <label>
                        <span>{t("embed.code")}</span>
                        <textarea data-testid="embed-code" readonly=true rows="4" prop:value=c
                            on:focus=move |ev| { event_target::<web_sys::HtmlTextAreaElement>(&ev).select(); }></textarea>
                    </label>
                })}
            </div>
        </Show>
    }
}

/// The translation key saying why a state does not fit in a link (and
/// what to do instead).
pub fn misfit_key(e: &ShareError) -> &'static str {
    match e {
        ShareError::OutOfRange {
            field: "scenario", ..
        } => "share.no-fit.scenario",
        ShareError::OutOfRange {
            field: "list of packets" | "list of app changes",
            ..
        } => "share.no-fit.packets",
        ShareError::TooLong { .. } | ShareError::TooLarge => "share.no-fit.size",
        _ => "share.no-fit.other",
    }
}
