//! For a room: presenter mode (large type, the fleet and one big number,
//! controls hidden until the pointer moves), reduced motion, full screen,
//! the card's scenarios on the digit keys, and `?` for every shortcut.
//! Built with plain DOM calls, like the tour bar.

use leptos::prelude::*;
use web_sys::Element;

use super::tour_view::Drive;
use crate::dom::{button, document, el, put, set, text_el, Listeners};

/// The card's five rows on the digit keys: no defence, singleflight, the
/// claim alone, both layers, the claim outside singleflight.
pub const DIGITS: [(&str, &str); 5] = [
    ("1", "preset=naive"),
    ("2", "preset=singleflight"),
    ("3", "sf=0"),
    ("4", "preset=burst"),
    ("5", "preset=claim-outer"),
];

/// Every key the page answers to, for the `?` overlay.
pub const SHORTCUTS: [(&str, &str); 10] = [
    ("Space or .", "play or pause"),
    (
        "→ or Page Down",
        "the next tour step; in the sandbox, a step of the clock",
    ),
    ("← or Page Up", "back a step"),
    ("n", "pause at the next event"),
    ("End", "jump to the end of the run"),
    (
        "1 to 5",
        "the card's rows: none, singleflight, claim alone, both, claim outside",
    ),
    ("p", "presenter mode on or off"),
    ("f", "full screen"),
    ("?", "this list"),
    ("Esc", "close this list"),
];

/// How long the pointer rests before presenter mode hides the controls.
const IDLE_MS: u64 = 2500;

#[derive(Clone, Copy)]
pub struct Room {
    pub presenter: RwSignal<bool>,
    pub reduced: RwSignal<bool>,
    pub help: RwSignal<bool>,
    pub drive: Drive,
    idle: StoredValue<u32>,
}

impl Room {
    pub fn new(drive: Drive) -> Room {
        let reduced = crate::engine::window()
            .match_media("(prefers-reduced-motion: reduce)")
            .ok()
            .flatten()
            .is_some_and(|m| m.matches());
        Room {
            presenter: RwSignal::new(false),
            reduced: RwSignal::new(reduced),
            help: RwSignal::new(false),
            drive,
            idle: StoredValue::new(0),
        }
    }

    /// Handles a key that belongs to the room; true if it did.
    pub fn key(&self, key: &str) -> bool {
        match key {
            "p" | "P" => self.presenter.update(|p| *p = !*p),
            "f" | "F" => full_screen(),
            "?" => self.help.update(|h| *h = !*h),
            "Escape" if self.help.get_untracked() => self.help.set(false),
            _ => match DIGITS.iter().find(|(k, _)| *k == key) {
                Some((_, query)) => self.drive.open(query),
                None => return false,
            },
        }
        true
    }

    /// The pointer moved: show the controls, and hide them again once it
    /// rests (in presenter mode).
    pub fn pointer_moved(&self) {
        body_class("pointer-idle", false);
        let n = self.idle.with_value(|n| n.wrapping_add(1));
        self.idle.set_value(n);
        let (idle, presenter) = (self.idle, self.presenter);
        set_timeout(
            move || {
                if idle.get_value() == n && presenter.get_untracked() {
                    body_class("pointer-idle", true);
                }
            },
            std::time::Duration::from_millis(IDLE_MS),
        );
    }
}

fn body_class(name: &str, on: bool) {
    if let Some(b) = document().body() {
        let _ = b.class_list().toggle_with_force(name, on);
    }
}

fn full_screen() {
    let doc = document();
    if doc.fullscreen_element().is_some() {
        doc.exit_fullscreen();
    } else if let Some(e) = doc.document_element() {
        let _ = e.request_fullscreen();
    }
}

/// Builds the header's presenter and reduced-motion switches and the
/// shortcuts overlay, and keeps the page's classes in step.
pub fn mount(room: Room) {
    let doc = document();
    let find = |sel: &str| doc.query_selector(sel).ok().flatten();
    let Some(header) = find("header.topbar .modes").or_else(|| find("header.topbar")) else {
        return;
    };
    if find("[data-control=presenter]").is_some() {
        return;
    }
    let mut on = Listeners::default();
    let modes = el("div", "room");
    let switches = [
        (
            "presenter",
            "Presenter mode",
            "Large type, the fleet and one number (p)",
            room.presenter,
        ),
        (
            "reduced-motion",
            "Reduced motion",
            "No movement: each run jumps to its end; step through it with Next event",
            room.reduced,
        ),
        (
            "shortcuts",
            "Keys",
            "Every keyboard shortcut (?)",
            room.help,
        ),
    ]
    .map(|(control, label, title, flag)| {
        let b = button(control, label);
        set(&b, "title", title);
        on.on(&b, "click", move |_| flag.update(|v| *v = !*v));
        put(&modes, &b);
        b
    });
    set(&switches[2], "aria-keyshortcuts", "?");
    let [presenter, reduced, _] = switches;
    put(&header, &modes);

    let overlay = el("div", "shortcuts panel");
    set(&overlay, "role", "dialog");
    set(&overlay, "aria-labelledby", "shortcuts-title");
    let title = text_el("h2", "", "Keyboard shortcuts");
    set(&title, "id", "shortcuts-title");
    put(&overlay, &title);
    let list = el("dl", "");
    for (k, what) in SHORTCUTS {
        put(&list, &text_el("dt", "", k));
        put(&list, &text_el("dd", "", what));
    }
    put(&overlay, &list);
    let close = button("shortcuts-close", "Close");
    on.on(&close, "click", move |_| room.help.set(false));
    put(&overlay, &close);
    if let Some(b) = doc.body() {
        let _ = b.append_child(&overlay);
    }

    let parts = StoredValue::new_local((presenter, reduced, overlay, close, on));
    Effect::new(move |_| {
        let (p, r, h) = (room.presenter.get(), room.reduced.get(), room.help.get());
        parts.with_value(
            |(pb, rb, ov, close, _): &(Element, Element, Element, Element, Listeners)| {
                set(pb, "aria-pressed", if p { "true" } else { "false" });
                set(rb, "aria-pressed", if r { "true" } else { "false" });
                let _ = ov.toggle_attribute_with_force("hidden", !h);
                if h {
                    if let Some(c) = close.dyn_ref::<web_sys::HtmlElement>() {
                        let _ = c.focus();
                    }
                }
            },
        );
        body_class("presenter", p);
        body_class("reduced-motion", r);
        if !p {
            body_class("pointer-idle", false);
        }
    });
}

use wasm_bindgen::JsCast;
