//! What a view shows while the code of a mode it needs is on its way, or
//! when it did not come: the words, in the reader's language, and a Retry.
//! Never a result computed without the mode's code.
//!
//! Markup only: which modes are here and the fetching are `crate::modes`'.

use super::{lang, t};
use crate::i18n::{tr, Lang};
use crate::load::Fetch;
use crate::state::Store;
use kpv_core::model::Mode;
use leptos::prelude::*;

/// A mode's name in running text.
pub fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Iptables => "iptables",
        Mode::Ipvs => "IPVS",
        Mode::Nftables => "nftables",
        Mode::Userspace => "userspace",
        Mode::Cilium => "Cilium",
    }
}

/// "Loading the IPVS mode…", or that it did not load (what else stays
/// unless `short`: the caption and the diagram's heading have one line).
pub fn wait_text(l: Lang, mode: Mode, load: Fetch, short: bool) -> String {
    let key = match (load == Fetch::Failed, short) {
        (false, _) => "mode.loading",
        (true, false) => "mode.failed",
        (true, true) => "mode.failed.short",
    };
    tr(l, key).replace("{mode}", mode_name(mode))
}

/// The status of the first of `modes` not ready: `{id}-loading` while it
/// comes, `{id}-error` with `{id}-retry` when it failed; nothing once all
/// are here.
#[component]
pub fn ModeWait(#[prop(into)] modes: Signal<Vec<Mode>>, id: &'static str) -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    let waiting = Memo::new(move |_| modes.with(|ms| store.loads.with(|l| l.waiting(ms))));
    move || {
        let (mode, load) = waiting.get()?;
        let text = move || wait_text(l.get(), mode, load, false);
        Some(if load == Fetch::Failed {
            let retry = move |_| crate::mode_fetch::request(store, &modes.get_untracked());
            view! {
                <div class="errors mode-wait" role="alert" data-testid=format!("{id}-error") data-mode=mode.as_str()>
                    <p>{text}</p>
                    <button type="button" data-testid=format!("{id}-retry") on:click=retry>{t("data.retry")}</button>
                </div>
            }
            .into_any()
        } else {
            view! {
                <p class="data-loading mode-wait small muted" role="status" data-testid=format!("{id}-loading") data-mode=mode.as_str()>
                    <span class="spinner" aria-hidden="true"></span>
                    {text}
                </p>
            }
            .into_any()
        })
    }
}
