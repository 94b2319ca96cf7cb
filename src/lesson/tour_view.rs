//! The tour bar: where you are (level, step k of n, a progress bar), the
//! step's title and sentence with its live number, Back and Next in the same
//! place on every step, and the way out to the sandbox. Built once with
//! plain DOM calls; two effects write it: one when the step changes, one
//! when the number does.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::Element;

use super::tour::{self, Level, Place};
use crate::dom::{button, el, put, set, set_text, text_el, Listeners};
use crate::page::action::Action;
use crate::page::kept::Kept;
use crate::page::{Bet, Page};
use crate::web::document;

/// The shortest gap between two announcements of a running number: a
/// screen reader finishes a short sentence, and the next one is news.
const ANNOUNCE_EVERY_MS: f64 = 4000.0;

struct Bar {
    root: Element,
    main: Element,
    header: Option<Element>,
    open: Element,
    level: web_sys::HtmlSelectElement,
    place: Element,
    progress: Element,
    title: Element,
    before: Element,
    number: Element,
    after: Element,
    back: Element,
    next: Element,
    text: Element,
    action: Element,
    drill: Element,
    bet: BetView,
    _listeners: Listeners,
}

/// The prediction's part of the bar.
struct BetView {
    root: Element,
    question: Element,
    options: Element,
    verdict: Element,
    show: Element,
    skip: Element,
    toggle: Element,
}

/// Runs `s` on `seed` to virtual time `until` (µs; `u64::MAX`: its end) a
/// few milliseconds per task, so a big fleet never makes a long task, and
/// hands the report to `done`. `advance_to` is the page's own way of
/// running a fleet.
pub(crate) fn run_in_slices(
    s: &stampede::Scenario,
    seed: u64,
    until: u64,
    done: Box<dyn FnOnce(stampede::Report)>,
) {
    slice(Box::new(stampede::Fleet::new(s, seed)), until, done);
}

fn slice(mut fleet: Box<stampede::Fleet>, until: u64, done: Box<dyn FnOnce(stampede::Report)>) {
    set_timeout(
        move || {
            let start = crate::web::wall_now();
            loop {
                if fleet.advance_to(until, 2_000) {
                    done(fleet.report());
                    return;
                }
                if crate::web::wall_now() - start > 8.0 {
                    break;
                }
            }
            slice(fleet, until, done);
        },
        std::time::Duration::ZERO,
    );
}

/// Scrolls the practice panel (src/lesson/practice.rs) into view and moves
/// the focus to it, so the keyboard carries on from there.
fn to_practice() {
    let Some(p) = crate::web::document()
        .get_element_by_id("practice")
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    else {
        return;
    };
    if !p.has_attribute("tabindex") {
        crate::dom::set(&p, "tabindex", "-1");
    }
    p.scroll_into_view();
    let _ = p.focus();
}

/// The virtual time a step's number is known at: its pause, or its end.
fn known_at(step: &tour::Step) -> u64 {
    step.pause_ms.map_or(u64::MAX, |ms| u64::from(ms) * 1000)
}

/// Builds the tour bar (before the sandbox's `main`) and keeps it in step
/// with the page; offers the header the "Guided tour" button and the
/// interview questions' link, which the app lays out. Does nothing if the
/// page has no `main.lab` or the bar exists already.
pub fn mount(rec: super::practice::Record, parts: &crate::dom::Parts) -> Vec<Element> {
    let d = crate::page::use_page();
    let main = &parts.main;
    // The page's own host (the tests mount several pages one after another).
    let Some(host) = main.parent_element() else {
        return Vec::new();
    };
    if host.query_selector("section.tour").ok().flatten().is_some() {
        return Vec::new();
    }
    let header = Some(parts.header.clone());
    let mut on = Listeners::default();
    let root = &el("section", "panel tour");
    if let Some(parent) = main.parent_node() {
        let _ = parent.insert_before(root, Some(main));
    }
    let open = button("tour", "Guided tour");
    open.set_class_name("to-tour");
    set(
        &open,
        "title",
        "One idea at a time, each proved by a number on screen",
    );
    on.on(&open, "click", move |_| {
        d.act(if d.tour().get_untracked().is_some() {
            Action::Sandbox
        } else {
            Action::Tour((Level::Basics, 0))
        });
    });
    // The interview questions are static HTML under the page (index.html).
    let questions = text_el("a", "to-questions", "Interview questions");
    set(&questions, "href", "#questions");
    set(&questions, "data-control", "questions");
    let offer = vec![open.clone(), questions];
    set(root, "aria-labelledby", "tour-title");
    set(root, "aria-roledescription", "guided tour");

    let head = el("div", "tour-head");
    let level: web_sys::HtmlSelectElement = el("select", "").unchecked_into();
    set(&level, "data-control", "tour-level");
    set(&level, "aria-label", "Tour level");
    for l in Level::ALL {
        let o = text_el("option", "", l.title());
        set(&o, "value", l.name());
        put(&level, &o);
    }
    on.on(&level, "change", move |ev| {
        let v = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlSelectElement>().ok())
            .map(|s| s.value())
            .unwrap_or_default();
        if let Some(l) = Level::from_name(&v) {
            d.act(Action::Level(l));
        }
    });
    put(&head, &level);
    // The level's name, then the step's count: a phone hides the name,
    // which the level picker beside it shows (style/code.css).
    let place = el("span", "tour-place");
    put(&place, &text_el("span", "tour-place-level", ""));
    put(&place, &text_el("span", "tour-place-step", ""));
    put(&head, &place);
    let progress = el("progress", "tour-progress");
    set(&progress, "aria-label", "Progress through the tour");
    put(&head, &progress);
    let sandbox = button("sandbox", "Open the sandbox");
    set(
        &sandbox,
        "title",
        "Every knob, on the scenario you are looking at",
    );
    on.on(&sandbox, "click", move |_| {
        d.act(Action::Sandbox);
    });
    put(&head, &sandbox);
    put(root, &head);

    let title = text_el("h2", "tour-title", "");
    set(&title, "id", "tour-title");
    put(root, &title);
    let text = el("p", "tour-text");
    let before = el("span", "");
    let number = el("strong", "tour-number num");
    set(&number, "data-highlight", "");
    let after = el("span", "");
    put(&text, &before);
    put(&text, &number);
    put(&text, &after);
    put(root, &text);

    // Place your bets: the question, its options, and after the run the
    // verdict beside the revealed number.
    let bet = d.bet();
    let picks = RwSignal::new(None::<(Place, Vec<tour::Answer>)>);
    // The room's vote in presenter mode: hands counted per option, A to D.
    let votes = RwSignal::new([0u32; 4]);
    count_hands(d, picks, votes);
    let ask_root = el("div", "tour-predict");
    set(&ask_root, "hidden", "");
    let question = el("p", "tour-question");
    set(&question, "data-predict", "");
    set(&question, "id", "tour-question");
    put(&ask_root, &question);
    let options = el("div", "tour-options");
    set(&options, "role", "group");
    set(&options, "aria-labelledby", "tour-question");
    put(&ask_root, &options);
    // One listener for the options, however many a step has.
    on.on(&options, "click", move |ev| {
        let Some(i) = ev
            .target()
            .and_then(|t| t.dyn_into::<Element>().ok())
            .and_then(|e| e.closest("[data-predict-option]").ok().flatten())
            .and_then(|e| e.get_attribute("data-predict-option"))
            .and_then(|v| v.parse::<usize>().ok())
        else {
            return;
        };
        d.act(Action::Predict(Some(i)));
    });
    let verdict = el("p", "tour-verdict");
    put(&ask_root, &verdict);
    let bet_nav = el("div", "tour-bet-nav");
    let show = button("predict-show", "Just show me");
    on.on(&show, "click", move |_| {
        d.act(Action::Predict(None));
    });
    put(&bet_nav, &show);
    let skip = button("predict-skip", "Skip predictions");
    set(
        &skip,
        "title",
        "Steps just play; remembered in this tab only (\"Predict first\" asks again)",
    );
    on.on(&skip, "click", move |_| {
        d.act(Action::SkipPredictions(true));
    });
    put(&bet_nav, &skip);
    put(&ask_root, &bet_nav);
    // The room's phones vote too, with a relay (room_vote.rs).
    let phones = super::room_vote::mount(d, picks, &question, &ask_root);
    put(root, &ask_root);

    let nav = el("div", "tour-nav");
    let back = button("tour-back", "← Back");
    on.on(&back, "click", move |_| {
        d.act(Action::TourBack);
    });
    let next = button("tour-next", "Next →");
    on.on(&next, "click", move |_| {
        d.act(Action::TourNext);
    });
    put(&nav, &back);
    put(&nav, &next);
    let toggle = button("predict-toggle", "Predict first");
    set(
        &toggle,
        "title",
        "Ask for a prediction before each step plays",
    );
    on.on(&toggle, "click", move |_| {
        // Turned back on: this step asks again, from t = 0.
        d.act(Action::SkipPredictions(!d.skipping().get_untracked()));
    });
    put(&nav, &toggle);
    put(
        &nav,
        &text_el(
            "span",
            "tour-keys",
            "Arrows or Page Up/Down: next and back. Space: play or pause. ?: every key.",
        ),
    );
    put(root, &nav);

    // What the step's words point at doing, and the level's drill on its
    // last step.
    let more = el("div", "tour-more");
    let action = button("tour-action", "");
    on.on(&action, "click", move |_| {
        let Some(a) = d
            .tour()
            .get_untracked()
            .and_then(|(l, k)| tour::step(l, k))
            .and_then(|s| s.action)
        else {
            return;
        };
        d.act(match a {
            tour::Action::Sandbox(row) => Action::Open(row.link.to_string()),
            tour::Action::Compare { name, .. } => Action::Compare(name),
        });
    });
    put(&more, &action);
    let drill = el("a", "tour-drill");
    set(&drill, "data-level-drill", "");
    put(&more, &drill);
    // "Your practice" sits under the page: a way there from every step,
    // the level's end included.
    let practice = button("", "Your practice ↓");
    let _ = practice.remove_attribute("data-control");
    set(&practice, "data-practice-link", "");
    set(&practice, "aria-controls", "practice");
    on.on(&practice, "click", move |_| to_practice());
    put(&more, &practice);
    put(root, &more);

    let bar = StoredValue::new_local(Bar {
        root: root.clone(),
        main: main.clone(),
        header,
        open,
        level,
        place,
        progress,
        title,
        before,
        number,
        after,
        back,
        next,
        text,
        action,
        drill,
        bet: BetView {
            root: ask_root,
            question,
            options,
            verdict,
            show,
            skip,
            toggle,
        },
        _listeners: on,
    });

    announce(d);
    // A step that pauses mid-run: armed once its own run is seen before the
    // moment (the reading of the step before may be past it), paused once.
    let pause = StoredValue::new((None::<Place>, None::<Place>));
    follow_step(d, bar, picks, votes, pause, rec);
    follow_words(d, bar, picks, pause, rec);
    crate::dom::effect(move || {
        let step = d.step();
        let state = bet.get();
        let room = super::room_vote::with_phones(votes.get(), phones.get());
        let skipping = d.skipping().get();
        picks.with(|p| {
            let here = d.tour().get_untracked();
            let p = p
                .as_ref()
                .filter(|(at, _)| Some(*at) == here)
                .map(|(_, a)| a.as_slice());
            bar.with_value(|b| draw_bet(&b.bet, step, state, p, room, skipping));
        });
    });
    crate::dom::task(Box::new(move || super::practice::mount(d, rec)));
    offer
}

fn keep_votes(place: Place, v: [u32; 4]) {
    let said = format!(
        "{}:{},{},{},{}",
        tour::place_name(place),
        v[0],
        v[1],
        v[2],
        v[3]
    );
    Kept::Votes.set(&said);
}

/// The hands kept for `place`, else none (another step's are forgotten).
fn kept_votes(place: Place) -> [u32; 4] {
    let kept = Kept::Votes.get().unwrap_or_default();
    let mut out = [0; 4];
    if let Some(hands) = kept.strip_prefix(&format!("{}:", tour::place_name(place))) {
        for (o, h) in out.iter_mut().zip(hands.split(',')) {
            *o = h.parse().unwrap_or(0);
        }
    }
    out
}

/// The bar's parts, built once.
type BarCell = StoredValue<Bar, LocalStorage>;
/// A step's prediction's options, for the step they were worked out for.
type Picks = RwSignal<Option<(Place, Vec<tour::Answer>)>>;
/// Where a step that pauses mid-run is armed and paused.
type Pause = StoredValue<(Option<Place>, Option<Place>)>;

/// The room's vote in presenter mode: hands counted per option, A to D
/// (Shift takes one back), kept over a reload.
fn count_hands(d: Page, picks: Picks, votes: RwSignal<[u32; 4]>) {
    let bet = d.bet();
    let vote_keys = window_event_listener(leptos::ev::keydown, move |ev| {
        if ev.ctrl_key() || ev.meta_key() || ev.alt_key() {
            return;
        }
        // Presenter mode turned on or off: the options are drawn again
        // (after the room's own key handler has switched it).
        if ev.key().eq_ignore_ascii_case("p") {
            set_timeout(move || votes.update(|_| {}), std::time::Duration::ZERO);
            return;
        }
        if !presenting() {
            return;
        }
        if bet.get_untracked() != Bet::Asking {
            return;
        }
        let typing = ev
            .target()
            .and_then(|t| t.dyn_into::<Element>().ok())
            .is_some_and(|e| matches!(e.tag_name().as_str(), "INPUT" | "TEXTAREA" | "SELECT"));
        let key = ev.key().to_ascii_lowercase();
        let Some(i) = ["a", "b", "c", "d"].iter().position(|k| *k == key) else {
            return;
        };
        let n = picks.with_untracked(|p| p.as_ref().map_or(0, |(_, a)| a.len()));
        if typing || i >= n {
            return;
        }
        ev.prevent_default();
        // A hand per press; Shift takes one back.
        votes.update(|v| {
            v[i] = if ev.shift_key() {
                v[i].saturating_sub(1)
            } else {
                v[i].saturating_add(1)
            }
        });
        if let Some(place) = d.tour().get_untracked() {
            keep_votes(place, votes.get_untracked());
        }
    });
    // The bar lives as long as the page.
    std::mem::forget(vote_keys);
}

/// The one live region: the number that matters, said when the run
/// settles or at most every few seconds, never every frame.
fn announce(d: Page) {
    let live = el("p", "sr-only");
    set(&live, "aria-live", "polite");
    set(&live, "data-announce", "");
    if let Some(b) = document().body() {
        let _ = b.append_child(&live);
    }
    let said = StoredValue::new((String::new(), f64::NEG_INFINITY));
    crate::dom::effect(move || {
        let metric = match d.step() {
            Some(step) => step.metric,
            None => d.proof().get().metric,
        };
        let (value, settled) = d.reading().with(|r| (r.text(metric).to_string(), r.at_end));
        let now = crate::web::wall_now();
        let line = format!("{}: {value}", crate::page::label(metric));
        let (last, at) = said.get_value();
        if value.is_empty() || line == last || (!settled && now - at < ANNOUNCE_EVERY_MS) {
            return;
        }
        said.set_value((line.clone(), now));
        set_text(&live, &line);
    });
}

/// A new step: its words, its place, its prediction's options (the page
/// set its scenario and its prediction: `Action::Tour`). Out of the tour,
/// the bar hides and the sandbox's knobs come back.
fn follow_step(
    d: Page,
    bar: BarCell,
    picks: Picks,
    votes: RwSignal<[u32; 4]>,
    pause: Pause,
    rec: super::practice::Record,
) {
    crate::dom::effect(move || {
        let at = d.tour().get();
        pause.set_value((None, None));
        bar.with_value(|b| {
            let touring = at.is_some();
            let _ = b.root.toggle_attribute_with_force("hidden", !touring);
            set(
                &b.open,
                "aria-pressed",
                if touring { "true" } else { "false" },
            );
            let _ = b.main.class_list().toggle_with_force("touring", touring);
            if let Some(h) = &b.header {
                let _ = h.class_list().toggle_with_force("touring", touring);
            }
        });
        let Some((lv, k)) = at else {
            return;
        };
        let Some(step) = tour::step(lv, k) else {
            return;
        };
        // A step with a prediction works out its options (the right one is
        // its own run's number).
        let asks = step.predict.filter(|_| !d.skipping().get_untracked());
        if let Some(p) = asks {
            picks.set(None);
            // The room's hands on this step, kept over a reload.
            votes.set(kept_votes((lv, k)));
            let (s, seed, _) = stampede::Scenario::from_query(step.row.link);
            let here = (lv, k);
            run_in_slices(
                &s,
                seed,
                known_at(step),
                Box::new(move |r| {
                    if d.tour().get_untracked() == Some(here) {
                        picks.set(Some((here, tour::answers(step, &p, &r))));
                    }
                }),
            );
        }
        super::practice::change(rec, |p| {
            p.see(&tour::place_name((lv, k)));
        });
        bar.with_value(|b| {
            match step.action {
                Some(a) => {
                    set_text(&b.action, a.label());
                    let _ = b.action.remove_attribute("hidden");
                }
                None => set(&b.action, "hidden", ""),
            }
            let end = tour::next((lv, k)).is_none_or(|(l, _)| l != lv);
            match catalogue::drill::drill(lv.drill()).filter(|_| end) {
                Some(x) => {
                    set_text(
                        &b.drill,
                        &format!(
                            "End of {}: try the drill \u{201c}{}\u{201d}",
                            lv.title(),
                            x.title
                        ),
                    );
                    set(&b.drill, "href", &format!("?drill={}", x.name));
                    let _ = b.drill.remove_attribute("hidden");
                }
                None => set(&b.drill, "hidden", ""),
            }
            set(&b.root, "data-tour-step", &tour::place_name((lv, k)));
            b.level.set_value(lv.name());
            let n = tour::count(lv);
            if let (Some(level), Some(count)) =
                (b.place.first_element_child(), b.place.last_element_child())
            {
                set_text(&level, &format!("{}: ", lv.title()));
                set_text(&count, &format!("step {} of {n}", k + 1));
            }
            set(&b.progress, "max", &n.to_string());
            set(&b.progress, "value", &(k + 1).to_string());
            set_text(&b.title, step.title);
            set(&b.number, "data-metric", step.metric.name());
            let first = tour::back((lv, k)).is_none();
            let last = tour::next((lv, k)).is_none();
            let _ = b.back.toggle_attribute_with_force("disabled", first);
            let _ = b.next.toggle_attribute_with_force("disabled", last);
        });
    });
}

/// The running words and number, from the same reading as the counters:
/// the core fills the step's text from the run on screen. A step whose
/// lesson shows mid-run stops there, once.
fn follow_words(d: Page, bar: BarCell, picks: Picks, pause: Pause, rec: super::practice::Record) {
    let bet = d.bet();
    let seen = StoredValue::new(None::<Place>);
    crate::dom::effect(move || {
        let at = d.tour().get();
        let Some(step) = at.and_then(|(l, k)| tour::step(l, k)) else {
            bar.with_value(|b| {
                let _ = b.main.class_list().remove_1("predicting");
            });
            return;
        };
        let state = bet.get();
        let then = step.contrast.map(stampede::Scenario::from_query);
        let (before, number, after, now) = d.scenario().with(|s| {
            d.contrasts().with(|have| {
                d.reading().with(|r| {
                    let then = then
                        .as_ref()
                        .and_then(|(c, sd, _)| crate::page::contrast_of(have, c, *sd));
                    let (b, n, a) = tour::render(step, s, &r.report, r.at_end, then);
                    // At the end, the words are said only if their claims
                    // hold for the run on screen (a knob or the seed changed
                    // during the step can make them false).
                    let judged = r.at_end && (step.contrast.is_none() || then.is_some());
                    let (b, n, a) =
                        if judged && tour::said(step, s, &r.report, true, then).is_empty() {
                            (tour::NOT_THIS_RUN.to_string(), String::new(), String::new())
                        } else {
                            (b, n, a)
                        };
                    // The step's number can no longer change (the core
                    // says so of this step's own run): reveal it now, not
                    // at the run's virtual end.
                    let settled = r.finality.of(step.metric) && *r.scenario == *s;
                    (b, n, a, (r.now, r.at_end, settled))
                })
            })
        });
        let (now, ended, settled) = now;
        // The number is known once this step's own run (seen before that
        // moment: the reading of the step before may be past it) reaches
        // its pause or its end, or its number is final.
        let at_known = known_at(step);
        if now < at_known && !ended {
            seen.set_value(at);
        }
        let known = seen.get_value() == at && (ended || settled || now >= at_known);
        if let (Bet::Watching(pick), true) = (state, known) {
            d.act(Action::Reveal);
            // A pick is an attempt the review remembers; "just show me" is not.
            let right = picks.with_untracked(|p| {
                p.as_ref()
                    .filter(|(here, _)| Some(*here) == at)
                    .and_then(|(_, a)| pick.and_then(|i| a.get(i)))
                    .map(|a| a.right)
            });
            if let (Some(right), Some(place)) = (right, at) {
                super::practice::record(
                    rec,
                    &catalogue::practice::predict_key(&tour::place_name(place)),
                    if right {
                        catalogue::practice::Outcome::Right
                    } else {
                        catalogue::practice::Outcome::Missed
                    },
                );
            }
        }
        let hidden = matches!(state, Bet::Asking | Bet::Watching(_));
        bar.with_value(|b| {
            // The arithmetic panel works the answer out: it waits too.
            let _ = b.main.class_list().toggle_with_force("predicting", hidden);
            let _ = b
                .text
                .toggle_attribute_with_force("hidden", state == Bet::Asking);
            let _ = b
                .action
                .toggle_attribute_with_force("data-wait", state == Bet::Asking);
            if hidden {
                set_text(&b.number, "?");
                set(&b.number, "data-pending", "0");
                let _ = b.number.remove_attribute("data-revealed");
            } else {
                set_text(&b.number, &number);
                set(
                    &b.number,
                    "data-pending",
                    if number == tour::PENDING { "1" } else { "0" },
                );
                let _ = b.number.toggle_attribute_with_force("data-revealed", known);
            }
            set_text(&b.before, &before);
            set_text(&b.after, &after);
        });
        if let Some(ms) = step.pause_ms {
            let us = u64::from(ms) * 1000;
            let (armed, paused) = pause.get_value();
            if now < us && armed != at {
                pause.set_value((at, paused));
            } else if now >= us && armed == at && paused != at {
                pause.set_value((armed, at));
                // Crossed while playing: stop at the moment. A jump past it
                // (End, the scrubber) stays where it went.
                if d.playing().get_untracked() {
                    d.act(Action::Transport(crate::page::Command::Seek(us)));
                }
            }
        }
    });
}

/// The prediction's part of the bar, drawn when the step, the bet or the
/// options change (never per frame).
fn draw_bet(
    b: &BetView,
    step: Option<&'static tour::Step>,
    state: Bet,
    picks: Option<&[tour::Answer]>,
    room: [u32; 4],
    skipping: bool,
) {
    let presenter = presenting();
    set(
        &b.toggle,
        "aria-pressed",
        if skipping { "false" } else { "true" },
    );
    let Some((step, p)) = step.and_then(|s| s.predict.map(|p| (s, p))) else {
        let _ = b.root.set_attribute("hidden", "");
        return;
    };
    let _ = b
        .root
        .toggle_attribute_with_force("hidden", state == Bet::Off);
    if state == Bet::Off {
        return;
    }
    let asking = state == Bet::Asking;
    let s = stampede::Scenario::from_query(step.row.link).0;
    set_text(&b.question, &tour::question(&p, &s));
    let _ = b.show.toggle_attribute_with_force("hidden", !asking);
    let _ = b.skip.toggle_attribute_with_force("hidden", !asking);
    b.options.set_text_content(None);
    let Some(picks) = picks else {
        put(
            &b.options,
            &text_el("span", "tour-working", "Working out the options…"),
        );
        set_text(&b.verdict, "");
        return;
    };
    let (picked, revealed) = match state {
        Bet::Watching(p) => (p, false),
        Bet::Revealed(p) => (p, true),
        _ => (None, false),
    };
    let hands: u32 = room.iter().sum();
    for (i, a) in picks.iter().enumerate() {
        let o = button("", "");
        if presenter {
            // A to D, large, with the room's hands on each.
            put(&o, &text_el("b", "tour-letter", letter(i)));
            let _ = o.append_with_str_1(&a.label);
            if hands > 0 {
                let v = text_el("span", "tour-votes", &room[i].to_string());
                set(&v, "data-votes", &room[i].to_string());
                set(&v, "aria-label", &format!("{} of {hands} hands", room[i]));
                // Through the CSSOM: the page's CSP admits no style attribute.
                if let Some(h) = v.dyn_ref::<web_sys::HtmlElement>() {
                    let _ = h
                        .style()
                        .set_property("--share", &format!("{}%", room[i] * 100 / hands));
                }
                put(&o, &v);
            }
        } else {
            set_text(&o, &a.label);
        }
        let _ = o.remove_attribute("data-control");
        set(&o, "data-predict-option", &i.to_string());
        set(
            &o,
            "aria-pressed",
            if picked == Some(i) { "true" } else { "false" },
        );
        if !asking {
            set(&o, "disabled", "");
        }
        if revealed {
            set(&o, "data-right", if a.right { "1" } else { "0" });
        }
        put(&b.options, &o);
    }
    let right = picks
        .iter()
        .find(|a| a.right)
        .map_or("", |a| a.label.as_str());
    let line = match (state, picked.and_then(|i| picks.get(i))) {
        (Bet::Revealed(_), Some(a)) if a.right => format!("Right: the run shows {right}."),
        (Bet::Revealed(_), Some(a)) => format!(
            "You said {}; the run shows {right}. {}",
            a.label,
            a.why_not.unwrap_or_default()
        ),
        (Bet::Revealed(_), None) => format!("The run shows {right}."),
        (Bet::Watching(Some(i)), _) => format!(
            "You said {}. Watch the run: the number shows {}.",
            picks.get(i).map_or("", |a| a.label.as_str()),
            if step.pause_ms.is_some() {
                "when it pauses"
            } else {
                "at its end"
            }
        ),
        (Bet::Watching(None), _) => "Watch the run: the number shows once it is known.".into(),
        (Bet::Asking, _) if presenter => format!(
            "Room vote: press A to {} once per hand (Shift takes one back), then Space to reveal, or just Space to skip.",
            letter(picks.len().saturating_sub(1))
        ),
        _ => String::new(),
    };
    let line = match picks.iter().position(|a| a.right) {
        Some(r) if presenter && hands > 0 && state != Bet::Asking => {
            let spread = picks
                .iter()
                .enumerate()
                .map(|(i, _)| format!("{} {}", letter(i), room[i]))
                .collect::<Vec<_>>()
                .join(", ");
            let said = format!("The room: {spread} ({hands} hands).");
            if matches!(state, Bet::Revealed(_)) {
                let mine = if picked.is_some() {
                    line
                } else {
                    String::new()
                };
                format!(
                    "{said} The run shows {right} ({}): {} of {hands} right. {mine}",
                    letter(r),
                    room[r]
                )
            } else {
                format!("{said} {line}")
            }
        }
        _ => line,
    };
    let fresh = !line.is_empty() && b.verdict.text_content().as_deref() != Some(line.as_str());
    set_text(&b.verdict, &line);
    if fresh && !presenter {
        crate::dom::above_sticky_foot(&b.verdict, ".tour-nav");
    }
}

/// Presenter mode is on (the room's class on the body).
fn presenting() -> bool {
    document()
        .body()
        .is_some_and(|b| b.class_list().contains("presenter"))
}

fn letter(i: usize) -> &'static str {
    ["A", "B", "C", "D"].get(i).copied().unwrap_or("")
}
