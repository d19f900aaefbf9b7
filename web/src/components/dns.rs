//! The DNS tab (full app): a name looked up as the chosen Pod's resolver
//! looks it up — its `/etc/resolv.conf`, each query of its search and
//! cluster DNS's answer as CoreDNS gives it — the way seed 002 asks from
//! kuard's DNS page inside a Pod. The answers are dig's text, the same in
//! both languages (like rule text); the labels are translated.

use super::t;
use crate::state::Store;
use kpv_core::net::dns::{self, render, resolver, zone::Qtype};
use kpv_core::net::trace::OriginKey;
use kpv_core::session::replay::TargetKind;
use leptos::prelude::*;

/// The tab's label.
pub fn tab_label() -> impl Fn() -> &'static str + Copy {
    t("dns.tab")
}

/// The longest name DNS carries.
const MAX_NAME: usize = 253;

#[component]
pub fn DnsPanel() -> impl IntoView {
    let store = expect_context::<Store>();
    // What the learner typed; `None` follows the chosen target's Service.
    let typed = RwSignal::new(None::<String>);
    let qtype = RwSignal::new(Qtype::A);
    let suggested = Memo::new(move |_| {
        let key = store.target.get();
        store.targets.with(|ts| {
            ts.iter()
                .find(|t| t.key == key)
                .or_else(|| ts.iter().find(|t| t.kind == TargetKind::DnsName))
                .map(|t| format!("{}.{}", t.service.name, t.service.namespace))
                .unwrap_or_default()
        })
    });
    let name = move || typed.get().unwrap_or_else(|| suggested.get());
    let answer = Memo::new(move |_| {
        let asked = name();
        let asked = asked.trim();
        if asked.is_empty() {
            return String::new();
        }
        let qt = qtype.get();
        let origin = store.origin.get();
        store.parsed.with(|(cluster, _)| {
            store.slices.with(|slices| {
                let asker = match OriginKey::parse(&origin) {
                    Some(OriginKey::Pod(id)) => Some(id),
                    _ => None,
                };
                let conf = resolver::conf_for(cluster, asker.as_ref());
                let slices = dns::slices_for_dns(cluster, slices);
                let mut s = render::resolv_conf(&conf);
                for (q, r) in resolver::lookup(cluster, &slices, &conf, asked, qt) {
                    s.push('\n');
                    s.push_str(&render::response(&q, qt, &r));
                }
                s
            })
        })
    });
    let asker = Memo::new(move |_| match OriginKey::parse(&store.origin.get()) {
        Some(OriginKey::Pod(id)) => id.to_string(),
        _ => "default/…".to_string(),
    });
    view! {
        <div class="dns-panel" data-testid="dns-panel">
            <p class="small muted">{t("dns.intro")}" "<code>{move || asker.get()}</code></p>
            <div class="dns-form">
                <label>
                    {t("dns.name")}
                    <input type="text" data-testid="dns-name" maxlength=MAX_NAME spellcheck="false"
                        prop:value=name
                        on:input=move |ev| typed.set(Some(event_target_value(&ev).chars().take(MAX_NAME).collect()))/>
                </label>
                <label>
                    {t("dns.type")}
                    <select data-testid="dns-type"
                        on:change=move |ev| {
                            if let Some(q) = Qtype::parse(&event_target_value(&ev)) {
                                qtype.set(q);
                            }
                        }>
                        {Qtype::ALL.into_iter().map(|q| view! {
                            <option value=q.as_str() selected=move || qtype.get() == q>{q.as_str()}</option>
                        }).collect_view()}
                    </select>
                </label>
            </div>
            <pre class="dns-answer" data-testid="dns-answer">{move || answer.get()}</pre>
        </div>
    }
}
