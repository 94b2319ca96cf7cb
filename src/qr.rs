//! A QR code of the current link (`data-qr`), so a room opens the scenario
//! on screen from their phones: large over the page while `q` holds it
//! open (in presenter mode or not), and on the printed summary. Encoded in the page by `qrcodegen` (no request leaves
//! it), drawn as one SVG path, and redrawn whenever the address changes
//! (the page keeps its address the share link) and before printing.

use crate::page::kept::Kept;
pub use crate::page::qr_code::path;

use crate::web::{document, window};

/// How often the address is looked at for a change.
const EVERY: std::time::Duration = std::time::Duration::from_millis(700);

/// `link` moved onto `base`, the page's public address (kept by the
/// trainer): the base's scheme, host and path with the link's own query and
/// step. `None` for a base that is not an http(s) address; a base's own
/// query and step are dropped.
pub fn on_base(link: &str, base: &str) -> Option<String> {
    let base = base.trim();
    let lower = base.to_ascii_lowercase();
    if !(lower.starts_with("https://") || lower.starts_with("http://")) || base.len() < 10 {
        return None;
    }
    let base = base.split(['?', '#']).next().unwrap_or(base);
    let tail = link.find(['?', '#']).map_or("", |i| &link[i..]);
    Some(format!("{base}{tail}"))
}

/// Why a phone in the room cannot open `link`, if it cannot: a page opened
/// from a file, or served on this computer's own loopback address, makes a
/// code no phone can follow; a private address (10/8, 172.16/12,
/// 192.168/16, link-local, `.local`) one only phones on the same network
/// can. None for any other address.
pub fn unreachable_from_a_phone(link: &str) -> Option<String> {
    let lower = link.trim().to_ascii_lowercase();
    if lower.starts_with("file:") {
        return Some(
            "A phone cannot open this code: the page was opened from a file on this computer. \
             Put the built page (dist/, or the one-file dist-single) on a web server the room's phones reach."
                .into(),
        );
    }
    let rest = lower.split_once("://").map_or(lower.as_str(), |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if host.starts_with('[') {
        host.split(']').next().map_or(host, |h| &h[1..])
    } else {
        host.split(':').next().unwrap_or(host)
    };
    let (v4, v6) = (ipv4(host), ipv6(host));
    let loopback = host == "localhost"
        || host.ends_with(".localhost")
        || v4.is_some_and(|[a, b, c, d]| a == 127 || [a, b, c, d] == [0; 4])
        || v6.is_some_and(|g| g == [0, 0, 0, 0, 0, 0, 0, 1] || g == [0; 8]);
    let private = host.ends_with(".local")
        || v4.is_some_and(|[a, b, _, _]| {
            a == 10
                || (a == 172 && b & 0xf0 == 16)
                || (a == 192 && b == 168)
                || (a == 169 && b == 254)
        })
        || v6.is_some_and(|g| (g[0] & 0xfe00) == 0xfc00 || (g[0] & 0xffc0) == 0xfe80);
    if private && !loopback {
        return Some(format!(
            "Only a phone on this computer's network can open this code: {host} is a private address. \
             For phones on mobile data, give the page's public address below."
        ));
    }
    loopback.then(|| {
        format!(
            "A phone cannot open this code: {host} is this computer's own address. \
             Serve the page where the room's phones reach it (a public site, or this computer's address on the room's network)."
        )
    })
}

/// A dotted IPv4 address's bytes, read as `std::net::Ipv4Addr` reads one
/// (four decimal parts up to 255, no leading zeros). By hand: the standard
/// library's address parser is about 3.6 KB of the page's wasm.
fn ipv4(text: &str) -> Option<[u8; 4]> {
    let mut out = [0u8; 4];
    let mut parts = text.split('.');
    for byte in &mut out {
        let p = parts.next()?;
        let digits = p.bytes().all(|b| b.is_ascii_digit());
        if !digits || p.is_empty() || p.len() > 3 || (p.len() > 1 && p.starts_with('0')) {
            return None;
        }
        let v = p.bytes().fold(0u16, |v, b| v * 10 + u16::from(b - b'0'));
        *byte = u8::try_from(v).ok()?;
    }
    parts.next().is_none().then_some(out)
}

/// An IPv6 address's eight groups, read as `std::net::Ipv6Addr` reads one:
/// hex groups of one to four digits, at most one `::` standing for one or
/// more zero groups, and a dotted IPv4 address allowed as the last two.
fn ipv6(text: &str) -> Option<[u16; 8]> {
    // The groups of one side of `::`; `last` when an IPv4 tail may end it.
    fn groups(side: &str, last: bool, out: &mut Vec<u16>) -> Option<()> {
        if side.is_empty() {
            return Some(());
        }
        let parts: Vec<&str> = side.split(':').collect();
        for (i, p) in parts.iter().enumerate() {
            if last && i + 1 == parts.len() && p.contains('.') {
                let [a, b, c, d] = ipv4(p)?;
                out.extend([u16::from_be_bytes([a, b]), u16::from_be_bytes([c, d])]);
            } else if (1..=4).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_hexdigit()) {
                out.push(p.bytes().fold(0u16, |v, b| {
                    v * 16 + (b as char).to_digit(16).unwrap_or(0) as u16
                }));
            } else {
                return None;
            }
        }
        Some(())
    }
    let (mut head, mut tail) = (Vec::new(), Vec::new());
    let mut out = [0u16; 8];
    match text.split_once("::") {
        None => {
            groups(text, true, &mut head)?;
            if head.len() != 8 {
                return None;
            }
            out.copy_from_slice(&head);
        }
        Some((h, t)) => {
            groups(h, false, &mut head)?;
            groups(t, true, &mut tail)?;
            if head.len() + tail.len() > 7 {
                return None;
            }
            out[..head.len()].copy_from_slice(&head);
            out[8 - tail.len()..].copy_from_slice(&tail);
        }
    }
    Some(out)
}

fn draw(host: &web_sys::Element, link: &str) {
    crate::page::qr_code::draw(host, link, &format!("QR code of this page's link: {link}"));
    crate::dom::set(host, "data-qr", link);
}

/// Runs `f` on every element of the page that `selector` finds.
fn every(selector: &str, mut f: impl FnMut(web_sys::Element)) {
    let Ok(all) = document().query_selector_all(selector) else {
        return;
    };
    for i in 0..all.length() {
        if let Some(e) = all
            .item(i)
            .and_then(|n| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(n).ok())
        {
            f(e);
        }
    }
}

/// Draws every code on the page from the current link (on the kept public
/// address, if any) and says beside each whether a phone can open it.
fn redraw() {
    let own = crate::url_state::room_link(&window().location().href().unwrap_or_default());
    let link = Kept::PublicBase
        .get()
        .and_then(|base| on_base(&own, &base))
        .unwrap_or(own);

    // Said under the room's code (the printed summary keeps to one page;
    // it encodes the kept public address when there is one).
    let why = unreachable_from_a_phone(&link);
    every("[data-qr-warning]", |note| {
        crate::dom::set_text(&note, why.as_deref().unwrap_or(""));
        let _ = note.toggle_attribute_with_force("hidden", why.is_none());
    });
    every("[data-qr]", |host| {
        if host.get_attribute("data-qr").as_deref() != Some(link.as_str()) {
            draw(&host, &link);
        }
    });
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
        // The page's public address, kept: the code then encodes it (the
        // room's phones cannot reach a trainer's laptop).
        let form = crate::dom::el("form", "qr-base");
        crate::dom::set(&form, "data-qr-base", "");
        let label = crate::dom::text_el("label", "", "Public address of this page (kept): ");
        let input = crate::dom::el("input", "");
        crate::dom::set(&input, "type", "url");
        crate::dom::set(&input, "placeholder", "https://lab.example/stampede/");
        crate::dom::set(&input, "data-qr-base-input", "");
        if let Some(kept) = Kept::PublicBase.get() {
            crate::dom::set(&input, "value", &kept);
        }
        let _ = label.append_child(&input);
        let use_it = crate::dom::text_el("button", "", "Use");
        crate::dom::set(&use_it, "type", "submit");
        let _ = form.append_child(&label);
        let _ = form.append_child(&use_it);
        let said = crate::dom::el("p", "qr-base-said");
        crate::dom::set(&said, "role", "status");
        crate::dom::set(&said, "data-qr-base-said", "");
        let _ = form.append_child(&said);
        let submit = wasm_bindgen::closure::Closure::<dyn FnMut(web_sys::Event)>::new({
            let (input, said) = (input.clone(), said.clone());
            move |e: web_sys::Event| {
                e.prevent_default();
                let v = wasm_bindgen::JsCast::dyn_ref::<web_sys::HtmlInputElement>(&input)
                    .map(|i| i.value())
                    .unwrap_or_default();
                let v = v.trim().to_string();
                if v.is_empty() {
                    Kept::PublicBase.remove();
                    crate::dom::set_text(&said, "The code encodes this page's own address.");
                } else if on_base("", &v).is_some() {
                    Kept::PublicBase.set(&v);
                    crate::dom::set_text(
                        &said,
                        &format!("The code now encodes {v} with this run's link."),
                    );
                } else {
                    crate::dom::set_text(
                        &said,
                        "Not used: the public address starts with https:// (or http://). The code keeps this page's own address.",
                    );
                }
                if let Some(body) = document().body() {
                    let _ = body.class_list().add_1("qr-open");
                }
                redraw();
            }
        });
        let _ = form.add_event_listener_with_callback(
            "submit",
            wasm_bindgen::JsCast::unchecked_ref(submit.as_ref()),
        );
        submit.forget();
        let warning = crate::dom::el("p", "qr-warning");
        crate::dom::set(&warning, "data-qr-warning", "");
        crate::dom::set(&warning, "role", "note");
        crate::dom::set(&warning, "hidden", "");
        let _ = figure.append_child(&code);
        let _ = figure.append_child(&caption);
        let _ = figure.append_child(&warning);
        let _ = figure.append_child(&form);
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
    let refresh = redraw;
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
    fn a_kept_public_address_takes_the_links_query_and_step() {
        let link = "http://127.0.0.1:8080/?preset=hang&seed=3#tour/basics/2";
        assert_eq!(
            on_base(link, "https://lab.example/stampede/").as_deref(),
            Some("https://lab.example/stampede/?preset=hang&seed=3#tour/basics/2")
        );
        assert_eq!(
            on_base("http://127.0.0.1:8080/", " https://lab.example/x/?old=1#y ").as_deref(),
            Some("https://lab.example/x/")
        );
        for bad in [
            "",
            "lab.example",
            "ftp://lab.example/",
            "javascript:alert(1)",
            "http://",
        ] {
            assert_eq!(on_base(link, bad), None, "{bad}");
        }
        // What it encodes, a phone can open.
        let moved = on_base(link, "https://lab.example/").unwrap();
        assert_eq!(unreachable_from_a_phone(&moved), None);
    }

    #[test]
    fn a_code_no_phone_can_open_says_why() {
        for (link, says) in [
            (
                "file:///home/t/dist/index.html?preset=burst",
                Some("from a file"),
            ),
            (
                "http://127.0.0.1:8080/?preset=burst",
                Some("127.0.0.1 is this computer's"),
            ),
            ("http://localhost:8080/#tour/basics/1", Some("localhost is")),
            ("http://[::1]:8080/", Some("::1 is")),
            ("http://lab.localhost:3000/", Some("lab.localhost is")),
            ("HTTP://0.0.0.0/", Some("0.0.0.0 is")),
            ("https://lab.example/?preset=burst", None),
            (
                "http://192.168.1.20:8080/?preset=burst",
                Some("192.168.1.20 is a private address"),
            ),
            ("http://10.0.0.7/", Some("private address")),
            (
                "http://laptop.local:8080/",
                Some("laptop.local is a private"),
            ),
            ("http://172.32.0.1/", None),
            ("https://user@127.0.0.1.example.com/", None),
        ] {
            let why = unreachable_from_a_phone(link);
            match says {
                Some(words) => assert!(
                    why.as_deref().is_some_and(|w| w.contains(words)),
                    "{link}: {why:?}"
                ),
                None => assert_eq!(why, None, "{link}"),
            }
        }
    }

    /// The hand-written address readers agree with the standard
    /// library's on addresses written every way and on near misses.
    #[test]
    fn addresses_read_as_the_standard_library_reads_them() {
        let mut rng = stampede::rng::Rng::new(7);
        let alphabet = b"0123456789abcdefABCDEF:.x";
        let mut tried = 0;
        for round in 0..40_000u32 {
            let text: String = if round % 3 != 2 {
                // A real address, shortened and cased at random.
                let g: Vec<u16> = (0..8)
                    .map(|_| {
                        if rng.below(3) == 0 {
                            0
                        } else {
                            rng.below(0x1_0000) as u16
                        }
                    })
                    .collect();
                let a = std::net::Ipv6Addr::new(g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7]);
                let v4 = std::net::Ipv4Addr::from(rng.below(1 << 32) as u32);
                let mut t = match rng.below(4) {
                    0 => a.to_string(),
                    1 => format!(
                        "{:x}:{:x}:{:x}:{:x}:{:x}:{:x}:{v4}",
                        g[0], g[1], g[2], g[3], g[4], g[5]
                    ),
                    2 => v4.to_string(),
                    _ => a.to_string().to_uppercase(),
                };
                // Every other one a near miss: a piece put in, or one out.
                if round % 3 == 1 {
                    let at = rng.below(t.len() as u64 + 1) as usize;
                    match rng.below(4) {
                        0 => t.insert_str(at, "::"),
                        1 => t.insert_str(at, ":0"),
                        2 => t.insert(at, alphabet[rng.below(25) as usize] as char),
                        _ => {
                            t.remove(at.min(t.len() - 1));
                        }
                    }
                }
                t
            } else {
                let n = rng.below(20) as usize;
                (0..n)
                    .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize] as char)
                    .collect()
            };
            tried += 1;
            let v4 = text.parse::<std::net::Ipv4Addr>().ok().map(|a| a.octets());
            let v6 = text
                .parse::<std::net::Ipv6Addr>()
                .ok()
                .map(|a| a.segments());
            assert_eq!(ipv4(&text), v4, "{text}");
            assert_eq!(ipv6(&text), v6, "{text}");
        }
        assert_eq!(tried, 40_000);
        for (text, v4, v6) in [
            ("127.0.0.1", true, false),
            ("::1", false, true),
            ("::ffff:10.0.0.1", false, true),
            ("01.2.3.4", false, false),
            ("1:2:3:4:5:6:7:8:9", false, false),
            ("1::2::3", false, false),
        ] {
            assert_eq!(ipv4(text).is_some(), v4, "{text}");
            assert_eq!(ipv6(text).is_some(), v6, "{text}");
        }
    }

    #[test]
    fn a_link_too_long_for_a_code_draws_none() {
        assert!(path(&"x".repeat(5_000)).is_none());
    }
}
