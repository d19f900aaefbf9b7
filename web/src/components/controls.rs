//! Toolbars: scenario, mode and scheduler; where packets go; playback.

use super::{lang, t};
use crate::data::{Job, Loader};
use crate::i18n::tr;
use crate::scenarios::PRESETS;
use crate::state::Store;
use kpv_core::model::{Mode, Scheduler};
use kpv_core::net::trace::{Dest, OriginKey};
use kpv_core::session::replay::{self, TargetKind};
use leptos::prelude::*;

fn target_kind_key(k: TargetKind) -> &'static str {
    match k {
        TargetKind::DnsName => "target.dns-name",
        TargetKind::ClusterIp => "target.cluster-ip",
        TargetKind::NodePort => "target.node-port",
        TargetKind::LoadBalancer => "target.load-balancer",
        TargetKind::ExternalIp => "target.external-ip",
        TargetKind::Http => "http.target",
    }
}

/// Scenario, mode and scheduler.
#[component]
pub fn Toolbar() -> impl IntoView {
    let store = expect_context::<Store>();
    let loader = expect_context::<Loader>();
    let l = lang();
    let mode_options = move || {
        Mode::ALL
            .into_iter()
            .map(|m| {
                let key = match m {
                    Mode::Userspace => "mode.userspace",
                    Mode::Iptables => "mode.iptables",
                    Mode::Ipvs => "mode.ipvs",
                    Mode::Nftables => "mode.nftables",
                    Mode::Cilium => "mode.cilium",
                };
                view! { <option value=m.as_str() selected=move || store.mode.get() == m>{move || tr(l.get(), key)}</option> }
            })
            .collect_view()
    };
    view! {
        <div class="toolbar">
            <label>
                <span>{t("label.scenario")}</span>
                <select data-testid="scenario-select"
                    prop:value=move || store.scenario.get()
                    on:change=move |ev| {
                        let key = event_target_value(&ev);
                        if let Some(p) = PRESETS.iter().find(|p| p.key == key) {
                            loader.run(Job::Preset { key: p.key, mode: None, stop: None });
                        }
                    }>
                    {PRESETS.iter().map(|p| view! {
                        <option value=p.key selected=move || store.scenario.get() == p.key>{move || p.title(l.get())}</option>
                    }).collect_view()}
                    <Show when=move || store.scenario.get() == crate::state::CUSTOM>
                        <option value=crate::state::CUSTOM selected=true>{t("scenario.custom")}</option>
                    </Show>
                </select>
            </label>
            <label>
                <span>{t("label.mode")}</span>
                <select data-testid="mode-select"
                    aria-busy=move || store.mode_wait().is_some().to_string()
                    prop:value=move || store.mode.get().as_str()
                    on:change=move |ev| {
                        if let Some(m) = Mode::parse(&event_target_value(&ev)) {
                            store.mode.set(m);
                        }
                    }>
                    {mode_options}
                </select>
                // The chosen mode's code on its way.
                {move || store.mode_wait().filter(|(_, load)| *load != crate::load::Fetch::Failed).map(|(m, load)| view! {
                    // Not a span: the top bar hides its labels' spans (their words).
                    <i class="spinner" data-testid="mode-busy" role="img"
                        aria-label=move || super::modewait::wait_text(l.get(), m, load, true)></i>
                })}
            </label>
            <label class:hidden=move || store.mode.get() != Mode::Ipvs>
                <span>{t("label.scheduler")}</span>
                <select data-testid="scheduler-select"
                    prop:value=move || store.scheduler.get().as_str()
                    on:change=move |ev| {
                        if let Some(s) = Scheduler::parse(&event_target_value(&ev)) {
                            store.scheduler.set(s);
                        }
                    }>
                    {Scheduler::ALL.into_iter().map(|s| view! {
                        <option value=s.as_str() selected=move || store.scheduler.get() == s>{move || scheduler_name(l.get(), s)}</option>
                    }).collect_view()}
                </select>
            </label>
        </div>
    }
}

/// The diagram with its playback bar (or, embedded, the whole app) fills
/// the screen, or leaves it (the button and the F key).
pub fn toggle_fullscreen() {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    if doc.fullscreen_element().is_some() {
        doc.exit_fullscreen();
        return;
    }
    let target = doc
        .query_selector(".first-screen")
        .ok()
        .flatten()
        .or_else(|| doc.query_selector(".app").ok().flatten());
    if let Some(el) = target {
        let _ = el.request_fullscreen();
    }
}

/// The scheduler's name in the list: its ipvsadm word and what it means
/// (the embed, which has no list, carries none of these words).
fn scheduler_name(lg: crate::i18n::Lang, s: Scheduler) -> &'static str {
    #[cfg(feature = "full")]
    return crate::why::scheduler_name(lg, s);
    #[cfg(not(feature = "full"))]
    {
        let _ = lg;
        s.as_str()
    }
}

/// Where packets come from and go to, and the send buttons.
#[component]
pub fn TrafficBar() -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    // An entry point is sent a request, not a packet.
    let send_label = move || {
        let key = store.target.get();
        let http = store.targets.with(|ts| {
            ts.iter()
                .find(|t| t.key == key)
                .or_else(|| ts.first())
                .is_some_and(|t| t.kind == TargetKind::Http)
        });
        tr(l.get(), if http { "http.btn.send" } else { "btn.send" })
    };
    let target_options = move || {
        store.targets.with(|ts| {
            ts.iter()
                .map(|tg| {
                    let key = tg.key.clone();
                    let dst = match &tg.dst {
                        Dest::Ip(ip) => std::net::SocketAddr::new(*ip, tg.port).to_string(),
                        Dest::Name(n) => format!("{n}:{}", tg.port),
                        Dest::Http(h) => h.entry.to_string(),
                    };
                    let label = format!("{} — {} {}", tg.service.name, tr(l.get(), target_kind_key(tg.kind)), dst);
                    let selected_key = key.clone();
                    view! { <option value=key selected=move || store.shown_target_key() == selected_key>{label}</option> }
                })
                .collect_view()
        })
    };
    // The select shows the target sent to: the one chosen, else the first
    // (the entry point, once HTTP routing's code has put it first); while
    // that entry point waits for routing's code, the "loading" line.
    let target_select = NodeRef::<leptos::html::Select>::new();
    // Each option says whether it is the one shown (so the first drawing is
    // right); this keeps the list's value right after a reader's own choice.
    Effect::new(move |_| {
        let key = store.shown_target_key();
        if let Some(el) = target_select.get() {
            if el.value() != key {
                el.set_value(&key);
            }
        }
    });
    // The entry points join the list when HTTP routing's code is in.
    let http_loading_option = move || {
        store.http_pending.get().then(|| {
            view! { <option value="" disabled=true data-testid="target-http-loading">{tr(l.get(), "http.load.targets")}</option> }
        })
    };
    let origin_options = move || {
        // The outside client is of the chosen target's family.
        store.target.track();
        store.targets.track();
        let client = store
            .current_target()
            .map(|t| replay::external_client(&t))
            .unwrap_or_else(replay::client_ip);
        store.parsed.with(|(c, _)| {
            let mut v = vec![
                ("auto".to_string(), tr(l.get(), "origin.auto").to_string()),
                (OriginKey::External.to_string(), format!("{} ({client})", tr(l.get(), "origin.external"))),
            ];
            for p in &c.pods {
                v.push((OriginKey::Pod(p.id.clone()).to_string(), format!("{} {}", tr(l.get(), "origin.pod"), p.id.name)));
            }
            for n in &c.nodes {
                v.push((OriginKey::Node(Some(n.name.clone())).to_string(), format!("{} {}", tr(l.get(), "origin.node"), n.name)));
            }
            v.into_iter()
                .map(|(k, label)| {
                    let sel = k.clone();
                    view! { <option value=k selected=move || store.origin.get() == sel>{label}</option> }
                })
                .collect_view()
        })
    };
    view! {
        <div class="trafficbar">
            <label>
                <span>{t("label.from")}</span>
                <select data-testid="origin-select" on:change=move |ev| store.origin.set(event_target_value(&ev))>
                    {origin_options}
                </select>
            </label>
            <label class="grow">
                <span>{t("label.to")}</span>
                <select data-testid="target-select" node_ref=target_select on:change=move |ev| store.target.set(event_target_value(&ev))>
                    {target_options}{http_loading_option}
                </select>
            </label>
            <super::request::RequestForm />
            <button data-testid="send-packet" class="primary" disabled=move || store.entry_waits() || store.nothing_to_send()
                title=move || if store.nothing_to_send() { Some(tr(l.get(), "empty.no-targets")) } else { store.entry_waits().then(|| http_wait_text(l.get(), store)) }
                on:click=move |_| store.send(1, 0)>{send_label}</button>
            <label class="narrow">
                <span>{t("label.burst")}</span>
                <input data-testid="burst-size" type="number" min="1" max="500"
                    prop:value=move || store.burst.get().to_string()
                    on:change=move |ev| {
                        let v = event_target_value(&ev).parse::<u32>().unwrap_or(10).clamp(1, 500);
                        store.burst.set(v);
                    } />
            </label>
            <button data-testid="send-burst" disabled=move || store.entry_waits() || store.nothing_to_send() on:click=move |_| store.send(store.burst.get_untracked(), 60)>{t("btn.burst")}</button>
            <label class="check">
                <input data-testid="continuous" type="checkbox"
                    prop:checked=move || store.continuous.get()
                    on:change=move |ev| {
                        let on = event_target_checked(&ev);
                        store.continuous.set(on);
                        if on {
                            store.playing.set(true);
                        }
                    } />
                <span>{t("btn.continuous")}</span>
            </label>
            <Show when=move || store.at_cap.get()>
                <p class="notice small" role="status" data-testid="packet-cap">{t("traffic.cap")}</p>
            </Show>
        </div>
    }
}

/// The playback speeds offered, as the option's value and label and as a
/// factor (written out: no float formatting or parsing code in the app).
const SPEEDS: [(&str, f64); 5] = [
    ("0.25", 0.25),
    ("0.5", 0.5),
    ("1", 1.0),
    ("2", 2.0),
    ("4", 4.0),
];

/// The option of `speed` (a share link may carry another speed: then none).
fn speed_value(speed: f64) -> &'static str {
    SPEEDS
        .iter()
        .find(|(_, s)| *s == speed)
        .map_or("", |(text, _)| *text)
}

/// Play, pause, step, speed and the simulated clock. Embedded (where there is
/// no traffic bar), it also has the Send button, and Play with nothing sent
/// sends a packet: an embed is never an idle diagram.
#[component]
pub fn PlaybackBar() -> impl IntoView {
    let store = expect_context::<Store>();
    let embed = use_context::<crate::env::Embedded>().is_some_and(|e| e.0);
    let l = lang();
    let clock = move || format!("t = {} s", super::seconds(store.now.get()));
    // Whether something is full screen (the browser also leaves it on Esc).
    let full = RwSignal::new(false);
    let listener = window_event_listener(
        leptos::ev::Custom::<leptos::ev::Event>::new("fullscreenchange"),
        move |_| {
            let on = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.fullscreen_element())
                .is_some();
            full.set(on);
        },
    );
    on_cleanup(move || listener.remove());
    view! {
        <div class="playback" role="group" aria-label=t("a11y.keys")>
            {embed.then(|| view! {
                <button data-testid="send-packet" class="primary send" disabled=move || store.entry_waits() || store.nothing_to_send()
                    title=move || if store.entry_waits() { http_wait_text(l.get(), store) } else { t("btn.send-one")() }
                    on:click=move |_| store.send(1, 0)>
                    "➤ "<span class="btn-text">{t("btn.send-one")}</span>
                </button>
            })}
            <button data-testid="play-pause" class="primary"
                disabled=move || embed && store.entry_waits() && store.packets.with(Vec::is_empty)
                aria-pressed=move || store.playing.get().to_string()
                on:click=move |_| {
                    if embed && !store.playing.get_untracked() && store.packets.with_untracked(Vec::is_empty) {
                        store.send(1, 0);
                    } else {
                        store.playing.update(|p| *p = !*p);
                    }
                }>
                {move || if store.playing.get() { view! { <span class="icon">"❚❚"</span> }.into_any() } else { view! { <span class="icon">"▶"</span> }.into_any() }}
                <span class="btn-text">{move || if store.playing.get() { t("btn.pause")() } else { t("btn.play")() }}</span>
            </button>
            <button data-testid="step-back" title=t("btn.step-back") on:click=move |_| store.step(false)>"◀ "<span class="btn-text">{t("btn.step-back")}</span></button>
            <button data-testid="step-forward" title=t("btn.step-forward") on:click=move |_| store.step(true)><span class="btn-text">{t("btn.step-forward")}</span>" ▶"</button>
            <button data-testid="restart" title=t("btn.restart") on:click=move |_| {
                if let Some(f) = store.focused_flight() {
                    store.now.set(f.start_ms);
                    store.playing.set(true);
                }
            }>"↺ "<span class="btn-text">{t("btn.restart")}</span></button>
            <button data-testid="reset" title=t("btn.reset-title") on:click=move |_| store.reset()>"⇤ "<span class="btn-text">{t("btn.reset")}</span></button>
            <label class="narrow">
                <span>{t("label.speed")}</span>
                <select data-testid="speed" prop:value=move || speed_value(store.speed.get())
                    on:change=move |ev| {
                        let v = event_target_value(&ev);
                        let speed = SPEEDS.iter().find(|(text, _)| *text == v).map_or(1.0, |(_, s)| *s);
                        store.speed.set(speed);
                    }>
                    {SPEEDS.into_iter().map(|(text, s)| view! {
                        <option value=text selected=move || store.speed.get() == s>{text}"×"</option>
                    }).collect_view()}
                </select>
            </label>
            <button data-testid="fullscreen" title=t("btn.fullscreen") aria-pressed=move || full.get().to_string() on:click=move |_| toggle_fullscreen()>"⤢ "<span class="btn-text">{t("btn.fullscreen")}</span></button>
            {embed.then(|| view! { <super::panels::HopCaption with_scenario=true /> })}
            <output data-testid="sim-clock" class="clock" title=t("clock")>{clock}</output>
        </div>
    }
}

/// Language, theme and presenter options.
#[component]
pub fn Preferences(theme: RwSignal<&'static str>, large: RwSignal<bool>) -> impl IntoView {
    let l = lang();
    view! {
        <div class="toolbar prefs">
            <label>
                <span>{t("label.lang")}</span>
                <select data-testid="lang-select" on:change=move |ev| {
                    if let Some(x) = crate::i18n::Lang::parse(&event_target_value(&ev)) { l.set(x); }
                }>
                    <option value="en" selected=move || l.get() == crate::i18n::Lang::En>"English"</option>
                    <option value="ko" selected=move || l.get() == crate::i18n::Lang::Ko>"한국어"</option>
                </select>
            </label>
            <label>
                <span>{t("label.theme")}</span>
                <select data-testid="theme-select" on:change=move |ev| {
                    let v = event_target_value(&ev);
                    theme.set(crate::env::THEMES.into_iter().find(|t| *t == v).unwrap_or("auto"));
                }>
                    <option value="auto" selected=move || theme.get() == "auto">{t("theme.auto")}</option>
                    <option value="light" selected=move || theme.get() == "light">{t("theme.light")}</option>
                    <option value="dark" selected=move || theme.get() == "dark">{t("theme.dark")}</option>
                </select>
            </label>
            <label class="check">
                <input data-testid="large-text" type="checkbox" prop:checked=move || large.get()
                    on:change=move |ev| large.set(event_target_checked(&ev)) />
                <span>{t("btn.large-text")}</span>
            </label>
        </div>
    }
}

/// Why Send waits for the HTTP entry point: routing's code is loading, or
/// did not load (the notice above the diagram has the Retry).
fn http_wait_text(l: crate::i18n::Lang, store: Store) -> &'static str {
    if store.http_load.get() == crate::load::Fetch::Failed {
        tr(l, "http.load.failed")
    } else {
        tr(l, "http.load.loading")
    }
}
