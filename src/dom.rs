//! A small kit for the parts of the page built once with plain DOM calls
//! and written each frame (the A/B view, the tour bar): fixed structures
//! whose numbers change, where every reactive `view!` binding would cost
//! the wasm its own code. Text goes in as text, never as HTML.

use web_sys::Element;

use crate::web::document;

/// An element with a class (none if `class` is empty).
pub(crate) fn el(tag: &str, class: &str) -> Element {
    let e = document().create_element(tag).expect("create an element");
    if !class.is_empty() {
        e.set_class_name(class);
    }
    e
}

/// An element holding `text`.
pub(crate) fn text_el(tag: &str, class: &str, text: &str) -> Element {
    let e = el(tag, class);
    e.set_text_content(Some(text));
    e
}

/// Lays the page out now (reading a size forces it), so that the work joins
/// the current task instead of the next frame's.
pub(crate) fn force_layout() {
    let _ = document().body().map(|b| b.offset_height());
}

/// Sets an attribute.
pub(crate) fn set(e: &Element, name: &str, value: &str) {
    let _ = e.set_attribute(name, value);
}

/// Appends `child` to `parent`.
pub(crate) fn put(parent: &Element, child: &Element) {
    let _ = parent.append_child(child);
}

/// Replaces the text, touching the DOM only when it changed.
pub(crate) fn set_text(e: &Element, text: &str) {
    if e.text_content().as_deref() != Some(text) {
        e.set_text_content(Some(text));
    }
}

/// A button with a `data-control` name.
pub(crate) fn button(control: &str, label: &str) -> Element {
    let b = text_el("button", "", label);
    set(&b, "type", "button");
    set(&b, "data-control", control);
    b
}

/// Event listeners that live as long as their owner.
#[derive(Default)]
pub(crate) struct Listeners(Vec<wasm_bindgen::closure::Closure<dyn FnMut(web_sys::Event)>>);

impl Listeners {
    pub(crate) fn on(
        &mut self,
        target: &Element,
        event: &str,
        f: impl FnMut(web_sys::Event) + 'static,
    ) {
        use wasm_bindgen::JsCast;
        let cb =
            wasm_bindgen::closure::Closure::wrap(Box::new(f) as Box<dyn FnMut(web_sys::Event)>);
        let _ = target.add_event_listener_with_callback(event, cb.as_ref().unchecked_ref());
        self.0.push(cb);
    }
}

/// Builds a part of the page with `build` once its host element (from
/// `host`) is mounted. The effect tracks only the host, which is mounted
/// once, so it does not run again and dispose what `build` made.
pub(crate) fn build_once(
    host: impl Fn() -> Option<Element> + 'static,
    build: impl FnOnce(Element) + 'static,
) {
    // One copy of the effect in the wasm, whatever the part.
    build_once_boxed(Box::new(host), Box::new(build));
}

/// An effect: runs `f` now, and again whenever a signal it read changes.
/// Every effect of the page goes through here, so the wasm holds one copy of
/// Leptos's effect machinery (each `Effect::new` with a closure type of its
/// own is a copy, about 0.7 KB before the body).
pub(crate) fn effect(f: impl FnMut() + 'static) {
    effect_boxed(Box::new(f));
}

fn effect_boxed(mut f: Box<dyn FnMut()>) {
    leptos::prelude::Effect::new(move |_| f());
}

type Host = Box<dyn Fn() -> Option<Element>>;

fn build_once_boxed(host: Host, build: Box<dyn FnOnce(Element)>) {
    let mut build = Some(build);
    leptos::prelude::Effect::new(move |_| {
        if let Some(el) = host() {
            if let Some(b) = build.take() {
                let owner = leptos::prelude::Owner::current().unwrap_or_default();
                later(Box::new(move || owner.with(move || b(el))));
            }
        }
    });
}

/// Builds a part of the page with `build` as soon as its host element is
/// mounted: in the task that mounted it (the effect's first run, a
/// microtask), not a later one, for parts other parts look up as soon as
/// they are mounted (the proof, the counters). `build` runs untracked, so
/// what it reads does not run the effect again (and dispose what it made).
pub(crate) fn build_now(
    host: impl Fn() -> Option<Element> + 'static,
    build: impl FnOnce(Element) + 'static,
) {
    build_now_boxed(Box::new(host), Box::new(build));
}

fn build_now_boxed(host: Host, build: Box<dyn FnOnce(Element)>) {
    let mut build = Some(build);
    leptos::prelude::Effect::new(move |_| {
        if let Some(el) = host() {
            if let Some(b) = build.take() {
                leptos::prelude::untrack(move || b(el));
            }
        }
    });
}

/// Sets an attribute, touching the DOM only when it changed.
pub(crate) fn set_changed(e: &Element, name: &str, value: &str) {
    if e.get_attribute(name).as_deref() != Some(value) {
        set(e, name, value);
    }
}

type Part = Box<dyn FnOnce()>;

thread_local! {
    static LATER: std::cell::RefCell<Vec<Part>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `part` in the next task, with every other part asked for in this
/// one, and lays them out there: the mount's parts (the transport, the
/// preset picker, the legend, the arithmetic) become one short task of
/// their own, and the 29 knobs another, instead of a share of the mount's
/// (or 29 tasks in a row, which would hold off the frames between them).
fn later(part: Part) {
    let first = LATER.with(|q| {
        let mut q = q.borrow_mut();
        q.push(part);
        q.len() == 1
    });
    if first {
        task(Box::new(|| {
            for part in LATER.with(|q| std::mem::take(&mut *q.borrow_mut())) {
                part();
            }
        }));
    }
}

/// Runs `f` in a task of its own, under the current reactive owner, and
/// lays the page out at its end: its layout joins this task, not the next
/// frame's.
pub(crate) fn task(f: Box<dyn FnOnce()>) {
    let owner = leptos::prelude::Owner::current().unwrap_or_default();
    leptos::prelude::set_timeout(
        move || {
            owner.with(f);
            force_layout();
        },
        std::time::Duration::ZERO,
    );
}

/// A key typed into a field (or with a modifier): not the page's shortcut.
pub(crate) fn typing(e: &web_sys::KeyboardEvent) -> bool {
    let field = e
        .target()
        .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Element>(t).ok())
        .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"));
    field || e.ctrl_key() || e.meta_key() || e.alt_key()
}

/// Marks `e` (`.from-question`) and brings it into view (its foot at the
/// screen's foot, so one already in view from the top stays put): the
/// counter a reference question's link names, marked by its owner. The
/// scroll waits two frames, for the view that just opened to lay itself
/// out (the A/B view sizes its fleets in its first frame).
pub(crate) fn show_marked(e: &Element) {
    use wasm_bindgen::JsCast;
    let _ = e.class_list().add_1("from-question");
    let target = e.clone();
    let second = wasm_bindgen::closure::Closure::once_into_js(move || {
        target.scroll_into_view_with_bool(false);
    });
    let first = wasm_bindgen::closure::Closure::once_into_js(move || {
        let _ = crate::web::window().request_animation_frame(second.unchecked_ref());
    });
    let _ = crate::web::window().request_animation_frame(first.unchecked_ref());
}

/// Scrolls the page just enough that `e` is not under the sticky bar
/// `bar` (a selector within `e`'s panel) at the screen's foot: a verdict
/// written under Back / Next. Waits a frame for the words to lay out.
pub(crate) fn above_sticky_foot(e: &Element, bar: &'static str) {
    let target = e.clone();
    let f = wasm_bindgen::closure::Closure::once_into_js(move || {
        let bar = target
            .closest(".panel")
            .ok()
            .flatten()
            .and_then(|p| p.query_selector(bar).ok().flatten());
        let Some(bar) = bar else { return };
        let (mine, foot) = (
            target.get_bounding_client_rect(),
            bar.get_bounding_client_rect(),
        );
        let screen = crate::web::window()
            .inner_height()
            .ok()
            .and_then(|h| h.as_f64())
            .unwrap_or(0.0);
        // Only where the bar stands at the screen's foot over the words.
        if mine.height() > 0.0 && foot.bottom() >= screen - 2.0 && mine.bottom() > foot.top() {
            crate::web::window().scroll_by_with_x_and_y(0.0, mine.bottom() - foot.top() + 8.0);
        }
    });
    let _ = crate::web::window().request_animation_frame(wasm_bindgen::JsCast::unchecked_ref(&f));
}

/// Gives `button` a key: pressing `key` (either case) outside a text field
/// and without Ctrl, Alt or Meta clicks it, while it is on the page, in no
/// `hidden` part, and enabled.
/// A room's action is a key as well as a button (`?` lists them); the
/// button's own handler does the work, so the two cannot drift apart.
pub(crate) fn press_on_key(key: &'static str, button: &Element) {
    use wasm_bindgen::JsCast;
    let b = button.clone();
    let on_key = wasm_bindgen::closure::Closure::<dyn FnMut(web_sys::KeyboardEvent)>::new(
        move |e: web_sys::KeyboardEvent| {
            if typing(&e) || !e.key().eq_ignore_ascii_case(key) {
                return;
            }
            let Some(h) = b.dyn_ref::<web_sys::HtmlElement>() else {
                return;
            };
            // On the page, in no hidden part of it, and not disabled. (A
            // part the tour or presenter mode tucks away by style still
            // answers: that is what the key is for.)
            let hidden = h.closest("[hidden]").ok().flatten().is_some();
            if !h.is_connected() || hidden || h.has_attribute("disabled") {
                return;
            }
            e.prevent_default();
            h.click();
        },
    );
    let _ = crate::web::window()
        .add_event_listener_with_callback("keydown", on_key.as_ref().unchecked_ref());
    // As long as the page (the button's view is never unmounted).
    on_key.forget();
}

/// The page's own parts the views build around, handed out by the app, so
/// that no view finds another's part by selector: the sandbox's `main`, the
/// header, its row of modes (the A/B view's button first; the tour adds its
/// own), the room's switches at the row's end (presenter mode's, then the
/// playlist's "Add this view"), and the numbers' column.
#[derive(Clone)]
pub struct Parts {
    pub main: web_sys::Element,
    pub header: web_sys::Element,
    /// The numbers' column; its first child is the proof.
    pub side: web_sys::Element,
    /// The sandbox's fleet: the box that holds its two canvases.
    pub stage: web_sys::Element,
}
