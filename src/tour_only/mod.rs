//! The tour build's stand-ins for the full build's modules (see
//! `crate::more`): the same names the page calls, doing what the tour
//! needs of them, and no more. Whatever opens one of these parts loads the
//! full build first.

/// The A/B view: the full build's. The tour build loads the full one as
/// soon as the A/B view is asked for, so nothing here is ever open.
pub mod compare {
    use crate::page::Command;

    /// No A/B view is open: the key is the sandbox's.
    pub(crate) fn key(_: Command) -> bool {
        false
    }

    /// No A/B view is open: nothing to move.
    pub(crate) fn seek_to(_: u64, _: bool) {}

    /// No A/B view is open: no clock.
    pub(crate) fn moment() -> Option<(u64, bool)> {
        None
    }
}

/// A trainer's list: the full build's (a list's link opens the full build).
pub mod playlist {
    use crate::page::Drive;
    use stampede::scenario::Notice;

    /// No list is open in the tour build: nothing to read from the address.
    pub fn start(_: &str) -> Vec<Notice> {
        Vec::new()
    }

    /// No list is open: nothing to keep in the address.
    pub fn suffix() -> String {
        String::new()
    }

    /// No list is open: Page Up and Down are the tour's.
    pub fn key(_: &web_sys::KeyboardEvent) -> bool {
        false
    }

    /// "Add this view", which loads the full build and adds the view there
    /// (the tour step at its moment).
    pub fn mount(_: Drive) {
        let doc = crate::web::document();
        if let Some(host) = doc
            .query_selector("header.topbar .room")
            .ok()
            .flatten()
            .or_else(|| doc.query_selector("header.topbar").ok().flatten())
        {
            let add = crate::more::stand_in("playlist-add", "Add this view", "[data-playlist-add]");
            crate::dom::put(&host, &add);
        }
    }
}

/// The link's QR code: the full build's. In the tour build `q` loads the
/// full build, which opens the code; the printed summary carries the link
/// as text (`data-qr`, which the print shows).
pub mod qr {
    pub fn install() {
        let before = wasm_bindgen::closure::Closure::<dyn FnMut()>::new(|| {
            let w = crate::web::window();
            let link = crate::url_state::room_link(&w.location().href().unwrap_or_default());
            if let Ok(all) = crate::web::document().query_selector_all("[data-qr]") {
                for i in 0..all.length() {
                    if let Some(e) = all
                        .item(i)
                        .and_then(|n| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(n).ok())
                    {
                        crate::dom::set(&e, "data-qr", &link);
                    }
                }
            }
        });
        let _ = crate::web::window().add_event_listener_with_callback(
            "beforeprint",
            wasm_bindgen::JsCast::unchecked_ref(before.as_ref()),
        );
        before.forget();
        let keys = wasm_bindgen::closure::Closure::<dyn FnMut(web_sys::KeyboardEvent)>::new(
            move |e: web_sys::KeyboardEvent| {
                if !crate::dom::typing(&e) && matches!(e.key().as_str(), "q" | "Q") {
                    crate::more::upgrade(Some(crate::more::QR_OPEN));
                }
            },
        );
        let _ = crate::web::window().add_event_listener_with_callback(
            "keydown",
            wasm_bindgen::JsCast::unchecked_ref(keys.as_ref()),
        );
        keys.forget();
    }
}
