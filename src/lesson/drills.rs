//! The drills view (`?drill=NAME`): a graded puzzle on the same fleet,
//! canvas and counters as the sandbox. The drill, its knobs and its grading
//! are the core's (`catalogue::drill`); this only draws them: the story, the
//! allowed knobs (the locked ones are not shown), the goals checked live on
//! the run on screen, three hints one at a time, the worked solution, and
//! the grade over the drill's seeds once the run ends, the CLI's own.
//! Built once with plain DOM calls, like the tour bar.

use catalogue::drill::{self, Drill, Grade};
use catalogue::practice::{drill_key, DrillState, Outcome};
use leptos::prelude::*;
use stampede::{Report, Scenario};
use web_sys::Element;

use crate::dom::{button, el, put, set, set_text, text_el, Listeners};
use crate::page::action::Action;

/// The page state the drills view reads and sets.
#[derive(Clone, Copy)]
pub struct DrillPage {
    /// The drill the link opened.
    pub drill: &'static Drill,
    /// The drill is on screen (false once the learner leaves for the sandbox).
    pub open: RwSignal<bool>,
    /// The link asked for the list (`?drill=`, or a name that is no drill).
    pub list: bool,
    /// The learner's record, where a drill passed or given up is kept.
    pub record: super::practice::Record,
}

struct View {
    goals: Vec<Element>,
    grade: Element,
    reasoning: Element,
    _listeners: Listeners,
}

/// The tour and a drill take turns: the drill's view closes (`open`) when
/// the tour opens, or for a scenario the drill's link cannot carry (a
/// preset's digit key changed a locked knob): that one is the sandbox's.
pub fn follow_page(d: &'static Drill, open: RwSignal<bool>) {
    let page = crate::page::use_page();
    crate::dom::effect(move || {
        let away = page.tour().get().is_some()
            || page
                .scenario()
                .with(|s| catalogue::drill::apply(d, &d.link(s)).0 != *s);
        if away && open.get_untracked() {
            open.set(false);
        }
    });
}

/// Builds the drills view before the sandbox's `main`, if a drill is open.
pub fn mount(p: DrillPage, parts: &crate::dom::Parts) {
    let page = crate::page::use_page();
    let record = p.record;
    let d = p.drill;
    let main = parts.main.clone();
    let header = Some(parts.header.clone());
    let mut on = Listeners::default();
    let root = el("section", "panel drill");
    set(&root, "data-drill", d.name);
    set(&root, "aria-labelledby", "drill-title");
    if let Some(parent) = main.parent_node() {
        let _ = parent.insert_before(&root, Some(&main));
    }

    let list = el("details", "drill-list");
    if p.list {
        set(&list, "open", "");
    }
    put(&list, &text_el("summary", "", "All drills"));
    let ol = el("ol", "");
    let mut marks = Vec::new();
    for x in drill::DRILLS {
        let li = el("li", "");
        let a = text_el("a", "", x.title);
        set(&a, "href", &format!("?drill={}", x.name));
        if x.name == d.name {
            set(&a, "aria-current", "page");
        }
        put(&li, &a);
        let _ = li.append_with_str_1(&format!(" ({})", x.level.difficulty()));
        let mark = el("span", "drill-state");
        put(&li, &mark);
        put(&ol, &li);
        marks.push((li, mark, x.name));
    }
    // Solved or attempted, from the progress kept in this browser.
    super::practice::on_change(record, move || {
        super::practice::read(record, |p| {
            for (li, mark, name) in &marks {
                let (state, words) = match p.drill_state(name) {
                    DrillState::Solved => ("solved", " ✓ solved"),
                    DrillState::Attempted => ("attempted", " · attempted"),
                    DrillState::Untried => ("untried", ""),
                };
                set(li, "data-drill-state", state);
                set_text(mark, words);
            }
        })
    });
    put(&list, &ol);
    put(&root, &list);

    let title = text_el("h2", "tour-title", &format!("Drill: {}", d.title));
    set(&title, "id", "drill-title");
    put(&root, &title);
    put(&root, &text_el("p", "tour-text", d.story.words));

    // The allowed knobs only: every other knob is locked, and not shown.
    let knobs = el("div", "drill-knobs");
    let notices = page.notices();
    for k in d.allowed.iter().flat_map(|n| knob_names(n)) {
        if let Some(k) = crate::page::knob::knob_named(&k) {
            let div = el("div", "knob");
            put(&knobs, &div);
            crate::page::knob_control::build_knob(&div, k, page, true);
            unique_ids(&div);
        }
    }
    put(&root, &knobs);
    let said = el("p", "drill-notice");
    put(&root, &said);
    crate::dom::effect(move || {
        let line = notices.with(|n| {
            n.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        });
        set_text(&said, &line);
    });

    put(&root, &text_el("h3", "drill-h", "Goals, on every seed"));
    let ul = el("ul", "drill-goals");
    let goals: Vec<Element> = d
        .goals
        .iter()
        .map(|c| {
            let li = el("li", "");
            set(&li, "data-criterion", &c.name());
            put(&ul, &li);
            li
        })
        .collect();
    put(&root, &ul);
    let grade = el("p", "drill-grade");
    set(&grade, "data-grade", "pending");
    put(&root, &grade);

    let hints = el("ol", "drill-hints");
    let more = button("drill-hint", "A hint");
    crate::dom::press_on_key("h", &more);
    set(&more, "aria-keyshortcuts", "h");
    let shown = std::rc::Rc::new(std::cell::Cell::new(0usize));
    {
        let hints = hints.clone();
        on.on(&more, "click", move |ev| {
            let n = shown.get();
            if let Some(h) = d.hints.get(n) {
                put(&hints, &text_el("li", "", h));
                shown.set(n + 1);
            }
            if n + 1 >= d.hints.len() {
                if let Some(b) = ev
                    .target()
                    .and_then(|t| wasm_bindgen::JsCast::dyn_into::<Element>(t).ok())
                {
                    set(&b, "disabled", "");
                }
            }
        });
    }
    let reasoning = text_el("p", "drill-reasoning", d.solution.words);
    set(&reasoning, "hidden", "");
    let solve = button("drill-solution", "Show the solution");
    crate::dom::press_on_key("s", &solve);
    set(&solve, "aria-keyshortcuts", "s");
    // Given up: the drill comes back for review, and a pass of the shown
    // solution is not the learner's.
    let gave_up = std::rc::Rc::new(std::cell::Cell::new(false));
    {
        let reasoning = reasoning.clone();
        let gave_up = gave_up.clone();
        on.on(&solve, "click", move |_| {
            if !gave_up.replace(true) {
                super::practice::record(record, &drill_key(d.name), Outcome::Missed);
            }
            page.act(Action::Solution(Box::new(d.solved())));
            let _ = reasoning.remove_attribute("hidden");
        });
    }
    let leave = button("drill-leave", "Open the sandbox");
    on.on(&leave, "click", move |_| p.open.set(false));
    let nav = el("div", "tour-nav");
    put(&nav, &more);
    put(&nav, &solve);
    put(&nav, &leave);
    put(&root, &nav);
    put(&root, &hints);
    put(&root, &reasoning);

    let view = std::rc::Rc::new(View {
        goals,
        grade,
        reasoning,
        _listeners: on,
    });

    // In a drill the sandbox's knobs and presets wait: only the drill's own.
    crate::dom::effect(move || {
        let open = p.open.get();
        let _ = root.toggle_attribute_with_force("hidden", !open);
        let _ = main.class_list().toggle_with_force("drilling", open);
        if let Some(h) = &header {
            let _ = h.class_list().toggle_with_force("drilling", open);
        }
    });

    // The grade over the seeds, for the scenario it was worked out for.
    let graded: Graded = Default::default();
    // Bumped when a grade comes in: the goals are drawn again.
    let news = RwSignal::new(0u64);
    // The goals, live from the run on screen; once it ends, the grade.
    crate::dom::effect(move || {
        let (ended, live): (bool, Vec<_>) = page.reading().with(|r| {
            (
                r.at_end,
                d.goals.iter().map(|c| c.check(&r.report)).collect(),
            )
        });
        let s = page.scenario().get();
        news.track();
        let grade = {
            let mut g = graded.borrow_mut();
            let have = g.1.as_ref().filter(|(at, _)| *at == s).map(|x| x.1.clone());
            if ended && have.is_none() && g.0.as_ref() != Some(&s) {
                g.0 = Some(s.clone());
                grade_in_slices(
                    d,
                    s,
                    Vec::new(),
                    graded.clone(),
                    news,
                    gave_up.clone(),
                    record,
                );
            }
            have
        };
        {
            let v = &view;
            for (i, (li, c)) in v.goals.iter().zip(&live).enumerate() {
                set(li, "data-passed", if c.passed { "true" } else { "false" });
                // Mid-run a count can still grow: "so far", and its mark only
                // once the run has ended.
                let mut line = if ended {
                    format!(
                        "{}: this run {} {}",
                        crate::page::bound_words(&d.goals[i]),
                        catalogue::lesson::shown(c.metric, c.value),
                        mark(c.passed)
                    )
                } else {
                    format!(
                        "{}: so far {}",
                        crate::page::bound_words(&d.goals[i]),
                        catalogue::lesson::shown(c.metric, c.value)
                    )
                };
                match grade.as_ref().and_then(|g| g.criteria.get(i)) {
                    Some(g) => {
                        line += &format!(
                            "; on {} seeds, worst {} {}",
                            drill::SEEDS.len(),
                            catalogue::lesson::shown(g.metric, g.value),
                            mark(g.passed)
                        );
                        set(li, "data-graded", if g.passed { "true" } else { "false" });
                        set(li, "data-value", &stampede::decimal::format_json(g.value));
                    }
                    None => {
                        let _ = li.remove_attribute("data-graded");
                    }
                }
                set_text(li, &line);
            }
            let (state, line) = match &grade {
                None if ended => ("pending", "Grading on every seed…".to_string()),
                None => ("pending", "Graded once the run ends.".to_string()),
                Some(g) if g.passed => {
                    let _ = v.reasoning.remove_attribute("hidden");
                    ("passed", format!("Passed on seeds {}.", seeds(&g.seeds)))
                }
                Some(g) => (
                    "failed",
                    format!("Not yet: a goal fails on seeds {}.", seeds(&g.seeds)),
                ),
            };
            set(&v.grade, "data-grade", state);
            set_text(&v.grade, &line);
        }
    });
}

/// The scenario being graded, and the last grade with its scenario.
type Graded = std::rc::Rc<std::cell::RefCell<(Option<Scenario>, Option<(Scenario, Grade)>)>>;

fn mark(ok: bool) -> &'static str {
    if ok {
        "✓"
    } else {
        "✗"
    }
}

fn seeds(s: &[u64]) -> String {
    s.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The page knob names a drill's allowed name stands for (`pitfalls`: all
/// four pitfall switches).
fn knob_names(n: &str) -> Vec<String> {
    if n == "pitfalls" {
        stampede::scenario::Pitfalls::NAMES
            .iter()
            .map(|p| format!("pitfall-{p}"))
            .collect()
    } else {
        vec![n.to_string()]
    }
}

/// The knob's ids, prefixed: the same knob may also sit beside a lesson.
fn unique_ids(div: &Element) {
    let Ok(all) = div.query_selector_all("[id],[for],[aria-describedby]") else {
        return;
    };
    for i in 0..all.length() {
        let Some(e) = all
            .item(i)
            .and_then(|n| wasm_bindgen::JsCast::dyn_into::<Element>(n).ok())
        else {
            continue;
        };
        for a in ["id", "for", "aria-describedby"] {
            if let Some(v) = e.get_attribute(a) {
                set(&e, a, &format!("drill-{v}"));
            }
        }
    }
}

/// Runs the seeds one after another, each a few milliseconds per task,
/// then grades them with the core's `grade_reports`, as the CLI does.
fn grade_in_slices(
    d: &'static Drill,
    s: Scenario,
    mut runs: Vec<(u64, Report)>,
    out: Graded,
    news: RwSignal<u64>,
    gave_up: std::rc::Rc<std::cell::Cell<bool>>,
    record: super::practice::Record,
) {
    let Some(&seed) = drill::SEEDS.get(runs.len()) else {
        let g = drill::grade_reports(d, &runs);
        // The opening situation graded is no attempt; a learner's own
        // scenario is, and a pass of it solves the drill (unless the
        // solution was shown first).
        if s != d.situation() && !(g.passed && gave_up.get()) {
            super::practice::record(
                record,
                &drill_key(d.name),
                if g.passed {
                    Outcome::Right
                } else {
                    Outcome::Missed
                },
            );
        }
        out.borrow_mut().1 = Some((s, g));
        news.update(|n| *n += 1);
        return;
    };
    let at = s.clone();
    crate::lesson::tour_view::run_in_slices(
        &at,
        seed,
        u64::MAX,
        Box::new(move |r| {
            runs.push((seed, r));
            grade_in_slices(d, s, runs, out, news, gave_up, record);
        }),
    );
}

#[cfg(test)]
mod tests {
    use crate::page::bound_words as goal_words;
    use catalogue::drill::DRILLS;

    #[test]
    fn every_goal_reads_in_the_pages_words() {
        for d in DRILLS {
            for c in d.goals {
                let words = goal_words(c);
                assert!(
                    !words.contains('_') && !words.contains("<=") && !words.contains(">="),
                    "{}: {words:?} for {}",
                    d.name,
                    c.name()
                );
            }
        }
        let p99 = DRILLS
            .iter()
            .flat_map(|d| d.goals)
            .find(|c| c.metric == stampede::Metric::P99Ms)
            .expect("a p99 goal");
        assert!(goal_words(p99).starts_with("p99 "), "{}", goal_words(p99));
        assert!(goal_words(p99).ends_with(" ms"), "{}", goal_words(p99));
        assert!(!goal_words(p99).contains(".0 "), "{}", goal_words(p99));
    }
}
