//! The candidate's cue that a curveball landed (issue 40): a box across the
//! top of the window, in the danger colour and the room's type, with the
//! page's own sentence for the throw (`catalogue::interview::thrown_sentence`:
//! what, when, whether the run restarted, which counter to watch). It
//! stays until the candidate closes it or the next throw replaces it (the
//! only notice was once the grey "Changed from…" line under the header).

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::dom::{button, el, put, set, set_text, text_el};
use crate::web::document;

/// Shows `sentence` in the cue, built on first use.
pub(crate) fn show(sentence: &str) {
    let doc = document();
    let cue = match doc.query_selector("[data-thrown-cue]").ok().flatten() {
        Some(c) => c,
        None => {
            let c = el("div", "thrown-cue");
            set(&c, "data-thrown-cue", "");
            set(&c, "role", "alert");
            put(&c, &text_el("strong", "thrown-cue-title", "Curveball"));
            put(&c, &el("span", "thrown-cue-text"));
            let close = button("thrown-cue-close", "OK");
            set(&close, "aria-label", "Close the curveball's notice");
            let gone = c.clone();
            let shut = Closure::<dyn FnMut()>::new(move || {
                let _ = gone.set_attribute("hidden", "");
            });
            let _ = close.add_event_listener_with_callback("click", shut.as_ref().unchecked_ref());
            shut.forget();
            put(&c, &close);
            if let Some(b) = doc.body() {
                let _ = b.append_child(&c);
            }
            c
        }
    };
    if let Some(t) = cue.query_selector(".thrown-cue-text").ok().flatten() {
        set_text(&t, sentence);
    }
    let _ = cue.remove_attribute("hidden");
}
