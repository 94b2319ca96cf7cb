//! The question the interviewer asks, on the candidate's screen: a band at
//! the top of the candidate's window (`data-candidate-question`, the
//! question's number) with the question's heading and its words, as the
//! kit's `ask <code> <n>` puts them; never its levels, red flags or
//! follow-ups (the answer and the scoring stay in the kit). Without a kit
//! it is never built.

use std::cell::RefCell;

use catalogue::interview;
use web_sys::Element;

use crate::dom::{el, put, set, set_text, text_el};
use crate::web::document;

/// The band, built at the first question shown: its elements are kept
/// here, never looked up again in the document.
#[derive(Default)]
pub(crate) struct Asked(RefCell<Option<Band>>);

struct Band {
    root: Element,
    head: Element,
    text: Element,
}

impl Band {
    /// The band at the top of the body (none without a body).
    fn build() -> Option<Band> {
        let root = el("section", "asked-question screen-only");
        set(&root, "aria-live", "polite");
        set(&root, "aria-label", "The interviewer's question");
        let head = text_el("p", "asked-question-head", "");
        let text = text_el("p", "asked-question-text", "");
        put(&root, &head);
        put(&root, &text);
        let body = document().body()?;
        let _ = body.insert_before(&root, body.first_child().as_ref());
        Some(Band { root, head, text })
    }
}

impl Asked {
    /// Shows question `n` (0 is the card's); false when there is no such
    /// question (the band is left as it was).
    pub(crate) fn show(&self, n: u32) -> bool {
        let Some(q) = interview::question(n) else {
            return false;
        };
        let mut band = self.0.borrow_mut();
        if band.is_none() {
            *band = Band::build();
        }
        let Some(b) = band.as_ref() else { return false };
        set(&b.root, "data-candidate-question", &n.to_string());
        set_text(
            &b.head,
            &format!("The interviewer asks · {}", super::sheet::heading(q)),
        );
        set_text(&b.text, q.asks);
        let _ = b.root.remove_attribute("hidden");
        true
    }
}
