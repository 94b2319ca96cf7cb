//! Two builds of one page. A first visit opens the guided tour, so the
//! loader in `index.html` fetches the *tour build* for an address that
//! opens the tour (`crates/tour`: this crate without its `full` feature,
//! about 100 KB gzipped less). Every other address, and every tab that has
//! once needed more, gets the *full build*: the sandbox's knobs, the A/B
//! view, drills, the walk-through's questions, practice, playlists, the
//! clip, the QR code and the interviewer's kit.
//!
//! The tour build reaches the full one by reloading the page: the address
//! already holds the view and the scenario, and [`upgrade`] writes the run's
//! moment into it first, so the full build opens where the tour build was
//! (a tour step opened at a moment does not ask its prediction again). A
//! control pressed in the tour build that only the full build has is
//! pressed again once it is up.

/// This tab needs the full build (sessionStorage; the loader reads it too).
pub const FULL_KEY: &str = "stampede-full";
/// A control the full build presses once it is up (a CSS selector), or
/// [`QR_OPEN`].
const PRESS_KEY: &str = "stampede-press";
/// Pressed: `q`, which opens the link's QR code.
pub const QR_OPEN: &str = "qr-open";

/// The address opens the guided tour, all that the tour build can show: a
/// tour step's hash (`#tour/basics/2`), or no address at all (a first
/// visit), and none of the keys that open something else (a drill, a list,
/// the kit, the A/B view). `scripts/finish-dist.mjs` writes the same rule
/// into the loader, and `tests/e2e/builds.mjs` checks that they agree.
pub fn tour_only(query: &str, hash: &str) -> bool {
    let query = query.trim_start_matches('?');
    let tour = stampede::tour::parse_hash(hash).is_some() || (query.is_empty() && hash.is_empty());
    tour && !query.split('&').any(|p| {
        let key = p.split_once('=').map_or(p, |(k, _)| k);
        matches!(key, "drill" | "list" | "item" | "kit" | "cmp")
    })
}

/// This is the full build.
pub const FULL: bool = cfg!(feature = "full");

/// Where the run on screen stands: (ms, playing), once it has started.
type Moment = Box<dyn Fn() -> Option<(u64, bool)>>;

thread_local! {
    /// The page's [`Moment`], set by [`moment_from`].
    static MOMENT: std::cell::RefCell<Option<Moment>> = const { std::cell::RefCell::new(None) };
}

/// How [`upgrade`] learns the run's moment, to leave it in the address.
pub fn moment_from(f: impl Fn() -> Option<(u64, bool)> + 'static) {
    MOMENT.with(|m| *m.borrow_mut() = Some(Box::new(f)));
}

/// `query` with the moment `at` (ms) and, if playing, `play=1`, in place of
/// any it had.
pub fn with_moment(query: &str, (ms, play): (u64, bool)) -> String {
    let mut kept: Vec<String> = query
        .trim_start_matches('?')
        .split('&')
        .filter(|p| !p.is_empty() && !matches!(p.split('=').next(), Some("at" | "play")))
        .map(str::to_string)
        .collect();
    kept.push(format!("at={ms}"));
    if play {
        kept.push("play=1".to_string());
    }
    kept.join("&")
}

/// Loads the full build into this tab, which keeps it: remembered for the
/// tab, then a reload of the address as it stands, at the run's moment.
/// `press` is a control to press once the full build is up.
pub fn upgrade(press: Option<&str>) {
    if FULL {
        return;
    }
    let w = crate::web::window();
    if let Some(m) = MOMENT.with(|m| m.borrow().as_ref().and_then(|f| f())) {
        let l = w.location();
        let url = format!(
            "{}?{}{}",
            l.pathname().unwrap_or_default(),
            with_moment(&l.search().unwrap_or_default(), m),
            l.hash().unwrap_or_default()
        );
        if let Ok(h) = w.history() {
            let _ = h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
        }
    }
    let ok = crate::web::storage("sessionStorage", "setItem", &[FULL_KEY, "1"]).is_some();
    if let Some(p) = press {
        crate::web::storage("sessionStorage", "setItem", &[PRESS_KEY, p]);
    }
    if ok {
        let _ = w.location().reload();
    } else {
        // No session storage (a locked-down browser): say why nothing more
        // opens, rather than reload into the same build for ever.
        let _ = w.alert_with_message(
            "This part of Stampede Lab needs the full page, which this browser's storage \
             settings keep from loading. Open the page's link in a normal window.",
        );
    }
}

/// What the tour build left for the full one, if it starts with `prefix`:
/// the rest, taken (read once).
pub fn take(prefix: &str) -> Option<String> {
    let v = crate::web::storage("sessionStorage", "getItem", &[PRESS_KEY])?.as_string()?;
    let rest = v.strip_prefix(prefix)?.to_string();
    crate::web::storage("sessionStorage", "removeItem", &[PRESS_KEY]);
    Some(rest)
}

/// Left for the full build: the thread to follow (`follow:` and the
/// follow picker's value, or a thread's number).
pub const FOLLOW: &str = "follow:";

/// Left for the full build: the room's line to say (`toast:`, the tour
/// step it offers the way back to, a tab, the line).
pub const TOAST: &str = "toast:";

/// In the full build: presses the control the tour build asked for, once
/// it is on the page (panels are built in tasks after the mount) and
/// `ready()` says the run stands where the address put it.
pub fn press_pending(ready: Box<dyn Fn() -> bool>) {
    let Some(sel) = crate::web::storage("sessionStorage", "getItem", &[PRESS_KEY])
        .and_then(|v| v.as_string())
        .filter(|v| !v.starts_with(FOLLOW) && !v.starts_with(TOAST))
    else {
        return;
    };
    crate::web::storage("sessionStorage", "removeItem", &[PRESS_KEY]);
    if sel == QR_OPEN {
        if let Some(b) = crate::web::document().body() {
            let _ = b.class_list().add_1(QR_OPEN);
        }
        return;
    }
    try_press(sel, 100, std::rc::Rc::from(ready));
}

/// Tries every 50 ms; once out of tries, presses what is there anyway.
fn try_press(sel: String, tries: u32, ready: std::rc::Rc<dyn Fn() -> bool>) {
    use wasm_bindgen::JsCast;
    let found = crate::web::document()
        .query_selector(&sel)
        .ok()
        .flatten()
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
    match found.filter(|_| tries == 0 || ready()) {
        Some(b) => {
            // The tour keeps the room's controls behind "More": open it, so
            // what was pressed shows (a recording's Stop).
            if b.offset_parent().is_none() {
                if let Some(more) = crate::web::document()
                    .query_selector("header.topbar:not(.show-all) [data-control=more-controls]")
                    .ok()
                    .flatten()
                    .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
                {
                    more.click();
                }
            }
            b.scroll_into_view();
            b.click();
            let _ = b.focus();
        }
        None if tries > 0 => leptos::prelude::set_timeout(
            move || try_press(sel, tries - 1, ready),
            std::time::Duration::from_millis(50),
        ),
        None => {}
    }
}

/// The tour build's stand-in for a control only the full build has: a
/// button that loads the full build, which then presses `press` (a CSS
/// selector; a section is scrolled to).
pub fn stand_in(control: &str, label: &str, press: &str) -> web_sys::Element {
    let b = crate::dom::button(control, label);
    crate::dom::set(&b, "data-more", "");
    crate::dom::set(&b, "title", "Loads the rest of the lab, then opens this");
    let sel = press.to_string();
    let click = wasm_bindgen::closure::Closure::<dyn Fn()>::new(move || upgrade(Some(&sel)));
    let _ = wasm_bindgen::JsCast::unchecked_ref::<web_sys::EventTarget>(&b)
        .add_event_listener_with_callback(
            "click",
            wasm_bindgen::JsCast::unchecked_ref(click.as_ref()),
        );
    click.forget();
    b
}

#[cfg(test)]
mod tests {
    use super::{tour_only, with_moment};

    #[test]
    fn the_moment_replaces_the_address_s_own() {
        assert_eq!(
            with_moment("?c=off&seed=1", (8, false)),
            "c=off&seed=1&at=8"
        );
        assert_eq!(
            with_moment("?at=3&play=1&seed=2", (12, true)),
            "seed=2&at=12&play=1"
        );
        assert_eq!(with_moment("", (0, true)), "at=0&play=1");
    }

    #[test]
    fn a_first_visit_and_tour_steps_are_the_tour_build_s() {
        assert!(tour_only("", ""));
        assert!(tour_only("?", ""));
        assert!(tour_only("?preset=naive&seed=3", "#tour/basics/2"));
        assert!(tour_only("?present=1&at=120", "#tour/deeper"));
        assert!(tour_only("", "#tour"));
    }

    #[test]
    fn everything_else_is_the_full_build_s() {
        for (q, h) in [
            ("?preset=naive", ""),
            ("", "#questions"),
            ("?drill=", "#tour/basics/1"),
            ("?drill=cheap", ""),
            ("?list=abc&item=1", "#tour/basics/1"),
            ("?kit=1", "#tour/basics/1"),
            ("?cmp=layering", "#tour/solid/2"),
            ("?preset=naive", "#tour-nothing"),
        ] {
            assert!(!tour_only(q, h), "{q}{h}");
        }
    }
}
