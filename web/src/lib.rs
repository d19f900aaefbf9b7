//! kpv-web: the Leptos front end that draws what kpv-core computes.
//!
//! State holds inputs only (the scenario text); the cluster, the endpoint
//! slices and the diagram's layout are derived with `Memo`s over kpv-core
//! functions. This crate makes no networking decisions and no geometry of its
//! own: components are markup over [`kpv_core::scene`].

pub mod components;
pub mod scenarios;

use components::diagram::Diagram;
use leptos::prelude::*;

/// The whole app.
#[component]
pub fn App() -> impl IntoView {
    let scenario = RwSignal::new(scenarios::SEED.to_string());
    let parsed = Memo::new(move |_| scenario.with(|s| kpv_core::model::parse(s)));
    let scene = Memo::new(move |_| {
        parsed.with(|(cluster, _)| {
            let slices = kpv_core::controller::steady_slices(cluster);
            kpv_core::scene::layout(cluster, &slices)
        })
    });
    let errors = Memo::new(move |_| {
        parsed.with(|(_, diags)| {
            diags
                .iter()
                .filter(|d| d.is_error())
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
        })
    });
    view! {
        <main class="app" data-testid="app">
            <header class="topbar">
                <h1>"kube-proxy visualizer"</h1>
                <p class="subtitle">"How traffic reaches Pods through a Service"</p>
            </header>
            <Show when=move || !errors.with(Vec::is_empty)>
                <ul class="errors" data-testid="errors">
                    <For each=move || errors.get() key=|e| e.clone() let:e>
                        <li>{e}</li>
                    </For>
                </ul>
            </Show>
            <Diagram scene=scene />
        </main>
    }
}
