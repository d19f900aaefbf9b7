//! The cluster diagram: an SVG in the scene's fixed logical space, with the
//! packets in flight drawn over it.
//!
//! Markup only: every position comes from [`kpv_core::scene::Scene`] and
//! [`kpv_core::timeline::Flight`]; readiness and verdicts are shown with a
//! shape and a word, never by colour alone.

use super::{lang, outcome_class, outcome_mark, t};
use crate::i18n::tr;
use crate::i18n::Lang;
use crate::state::Store;
use kpv_core::model::{Mode, ServiceType};
use kpv_core::scene::Rect;
use kpv_core::timeline::Position;
use kpv_core::trace::{HopKind, Trace};
use leptos::prelude::*;
use std::collections::BTreeMap;

/// NodePorts written on a node's eth0 badge before "+N".
const MAX_NODE_PORTS: usize = 4;

fn n(v: f64) -> String {
    format!("{v:.1}")
}

#[component]
fn BoxRect(rect: Rect, class: &'static str) -> impl IntoView {
    view! { <rect class=class x=n(rect.x) y=n(rect.y) width=n(rect.w) height=n(rect.h) rx="8" /> }
}

/// The static part: client, load balancer, Services, nodes, Pods, edges.
#[component]
fn Cluster() -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    move || {
        let mode = store.mode.get();
        let ready = store.pod_ready.get();
        let received = store.received.get();
        store.scene.with(|s| {
            let c = s.client;
            let client = view! {
                <g class="client" data-testid="client">
                    <BoxRect rect=c class="client-box" />
                    <text x=n(c.x + 12.0) y=n(c.y + 26.0) class="title">{tr(l.get(), "diagram.client")}</text>
                    <text x=n(c.x + 12.0) y=n(c.y + 46.0) class="small mono">"198.51.100.7"</text>
                </g>
            };
            let lb = s.load_balancer.map(|r| {
                view! {
                    <g class="lb" data-testid="load-balancer">
                        <BoxRect rect=r class="lb-box" />
                        <text x=n(r.x + 12.0) y=n(r.y + 26.0) class="title">{tr(l.get(), "diagram.lb")}</text>
                        <text x=n(r.x + 12.0) y=n(r.y + 46.0) class="small mono">{s.load_balancer_ips.join(", ")}</text>
                    </g>
                }
            });
            // The NodePorts eth0 listens on: a few, then how many more.
            let node_ports: Vec<String> = store.parsed.with(|(cl, _)| {
                let all = cl.services
                    .iter()
                    .filter(|svc| matches!(svc.service_type, ServiceType::NodePort | ServiceType::LoadBalancer))
                    .flat_map(|svc| svc.ports.iter().filter_map(|p| p.node_port));
                let mut shown: Vec<String> = Vec::new();
                let mut rest = 0usize;
                for np in all {
                    if shown.len() < MAX_NODE_PORTS { shown.push(format!(":{np}")) } else { rest += 1 }
                }
                if rest > 0 {
                    shown.push(format!("+{rest}"));
                }
                shown
            });
            let rules_key = match mode {
                Mode::Iptables => "diagram.rules.iptables",
                Mode::Ipvs => "diagram.rules.ipvs",
                Mode::Nftables => "diagram.rules.nftables",
                Mode::Userspace => "diagram.rules.userspace",
            };
            let edges = s
                .edges
                .iter()
                .filter_map(|e| {
                    let from = s.services.iter().find(|x| x.id == e.service)?.rect;
                    let to = s.pods.iter().find(|p| p.id == e.pod)?.rect;
                    let d = format!(
                        "M{} {} C{} {} {} {} {} {}",
                        n(from.x + from.w / 2.0), n(from.y + from.h),
                        n(from.x + from.w / 2.0), n(from.y + from.h + 60.0),
                        n(to.x + to.w / 2.0), n(to.y - 60.0),
                        n(to.x + to.w / 2.0), n(to.y)
                    );
                    let class = if e.ready { "edge ready" } else { "edge not-ready" };
                    Some(view! { <path class=class d=d /> })
                })
                .collect_view();
            let services = s
                .services
                .iter()
                .map(|svc| {
                    let r = svc.rect;
                    let ports = svc
                        .ports
                        .iter()
                        .enumerate()
                        .map(|(i, p)| view! { <text x="12" y=n(68.0 + 16.0 * i as f64) class="small mono">{p.clone()}</text> })
                        .collect_view();
                    let kind = match svc.service_type {
                        ServiceType::ClusterIP => "ClusterIP",
                        ServiceType::NodePort => "NodePort",
                        ServiceType::LoadBalancer => "LoadBalancer",
                        ServiceType::ExternalName => "ExternalName",
                    };
                    // kpv-core's warnings about this Service (a selector that
                    // matches nothing, a pending load balancer): a mark with them.
                    let warned = store.warnings_by_object.with(|w| w.get(&format!("Service/{}", svc.id)).map(|m| m.join("\n")));
                    let mark = warned.clone().map(|m| view! {
                        <text class="warn-mark" data-testid="warning-mark" x=n(r.x + r.w - 20.0) y=n(r.y + 22.0)><title>{m}</title>"⚠"</text>
                    });
                    // The texts sit in a nested viewport, which clips what is
                    // wider than a narrow box.
                    view! {
                        <g class="service" data-testid=format!("service-{}", svc.id.name) data-warning=warned>
                            <BoxRect rect=r class="service-box" />
                            <svg x=n(r.x) y=n(r.y) width=n(r.w) height=n(r.h)>
                                <text x="12" y="24" class="title">{svc.id.name.clone()}</text>
                                <text x="12" y="44" class="mono">{format!("{kind} {}", svc.cluster_ip)}</text>
                                {ports}
                            </svg>
                            {mark}
                        </g>
                    }
                })
                .collect_view();
            let nodes = s
                .nodes
                .iter()
                .map(|nd| {
                    let r = nd.rect;
                    let eth = if node_ports.is_empty() { format!("eth0 {}", nd.ip) } else { format!("eth0 {}  {}", nd.ip, node_ports.join(" ")) };
                    view! {
                        <g class="node" data-testid=format!("node-{}", nd.name)>
                            <BoxRect rect=r class="node-box" />
                            <text x=n(r.x + 12.0) y=n(r.y + 22.0) class="title">{nd.name.clone()}</text>
                            <text x=n(r.x + r.w - 12.0) y=n(r.y + 22.0) class="small muted" text-anchor="end">
                                {nd.zone.clone().map(|z| format!("{z} · ")).unwrap_or_default()}{nd.pod_cidr.clone().unwrap_or_default()}
                            </text>
                            <BoxRect rect=nd.eth class="eth-box" />
                            <text x=n(nd.eth.x + 8.0) y=n(nd.eth.y + 16.0) class="mono small">{eth}</text>
                            <BoxRect rect=nd.proxy class="proxy-box" />
                            <text x=n(nd.proxy.x + 8.0) y=n(nd.proxy.y + 18.0) class="small">{tr(l.get(), rules_key)}</text>
                        </g>
                    }
                })
                .collect_view();
            let pods = s
                .pods
                .iter()
                .map(|p| {
                    let r = p.rect;
                    let is_ready = ready.get(&p.id).copied().unwrap_or(false);
                    let label = p.labels.first().cloned().unwrap_or_default();
                    let (mark, word) = if is_ready { ("✔", tr(l.get(), "state.ready")) } else { ("✖", tr(l.get(), "state.not-ready")) };
                    let got = received.get(&p.id).copied().unwrap_or(0);
                    view! {
                        <g class="pod" class:not-ready=!is_ready data-testid=format!("pod-{}", p.id.name) data-ready=is_ready.to_string() data-received=got.to_string()>
                            <BoxRect rect=r class="pod-box" />
                            <text x=n(r.x + 10.0) y=n(r.y + 18.0) class="small strong">{p.id.name.clone()}</text>
                            <text x=n(r.x + 10.0) y=n(r.y + 34.0) class="mono small">{p.ip.clone()}</text>
                            <text x=n(r.x + 10.0) y=n(r.y + 50.0) class="small muted">{label}</text>
                            <text x=n(r.x + r.w - 10.0) y=n(r.y + 50.0) class="small readiness" text-anchor="end">{format!("{mark} {word}")}</text>
                            <text x=n(r.x + r.w - 10.0) y=n(r.y + 18.0) class="small muted received" text-anchor="end">{if got > 0 { format!("⬇ {got}") } else { String::new() }}</text>
                        </g>
                    }
                })
                .collect_view();
            let more = s.more_services.map(|m| {
                let r = m.rect;
                view! {
                    <g class="service more" data-testid="more-services" data-count=m.count.to_string()>
                        <BoxRect rect=r class="service-box more-box" />
                        <svg x=n(r.x) y=n(r.y) width=n(r.w) height=n(r.h)>
                            <text x="12" y="24" class="title">{format!("+{}", m.count)}</text>
                            <text x="12" y="44" class="small">{tr(l.get(), "diagram.more-services")}</text>
                            <text x="12" y="62" class="small muted">{tr(l.get(), "diagram.more-services.where")}</text>
                        </svg>
                    </g>
                }
            });
            view! { {edges} {client} {lb} {nodes} {services} {more} {pods} }
        })
    }
}

/// How one packet looks at this frame.
#[derive(Clone, Debug, PartialEq)]
struct Look {
    transform: String,
    class: String,
    mark: &'static str,
}

/// The packets in flight, one keyed element each, moved with a transform.
///
/// Hundreds of packets move every frame. Giving each its own reactive
/// attributes would make hundreds of subscribers re-subscribe to the clock per
/// frame; instead one memo computes every packet's look and one effect writes
/// only the attributes that changed onto the keyed elements.
#[component]
fn Packets() -> impl IntoView {
    let store = expect_context::<Store>();
    let looks = Memo::new(move |_| {
        let t = store.now.get();
        let rm = store.reduced_motion.get();
        let focused = store.focused();
        // Only the packets that can be on screen now: delivered ones are
        // retired, however many were sent before.
        store.with_played(|played| {
            kpv_core::order::map(played.on_screen(t).filter_map(|(id, trace, f)| {
                let p = f.position(t, rm)?;
                let mut class = String::from("packet");
                let mut mark = "";
                if p.done {
                    class.push(' ');
                    class.push_str(outcome_class(&trace.outcome));
                    mark = outcome_mark(&trace.outcome);
                }
                if focused == Some(id) {
                    class.push_str(" focused");
                }
                Some((
                    id,
                    Look {
                        transform: format!("translate({:.1} {:.1})", p.point.x, p.point.y),
                        class,
                        mark,
                    },
                ))
            }))
        })
    });
    let ids = Memo::new(move |_| looks.with(|l| l.keys().copied().collect::<Vec<u32>>()));
    let group = NodeRef::<leptos::svg::G>::new();
    // What each element was last given, so unchanged attributes are not rewritten.
    let applied = StoredValue::new_local(BTreeMap::<u32, Look>::new());
    Effect::new(move |_| {
        let Some(g) = group.get() else { return };
        looks.with(|looks| {
            applied.update_value(|applied| {
                applied.retain(|id, _| looks.contains_key(id));
                let children = g.children();
                for i in 0..children.length() {
                    let Some(el) = children.item(i) else { continue };
                    let Some(id) = el
                        .get_attribute("data-id")
                        .and_then(|v| v.parse::<u32>().ok())
                    else {
                        continue;
                    };
                    let Some(look) = looks.get(&id) else { continue };
                    let before = applied.get(&id);
                    if before.map(|b| &b.transform) != Some(&look.transform) {
                        let _ = el.set_attribute("transform", &look.transform);
                    }
                    if before.map(|b| &b.class) != Some(&look.class) {
                        let _ = el.set_attribute("class", &look.class);
                    }
                    if before.map(|b| b.mark) != Some(look.mark) {
                        if let Some(text) = el.last_element_child() {
                            text.set_text_content(Some(look.mark));
                        }
                    }
                    applied.insert(id, look.clone());
                }
            });
        });
    });
    view! {
        <g class="packets" node_ref=group>
            <For each=move || ids.get() key=|id| *id let:id>
                <g data-testid="packet" data-id=id.to_string() class="packet"
                    on:click=move |_| store.focus.set(Some(id))>
                    <circle r="9" />
                    <text class="mark" text-anchor="middle" y="4"></text>
                </g>
            </For>
        </g>
    }
}

/// What the packet card shows (compared, so unchanged frames touch nothing).
#[derive(Clone, Debug, PartialEq)]
struct Card {
    x: f64,
    y: f64,
    src: String,
    dst: String,
    src_changed: bool,
    dst_changed: bool,
}

/// The card for the focused packet at `pos` of its flight.
fn card_at(trace: &Trace, pos: Position, store: Store, lang: Lang) -> Option<Card> {
    let hop = trace.hops.get(pos.hop)?;
    let width = 300.0;
    let x = (pos.point.x + 16.0)
        .min(store.scene.with(|s| s.width) - width - 4.0)
        .max(4.0);
    let y = (pos.point.y - 54.0).max(4.0);
    let src_changed = hop.before.src != hop.after.src;
    let dst_changed = hop.before.dst != hop.after.dst;
    let reply = matches!(hop.what, HopKind::Reply);
    Some(Card {
        x,
        y,
        src: format!(
            "{} {}{}",
            crate::i18n::tr(lang, "packet.src"),
            hop_src(
                src_changed,
                &hop.before.src.to_string(),
                &hop.after.src.to_string()
            ),
            if reply { " ↩" } else { "" }
        ),
        dst: format!(
            "{} {}",
            crate::i18n::tr(lang, "packet.dst"),
            hop_src(
                dst_changed,
                &hop.before.dst.to_string(),
                &hop.after.dst.to_string()
            )
        ),
        src_changed,
        dst_changed,
    })
}

/// The focused packet's addresses at its current hop, the rewritten one marked.
/// Its elements are made once; only their attributes and text follow the packet.
#[component]
fn PacketCard() -> impl IntoView {
    let store = expect_context::<Store>();
    let l = super::lang();
    let card = Memo::new(move |_| {
        let now = store.now.get();
        let reduced = store.reduced_motion.get();
        let lang = l.get();
        let pos = store
            .with_focused_flight(|f| f.position(now, reduced))
            .flatten()?;
        store
            .with_focused_trace(|trace| card_at(trace, pos, store, lang))
            .flatten()
    });
    let get =
        move |f: fn(&Card) -> String| move || card.with(|c| c.as_ref().map(f).unwrap_or_default());
    view! {
        <Show when=move || card.with(Option::is_some)>
            <g class="packet-card" data-testid="packet-card" pointer-events="none">
                <rect x=get(|c| n(c.x)) y=get(|c| n(c.y)) width="300" height="46" rx="6" />
                <text x=get(|c| n(c.x + 8.0)) y=get(|c| n(c.y + 18.0)) class="mono small"
                    class:rewritten=move || card.with(|c| c.as_ref().is_some_and(|c| c.src_changed))>
                    {get(|c| c.src.clone())}
                </text>
                <text x=get(|c| n(c.x + 8.0)) y=get(|c| n(c.y + 36.0)) class="mono small"
                    class:rewritten=move || card.with(|c| c.as_ref().is_some_and(|c| c.dst_changed))>
                    {get(|c| c.dst.clone())}
                </text>
            </g>
        </Show>
    }
}

fn hop_src(changed: bool, before: &str, after: &str) -> String {
    if changed {
        format!("{before} → {after}")
    } else {
        after.to_string()
    }
}

/// The whole diagram.
#[component]
pub fn Diagram() -> impl IntoView {
    let store = expect_context::<Store>();
    let view_box = move || {
        store
            .scene
            .with(|s| format!("0 0 {} {}", s.width, s.height))
    };
    view! {
        <svg class="diagram" data-testid="diagram" viewBox=view_box role="img" aria-label=t("a11y.diagram")>
            <Cluster />
            <Packets />
            <PacketCard />
        </svg>
    }
}
