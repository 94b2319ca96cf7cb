//! The panels: the numbers (arithmetic, counters, the read path counted)
//! and the controls (knobs, transport, preset picker).

pub mod banner;
pub mod code_panel;
pub mod conformance;
pub mod counters;
pub mod knobs;
pub mod transport;

/// The numbers' column, mounted into `side` (its own root: half of the
/// page's own building, in a task of its own): the lesson's proof first
/// (on screen at 1280 x 800 without scrolling), the arithmetic, the
/// counters and the read path.
pub fn mount_numbers(
    side: web_sys::HtmlElement,
    page: crate::page::Page,
    follow: leptos::prelude::RwSignal<crate::page::Follow>,
    hold: leptos::prelude::RwSignal<Option<u64>>,
) {
    use leptos::prelude::*;
    leptos::mount::mount_to(side, move || {
        page.provide();
        view! {
            <section class="panel proof-panel" aria-label="The proof">
                <counters::ProofCounter />
            </section>
            <counters::Arithmetic />
            <counters::Counters />
            <code_panel::CodePanel follow=follow hold=hold />
        }
    })
    // The page is never unmounted (only the browser tests mount and drop
    // it); holding the handle would cost 0.9 KB.
    .forget();
}
