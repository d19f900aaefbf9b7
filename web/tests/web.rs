//! Component tests in headless Chromium (wasm-bindgen-test).
#![cfg(target_arch = "wasm32")]

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

#[wasm_bindgen_test]
fn app_draws_the_seed_scenario() {
    let host = mount();
    assert_eq!(count(&host, "svg[data-testid=diagram]"), 1);
    assert_eq!(count(&host, "[data-testid^=node-]"), 3);
    assert_eq!(count(&host, "[data-testid^=pod-alpaca-prod-]"), 3);
    assert_eq!(count(&host, "[data-testid^=pod-bandicoot-prod-]"), 2);
    assert_eq!(count(&host, "[data-testid=service-alpaca-service]"), 1);
    assert_eq!(count(&host, "[data-testid=errors]"), 0);
}
