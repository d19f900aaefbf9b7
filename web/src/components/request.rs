//! HTTP routing in the app: the request form (shown when the target is an
//! Ingress or Gateway entry point), the request card under the playback
//! controls in the side column (what the client sent and what the backend gets), and
//! the routing-table panel with the rule that decided highlighted, kept in
//! view in its own scroll box. Markup only:
//! requests are read, replayed and decided by kpv-core
//! (`kpv_core::http::send`); the words are in `crate::hops_http`.

use super::lang;
use crate::hops_http::error_text;
use crate::i18n::tr;
use crate::load::Fetch;
use crate::state::Store;
use kpv_core::http::send::{decision, proxy_hops, ProxyStage};
use kpv_core::net::trace::{Dest, Trace};
use kpv_core::session::replay::TargetKind;
use leptos::prelude::*;

/// The chosen target's default URL, when it is an entry point.
fn chosen_http(store: Store) -> Memo<Option<String>> {
    Memo::new(move |_| {
        let key = store.target.get();
        store.targets.with(|ts| {
            let t = ts.iter().find(|t| t.key == key).or_else(|| ts.first())?;
            match (&t.kind, &t.dst) {
                (TargetKind::Http, Dest::Http(h)) => Some(h.request.url()),
                _ => None,
            }
        })
    })
}

/// Method, URL and headers, filled with a request that reaches a host the
/// entry point routes, so one click sends.
#[component]
pub fn RequestForm() -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    let form = store.http;
    let default_url = chosen_http(store);
    let url_value = move || {
        let u = form.url.get();
        if u.is_empty() {
            default_url.get().unwrap_or_default()
        } else {
            u
        }
    };
    let on_enter = move |ev: leptos::ev::KeyboardEvent| {
        if ev.key() == "Enter" && !ev.shift_key() {
            ev.prevent_default();
            store.send(1, 0);
        }
    };
    view! {
        <Show when=move || default_url.with(Option::is_some)>
            <div class="request-form" data-testid="request-form">
                <label class="narrow method">
                    <span>{move || tr(l.get(), "http.method")}</span>
                    <input data-testid="request-method" type="text" size="6" spellcheck="false"
                        prop:value=move || form.method.get()
                        on:input=move |ev| form.method.set(event_target_value(&ev))
                        on:keydown=on_enter />
                </label>
                <label class="url">
                    <span>{move || tr(l.get(), "http.url")}</span>
                    <input data-testid="request-url" type="text" spellcheck="false"
                        prop:value=url_value
                        on:input=move |ev| form.url.set(event_target_value(&ev))
                        on:keydown=on_enter />
                </label>
                <label class="headers" title=move || tr(l.get(), "http.headers-hint")>
                    <span>{move || tr(l.get(), "http.headers")}</span>
                    <textarea data-testid="request-headers" rows="1" spellcheck="false"
                        placeholder="env: canary"
                        prop:value=move || form.headers.get()
                        on:input=move |ev| form.headers.set(event_target_value(&ev))></textarea>
                </label>
                {move || form.error.get().map(|e| view! {
                    <p class="errors small" role="alert" data-testid="request-error">{error_text(l.get(), &e)}</p>
                })}
            </div>
        </Show>
    }
}

/// What the request card shows: the client's request, and (once the proxy
/// has decided) what the backend gets or the proxy's own answer.
#[derive(Clone, Debug, PartialEq)]
struct ReqCard {
    /// The request line and the Host header (with the headers sent).
    sent: Vec<String>,
    /// (line, changed by the proxy); the first is the heading.
    got: Vec<(String, bool)>,
}

/// Lines of what the backend gets, its heading included (the card's height
/// stays bounded: it sits in the side column under the playback controls).
const GOT_LINES: usize = 3;

fn with_query(path: &str, query: &str) -> String {
    if query.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{query}")
    }
}

fn req_card(lg: crate::i18n::Lang, t: &Trace, hop: usize) -> Option<ReqCard> {
    let (first, p) = proxy_hops(t).next()?;
    let r = &p.request;
    let headers: String = r
        .headers
        .iter()
        .map(|(k, v)| format!(" · {k}: {v}"))
        .collect();
    let sent = vec![
        format!("{} {}", r.method, r.url()),
        format!("host: {}{headers}", r.host_header()),
    ];
    let mut got: Vec<(String, bool)> = Vec::new();
    let backend = proxy_hops(t).find(|(_, p)| p.stage == ProxyStage::Backend);
    if let Some((_, b)) = backend.filter(|(bi, _)| hop >= *bi && hop >= first) {
        let d = &b.decision;
        if b.connect.is_some() {
            let f = &d.request;
            let path = with_query(&f.path, &f.query);
            let changed = path != with_query(&r.path, &r.query) || f.method != r.method;
            let mark = if changed { "✎ " } else { "" };
            got.push((
                format!("{}: {mark}{} {path}", tr(lg, "http.card.backend"), f.method),
                changed,
            ));
            if f.host != r.host_header() {
                got.push((format!("✎ host: {}", f.host), true));
            }
            let sent_h = kpv_core::http::walk::header_map(&r.headers);
            for (k, v) in &f.headers {
                match sent_h.get(k) {
                    Some(old) if old == v => {}
                    Some(_) => got.push((format!("✎ {k}: {v}"), true)),
                    None => got.push((format!("+ {k}: {v}"), true)),
                }
            }
            for k in sent_h.keys().filter(|k| !f.headers.contains_key(*k)) {
                got.push((format!("− {k}"), true));
            }
        } else if let Some(status) = b.respond {
            let text = tr(lg, "http.card.status").replace("{status}", &status.to_string());
            got.push((text, true));
            if let Some(rd) = &d.redirect {
                got.push((format!("→ {}", rd.location), true));
            }
        }
    }
    got.truncate(GOT_LINES);
    Some(ReqCard { sent, got })
}

/// The focused request's card, in the side column under the playback
/// controls (the diagram has no room left for it in a tall cluster, and the
/// embed leaves it out): the request as sent, then what the backend gets,
/// each change marked with a sign as well as colour.
#[component]
pub fn RequestCard() -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    let card = Memo::new(move |_| {
        let lg = l.get();
        let hop = store.current_hop().unwrap_or(0);
        store.with_focused_trace(|t| req_card(lg, t, hop)).flatten()
    });
    move || {
        card.get().map(|c| {
            // One line each, cut with an ellipsis (the whole line is its
            // tooltip): the card's height stays five lines at most.
            let sent = c
                .sent
                .into_iter()
                .enumerate()
                .map(|(i, s)| {
                    let tip = s.clone();
                    view! { <p class:card-hop=i == 0 title=tip>{s}</p> }
                })
                .collect_view();
            let got = c
                .got
                .into_iter()
                .enumerate()
                .map(|(i, (s, changed))| {
                    let tip = s.clone();
                    view! { <p class:card-hop=i == 0 class:rewritten=changed title=tip>{s}</p> }
                })
                .collect_view();
            view! {
                <section class="request-card" data-testid="request-card" aria-label=move || tr(l.get(), "http.card.request")>
                    {sent}
                    {got}
                </section>
            }
        })
    }
}

/// The entry point's routing table in evaluation order, the rule that
/// decided the focused request highlighted.
#[component]
pub fn RoutingTable() -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    // (entry, rows) of the focused request's entry point, else the chosen one.
    let rows = Memo::new(move |_| {
        let focused = store
            .with_focused_trace(|t| match &t.request.dst {
                Dest::Http(h) => Some(h.entry.clone()),
                _ => None,
            })
            .flatten();
        let key = store.target.get();
        let entry = focused.or_else(|| {
            store.targets.with(|ts| {
                ts.iter()
                    .find(|t| t.key == key && t.kind == TargetKind::Http)
                    .or_else(|| ts.iter().find(|t| t.kind == TargetKind::Http))
                    .and_then(|t| match &t.dst {
                        Dest::Http(h) => Some(h.entry.clone()),
                        _ => None,
                    })
            })
        })?;
        let f = crate::lazy_http::http()?;
        let rows = store
            .http_prepared
            .with(|p| p.as_deref().map(|p| (f.table_rows)(p, &entry)))?;
        Some((entry.to_string(), rows))
    });
    let matched = Memo::new(move |_| store.with_focused_trace(|t| decision(t).cloned()).flatten());
    // The deciding row scrolls into view in the list's own scroll box when a
    // request is decided (a long table in a short side column).
    let hit_row = Memo::new(move |_| {
        let d = matched.get()?;
        rows.with(|r| {
            let (_, rows) = r.as_ref()?;
            rows.iter().position(|r| r.decided(&d)).map(|i| i as i64)
        })
    });
    let list = NodeRef::<leptos::html::Ol>::new();
    super::panels::keep_in_view(list, "li.matched", move || hit_row.get());
    move || {
        let lg = l.get();
        if store.http_pending.get() {
            return view! { <HttpStatus /> }.into_any();
        }
        let Some((entry, rows)) = rows.get() else {
            return view! { <p class="muted small" data-testid="routing-table">{tr(lg, "http.table.empty")}</p> }
                .into_any();
        };
        let d = matched.get();
        let body = rows
            .into_iter()
            .map(|r| {
                let hit = d.as_ref().is_some_and(|d| r.decided(d));
                let rule = r
                    .route
                    .as_ref()
                    .map(|x| format!("{} {} #{}.{}", x.kind, x.name, x.rule + 1, x.index + 1))
                    .unwrap_or_else(|| r.section.clone());
                let tls = r.tls.as_ref().map(|t| format!(" · tls {t}")).unwrap_or_default();
                view! {
                    <li data-testid="routing-rule" data-matched=hit.to_string() class:matched=hit>
                        <span class="mono small">{format!("{}{tls} · {}", r.section, r.hosts)}</span><br/>
                        <span class="mono">{format!("{} → {}", r.matching, r.to)}</span><br/>
                        <span class="muted small">{rule}</span>
                        {hit.then(|| view! { <strong class="small">" ◀ "{tr(lg, "http.table.matched")}</strong> })}
                    </li>
                }
            })
            .collect_view();
        view! {
            <div class="routing-table" data-testid="routing-table">
                <p class="small strong">{tr(lg, "http.table.heading").replace("{entry}", &entry)}</p>
                <ol class="routing-rules" data-testid="routing-rules" node_ref=list>{body}</ol>
            </div>
        }
        .into_any()
    }
}

/// While HTTP routing's code is on its way: what is loading, or what
/// failed with a Retry (nothing the user has is lost meanwhile). Nothing
/// once it is here or when the scenario has no routing objects.
#[component]
pub fn HttpStatus() -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    move || {
        if !store.http_pending.get() {
            return None;
        }
        let lg = l.get();
        Some(if store.http_load.get() == Fetch::Failed {
            view! {
                <div class="errors" role="alert" data-testid="http-load-error">
                    <p>{tr(lg, "http.load.failed")}</p>
                    <button data-testid="http-retry" on:click=move |_| store.load_http()>{tr(lg, "data.retry")}</button>
                </div>
            }
            .into_any()
        } else {
            view! {
                <p class="data-loading small muted" role="status" data-testid="http-loading">
                    <span class="spinner" aria-hidden="true"></span>
                    {tr(lg, "http.load.loading")}
                </p>
            }
            .into_any()
        })
    }
}
