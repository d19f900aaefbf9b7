//! Component tests in headless Chromium (wasm-bindgen-test): mount the app,
//! operate a control, and check the DOM changed.
#![cfg(target_arch = "wasm32")]

use gloo_timers::future::TimeoutFuture;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn mount() -> web_sys::Element {
    let document = web_sys::window().unwrap().document().unwrap();
    let host = document.create_element("div").unwrap();
    document.body().unwrap().append_child(&host).unwrap();
    let handle = leptos::mount::mount_to(host.clone().unchecked_into(), kpv_web::App);
    handle.forget();
    host
}

fn count(host: &web_sys::Element, selector: &str) -> u32 {
    host.query_selector_all(selector).unwrap().length()
}

fn el(host: &web_sys::Element, selector: &str) -> web_sys::HtmlElement {
    host.query_selector(selector)
        .unwrap()
        .unwrap_or_else(|| panic!("no element {selector}"))
        .unchecked_into()
}

/// Let Leptos' effects run and the DOM update.
async fn settle() {
    TimeoutFuture::new(60).await;
}

#[wasm_bindgen_test]
fn app_draws_the_seed_scenario() {
    let host = mount();
    assert_eq!(count(&host, "svg[data-testid=diagram]"), 1);
    assert_eq!(count(&host, "[data-testid^=node-worker]"), 3);
    assert_eq!(count(&host, "g[data-testid^=pod-alpaca-prod-]"), 3);
    assert_eq!(count(&host, "g[data-testid^=pod-bandicoot-prod-]"), 2);
    assert_eq!(count(&host, "[data-testid=service-alpaca-service]"), 1);
    assert_eq!(count(&host, "[data-testid=errors]"), 0);
    assert_eq!(count(&host, "[data-testid=endpoint]"), 5);
}

#[wasm_bindgen_test]
async fn sending_a_packet_fills_the_hop_list() {
    let host = mount();
    settle().await;
    assert_eq!(count(&host, "[data-testid=hop]"), 0);
    el(&host, "[data-testid=send-packet]").click();
    settle().await;
    assert!(
        count(&host, "[data-testid=hop]") > 4,
        "hops: {}",
        count(&host, "[data-testid=hop]")
    );
    assert_eq!(count(&host, "[data-testid=packet]"), 1);
    assert_eq!(
        el(&host, "[data-testid=play-pause]")
            .get_attribute("aria-pressed")
            .as_deref(),
        Some("true")
    );
    // Pause: the clock stops.
    el(&host, "[data-testid=play-pause]").click();
    settle().await;
    let t1 = el(&host, "[data-testid=sim-clock]").inner_text();
    settle().await;
    assert_eq!(el(&host, "[data-testid=sim-clock]").inner_text(), t1);
}

#[wasm_bindgen_test]
async fn switching_mode_changes_the_rules_format() {
    let host = mount();
    settle().await;
    let rules = || el(&host, "[data-testid=rules-view]");
    assert!(rules().inner_text().contains("*nat"));
    let select: web_sys::HtmlSelectElement =
        el(&host, "[data-testid=mode-select]").unchecked_into();
    select.set_value("ipvs");
    select
        .dispatch_event(&web_sys::Event::new("change").unwrap())
        .unwrap();
    settle().await;
    assert_eq!(rules().get_attribute("data-mode").as_deref(), Some("ipvs"));
    assert!(
        rules().inner_text().contains("IP Virtual Server"),
        "{}",
        rules().inner_text()
    );
    // The scheduler select appears only in IPVS mode.
    let sched = el(&host, "[data-testid=scheduler-select]");
    assert!(!sched
        .parent_element()
        .unwrap()
        .class_list()
        .contains("hidden"));
}

#[wasm_bindgen_test]
async fn readiness_toggle_changes_its_state() {
    let host = mount();
    settle().await;
    let button = el(&host, "[data-testid$=-readiness][data-testid^=pod-alpaca]");
    assert_eq!(
        button.get_attribute("aria-pressed").as_deref(),
        Some("false")
    );
    button.click();
    settle().await;
    assert_eq!(
        button.get_attribute("aria-pressed").as_deref(),
        Some("true")
    );
}
