//! The cluster diagram: an SVG in the scene's fixed logical space, with the
//! packets in flight drawn over it.
//!
//! Markup only: every position comes from [`kpv_core::view::scene::Scene`] and
//! [`kpv_core::view::timeline::Flight`]; readiness and verdicts are shown with a
//! shape and a word, never by colour alone.

use super::app_toggle::AppToggle;
use super::card::PacketCard;
use super::chips::{chip_room, live_chips, Chip, LiveChips};
use super::{lang, outcome_class, outcome_mark, t};
use crate::hops::{chip_text, short, short_middle, step_name};
use crate::i18n::tr;
use crate::measure::{fits, n, wrap};
use crate::state::{lookup, Store};
use kpv_core::model::{Mode, NamespacedName, ServiceType};
use kpv_core::net::controller::{AppState, ProbeKind};
use kpv_core::net::trace::HopKind;
use kpv_core::view::pipeline::{compared_so_far, pipelines, skeleton, Pipeline, Slot};
use kpv_core::view::scene::Rect;
use leptos::prelude::*;

/// NodePorts written on a node's eth0 badge before "+N".
const MAX_NODE_PORTS: usize = 4;

#[component]
fn BoxRect(rect: Rect, class: &'static str) -> impl IntoView {
    view! { <rect class=class x=n(rect.x) y=n(rect.y) width=n(rect.w) height=n(rect.h) rx="8" /> }
}

/// A node's mode glyph: a shape per mode, so the modes differ with their
/// words hidden (a rule list walked top to bottom, a hash table, a verdict
/// map, a process, Cilium's hexagon of BPF maps).
fn mode_glyph(mode: Mode) -> &'static str {
    match mode {
        Mode::Iptables => "☰",
        Mode::Ipvs => "#",
        Mode::Nftables => "⇶",
        Mode::Userspace => "⚙",
        Mode::Cilium => "⬡",
    }
}

/// Nodes the cloud load balancer skips, with the Service they fail its
/// health check for (kpv-core decides, as the trace does).
fn lb_skipped(store: Store) -> Memo<kpv_core::model::Labels> {
    Memo::new(move |_| {
        let mode = store.mode.get();
        store.parsed.with(|(c, _)| {
            store.proxy_slices.with(|sl| {
                kpv_core::net::trace::lb_skipped_nodes(c, sl, mode)
                    .into_iter()
                    .map(|(node, svc)| (node, svc.name))
                    .collect()
            })
        })
    })
}

/// The static part: wires, client, load balancer, Services, nodes, Pods.
#[component]
fn Cluster(open_pod: RwSignal<Option<NamespacedName>>, chips: Memo<Vec<Chip>>) -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    let skipped = lb_skipped(store);
    let pointed = super::pointing::pointed();
    // The ClusterIP the focused packet is addressed to at this hop (before
    // kube-proxy rewrites it): its Service box is lit, so a connection to a
    // Service (an HTTP proxy's with service-upstream) is seen going via it.
    let via = Memo::new(move |_| {
        let hop = store.current_hop()?;
        store
            .with_focused_trace(|t| t.hops.get(hop).map(|h| h.before.dst.ip().to_string()))
            .flatten()
    });
    move || {
        let skipped = skipped.get();
        let mode = store.mode.get();
        let ready = store.pod_ready.get();
        let received = store.received.get();
        store.scene.with(|s| {
            let links = s
                .links
                .iter()
                .map(|k| {
                    let skip = k.kind == "entry" && k.nodes.len() == 1 && skipped.contains_key(&k.nodes[0]);
                    view! {
                        <line class=format!("link {}{}", k.kind, if skip { " skipped" } else { "" }) data-testid="link" data-nodes=k.nodes.join(",")
                            x1=n(k.from.x) y1=n(k.from.y) x2=n(k.to.x) y2=n(k.to.y) />
                    }
                })
                .collect_view();
            let c = s.client;
            let client = view! {
                <g class="client" data-testid="client" data-ref="client" class:pointed=move || pointed.has("client")>
                    <BoxRect rect=c class="client-box" />
                    <text x=n(c.x + 10.0) y=n(c.y + 22.0) class="title">{tr(l.get(), "diagram.client")}</text>
                    <text x=n(c.x + 10.0) y=n(c.y + 43.0) class="mono">"198.51.100.7"</text>
                </g>
            };
            let lb = s.load_balancer.map(|r| {
                let ips = s.load_balancer_ips.join(", ");
                let title = if s.load_balancer_assumed { "diagram.lb_assumed" } else { "diagram.lb" };
                view! {
                    <g class="lb" data-testid="load-balancer" data-ref="lb" class:pointed=move || pointed.has("lb")>
                        <BoxRect rect=r class="lb-box" />
                        <text x=n(r.x + 10.0) y=n(r.y + 22.0) class="title">{tr(l.get(), title)}{lb_why(l.get(), s.load_balancer_assumed)}</text>
                        <text x=n(r.x + 10.0) y=n(r.y + 43.0) class="mono">{short(&ips, fits(r.w - 20.0, 16.0))}<title>{ips.clone()}</title></text>
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
            let mode_word = super::modewait::mode_name(mode);
            let edges = s
                .edges
                .iter()
                .filter_map(|e| {
                    let from = s.services.iter().find(|x| x.id == e.service)?.rect;
                    let to = s.pods.iter().find(|p| p.id == e.pod)?.rect;
                    let d = format!(
                        "M{} {} C{} {} {} {} {} {}",
                        n(from.x + from.w / 2.0), n(from.y + from.h),
                        n(from.x + from.w / 2.0), n(from.y + from.h + 80.0),
                        n(to.x + to.w - 20.0), n(to.y - 80.0),
                        n(to.x + to.w - 20.0), n(to.y)
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
                    let kind = match svc.service_type {
                        ServiceType::ClusterIP => "ClusterIP",
                        ServiceType::NodePort => "NodePort",
                        ServiceType::LoadBalancer => "LoadBalancer",
                        ServiceType::ExternalName => "ExternalName",
                    };
                    let full = format!("{}\n{kind} {}\n{}", svc.id, svc.cluster_ip, svc.ports.join("\n"));
                    let key = format!("svc:{}", svc.id);
                    // The type and address; in a narrow box the address alone
                    // (a ClusterIP) or with the short type (the tooltip has it whole).
                    let room = fits(r.w - 20.0, 16.0);
                    let line2 = [format!("{kind} {}", svc.cluster_ip), short_kind(svc.service_type, &svc.cluster_ip)]
                        .into_iter()
                        .find(|l| l.chars().count() <= room)
                        .unwrap_or_else(|| format!("{kind} {}", svc.cluster_ip));
                    let ip = svc.cluster_ip.clone();
                    let ip2 = ip.clone();
                    // kpv-core's warnings about this Service (a selector that
                    // matches nothing, a pending load balancer): a mark with them.
                    let warned = store.warnings_by_object.with(|w| lookup(w, format!("Service/{}", svc.id).as_str()).map(|m| m.join("\n")));
                    let mark = warned.clone().map(|m| view! {
                        <text class="warn-mark" data-testid="warning-mark" x=n(r.x + r.w - 20.0) y=n(r.y + 21.0)><title>{m}</title>"⚠"</text>
                    });
                    // The texts sit in a nested viewport, which clips what is
                    // wider than a narrow box; the whole text is the tooltip.
                    view! {
                        <g class="service" data-testid=format!("service-{}", svc.id.name) data-warning=warned
                            data-ref=key.clone() class:pointed=move || pointed.has(&key)
                            class:via=move || via.with(|v| v.as_deref() == Some(ip.as_str()))
                            data-via=move || via.with(|v| v.as_deref() == Some(ip2.as_str())).to_string()>
                            <title>{full}</title>
                            <BoxRect rect=r class="service-box" />
                            <svg x=n(r.x) y=n(r.y) width=n(r.w) height=n(r.h)>
                                <text x="10" y="21" class="title">{
                                    // A live chip on the box takes its room from the name.
                                    let name = svc.id.name.clone();
                                    move || short_middle(&name, fits(r.w - 20.0 - chip_room(chips, "endpoints-chip", &name, r.y + 21.0), 17.0))
                                }</text>
                                <text x="10" y="41" class="mono">{short(&line2, fits(r.w - 20.0, 16.0))}</text>
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
                    let key = format!("node:{}", nd.name);
                    // kpv-core's warnings about this Node: a mark with them.
                    let warned = store.warnings_by_object.with(|w| lookup(w, format!("Node/{}", nd.name).as_str()).map(|m| m.join("\n")));
                    let mark = warned.clone().map(|m| view! {
                        <text class="warn-mark" data-testid="warning-mark" x=n(nd.proxy.x - 26.0) y=n(r.y + 24.0)><title>{m}</title>"⚠"</text>
                    });
                    let eth = if node_ports.is_empty() { format!("eth0 {}", nd.ip) } else { format!("eth0 {} {}", nd.ip, node_ports.join(" ")) };
                    let eth_shown = eth_label(&nd.ip, &node_ports, fits(nd.eth.w - 16.0, 16.0));
                    let title_max = fits(nd.proxy.x - r.x - if warned.is_some() { 46.0 } else { 16.0 }, 17.0);
                    let tip = format!("{}{}{}", nd.name, nd.zone.clone().map(|z| format!(" · {z}")).unwrap_or_default(), nd.pod_cidr.clone().map(|c| format!(" · {c}")).unwrap_or_default());
                    let skip = skipped.get(&nd.name).map(|svc| {
                        let text = tr(l.get(), "diagram.lb-skips").replace("{svc}", svc);
                        // On up to three lines, the last at the box's foot.
                        let lines = wrap(&text, r.w - 20.0, 16.5, 3);
                        let count = lines.len();
                        view! {
                            <text x=n(r.x + 10.0) y=n(r.y + r.h - 10.0) class="skip-reason" data-testid="lb-skip-reason">
                                {lines.into_iter().enumerate().map(|(i, line)| view! {
                                    <tspan x=n(r.x + 10.0) y=n(r.y + r.h - 10.0 - (count - 1 - i) as f64 * 21.0)>{line}</tspan>
                                }).collect_view()}<title>{text.clone()}</title>
                            </text>
                        }
                    });
                    view! {
                        <g class="node" class:lb-skipped=skipped.contains_key(&nd.name) data-testid=format!("node-{}", nd.name)
                            data-lb-skipped=skipped.contains_key(&nd.name).to_string()
                            data-ref=key.clone() class:pointed=move || pointed.has(&key) data-warning=warned>
                            <BoxRect rect=r class="node-box" />
                            {skip}
                            {mark}
                            <text x=n(r.x + 10.0) y=n(r.y + 24.0) class="title">{short(&nd.name, title_max)}<title>{tip}</title></text>
                            <g class="mode-glyph" data-testid="mode-glyph" data-mode=mode.as_str()>
                                <BoxRect rect=nd.proxy class="proxy-box" />
                                <text x=n(nd.proxy.x + 8.0) y=n(nd.proxy.y + 18.0) class="glyph" aria-hidden="true">{mode_glyph(mode)}</text>
                                <text x=n(nd.proxy.x + 30.0) y=n(nd.proxy.y + 18.0) class="strong">{short(mode_word, fits(nd.proxy.w - 36.0, 16.0))}</text>
                            </g>
                            <BoxRect rect=nd.eth class="eth-box" />
                            <text x=n(nd.eth.x + 8.0) y=n(nd.eth.y + 18.0) class="mono">{eth_shown}<title>{eth.clone()}</title></text>
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
                    let (mark, word) = if is_ready { ("✔", tr(l.get(), "state.ready")) } else { ("✖", tr(l.get(), "state.not-ready")) };
                    let got = lookup(&received, &p.id).copied().unwrap_or(0);
                    let id = p.id.clone();
                    let tip = format!("{}\n{}\n{}", p.id, p.ip, p.labels.join(", "));
                    let state = pod_state_label(&p.ip, mark, word, r.w);
                    let state_w = crate::measure::drawn_width(&state, 16.0);
                    let key = format!("pod:{}", p.id);
                    // kpv-core's warnings about this Pod (its node is missing,
                    // a probe names a port it lacks): a mark with them.
                    let warned = store.warnings_by_object.with(|w| lookup(w, format!("Pod/{}", p.id).as_str()).map(|m| m.join("\n")));
                    // The mark goes before the name (the top right holds the probe chip).
                    let name_dx = if warned.is_some() { 28.0 } else { 8.0 };
                    let warn_mark = warned.clone().map(|m| view! {
                        <text class="warn-mark" data-testid="warning-mark" x=n(r.x + 6.0) y=n(r.y + 20.0)><title>{m}</title>"⚠"</text>
                    });
                    view! {
                        <g class="pod" class:not-ready=!is_ready data-testid=format!("pod-{}", p.id.name) data-ready=is_ready.to_string() data-received=got.to_string()
                            data-ref=key.clone() class:pointed=move || pointed.has(&key) data-warning=warned
                            role="button" tabindex="0" aria-label=format!("{} — {}", p.id.name, tr(l.get(), "pod.controls"))
                            on:click=move |_| open_pod.update(|o| *o = if o.as_ref() == Some(&id) { None } else { Some(id.clone()) })>
                            <title>{tip}</title>
                            <BoxRect rect=r class="pod-box" />
                            <text x=n(r.x + name_dx) y=n(r.y + 20.0) class="strong">{
                                // The received count, or a live chip, takes its room from the name.
                                let name = p.id.name.clone();
                                move || short_middle(&name, fits(r.w - name_dx - chip_room(chips, "probe-chip", &name, r.y + 20.0).max(44.0) - 8.0, 17.0))
                            }</text>
                            {warn_mark}
                            <text x=n(r.x + 8.0) y=n(r.y + 40.0) class="mono">{short(&p.ip, fits(r.w - state_w - 20.0, 16.0))}</text>
                            <text x=n(r.x + r.w - 8.0) y=n(r.y + 40.0) class="readiness" text-anchor="end">{state}</text>
                            <text x=n(r.x + r.w - 8.0) y=n(r.y + 20.0) class="muted received" text-anchor="end">{if got > 0 { format!("⬇{got}") } else { String::new() }}</text>
                        </g>
                    }
                })
                .collect_view();
            let more = s.more_services.map(|m| {
                let r = m.rect;
                view! {
                    <g class="service more" data-testid="more-services" data-count=m.count.to_string()>
                        <title>{tr(l.get(), "diagram.more-services.where")}</title>
                        <BoxRect rect=r class="service-box more-box" />
                        <svg x=n(r.x) y=n(r.y) width=n(r.w) height=n(r.h)>
                            <text x="10" y="22" class="title">{format!("+{}", m.count)}</text>
                            <text x="10" y="43">{short(tr(l.get(), "diagram.more-services"), fits(r.w - 20.0, 16.0))}</text>
                        </svg>
                    </g>
                }
            });
            view! { {links} {edges} {client} {lb} {nodes} {services} {more} {pods} }
        })
    }
}

/// The open Pod's controls, drawn over the diagram beside its Pod.
#[component]
fn PodControls(open_pod: RwSignal<Option<NamespacedName>>) -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    move || {
        let id = open_pod.get()?;
        let rect = store
            .scene
            .with(|s| s.pods.iter().find(|p| p.id == id).map(|p| p.rect))?;
        let liveness = store.parsed.with(|(c, _)| {
            c.pods
                .iter()
                .any(|p| p.id == id && ProbeKind::Liveness.of(p).is_some())
        });
        // One 38-unit row per button (the liveness one only with a probe).
        let (w, h) = (rect.w.max(230.0), if liveness { 134.0 } else { 96.0 });
        let width = store.scene.with(|s| s.width);
        let x = rect.x.min(width - w - 4.0).max(4.0);
        let y = (rect.y - h - 4.0).max(4.0);
        let name = id.name.clone();
        Some(view! {
            <foreignObject x=n(x) y=n(y) width=n(w) height=n(h) class="pod-controls-fo">
                <div class="pod-controls" data-testid=format!("pod-{name}-controls") role="group" aria-label=tr(l.get(), "pod.controls")>
                    <AppToggle pod=id.clone() state=AppState::FailingReadiness action="readiness" keys=("btn.fail-readiness", "btn.pass-readiness") />
                    <AppToggle pod=id.clone() state=AppState::Down action="app" keys=("btn.app-down", "btn.app-up") />
                    {liveness.then(|| view! {
                        <AppToggle pod=id.clone() state=AppState::FailingLiveness action="liveness" keys=("btn.fail-liveness", "btn.pass-liveness") />
                    })}
                </div>
            </foreignObject>
        })
    }
}

/// The focused packet's pipelines, slots and running rule count.
type PipeInfo = (Vec<Pipeline>, Vec<Option<Slot>>, Vec<usize>);

/// The open node's pipeline: the steps the focused packet takes through
/// that node's kube-proxy rules, the current one marked, with what each
/// step rewrote; at rest, the mode's shape for the kube-proxy node.
#[component]
fn PipelineStrip() -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    let pointed = super::pointing::pointed();
    let info = Memo::new(move |_| -> Option<PipeInfo> {
        store.with_focused_trace(|t| {
            let (p, s) = pipelines(t);
            (p, s, compared_so_far(t))
        })
    });
    // (pipeline shown, current box, hops passed, rules compared so far)
    let at = Memo::new(move |_| {
        let hop = store.current_hop();
        info.with(|i| {
            let (pipes, slots, compared) = i.as_ref()?;
            if pipes.is_empty() {
                return None;
            }
            let hop = hop.unwrap_or(0);
            let here = slots.get(hop).copied().flatten();
            let shown = here.map(|s| s.pipeline).unwrap_or_else(|| {
                slots[..=hop.min(slots.len().saturating_sub(1))]
                    .iter()
                    .rev()
                    .find_map(|s| s.map(|s| s.pipeline))
                    .unwrap_or(0)
            });
            Some((
                shown,
                here.filter(|s| s.pipeline == shown).map(|s| s.boxed),
                hop,
                compared.get(hop).copied().unwrap_or(0),
            ))
        })
    });
    move || {
        let lg = l.get();
        let mode = store.mode.get();
        let (strip, scene_nodes) = store.scene.with(|s| {
            (
                s.strip,
                s.nodes
                    .iter()
                    .map(|n| (n.name.clone(), n.rect))
                    .collect::<Vec<_>>(),
            )
        });
        let mode_word = mode.as_str();
        let current = at.get();
        let boxes: Vec<StripBox> = match current {
            Some((shown, cur, hop, _)) => info
                .with(|i| {
                    i.as_ref()
                        .and_then(|(pipes, _, _)| pipes.get(shown))
                        .map(|p| {
                            let chars = store.scene.with(|s| s.box_chars(&p.boxes));
                            p.boxes
                                .iter()
                                .zip(chars)
                                .enumerate()
                                .map(|(k, (b, chars))| {
                                    let name = step_name(lg, b.key);
                                    let detail = if !b.chips.is_empty() {
                                        b.chips
                                            .iter()
                                            .map(|c| chip_text(lg, c))
                                            .collect::<Vec<_>>()
                                            .join(" · ")
                                    } else if name.contains(&b.chain) || b.chain == b.key {
                                        String::new()
                                    } else {
                                        b.chain.clone()
                                    };
                                    let passed =
                                        b.hops.last().is_some_and(|&h| h < hop) && cur != Some(k);
                                    StripBox {
                                        key: b.key,
                                        // A chipless box's detail is its
                                        // chain's name (where the packet
                                        // is, which may be shortened), not
                                        // a value.
                                        chain: b.chips.is_empty() && !detail.is_empty(),
                                        name,
                                        detail,
                                        current: cur == Some(k),
                                        passed,
                                        chars,
                                    }
                                })
                                .collect()
                        })
                })
                .unwrap_or_default(),
            None => skeleton(mode)
                .iter()
                .map(|&key| StripBox {
                    key,
                    name: step_name(lg, key),
                    detail: String::new(),
                    current: false,
                    passed: false,
                    chain: false,
                    chars: store.scene.with(|s| s.bare_box_chars(key)),
                })
                .collect(),
        };
        let node = match current {
            Some((shown, ..)) => info.with(|i| {
                i.as_ref()
                    .and_then(|(p, _, _)| p.get(shown))
                    .map(|p| p.node.clone())
            }),
            None => store
                .parsed
                .with(|(c, _)| c.proxy_node().map(|n| n.name.clone())),
        }
        .unwrap_or_default();
        let at_rest = current.is_none();
        let (proxy, socket) = current
            .and_then(|(shown, ..)| {
                info.with(|i| {
                    i.as_ref()
                        .and_then(|(p, _, _)| p.get(shown))
                        .map(|p| (p.proxy.clone(), p.socket.clone()))
                })
            })
            .unwrap_or_default();
        let heading = if let Some((m, load)) = store.mode_wait() {
            super::modewait::wait_text(lg, m, load, true)
        } else if let Some(pod) = &proxy {
            tr(lg, "http.pipeline").replace("{pod}", &pod.name)
        } else if let Some(pod) = &socket {
            tr(lg, "pipeline.socket")
                .replace("{pod}", &pod.name)
                .replace("{mode}", mode_word)
        } else if at_rest {
            tr(lg, "pipeline.rest").replace("{mode}", mode_word)
        } else {
            tr(lg, "pipeline.node")
                .replace("{node}", &node)
                .replace("{mode}", mode_word)
        };
        let compared =
            current.map(|c| tr(lg, "pipeline.compared").replace("{n}", &c.3.to_string()));
        let chars: Vec<(usize, usize)> = boxes.iter().map(|b| b.chars).collect();
        let zoom = scene_nodes
            .iter()
            .find(|(nm, _)| *nm == node)
            .map(|(_, r)| {
                let (sx0, sx1, sy) = (strip.x, strip.x + strip.w, strip.y + strip.h);
                format!(
                    "M{} {} L{} {} L{} {} L{} {} Z",
                    n(sx0),
                    n(sy),
                    n(sx1),
                    n(sy),
                    n(r.x + r.w),
                    n(r.y),
                    n(r.x),
                    n(r.y)
                )
            });
        let views = boxes
            .into_iter()
            .enumerate()
            .map(|(k, b)| {
                let StripBox { key, name, detail, current: is_current, passed, chain, .. } = b;
                let r = store.scene.with(|s| s.strip_box(k, &chars));
                let tick = if passed { "✓ " } else if is_current { "▶ " } else { "" };
                let title = format!("{name}\n{detail}");
                let rk = format!("step:{key}");
                view! {
                    <g class="pipeline-step" class:current=is_current class:passed=passed data-testid="pipeline-step"
                        data-step=key data-current=is_current.to_string()
                        data-ref=rk.clone() class:pointed=move || pointed.has(&rk)>
                        <title>{title}</title>
                        <BoxRect rect=r class="step-box" />
                        <text x=n(r.x + 8.0) y=n(r.y + 20.0) class="strong">{short(&format!("{tick}{name}"), fits(r.w - 14.0, 16.5))}</text>
                        <text x=n(r.x + 8.0) y=n(r.y + 38.0) class="mono chip" class:chain=chain>{short(&detail, fits(r.w - 14.0, 16.0))}</text>
                    </g>
                }
            })
            .collect_view();
        view! {
            <g class="node-pipeline" class:at-rest=at_rest data-testid="node-pipeline" data-node=node.clone() data-mode=mode_word>
                {zoom.map(|d| view! { <path class="zoom" d=d /> })}
                <text x=n(strip.x) y=n(strip.y - 6.0) class="strong" data-testid="pipeline-heading">{heading}</text>
                {compared.map(|c| view! { <text x=n(strip.x + strip.w) y=n(strip.y - 6.0) class="strong" text-anchor="end" data-testid="rules-compared">{c}</text> })}
                {views}
            </g>
        }
    }
}

/// A Pod box's readiness on its second line: the mark and the word when
/// they fit beside the Pod's whole address in a box `w` wide, else the mark
/// alone (the box's colour and its tooltip still say it; the address is an
/// answer and is never cut for the word).
fn pod_state_label(ip: &str, mark: &str, word: &str, w: f64) -> String {
    let both = format!("{mark} {word}");
    let room = w - 20.0 - crate::measure::drawn_width(ip, 16.0);
    if crate::measure::drawn_width(&both, 16.0) <= room {
        both
    } else {
        mark.to_string()
    }
}

/// A node's interface label in `max` characters: `eth0`, its address and
/// its NodePorts; when that is too long the interface's name goes first
/// (it carries no answer), then the last ports are counted (`+2`). The
/// address is never cut.
fn eth_label(ip: &str, ports: &[String], max: usize) -> String {
    let with = |k: usize| {
        let mut s = ip.to_string();
        for p in ports.iter().take(k) {
            s.push(' ');
            s.push_str(p);
        }
        if k < ports.len() {
            s.push_str(&format!(" +{}", ports.len() - k));
        }
        s
    };
    let whole = format!("eth0 {}", with(ports.len()));
    if whole.chars().count() <= max {
        return whole;
    }
    (0..=ports.len())
        .rev()
        .map(with)
        .find(|s| s.chars().count() <= max)
        .unwrap_or_else(|| ip.to_string())
}

/// A strip box as drawn.
struct StripBox {
    key: &'static str,
    name: String,
    detail: String,
    current: bool,
    passed: bool,
    /// Its detail is a chain's name (`.chain`: it may be shortened).
    chain: bool,
    /// (name, wider line) characters, for [`kpv_core::view::scene::Scene::strip_box`].
    chars: (usize, usize),
}

/// The focused packet's trail so far: runs of legs on one connection
/// (connection, points), and where each finished hop ended (hop, point).
type Trail = Option<(
    Vec<(usize, Vec<kpv_core::view::scene::Point>)>,
    Vec<(usize, kpv_core::view::scene::Point)>,
)>;

fn trail_memo(store: Store) -> Memo<Trail> {
    // Each hop's connection (an HTTP proxy opens a second one).
    let conns = Memo::new(move |_| {
        store
            .with_focused_trace(kpv_core::view::pipeline::connections)
            .unwrap_or_default()
    });
    Memo::new(move |_| {
        let now = store.now.get();
        let rm = store.reduced_motion.get();
        conns.with(|conns| {
            store.with_focused_flight(|f| {
                // Runs of legs on one connection: (connection, points).
                let mut runs: Vec<(usize, Vec<kpv_core::view::scene::Point>)> = Vec::new();
                let mut ends: Vec<(usize, kpv_core::view::scene::Point)> = Vec::new();
                for leg in f.legs.iter().filter(|l| l.start_ms <= now) {
                    let c = conns.get(leg.hop).copied().unwrap_or(0);
                    if runs.last().is_none_or(|r| r.0 != c) {
                        // A new run starts where the last one ended.
                        let from = runs.last().and_then(|r| r.1.last().copied());
                        runs.push((c, from.into_iter().collect()));
                    }
                    let Some((_, pts)) = runs.last_mut() else {
                        continue;
                    };
                    if now >= leg.end_ms {
                        pts.extend(leg.points.iter().copied());
                        if let Some(p) = leg.points.last() {
                            ends.push((leg.hop, *p));
                        }
                    } else if let Some(p) = f.position(now, rm) {
                        // Along the leg's route so far, then to the packet.
                        pts.extend(leg.points.iter().take(p.passed.max(1)).copied());
                        pts.push(p.point);
                    }
                }
                (runs, ends)
            })
        })
    })
}

/// The route the focused packet has taken so far, kept after it arrives,
/// with a mark where its header was rewritten. Each connection is its own
/// line (an HTTP proxy's second connection crosses the pipeline strip
/// again): the current one strong, earlier ones faint and dashed (their
/// numbers are [`TrailNumbers`]).
#[component]
fn PathTrail(trail: Memo<Trail>) -> impl IntoView {
    let store = expect_context::<Store>();
    let changes = Memo::new(move |_| {
        trail.with(|t| {
            let Some((_, ends)) = t else {
                return Vec::new();
            };
            store
                .with_focused_trace(|tr| {
                    ends.iter()
                        .filter(|(h, _)| {
                            tr.hops.get(*h).is_some_and(|h| {
                                h.before != h.after && !matches!(h.what, HopKind::Reply { .. })
                            })
                        })
                        .map(|(_, p)| *p)
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
    });
    move || {
        trail.with(|t| {
            let (runs, _) = t.as_ref()?;
            // Only the last run is strong: earlier connections (and the
            // client's, while its reply goes back) are drawn faint.
            let last = runs.len().checked_sub(1)?;
            let paths = runs
                .iter()
                .enumerate()
                .filter(|(_, (_, pts))| pts.len() >= 2)
                .map(|(i, (c, pts))| {
                    let d = pts
                        .iter()
                        .enumerate()
                        .map(|(i, p)| format!("{}{} {}", if i == 0 { "M" } else { "L" }, n(p.x), n(p.y)))
                        .collect::<Vec<_>>()
                        .join(" ");
                    let now = i == last;
                    view! {
                        <path class="path-trail" class:earlier=!now d=d data-connection=(c + 1).to_string()
                            data-testid=if now { "path-trail" } else { "path-trail-earlier" } />
                    }
                })
                .collect_view();
            let marks = changes.get().into_iter().map(|p| view! {
                <g class="trail-change" data-testid="trail-change" transform=format!("translate({} {})", n(p.x), n(p.y))>
                    <rect x="-7" y="-7" width="14" height="14" transform="rotate(45)" />
                </g>
            }).collect_view();
            Some(view! {
                <g class="trail">
                    {paths}
                    {marks}
                </g>
            })
        })
    }
}

/// With two connections in the trail, each numbered where it starts, on
/// top of the boxes (the current one's number strong).
#[component]
fn TrailNumbers(trail: Memo<Trail>) -> impl IntoView {
    move || {
        trail.with(|t| {
            let (runs, _) = t.as_ref()?;
            let current = runs.last()?.0;
            if runs.iter().all(|r| r.0 == current) {
                return None;
            }
            let mut badges: Vec<(usize, kpv_core::view::scene::Point)> = Vec::new();
            for (c, pts) in runs {
                if pts.len() < 2 || badges.iter().any(|(b, _)| b == c) {
                    continue;
                }
                // Halfway along the connection's first real stretch.
                let stretch = pts
                    .windows(2)
                    .find(|w| (w[1].x - w[0].x).abs() + (w[1].y - w[0].y).abs() > 40.0)
                    .unwrap_or(&pts[..2]);
                let at = kpv_core::view::scene::Point {
                    x: (stretch[0].x + stretch[1].x) / 2.0,
                    y: (stretch[0].y + stretch[1].y) / 2.0,
                };
                badges.push((*c, at));
            }
            let view = badges
                .into_iter()
                .map(|(c, p)| {
                    view! {
                        <g class="trail-number" class:earlier=c != current data-testid="trail-number"
                            data-connection=(c + 1).to_string() transform=format!("translate({} {})", n(p.x), n(p.y))
                            pointer-events="none">
                            <circle r="13" />
                            <text text-anchor="middle" y="6">{(c + 1).to_string()}</text>
                        </g>
                    }
                })
                .collect_view();
            Some(view! { <g class="trail-numbers">{view}</g> })
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
        // Paused, the packets in flight other than the focused one step
        // back: the card and the strip speak of the focused one.
        let paused = !store.playing.get();
        // Only the packets that can be on screen now: delivered ones are
        // retired, however many were sent before.
        // A Vec sorted by id, not a BTreeMap: built once per frame and only
        // searched, it needs none of the map's code.
        let mut looks: Vec<(u32, Look)> = store.with_played(|played| {
            played
                .on_screen(t)
                .filter_map(|(id, trace, f)| {
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
                    } else if paused && !p.done {
                        class.push_str(" behind");
                    }
                    Some((
                        id,
                        Look {
                            transform: format!("translate({} {})", n(p.point.x), n(p.point.y)),
                            class,
                            mark,
                        },
                    ))
                })
                .collect()
        });
        kpv_core::util::order::sort_by(&mut looks, |a, b| a.0.cmp(&b.0));
        looks
    });
    let ids = Memo::new(move |_| looks.with(|l| l.iter().map(|(id, _)| *id).collect::<Vec<u32>>()));
    let group = NodeRef::<leptos::svg::G>::new();
    // What each element was last given, so unchanged attributes are not rewritten.
    // Sorted by id, as `looks`.
    let applied = StoredValue::new_local(Vec::<(u32, Look)>::new());
    Effect::new(move |_| {
        let Some(g) = group.get() else { return };
        looks.with(|looks| {
            applied.update_value(|applied| {
                let find = |v: &[(u32, Look)], id: u32| v.binary_search_by(|(k, _)| k.cmp(&id));
                applied.retain(|(id, _)| find(looks, *id).is_ok());
                let children = g.children();
                for i in 0..children.length() {
                    let Some(el) = children.item(i) else { continue };
                    let Some(id) = el
                        .get_attribute("data-id")
                        .and_then(|v| v.parse::<u32>().ok())
                    else {
                        continue;
                    };
                    let Ok(at) = find(looks, id) else { continue };
                    let look = &looks[at].1;
                    let slot = find(applied, id);
                    let before = slot.ok().map(|i| &applied[i].1);
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
                    match slot {
                        Ok(i) => applied[i].1 = look.clone(),
                        Err(i) => applied.insert(i, (id, look.clone())),
                    }
                }
            });
        });
    });
    view! {
        <g class="packets" node_ref=group>
            <For each=move || ids.get() key=|id| *id let:id>
                <g data-testid="packet" data-id=id.to_string() class="packet"
                    on:click=move |_| {
                        // Clicking a packet pins its card: pause on it.
                        store.focus.set(Some(id));
                        store.playing.set(false);
                    }>
                    <circle r="9" />
                    <text class="mark" text-anchor="middle" y="4"></text>
                </g>
            </For>
        </g>
    }
}

/// Why the load balancer is called assumed, as its title's tooltip (the
/// full app's: the README says it for the embed's readers).
#[cfg(feature = "full")]
fn lb_why(lg: crate::i18n::Lang, assumed: bool) -> Option<AnyView> {
    assumed.then(|| {
        let text = crate::why::lb_assumed(lg);
        view! { <title>{text}</title> }.into_any()
    })
}

#[cfg(not(feature = "full"))]
fn lb_why(_: crate::i18n::Lang, _: bool) -> Option<AnyView> {
    None
}

/// A Service's type and address in few characters: `10.96.0.10` for a
/// ClusterIP, `NP 10.96.0.10` for a NodePort, `LB …` for a LoadBalancer.
fn short_kind(t: ServiceType, ip: &str) -> String {
    match t {
        ServiceType::ClusterIP => ip.to_string(),
        ServiceType::NodePort => format!("NP {ip}"),
        ServiceType::LoadBalancer => format!("LB {ip}"),
        ServiceType::ExternalName => format!("ExternalName {ip}"),
    }
}

/// The whole diagram.
#[component]
pub fn Diagram() -> impl IntoView {
    let store = expect_context::<Store>();
    let open_pod = RwSignal::new(None::<NamespacedName>);
    let trail = trail_memo(store);
    let chips = live_chips(store);
    let view_box = move || {
        store
            .scene
            .with(|s| format!("0 0 {} {}", n(s.width), n(s.height)))
    };
    // The mode in use, while its code is on its way or failed to come.
    let in_use = Signal::derive(move || vec![store.mode.get()]);
    view! {
        <super::modewait::ModeWait modes=in_use id="mode" />
        <svg class="diagram" data-testid="diagram" viewBox=view_box role="img" aria-label=t("a11y.diagram")
            preserveAspectRatio="xMidYMin meet">
            <Cluster open_pod=open_pod chips=chips />
            <PipelineStrip />
            // The route so far, above every box (below the chips, the
            // packets and the card): it is what the learner follows.
            <PathTrail trail=trail />
            <LiveChips chips=chips />
            <TrailNumbers trail=trail />
            <Packets />
            <PacketCard />
            <PodControls open_pod=open_pod />
        </svg>
    }
}

#[cfg(test)]
mod tests {
    use super::{eth_label, pod_state_label};

    #[test]
    fn a_narrow_pod_box_keeps_its_address_whole_and_drops_the_readiness_word() {
        assert_eq!(
            pod_state_label("10.244.1.21", "✔", "Ready", 400.0),
            "✔ Ready"
        );
        assert_eq!(
            pod_state_label("10.244.1.21", "✔", "Ready", 200.0),
            "✔ Ready"
        );
        assert_eq!(pod_state_label("10.244.1.21", "✔", "Ready", 186.0), "✔");
        assert_eq!(
            pod_state_label("10.244.100.200", "✖", "Not ready", 186.0),
            "✖"
        );
        assert_eq!(
            pod_state_label("fd00:10:244:1::2", "✔", "준비됨", 186.0),
            "✔"
        );
        let room = 186.0 - 20.0 - crate::measure::drawn_width("✖", 16.0);
        assert!(crate::measure::drawn_width("10.244.100.200", 16.0) <= room);
    }

    #[test]
    fn an_interface_label_drops_its_name_then_counts_ports_but_keeps_the_address() {
        let ports = [":30080".to_string(), ":30443".to_string()];
        let ip = "192.168.49.11";
        assert_eq!(
            eth_label(ip, &ports, 40),
            "eth0 192.168.49.11 :30080 :30443"
        );
        assert_eq!(eth_label(ip, &ports, 27), "192.168.49.11 :30080 :30443");
        assert_eq!(eth_label(ip, &ports, 23), "192.168.49.11 :30080 +1");
        assert_eq!(eth_label(ip, &ports, 16), "192.168.49.11 +2");
        assert_eq!(eth_label(ip, &ports, 5), "192.168.49.11");
        assert_eq!(eth_label(ip, &[], 18), "eth0 192.168.49.11");
        assert_eq!(eth_label(ip, &[], 10), "192.168.49.11");
    }
}
