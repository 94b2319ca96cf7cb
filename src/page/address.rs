//! The address and the history: the URL always holds the page's state, so
//! the address is the share link (presenter mode, and while paused mid-run
//! the moment, `at=`); each view (a tour step, the sandbox, the A/B view)
//! is a history entry of its own, everything else is written in place; and
//! Back and Forward come back to an entry's view and moment.

use catalogue::tour::{self, Place};
use leptos::prelude::*;
use wasm_bindgen::JsValue;

use super::action::Action;
use super::{Command, Page};
use crate::url_state::{self, PageState};
use crate::web::window;

/// The address's query, with its `?`.
pub fn current_query() -> String {
    window().location().search().unwrap_or_default()
}

/// The address's hash, with its `#`.
pub fn current_hash() -> String {
    window().location().hash().unwrap_or_default()
}

/// Writes the address: a new history entry for a new view (`push`), else
/// in place. `suffix` is what stays after the query (a trainer's list).
fn write_url(suffix: &str, query: &str, hash: &str, push: bool) {
    let w = window();
    let path = w.location().pathname().unwrap_or_default();
    let url = format!("{path}?{query}{suffix}{hash}");
    if let Ok(h) = w.history() {
        let _ = if push {
            h.push_state_with_url(&JsValue::NULL, "", Some(&url))
        } else {
            h.replace_state_with_url(&JsValue::NULL, "", Some(&url))
        };
    }
}

/// What the address follows besides the page's state.
#[derive(Clone, Copy)]
pub struct Address {
    /// Where the A/B view stands paused mid-run (ms; its view keeps it).
    pub ab_paused_at: RwSignal<Option<u64>>,
    /// The open drill, while its view is open: its link carries only its
    /// allowed knobs (the learner's answer).
    pub drill: Option<&'static catalogue::drill::Drill>,
    pub drilling: RwSignal<bool>,
    /// What stays after the query (a trainer's list, while one is open).
    pub suffix: Callback<(), String>,
    /// Back or Forward is being applied: the next write is in place.
    pub popping: StoredValue<bool>,
}

/// Keeps the address on the page's state.
pub fn follow(page: Page, a: Address) {
    // Where the sandbox stands paused mid-run (ms). While a seek replays,
    // the moment it heads for stays (the replay's passing times are not
    // moments to share).
    let (playing, reading) = (page.playing(), page.reading());
    let paused_at = Memo::new(move |prev: Option<&Option<u64>>| {
        if reading.with(|r| r.catching_up) {
            if let Some(p) = prev {
                return *p;
            }
        }
        (!playing.get())
            .then(|| reading.with(|r| (!r.at_end).then_some(r.now / 1000)))
            .flatten()
            .filter(|ms| *ms > 0)
    });
    let shown_view = StoredValue::new(None::<(Option<Place>, Option<&'static str>)>);
    crate::dom::effect(move || {
        let compare = page.compare().get();
        let state = PageState {
            scenario: page.scenario().get(),
            seed: page.seed().get(),
            speed: page.speed().get(),
            compare,
            cost: page.cost().get(),
            throws: page.ab_throws().get(),
            present: page.presenting().get(),
            at: if compare.is_some() {
                a.ab_paused_at.get()
            } else {
                paused_at.get()
            },
            play: false,
        };
        let view = (page.tour().get(), state.compare);
        let was = shown_view.get_value();
        shown_view.set_value(Some(view));
        let push = was.is_some_and(|w| w != view) && !a.popping.get_value();
        a.popping.set_value(false);
        let hash = view
            .0
            .map(|p| format!("#tour/{}", tour::place_name(p)))
            .unwrap_or_default();
        let suffix = a.suffix.run(());
        // A drill's link carries only its allowed knobs: the learner's answer.
        if let Some(d) = a.drill.filter(|_| a.drilling.get()) {
            return write_url(&suffix, &d.link(&state.scenario), &hash, push);
        }
        let mut query = url_state::to_query(&state);
        // "Write it yourself" keeps the learner's assembly in the link.
        if let Some(link) = page
            .assembling()
            .with(|st| st.as_ref().map(|st| st.to_link()))
        {
            query.push_str("&assemble=");
            query.push_str(&link);
        }
        write_url(&suffix, &query, &hash, push);
    });
}

/// What Back and Forward need of the parts above the page.
#[derive(Clone, Copy)]
pub struct Back {
    /// The sandbox's moment for a run not built yet: (scenario, seed, ms,
    /// play), taken by its build.
    pub moment: StoredValue<Option<(stampede::Scenario, u64, u64, bool)>>,
    /// The A/B view's moment for a view not built yet (ms, play).
    pub ab_moment: StoredValue<Option<(u64, bool)>>,
    /// Sends the open A/B view to a moment (ms, play).
    pub ab_seek: Callback<(u64, bool)>,
    pub popping: StoredValue<bool>,
}

/// Back and Forward: the entry's view, scenario and moment. An anchor in
/// the page (`#questions`) is not a view and moves nothing. A tour link
/// pasted into the same tab changes only the hash.
pub fn listen(page: Page, b: Back) {
    let pop = window_event_listener(leptos::ev::popstate, move |_| {
        let hash = current_hash();
        if tour::parse_hash(&hash).is_none() && !hash.is_empty() {
            return;
        }
        let (st, _) = url_state::parse(&current_query());
        b.popping.set_value(true);
        let same = page.scenario().with_untracked(|s| *s == st.scenario)
            && page.seed().get_untracked() == st.seed;
        b.moment.set_value(None);
        match (st.at, same) {
            // After the effects the entry's view sets off (a tour step
            // opens at t = 0), in a task of its own.
            (Some(ms), true) => {
                let play = st.play;
                set_timeout(
                    move || {
                        page.act(Action::Transport(Command::Seek(ms.saturating_mul(1000))));
                        page.act(Action::Play(play));
                    },
                    std::time::Duration::ZERO,
                );
            }
            (Some(ms), false) => {
                b.moment
                    .set_value(Some((st.scenario.clone(), st.seed, ms, st.play)))
            }
            (None, _) => {}
        }
        // The A/B view's own clock: a view built now takes the moment; one
        // already open goes there once the entry's effects have run.
        if let (Some(_), Some(ms)) = (st.compare, st.at) {
            let play = st.play;
            b.ab_moment.set_value(Some((ms, play)));
            set_timeout(move || b.ab_seek.run((ms, play)), std::time::Duration::ZERO);
        }
        // The entry's view and run: an action, as a link or the kit's.
        page.act(Action::Entry {
            query: current_query(),
            hash,
        });
    });
    on_cleanup(move || pop.remove());
    let hash_change = window_event_listener(leptos::ev::hashchange, move |_| {
        if let Some(p) = tour::parse_hash(&current_hash()) {
            page.act(Action::Tour(p));
        }
    });
    on_cleanup(move || hash_change.remove());
}
