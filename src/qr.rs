//! A QR code of the current link (`data-qr`), so a room opens the scenario
//! on screen from their phones: large over the page while `q` holds it
//! open (in presenter mode or not), and on the printed summary. Encoded in the page by `qrcodegen` (no request leaves
//! it), drawn as one SVG path, and redrawn whenever the address changes
//! (the page keeps its address the share link) and before printing.

use qrcodegen::{QrCode, QrCodeEcc};

use crate::web::{document, window};

const SVG: &str = "http://www.w3.org/2000/svg";
/// The quiet zone the standard asks for around the code, in modules.
const QUIET: i32 = 4;
/// How often the address is looked at for a change.
const EVERY: std::time::Duration = std::time::Duration::from_millis(700);

/// The code's dark modules as one SVG path (a unit square per module,
/// offset by the quiet zone), and the side of the whole picture.
pub fn path(text: &str) -> Option<(String, i32)> {
    let code = QrCode::encode_text(text, QrCodeEcc::Medium).ok()?;
    let n = code.size();
    let mut d = String::with_capacity((n * n * 6) as usize);
    for y in 0..n {
        let mut x = 0;
        while x < n {
            if code.get_module(x, y) {
                // A run of dark modules on a row: one rectangle.
                let start = x;
                while x < n && code.get_module(x, y) {
                    x += 1;
                }
                d.push_str(&format!(
                    "M{},{}h{}v1h-{}z",
                    start + QUIET,
                    y + QUIET,
                    x - start,
                    x - start
                ));
            } else {
                x += 1;
            }
        }
    }
    Some((d, n + 2 * QUIET))
}

fn draw(host: &web_sys::Element, link: &str) {
    let doc = document();
    let Some((d, side)) = path(link) else {
        crate::dom::set_text(host, "");
        return;
    };
    let (Ok(svg), Ok(p)) = (
        doc.create_element_ns(Some(SVG), "svg"),
        doc.create_element_ns(Some(SVG), "path"),
    ) else {
        return;
    };
    crate::dom::set(&svg, "viewBox", &format!("0 0 {side} {side}"));
    crate::dom::set(&svg, "role", "img");
    crate::dom::set(
        &svg,
        "aria-label",
        &format!("QR code of this page's link: {link}"),
    );
    crate::dom::set(&p, "d", &d);
    let _ = svg.append_child(&p);
    host.set_inner_html("");
    let _ = host.append_child(&svg);
    crate::dom::set(host, "data-qr", link);
}

/// Draws every `[data-qr]` on the page, and the room's large code (shown
/// and hidden by `q`, closed by Esc), and keeps them on the current link.
pub fn install() {
    let doc = document();
    if let Some(body) = doc.body() {
        let overlay = crate::dom::el("div", "qr-overlay");
        crate::dom::set(&overlay, "data-qr-overlay", "");
        let figure = crate::dom::el("figure", "qr-large");
        let code = crate::dom::el("div", "");
        crate::dom::set(&code, "data-qr", "");
        let caption = crate::dom::text_el(
            "figcaption",
            "",
            "Scan to open this run on your phone. q or Esc closes it.",
        );
        let _ = figure.append_child(&code);
        let _ = figure.append_child(&caption);
        let _ = overlay.append_child(&figure);
        let _ = body.append_child(&overlay);
        let keys = wasm_bindgen::closure::Closure::<dyn FnMut(web_sys::KeyboardEvent)>::new(
            move |e: web_sys::KeyboardEvent| {
                if crate::dom::typing(&e) {
                    return;
                }
                let list = body.class_list();
                match e.key().as_str() {
                    "q" | "Q" => {
                        let _ = list.toggle("qr-open");
                    }
                    "Escape" => {
                        let _ = list.remove_1("qr-open");
                    }
                    _ => {}
                }
            },
        );
        let _ = window().add_event_listener_with_callback(
            "keydown",
            wasm_bindgen::JsCast::unchecked_ref(keys.as_ref()),
        );
        keys.forget();
    }
    let refresh = move || {
        let link = crate::url_state::room_link(&window().location().href().unwrap_or_default());
        let Ok(all) = document().query_selector_all("[data-qr]") else {
            return;
        };
        for i in 0..all.length() {
            let Some(host) = all
                .item(i)
                .and_then(|n| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(n).ok())
            else {
                continue;
            };
            if host.get_attribute("data-qr").as_deref() != Some(link.as_str()) {
                draw(&host, &link);
            }
        }
    };
    refresh();
    let before = wasm_bindgen::closure::Closure::<dyn FnMut()>::new(refresh);
    let _ = window().add_event_listener_with_callback(
        "beforeprint",
        wasm_bindgen::JsCast::unchecked_ref(before.as_ref()),
    );
    // For the page's life.
    before.forget();
    let _ = leptos::prelude::set_interval_with_handle(refresh, EVERY);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_draws_a_code_with_its_quiet_zone() {
        let (d, side) = path("https://lab.example/?preset=burst&seed=3").unwrap();
        // Version 3 or so: 29 modules and 4 on each side.
        assert!((21 + 8..=57 + 8).contains(&side), "{side}");
        // The top-left finder pattern's first row: 7 dark modules in one run.
        assert!(d.starts_with("M4,4h7v1h-7z"), "{}", &d[..40]);
        let (other, _) = path("https://lab.example/?preset=burst&seed=4").unwrap();
        assert_ne!(d, other, "another link, another code");
    }

    #[test]
    fn a_link_too_long_for_a_code_draws_none() {
        assert!(path(&"x".repeat(5_000)).is_none());
    }
}
