//! The top bar: the preset picker and the transport — play/pause, step,
//! restart, replay, the logarithmic speed, the timeline scrubber and the seed.
//! It only sends commands; the animation loop in `app` carries them out.

use catalogue::presets::PRESETS;
use leptos::prelude::*;
use stampede::Metric;

use crate::clock::{position_of, speed_at, speed_label, virtual_label, SPEED_STEPS};
use crate::page::action::Action;
use crate::page::kept::Kept;
use crate::page::{Command, Page};

mod clip;

pub use stampede::scenario::{closest_preset, preset_of};

/// A fresh seed from the browser's randomness (not reproducible by design).
pub fn random_seed() -> u64 {
    (js_sys::Math::random() * 1e9).floor() as u64 + 1
}

/// The scenario picker, the running lesson's sentence, and the knobs that
/// lesson asks you to turn. Built once with plain DOM calls (see
/// `crate::dom`); one effect follows the scenario, and the lesson's knobs
/// are rebuilt, under an owner of their own, when the lesson changes.
#[component]
pub fn PresetPicker() -> impl IntoView {
    let page = crate::page::use_page();
    let root = NodeRef::<leptos::html::Div>::new();
    crate::dom::build_once(
        move || root.get().map(Into::into),
        move |div| build_picker(&div, page),
    );
    view! { <div class="preset" node_ref=root></div> }
}

fn build_picker(root: &web_sys::Element, page: Page) {
    use crate::dom::{el, put, set, set_text, text_el, Listeners};
    let (scenario, base) = (page.scenario(), page.base());
    use wasm_bindgen::JsCast;
    let label = text_el("label", "preset-label", "Scenario");
    set(&label, "for", "preset");
    put(root, &label);
    let select: web_sys::HtmlSelectElement = el("select", "").unchecked_into();
    set(&select, "id", "preset");
    set(&select, "data-control", "preset");
    for p in PRESETS {
        let o = text_el("option", "", p.title);
        set(&o, "value", p.name);
        put(&select, &o);
    }
    let changed = el("option", "");
    set(&changed, "value", "changed");
    set(&changed, "disabled", "");
    put(&select, &changed);
    let custom = text_el("option", "", "Custom");
    set(&custom, "value", "custom");
    set(&custom, "disabled", "");
    put(&select, &custom);
    let mut on = Listeners::default();
    on.on(&select, "change", move |ev| {
        let name = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlSelectElement>().ok())
            .map(|s| s.value())
            .unwrap_or_default();
        if let Some(p) = PRESETS.iter().find(|p| p.name == name) {
            page.act(Action::Preset(p.name));
        }
    });
    put(root, &select);
    let lesson = el("p", "lesson");
    put(root, &lesson);
    // The knobs this lesson asks you to turn, right under its text.
    let knobs = el("div", "lesson-knobs");
    set(&knobs, "aria-label", "Try these");
    put(root, &knobs);

    let parts = StoredValue::new_local((select, changed, lesson, knobs, on));
    // The lesson's knobs belong to the picker, not to the effect below,
    // whose every run would otherwise dispose what the last one built.
    let host = Owner::current().unwrap_or_default();
    // What the lesson's knobs were built for: at first, no lesson at all (not
    // even "custom", so a custom scenario hides the empty box at once).
    let knobs_for = StoredValue::new_local((Some(""), None::<Owner>));
    crate::dom::effect(move || {
        let exact = scenario.with(preset_of);
        let b = base.get();
        let preset = b.and_then(|n| PRESETS.iter().find(|p| p.name == n));
        parts.with_value(|(select, changed, lesson, knobs, _)| {
            let value = match (exact, b) {
                (Some(name), _) => name,
                (None, Some(_)) => "changed",
                (None, None) => "custom",
            };
            set_text(
                changed,
                &preset
                    .map(|p| format!("{} + your changes", p.title))
                    .unwrap_or_default(),
            );
            if select.value() != value {
                select.set_value(value);
            }
            set(lesson, "data-preset", b.unwrap_or("custom"));
            set_text(
                lesson,
                &match (preset, exact.is_some()) {
                    (Some(p), true) => p.row.words.to_string(),
                    (Some(p), false) => format!(
                        "Changed from “{}”: {}. The proof below says what that did; pick the preset again to reset.",
                        p.title,
                        scenario.with(|s| catalogue::lesson::changes(&p.scenario(), s))
                    ),
                    (None, _) => "Your own scenario: every knob is below.".to_string(),
                },
            );
            if knobs_for.with_value(|(shown, _)| *shown) != b {
                // The old lesson's knobs go, with their effects.
                knobs_for.set_value((b, None));
                knobs.set_text_content(None);
                let owner = host.with(Owner::new);
                owner.with(|| {
                    for k in preset
                        .into_iter()
                        .flat_map(|p| p.turn.iter())
                        .filter_map(|n| crate::page::knob::knob_named(n))
                    {
                        let div = el("div", "knob");
                        put(knobs, &div);
                        crate::page::knob_control::build_knob(&div, k, page, true);
                    }
                });
                knobs_for.set_value((b, Some(owner)));
                let _ = knobs.toggle_attribute_with_force("hidden", preset.is_none());
            }
        });
    });
}

/// The playback controls. A fixed row of controls whose numbers change
/// every frame, so it is built once with plain DOM calls (see `crate::dom`)
/// and one effect writes what changed.
#[component]
pub fn Transport(
    /// What Record clip records: the view on screen's fleets.
    clip: clip::Source,
) -> impl IntoView {
    let page = crate::page::use_page();
    let root = NodeRef::<leptos::html::Div>::new();
    crate::dom::build_once(
        move || root.get().map(Into::into),
        move |div| build_transport(&div, page, clip),
    );
    view! { <div class="transport" role="group" aria-label="Playback" node_ref=root></div> }
}

struct TransportDom {
    play: web_sys::Element,
    next: web_sys::Element,
    speed_out: web_sys::Element,
    ff: web_sys::Element,
    speed_in: web_sys::HtmlInputElement,
    now: web_sys::Element,
    of: web_sys::Element,
    catching: web_sys::Element,
    timeline: web_sys::HtmlInputElement,
    seed: web_sys::HtmlInputElement,
    /// The seed last written into the box: typing into it is left alone
    /// until the seed itself changes.
    seed_shown: std::cell::Cell<Option<u64>>,
    _on: crate::dom::Listeners,
}

fn build_transport(root: &web_sys::Element, page: Page, clip_source: clip::Source) {
    use crate::dom::{button, el, put, set, set_text, text_el, Listeners};
    let (playing, speed, seed, reading) =
        (page.playing(), page.speed(), page.seed(), page.reading());
    let send = move |c: Command| {
        page.act(Action::Transport(c));
    };
    use wasm_bindgen::JsCast;
    let mut on = Listeners::default();
    let input_of = |ev: &web_sys::Event| {
        ev.target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
    };

    let buttons = el("div", "buttons");
    let mut play = None;
    let mut next = None;
    for (name, label, title, command) in [
        ("play", "", "Play or pause (space)", Command::TogglePlay),
        ("step", "Step", "Pause and step a tenth of the timeline on, or to the next event after a quiet stretch (right arrow; left arrow steps back)", Command::Step),
        ("next-event", "Next event", "Pause at the next marker on the timeline: an expiry, a claim, a crash, a write (n)", Command::NextEvent),
        ("restart", "Restart", "Back to t = 0, paused", Command::Restart),
        ("replay", "Replay", "Play this seed again from t = 0", Command::Replay),
    ] {
        let b = button(name, label);
        set(&b, "title", title);
        on.on(&b, "click", move |_| send(command));
        put(&buttons, &b);
        match name {
            "play" => {
                b.set_class_name("play");
                play = Some(b);
            }
            "next-event" => next = Some(b),
            _ => {}
        }
    }
    // While the tour runs, the header shows only what the tour needs (play,
    // speed, the clock); the rest is this one click away.
    let more = button("more-controls", "More");
    more.set_class_name("more-controls");
    set(&more, "aria-label", "More controls");
    set(&more, "aria-pressed", "false");
    set(
        &more,
        "title",
        "More controls: step, speed, seed, the A/B view, presenter mode and the other switches",
    );
    let more_el = more.clone();
    on.on(&more, "click", move |_| {
        if let Some(bar) = more_el.closest("header.topbar").ok().flatten() {
            let open = bar.class_list().toggle("show-all").unwrap_or(false);
            set(
                &more_el,
                "aria-pressed",
                if open { "true" } else { "false" },
            );
            crate::dom::set_text(&more_el, if open { "Fewer" } else { "More" });
        }
    });
    put(&buttons, &more);
    clip::build(&buttons, &mut on, reading, clip_source);
    put(root, &buttons);

    let speed_box = el("label", "speed");
    let words = el("span", "");
    let _ = words.append_with_str_1("Speed ");
    let speed_out = el("output", "");
    put(&words, &speed_out);
    let ff = el("span", "ff");
    set(&ff, "data-note", "fast-forward");
    set(&ff, "aria-live", "off");
    set(
        &ff,
        "title",
        "Nothing is changing: the clock speeds up until something happens",
    );
    put(&words, &ff);
    put(&speed_box, &words);
    let speed_in: web_sys::HtmlInputElement = el("input", "").unchecked_into();
    for (k, v) in [
        ("type", "range"),
        ("min", "0"),
        ("step", "1"),
        ("data-control", "speed"),
        ("aria-label", "Playback speed"),
    ] {
        set(&speed_in, k, v);
    }
    set(&speed_in, "max", &SPEED_STEPS.to_string());
    on.on(&speed_in, "input", move |ev| {
        if let Some(p) = input_of(&ev).and_then(|i| i.value().parse::<u32>().ok()) {
            page.act(Action::Speed(speed_at(p)));
        }
    });
    put(&speed_box, &speed_in);
    put(root, &speed_box);

    let line = el("label", "timeline");
    let clock = el("span", "clock");
    set(
        &clock,
        "title",
        "t: the virtual time on screen. The run lasts from the first request to its last event \
         (the last recompute, write or expiry), often long after the burst is answered, \
         or to where the lab stops it with work still pending: quiet stretches with nobody \
         waiting play fast-forward.",
    );
    let _ = clock.append_with_str_1("t = ");
    let now = el("span", "now");
    set(&now, "data-metric", "now_ms");
    put(&clock, &now);
    let _ = clock.append_with_str_1(" ms");
    // The timeline keeps its length when the run ends under the playhead;
    // the words say where it really ended.
    let of = el("span", "of");
    put(&clock, &of);
    let catching = text_el("span", "catching-up", " catching up…");
    set(&catching, "role", "status");
    put(&clock, &catching);
    put(&line, &clock);
    let timeline: web_sys::HtmlInputElement = el("input", "").unchecked_into();
    for (k, v) in [
        ("type", "range"),
        ("min", "0"),
        ("step", "any"),
        ("data-control", "timeline"),
        ("aria-label", "Virtual time"),
    ] {
        set(&timeline, k, v);
    }
    on.on(&timeline, "input", move |ev| {
        let ms = input_of(&ev).and_then(|i| stampede::decimal::parse(&i.value()));
        if let Some(ms) = ms.filter(|ms| *ms >= 0.0) {
            send(Command::Seek((ms * 1000.0) as u64));
        }
    });
    put(&line, &timeline);
    put(root, &line);

    let seed_box = el("div", "seed");
    let seed_label = text_el("label", "", "Seed");
    set(&seed_label, "for", "seed");
    put(&seed_box, &seed_label);
    let seed_in: web_sys::HtmlInputElement = el("input", "").unchecked_into();
    for (k, v) in [
        ("id", "seed"),
        ("type", "number"),
        ("min", "0"),
        ("inputmode", "numeric"),
        ("data-control", "seed"),
    ] {
        set(&seed_in, k, v);
    }
    on.on(&seed_in, "change", move |ev| {
        if let Some(i) = input_of(&ev) {
            match i.value().trim().parse::<u64>() {
                Ok(v) => {
                    page.act(Action::Seed(v));
                }
                Err(_) => i.set_value(&seed.get_untracked().to_string()),
            }
        }
    });
    put(&seed_box, &seed_in);
    let fresh = button("new-seed", "New seed");
    set(
        &fresh,
        "title",
        "A different random run of the same scenario",
    );
    on.on(&fresh, "click", move |_| {
        page.act(Action::Seed(random_seed()));
    });
    put(&seed_box, &fresh);
    put(root, &seed_box);
    let (Some(play), Some(next)) = (play, next) else {
        return;
    };
    let dom = StoredValue::new_local(TransportDom {
        play,
        next,
        speed_out,
        ff,
        speed_in,
        now,
        of,
        catching,
        timeline,
        seed: seed_in,
        seed_shown: std::cell::Cell::new(None),
        _on: on,
    });
    crate::dom::effect(move || {
        let (p, sp, sd) = (playing.get(), speed.get(), seed.get());
        reading.with(|r| {
            dom.with_value(|d| {
                set_text(&d.play, if p { "❚❚ Pause" } else { "▶ Play" });
                set(&d.play, "aria-pressed", if p { "true" } else { "false" });
                let _ = d
                    .next
                    .toggle_attribute_with_force("disabled", r.next_marker.is_none());
                let label = speed_label(sp);
                set_text(&d.speed_out, &label);
                set_text(
                    &d.ff,
                    if r.fast_forward {
                        " ⏩ quiet stretch"
                    } else {
                        ""
                    },
                );
                set(&d.speed_in, "aria-valuetext", &format!("{label} real time"));
                let pos = position_of(sp).to_string();
                if d.speed_in.value() != pos {
                    d.speed_in.set_value(&pos);
                }
                set_text(&d.now, &crate::clock::now_ms_text(r.now));
                set_text(
                    &d.of,
                    &match r.end {
                        Some(end) if end < r.span => {
                            format!(" (the run ended at {})", virtual_label(end))
                        }
                        // "Stopped there" once the clock stands there, not
                        // while it plays toward it.
                        Some(_) if r.cut_off && r.now >= r.span => format!(
                            " of a {} run, stopped there with work still pending",
                            virtual_label(r.span)
                        ),
                        Some(_) if r.cut_off => format!(
                            " of a {} run (where the lab stops it, work still pending)",
                            virtual_label(r.span)
                        ),
                        Some(_) => {
                            format!(" of a {} run, to its last event", virtual_label(r.span))
                        }
                        None => format!(" of {} so far", virtual_label(r.span)),
                    },
                );
                let _ = d
                    .catching
                    .toggle_attribute_with_force("hidden", !r.catching_up);
                let span = stampede::decimal::format(r.span as f64 / 1000.0);
                if d.timeline.max() != span {
                    d.timeline.set_max(&span);
                }
                d.timeline.set_value_as_number(r.now as f64 / 1000.0);
                if d.seed_shown.get() != Some(sd) {
                    d.seed_shown.set(Some(sd));
                    d.seed.set_value(&sd.to_string());
                }
            })
        });
    });
}

/// What a question's link left for the page it opened: the question's
/// number, the counter its answer names and, in the A/B view, the side.
/// `"13|timeouts|b"`; anything else is ignored.
pub fn parse_from(text: &str) -> Option<(u32, Option<Metric>, String)> {
    let mut parts = text.split('|');
    let n = parts.next()?.parse::<u32>().ok().filter(|n| *n > 0)?;
    // The link names its counter as the CLI's JSON does (none: the
    // proof's); read once here, and a name that is no counter drops it.
    let metric = match parts.next().unwrap_or("") {
        "" => None,
        name => Some(Metric::from_name(name)?),
    };
    let side = parts.next().unwrap_or("").to_string();
    let clean = |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    clean(&side).then_some((n, metric, side))
}

/// The interview questions link scenarios (static HTML under the page). A
/// click on one opens its scenario in this page, with no reload: a history
/// entry of its own (Back returns), read by the page's own Back handling.
/// The page then offers the way back ("Back to question 13",
/// `data-control="back-to-question"`) and brings the counter the answer
/// names into view. A link the page cannot open in place (a drill, a list,
/// the kit) or a click that asks for a new tab loads as a link does, and
/// the page it opens offers the same way back.
pub fn question_links() {
    let page = crate::page::use_page();
    use crate::web::document;
    use wasm_bindgen::JsCast;
    let doc = document();
    let pill = StoredValue::new_local(None::<web_sys::Element>);
    let follow = wasm_bindgen::closure::Closure::<dyn FnMut(web_sys::MouseEvent)>::new(
        move |ev: web_sys::MouseEvent| {
            let Some(a) = ev
                .target()
                .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                .and_then(|t| t.closest(".reference a[href^='?']").ok().flatten())
            else {
                return;
            };
            let Some(n) = a
                .closest("details[data-question]")
                .ok()
                .flatten()
                .and_then(|d| d.get_attribute("data-question"))
            else {
                return;
            };
            let metric = a.get_attribute("data-expect-metric").unwrap_or_default();
            let side = a.get_attribute("data-expect-side").unwrap_or_default();
            let href = a.get_attribute("href").unwrap_or_default();
            let new_tab = ev.button() != 0
                || ev.ctrl_key()
                || ev.meta_key()
                || ev.shift_key()
                || ev.alt_key()
                || a.get_attribute("target").is_some_and(|t| t != "_self");
            let in_place = !new_tab
                && !href.trim_start_matches('?').split('&').any(|p| {
                    matches!(p.split('=').next(), Some("drill" | "list" | "item" | "kit"))
                });
            let from = format!("{n}|{metric}|{side}");
            if !in_place {
                Kept::FromQuestion.set(&from);
                return;
            }
            ev.prevent_default();
            let w = crate::web::window();
            let path = w.location().pathname().unwrap_or_default();
            if let Ok(h) = w.history() {
                let _ = h.push_state_with_url(
                    &wasm_bindgen::JsValue::NULL,
                    "",
                    Some(&format!("{path}{href}")),
                );
            }
            // The page's own Back handling opens the entry's view.
            if let Ok(pop) = web_sys::Event::new("popstate") {
                let _ = w.dispatch_event(&pop);
            }
            w.scroll_to_with_x_and_y(0.0, 0.0);
            if let Some(from) = parse_from(&from) {
                way_back(from, page, pill);
            }
        },
    );
    let _ = doc.add_event_listener_with_callback("click", follow.as_ref().unchecked_ref());
    follow.forget();
    if let Some(from) = Kept::FromQuestion.get().and_then(|s| parse_from(&s)) {
        Kept::FromQuestion.remove();
        way_back(from, page, pill);
    }
}

/// "Back to question N", once (a newer one replaces it), and the counter
/// the answer names brought into view and marked: by its owner, once its
/// view shows it ([`crate::page::Mark`]).
fn way_back(
    (n, metric, side): (u32, Option<Metric>, String),
    page: Page,
    shown: StoredValue<Option<web_sys::Element>, LocalStorage>,
) {
    use crate::dom::{el, put, set, set_text};
    use crate::web::document;
    use wasm_bindgen::JsCast;
    let doc = document();
    let Some(body) = doc.body() else { return };
    let back = el("a", "back-to-question");
    set(&back, "href", "#questions");
    set(&back, "data-control", "back-to-question");
    set_text(&back, &format!("← Back to question {n}"));
    let pill = back.clone();
    let go = wasm_bindgen::closure::Closure::<dyn FnMut(web_sys::Event)>::new(
        move |ev: web_sys::Event| {
            // The question is the static reference's, not a view's part.
            let q = document()
                .query_selector(&format!("details[data-question=\"{n}\"]"))
                .ok()
                .flatten();
            if let Some(q) = q {
                ev.prevent_default();
                let _ = q.set_attribute("open", "");
                q.scroll_into_view();
            }
            pill.remove();
        },
    );
    let _ = back.add_event_listener_with_callback("click", go.as_ref().unchecked_ref());
    go.forget();
    put(&body, &back);
    // One pill at a time: a newer one replaces it.
    if let Some(old) = shown.try_update_value(|p| p.replace(back)).flatten() {
        old.remove();
    }
    page.act(Action::Mark {
        metric,
        side: side.chars().next(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_link_is_read_or_ignored() {
        assert_eq!(
            parse_from("13|timeouts|b"),
            Some((13, Some(Metric::Timeouts), "b".into()))
        );
        assert_eq!(
            parse_from("10|releases_refused|"),
            Some((10, Some(Metric::ReleasesRefused), String::new()))
        );
        assert_eq!(parse_from("x|timeouts|b"), None);
        assert_eq!(parse_from("0||"), None);
        assert_eq!(parse_from("4||"), Some((4, None, String::new())));
        assert_eq!(parse_from("5|no_such_counter|b"), None);
        assert_eq!(parse_from("3|a\"]|b"), None, "never a selector of its own");
    }

    #[test]
    fn presets_are_recognised() {
        for p in PRESETS {
            let name = preset_of(&p.scenario()).unwrap();
            // Two presets may describe the same scenario; the first wins.
            assert_eq!(
                PRESETS.iter().find(|q| q.name == name).unwrap().scenario(),
                p.scenario()
            );
        }
        let custom = stampede::Scenario {
            instances: 7,
            ..stampede::Scenario::default()
        };
        assert_eq!(preset_of(&custom), None);
    }

    #[test]
    fn a_turned_knob_keeps_its_lesson() {
        let mut s = stampede::scenario::preset("failure").unwrap();
        s.pitfalls.remember_failure = true;
        assert_eq!(closest_preset(&s), Some("failure"));
        let far = stampede::Scenario {
            instances: 7,
            threads: 3,
            keys: 9,
            rtt_ms: 40,
            poll_ms: 9,
            workload: stampede::scenario::Workload::Cold,
            ..stampede::Scenario::default()
        };
        assert_eq!(
            closest_preset(&far),
            None,
            "too many changes to name a lesson"
        );
    }
}
