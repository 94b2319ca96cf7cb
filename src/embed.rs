//! Embed mode (`embed=1`): the run in a slide or a wiki page, through an
//! iframe. The page shows the fleet, the proof and the play controls only,
//! sized to the frame (style/kit.css), with a link that opens the same run
//! in a full page. The reference's "A run in your slides" writes the iframe
//! snippet for the run on screen.

use wasm_bindgen::JsCast;

use crate::dom::Listeners;
use crate::web::{document, window};

/// The size the snippet gives the frame: a 16:9 slide's.
const FRAME: (u32, u32) = (960, 540);

/// True when the link asks for embed mode.
pub fn wanted(query: &str) -> bool {
    query
        .trim_start_matches('?')
        .split('&')
        .any(|kv| kv == "embed=1" || kv == "embed")
}

/// The query without its `embed` key (the full page of the same run).
pub fn without(query: &str) -> String {
    query
        .trim_start_matches('?')
        .split('&')
        .filter(|kv| !kv.is_empty() && *kv != "embed" && !kv.starts_with("embed="))
        .collect::<Vec<_>>()
        .join("&")
}

/// The iframe snippet for a page at `base` (origin and path) showing `query`.
pub fn snippet(base: &str, query: &str) -> String {
    let q = without(query);
    let sep = if q.is_empty() { "" } else { "&" };
    let src = format!("{base}?{q}{sep}embed=1").replace('"', "%22");
    format!(
        "<iframe src=\"{src}\" width=\"{}\" height=\"{}\" title=\"Stampede Lab\" loading=\"lazy\" style=\"border:0\"></iframe>",
        FRAME.0, FRAME.1
    )
}

fn here() -> (String, String) {
    let loc = window().location();
    let base = format!(
        "{}{}",
        loc.origin().unwrap_or_default(),
        loc.pathname().unwrap_or_default()
    );
    let query = loc.search().unwrap_or_default();
    (base, query)
}

/// Marks the page as embedded and adds the link out (the query is read
/// when it is followed: the page keeps its link current).
pub fn install() {
    let doc = document();
    let Some(body) = doc.body() else { return };
    let _ = body.class_list().add_1("embed");
    let link = crate::dom::text_el("a", "embed-open", "Open in Stampede Lab ↗");
    crate::dom::set(&link, "target", "_blank");
    crate::dom::set(&link, "rel", "noopener");
    crate::dom::set(&link, "data-embed-open", "");
    let mut l = Listeners::default();
    let target = link.clone();
    let point = move |_: web_sys::Event| {
        let (base, query) = here();
        let q = without(&query);
        crate::dom::set(&target, "href", &format!("{base}?{q}"));
    };
    crate::dom::set(&link, "href", "./");
    l.on(&link, "pointerdown", point.clone());
    l.on(&link, "focus", point);
    let _ = body.append_child(&link);
    std::mem::forget(l);
}

/// Wires the reference's snippet button, when the page has one.
pub fn wire_snippet() {
    let doc = document();
    let (Some(button), Some(code)) = (
        doc.query_selector("[data-embed-snippet]").ok().flatten(),
        doc.query_selector("[data-embed-code]").ok().flatten(),
    ) else {
        return;
    };
    let mut l = Listeners::default();
    l.on(&button, "click", move |_| {
        let (base, query) = here();
        let text = snippet(&base, &query);
        if let Some(area) = code.dyn_ref::<web_sys::HtmlTextAreaElement>() {
            area.set_value(&text);
            let _ = code.remove_attribute("hidden");
            let _ = area.focus();
            area.select();
        }
    });
    std::mem::forget(l);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embed_is_asked_for_by_its_key_only() {
        assert!(wanted("?preset=burst&embed=1"));
        assert!(wanted("embed"));
        assert!(!wanted("?embed=0"));
        assert!(!wanted("?noembed=1"));
    }

    #[test]
    fn the_full_page_link_drops_the_key_only() {
        assert_eq!(
            without("?preset=burst&embed=1&seed=3"),
            "preset=burst&seed=3"
        );
        assert_eq!(without("?embed=1"), "");
    }

    #[test]
    fn the_snippet_embeds_the_run_on_screen() {
        let s = snippet("https://lab.example/x/", "?preset=burst&seed=3");
        assert!(
            s.starts_with("<iframe src=\"https://lab.example/x/?preset=burst&seed=3&embed=1\""),
            "{s}"
        );
        assert!(s.contains("width=\"960\" height=\"540\""));
        // Already embedded: one key, not two; a quote cannot end the attribute.
        let s = snippet("https://lab.example/", "?embed=1&a=\"x");
        assert!(s.contains("?a=%22x&embed=1\""), "{s}");
        assert_eq!(s.matches("embed=1").count(), 1);
    }
}
