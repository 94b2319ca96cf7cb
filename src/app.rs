//! The page's layout: the header, the A/B view, the sandbox's stage, its
//! numbers and its knobs, each view in its place; and the wiring: the
//! page's state (`Page`, changed only through `Action`) made from the
//! start-up link and provided to the views, the stage's engine following
//! it, the address and the keys (`page/`).

use leptos::prelude::*;

use crate::engine::Engine;
use crate::knobs::KnobPanel;
use crate::lesson::presenter::{self, Room};
use crate::lesson::tour_view;
use crate::page::action::Action;
use crate::page::address::{current_hash, current_query, Address, Back};
use crate::page::kept::Kept;
use crate::page::keys;
use crate::page::start::Launch;
use crate::page::{Command, Page, Wires};
use crate::transport::PresetPicker;
use crate::transport::Transport;

/// The whole page.
#[component]
pub fn App() -> impl IntoView {
    let query = current_query();
    let hash = current_hash();
    let Launch {
        start,
        drill: drill_open,
        drill_list,
        notices: url_notices,
        moment,
        ab_moment,
    } = crate::page::start::launch(
        &query,
        &hash,
        Kept::Present.flag(),
        crate::page::kept::language(),
        Kept::SkipPredictions.flag(),
        use_context::<crate::page::FirstPick>(),
    );
    // A moment to go to once the run is built: (ms, play on from there),
    // for this scenario and seed; every build of them goes there (the page
    // may build the same run twice as it starts) until a control is taken.
    let moment = StoredValue::new(moment);
    // The A/B view's moment from the link, taken by its first build.
    let ab_moment = StoredValue::new(ab_moment);
    let tour_start = start.tour;
    // An embedded run (a slide, a wiki page) waits at its start for the
    // reader's Play: a slide shows the start, not the end state. Once: a
    // run the reader starts plays as everywhere.
    let embedded = crate::embed::wanted(&query);
    let wait_for_play = StoredValue::new(embedded);
    let engine = StoredValue::new_local(Engine::default());
    engine.update_value(|e| e.embedded = embedded);
    // The A/B view's controls while it is open (src/compare.rs).
    let ab_open = crate::compare::open_slot();
    let page = Page::new(
        start,
        Wires {
            send: Callback::new(move |(c, now): (Command, bool)| {
                // Taking the controls: the link's moment is behind us.
                moment.set_value(None);
                engine.try_update_value(|e| e.command(c, now)).flatten()
            }),
            throw: Callback::new(move |b| crate::kit::throw_here(engine, b)),
            ab_throw: Callback::new(move |b| crate::compare::throw(ab_open, b)),
            ab_clock: Callback::new(move |_| crate::compare::moment(ab_open)),
        },
    );
    page.provide();
    crate::page::kept::keep(page);
    let (playing, speed, reading) = page.animation();
    // A tour step opens as the tour opens it (its prediction asked).
    if let Some(p) = tour_start {
        page.act(Action::Tour(p));
    }
    let drilling = RwSignal::new(drill_open.is_some());
    // "Write it yourself" (`?assemble=1`), built with the other views.
    let assemble = crate::lesson::assemble::wanted(&query);
    if let Some(d) = drill_open {
        crate::lesson::drills::follow_page(d, drilling);
    }
    let follow = RwSignal::new(crate::page::Follow::Nobody);
    // A trainer's list the link opened (src/playlist.rs), kept here.
    let lists = crate::playlist::lists();
    let banner = RwSignal::new([url_notices, crate::playlist::start(lists, &query)].concat());
    // The runs the words compare against, each in a task of its own.
    crate::page::contrasts::run(page);

    // A new scenario or seed: a new run, built in a task of its own.
    crate::engine::follow_page(engine, page, moment, wait_for_play);
    // The A/B view's own clock, paused mid-run (its view keeps it).
    let ab_paused_at = RwSignal::new(None::<u64>);
    let popping = StoredValue::new(false);
    crate::page::address::follow(
        page,
        Address {
            ab_paused_at,
            drill: drill_open,
            drilling,
            suffix: Callback::new(move |_| crate::playlist::suffix(lists)),
            popping,
        },
    );
    crate::page::address::listen(
        page,
        Back {
            moment,
            ab_moment,
            ab_seek: Callback::new(move |(ms, play)| crate::compare::seek_to(ab_open, ms, play)),
            popping,
        },
    );

    // The reference's question links open their scenario here and name
    // the counter to show (its owner marks it).
    crate::transport::question_links();
    let room = Room::of_page();
    // The interviewer's kit in another window throws curveballs and opens
    // scenarios here (src/kit.rs).
    crate::kit::listen(page);
    // The walk-through's pause (src/panels/code_panel.rs).
    let hold = RwSignal::new(None::<u64>);
    crate::engine::follow_room(
        engine,
        crate::engine::RoomInputs {
            reduced: room.reduced,
            follow,
            dark: room.room_dark,
            stage_h: room.stage_h,
            hold,
        },
    );
    room.follow_pointer();
    // The keys: a trainer's list takes Page Up and Down first, the room
    // its own, the A/B view the transport's on its own clock.
    keys::listen(
        page,
        keys::Takers {
            list: Callback::new(move |ev| crate::playlist::key(lists, &ev)),
            room: Callback::new(move |key: String| room.key(&key)),
            ab: Callback::new(move |c| {
                crate::compare::key(ab_open, c);
            }),
        },
    );

    let side_ref = NodeRef::<leptos::html::Div>::new();
    let (header_ref, modes_ref, room_ref) = (
        NodeRef::<leptos::html::Header>::new(),
        NodeRef::<leptos::html::Div>::new(),
        NodeRef::<leptos::html::Div>::new(),
    );
    let main_ref = NodeRef::<leptos::html::Main>::new();
    let stage_box_ref = NodeRef::<leptos::html::Div>::new();
    let stage_ref = NodeRef::<leptos::html::Canvas>::new();
    let overlay_ref = NodeRef::<leptos::html::Canvas>::new();
    // The tour bar and its button are built once the page has mounted, each
    // part in a task of its own so that no start-up task runs long; the
    // real-Redis panel (which runs a small fleet) last.
    crate::dom::effect(move || {
        // The numbers' column first: half of the page's own building, so
        // neither half is a long task.
        crate::dom::task(Box::new(move || {
            if let Some(side) = side_ref.get_untracked() {
                crate::panels::mount_numbers(side.into(), page, follow, hold);
            }
        }));
        // The learner's record (src/lesson/practice.rs): the tour, the drills
        // and the practice panel share it.
        let record = crate::lesson::practice::Record::load();
        let parts = || -> Option<crate::dom::Parts> {
            Some(crate::dom::Parts {
                main: main_ref.get_untracked()?.into(),
                header: header_ref.get_untracked()?.into(),
                side: side_ref.get_untracked()?.into(),
                stage: stage_box_ref.get_untracked()?.into(),
            })
        };
        let Some(parts) = parts() else {
            return;
        };
        // The header's row of modes, left to right: the A/B view's switch
        // (above), the tour's button and the interview questions' link
        // (the tour's offer), then the room's: presenter mode, reduced
        // motion, the keys, the room's theme (presenter mode's) and "Add
        // this view" (the playlist's). Each view builds its own, each in a
        // task of its own; the app puts them in their places.
        let (modes, room_slot) = (modes_ref.get_untracked(), room_ref.get_untracked());
        let (Some(modes), Some(room_slot)) = (modes, room_slot) else {
            return;
        };
        let (m, r) = (modes.clone(), room_slot.clone());
        let p = parts.clone();
        crate::dom::task(Box::new(move || {
            for e in tour_view::mount(record, &p) {
                let _ = m.insert_before(&e, Some(&r));
            }
        }));
        if let Some(drill) = drill_open {
            let p = parts.clone();
            crate::dom::task(Box::new(move || {
                crate::lesson::drills::mount(
                    crate::lesson::drills::DrillPage {
                        drill,
                        open: drilling,
                        list: drill_list,
                        record,
                    },
                    &p,
                )
            }));
        }
        if let Some(text) = assemble.clone() {
            let p = parts.clone();
            crate::dom::task(Box::new(move || crate::lesson::assemble::mount(text, &p)));
        }
        let (p, r) = (parts.clone(), room_slot.clone());
        crate::dom::task(Box::new(move || {
            for e in presenter::mount(room, &p) {
                crate::dom::put(&r, &e);
            }
        }));
        let p = parts.clone();
        crate::dom::task(Box::new(move || {
            if let Some(add) = crate::playlist::mount(lists, &p) {
                crate::dom::put(&room_slot, &add);
            }
        }));
        crate::dom::task(Box::new(move || {
            crate::panels::conformance::mount(page.base(), &parts.side)
        }));
    });
    // The sandbox's parts. The tour hides them; they are built once and
    // kept, so leaving the tour reloads nothing.
    let compare = page.compare();
    let (ab_view, knob_panel, preset_picker) = (
        view! {
            <Show when=move || compare.get().is_some()>
                <main class="ab-main">
                    <crate::compare::CompareView moment=ab_moment paused_at=ab_paused_at open=ab_open embedded=embedded />
                </main>
            </Show>
        }
        .into_any(),
        view! { <KnobPanel /> }.into_any(),
        view! { <PresetPicker /> }.into_any(),
    );

    // What Record clip records: the A/B view's two fleets while it is
    // open, else the sandbox's.
    let clip_source = crate::stage::panel::clip_source(
        stage_ref,
        overlay_ref,
        Callback::new(move |_| {
            compare
                .get_untracked()
                .and_then(|_| crate::compare::clip_shot(ab_open))
        }),
    );

    view! {
        <header class="topbar" class:comparing=move || compare.get().is_some() node_ref=header_ref>
            <div class="brand">
                <h1>"Stampede Lab"</h1>
                <p class="tagline">
                    "One hot key expires under a whole fleet. Watch who recomputes it."
                </p>
            </div>
            {preset_picker}
            <Transport clip=clip_source />
            <div class="modes" node_ref=modes_ref>
            <crate::compare::Switch />
            <div class="room" node_ref=room_ref></div>
            </div>

        </header>
        <crate::panels::banner::Banner notices=banner />
        {ab_view}
        <main class="lab" hidden=move || compare.get().is_some() node_ref=main_ref>
            <div class="main-col">
            {crate::stage::panel::stage(engine, follow, (playing, speed, reading), stage_ref, overlay_ref, stage_box_ref)}
            </div>
            <div class="side" node_ref=side_ref></div>
            // The knobs are built a moment after the rest, in a task of their
            // own, so that the first paint is not one long task.
            {knob_panel}
        </main>
        <footer class="colophon">
            <p>
                "Every number is measured, not drawn: the page runs the project's deterministic \
                 simulation core, compiled to WebAssembly, on the knobs above. The same scenario \
                 and seed show the same thing at the same virtual time, every time."
            </p>
        </footer>
    }
}
