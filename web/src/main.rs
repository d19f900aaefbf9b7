//! Entry point of the web app: [`kpv_web::start`] mounts the app on the
//! page body. In the browser it is wasm-bindgen's start function and there
//! is no `fn main`: std's runtime around one (stdout's buffer, flushed at
//! exit, and the I/O error texts that come with it) would be downloaded for
//! nothing.
#![cfg_attr(target_arch = "wasm32", no_main)]

#[cfg(target_arch = "wasm32")]
#[wasm_bindgen::prelude::wasm_bindgen(start)]
fn start() {
    kpv_web::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    kpv_web::start();
}
