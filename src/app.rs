//! The page: its state in signals (and in the URL), its layout, and the
//! wiring between the controls and the animation loop in `engine`.

use leptos::prelude::*;
use stampede::scenario::Notice;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::code_panel::CodePanel;
use crate::counters::{Arithmetic, Counters};
use crate::engine::{start_loop, Engine, Surface};
use crate::knobs::KnobPanel;
use crate::lesson::presenter::{self, Room};
use crate::lesson::tour_view;
use crate::page::action::Action;
use crate::page::address::{current_hash, current_query, Address, Back};
use crate::page::kept::Kept;
use crate::page::keys;
use crate::page::start::Launch;
use crate::page::{contrast_of, Command, Page, Wires};
use crate::palette::{colour, Glyph, LOOKS};
use crate::transport::PresetPicker;
use crate::transport::Transport;

/// How long after mounting the knob panel is built.
const KNOBS_AFTER: std::time::Duration = std::time::Duration::from_millis(60);

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
    // The tour and a drill take turns; a scenario the drill's link cannot
    // carry (a preset's digit key changed a locked knob) is the sandbox's.
    crate::dom::effect(move || {
        let away = page.tour().get().is_some();
        let away = away
            || drill_open.is_some_and(|d| {
                page.scenario()
                    .with(|s| catalogue::drill::apply(d, &d.link(s)).0 != *s)
            });
        if away && drilling.get_untracked() {
            drilling.set(false);
        }
    });
    let follow = RwSignal::new(crate::page::Follow::Nobody);
    // A trainer's list the link opened (src/playlist.rs), kept here.
    let lists = crate::playlist::lists();
    let banner = RwSignal::new([url_notices, crate::playlist::start(lists, &query)].concat());
    // The runs the words compare against: the preset a change was made
    // from (the lesson's contrast) and the tour step's baseline. Each runs
    // once per scenario and seed, in a task of its own.
    let wanted = Memo::new(move |_| {
        let mut want = Vec::new();
        if let Some(c) = page
            .scenario()
            .with(|s| catalogue::lesson::contrast(s, page.base().get()))
        {
            want.push((c, page.seed().get()));
        }
        if let Some(q) = page.step().and_then(|s| s.contrast) {
            let (c, sd, _) = stampede::Scenario::from_query(q);
            want.push((c, sd));
        }
        want
    });
    crate::dom::effect(move || {
        for (c, sd) in wanted.get() {
            if page
                .contrasts()
                .with_untracked(|have| contrast_of(have, &c, sd).is_some())
            {
                continue;
            }
            set_timeout(
                move || {
                    let r = stampede::Fleet::new(&c, sd).run();
                    page.act(Action::Contrast(Box::new((c, sd, r))));
                },
                std::time::Duration::ZERO,
            );
        }
    });
    // Rebuilt only when the markers change, not on every frame's reading.
    let markers = Memo::new(move |_| reading.with(|r| r.markers.clone()));
    let knobs_ready = RwSignal::new(false);
    set_timeout(move || knobs_ready.set(true), KNOBS_AFTER);

    // A new scenario or seed starts a new run from t = 0, playing.
    // Building a big fleet takes tens of milliseconds: it gets a task of its
    // own instead of joining whatever task changed the knob (or the mount).
    crate::dom::effect(move || {
        let s = page.scenario().get();
        let sd = page.seed().get();
        set_timeout(
            move || {
                if engine.try_update_value(|e| e.rebuild(&s, sd)).is_some() {
                    // A link's moment (`at=`, or Back to a moment): there,
                    // paused or playing.
                    let here = moment
                        .try_with_value(|m| {
                            m.as_ref()
                                .filter(|(ms_s, ms_sd, ..)| *ms_s == s && *ms_sd == sd)
                                .map(|(.., ms, play)| (*ms, *play))
                        })
                        .flatten();
                    let at = here.map(|(ms, play)| {
                        engine.update_value(|e| {
                            e.command(Command::Seek(ms.saturating_mul(1000)), false);
                        });
                        play
                    });
                    let held = at.is_none()
                        && wait_for_play
                            .try_update_value(std::mem::take)
                            .unwrap_or(false);
                    page.act(Action::Built { at, held });
                }
            },
            std::time::Duration::ZERO,
        );
    });
    // While a seek replays, the moment it heads for stays (the replay's
    // passing times are not moments to share).
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
    // The A/B view's own clock, paused mid-run (its view keeps it).
    let ab_paused_at = RwSignal::new(None::<u64>);
    let popping = StoredValue::new(false);
    crate::page::address::follow(
        page,
        Address {
            paused_at,
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
    // Reduced motion and the followed thread live in the engine (what it
    // paints), set from here. A new scenario forgets the followed thread.
    crate::dom::effect(move || {
        let r = room.reduced.get();
        engine.update_value(|e| e.reduced = r);
    });
    crate::dom::effect(move || {
        let f = follow.get();
        engine.update_value(|e| e.follow = f);
    });
    // What presenter mode asks of the stage: its box, its theme.
    crate::dom::effect(move || {
        let d = crate::stage::room::Display {
            presenting: page.presenting().get(),
            dark: room.room_dark.get(),
            stage_h: room.stage_h.get(),
        };
        engine.update_value(|e| e.room = d);
    });
    // The walk-through's pause (src/panels/code_panel.rs).
    let hold = RwSignal::new(None::<u64>);
    crate::dom::effect(move || {
        let h = hold.get();
        engine.update_value(|e| e.hold = h);
    });
    crate::dom::effect(move || {
        page.scenario().track();
        follow.set(crate::page::Follow::Nobody);
    });
    let pointer = window_event_listener(leptos::ev::pointermove, move |_| room.pointer_moved());
    on_cleanup(move || pointer.remove());
    let keys = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
            return;
        }
        // With a trainer's list open, Page Up and Down step the list.
        if crate::playlist::key(lists, &ev) {
            return;
        }
        let key = ev.key();
        let Some(command) = keys::command(&key, page.tour().get_untracked().is_some()) else {
            return;
        };
        let target = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok());
        let keeps_key = target.is_some_and(|el| {
            let (tag, kind) = (el.tag_name(), el.get_attribute("type").unwrap_or_default());
            let editable = el.get_attribute("contenteditable").is_some();
            keys::kept_by(
                keys::Focus {
                    tag: &tag,
                    kind: &kind,
                    editable,
                },
                command,
            )
        });
        if keeps_key {
            return;
        }
        // A room key the room does not take (Escape with no list of keys
        // open) keeps its default.
        if command == Command::Room && !room.key(&key) {
            return;
        }
        ev.prevent_default();
        match command {
            Command::Tour if keys::tour_forward(&key) => {
                page.act(Action::TourNext);
            }
            Command::Tour => {
                page.act(Action::TourBack);
            }
            Command::Room => {}
            // The A/B view answers the same keys, on its own clock.
            _ if page.compare().get_untracked().is_some() => {
                crate::compare::key(ab_open, command);
            }
            _ => {
                page.act(Action::Transport(command));
            }
        }
    });
    on_cleanup(move || keys.remove());

    let side_ref = NodeRef::<leptos::html::Div>::new();
    let (header_ref, modes_ref, room_ref) = (
        NodeRef::<leptos::html::Header>::new(),
        NodeRef::<leptos::html::Div>::new(),
        NodeRef::<leptos::html::Div>::new(),
    );
    let main_ref = NodeRef::<leptos::html::Main>::new();
    let stage_box_ref = NodeRef::<leptos::html::Div>::new();
    // The tour bar and its button are built once the page has mounted, each
    // part in a task of its own so that no start-up task runs long; the
    // real-Redis panel (which runs a small fleet) last.
    crate::dom::effect(move || {
        // The numbers' column first: half of the page's own building, so
        // neither half is a long task.
        crate::dom::task(Box::new(move || {
            if let Some(side) = side_ref.get_untracked() {
                leptos::mount::mount_to(side.into(), move || {
                    page.provide();
                    view! {
                        // The lesson's proof first: on screen at 1280 x 800 without scrolling.
                        <section class="panel proof-panel" aria-label="The proof">
                            <crate::counters::ProofCounter />
                        </section>
                        <Arithmetic />
                        <Counters />
                        <CodePanel follow=follow hold=hold />
                    }
                })
                // The page is never unmounted (only the browser tests mount
                // and drop it); holding the handle would cost 0.9 KB.
                .forget();
            }
        }));
        // The learner's record (src/lesson/practice.rs): the tour, the drills
        // and the practice panel share it.
        let record = crate::lesson::practice::Record::load();
        let parts = || -> Option<crate::dom::Parts> {
            Some(crate::dom::Parts {
                main: main_ref.get_untracked()?.into(),
                header: header_ref.get_untracked()?.into(),
                modes: modes_ref.get_untracked()?.into(),
                room: room_ref.get_untracked()?.into(),
                side: side_ref.get_untracked()?.into(),
                stage: stage_box_ref.get_untracked()?.into(),
            })
        };
        let Some(parts) = parts() else {
            return;
        };
        let p = parts.clone();
        crate::dom::task(Box::new(move || tour_view::mount(record, &p)));
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
        let p = parts.clone();
        crate::dom::task(Box::new(move || presenter::mount(room, &p)));
        let p = parts.clone();
        crate::dom::task(Box::new(move || crate::playlist::mount(lists, &p)));
        crate::dom::task(Box::new(move || {
            crate::panels::conformance::mount(page.base(), &parts.side)
        }));
    });
    // Said only while the fleet is drawn as bands.
    let aggregated_ref = NodeRef::<leptos::html::P>::new();
    crate::dom::effect(move || {
        let Some(p) = aggregated_ref.get() else {
            return;
        };
        let (on, threads) = reading.with(|r| (r.aggregated, r.naive()));
        let _ = p.toggle_attribute_with_force("hidden", !on);
        if on {
            crate::dom::set_text(
                &p,
                &format!(
                    "Drawn aggregated: {threads} threads are too many to draw one by one, so each \
                     office shows how many of its threads are in each state, as bands."
                ),
            );
        }
    });
    // The timeline's markers as a list, rewritten when they change.
    let markers_ref = NodeRef::<leptos::html::Ol>::new();
    crate::dom::effect(move || {
        let Some(ol) = markers_ref.get() else {
            return;
        };
        markers.with(|m| {
            ol.set_text_content(None);
            for (t, what) in m {
                let at = crate::clock::now_ms_text(*t);
                let li = crate::dom::text_el("li", "", &format!("{what} at {at} ms"));
                crate::dom::set(&li, "data-marker-t", &t.to_string());
                crate::dom::put(&ol, &li);
            }
        });
    });
    let stage_ref = NodeRef::<leptos::html::Canvas>::new();
    let overlay_ref = NodeRef::<leptos::html::Canvas>::new();
    let chart_ref = NodeRef::<leptos::html::Canvas>::new();
    crate::dom::effect(move || {
        let (Some(stage), Some(overlay), Some(chart)) =
            (stage_ref.get(), overlay_ref.get(), chart_ref.get())
        else {
            return;
        };
        // A click on a thread follows it through the read path.
        let click =
            Closure::<dyn FnMut(web_sys::MouseEvent)>::new(move |ev: web_sys::MouseEvent| {
                let (x, y) = (f64::from(ev.offset_x()), f64::from(ev.offset_y()));
                if let Some(g) = engine.try_with_value(|e| e.thread_at(x, y)).flatten() {
                    follow.set(crate::page::Follow::Thread(g));
                }
            });
        let _ = stage.add_event_listener_with_callback("click", click.as_ref().unchecked_ref());
        click.forget();
        engine.update_value(|e| {
            e.stage = Surface::new(stage).zip(Surface::new(overlay));
            e.chart = Surface::new(chart);
        });
        set_timeout(
            move || {
                let _ = engine.try_update_value(Engine::warm_up);
            },
            std::time::Duration::ZERO,
        );
        start_loop(engine, playing, speed, reading);
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
        view! {
            <Show when=move || knobs_ready.get()>
                <KnobPanel />
            </Show>
        }
        .into_any(),
        view! { <PresetPicker /> }.into_any(),
    );

    // What Record clip records: the A/B view's two fleets while it is
    // open, else the sandbox's.
    let clip_source: crate::stage::shot::Source = Callback::new(move |_| {
        if compare.get_untracked().is_some() {
            return crate::compare::clip_shot(ab_open);
        }
        let (base, overlay) = (stage_ref.get_untracked()?, overlay_ref.get_untracked()?);
        Some(crate::stage::shot::Shot {
            panes: vec![crate::stage::shot::Pane {
                base,
                overlay,
                label: String::new(),
            }],
            line: None,
        })
    });

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
            <button type="button" class="to-compare" data-control="compare"
                aria-pressed=move || compare.get().is_some().to_string()
                title="Two designs on the same traffic, side by side"
                on:click=move |_| {
                    page.act(if compare.get_untracked().is_some() {
                        Action::Sandbox
                    } else {
                        Action::Compare(catalogue::presets::COMPARISONS[0].name)
                    });
                }>
                {move || if compare.get().is_some() { "Back to the sandbox" } else { "Compare two designs" }}
            </button>
            <div class="room" node_ref=room_ref></div>
            </div>

        </header>
        <Banner notices=banner />
        {ab_view}
        <main class="lab" hidden=move || compare.get().is_some() node_ref=main_ref>
            <div class="main-col">
            <section class="panel stage" aria-labelledby="stage-title">
                <h2 id="stage-title" class="sr-only">"The fleet"</h2>
                <div class="stage-canvas" node_ref=stage_box_ref>
                    <canvas
                        node_ref=stage_ref
                        role="img"
                        aria-label="The fleet: one box per instance, one mark per thread, coloured by what the thread is doing; Redis and the origin on the right."
                    ></canvas>
                    <canvas node_ref=overlay_ref class="overlay" aria-hidden="true"></canvas>
                </div>
                <p class="aggregated-note" data-note="aggregated" node_ref=aggregated_ref hidden></p>
                <Legend />
            </section>
            <section class="panel chart" aria-labelledby="chart-title">
                <h2 id="chart-title">"Over virtual time"</h2>
                <div class="chart-canvas">
                    <canvas
                        node_ref=chart_ref
                        role="img"
                        aria-label="Timeline: recomputes running at the origin, Redis round trips, errors and timeouts, and stale answers over virtual time."
                    ></canvas>
                </div>
                <ol class="markers" aria-label="What happens when" node_ref=markers_ref></ol>
            </section>
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

/// What a shared link asked for that could not be used.
#[component]
fn Banner(notices: RwSignal<Vec<Notice>>) -> impl IntoView {
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

/// The key to the fleet's colours and shapes: static, built once from the
/// palette with plain DOM calls (each shape a few SVG attributes).
#[component]
fn Legend() -> impl IntoView {
    let root = NodeRef::<leptos::html::Div>::new();
    crate::dom::build_once(
        move || root.get().map(Into::into),
        move |r| build_legend(&r),
    );
    view! {
        <p class="legend-key" data-note="legend">
            <strong>"How to read it: "</strong>
            "each box is one instance (an office); each mark is one request thread in it, shaped and coloured by what it is doing. "
            "Redis and the origin sit on the right; dots travelling between them are requests on the wire. "
            "While only a few threads do the expensive work, a ring marks each of them."
        </p>
        <div node_ref=root></div>
    }
}

fn build_legend(root: &web_sys::Element) {
    use crate::dom::{el, put, set};
    use crate::web::document;
    let svg = |tag: &str, attrs: &[(&str, &str)]| {
        let e = document()
            .create_element_ns(Some("http://www.w3.org/2000/svg"), tag)
            .expect("an svg element");
        for (k, v) in attrs {
            set(&e, k, v);
        }
        e
    };
    let list = el("ul", "legend");
    set(&list, "aria-label", "Legend");
    for l in LOOKS.iter() {
        let (tag, class, attrs): (&str, &str, &[(&str, &str)]) = match l.glyph {
            Glyph::Square => (
                "rect",
                "fill",
                &[("x", "2"), ("y", "2"), ("width", "10"), ("height", "10")],
            ),
            Glyph::Ring => (
                "rect",
                "ring",
                &[("x", "2.5"), ("y", "2.5"), ("width", "9"), ("height", "9")],
            ),
            Glyph::Triangle => ("polygon", "fill", &[("points", "7,1 13,13 1,13")]),
            Glyph::Diamond => ("polygon", "fill", &[("points", "7,1 13,7 7,13 1,7")]),
            Glyph::Cross => ("path", "ring", &[("d", "M2 2 L12 12 M12 2 L2 12")]),
            Glyph::HollowDiamond => (
                "polygon",
                "ring",
                &[("points", "7,1.5 12.5,7 7,12.5 1.5,7")],
            ),
            Glyph::Circle => ("circle", "ring", &[("cx", "7"), ("cy", "7"), ("r", "5")]),
        };
        let li = el("li", "");
        set(&li, "title", l.help);
        // Custom properties through the CSSOM, which the page's
        // Content-Security-Policy allows (a style attribute it blocks).
        if let Some(h) = li.dyn_ref::<web_sys::HtmlElement>() {
            let _ = h.style().set_property("--c-light", colour(l, false));
            let _ = h.style().set_property("--c-dark", colour(l, true));
        }
        let icon = svg(
            "svg",
            &[
                ("width", "14"),
                ("height", "14"),
                ("viewBox", "0 0 14 14"),
                ("aria-hidden", "true"),
            ],
        );
        let shape = svg(tag, attrs);
        set(&shape, "class", class);
        put(&icon, &shape);
        put(&li, &icon);
        let _ = li.append_with_str_1(l.label);
        put(&list, &li);
    }
    put(root, &list);
    crate::fleet_view::build_terms(root);
}
