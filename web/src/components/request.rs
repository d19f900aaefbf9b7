//! HTTP routing in the app: the request form (shown when the target is an
//! Ingress or Gateway entry point), the request card drawn next to the
//! packet card (what the client sent and what the backend gets), and the
//! routing-table panel with the rule that decided highlighted. Markup only:
//! requests are read, replayed and decided by kpv-core
//! (`kpv_core::http::send`); the words are in `crate::hops_http`.

use super::lang;
use crate::hops::short;
use crate::hops_http::error_text;
use crate::i18n::tr;
use crate::state::Store;
use kpv_core::http::send::{
    decision, parse_request, proxy_hops, table_rows, HttpSend, ProxyStage, RequestError,
};
use kpv_core::replay::{Target, TargetKind};
use kpv_core::scene::{CARD_RIGHT, CARD_TOP};
use kpv_core::trace::{Dest, Trace};
use leptos::prelude::*;

/// The request form's inputs, kept as typed (the text stays when it has an
/// error; an empty URL means the entry point's default request).
#[derive(Clone, Copy)]
pub struct HttpForm {
    pub method: RwSignal<String>,
    pub url: RwSignal<String>,
    pub headers: RwSignal<String>,
    pub error: RwSignal<Option<RequestError>>,
}

impl Default for HttpForm {
    fn default() -> Self {
        Self::new()
    }
}

impl HttpForm {
    pub fn new() -> HttpForm {
        HttpForm {
            method: RwSignal::new("GET".into()),
            url: RwSignal::new(String::new()),
            headers: RwSignal::new(String::new()),
            error: RwSignal::new(None),
        }
    }

    /// Back to the entry point's default request.
    pub fn clear(&self) {
        self.method.set("GET".into());
        self.url.set(String::new());
        self.headers.set(String::new());
        self.error.set(None);
    }

    /// The target with the form's request, for an entry point (other
    /// targets pass through). A request that does not read sets the form's
    /// error and is not sent.
    pub fn apply(&self, mut target: Target) -> Result<Target, RequestError> {
        let Dest::Http(send) = &target.dst else {
            return Ok(target);
        };
        let url = self.url.get_untracked();
        let url = if url.trim().is_empty() {
            send.request.url()
        } else {
            url
        };
        let parsed = parse_request(
            &self.method.get_untracked(),
            &url,
            &self.headers.get_untracked(),
        );
        match parsed {
            Ok(request) => {
                self.error.set(None);
                target.port = request.port;
                target.dst = Dest::Http(Box::new(HttpSend {
                    entry: send.entry.clone(),
                    request,
                }));
                Ok(target)
            }
            Err(e) => {
                self.error.set(Some(e));
                Err(e)
            }
        }
    }
}

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
                <label class="narrow">
                    <span>{move || tr(l.get(), "http.method")}</span>
                    <input data-testid="request-method" type="text" size="6" spellcheck="false"
                        prop:value=move || form.method.get()
                        on:input=move |ev| form.method.set(event_target_value(&ev))
                        on:keydown=on_enter />
                </label>
                <label class="grow">
                    <span>{move || tr(l.get(), "http.url")}</span>
                    <input data-testid="request-url" type="text" spellcheck="false"
                        prop:value=url_value
                        on:input=move |ev| form.url.set(event_target_value(&ev))
                        on:keydown=on_enter />
                </label>
                <label class="grow">
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

/// What the request card shows.
#[derive(Clone, Debug, PartialEq)]
struct ReqCard {
    lines: Vec<(String, bool)>,
    w: f64,
}

const LINE_H: f64 = 22.0;
const CHAR_W: f64 = 9.9;
const MAX_CHARS: usize = 44;

/// The client's request, then (once the proxy has decided) what the
/// backend gets with each change marked ✎/+, or the proxy's own status.
fn req_card(lg: crate::i18n::Lang, t: &Trace, hop: usize) -> Option<ReqCard> {
    let (first, p) = proxy_hops(t).next()?;
    let r = &p.request;
    let mut lines: Vec<(String, bool)> = vec![
        (tr(lg, "http.card.request").to_string(), false),
        (format!("{} {}", r.method, r.url()), false),
        (format!("host: {}", r.host_header()), false),
    ];
    lines.extend(
        r.headers
            .iter()
            .take(3)
            .map(|(k, v)| (format!("{k}: {v}"), false)),
    );
    let backend = proxy_hops(t).find(|(_, p)| p.stage == ProxyStage::Backend);
    if let Some((bi, b)) = backend.filter(|(bi, _)| hop >= *bi && hop >= first) {
        let _ = bi;
        let d = &b.decision;
        if b.connect.is_some() {
            let f = &d.request;
            lines.push((tr(lg, "http.card.backend").to_string(), false));
            let path = if f.query.is_empty() {
                f.path.clone()
            } else {
                format!("{}?{}", f.path, f.query)
            };
            let changed =
                path != if r.query.is_empty() {
                    r.path.clone()
                } else {
                    format!("{}?{}", r.path, r.query)
                } || f.method != r.method;
            lines.push((
                format!("{}{} {path}", if changed { "✎ " } else { "" }, f.method),
                changed,
            ));
            if f.host != r.host_header() {
                lines.push((format!("✎ host: {}", f.host), true));
            }
            let sent: std::collections::BTreeMap<String, String> =
                kpv_core::http::walk::header_map(&r.headers);
            for (k, v) in &f.headers {
                match sent.get(k) {
                    Some(old) if old == v => {}
                    Some(_) => lines.push((format!("✎ {k}: {v}"), true)),
                    None => lines.push((format!("+ {k}: {v}"), true)),
                }
            }
            for k in sent.keys().filter(|k| !f.headers.contains_key(*k)) {
                lines.push((format!("− {k}"), true));
            }
        } else if let Some(status) = b.respond {
            let text = tr(lg, "http.card.status").replace("{status}", &status.to_string());
            lines.push((text, true));
            if let Some(rd) = &d.redirect {
                lines.push((format!("location: {}", rd.location), true));
            }
        }
    }
    let lines: Vec<(String, bool)> = lines
        .into_iter()
        .map(|(s, c)| (short(&s, MAX_CHARS), c))
        .collect();
    let chars = lines
        .iter()
        .map(|(s, _)| s.chars().count())
        .max()
        .unwrap_or(0);
    Some(ReqCard {
        w: chars as f64 * CHAR_W + 20.0,
        lines,
    })
}

/// The request card, under the packet card in the diagram's top right.
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
            let top = CARD_TOP + 82.0;
            let x = CARD_RIGHT - c.w;
            let h = c.lines.len() as f64 * LINE_H + 10.0;
            let lines = c
                .lines
                .iter()
                .enumerate()
                .map(|(i, (s, changed))| {
                    let y = top + 21.0 + i as f64 * LINE_H;
                    let title = i == 0;
                    view! {
                        <text x=format!("{:.1}", x + 10.0) y=format!("{y:.1}") class="mono"
                            class:card-hop=title class:rewritten=*changed>{s.clone()}</text>
                    }
                })
                .collect_view();
            view! {
                <g class="packet-card request-card" data-testid="request-card" pointer-events="none">
                    <rect x=format!("{x:.1}") y=format!("{top:.1}") width=format!("{:.1}", c.w)
                        height=format!("{h:.1}") rx="6" />
                    {lines}
                </g>
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
        let prepared = store.parsed.with(|(c, _)| kpv_core::http::prepare(c));
        Some((entry.to_string(), table_rows(&prepared, &entry)))
    });
    let matched = Memo::new(move |_| store.with_focused_trace(|t| decision(t).cloned()).flatten());
    move || {
        let lg = l.get();
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
                    <tr data-testid="routing-rule" data-matched=hit.to_string() class:matched=hit>
                        <td class="mono">{format!("{}{tls}", r.section)}<br/>{r.hosts.clone()}</td>
                        <td class="mono">{r.matching.clone()}</td>
                        <td class="mono">{r.to.clone()}</td>
                        <td class="mono small">{rule}{hit.then(|| view! { <strong>" ◀ "{tr(lg, "http.table.matched")}</strong> })}</td>
                    </tr>
                }
            })
            .collect_view();
        view! {
            <div class="routing-table" data-testid="routing-table">
                <p class="small strong">{tr(lg, "http.table.heading").replace("{entry}", &entry)}</p>
                <table class="small">
                    <thead><tr>
                        <th>{tr(lg, "http.table.hosts")}</th>
                        <th>{tr(lg, "http.table.match")}</th>
                        <th>{tr(lg, "http.table.to")}</th>
                        <th>{tr(lg, "http.table.rule")}</th>
                    </tr></thead>
                    <tbody>{body}</tbody>
                </table>
            </div>
        }
        .into_any()
    }
}
