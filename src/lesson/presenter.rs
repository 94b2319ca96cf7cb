//! For a room: presenter mode (large type, the fleet and one big number,
//! controls hidden until the pointer moves), reduced motion, full screen,
//! the card's scenarios on the digit keys, and `?` for every shortcut.
//! Built with plain DOM calls, like the tour bar.

use leptos::prelude::*;
use web_sys::Element;

use crate::dom::{button, el, put, set, set_text, text_el, Listeners};
use crate::page::action::Action;
use crate::page::kept::Kept;
use crate::page::Page;
use crate::web::document;

/// The card's five rows on the digit keys: no defence, singleflight, the
/// claim alone, both layers, the claim outside singleflight.
pub const DIGITS: [(&str, &str); 5] = [
    ("1", "preset=naive"),
    ("2", "preset=singleflight"),
    ("3", "sf=0"),
    ("4", "preset=burst"),
    ("5", "preset=claim-outer"),
];

/// The digits' rows, in words.
const ROWS: [&str; 5] = [
    "no defence",
    "singleflight",
    "the claim alone",
    "both layers",
    "the claim outside singleflight",
];

/// Every key the page answers to, for the `?` overlay.
pub const SHORTCUTS: [(&str, &str); 17] = [
    ("Space or .", "play or pause"),
    (
        "→ or Page Down",
        "the next tour step; in the sandbox and the A/B view, a step of the clock",
    ),
    ("← or Page Up", "back a step"),
    (
        "Page Down / Page Up",
        "with a list open (a list link), its next / previous item",
    ),
    ("n", "pause at the next event"),
    ("End", "jump to the end of the run"),
    (
        "1 to 5",
        "the card's rows: none, singleflight, claim alone, both, claim outside",
    ),
    (
        "A to D (Shift: take one back)",
        "in presenter mode, while a tour step asks: a hand for that option in the room's vote",
    ),
    ("r", "record a clip of the fleet, or stop recording"),
    ("+", "add this view to your list for a talk"),
    ("h", "in a drill, the next hint"),
    ("s", "in a drill, show the solution"),
    ("p", "presenter mode on or off"),
    ("f", "full screen"),
    (
        "q",
        "this page's link as a QR code, large (q or Esc closes it)",
    ),
    ("?", "this list"),
    ("Esc", "close this list"),
];

/// How long the pointer rests before presenter mode hides the controls.
const IDLE_MS: u64 = 2500;

#[derive(Clone, Copy)]
pub struct Room {
    /// Presenter mode (the page's, `Action::Present`).
    pub presenter: crate::page::Read<bool>,
    /// The room's theme is dark (light by default; remembered).
    pub room_dark: RwSignal<bool>,
    /// A line the room says for a moment (a digit key left the tour).
    pub toast: RwSignal<Option<(String, Option<super::tour::Place>)>>,
    pub reduced: RwSignal<bool>,
    pub help: RwSignal<bool>,
    /// The height the room's layout gives the stage's box (css px).
    pub stage_h: RwSignal<f64>,
    pub drive: Page,
    idle: StoredValue<u32>,
}

impl Room {
    /// The room of the page provided by the app (`use_page`).
    pub fn of_page() -> Room {
        let drive = crate::page::use_page();
        let presenter = drive.presenting();
        let reduced = crate::web::window()
            .match_media("(prefers-reduced-motion: reduce)")
            .ok()
            .flatten()
            .is_some_and(|m| m.matches());
        let room_dark = Kept::RoomTheme.get().as_deref() == Some("dark");
        Room {
            presenter,
            room_dark: RwSignal::new(room_dark),
            toast: RwSignal::new(None),
            reduced: RwSignal::new(reduced),
            help: RwSignal::new(false),
            stage_h: RwSignal::new(0.0),
            drive,
            idle: StoredValue::new(0),
        }
    }

    /// Handles a key that belongs to the room; true if it did.
    pub fn key(&self, key: &str) -> bool {
        match key {
            "p" | "P" => {
                self.drive
                    .act(Action::Present(!self.presenter.get_untracked()));
            }
            "f" | "F" => full_screen(),
            "?" => self.help.update(|h| *h = !*h),
            "Escape" if self.help.get_untracked() => self.help.set(false),
            _ => match DIGITS.iter().position(|(k, _)| *k == key) {
                Some(i) => {
                    // In the tour a digit leaves it for the sandbox, and
                    // says so, with the way back.
                    let from = self.drive.tour().get_untracked();
                    self.drive.act(Action::Open(DIGITS[i].1.to_string()));
                    if let Some(p) = from {
                        self.toast.set(Some((
                            format!(
                                "Key {key} left the tour for the sandbox on the card's row: {}.",
                                ROWS[i]
                            ),
                            Some(p),
                        )));
                    }
                }
                None => return false,
            },
        }
        true
    }

    /// Shows the controls when the pointer moves, as long as the page lives.
    pub fn follow_pointer(self) {
        let pointer = window_event_listener(leptos::ev::pointermove, move |_| self.pointer_moved());
        on_cleanup(move || pointer.remove());
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

/// Builds the shortcuts overlay and the room's toast, keeps the page's
/// classes in step, and offers the header the room's switches (presenter
/// mode, reduced motion, the keys, the room's theme), which the app lays
/// out.
pub fn mount(room: Room, parts: &crate::dom::Parts) -> Vec<Element> {
    let doc = document();
    if doc
        .query_selector("[data-control=presenter]")
        .ok()
        .flatten()
        .is_some()
    {
        return Vec::new();
    }
    let mut on = Listeners::default();
    let mut offer = Vec::new();
    let switches = [
        (
            "presenter",
            "Presenter mode",
            "Large type, the fleet and one number (p)",
            None,
        ),
        (
            "reduced-motion",
            "Reduced motion",
            "No movement: each run jumps to its end; step through it with Next event",
            Some(room.reduced),
        ),
        (
            "shortcuts",
            "Keys",
            "Every keyboard shortcut (?)",
            Some(room.help),
        ),
    ]
    .map(|(control, label, title, flag)| {
        let b = button(control, label);
        set(&b, "title", title);
        on.on(&b, "click", move |_| match flag {
            Some(flag) => flag.update(|v| *v = !*v),
            None => {
                room.drive
                    .act(Action::Present(!room.presenter.get_untracked()));
            }
        });
        offer.push(b.clone());
        b
    });
    set(&switches[2], "aria-keyshortcuts", "?");
    let [presenter, reduced, _] = switches;

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

    // The room's theme: light by default on a projector, remembered.
    let theme = button("room-theme", "");
    set(
        &theme,
        "title",
        "The room's theme in presenter mode, remembered",
    );
    on.on(&theme, "click", move |_| {
        room.room_dark.update(|d| *d = !*d);
        let v = if room.room_dark.get_untracked() {
            "dark"
        } else {
            "light"
        };
        Kept::RoomTheme.set(v);
    });
    offer.push(theme.clone());

    // A line said for a moment, with the way back to the tour.
    let toast = el("div", "room-toast");
    set(&toast, "role", "status");
    set(&toast, "data-toast", "");
    set(&toast, "hidden", "");
    let toast_text = el("span", "");
    put(&toast, &toast_text);
    let toast_back = button("toast-back", "Back to the tour");
    on.on(&toast_back, "click", move |_| {
        if let Some((_, Some(p))) = room.toast.get_untracked() {
            room.drive.act(Action::Tour(p));
        }
        room.toast.set(None);
    });
    put(&toast, &toast_back);
    if let Some(b) = doc.body() {
        let _ = b.append_child(&toast);
    }
    let shown = StoredValue::new(0u32);
    crate::dom::effect(move || {
        if room.toast.with(Option::is_some) {
            let n = shown.get_value().wrapping_add(1);
            shown.set_value(n);
            set_timeout(
                move || {
                    if shown.get_value() == n {
                        room.toast.set(None);
                    }
                },
                std::time::Duration::from_millis(8000),
            );
        }
    });

    let numbers = mount_numbers(room.drive.reading(), &parts.side);
    watch_stage(room.stage_h, &parts.stage);
    keep_questions_open(&mut on);

    let parts = StoredValue::new_local((
        presenter, reduced, overlay, close, on, theme, toast, toast_text,
    ));
    crate::dom::effect(move || {
        let (p, r, h) = (room.presenter.get(), room.reduced.get(), room.help.get());
        let dark = room.room_dark.get();
        let t = room.toast.get();
        parts.with_value(|(pb, rb, ov, close, _, theme, toast, toast_text)| {
            set(pb, "aria-pressed", if p { "true" } else { "false" });
            set(rb, "aria-pressed", if r { "true" } else { "false" });
            set_text(
                theme,
                if dark {
                    "Room theme: dark"
                } else {
                    "Room theme: light"
                },
            );
            let _ = theme.toggle_attribute_with_force("hidden", !p);
            let _ = ov.toggle_attribute_with_force("hidden", !h);
            let _ = toast.toggle_attribute_with_force("hidden", t.is_none());
            set_text(toast_text, t.as_ref().map_or("", |(s, _)| s.as_str()));
            if h {
                if let Some(c) = close.dyn_ref::<web_sys::HtmlElement>() {
                    let _ = c.focus();
                }
            }
        });
        if let Some(html) = doc_root() {
            let _ = html
                .class_list()
                .toggle_with_force("room-light", p && !dark);
            let _ = html.class_list().toggle_with_force("room-dark", p && dark);
        }
        body_class("presenter", p);
        body_class("reduced-motion", r);
        // The controls step back at once in presenter mode (a clicker never
        // moves the pointer); a move brings them back for a while.
        body_class("pointer-idle", p);
    });
    let _ = numbers;
    offer
}

fn doc_root() -> Option<Element> {
    document().document_element()
}

/// The numbers the back row reads, beside the fleet in presenter mode:
/// Redis's and the origin's counts (the canvas's boxes, in large type) and
/// the clock, from the run on screen. They go right under the proof, the
/// column's first part (`Parts::side`).
fn mount_numbers(
    reading: crate::page::Read<crate::reading::Reading>,
    side: &Element,
) -> Option<()> {
    let sec = el("section", "panel room-numbers");
    set(&sec, "aria-label", "Redis, the origin and the clock");
    let dl = el("dl", "");
    let row = |name: &str, title: &str| {
        let div = el("div", "room-row");
        set(&div, "data-room", name);
        put(&div, &text_el("dt", "", title));
        let dd = el("dd", "");
        let num = el("span", "num room-value");
        let what = el("span", "room-what");
        put(&dd, &num);
        put(&dd, &what);
        put(&div, &dd);
        put(&dl, &div);
        (num, what)
    };
    let parts = [
        row("redis", "Redis"),
        row("origin", "Origin"),
        row("clock", "Clock"),
    ];
    put(&sec, &dl);
    let after = side.first_element_child().and_then(|p| p.next_sibling());
    let _ = side.insert_before(&sec, after.as_ref());
    let parts = StoredValue::new_local(parts);
    crate::dom::effect(move || {
        reading.with(|r| {
            parts.with_value(|[redis, origin, clock]| {
                let rep = &r.report;
                set_text(&redis.0, &rep.claim_attempts.to_string());
                set_text(
                    &redis.1,
                    if rep.claim_attempts == 1 {
                        "claim attempt"
                    } else {
                        "claim attempts"
                    },
                );
                set_text(&origin.0, &rep.recomputes.to_string());
                set_text(
                    &origin.1,
                    if rep.recomputes == 1 {
                        "recompute"
                    } else {
                        "recomputes"
                    },
                );
                set_text(&clock.0, &crate::clock::now_ms_text(r.now));
                set_text(&clock.1, "ms");
            })
        })
    });
    Some(())
}

/// In presenter mode the stage's box takes the height the layout leaves
/// it; a ResizeObserver hands that height to the canvas (no layout read in
/// a frame).
fn watch_stage(stage_h: RwSignal<f64>, host: &Element) {
    use wasm_bindgen::closure::Closure;
    let seen = Closure::<dyn FnMut(js_sys::Array)>::new(move |entries: js_sys::Array| {
        if let Ok(e) = entries.get(0).dyn_into::<web_sys::ResizeObserverEntry>() {
            stage_h.set(e.content_rect().height());
        }
    });
    if let Ok(o) = web_sys::ResizeObserver::new(seen.as_ref().unchecked_ref()) {
        o.observe(host);
    }
    // Mounted once for the page's life.
    seen.forget();
}

/// An interview question opened and a scenario link followed: coming back
/// finds the answer still open (the open ones are kept for the tab).
fn keep_questions_open(on: &mut Listeners) {
    let Ok(all) = document().query_selector_all("details[data-question]") else {
        return;
    };
    let open: Vec<String> = Kept::OpenQuestions
        .get()
        .unwrap_or_default()
        .split(',')
        .map(str::to_string)
        .collect();
    for i in 0..all.length() {
        let Some(d) = all.item(i).and_then(|n| n.dyn_into::<Element>().ok()) else {
            continue;
        };
        if d.get_attribute("data-question")
            .is_some_and(|q| open.contains(&q))
        {
            set(&d, "open", "");
        }
        on.on(&d, "toggle", move |_| {
            let Ok(all) = document().query_selector_all("details[data-question][open]") else {
                return;
            };
            let list: Vec<String> = (0..all.length())
                .filter_map(|i| all.item(i).and_then(|n| n.dyn_into::<Element>().ok()))
                .filter_map(|d| d.get_attribute("data-question"))
                .collect();
            Kept::OpenQuestions.set(&list.join(","));
        });
    }
}

use wasm_bindgen::JsCast;
