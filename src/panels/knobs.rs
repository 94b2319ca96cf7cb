//! The knobs panel: every knob of the scenario in its group (the table and
//! each knob's control are the page's, `crate::page::knob`), and the Faults
//! group's curveballs.

use leptos::prelude::*;

use crate::page::action::{Acted, Action};
use crate::page::knob::GROUPS;
use crate::page::knob_control::KnobControl;

/// The curveballs (`catalogue::interview::CURVEBALLS`) as buttons of the
/// Faults group: each throws its fault so that it bites the run on screen
/// (`throw`, `crate::kit::throw_here`): now or at the next moment it finds
/// work, the clock going on; or, with nothing left for it, the run
/// restarted with it at an earlier moment, which the sentence then says.
/// The link then carries the fault.
#[component]
fn Curveballs() -> impl IntoView {
    use catalogue::interview::{Curveball, CURVEBALLS};
    let page = crate::page::use_page();
    let (scenario, reading) = (page.scenario(), page.reading());
    let status = RwSignal::new(String::new());
    let balls = CURVEBALLS
        .iter()
        .map(|b: &'static Curveball| {
            let throw = move |_| {
                // The clock before: a fault that lands before it restarted
                // the run (see `Lab::throw`).
                let was = reading.with_untracked(|r| r.now / 1000);
                status.set(match page.act(Action::Throw(b)) {
                    Acted::Thrown { at_ms: at } => catalogue::interview::thrown_sentence(
                        b,
                        at,
                        scenario.with_untracked(|s| s.value_ttl_ms),
                        u64::from(at) < was,
                    ),
                    Acted::Refused(why) => format!("{}: not thrown: {why}", b.label),
                    Acted::Done => String::new(),
                });
            };
            view! {
                <li>
                    <button type="button" data-curveball=b.kind title=b.ask on:click=throw>
                        {b.label}
                    </button>
                </li>
            }
        })
        .collect_view();
    view! {
        <div class="curveballs" data-curveballs="">
            <h3>"Curveballs"</h3>
            <p class="knob-help">
                "A fault now, into the running run: the clock goes on, nothing restarts, and the link then carries the fault."
            </p>
            <ul>{balls}</ul>
            <p class="curveball-status" role="status" data-curveball-status="">
                {move || status.get()}
            </p>
        </div>
    }
}

/// How long after mounting the knob panel is built.
const KNOBS_AFTER: std::time::Duration = std::time::Duration::from_millis(60);

/// The knob panel, built a moment after the rest of the page, in a task of
/// its own, so that the first paint is not one long task.
#[component]
pub fn KnobPanel() -> impl IntoView {
    let ready = RwSignal::new(false);
    set_timeout(move || ready.set(true), KNOBS_AFTER);
    view! {
        <Show when=move || ready.get()>
            <Groups />
        </Show>
    }
}

/// All knob groups as collapsible sections.
#[component]
fn Groups() -> impl IntoView {
    let notices = crate::page::use_page().notices();
    // What the last change clamped or refused, in words (plain DOM calls:
    // the list is there only while it has something to say).
    let list = NodeRef::<leptos::html::Ul>::new();
    crate::dom::effect(move || {
        let Some(ul) = list.get() else {
            return;
        };
        ul.set_text_content(None);
        notices.with(|n| {
            let _ = ul.toggle_attribute_with_force("hidden", n.is_empty());
            for x in n {
                crate::dom::put(&ul, &crate::dom::text_el("li", "", &x.to_string()));
            }
        });
    });
    view! {
        <section class="panel knobs" aria-labelledby="knobs-title">
            <h2 id="knobs-title">"Every knob"</h2>
            <ul class="notices" role="status" node_ref=list hidden></ul>
            <div class="groups">
                {GROUPS
                    .iter()
                    .map(|g| {
                        view! {
                            <details class="group" open=g.open data-group=g.title.to_ascii_lowercase()>
                                <summary>
                                    {g.title}
                                    <span class="group-holds">{g.holds}</span>
                                </summary>
                                <div class="group-knobs">
                                    {g.knobs
                                        .iter()
                                        .map(|k| view! { <KnobControl knob=*k /> })
                                        .collect_view()}
                                </div>
                                {(g.title == "Faults")
                                    .then(|| view! { <Curveballs /> })}
                            </details>
                        }
                    })
                    .collect_view()}
            </div>
        </section>
    }
}
