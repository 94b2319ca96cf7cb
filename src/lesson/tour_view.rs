//! The tour bar: where you are (level, step k of n, a progress bar), the
//! step's title and sentence with its live number, Back and Next in the same
//! place on every step, and the way out to the sandbox. Built once with
//! plain DOM calls; two effects write it: one when the step changes, one
//! when the number does.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::Element;

use super::tour::{self, Level, Place};
use crate::dom::{button, document, el, put, set, set_text, text_el, Listeners};
use crate::reading::Reading;
use crate::url_state;

/// The page state a step sets.
#[derive(Clone, Copy)]
pub struct Drive {
    pub tour: RwSignal<Option<Place>>,
    pub scenario: RwSignal<stampede::Scenario>,
    pub seed: RwSignal<u64>,
    pub speed: RwSignal<f64>,
    pub compare: RwSignal<Option<&'static str>>,
    pub reading: RwSignal<Reading>,
    /// The counter that proves the running lesson (announced outside the tour).
    pub proof: Memo<stampede::lesson::Proof>,
    /// The runs a step's words compare against (`then.` in its text).
    pub contrasts: RwSignal<Vec<crate::app::Contrast>>,
    /// The transport: a step that pauses mid-run seeks there.
    pub send: Callback<crate::transport::Command>,
    /// The run is playing (a jump past the pause, End, does not pause it).
    pub playing: RwSignal<bool>,
}

/// The shortest gap between two announcements of a running number: a
/// screen reader finishes a short sentence, and the next one is news.
const ANNOUNCE_EVERY_MS: f64 = 4000.0;

impl Drive {
    pub fn next(&self) {
        if let Some(p) = self.tour.get_untracked().and_then(tour::next) {
            self.tour.set(Some(p));
        }
    }

    pub fn back(&self) {
        if let Some(p) = self.tour.get_untracked().and_then(tour::back) {
            self.tour.set(Some(p));
        }
    }

    /// Leaves the tour for the sandbox on a share link's scenario.
    pub fn open(&self, query: &str) {
        self.tour.set(None);
        self.set_query(query);
    }

    /// Sets the step's scenario; the page then runs it from t = 0.
    fn apply(&self, step: &tour::Step) {
        self.set_query(step.query);
    }

    fn set_query(&self, query: &str) {
        let (state, _) = url_state::parse(query);
        self.compare.set(None);
        self.speed.set(state.speed);
        // Setting a signal reruns its effects even with an equal value, and
        // a new seed or scenario rebuilds the fleet: only what changed.
        if self.seed.get_untracked() != state.seed {
            self.seed.set(state.seed);
        }
        if self.scenario.with_untracked(|s| *s != state.scenario) {
            self.scenario.set(state.scenario);
        }
    }
}

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
    _listeners: Listeners,
}

/// Builds the tour bar (before the sandbox's `main`) and the header's
/// "Guided tour" button, and keeps them in step with `d`. Does nothing if
/// the page has no `main.lab` or the bar exists already.
pub fn mount(d: Drive) {
    let doc = document();
    let Some(main) = doc.query_selector("main.lab").ok().flatten() else {
        return;
    };
    // The page's own host (the tests mount several pages one after another).
    let Some(host) = main.parent_element() else {
        return;
    };
    if host.query_selector("section.tour").ok().flatten().is_some() {
        return;
    }
    let header = host.query_selector("header.topbar").ok().flatten();
    let mut on = Listeners::default();
    let root = &el("section", "panel tour");
    if let Some(parent) = main.parent_node() {
        let _ = parent.insert_before(root, Some(&main));
    }
    let open = button("tour", "Guided tour");
    open.set_class_name("to-tour");
    set(
        &open,
        "title",
        "One idea at a time, each proved by a number on screen",
    );
    on.on(&open, "click", move |_| {
        d.tour.update(|t| {
            *t = if t.is_some() {
                None
            } else {
                Some((Level::Basics, 0))
            }
        })
    });
    // The interview questions are static HTML under the page (index.html).
    let questions = text_el("a", "to-questions", "Interview questions");
    set(&questions, "href", "#questions");
    set(&questions, "data-control", "questions");
    // One row for the page's modes: the A/B view's button joins it.
    if let Some(h) = &header {
        let modes = el("div", "modes");
        if let Some(compare) = h.query_selector(".to-compare").ok().flatten() {
            put(&modes, &compare);
        }
        put(&modes, &open);
        put(&modes, &questions);
        put(h, &modes);
    }
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
            d.tour.set(Some((l, 0)));
        }
    });
    put(&head, &level);
    let place = text_el("span", "tour-place", "");
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
    on.on(&sandbox, "click", move |_| d.tour.set(None));
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

    let nav = el("div", "tour-nav");
    let back = button("tour-back", "← Back");
    on.on(&back, "click", move |_| d.back());
    let next = button("tour-next", "Next →");
    on.on(&next, "click", move |_| d.next());
    put(&nav, &back);
    put(&nav, &next);
    put(
        &nav,
        &text_el(
            "span",
            "tour-keys",
            "Arrows or Page Up/Down: next and back. Space: play or pause. ?: every key.",
        ),
    );
    put(root, &nav);

    let bar = StoredValue::new_local(Bar {
        root: root.clone(),
        main,
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
        _listeners: on,
    });

    // The one live region: the number that matters, said when the run
    // settles or at most every few seconds, never every frame.
    let live = el("p", "sr-only");
    set(&live, "aria-live", "polite");
    set(&live, "data-announce", "");
    if let Some(b) = document().body() {
        let _ = b.append_child(&live);
    }
    let said = StoredValue::new((String::new(), f64::NEG_INFINITY));
    Effect::new(move |_| {
        let metric = match d.tour.get().and_then(|(l, k)| tour::step(l, k)) {
            Some(step) => step.metric,
            None => d.proof.get().metric,
        };
        let (value, settled) = d.reading.with(|r| (r.field(metric), r.at_end));
        let now = crate::engine::wall_now();
        let line = format!("{}: {value}", crate::counters::label_of(metric));
        let (last, at) = said.get_value();
        if value.is_empty() || line == last || (!settled && now - at < ANNOUNCE_EVERY_MS) {
            return;
        }
        said.set_value((line.clone(), now));
        set_text(&live, &line);
    });

    // A step that pauses mid-run: armed once its own run is seen before the
    // moment (the reading of the step before may be past it), paused once.
    let pause = StoredValue::new((None::<Place>, None::<Place>));
    // A new step: its scenario, its words, its place. Out of the tour, the
    // bar hides and the sandbox's knobs come back.
    Effect::new(move |_| {
        let at = d.tour.get();
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
        d.apply(step);
        bar.with_value(|b| {
            set(&b.root, "data-tour-step", &tour::place_name((lv, k)));
            b.level.set_value(lv.name());
            let n = tour::count(lv);
            set_text(&b.place, &format!("{}: step {} of {n}", lv.title(), k + 1));
            set(&b.progress, "max", &n.to_string());
            set(&b.progress, "value", &(k + 1).to_string());
            set_text(&b.title, step.title);
            set(&b.number, "data-metric", step.metric);
            let first = tour::back((lv, k)).is_none();
            let last = tour::next((lv, k)).is_none();
            let _ = b.back.toggle_attribute_with_force("disabled", first);
            let _ = b.next.toggle_attribute_with_force("disabled", last);
        });
        highlight(step.metric);
    });
    // The running words and number, from the same reading as the counters:
    // the core fills the step's text from the run on screen. A step whose
    // lesson shows mid-run stops there, once.
    Effect::new(move |_| {
        let at = d.tour.get();
        let Some(step) = at.and_then(|(l, k)| tour::step(l, k)) else {
            return;
        };
        let then = step.contrast.map(stampede::Scenario::from_query);
        let (before, number, after, now) = d.scenario.with(|s| {
            d.contrasts.with(|have| {
                d.reading.with(|r| {
                    let then = then
                        .as_ref()
                        .and_then(|(c, sd, _)| crate::app::contrast_of(have, c, *sd));
                    let (b, n, a) = tour::render(step, s, &r.report, r.at_end, then);
                    (b, n, a, r.now)
                })
            })
        });
        bar.with_value(|b| {
            set_text(&b.before, &before);
            set_text(&b.number, &number);
            set(
                &b.number,
                "data-pending",
                if number == tour::PENDING { "1" } else { "0" },
            );
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
                if d.playing.get_untracked() {
                    d.send.run(crate::transport::Command::Seek(us));
                }
            }
        }
        // The counters re-render as the scenario changes: mark them again.
        highlight(step.metric);
    });
}

/// Outlines every other element showing `metric` (the proof, a counter),
/// and only those.
fn highlight(metric: &str) {
    let doc = document();
    if let Ok(old) = doc.query_selector_all("[data-highlight]:not(.tour-number)") {
        for i in 0..old.length() {
            if let Some(e) = old.item(i).and_then(|n| n.dyn_into::<Element>().ok()) {
                let _ = e.remove_attribute("data-highlight");
            }
        }
    }
    if let Ok(now) =
        doc.query_selector_all(&format!("[data-metric=\"{metric}\"]:not(.tour-number)"))
    {
        for i in 0..now.length() {
            if let Some(e) = now.item(i).and_then(|n| n.dyn_into::<Element>().ok()) {
                set(&e, "data-highlight", "");
            }
        }
    }
}
