//! A QR code drawn as one SVG path, encoded in the page by `qrcodegen` (no
//! request leaves it): the link's (`qr.rs`) and presenter mode's vote link
//! for the room's phones (`lesson/room_vote.rs`).

use qrcodegen::{QrCode, QrCodeEcc};

const SVG: &str = "http://www.w3.org/2000/svg";
/// The quiet zone the standard asks for around the code, in modules.
const QUIET: i32 = 4;

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

/// Draws the code of `text` into `host` (emptied first), labelled `label`
/// for a screen reader; empties `host` when the text is too long to encode.
pub fn draw(host: &web_sys::Element, text: &str, label: &str) {
    let doc = crate::web::document();
    let Some((d, side)) = path(text) else {
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
    crate::dom::set(&svg, "aria-label", label);
    crate::dom::set(&p, "d", &d);
    let _ = svg.append_child(&p);
    host.set_inner_html("");
    let _ = host.append_child(&svg);
}
