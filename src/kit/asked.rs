//! The question the interviewer asks, on the candidate's screen: a band at
//! the top of the candidate's window (`data-candidate-question`, the
//! question's number) with the question's heading and its words, as the
//! kit's `ask <code> <n>` puts them; never its levels, red flags or
//! follow-ups (the answer and the scoring stay in the kit). Without a kit
//! it is never built.

use catalogue::interview;

use crate::dom::{el, put, set, set_text, text_el};
use crate::web::document;

/// Shows question `n` (0 is the card's); false when there is no such
/// question (the band is left as it was).
pub(crate) fn show(n: u32) -> bool {
    let Some(q) = interview::question(n) else {
        return false;
    };
    let doc = document();
    let band = match doc
        .query_selector("[data-candidate-question]")
        .ok()
        .flatten()
    {
        Some(b) => b,
        None => {
            let b = el("section", "asked-question screen-only");
            set(&b, "aria-live", "polite");
            set(&b, "aria-label", "The interviewer's question");
            put(&b, &text_el("p", "asked-question-head", ""));
            put(&b, &text_el("p", "asked-question-text", ""));
            let Some(body) = doc.body() else { return false };
            let _ = body.insert_before(&b, body.first_child().as_ref());
            b
        }
    };
    set(&band, "data-candidate-question", &n.to_string());
    if let Some(h) = band.query_selector(".asked-question-head").ok().flatten() {
        set_text(
            &h,
            &format!("The interviewer asks · {}", super::sheet::heading(q)),
        );
    }
    if let Some(t) = band.query_selector(".asked-question-text").ok().flatten() {
        set_text(&t, q.asks);
    }
    let _ = band.remove_attribute("hidden");
    true
}
