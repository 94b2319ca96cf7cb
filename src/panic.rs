//! A panic must never leave a frozen or blank page. The hook logs the panic
//! to the console, stops the animation loop, and puts a plain message with a
//! reload button on top of the page, built with DOM calls (no HTML parsing)
//! because the reactive runtime may be in no state to render anything.

use std::sync::atomic::{AtomicBool, Ordering};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

static PANICKED: AtomicBool = AtomicBool::new(false);

/// True once a panic happened: the animation loop stops drawing.
pub fn has_panicked() -> bool {
    PANICKED.load(Ordering::Relaxed)
}

pub fn install() {
    std::panic::set_hook(Box::new(|info| {
        web_sys::console::error_1(&info.to_string().into());
        let first = !PANICKED.swap(true, Ordering::Relaxed);
        if first {
            show(&info.to_string());
        }
    }));
}

fn show(detail: &str) -> Option<()> {
    let document = web_sys::window()?.document()?;
    let body = document.body()?;
    let el = |tag: &str, class: &str, text: &str| -> Option<web_sys::HtmlElement> {
        let e = document
            .create_element(tag)
            .ok()?
            .dyn_into::<web_sys::HtmlElement>()
            .ok()?;
        e.set_class_name(class);
        e.set_text_content(Some(text));
        Some(e)
    };
    let panel = el("div", "crash", "")?;
    panel.set_attribute("role", "alert").ok()?;
    panel.set_attribute("data-crash", "").ok()?;
    let short: String = detail.chars().take(400).collect();
    let parts = [
        ("h2", "crash-title", "The simulation stopped"),
        (
            "p",
            "crash-text",
            "Something went wrong inside the page and it cannot carry on. Reloading starts it \
             again with the same link.",
        ),
        ("pre", "crash-detail", short.as_str()),
    ];
    for (tag, class, text) in parts {
        let part = el(tag, class, text)?;
        panel.append_child(&part).ok()?;
    }
    let button = el("button", "crash-reload", "Reload the page")?;
    button.set_attribute("type", "button").ok()?;
    let reload = Closure::<dyn FnMut()>::new(|| {
        if let Some(w) = web_sys::window() {
            let _ = w.location().reload();
        }
    });
    button.set_onclick(Some(reload.as_ref().unchecked_ref()));
    reload.forget();
    panel.append_child(&button).ok()?;
    body.append_child(&panel).ok()?;
    let _ = button.focus();
    Some(())
}

/// Lets the end-to-end test check the crash screen:
/// `window.wasmBindings.crash_for_testing()`.
#[wasm_bindgen]
pub fn crash_for_testing() {
    panic!("a crash requested for testing");
}
