//! Practice that remembers, on the page: the core's progress record
//! (`catalogue::practice`) kept in this browser's localStorage only, a map
//! of the tour's three levels (steps seen, predictions right or missed,
//! the level's drill), the drills' tally, what is due for review, and the
//! interview questions as retrieval practice (the question, your own
//! answer, then ours and a self-grade the schedule reads). Built once with
//! plain DOM calls; redrawn when the record changes.

use std::cell::RefCell;

use leptos::prelude::*;

use catalogue::practice::{self, DrillState};
use catalogue::practice::{Outcome, Progress};
use wasm_bindgen::JsCast;
use web_sys::Element;

use super::tour::{self, Level};
use crate::dom::{button, set_text, Listeners};
use crate::dom::{el, put, set, text_el};
use crate::page::kept::Kept;
use crate::page::Page;
use crate::web::document;

struct State {
    progress: Progress,
    /// What the page could not keep or read, said in the panel.
    notice: Option<String>,
    redraw: Vec<Box<dyn Fn()>>,
}

/// The learner's record, which the tour, the drills and the practice
/// panel read and change: made once by the app ([`Record::load`]) and
/// passed to each, not kept in a global.
#[derive(Clone, Copy)]
pub struct Record(StoredValue<State, LocalStorage>);

impl Record {
    /// The record this browser keeps (or a fresh one, saying why).
    pub fn load() -> Record {
        let (progress, notice) = match Kept::Progress.read() {
            None => (
                Progress::default(),
                Some("This browser keeps no storage for this page, so progress lasts until you leave it.".to_string()),
            ),
            Some(v) => Progress::parse(&v.unwrap_or_default()),
        };
        Record(StoredValue::new_local(State {
            progress,
            notice,
            redraw: Vec::new(),
        }))
    }
}

/// The browser's clock in whole minutes (the schedule's unit).
pub fn now_min() -> u64 {
    (js_sys::Date::now() / 60_000.0) as u64
}

fn with_state<R>(rec: Record, f: impl FnOnce(&mut State) -> R) -> Option<R> {
    rec.0.try_update_value(f)
}

/// Reads the record.
pub fn read<R: Default>(rec: Record, f: impl FnOnce(&Progress) -> R) -> R {
    rec.0.try_with_value(|s| f(&s.progress)).unwrap_or_default()
}

/// Changes the record, keeps it, and redraws what shows it.
pub fn change(rec: Record, f: impl FnOnce(&mut Progress)) {
    let text = with_state(rec, |s| {
        let before = s.progress.clone();
        f(&mut s.progress);
        (s.progress != before).then(|| s.progress.to_text())
    });
    let Some(text) = text.flatten() else {
        return;
    };
    if !Kept::Progress.set(&text) {
        with_state(rec, |s| {
            s.notice = s.notice.take().or(Some("This browser refused to keep progress (its storage is full or off); it lasts until you leave the page.".into()))
        });
    }
    redraw(rec);
}

/// Records an attempt at an item now.
pub fn record(rec: Record, key: &str, outcome: Outcome) {
    let now = now_min();
    change(rec, |p| p.record(key, outcome, now));
}

fn redraw(rec: Record) {
    // The hooks read the state themselves: take them out while they run.
    let hooks = with_state(rec, |s| std::mem::take(&mut s.redraw)).unwrap_or_default();
    for h in &hooks {
        h();
    }
    with_state(rec, |s| {
        let mut hooks = hooks;
        hooks.append(&mut s.redraw);
        s.redraw = hooks;
    });
}

/// Calls `f` now and whenever the record changes.
pub fn on_change(rec: Record, f: impl Fn() + 'static) {
    f();
    with_state(rec, |s| s.redraw.push(Box::new(f)));
}

fn notice(rec: Record) -> Option<String> {
    with_state(rec, |s| s.notice.clone()).flatten()
}

/// The interview questions under the page (static HTML): number, the
/// question, its answer's element.
fn questions() -> Vec<(u32, String, Element)> {
    let mut out = Vec::new();
    let Ok(all) = document().query_selector_all("details[data-question]") else {
        return out;
    };
    for i in 0..all.length() {
        let Some(d) = all.item(i).and_then(|n| n.dyn_into::<Element>().ok()) else {
            continue;
        };
        let n = d
            .get_attribute("data-question")
            .and_then(|v| v.parse::<u32>().ok());
        let q = d.query_selector("summary").ok().flatten();
        let a = d.query_selector(".answer").ok().flatten();
        if let (Some(n), Some(q), Some(a)) = (n, q, a) {
            out.push((n, q.text_content().unwrap_or_default(), a));
        }
    }
    out
}

struct Review {
    card: Element,
    question: Element,
    mine: Element,
    show: Element,
    answer: Element,
    grades: Element,
    status: Element,
}

/// The practice panel's section with its heading, and the reference area
/// it goes first in; none if the page has one already, or no area.
fn section() -> Option<(web_sys::Element, web_sys::Element)> {
    let doc = crate::web::document();
    if doc
        .query_selector("section.practice")
        .ok()
        .flatten()
        .is_some()
    {
        return None;
    }
    let area = doc.query_selector(".reference-area").ok().flatten()?;
    let root = el("section", "panel reference practice");
    set(&root, "id", "practice");
    set(&root, "aria-labelledby", "practice-title");
    let h = text_el("h2", "", "Your practice");
    set(&h, "id", "practice-title");
    put(&root, &h);
    Some((area, root))
}

/// Builds the practice panel at the top of the reference under the page.
pub fn mount(d: Page, rec: Record) {
    let Some((area, root)) = section() else {
        return;
    };
    let mut on = Listeners::default();
    set(&root, "data-practice", "");
    put(
        &root,
        &text_el(
            "p",
            "ref-note",
            "Kept in this browser's storage only; nothing is sent anywhere.",
        ),
    );
    let said = el("p", "practice-notice");
    set(&said, "data-practice-notice", "");
    set(&said, "role", "status");
    put(&root, &said);

    // The map: one row per level, one mark per step.
    let map = el("div", "practice-map");
    let mut rows = Vec::new();
    for lv in Level::ALL {
        let row = el("div", "practice-level");
        set(&row, "data-level", lv.name());
        let head = text_el("h3", "", lv.title());
        put(&row, &head);
        let ol = el("ol", "practice-steps");
        set(&ol, "aria-label", &format!("{}: its steps", lv.title()));
        let mut marks = Vec::new();
        for (k, step) in tour::steps(lv).enumerate() {
            let li = el("li", "");
            let b = button("practice-step", &(k + 1).to_string());
            set(&b, "data-step", &tour::place_name((lv, k)));
            put(&li, &b);
            put(&ol, &li);
            marks.push((b, step));
        }
        put(&row, &ol);
        let tally = el("p", "practice-tally");
        put(&row, &tally);
        put(&map, &row);
        rows.push((lv, marks, tally));
    }
    // A step's mark opens it in the tour.
    on.on(&map, "click", move |ev| open_step(d, &ev));
    put(&root, &map);
    let drills = el("p", "practice-drills");
    set(&drills, "data-practice-drills", "");
    put(&root, &drills);

    // Due: drills and predictions missed come back.
    put(&root, &text_el("h3", "", "Due for review"));
    let due = el("ul", "practice-due");
    set(&due, "data-practice-due", "");
    put(&root, &due);
    on.on(&due, "click", move |ev| open_step(d, &ev));

    // The interview questions as retrieval practice.
    put(
        &root,
        &text_el("h3", "", "Interview questions, from memory"),
    );
    let card = el("div", "review");
    set(&card, "data-review", "");
    let question = el("p", "review-q");
    put(&card, &question);
    let mine = el("textarea", "review-mine");
    set(&mine, "rows", "3");
    set(
        &mine,
        "aria-label",
        "Your answer, in your own words (not kept)",
    );
    set(
        &mine,
        "placeholder",
        "Your answer, typed or just thought (not kept)",
    );
    put(&card, &mine);
    let show = button("review-show", "Show our answer");
    put(&card, &show);
    let answer = el("div", "review-answer");
    set(&answer, "hidden", "");
    put(&card, &answer);
    let grades = el("div", "review-grades");
    set(&grades, "role", "group");
    set(&grades, "aria-label", "How well did you answer?");
    set(&grades, "hidden", "");
    for (code, label) in [
        ("missed", "I missed it"),
        ("partly", "Partly"),
        ("right", "I had it"),
    ] {
        let b = button("review-grade", label);
        set(&b, "data-self-grade", code);
        put(&grades, &b);
    }
    put(&card, &grades);
    let status = el("p", "review-status");
    put(&card, &status);
    put(&root, &card);

    let reset = button("practice-reset", "Reset progress");
    set(&reset, "title", "Forget everything kept in this browser");
    put(&root, &reset);

    let _ = area.insert_before(&root, area.first_child().as_ref());

    let review = std::rc::Rc::new(Review {
        card,
        question,
        mine,
        show,
        answer,
        grades,
        status,
    });
    let current = std::rc::Rc::new(RefCell::new(None::<u32>));
    {
        let (r, cur) = (review.clone(), current.clone());
        on.on(&r.show.clone(), "click", move |_| {
            let Some(n) = *cur.borrow() else {
                return;
            };
            if let Some((_, _, a)) = questions().into_iter().find(|q| q.0 == n) {
                r.answer.set_text_content(None);
                if let Ok(copy) = a.clone_node_with_deep(true) {
                    let _ = r.answer.append_child(&copy);
                }
            }
            let _ = r.answer.remove_attribute("hidden");
            let _ = r.grades.remove_attribute("hidden");
            set(&r.show, "hidden", "");
        });
    }
    {
        let (r, cur) = (review.clone(), current.clone());
        on.on(&r.grades.clone(), "click", move |ev| {
            let grade = ev
                .target()
                .and_then(|t| t.dyn_into::<Element>().ok())
                .and_then(|e| e.get_attribute("data-self-grade"));
            let outcome = match grade.as_deref() {
                Some("missed") => Outcome::Missed,
                Some("partly") => Outcome::Partly,
                Some("right") => Outcome::Right,
                _ => return,
            };
            let Some(n) = cur.borrow_mut().take() else {
                return;
            };
            record(rec, &practice::question_key(n), outcome);
            let back = read(rec, |p| p.item(&practice::question_key(n)).map(|i| i.due));
            let when = back.map_or(String::new(), |due| {
                practice::wait_words(due.saturating_sub(now_min()))
            });
            next_question(rec, &r, &cur, &format!("Question {n} comes back {when}. "));
        });
    }
    on.on(&reset, "click", move |_| {
        change(rec, |p| *p = Progress::default());
        with_state(rec, |s| {
            s.notice = Some("Progress reset: this browser keeps nothing of it now.".into())
        });
        Kept::Progress.remove();
        redraw(rec);
    });

    {
        let r = review.clone();
        let cur = current.clone();
        next_question(rec, &r, &cur, "");
    }
    // The listeners live as long as the page.
    std::mem::forget(on);
    on_change(rec, move || {
        let now = now_min();
        let line = notice(rec).unwrap_or_default();
        let _ = said.toggle_attribute_with_force("hidden", line.is_empty());
        set_text(&said, &line);
        read(rec, |p| {
            for (lv, marks, tally) in &rows {
                let (mut seen, mut right, mut asked) = (0, 0, 0);
                for (k, (b, step)) in marks.iter().enumerate() {
                    let place = tour::place_name((*lv, k));
                    let was_seen = p.has_seen(&place);
                    seen += usize::from(was_seen);
                    let bet = p.item(&practice::predict_key(&place));
                    let state = match bet {
                        Some(i) if i.last == Outcome::Right => "right",
                        Some(_) => "missed",
                        None if was_seen => "seen",
                        None => "new",
                    };
                    if let Some(i) = bet {
                        asked += 1;
                        right += usize::from(i.last == Outcome::Right);
                    }
                    set(b, "data-state", state);
                    let what = match state {
                        "right" => "predicted right",
                        "missed" => "prediction missed",
                        "seen" => "seen",
                        _ => "not seen yet",
                    };
                    set(
                        b,
                        "aria-label",
                        &format!("Step {}: {}, {what}", k + 1, step.title),
                    );
                    set(b, "title", &format!("{}: {what}", step.title));
                }
                let drill = catalogue::drill::drill(lv.drill());
                let drill_words = drill.map_or(String::new(), |x| {
                    let st = match p.drill_state(x.name) {
                        DrillState::Solved => "solved",
                        DrillState::Attempted => "attempted",
                        DrillState::Untried => "not tried",
                    };
                    format!("; its drill {st}")
                });
                let bets = match asked {
                    0 => "no predictions yet".to_string(),
                    _ => format!("{right} of {asked} predictions right"),
                };
                set_text(
                    tally,
                    &format!("{seen} of {} seen; {bets}{drill_words}", marks.len()),
                );
            }
            let (mut solved, mut tried) = (0, 0);
            for x in catalogue::drill::DRILLS {
                match p.drill_state(x.name) {
                    DrillState::Solved => solved += 1,
                    DrillState::Attempted => tried += 1,
                    DrillState::Untried => {}
                }
            }
            set(&drills, "data-solved", &solved.to_string());
            set(&drills, "data-attempted", &tried.to_string());
            drills.set_text_content(None);
            let _ = drills.append_with_str_1(&format!(
                "Drills: {solved} solved and {tried} attempted of {}. ",
                catalogue::drill::DRILLS.len()
            ));
            let a = text_el("a", "", "Open the drills");
            set(&a, "href", "?drill=");
            put(&drills, &a);

            due.set_text_content(None);
            let mut any = false;
            for item in p.due(now, "") {
                let li = el("li", "");
                if let Some(name) = item.key.strip_prefix("drill:") {
                    let Some(x) = catalogue::drill::drill(name) else {
                        continue;
                    };
                    let a = text_el("a", "", &format!("Drill: {}", x.title));
                    set(&a, "href", &format!("?drill={name}"));
                    set(&a, "data-due", &item.key);
                    put(&li, &a);
                } else if let Some(place) = item.key.strip_prefix("predict:") {
                    let Some(step) = tour::parse_hash(&format!("#tour/{place}"))
                        .and_then(|(l, k)| tour::step(l, k))
                    else {
                        continue;
                    };
                    let b = button("practice-step", &format!("Prediction: {}", step.title));
                    set(&b, "data-step", place);
                    set(&b, "data-due", &item.key);
                    put(&li, &b);
                } else {
                    continue;
                }
                any = true;
                put(&due, &li);
            }
            if !any {
                let next = p
                    .next_due(now, "drill:")
                    .into_iter()
                    .chain(p.next_due(now, "predict:"))
                    .min();
                let line = match next {
                    Some(t) => format!(
                        "Nothing due now; the next drill or prediction comes back {}.",
                        practice::wait_words(t - now)
                    ),
                    None => {
                        "Nothing due: a drill failed or a prediction missed comes back here.".into()
                    }
                };
                put(&due, &text_el("li", "practice-none", &line));
            }
        });
    });
}

/// A click on a `[data-step]` opens that step of the tour, at the top.
fn open_step(d: Page, ev: &web_sys::Event) {
    let place = ev
        .target()
        .and_then(|t| t.dyn_into::<Element>().ok())
        .and_then(|e| e.closest("[data-step]").ok().flatten())
        .and_then(|e| e.get_attribute("data-step"))
        .and_then(|v| tour::parse_hash(&format!("#tour/{v}")));
    if let Some(p) = place {
        d.act(crate::page::action::Action::Tour(p));
        crate::web::window().scroll_to_with_x_and_y(0.0, 0.0);
    }
}

/// Puts the next question to review on the card, after `lead`.
fn next_question(rec: Record, r: &Review, cur: &RefCell<Option<u32>>, lead: &str) {
    let qs = questions();
    let keys: Vec<String> = qs.iter().map(|q| practice::question_key(q.0)).collect();
    let now = now_min();
    let next = read(rec, |p| p.next_of(&keys, now).map(str::to_string));
    let _ = js_sys::Reflect::set(&r.mine, &"value".into(), &"".into());
    r.answer.set_text_content(None);
    set(&r.answer, "hidden", "");
    set(&r.grades, "hidden", "");
    match next.and_then(|k| qs.into_iter().find(|q| practice::question_key(q.0) == k)) {
        Some((n, q, _)) => {
            *cur.borrow_mut() = Some(n);
            set(&r.card, "data-review", &n.to_string());
            set_text(&r.question, &format!("Question {n}: {q}"));
            let _ = r.show.remove_attribute("hidden");
            let _ = r.mine.remove_attribute("hidden");
            set_text(&r.status, lead.trim_end());
        }
        None => {
            *cur.borrow_mut() = None;
            set(&r.card, "data-review", "");
            let later = read(rec, |p| p.next_due(now, "question:"));
            set_text(
                &r.question,
                &format!(
                    "{lead}Nothing to review now{}.",
                    later.map_or(String::new(), |t| format!(
                        "; the next question comes back {}",
                        practice::wait_words(t - now)
                    ))
                ),
            );
            set(&r.show, "hidden", "");
            set(&r.mine, "hidden", "");
            set_text(&r.status, "");
        }
    }
}
