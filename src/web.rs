//! The web leaf: the browser's window, its document, storage and wall
//! time. It imports nothing from the page; everything else reaches the
//! browser's globals through here.

/// The browser's window.
pub(crate) fn window() -> web_sys::Window {
    web_sys::window().expect("a browser window")
}

thread_local! {
    // Looked up once: the simulation's budget asks the time after every
    // slice of work, and each lookup of `window.performance` crosses into
    // JavaScript twice.
    static PERFORMANCE: Option<web_sys::Performance> = window().performance();
}

/// Wall time, in milliseconds (`performance.now()`; 0 without it).
pub(crate) fn wall_now() -> f64 {
    PERFORMANCE.with(|p| p.as_ref().map_or(0.0, web_sys::Performance::now))
}

/// The page's document.
pub(crate) fn document() -> web_sys::Document {
    window().document().expect("a document")
}

/// `window.<area>.<method>(args…)` for `localStorage` or `sessionStorage`,
/// through `Reflect` (the Storage binding is not linked in); a browser that
/// refuses storage just forgets.
pub(crate) fn storage(area: &str, method: &str, args: &[&str]) -> Option<wasm_bindgen::JsValue> {
    use js_sys::{Array, Function, Reflect};
    use wasm_bindgen::JsCast;
    let store = Reflect::get(&window(), &area.into()).ok()?;
    let f: Function = Reflect::get(&store, &method.into()).ok()?.dyn_into().ok()?;
    let a: Array = args
        .iter()
        .map(|x| wasm_bindgen::JsValue::from_str(x))
        .collect();
    f.apply(&store, &a).ok()
}
