//! The banner: what a shared link asked for that could not be used.

use leptos::prelude::*;
use stampede::scenario::Notice;
use wasm_bindgen::JsCast;

/// What a shared link asked for that could not be used.
#[component]
pub fn Banner(notices: RwSignal<Vec<Notice>>) -> impl IntoView {
    // Built and removed with plain DOM calls: it is there only while a link
    // had something the page could not use.
    let root = NodeRef::<leptos::html::Div>::new();
    crate::dom::effect(move || {
        use crate::dom::{button, el, put, text_el};
        let Some(host) = root.get() else {
            return;
        };
        host.set_text_content(None);
        notices.with(|n| {
            if n.is_empty() {
                return;
            }
            let banner = el("div", "banner");
            crate::dom::set(&banner, "role", "alert");
            put(
                &banner,
                &text_el(
                    "p",
                    "banner-title",
                    "Part of this link could not be used, so the page fell back to defaults for it:",
                ),
            );
            let list = el("ul", "");
            for x in n.iter().take(12) {
                put(&list, &text_el("li", "", &x.to_string()));
            }
            put(&banner, &list);
            let close = button("dismiss", "Dismiss");
            close.set_class_name("banner-close");
            let dismiss = wasm_bindgen::closure::Closure::once_into_js(move || notices.set(Vec::new()));
            let _ = close.add_event_listener_with_callback("click", dismiss.unchecked_ref());
            put(&banner, &close);
            put(&host, &banner);
        });
    });
    view! { <div node_ref=root></div> }
}
