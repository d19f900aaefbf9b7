//! The diagram's static part: the wires, the client, the load balancer,
//! the Services, the nodes with their kube-proxy and eth0, the Pods, and
//! the open Pod's controls.

use super::BoxRect;
use crate::components::app_toggle::AppToggle;
use crate::components::chips::{chip_room, Chip};
use crate::components::lang;
use crate::hops::{short, short_middle};
use crate::i18n::tr;
use crate::measure::{fits, n, wrap};
use crate::state::{lookup, Store};
use kpv_core::model::{Mode, NamespacedName, ServiceType};
use kpv_core::net::controller::{AppState, ProbeKind};
use kpv_core::view::scene::{NodeBox, PodBox, ServiceBox};
use leptos::prelude::*;

/// NodePorts written on a node's eth0 badge before "+N".
const MAX_NODE_PORTS: usize = 4;

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
pub(super) fn Cluster(
    open_pod: RwSignal<Option<NamespacedName>>,
    chips: Memo<Vec<Chip>>,
) -> impl IntoView {
    let store = expect_context::<Store>();
    let l = lang();
    let skipped = lb_skipped(store);
    let pointed = crate::components::pointing::pointed();
    // The ClusterIP the focused packet is addressed to at this hop (before
    // kube-proxy rewrites it): its Service box is lit, so a connection to a
    // Service (an HTTP proxy's with service-upstream) is seen going via it.
    let via = Memo::new(move |_| {
        let hop = store.current_hop()?;
        store
            .with_focused_trace(|t| t.hops.get(hop).map(|h| h.before.dst.ip().to_string()))
            .flatten()
    });
    let d = Boxes {
        store,
        l,
        pointed,
        via,
        chips,
        open_pod,
    };
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
            let services = s.services.iter().map(|svc| d.service(svc)).collect_view();
            let nodes = s
                .nodes
                .iter()
                .map(|nd| d.node(nd, mode, &skipped, &node_ports))
                .collect_view();
            let pods = s
                .pods
                .iter()
                .map(|p| d.pod(p, &ready, &received))
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

/// What every box of the cluster reads.
#[derive(Clone, Copy)]
struct Boxes {
    store: Store,
    l: RwSignal<crate::i18n::Lang>,
    pointed: crate::components::pointing::Pointed,
    via: Memo<Option<String>>,
    chips: Memo<Vec<Chip>>,
    open_pod: RwSignal<Option<NamespacedName>>,
}

impl Boxes {
    /// A Service: its name, type and address, lit while the packet is
    /// addressed to it.
    fn service(self, svc: &ServiceBox) -> impl IntoView {
        let Boxes {
            store,
            pointed,
            via,
            chips,
            ..
        } = self;
        let r = svc.rect;
        let kind = match svc.service_type {
            ServiceType::ClusterIP => "ClusterIP",
            ServiceType::NodePort => "NodePort",
            ServiceType::LoadBalancer => "LoadBalancer",
            ServiceType::ExternalName => "ExternalName",
        };
        let full = format!(
            "{}\n{kind} {}\n{}",
            svc.id,
            svc.cluster_ip,
            svc.ports.join("\n")
        );
        let key = format!("svc:{}", svc.id);
        // The type and address; in a narrow box the address alone
        // (a ClusterIP) or with the short type (the tooltip has it whole).
        let room = fits(r.w - 20.0, 16.0);
        let line2 = [
            format!("{kind} {}", svc.cluster_ip),
            short_kind(svc.service_type, &svc.cluster_ip),
        ]
        .into_iter()
        .find(|l| l.chars().count() <= room)
        .unwrap_or_else(|| format!("{kind} {}", svc.cluster_ip));
        // A name too long for the title size in its box is drawn at the
        // size of the box's address (the layout gave it that room).
        let tight = svc.id.name.chars().count() > fits(r.w - 20.0, 17.0);
        let px = if tight { 16.5 } else { 17.0 };
        let ip = svc.cluster_ip.clone();
        let ip2 = ip.clone();
        // kpv-core's warnings about this Service (a selector that
        // matches nothing, a pending load balancer): a mark with them.
        let warned = store
            .warnings_by_object
            .with(|w| lookup(w, format!("Service/{}", svc.id).as_str()).map(|m| m.join("\n")));
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
                    <text x="10" y="21" class="title" class:tight=tight>{
                        // A live chip on the box takes its room from the name.
                        let name = svc.id.name.clone();
                        move || short_middle(&name, fits(r.w - 20.0 - chip_room(chips, "endpoints-chip", &name, r.y + 21.0), px))
                    }</text>
                    <text x="10" y="41" class="mono">{short(&line2, fits(r.w - 20.0, 16.0))}</text>
                </svg>
                {mark}
            </g>
        }
    }

    /// A node: its name, kube-proxy's mode, eth0 with its NodePorts, and
    /// why the load balancer skips it, if it does.
    fn node(
        self,
        nd: &NodeBox,
        mode: Mode,
        skipped: &kpv_core::model::Labels,
        node_ports: &[String],
    ) -> impl IntoView {
        let Boxes {
            store, l, pointed, ..
        } = self;
        let mode_word = crate::components::modewait::mode_name(mode);
        let r = nd.rect;
        let key = format!("node:{}", nd.name);
        // kpv-core's warnings about this Node: a mark with them.
        let warned = store
            .warnings_by_object
            .with(|w| lookup(w, format!("Node/{}", nd.name).as_str()).map(|m| m.join("\n")));
        let mark = warned.clone().map(|m| view! {
            <text class="warn-mark" data-testid="warning-mark" x=n(nd.proxy.x - 26.0) y=n(r.y + 24.0)><title>{m}</title>"⚠"</text>
        });
        let eth = if node_ports.is_empty() {
            format!("eth0 {}", nd.ip)
        } else {
            format!("eth0 {} {}", nd.ip, node_ports.join(" "))
        };
        let eth_shown = eth_label(&nd.ip, node_ports, fits(nd.eth.w - 16.0, 16.0));
        let title_max = fits(
            nd.proxy.x - r.x - if warned.is_some() { 46.0 } else { 16.0 },
            17.0,
        );
        let tip = format!(
            "{}{}{}",
            nd.name,
            nd.zone
                .clone()
                .map(|z| format!(" · {z}"))
                .unwrap_or_default(),
            nd.pod_cidr
                .clone()
                .map(|c| format!(" · {c}"))
                .unwrap_or_default()
        );
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
    }

    /// A Pod: its name, address, readiness and packets received; a click
    /// opens its controls.
    fn pod(
        self,
        p: &PodBox,
        ready: &kpv_core::net::controller::PodReady,
        received: &[(NamespacedName, u32)],
    ) -> impl IntoView {
        let Boxes {
            store,
            l,
            pointed,
            chips,
            open_pod,
            ..
        } = self;
        let r = p.rect;
        let is_ready = ready.get(&p.id).copied().unwrap_or(false);
        let (mark, word) = if is_ready {
            ("✔", tr(l.get(), "state.ready"))
        } else {
            ("✖", tr(l.get(), "state.not-ready"))
        };
        let got = lookup(received, &p.id).copied().unwrap_or(0);
        let id = p.id.clone();
        let tip = format!("{}\n{}\n{}", p.id, p.ip, p.labels.join(", "));
        let state = pod_state_label(&p.ip, mark, word, r.w);
        let state_w = crate::measure::drawn_width(&state, 16.0);
        let key = format!("pod:{}", p.id);
        // kpv-core's warnings about this Pod (its node is missing,
        // a probe names a port it lacks): a mark with them.
        let warned = store
            .warnings_by_object
            .with(|w| lookup(w, format!("Pod/{}", p.id).as_str()).map(|m| m.join("\n")));
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
    }
}

/// The open Pod's controls, drawn over the diagram beside its Pod.
#[component]
pub(super) fn PodControls(open_pod: RwSignal<Option<NamespacedName>>) -> impl IntoView {
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
