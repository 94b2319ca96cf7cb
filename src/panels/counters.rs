//! The numbers: the live arithmetic (instances x threads, then with each
//! defence, formula beside measurement) and every counter of the core's
//! `Report`, each carrying `data-metric="<field>"` with its plain value.

use catalogue::lesson::Proof;
use leptos::prelude::*;
use stampede::metrics::Metric;
use wasm_bindgen::JsCast;

use crate::lab::{Defence, Score};
use crate::page::action::Action;
use crate::page::{label, HEADLINE};

pub use crate::reading::Reading;

/// Every `Report` counter that is not a headline, in the core's order.
pub fn detail_metrics() -> impl Iterator<Item = Metric> {
    Metric::ALL
        .iter()
        .copied()
        .filter(|m| HEADLINE.iter().all(|c| c.metric != *m))
}

/// The number that proves the running scenario's lesson, with a line on
/// what it shows; marked `data-proof`, and warning-coloured when the lesson
/// is damage and the damage is there.
///
/// Under it, the lesson's sentence as the core words it for the run on
/// screen (`data-lesson`); while the counter's event has not happened the
/// number reads as pending (`data-pending`), not 0; and a pitfall that
/// cannot bite here says what it needs, with the way to where it does
/// (`data-needs`).
///
/// Built with plain DOM calls as soon as it is mounted, and written by one
/// effect (each reactive `view!` binding cost the wasm code of its own).
#[component]
pub fn ProofCounter() -> impl IntoView {
    let page = crate::page::use_page();
    let (reading, proof, lesson, mark) = (page.reading(), page.proof(), page.lesson(), page.mark());
    // The counter a tour step is about: outlined wherever it shows.
    let highlight = page.highlight();
    // A pitfall that cannot bite here offers the scenario where it does.
    let needs = Callback::new(move |link: &'static str| {
        let (state, _) = crate::url_state::parse(link);
        page.act(Action::Sandbox);
        page.act(Action::Solution(Box::new(state.scenario)));
    });
    let root = NodeRef::<leptos::html::Div>::new();
    crate::dom::build_now(
        move || root.get().map(Into::into),
        move |div| build_proof(&div, reading, proof, lesson, needs, highlight, mark),
    );
    view! { <div class="proof" node_ref=root></div> }
}

fn build_proof(
    div: &web_sys::Element,
    reading: crate::page::Read<Reading>,
    proof: Memo<Proof>,
    lesson: Memo<catalogue::lesson::Lesson>,
    needs: Callback<&'static str>,
    highlight: Memo<Option<Metric>>,
    mark: crate::page::Read<Option<crate::page::Mark>>,
) {
    use crate::dom::{el, put, set, set_changed, set_text, text_el, Listeners};
    let mut on = Listeners::default();
    let title = el("p", "proof-title");
    put(&title, &text_el("span", "proof-tag", "The proof"));
    let label = el("span", "proof-label");
    put(&title, &label);
    put(div, &title);
    let meaning = el("p", "proof-meaning");
    set(&meaning, "data-meaning", "");
    put(div, &meaning);
    let value = el("p", "proof-value num");
    set(&value, "data-proof", "");
    put(div, &value);
    let note = el("p", "proof-note");
    set(&note, "data-lesson", "");
    put(div, &note);
    // Put in and taken out, not hidden: each is on the page only while it
    // applies.
    let more = el("p", "proof-more");
    let a = text_el("a", "", "How fencing is done in Redis: the real scripts");
    set(&a, "href", "#fencing");
    set(&a, "data-control", "fencing");
    on.on(&a, "click", |ev| {
        ev.prevent_default();
        open_scripts();
    });
    put(&more, &a);
    let need = el("p", "proof-needs");
    set(&need, "data-needs", "");
    let need_text = el("span", "");
    put(&need, &need_text);
    let go = el("button", "");
    set(&go, "type", "button");
    on.on(&go, "click", move |_| {
        if let Some(link) = lesson.with_untracked(|l| l.needs.as_ref().map(|n| n.link)) {
            needs.run(link);
        }
    });
    put(&need, &go);

    let parts = StoredValue::new_local((
        div.clone(),
        label,
        meaning,
        value,
        note,
        more,
        need,
        need_text,
        go,
        on,
    ));
    crate::dom::effect(move || {
        let on = highlight
            .get()
            .is_some_and(|h| proof.with(|p| h == p.metric));
        parts.with_value(|p| {
            let _ = p.3.toggle_attribute_with_force("data-highlight", on);
        });
    });
    // A question's link that names the proof's counter (or none): this
    // number, brought into view once per follow.
    let marked = StoredValue::new(0u32);
    crate::dom::effect(move || {
        let metric = proof.with(|p| p.metric);
        let mine = mark.with(|m| {
            m.as_ref()
                .filter(|m| m.side.is_none() && m.metric.is_none_or(|m| m == metric))
                .map(|m| m.seq)
        });
        parts.with_value(|p| match mine {
            Some(seq) if marked.get_value() != seq => {
                marked.set_value(seq);
                crate::dom::show_marked(&p.3);
            }
            Some(_) => {}
            None => {
                let _ = p.3.class_list().remove_1("from-question");
            }
        });
    });
    crate::dom::effect(move || {
        let Proof { metric, damage, .. } = proof.get();
        let (raw, ended) = reading.with(|r| (r.text(metric).to_string(), r.at_end));
        let v = stampede::decimal::parse(&raw);
        let pending = catalogue::lesson::pending(metric, v.unwrap_or(0.0), ended);
        let hurt = damage && v.is_some_and(|v| v > 0.0);
        let meant = catalogue::lesson::meaning(metric);
        parts.with_value(
            |(div, label, meaning, value, note, more, need, need_text, go, _)| {
                let _ = div.class_list().toggle_with_force("damage", hurt);
                set_changed(label, "title", meant);
                set_text(label, crate::page::label(metric));
                set_text(meaning, meant);
                set_changed(value, "data-pending", if pending { "1" } else { "0" });
                set_changed(value, "data-damage", if damage { "1" } else { "0" });
                set_changed(value, "data-metric", metric.name());
                set_text(
                    value,
                    if pending {
                        catalogue::tour::PENDING
                    } else {
                        &raw
                    },
                );
                lesson.with(|l| {
                    set_changed(note, "data-lesson-name", l.name);
                    set_text(note, &l.sentence);
                    let fencing = matches!(l.name, "late-writer" | "short-ttl");
                    if let Some(n) = &l.needs {
                        // The text, then a space, then the button, as one line.
                        set_text(need_text, &format!("{} ", n.text));
                        set_text(go, n.action);
                    }
                    // In order: the scripts' link, then what the lesson needs.
                    if fencing != more.is_connected() || l.needs.is_some() != need.is_connected() {
                        more.remove();
                        need.remove();
                        if fencing {
                            put(div, more);
                        }
                        if l.needs.is_some() {
                            put(div, need);
                        }
                    }
                });
            },
        );
    });
}

#[component]
pub fn Counters() -> impl IntoView {
    let page = crate::page::use_page();
    let (reading, proof, mark) = (page.reading(), page.proof(), page.mark());
    // The counter a tour step is about: outlined wherever it shows. A
    // question link's counter: shown here unless the proof shows it.
    let highlight = page.highlight();
    let root = NodeRef::<leptos::html::Section>::new();
    crate::dom::build_now(
        move || root.get().map(Into::into),
        move |section| build_counters(&section, reading, proof, highlight, mark),
    );
    view! {
        <section class="panel counters" aria-labelledby="counters-title" node_ref=root>
            <Sizing reading=reading />
            <Losers reading=reading />
        </section>
    }
}

/// One counter's row: its name, its `div.metric`, its number and the list
/// it sits in.
struct CounterRow {
    metric: Metric,
    div: web_sys::Element,
    dd: web_sys::Element,
    list: usize,
}

/// The counters (each `dd` carries `data-metric`), the headline first and
/// the rest under "All counters", then the scripts: built before the
/// sizing and losers panels. A counter promoted to the proof is taken out
/// of its list, so each `data-metric` is on the page once.
fn build_counters(
    section: &web_sys::Element,
    reading: crate::page::Read<Reading>,
    proof: Memo<Proof>,
    highlight: Memo<Option<Metric>>,
    mark: crate::page::Read<Option<crate::page::Mark>>,
) {
    use crate::dom::{el, put, set, text_el};
    let first = section.first_element_child();
    let before = |e: &web_sys::Element| {
        let _ = section.insert_before(e, first.as_ref().map(|f| f.as_ref()));
    };
    let h = text_el("h2", "", "Counters");
    set(&h, "id", "counters-title");
    before(&h);
    let headline = el("dl", "headline");
    before(&headline);
    let more = el("details", "more");
    put(&more, &text_el("summary", "", "All counters"));
    let detail = el("dl", "detail");
    put(&more, &detail);
    before(&more);
    let lists = [headline, detail];
    let metrics = HEADLINE
        .iter()
        .map(|c| (c.metric, 0))
        .chain(detail_metrics().map(|m| (m, 1)));
    let rows: Vec<CounterRow> = metrics
        .map(|(metric, list)| {
            let div = el("div", "metric");
            let dt = text_el("dt", "", label(metric));
            set(&dt, "title", catalogue::lesson::meaning(metric));
            put(&div, &dt);
            let dd = el("dd", "");
            set(&dd, "data-metric", metric.name());
            put(&div, &dd);
            CounterRow {
                metric,
                div,
                dd,
                list,
            }
        })
        .collect();
    // The scripts, after the sizing and losers panels.
    put(section, &scripts());

    let rows = StoredValue::new_local((rows, lists));
    crate::dom::effect(move || {
        let h = highlight.get();
        rows.with_value(|(rows, _)| {
            for r in rows {
                let on = h == Some(r.metric);
                let _ = r.dd.toggle_attribute_with_force("data-highlight", on);
            }
        });
    });
    // A question's link that names a counter the proof does not show: its
    // row (its list opened), brought into view once per follow.
    let marked = StoredValue::new(0u32);
    crate::dom::effect(move || {
        let metric = proof.with(|p| p.metric);
        let mine = mark.with(|m| {
            m.as_ref()
                .filter(|m| m.side.is_none() && m.metric != Some(metric))
                .and_then(|m| Some((m.seq, m.metric?)))
        });
        rows.with_value(|(rows, lists)| {
            for r in rows {
                match mine {
                    Some((seq, m)) if m == r.metric && marked.get_value() != seq => {
                        marked.set_value(seq);
                        if let Some(d) = lists[r.list].parent_element().filter(|_| r.list == 1) {
                            let _ = d.set_attribute("open", "");
                        }
                        crate::dom::show_marked(&r.dd);
                    }
                    Some((_, m)) if m == r.metric => {}
                    _ => {
                        let _ = r.dd.class_list().remove_1("from-question");
                    }
                }
            }
        });
    });
    let promoted = std::cell::RefCell::new(None::<Option<Metric>>);
    crate::dom::effect(move || {
        let metric = proof.with(|p| Some(p.metric));
        rows.with_value(|(rows, lists)| {
            if promoted.replace(Some(metric)) != Some(metric) {
                for r in rows {
                    if Some(r.metric) == metric {
                        r.div.remove();
                    } else {
                        put(&lists[r.list], &r.div);
                    }
                }
            }
            reading.with(|rd| {
                for r in rows.iter().filter(|r| Some(r.metric) != metric) {
                    crate::dom::set_text(&r.dd, rd.text(r.metric));
                }
            });
        });
    });
}
/// The SLO the deadline rule starts from until the learner types one.
pub const DEFAULT_SLO_MS: u64 = 1000;

/// An SLO typed into the box: whole milliseconds from 1 to 10 minutes, or
/// a message and the default.
pub fn parse_slo(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(v) if (1..=600_000).contains(&v) => Ok(v),
        _ => Err(format!(
            "“{}” is not an SLO in whole milliseconds (1 to 600000): using {DEFAULT_SLO_MS} ms.",
            text.trim()
        )),
    }
}

/// The core's sizing rules (`catalogue::sizing`) worked out for the
/// scenario on screen, each beside what the run shows; the SLO is typed in.
#[component]
fn Sizing(reading: crate::page::Read<Reading>) -> impl IntoView {
    let root = NodeRef::<leptos::html::Details>::new();
    crate::dom::build_once(
        move || root.get().map(Into::into),
        move |details| build_sizing(&details, reading),
    );
    view! { <details class="more sizing" data-sizing-panel="" node_ref=root></details> }
}

fn build_sizing(details: &web_sys::Element, reading: crate::page::Read<Reading>) {
    use crate::dom::{el, put, set, set_text, text_el, Listeners};
    put(
        details,
        &text_el("summary", "", "Sizing the knobs for this scenario"),
    );
    let label = text_el("label", "slo", "Your latency objective (p99, ms) ");
    let input: web_sys::HtmlInputElement = el("input", "").unchecked_into();
    for (k, v) in [
        ("type", "text"),
        ("inputmode", "numeric"),
        ("data-control", "slo"),
        ("size", "7"),
    ] {
        set(&input, k, v);
    }
    input.set_value(&DEFAULT_SLO_MS.to_string());
    put(&label, &input);
    put(details, &label);
    let notice = el("p", "slo-notice");
    set(&notice, "data-note", "slo");
    set(&notice, "role", "status");
    put(details, &notice);
    let list = el("ul", "sizing-rules");
    put(details, &list);
    let slo = RwSignal::new(DEFAULT_SLO_MS);
    let mut on = Listeners::default();
    let note = notice.clone();
    on.on(&input, "change", move |ev| {
        let Some(i) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        else {
            return;
        };
        match parse_slo(&i.value()) {
            Ok(v) => {
                set_text(&note, "");
                slo.set(v);
            }
            Err(msg) => {
                set_text(&note, &msg);
                i.set_value(&DEFAULT_SLO_MS.to_string());
                slo.set(DEFAULT_SLO_MS);
            }
        }
    });
    let keep = StoredValue::new_local((list, on));
    crate::dom::effect(move || {
        let v = slo.get();
        reading.with(|r| {
            keep.with_value(|(list, _)| {
                let rules = catalogue::sizing::rules(&r.scenario, v);
                let fresh = list.child_element_count() as usize != rules.len();
                if fresh {
                    list.set_text_content(None);
                }
                for (i, rule) in rules.iter().enumerate() {
                    let li = if fresh {
                        let li = el("li", "");
                        put(&li, &el("span", "rule"));
                        put(&li, &el("span", "evidence"));
                        put(list, &li);
                        li
                    } else {
                        match list.children().item(i as u32) {
                            Some(li) => li,
                            None => continue,
                        }
                    };
                    set(&li, "data-sizing", rule.name);
                    set(&li, "data-holds", if rule.holds { "1" } else { "0" });
                    set(&li, "data-bound", &rule.bound.to_string());
                    let kids = li.children();
                    if let (Some(a), Some(b)) = (kids.item(0), kids.item(1)) {
                        set_text(&a, &rule.text);
                        set_text(
                            &b,
                            &catalogue::sizing::evidence(rule.name, &r.report, &r.scenario),
                        );
                    }
                }
            })
        })
    });
}

/// The columns of the losers' table: a `Report` counter and its heading.
const LOSER_COLUMNS: [(Metric, &str); 6] = [
    (Metric::P99Ms, "p99 ms"),
    (Metric::Recomputes, "origin calls"),
    (Metric::RedisRoundTrips, "Redis trips"),
    (Metric::StaleServed, "stale"),
    (Metric::Degraded, "de\u{ad}graded"),
    (Metric::Timeouts, "timed out"),
];

/// What the losers of the claim should do: the core's `loser_choices` for
/// the scenario on screen, each run to its end on the same seed (in slices,
/// only while the panel is open), with latency, origin load and staleness.
#[component]
fn Losers(reading: crate::page::Read<Reading>) -> impl IntoView {
    let root = NodeRef::<leptos::html::Details>::new();
    crate::dom::build_once(
        move || root.get().map(Into::into),
        move |details| build_losers(&details, reading),
    );
    view! { <details class="more losers" data-losers="" node_ref=root></details> }
}

fn build_losers(details: &web_sys::Element, reading: crate::page::Read<Reading>) {
    use crate::dom::{el, put, set, set_text, text_el, Listeners};
    put(
        details,
        &text_el("summary", "", "What should the losers do?"),
    );
    // The catalogue's words for the scenario on screen (they name the
    // stale window the "serve stale" row adds), set as the panel opens.
    let note = el("p", "losers-note");
    set(&note, "data-losers-note", "");
    put(details, &note);
    let status = el("p", "losers-status");
    set(&status, "role", "status");
    put(details, &status);
    let table = el("table", "losers-table");
    let head = el("tr", "");
    let th = text_el("th", "", "loser");
    set(&th, "scope", "col");
    put(&head, &th);
    for (_, h) in LOSER_COLUMNS {
        let th = text_el("th", "", h);
        set(&th, "scope", "col");
        put(&head, &th);
    }
    let thead = el("thead", "");
    put(&thead, &head);
    put(&table, &thead);
    let tbody = el("tbody", "");
    put(&table, &tbody);
    put(details, &table);
    let open = RwSignal::new(false);
    let mut on = Listeners::default();
    let d = details.clone();
    on.on(details, "toggle", move |_| {
        open.set(d.has_attribute("open"))
    });
    let key = Memo::new(move |_| reading.with(|r| (r.scenario.clone(), r.seed)));
    let generation = StoredValue::new_local((0u32, on));
    crate::dom::effect(move || {
        if !open.get() {
            return;
        }
        let (s, seed) = key.get();
        let gen = generation.with_value(|g| g.0) + 1;
        generation.update_value(|g| g.0 = gen);
        tbody.set_text_content(None);
        set_text(&note, &catalogue::presets::losers_note(&s));
        let choices = catalogue::presets::loser_choices(&s);
        let threads = u64::from(s.instances) * u64::from(s.threads);
        if threads > 200_000 || s.claim == stampede::scenario::ClaimMode::Off {
            set_text(
                &status,
                if threads > 200_000 {
                    "The fleet is too big to run five more copies here."
                } else {
                    "This scenario takes no claim, so nobody loses one: turn the claim on to compare."
                },
            );
            return;
        }
        set_text(&status, "running…");
        set(&status, "data-running", "1");
        let mut rows = Vec::new();
        for (label, _) in &choices {
            let tr = el("tr", "");
            set(&tr, "data-loser", label);
            let th = text_el("th", "", label);
            set(&th, "scope", "row");
            put(&tr, &th);
            for (m, _) in LOSER_COLUMNS {
                let td = text_el("td", "num", "…");
                set(&td, "data-loser-metric", m.name());
                put(&tr, &td);
            }
            put(&tbody, &tr);
            rows.push(tr);
        }
        let status = status.clone();
        run_choices(
            choices.into_iter().map(|(_, s)| s).zip(rows).collect(),
            seed,
            Box::new(move || generation.try_with_value(|g| g.0) == Some(gen)),
            Box::new(move || {
                set_text(&status, "");
                set(&status, "data-running", "0");
            }),
        );
    });
}

type Still = Box<dyn Fn() -> bool>;

/// Runs each scenario to its end a few milliseconds per task and writes its
/// row; stops as soon as `still` says the table was rebuilt.
fn run_choices(
    mut todo: Vec<(stampede::Scenario, web_sys::Element)>,
    seed: u64,
    still: Still,
    done: Box<dyn FnOnce()>,
) {
    if todo.is_empty() {
        done();
        return;
    }
    let (s, row) = todo.remove(0);
    slices(Box::new(stampede::Fleet::new(&s, seed)), move |report| {
        if !still() {
            return;
        }
        let cells = row.children();
        for (i, (m, _)) in LOSER_COLUMNS.iter().enumerate() {
            let v = if *m == Metric::P99Ms {
                stampede::metrics::one_decimal(report.get(*m))
            } else {
                report.text(*m)
            };
            if let Some(td) = cells.item(i as u32 + 1) {
                crate::dom::set_text(&td, &v);
            }
        }
        run_choices(todo, seed, still, done);
    });
}

fn slices(mut fleet: Box<stampede::Fleet>, done: impl FnOnce(stampede::Report) + 'static) {
    set_timeout(
        move || {
            let start = crate::web::wall_now();
            loop {
                if fleet.advance_to(u64::MAX, 2_000) {
                    done(fleet.report());
                    return;
                }
                if crate::web::wall_now() - start > 8.0 {
                    break;
                }
            }
            slices(fleet, done);
        },
        std::time::Duration::ZERO,
    );
}

/// The crate's own Redis scripts, read from `crates/stampede-redis` when
/// the page is built (not a copy): the claim that takes a fencing number,
/// the fenced write, and the token-checked release.
pub const SCRIPTS: [(&str, &str, &str); 3] = [
    (
        "claim_fenced.lua",
        "The claim: SET NX PX, and on a win INCR the key's fence counter. The number returned is the winner's fencing token.",
        include_str!("../../crates/stampede-redis/src/scripts/claim_fenced.lua"),
    ),
    (
        "write_fenced.lua",
        "The fenced write: refused (0) when its fence is below the one stored, so a late holder cannot put an older value over a newer one.",
        include_str!("../../crates/stampede-redis/src/scripts/write_fenced.lua"),
    ),
    (
        "release.lua",
        "The release: delete the claim only while it still holds your token (compare-and-delete).",
        include_str!("../../crates/stampede-redis/src/scripts/release.lua"),
    ),
];

/// The scripts as `stampede-redis` runs them, under `#fencing`.
fn scripts() -> web_sys::Element {
    use crate::dom::{el, put, set, text_el};
    let d = el("details", "more scripts");
    set(&d, "id", "fencing");
    put(
        &d,
        &text_el(
            "summary",
            "",
            "Fencing in Redis: the scripts stampede-redis runs",
        ),
    );
    for (file, what, text) in SCRIPTS {
        let fig = el("figure", "");
        let cap = el("figcaption", "");
        put(&cap, &text_el("code", "", file));
        let _ = cap.append_with_str_1(&format!(" — {what}"));
        put(&fig, &cap);
        let pre = el("pre", "");
        let code = text_el("code", "", text);
        set(&code, "data-script", file);
        put(&pre, &code);
        put(&fig, &pre);
        put(&d, &fig);
    }
    d
}

/// Opens the scripts and brings them into view.
fn open_scripts() {
    if let Some(d) = crate::web::document().get_element_by_id("fencing") {
        let _ = d.set_attribute("open", "");
        d.scroll_into_view();
    }
}

fn recomputes(n: u64) -> String {
    if n == 1 {
        "1 recompute".to_string()
    } else {
        format!("{n} recomputes")
    }
}

/// Bar width (percent) of `value` against `max` on a log scale, so 1 and
/// 8,000 both show.
pub fn log_width(value: u64, max: u64) -> f64 {
    if max == 0 {
        return 0.0;
    }
    let w = ((value as f64) + 1.0).ln() / ((max as f64) + 1.0).ln() * 100.0;
    w.clamp(0.0, 100.0)
}

struct Row {
    defence: Defence,
    title: &'static str,
    /// What the row's defence does, in one line (the row's tooltip).
    help: &'static str,
    formula: &'static str,
    predicted: fn(&Reading) -> String,
    metric: &'static str,
}

const ROWS: [Row; 3] = [
    Row {
        defence: Defence::None,
        title: "none",
        help: "No defence: every thread that misses recomputes.",
        formula: "I × T",
        predicted: |r| r.naive().to_string(),
        metric: "measured_none",
    },
    Row {
        defence: Defence::Singleflight,
        title: "singleflight",
        help: "Singleflight: the threads of one instance share one flight, one recompute per instance.",
        formula: "I",
        predicted: |r| r.instances.to_string(),
        metric: "measured_singleflight",
    },
    Row {
        defence: Defence::Both,
        title: "+ claim",
        help: "Singleflight and the Redis claim: one instance recomputes for the whole fleet.",
        formula: "≈ 1",
        predicted: |_| "1".to_string(),
        metric: "measured_both",
    },
];

/// What a row's requests got, in a few words: "8000 answered",
/// "7960 answered · 40 failed". `ended`: the animated run is over, so a
/// row's run stopped at the same moment with requests still waiting says so.
pub fn outcome_text(s: &Score, ended: bool) -> String {
    let mut parts = vec![format!("{} answered", s.answered)];
    if s.degraded > 0 {
        parts.push(format!("{} degraded", s.degraded));
    }
    if s.failed > 0 {
        parts.push(format!("{} failed", s.failed));
    }
    if s.waiting > 0 && ended {
        parts.push(format!("{} still waiting when your run ended", s.waiting));
    } else if s.waiting > 0 {
        parts.push(format!("{} waiting", s.waiting));
    }
    parts.join(" · ")
}

/// Why the one-burst formulas do not apply to this workload, if they do not.
pub fn formula_caveat(r: &Reading) -> Option<&'static str> {
    if r.burst {
        None
    } else if r.cold && r.scenario.key_skew > 0.0 {
        // Skewed popularity: the hot keys repeat, so not every miss is new.
        Some("n/a: a cold start over many keys, a few of them hot")
    } else if r.cold {
        Some("n/a: every miss is a new key")
    } else {
        Some("n/a: keys expire again and again")
    }
}

/// The lesson in three lines: the formula, what the simulation measures,
/// and what the requests got; the best row follows the core's declared
/// objective (`stampede::metrics::OBJECTIVE`), and a row behind it says
/// why. A fixed table of numbers
/// rewritten every frame, so it is built once with plain DOM calls (see
/// `crate::dom`) and an effect writes only what changed.
#[component]
pub fn Arithmetic() -> impl IntoView {
    let page = crate::page::use_page();
    let reading = page.reading();
    // No tour step is about a row's measured number (a step's counter is a
    // `Report` field, a row's a run of its own): nothing here is outlined.
    let root = NodeRef::<leptos::html::Section>::new();
    crate::dom::build_once(
        move || root.get().map(Into::into),
        move |section| {
            let table = StoredValue::new_local(ArithDom::build(&section));
            crate::dom::effect(move || reading.with(|r| table.with_value(|t| t.write(r))));
        },
    );
    view! { <section class="panel arithmetic" aria-labelledby="arith-title" node_ref=root></section> }
}

/// A row's score: the animated run for the current defence, the comparison
/// run for the others (none while it lags behind the clock).
fn score_of(r: &Reading, idx: usize, d: Defence) -> Option<Score> {
    if r.defence == Some(d) {
        Some(r.score)
    } else if r.compared_behind {
        None
    } else {
        r.scores[idx]
    }
}

struct ArithRow {
    tr: web_sys::Element,
    badge: web_sys::Element,
    formula: web_sys::Element,
    measured: web_sys::Element,
    got: web_sys::Element,
    bar: web_sys::HtmlElement,
}

struct ArithDom {
    instances: web_sys::Element,
    threads: web_sys::Element,
    naive: web_sys::Element,
    rows: Vec<ArithRow>,
    note: web_sys::Element,
}

impl ArithDom {
    fn build(section: &web_sys::Element) -> ArithDom {
        use crate::dom::{el, put, set, text_el};
        let h = text_el("h2", "", "The arithmetic");
        set(&h, "id", "arith-title");
        put(section, &h);
        let formula = el("p", "formula");
        let instances = el("span", "num");
        let threads = el("span", "num");
        let naive = el("strong", "num");
        set(&naive, "data-metric", "naive");
        put(&formula, &instances);
        let _ = formula.append_with_str_1(" instances × ");
        put(&formula, &threads);
        let _ = formula.append_with_str_1(" threads = ");
        put(&formula, &naive);
        let _ = formula.append_with_str_1(" recomputes with no defence");
        put(section, &formula);

        let table = el("table", "arith");
        let cols = el("colgroup", "");
        for c in ["c-defence", "c-formula", "c-measured", "c-bar"] {
            put(&cols, &el("col", c));
        }
        put(&table, &cols);
        let head = el("tr", "");
        for h in ["defence", "formula", "measured"] {
            let th = text_el("th", "", h);
            set(&th, "scope", "col");
            put(&head, &th);
        }
        let th = el("th", "");
        set(&th, "scope", "col");
        put(&th, &text_el("span", "sr-only", "bar, log scale"));
        put(&head, &th);
        let thead = el("thead", "");
        put(&thead, &head);
        put(&table, &thead);
        let tbody = el("tbody", "");
        let rows = ROWS
            .iter()
            .map(|row| {
                let tr = el("tr", "");
                set(&tr, "data-row", row.metric);
                let th = text_el("th", "", row.title);
                set(&th, "scope", "row");
                set(&th, "title", row.help);
                let badge = text_el("span", "badge", " best");
                put(&th, &badge);
                put(&tr, &th);
                let formula = el("td", "formula-cell");
                put(&tr, &formula);
                let cell = el("td", "measured");
                let measured = el("span", "num");
                set(&measured, "data-metric", row.metric);
                let got = el("span", "got");
                set(&got, "data-outcome", row.metric);
                put(&cell, &measured);
                put(&cell, &got);
                put(&tr, &cell);
                let bar_cell = el("td", "");
                set(&bar_cell, "aria-hidden", "true");
                let bar = el("span", "bar");
                put(&bar_cell, &bar);
                put(&tr, &bar_cell);
                put(&tbody, &tr);
                ArithRow {
                    tr,
                    badge,
                    formula,
                    measured,
                    got,
                    bar: bar.unchecked_into(),
                }
            })
            .collect();
        put(&table, &tbody);
        put(section, &table);
        let note = el("p", "arith-note");
        put(section, &note);
        ArithDom {
            instances,
            threads,
            naive,
            rows,
            note,
        }
    }

    fn write(&self, r: &Reading) {
        use crate::dom::{set, set_text};
        let naive = r.naive();
        set_text(&self.instances, &r.instances.to_string());
        set_text(&self.threads, &r.threads.to_string());
        set_text(&self.naive, &naive.to_string());
        let scores: Vec<Option<Score>> = Defence::ALL
            .iter()
            .enumerate()
            .map(|(i, d)| score_of(r, i, *d))
            .collect();
        // Only once every row is measured to the same time.
        let best = if scores.iter().all(Option::is_some) {
            Score::best(&scores)
        } else {
            None
        };
        let caveat = formula_caveat(r);
        for (row, dom) in ROWS.iter().zip(&self.rows) {
            let idx = Defence::ALL
                .iter()
                .position(|x| *x == row.defence)
                .unwrap_or(0);
            let score = scores[idx];
            let is_best = best == Some(idx);
            let classes = dom.tr.class_list();
            let _ = classes.toggle_with_force("current", r.defence == Some(row.defence));
            let _ = classes.toggle_with_force("failing", score.is_some_and(|s| s.failing()));
            let _ = classes.toggle_with_force("best", is_best);
            set(&dom.tr, "data-best", if is_best { "1" } else { "0" });
            let _ = dom.badge.toggle_attribute_with_force("hidden", !is_best);
            // Mid-run, a best row is the best so far.
            set_text(&dom.badge, if r.at_end { " best" } else { " best so far" });
            let formula = match caveat {
                Some(why) => why.to_string(),
                None => format!("{} {}", row.formula, (row.predicted)(r)),
            };
            if dom.formula.get_attribute("data-text").as_deref() != Some(formula.as_str()) {
                set(&dom.formula, "data-text", &formula);
                dom.formula.set_text_content(None);
                match caveat {
                    Some(why) => {
                        crate::dom::put(&dom.formula, &crate::dom::text_el("span", "caveat", why))
                    }
                    None => {
                        crate::dom::put(
                            &dom.formula,
                            &crate::dom::text_el("span", "f", row.formula),
                        );
                        crate::dom::put(
                            &dom.formula,
                            &crate::dom::text_el("span", "num", &(row.predicted)(r)),
                        );
                    }
                }
            }
            let measured = score.map(|s| s.recomputes);
            let behind = r.compared_behind && r.scores[idx].is_some();
            set_text(
                &dom.measured,
                &match measured {
                    Some(m) => m.to_string(),
                    None if behind => "…".to_string(),
                    None => "—".to_string(),
                },
            );
            // A row that is not the best says where it falls behind, by
            // the core's objective.
            let why = match (score, best.and_then(|b| scores[b])) {
                (Some(s), Some(b)) if !is_best => s.behind_the_best(&b),
                _ => None,
            };
            set_text(
                &dom.got,
                &score
                    .map(|s| {
                        let got = outcome_text(&s, r.at_end && !r.compared_behind);
                        match &why {
                            Some(w) => format!("{got} · {w}"),
                            None => got,
                        }
                    })
                    .unwrap_or_default(),
            );
            let width = format!(
                "{}%",
                stampede::metrics::one_decimal(log_width(measured.unwrap_or(0), naive).max(0.8))
            );
            let _ = dom.bar.style().set_property("width", &width);
        }
        set_text(
            &self.note,
            &match (r.defence, r.scores[0].is_some()) {
                (Some(_), true) => format!("Your settings are the marked row; the other rows run the same fleet and seed beside it. Under each count, what the requests got. {} Bars use a log scale, so 1 and 8000 both show.", stampede::metrics::OBJECTIVE),
                (None, true) => format!("Your settings measure {}; the rows run the same fleet and seed with each defence.", recomputes(r.recomputes)),
                (_, false) => format!("Your settings measure {}. The fleet is too big to run three more copies beside it: switch the defences to measure each row.", recomputes(r.recomputes)),
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_counter_is_shown_once_with_words() {
        let mut shown: Vec<Metric> = HEADLINE.iter().map(|c| c.metric).collect();
        shown.extend(detail_metrics());
        shown.sort();
        let mut all = Metric::ALL.to_vec();
        all.sort();
        assert_eq!(shown, all);
        // A person reads words: no counter shows as its field name.
        for m in Metric::ALL {
            let l = label(*m);
            assert!(!l.is_empty() && !l.contains('_'), "{m:?}: {l:?}");
        }
    }

    /// A frame's counters are read by `Metric`: each is the report's own
    /// text for that counter, over runs of many seeds.
    #[test]
    fn a_reading_gives_each_counter_by_its_metric() {
        let (s, _, _) = stampede::Scenario::from_query("preset=claim&instances=3&threads=40");
        for seed in 0..24 {
            let report = stampede::Fleet::new(&s, seed).run();
            let r = Reading {
                fields: report.fields(),
                ..Reading::default()
            };
            for m in Metric::ALL {
                assert_eq!(r.text(*m), report.text(*m), "seed {seed} {m:?}");
            }
        }
        assert_eq!(Reading::default().text(Metric::Hits), "");
    }

    #[test]
    fn an_slo_is_read_or_refused_with_a_default() {
        assert_eq!(parse_slo(" 250 "), Ok(250));
        for bad in ["", "0", "-5", "1.5", "abc", "600001"] {
            let e = parse_slo(bad).unwrap_err();
            assert!(e.contains("using 1000 ms"), "{bad}: {e}");
        }
    }

    #[test]
    fn the_scripts_are_the_crates_own() {
        for (file, _, text) in SCRIPTS {
            let path = format!(
                "{}/crates/stampede-redis/src/scripts/{file}",
                env!("CARGO_MANIFEST_DIR")
            );
            if let Ok(on_disk) = std::fs::read_to_string(&path) {
                assert_eq!(text, on_disk, "{file}");
            }
            assert!(text.contains("redis.call"), "{file}");
        }
    }

    /// A cold start with skewed keys repeats its hot keys: its caveat
    /// does not say every miss is a new key.
    #[test]
    fn a_skewed_cold_start_is_not_every_miss_a_new_key() {
        let (s, _, _) = stampede::Scenario::from_query("preset=cold-skew");
        let skewed = Reading {
            cold: true,
            scenario: std::sync::Arc::new(s),
            ..Reading::default()
        };
        assert_eq!(
            formula_caveat(&skewed),
            Some("n/a: a cold start over many keys, a few of them hot")
        );
        let (s, _, _) = stampede::Scenario::from_query("preset=cold");
        let uniform = Reading {
            cold: true,
            scenario: std::sync::Arc::new(s),
            ..Reading::default()
        };
        assert_eq!(
            formula_caveat(&uniform),
            Some("n/a: every miss is a new key")
        );
    }

    #[test]
    fn grouping_and_bars() {
        assert_eq!(recomputes(1), "1 recompute");
        assert_eq!(
            recomputes(8000),
            "8000 recomputes",
            "digits as the counters show them"
        );
        assert_eq!(log_width(8000, 8000), 100.0);
        assert_eq!(log_width(0, 8000), 0.0);
        assert!(log_width(40, 8000) > log_width(1, 8000));
    }
}
