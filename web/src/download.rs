//! Save text as a file the user downloads (a Blob URL on a temporary link).
//! Nothing is uploaded: the file is made in the browser.

use wasm_bindgen::JsCast;

/// Offer `text` as a download named `name`; false if the browser refused.
pub fn text(name: &str, mime: &str, text: &str) -> bool {
    (|| -> Option<()> {
        let window = web_sys::window()?;
        let document = window.document()?;
        let parts = js_sys_array(text)?;
        let opts = web_sys::BlobPropertyBag::new();
        opts.set_type(mime);
        let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts).ok()?;
        let url = web_sys::Url::create_object_url_with_blob(&blob).ok()?;
        let a: web_sys::HtmlAnchorElement = document.create_element("a").ok()?.dyn_into().ok()?;
        a.set_href(&url);
        a.set_download(name);
        a.click();
        web_sys::Url::revoke_object_url(&url).ok()?;
        Some(())
    })()
    .is_some()
}

fn js_sys_array(text: &str) -> Option<wasm_bindgen::JsValue> {
    // A one-element JS array of the string (no serde_json round trip).
    Some(js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(text)).into())
}
