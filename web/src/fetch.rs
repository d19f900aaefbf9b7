//! The one way the app fetches its own files: a site path relative to the
//! folder the app's files are served from (never another origin), kept for
//! the page's life, or a [`FetchError`] saying which file and why.

use std::cell::RefCell;

thread_local! {
    /// Fetched files by site path, kept for the page's life.
    static CACHE: RefCell<kpv_core::util::vecmap::VecMap<String, String>> = const { RefCell::new(kpv_core::util::vecmap::VecMap::new()) };
}

/// A file that did not arrive: its path and why (English, technical).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FetchError(pub String);

/// The folder the app's files are served from (`/docs/kpv/` in a sub-path
/// build, `/docs/kpv/embed/` for its embed build), read from the loader's
/// script element; empty (the page's own folder) when there is none.
fn base() -> String {
    web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector("script[data-kpv-wasm]").ok().flatten())
        .and_then(|s| s.get_attribute("data-kpv-wasm"))
        .and_then(|u| u.rfind('/').map(|i| u[..=i].to_string()))
        .unwrap_or_default()
}

/// A file fetched before, if any.
pub fn cached(path: &str) -> Option<String> {
    CACHE.with(|c| c.borrow().get(path).cloned())
}

/// Fetch the site's file `path` (kept after the first time).
pub async fn get(path: &str) -> Result<String, FetchError> {
    use wasm_bindgen::JsCast;
    use wasm_bindgen_futures::JsFuture;
    if let Some(text) = cached(path) {
        return Ok(text);
    }
    let fail = |why: &str| FetchError(format!("{path}: {why}"));
    let window = web_sys::window().ok_or_else(|| fail("no window"))?;
    let response = JsFuture::from(window.fetch_with_str(&format!("{}{path}", base())))
        .await
        .map_err(|_| fail("the request failed"))?;
    let response: web_sys::Response = response.dyn_into().map_err(|_| fail("not a response"))?;
    if !response.ok() {
        return Err(fail(&format!("HTTP {}", response.status())));
    }
    let body = response.text().map_err(|_| fail("no body"))?;
    let text = JsFuture::from(body)
        .await
        .ok()
        .and_then(|t| t.as_string())
        .ok_or_else(|| fail("the body could not be read"))?;
    CACHE.with(|c| c.borrow_mut().insert(path.to_string(), text.clone()));
    Ok(text)
}

/// The repository file a site path is copied from (`data/` is `tests/`):
/// native tests read the shipped data from disk.
#[cfg(test)]
pub fn from_disk(path: &str) -> String {
    let rel = path.strip_prefix("data/").unwrap_or(path);
    let file = format!("{}/../tests/{rel}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file}: {e}"))
}
