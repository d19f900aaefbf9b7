//! The cluster diagram: an SVG in the scene's fixed logical space.
//!
//! Markup only: every position comes from [`kpv_core::scene::Scene`].

use kpv_core::scene::{Rect, Scene};
use leptos::prelude::*;

fn attr(v: f64) -> String {
    format!("{v:.1}")
}

#[component]
fn BoxRect(rect: Rect, class: &'static str) -> impl IntoView {
    view! {
        <rect class=class x=attr(rect.x) y=attr(rect.y) width=attr(rect.w) height=attr(rect.h) rx="8" />
    }
}

/// The whole diagram.
#[component]
pub fn Diagram(scene: Memo<Scene>) -> impl IntoView {
    let view_box = move || scene.with(|s| format!("0 0 {} {}", s.width, s.height));
    view! {
        <svg class="diagram" data-testid="diagram" viewBox=view_box role="img"
            aria-label="Cluster diagram: Services, Nodes and Pods">
            {move || scene.with(|s| {
                let c = s.client;
                let client = view! {
                    <g class="client" data-testid="client">
                        <BoxRect rect=c class="client-box" />
                        <text x=attr(c.x + 12.0) y=attr(c.y + 26.0) class="title">"External client"</text>
                        <text x=attr(c.x + 12.0) y=attr(c.y + 46.0) class="small">"outside the cluster"</text>
                    </g>
                };
                let services = s.services.iter().map(|svc| {
                    let r = svc.rect;
                    let ports = svc.ports.iter().enumerate().map(|(i, p)| view! {
                        <text x=attr(r.x + 12.0) y=attr(r.y + 70.0 + 16.0 * i as f64) class="small">{p.clone()}</text>
                    }).collect_view();
                    view! {
                        <g class="service" data-testid=format!("service-{}", svc.id.name)>
                            <BoxRect rect=r class="service-box" />
                            <text x=attr(r.x + 12.0) y=attr(r.y + 24.0) class="title">{svc.id.name.clone()}</text>
                            <text x=attr(r.x + 12.0) y=attr(r.y + 44.0) class="mono">{format!("{:?} {}", svc.service_type, svc.cluster_ip)}</text>
                            {ports}
                        </g>
                    }
                }).collect_view();
                let edges = s.edges.iter().filter_map(|e| {
                    let from = s.services.iter().find(|x| x.id == e.service)?.rect;
                    let to = s.pods.iter().find(|p| p.id == e.pod)?.rect;
                    let (x1, y1) = (from.x + from.w / 2.0, from.y + from.h);
                    let (x2, y2) = (to.x + to.w / 2.0, to.y);
                    let class = if e.ready { "edge ready" } else { "edge not-ready" };
                    Some(view! { <line class=class x1=attr(x1) y1=attr(y1) x2=attr(x2) y2=attr(y2) /> })
                }).collect_view();
                let nodes = s.nodes.iter().map(|n| {
                    let r = n.rect;
                    view! {
                        <g class="node" data-testid=format!("node-{}", n.name)>
                            <BoxRect rect=r class="node-box" />
                            <text x=attr(r.x + 12.0) y=attr(r.y + 22.0) class="title">{n.name.clone()}</text>
                            <BoxRect rect=n.eth class="eth-box" />
                            <text x=attr(n.eth.x + 8.0) y=attr(n.eth.y + 16.0) class="mono small">{format!("eth0 {}", n.ip)}</text>
                            <BoxRect rect=n.proxy class="proxy-box" />
                            <text x=attr(n.proxy.x + 8.0) y=attr(n.proxy.y + 18.0) class="small">"kube-proxy rules"</text>
                        </g>
                    }
                }).collect_view();
                let pods = s.pods.iter().map(|p| {
                    let r = p.rect;
                    let label = p.labels.first().cloned().unwrap_or_default();
                    view! {
                        <g class="pod" data-testid=format!("pod-{}", p.id.name) data-ready="true">
                            <BoxRect rect=r class="pod-box" />
                            <text x=attr(r.x + 10.0) y=attr(r.y + 18.0) class="small strong">{p.id.name.clone()}</text>
                            <text x=attr(r.x + 10.0) y=attr(r.y + 34.0) class="mono small">{p.ip.clone()}</text>
                            <text x=attr(r.x + 10.0) y=attr(r.y + 50.0) class="small muted">{label}</text>
                        </g>
                    }
                }).collect_view();
                view! { {client} {nodes} {edges} {services} {pods} }
            })}
        </svg>
    }
}
