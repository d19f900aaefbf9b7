//! Export the diagram as a standalone SVG or a PNG picture.
//!
//! The page styles the diagram with CSS classes and theme variables, which a
//! file on its own would lose; the export copies each element's computed
//! colours, strokes and fonts onto a clone as SVG presentation attributes
//! (not `style` attributes, so a strict Content-Security-Policy is never
//! tripped). The PNG is that SVG drawn on a canvas at twice its size. Both
//! are made in the browser and offered as downloads; nothing is uploaded.

use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlCanvasElement, HtmlImageElement};

/// Properties copied from the live element to the exported one.
const PROPS: &[&str] = &[
    "fill",
    "fill-opacity",
    "stroke",
    "stroke-width",
    "stroke-dasharray",
    "stroke-opacity",
    "opacity",
    "font-family",
    "font-size",
    "font-weight",
    "visibility",
];

fn diagram() -> Option<Element> {
    web_sys::window()?
        .document()?
        .query_selector("svg[data-testid=diagram]")
        .ok()
        .flatten()
}

/// The diagram as a standalone SVG document, with its width and height.
pub fn svg_text() -> Option<(String, f64, f64)> {
    let window = web_sys::window()?;
    let live = diagram()?;
    let copy: Element = live.clone_node_with_deep(true).ok()?.dyn_into().ok()?;
    let live_all = live.query_selector_all("*").ok()?;
    let copy_all = copy.query_selector_all("*").ok()?;
    for i in 0..live_all.length().min(copy_all.length()) {
        let (Some(src), Some(dst)) = (live_all.item(i), copy_all.item(i)) else {
            continue;
        };
        let (Ok(src), Ok(dst)) = (src.dyn_into::<Element>(), dst.dyn_into::<Element>()) else {
            continue;
        };
        if let Ok(Some(style)) = window.get_computed_style(&src) {
            for p in PROPS {
                if let Ok(v) = style.get_property_value(p) {
                    if !v.is_empty() {
                        let _ = dst.set_attribute(p, &v);
                    }
                }
            }
        }
        let _ = dst.remove_attribute("class");
    }
    let (w, h) = view_box_size(&live.get_attribute("viewBox").unwrap_or_default())?;
    let _ = copy.set_attribute("xmlns", "http://www.w3.org/2000/svg");
    let _ = copy.set_attribute("width", &crate::numbers::one_decimal(w));
    let _ = copy.set_attribute("height", &crate::numbers::one_decimal(h));
    let _ = copy.remove_attribute("class");
    // The page background behind the drawing.
    if let Ok(Some(style)) = window.get_computed_style(&live) {
        let bg = style
            .get_property_value("background-color")
            .unwrap_or_default();
        if let Ok(rect) = window
            .document()?
            .create_element_ns(Some("http://www.w3.org/2000/svg"), "rect")
        {
            let _ = rect.set_attribute("width", "100%");
            let _ = rect.set_attribute("height", "100%");
            let _ = rect.set_attribute("fill", if bg.is_empty() { "#ffffff" } else { &bg });
            let _ = copy.insert_before(&rect, copy.first_child().as_ref());
        }
    }
    let text = web_sys::XmlSerializer::new()
        .ok()?
        .serialize_to_string(&copy)
        .ok()?;
    Some((
        format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{text}\n"),
        w,
        h,
    ))
}

/// A plain decimal (`840`, `612.5`, `-3`) read without float parsing code
/// (large in the `.wasm`); anything else is `None`.
fn decimal(x: &str) -> Option<f64> {
    let (negative, body) = x.strip_prefix('-').map_or((false, x), |b| (true, b));
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if (int.is_empty() && frac.is_empty()) || int.len() + frac.len() > 18 {
        return None;
    }
    let mut units = 0u64;
    for d in int.bytes().chain(frac.bytes()) {
        if !d.is_ascii_digit() {
            return None;
        }
        units = units * 10 + u64::from(d - b'0');
    }
    let v = units as f64 / 10u64.pow(frac.len() as u32) as f64;
    Some(if negative { -v } else { v })
}

/// `"0 0 W H"` → (W, H).
pub fn view_box_size(v: &str) -> Option<(f64, f64)> {
    let nums: Vec<f64> = v.split_whitespace().filter_map(decimal).collect();
    match nums.as_slice() {
        [_, _, w, h] if *w > 0.0 && *h > 0.0 => Some((*w, *h)),
        _ => None,
    }
}

/// Download the diagram as SVG; false if it could not be made.
pub fn svg() -> bool {
    match svg_text() {
        Some((text, _, _)) => {
            crate::download::text("kube-proxy-diagram.svg", "image/svg+xml", &text)
        }
        None => false,
    }
}

/// Draw the SVG on a canvas and download it as PNG. `done` is told whether
/// it worked (the image loads asynchronously; a page whose CSP forbids
/// `blob:` images makes it fail, which is reported rather than hidden).
pub fn png(done: impl FnOnce(bool) + 'static) {
    let Some((text, w, h)) = svg_text() else {
        done(false);
        return;
    };
    let made = (|| -> Option<(HtmlImageElement, String)> {
        let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(&text));
        let opts = web_sys::BlobPropertyBag::new();
        opts.set_type("image/svg+xml");
        let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts).ok()?;
        let url = web_sys::Url::create_object_url_with_blob(&blob).ok()?;
        let img = HtmlImageElement::new().ok()?;
        Some((img, url))
    })();
    let Some((img, url)) = made else {
        done(false);
        return;
    };
    let done = std::rc::Rc::new(std::cell::RefCell::new(Some(done)));
    let finish = {
        let done = done.clone();
        move |ok: bool| {
            if let Some(f) = done.borrow_mut().take() {
                f(ok);
            }
        }
    };
    let on_load = {
        let img = img.clone();
        let url = url.clone();
        let finish = finish.clone();
        Closure::once(move || {
            let ok = draw_and_download(&img, w, h).is_some();
            let _ = web_sys::Url::revoke_object_url(&url);
            finish(ok);
        })
    };
    let on_error = {
        let url = url.clone();
        Closure::once(move || {
            let _ = web_sys::Url::revoke_object_url(&url);
            finish(false);
        })
    };
    img.set_onload(Some(on_load.as_ref().unchecked_ref()));
    img.set_onerror(Some(on_error.as_ref().unchecked_ref()));
    // The closures live until the image is done with them.
    on_load.forget();
    on_error.forget();
    img.set_src(&url);
}

fn draw_and_download(img: &HtmlImageElement, w: f64, h: f64) -> Option<()> {
    const SCALE: f64 = 2.0;
    let document = web_sys::window()?.document()?;
    let canvas: HtmlCanvasElement = document.create_element("canvas").ok()?.dyn_into().ok()?;
    canvas.set_width((w * SCALE) as u32);
    canvas.set_height((h * SCALE) as u32);
    let ctx: web_sys::CanvasRenderingContext2d = canvas.get_context("2d").ok()??.dyn_into().ok()?;
    ctx.scale(SCALE, SCALE).ok()?;
    ctx.draw_image_with_html_image_element_and_dw_and_dh(img, 0.0, 0.0, w, h)
        .ok()?;
    let url = canvas.to_data_url_with_type("image/png").ok()?;
    let a: web_sys::HtmlAnchorElement = document.create_element("a").ok()?.dyn_into().ok()?;
    a.set_href(&url);
    a.set_download("kube-proxy-diagram.png");
    a.click();
    Some(())
}

#[cfg(test)]
mod tests {
    use super::view_box_size;

    #[test]
    fn view_box_sizes_are_read() {
        for (v, want) in [
            ("0 0 840 612.5", Some((840.0, 612.5))),
            ("0 0 840.25 .5", Some((840.25, 0.5))),
            ("-8 -8 100 60", Some((100.0, 60.0))),
            ("0 0 0 60", None),
            ("0 0 -1 60", None),
            ("0 0 1e3 60", None),
            ("0 0 840", None),
            ("0 0 12345678901234567890 1", None),
            ("", None),
        ] {
            assert_eq!(view_box_size(v), want, "{v}");
        }
    }
}
