//! A trainer's playlist on the page (the list itself, its link form and its
//! titles are the core's: `catalogue::playlist`).
//!
//! - **Building one**: "Add this view" (`data-playlist-add`) adds the view
//!   on screen at its moment; the editor (`data-playlist`) reorders,
//!   removes, copies the link and clears. The list being built is kept in
//!   localStorage.
//! - **Stepping one**: a link with `list=` (and `item=`, from 1) shows the
//!   list as a small strip (`data-playlist-strip`), and Page Down / Page Up,
//!   what a clicker sends, open the next / previous item, each a history
//!   entry of its own, so Back and Forward walk the list too. Inside a tour
//!   step the clicker still steps the *list*: the trainer put the list in
//!   the talk's order, a clicker has only those two buttons, and a tour
//!   step stepping the tour would leave the list behind for the tour's
//!   twenty steps. The arrows keep their meaning (the tour's steps, the
//!   clock).
//!
//! An item opens in the page itself (a new history entry, and the page's
//! own Back handling reads it), except a drill: the drill's panel is built
//! only when a page opens on a drill link, so a drill item, or any item
//! after one, loads its link afresh.
//!
//! Built with plain DOM calls, like the tour bar.

use catalogue::playlist::{parse_item, Item, Playlist, View, ITEM_KEY, KEY};
use leptos::prelude::*;
use stampede::scenario::{percent_decode, Notice};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::Element;

use crate::dom::{button, el, put, set, set_text, text_el, Listeners};
use crate::page::kept::Kept;
use crate::page::Page;
use crate::web::{document, window};

/// The list a link opened, and the item showing (from 0).
struct Active {
    list: Playlist,
    encoded: String,
    item: usize,
    /// The page was opened on a drill link (its panel is this page's).
    drill_page: bool,
}

/// The list a link opened, if any, and the strip's redraw once the strip
/// is built: made by the app, passed to every part that reads it (the
/// address's suffix, the clicker's keys, Back and Forward, the strip).
#[derive(Default)]
pub struct Open {
    active: Option<Active>,
    shown: Option<RwSignal<u64>>,
}

/// The app's handle on [`Open`].
pub type Lists = StoredValue<Open, LocalStorage>;

/// A handle on no list yet (the app's; [`start`] fills it from the link).
pub fn lists() -> Lists {
    StoredValue::new_local(Open::default())
}

fn value_of(query: &str, key: &str) -> Option<String> {
    let q = query.strip_prefix('?').unwrap_or(query);
    q.split('&').find_map(|part| {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        (k == key).then(|| percent_decode(v))
    })
}

/// Reads the opening link's list (`list=`, `item=`): what could not be
/// used is said. A list link without an item opens its first item.
pub fn start(lists: Lists, query: &str) -> Vec<Notice> {
    let Some(raw) = value_of(query, KEY) else {
        return Vec::new();
    };
    let (list, mut notices) = Playlist::decode(&raw);
    if list.items.is_empty() {
        notices.push(Notice::new(KEY, "the list has no item to show".to_string()));
        return notices;
    }
    let Ok(encoded) = list.encode() else {
        return notices;
    };
    let item = match value_of(query, ITEM_KEY) {
        Some(raw) => {
            let (k, n) = parse_item(&raw, list.items.len());
            notices.extend(n);
            // A hand-edited `item=` with another item's view (another
            // step, drill, comparison or kind of view): the view is the
            // item's, in place of this entry, so the strip's title is what
            // is on screen. Two scenarios are not told apart here (their
            // knobs' text may differ from the list's by rounding, and a
            // reload must never repeat): the strip says "changed" instead.
            let hash = window().location().hash().unwrap_or_default();
            let shown = Item::from_link(query, &hash).ok().map(|i| i.view);
            let wanted = list.items.get(k).map(|i| &i.view);
            if !shown
                .as_ref()
                .zip(wanted)
                .is_some_and(|(a, b)| same_kind(a, b))
            {
                if let Some(url) = url_of(&list, k, query.contains("present=1")) {
                    let _ = window().location().replace(&url);
                }
            }
            k
        }
        None => {
            // The bare list: its first item, in place of this entry.
            if let Some(url) = url_of(&list, 0, query.contains("present=1")) {
                let _ = window().location().replace(&url);
            }
            0
        }
    };
    // Listening before the page's own Back handling does (this runs as the
    // page is built): the entry's item is read before that handling's
    // effects write the address again. For the page's life.
    let pop = wasm_bindgen::closure::Closure::<dyn FnMut()>::new(move || popped(lists));
    let _ = window().add_event_listener_with_callback_and_bool(
        "popstate",
        pop.as_ref().unchecked_ref(),
        true,
    );
    pop.forget();
    let drill_page = crate::url_state::drill_of(query).is_some();
    lists.update_value(|o| {
        o.active = Some(Active {
            list,
            encoded,
            item,
            drill_page,
        })
    });
    notices
}

/// Two views of the same kind and name: the same tour step, drill or
/// comparison, or two scenarios.
fn same_kind(a: &View, b: &View) -> bool {
    match (a, b) {
        (View::Tour(p), View::Tour(q)) => p == q,
        (View::Drill { name: x, .. }, View::Drill { name: y, .. }) => x == y,
        (View::Compare { name: x, .. }, View::Compare { name: y, .. }) => x == y,
        (View::Scenario { .. }, View::Scenario { .. }) => true,
        _ => false,
    }
}

/// What the page's address carries after its own query while a list is
/// open: the list and the item showing.
pub fn suffix(lists: Lists) -> String {
    lists
        .try_with_value(|o| {
            o.active.as_ref().map_or_else(String::new, |a| {
                format!("&{KEY}={}&{ITEM_KEY}={}", a.encoded, a.item + 1)
            })
        })
        .unwrap_or_default()
}

fn url_of(list: &Playlist, k: usize, present: bool) -> Option<String> {
    let (q, hash) = list.link_of(k)?;
    let path = window().location().pathname().unwrap_or_default();
    let present = if present { "&present=1" } else { "" };
    Some(format!("{path}?{q}{present}{hash}"))
}

fn presenting() -> bool {
    document()
        .body()
        .is_some_and(|b| b.class_list().contains("presenter"))
}

/// Opens item `k` of the open list: a history entry of its own.
fn go(lists: Lists, k: usize) {
    let target = lists.try_update_value(|o| {
        let a = o.active.as_mut()?;
        let item = a.list.items.get(k)?;
        let fresh = a.drill_page || matches!(item.view, View::Drill { .. });
        let url = url_of(&a.list, k, presenting())?;
        a.item = k;
        Some((url, fresh))
    });
    let Some((url, fresh)) = target.flatten() else {
        return;
    };
    if fresh {
        let _ = window().location().assign(&url);
        return;
    }
    let w = window();
    if let Ok(h) = w.history() {
        let _ = h.push_state_with_url(&JsValue::NULL, "", Some(&url));
    }
    // The page's own Back handling opens the entry's view and moment.
    if let Ok(ev) = web_sys::Event::new("popstate") {
        let _ = w.dispatch_event(&ev);
    }
}

/// Page Down / Page Up while a list is open: its next / previous item.
/// True when the key was the list's.
pub fn key(lists: Lists, ev: &web_sys::KeyboardEvent) -> bool {
    let step: isize = match ev.key().as_str() {
        "PageDown" => 1,
        "PageUp" => -1,
        _ => return false,
    };
    let Some((k, len)) = lists
        .try_with_value(|o| o.active.as_ref().map(|a| (a.item, a.list.items.len())))
        .flatten()
    else {
        return false;
    };
    let typing = ev
        .target()
        .and_then(|t| t.dyn_into::<Element>().ok())
        .is_some_and(|e| {
            matches!(e.tag_name().as_str(), "TEXTAREA" | "SELECT")
                || (e.tag_name() == "INPUT"
                    && !matches!(
                        e.get_attribute("type").as_deref(),
                        Some("checkbox" | "button" | "range")
                    ))
        });
    if typing {
        return false;
    }
    ev.prevent_default();
    let to = k.saturating_add_signed(step);
    if to != k && to < len {
        go(lists, to);
    }
    true
}

/// Back or Forward to an entry of the list: the item it shows.
fn popped(lists: Lists) {
    let search = window().location().search().unwrap_or_default();
    let Some(raw) = value_of(&search, ITEM_KEY) else {
        return;
    };
    let k = lists.try_update_value(|o| {
        let a = o.active.as_mut()?;
        a.item = parse_item(&raw, a.list.items.len()).0;
        Some((a.item, o.shown))
    });
    if let Some(Some((k, Some(shown)))) = k {
        shown.set(k as u64);
    }
}

/// The moment of an item, in words: "at 120 ms, paused".
fn moment_text(item: &Item) -> String {
    match item.at {
        Some(ms) if item.play => format!("from {ms} ms, playing"),
        Some(ms) => format!("at {ms} ms, paused"),
        None => "from its start".to_string(),
    }
}

/// The strip and the editor; offers the header the add button ("Add this
/// view"), which the app lays out. The clicker's keys come through [`key`],
/// from the page's key handler.
pub fn mount(lists: Lists, parts: &crate::dom::Parts) -> Option<Element> {
    let drive = crate::page::use_page();
    let lab = parts.main.parent_element()?;
    mount_strip(lists, &lab, drive);
    Some(mount_editor(drive, &lab, parts))
}

fn mount_strip(lists: Lists, lab: &Element, drive: Page) {
    let Some((titles, item)) = lists
        .try_with_value(|o| {
            o.active.as_ref().map(|a| {
                let t: Vec<(String, String, String)> = a
                    .list
                    .items
                    .iter()
                    .map(|i| (i.kind().to_string(), i.title(), moment_text(i)))
                    .collect();
                (t, a.item)
            })
        })
        .flatten()
    else {
        return;
    };
    let strip = el("nav", "playlist-strip");
    set(&strip, "data-playlist-strip", "");
    set(&strip, "aria-label", "The list");
    let ol = el("ol", "");
    let n = titles.len();
    let chips: Vec<Element> = titles
        .iter()
        .enumerate()
        .map(|(k, (kind, title, when))| {
            let li = el("li", "");
            set(&li, "data-playlist-item", &(k + 1).to_string());
            let b = text_el("button", "", &(k + 1).to_string());
            set(&b, "type", "button");
            set(&b, "data-control", "playlist-go");
            set(&b, "data-k", &k.to_string());
            set(&b, "title", &format!("{kind}: {title}, {when}"));
            put(&li, &b);
            put(&ol, &li);
            li
        })
        .collect();
    put(&strip, &ol);
    let now = el("p", "playlist-now");
    put(&strip, &now);
    let mut on = Listeners::default();
    on.on(&strip, "click", move |ev| {
        let k = ev
            .target()
            .and_then(|t| t.dyn_into::<Element>().ok())
            .and_then(|e| e.get_attribute("data-k"))
            .and_then(|k| k.parse::<usize>().ok());
        if let Some(k) = k {
            go(lists, k);
        }
    });
    let _ = lab.insert_before(&strip, lab.first_child().as_ref());
    // Only signal types the page has already (each new one is code).
    let shown = RwSignal::new(item as u64);
    lists.update_value(|o| o.shown = Some(shown));
    // Whether the view on screen is still the item's: a digit, an arrow in
    // a tour item or a knob turned leaves it, and the strip says so rather
    // than keep a title that no longer matches.
    let changed = RwSignal::new(false);
    crate::dom::effect(move || {
        // What the view is made of (the address follows them).
        drive.scenario().track();
        drive.seed().track();
        drive.tour().track();
        drive.compare().track();
        let k = shown.get() as usize;
        // After the address is written for the change (its own effect).
        set_timeout(
            move || {
                let loc = window().location();
                let on_screen = Item::from_link(
                    &loc.search().unwrap_or_default(),
                    &loc.hash().unwrap_or_default(),
                )
                .ok()
                .map(|i| i.view);
                let item = lists
                    .try_with_value(|o| {
                        o.active
                            .as_ref()
                            .and_then(|a| a.list.items.get(k))
                            .map(|i| i.view.clone())
                    })
                    .flatten();
                let _ = changed.try_set(item.is_some() && on_screen != item);
            },
            std::time::Duration::from_millis(50),
        );
    });
    let parts = StoredValue::new_local((strip.clone(), chips, now, on));
    crate::dom::effect(move || {
        let k = shown.get() as usize;
        let changed = changed.get();
        parts.with_value(|(strip, chips, now, _)| {
            let _ = strip.toggle_attribute_with_force("data-changed", changed);
            for (i, li) in chips.iter().enumerate() {
                let _ = li.toggle_attribute_with_force("data-current", i == k);
                if let Some(b) = li.first_element_child() {
                    set(&b, "aria-current", if i == k { "step" } else { "false" });
                }
            }
            if let Some((kind, title, when)) = titles.get(k) {
                let said = if changed {
                    format!(
                        "{} of {n}, changed: the view on screen is no longer {kind}: {title}",
                        k + 1
                    )
                } else {
                    format!("{} of {n} · {kind}: {title}, {when}", k + 1)
                };
                set_text(now, &said);
                set(now, "title", &said);
            }
        });
    });
}

fn stored() -> Playlist {
    let raw = Kept::Playlist.get().unwrap_or_default();
    Playlist::decode(&raw).0
}

fn store(list: &Playlist) {
    match list.encode() {
        Ok(enc) if !list.items.is_empty() => {
            Kept::Playlist.set(&enc);
        }
        _ => {
            Kept::Playlist.remove();
        }
    }
}

/// The view on screen, at its moment: what "Add this view" adds (the A/B
/// view's from its own clock).
fn current(drive: Page) -> Result<Item, String> {
    let loc = window().location();
    let mut item = Item::from_link(
        &loc.search().unwrap_or_default(),
        &loc.hash().unwrap_or_default(),
    )?;
    item = if matches!(item.view, View::Compare { .. }) {
        let (at, play) = drive.ab_clock().map_or((None, false), |(us, play)| {
            (u32::try_from(us / 1000).ok(), play)
        });
        Item::new(item.view, at, play)
    } else {
        let ms = drive.reading().with_untracked(|r| r.now / 1000);
        let play = drive.playing().get_untracked();
        Item::new(item.view, u32::try_from(ms).ok(), play)
    };
    Ok(item)
}

/// The list being built, and the editor's last word on it.
type Building = StoredValue<(Playlist, String), LocalStorage>;

fn built(b: Building, f: impl FnOnce(&mut Playlist, &mut String)) {
    b.update_value(|(l, said)| f(l, said));
}

fn mount_editor(drive: Page, lab: &Element, parts: &crate::dom::Parts) -> Element {
    // The list being built, and the editor's last word on it: the
    // editor's own, for its life.
    let building: Building = StoredValue::new_local((stored(), String::new()));
    // Redraws the editor (only signal types the page has already).
    let tick = RwSignal::new(0u64);
    let bump = move || tick.update(|n| *n = n.wrapping_add(1));
    let mut on = Listeners::default();

    let add = button("playlist-add", "Add this view");
    let offer = add.clone();
    crate::dom::press_on_key("+", &add);
    set(&add, "aria-keyshortcuts", "+");
    set(&add, "data-playlist-add", "");
    set(
        &add,
        "title",
        "Add the view on screen, at its moment, to a list for a talk",
    );
    on.on(&add, "click", move |_| {
        let item = current(drive);
        built(building, |l, said| {
            *said = match item.and_then(|item| {
                let what = format!("{}: {}", item.kind(), item.title());
                l.push(item).map(|()| what)
            }) {
                Ok(what) => {
                    store(l);
                    format!("Added {what}.")
                }
                Err(e) => format!("Not added: {e}."),
            }
        });
        bump();
    });

    let sec = el("section", "panel playlist-editor");
    set(&sec, "data-playlist", "");
    set(&sec, "aria-labelledby", "playlist-title");
    let h = text_el("h2", "", "Your list for a talk");
    set(&h, "id", "playlist-title");
    put(&sec, &h);
    let ol = el("ol", "playlist-items");
    put(&sec, &ol);
    let row = el("div", "playlist-link");
    let link = el("input", "");
    set(&link, "type", "text");
    set(&link, "readonly", "");
    set(&link, "data-playlist-link", "");
    set(&link, "aria-label", "The list's link");
    put(&row, &link);
    for (control, label) in [
        ("playlist-copy", "Copy the link"),
        ("playlist-clear", "Clear"),
    ] {
        put(&row, &button(control, label));
    }
    put(&sec, &row);
    let said = el("p", "playlist-status");
    set(&said, "role", "status");
    put(&sec, &said);
    let _ = lab.insert_before(&sec, Some(&parts.main));

    on.on(&sec, "click", move |ev| {
        let Some(b) = ev
            .target()
            .and_then(|t| t.dyn_into::<Element>().ok())
            .and_then(|e| e.closest("button").ok().flatten())
        else {
            return;
        };
        let k = b
            .get_attribute("data-k")
            .and_then(|k| k.parse::<usize>().ok());
        let control = b.get_attribute("data-control").unwrap_or_default();
        built(building, |l, said| {
            let len = l.items.len();
            match (control.as_str(), k) {
                ("playlist-up", Some(k)) if k > 0 && k < len => l.items.swap(k, k - 1),
                ("playlist-down", Some(k)) if k + 1 < len => l.items.swap(k, k + 1),
                ("playlist-remove", Some(k)) if k < len => {
                    l.items.remove(k);
                }
                // The moment: from the view's own start, or paused there.
                ("playlist-start", Some(k)) if k < len => {
                    let i = &l.items[k];
                    l.items[k] = Item::new(i.view.clone(), None, false);
                }
                ("playlist-pause", Some(k)) if k < len => {
                    let i = &l.items[k];
                    l.items[k] = Item::new(i.view.clone(), i.at, !i.play);
                }
                ("playlist-clear", _) => l.items.clear(),
                ("playlist-copy", _) => {
                    copy(&link_text(l));
                    *said = "Copied the link: open it, press p for presenter mode, and step \
                             with Page Down."
                        .into();
                    return;
                }
                _ => return,
            }
            store(l);
            said.clear();
        });
        bump();
    });

    // An item's moment typed in (ms): kept paused or playing as it was.
    on.on(&sec, "change", move |ev| {
        let Some(input) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        else {
            return;
        };
        let Some(k) = input
            .get_attribute("data-k")
            .and_then(|k| k.parse::<usize>().ok())
        else {
            return;
        };
        let typed = input.value();
        built(building, |l, said| {
            let Some(i) = l.items.get(k) else {
                return;
            };
            match typed.trim().parse::<u32>() {
                Ok(ms) => {
                    l.items[k] = Item::new(i.view.clone(), Some(ms), i.play);
                    store(l);
                    said.clear();
                }
                Err(_) => {
                    *said = format!(
                        "Item {}'s moment stays {}: a moment is a whole number of ms, 0 for the start.",
                        k + 1,
                        moment_text(i)
                    );
                }
            }
        });
        bump();
    });

    let parts = StoredValue::new_local((sec, ol, link, said, add, on));
    // Redrawn when the view changes too (which item is the one on screen),
    // after the page has written its address.
    crate::dom::effect(move || {
        drive.tour().track();
        drive.compare().track();
        drive.scenario().track();
        drive.seed().track();
        set_timeout(bump, std::time::Duration::ZERO);
    });
    crate::dom::effect(move || {
        tick.track();
        let on_screen = current(drive).ok().map(|i| i.view);
        built(building, |l, text| {
            parts.with_value(|(sec, ol, link, said, add, _)| {
                let _ = sec.toggle_attribute_with_force("hidden", l.items.is_empty());
                set_text(said, text);
                set_text(
                    add,
                    &if l.items.is_empty() {
                        "Add this view".to_string()
                    } else {
                        format!("Add this view ({})", l.items.len())
                    },
                );
                ol.set_text_content(None);
                for (k, item) in l.items.iter().enumerate() {
                    let li = el("li", "");
                    set(&li, "data-playlist-item", &(k + 1).to_string());
                    if on_screen.as_ref() == Some(&item.view) {
                        set(&li, "data-current", "");
                    }
                    let words = el("span", "playlist-words");
                    put(
                        &words,
                        &text_el("strong", "", &format!("{}: ", item.kind())),
                    );
                    let _ = words.append_with_str_1(&format!(
                        "{}, {}",
                        item.title(),
                        moment_text(item)
                    ));
                    put(&li, &words);
                    // Its moment, to edit: the ms it opens at, paused or
                    // playing from there, or the view's own start.
                    let at = el("input", "playlist-at");
                    set(&at, "type", "number");
                    set(&at, "min", "0");
                    set(&at, "step", "1");
                    set(&at, "inputmode", "numeric");
                    set(&at, "data-k", &k.to_string());
                    set(&at, "data-playlist-at", "");
                    set(&at, "value", &item.at.unwrap_or(0).to_string());
                    set(
                        &at,
                        "aria-label",
                        &format!("Item {}'s moment, in ms", k + 1),
                    );
                    put(&li, &at);
                    // Words, not the media glyphs (U+23F8, U+23EE): the
                    // fonts a browser falls back on may lack them.
                    let pause = button("playlist-pause", "Pause");
                    set(&pause, "data-k", &k.to_string());
                    set(
                        &pause,
                        "aria-pressed",
                        if item.play { "false" } else { "true" },
                    );
                    set(
                        &pause,
                        "aria-label",
                        &format!("Item {}: paused at its moment, or playing on", k + 1),
                    );
                    if item.at.is_none() {
                        set(&pause, "disabled", "");
                    }
                    put(&li, &pause);
                    let start = button("playlist-start", "From start");
                    set(&start, "data-k", &k.to_string());
                    set(
                        &start,
                        "aria-label",
                        &format!("Item {}: from the view's own start", k + 1),
                    );
                    put(&li, &start);
                    for (control, label, what) in [
                        ("playlist-up", "↑", "Earlier"),
                        ("playlist-down", "↓", "Later"),
                        ("playlist-remove", "✕", "Remove"),
                    ] {
                        let b = button(control, label);
                        set(&b, "data-k", &k.to_string());
                        set(&b, "aria-label", &format!("{what}: item {}", k + 1));
                        put(&li, &b);
                    }
                    put(ol, &li);
                }
                if let Some(input) = link.dyn_ref::<web_sys::HtmlInputElement>() {
                    input.set_value(&link_text(l));
                }
            })
        });
    });
    offer
}

/// The list's link: its first item's page link, with the list after it.
fn link_text(l: &Playlist) -> String {
    let loc = window().location();
    let base = format!(
        "{}{}",
        loc.origin().unwrap_or_default(),
        loc.pathname().unwrap_or_default()
    );
    l.link_of(0)
        .map(|(q, hash)| format!("{base}?{q}{hash}"))
        .unwrap_or_default()
}

/// `navigator.clipboard.writeText(text)`, through `Reflect` (the Clipboard
/// binding is not linked in); where the browser refuses, the link is still
/// in its field to copy by hand.
fn copy(text: &str) {
    use js_sys::{Function, Reflect};
    let Ok(nav) = Reflect::get(&window(), &"navigator".into()) else {
        return;
    };
    let Ok(clip) = Reflect::get(&nav, &"clipboard".into()) else {
        return;
    };
    if let Some(f) = Reflect::get(&clip, &"writeText".into())
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
    {
        if let Ok(p) = f.call1(&clip, &text.into()) {
            // A refusal (no permission) is a rejected promise: caught, so
            // it is no console error.
            if let Ok(p) = p.dyn_into::<js_sys::Promise>() {
                let ignore = wasm_bindgen::closure::Closure::<dyn FnMut(JsValue)>::new(|_| {});
                let _ = p.catch(&ignore);
                ignore.forget();
            }
        }
    }
}
