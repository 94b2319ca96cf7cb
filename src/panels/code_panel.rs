//! The read path as pseudo-code, each line with how many times the fleet has
//! run it so far (counted from the simulation's events), so the numbers in
//! the arithmetic can be traced to the line that produced them. "Write it
//! in" shows the same path in a language instead (`catalogue::examples`,
//! the files of `examples/` as they are), with the followed thread's step
//! lit in that code too.

use std::ops::Range;

use catalogue::examples::{self, Example};
use catalogue::walkthrough::Walk;
use catalogue::walkthrough::{Level, Who};
use leptos::prelude::*;
use stampede::read_path::Place;
use stampede::sim::EventKind;

use crate::page::action::{language_of, Action};
use crate::page::kept::Kept;
use crate::page::{Follow, Page};
use crate::reading::Reading;

pub use crate::lab::{count, Tally, KINDS};

/// One line of the listing: indentation, code, and what to count beside it.
pub struct Line {
    pub indent: u8,
    pub code: &'static str,
    pub counts: &'static [(EventKind, &'static str)],
}

const fn line(
    indent: u8,
    code: &'static str,
    counts: &'static [(EventKind, &'static str)],
) -> Line {
    Line {
        indent,
        code,
        counts,
    }
}

use EventKind as E;

/// Singleflight outside, claim inside: the order the lessons recommend.
pub const LISTING: [Line; 13] = [
    line(0, "handle(key):", &[(E::Arrive, "requests")]),
    line(1, "v = GET key", &[(E::CacheGet, "GETs")]),
    line(1, "if v is fresh: return v", &[]),
    line(
        1,
        "flight = singleflight(key)",
        &[(E::Lead, "lead"), (E::Follow, "follow")],
    ),
    line(
        1,
        "if a follower: wait for the result, until my deadline",
        &[(E::Settle, "settled")],
    ),
    line(
        1,
        "SET lock:key token NX PX ttl",
        &[(E::Claim, "attempts"), (E::ClaimWon, "won")],
    ),
    line(1, "if won:", &[]),
    line(
        2,
        "v = GET key  # once more: written meanwhile? return it",
        &[],
    ),
    line(
        2,
        "v = origin.recompute(key)  # runs on past my deadline",
        &[
            (E::RecomputeStart, "started"),
            (E::RecomputeEnd, "done"),
            (E::OriginTimeout, "timed out"),
        ],
    ),
    line(2, "SET key v EX ttl", &[(E::CacheSet, "SETs")]),
    line(
        2,
        "release lock:key if it still holds token",
        &[(E::Release, "releases")],
    ),
    line(
        1,
        "else: poll (claim it if it came free), serve stale or degrade",
        &[(E::ClaimLost, "lost"), (E::Poll, "polls")],
    ),
    line(
        1,
        "answer every waiter with the same v",
        &[(E::Respond, "answers")],
    ),
];

/// The picker's choices: (value, label, what to follow for a fleet of
/// `threads` threads per instance).
pub const FOLLOW_CHOICES: [(&str, &str); 4] = [
    ("nobody", "nobody"),
    ("holder", "the claim holder"),
    ("office3", "a follower in office 3"),
    ("office1", "the first thread of office 1"),
];

/// The picker's value as whom to follow: the core's reading of it (the
/// CLI's `--follow` takes the same values).
pub fn follow_of(value: &str, threads: u32) -> Follow {
    match catalogue::walkthrough::who(value, threads) {
        Some(Who::Holder) => Follow::ClaimHolder(None),
        Some(Who::Thread(g)) => Follow::Thread(g),
        None => Follow::Nobody,
    }
}

/// What the picker shows for `follow` in a fleet of `threads` threads per
/// instance: the value of the choice that says whom it follows, and, for a
/// thread none of [`FOLLOW_CHOICES`] names (one clicked on the fleet), the
/// label of the option to add for it (its value is the thread's global
/// index, which [`follow_of`] reads back).
pub fn picker_of(follow: Follow, threads: u32) -> (String, Option<String>) {
    let g = match follow {
        Follow::Nobody => return ("nobody".to_string(), None),
        Follow::ClaimHolder(_) => return ("holder".to_string(), None),
        Follow::Thread(g) => g,
    };
    let named = FOLLOW_CHOICES
        .iter()
        .find(|(v, _)| follow_of(v, threads) == follow);
    match named {
        Some((v, _)) => (v.to_string(), None),
        None => {
            let t = threads.max(1);
            (
                g.to_string(),
                Some(format!("thread {} of office {}", g % t + 1, g / t + 1)),
            )
        }
    }
}

/// The listing line a thread is on, from where the core says it is on the
/// read path (`read_path::Place`, kept from the events it logged).
pub fn line_of(place: Place) -> Option<usize> {
    // The listing's first line is `handle(key):`, then the core's lines in
    // order; a crashed request died with its thread: no line.
    match place {
        Place::Arrived => Some(0),
        p => catalogue::walkthrough::LINES
            .iter()
            .position(|l| *l == p)
            .map(|i| i + 1),
    }
}

/// What the caption says about the followed thread: who it is, what it is
/// doing, and, if it died holding the claim, when, and when the dead claim
/// expires (the timeline's own marker), from the run on screen.
pub fn caption(r: &Reading) -> String {
    let Some((g, a, place, crashed)) = r.followed else {
        return String::new();
    };
    let t = r.threads.max(1);
    let who = format!("Thread {} of office {}", g % t + 1, g / t + 1);
    let Some(at) = crashed else {
        return format!("{who}: {}", crate::palette::look_of(a).label);
    };
    let when = crate::clock::now_ms_text(at);
    let expiry = r
        .markers
        .iter()
        .find(|(m, what)| *m >= at && *what == "dead claim expires")
        .map(|(m, _)| *m);
    let claim = match expiry {
        Some(e) if r.now >= e => format!(
            "its dead claim expired at {} ms, and the claim could be taken again",
            crate::clock::now_ms_text(e)
        ),
        Some(e) => format!(
            "its claim stays in Redis until its TTL runs out at {} ms: until then nobody else can take it",
            crate::clock::now_ms_text(e)
        ),
        None => "its claim stays in Redis until its TTL runs out: until then nobody else can take it"
            .to_string(),
    };
    let now = if place == Place::Crashed {
        String::new()
    } else {
        format!(" Now: {}.", crate::palette::look_of(a).label)
    };
    format!("{who} won the claim and crashed at {when} ms; {claim}.{now}")
}

/// "8000 GETs", "1 lead · 39 follow".
pub fn counts_text(t: &Tally, l: &Line) -> String {
    l.counts
        .iter()
        .map(|(k, label)| format!("{} {label}", count(t, *k)))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The picker's choices: (name, label), the card first.
fn choices() -> impl Iterator<Item = (&'static str, &'static str)> {
    std::iter::once(("card", "Card")).chain(examples::EXAMPLES.iter().map(|e| (e.name, e.label)))
}

/// The lines (from 0) of `e` that light up while the followed thread is on
/// the listing's line `here`: the step's marked lines, none where the code
/// leaves the step out or nobody is followed.
pub fn lit(e: &Example, here: Option<usize>) -> Option<Range<usize>> {
    here.and_then(|step| examples::lines(e, step))
}

/// What the line over the code says about the followed thread's step in
/// `e`: which card line, where it is in this code (or why it is not), and
/// its counts so far.
pub fn step_text(e: &Example, here: Option<usize>, t: &Tally) -> String {
    let Some(step) = here.filter(|s| *s < LISTING.len()) else {
        return format!(
            "Follow a thread (above): the card line it is on lights up here, in {}.",
            e.label
        );
    };
    let l = &LISTING[step];
    let card = format!("Card line {}, {}", step + 1, l.code);
    let counts = counts_text(t, l);
    let counts = if counts.is_empty() {
        String::new()
    } else {
        format!(" ({counts})")
    };
    match (lit(e, here), examples::absent(e, step)) {
        (Some(r), _) if r.len() == 1 => format!("{card}: line {}{counts}.", r.start + 1),
        (Some(r), _) => format!("{card}: lines {}–{}{counts}.", r.start + 1, r.end),
        (None, Some(why)) => format!("{card}: not in this code. {why}"),
        (None, None) => format!("{card}: not marked in this code."),
    }
}

/// The chosen example's file, each line a span (the text is the file's, byte
/// for byte), the followed thread's step lit.
fn source_view(
    e: &'static Example,
    here: Memo<Option<usize>>,
    reading: crate::page::Read<Reading>,
) -> impl IntoView {
    let lit_lines = Memo::new(move |_| lit(e, here.get()));
    let n = e.text.lines().count();
    let lines = e
        .text
        .split_inclusive('\n')
        .enumerate()
        .map(|(i, l)| {
            let on = move || lit_lines.with(|r| r.as_ref().is_some_and(|r| r.contains(&i)));
            view! { <span class="ln" class:here=on data-lit=move || on().then_some("")>{l}</span> }
        })
        .collect_view();
    view! {
        <p class="source-file">
            <code>{e.path}</code>
            {format!(", {n} lines as they are, tested on a real Redis (make examples). Its card N comments mark the card's lines.")}
        </p>
        <p class="source-step" data-source-step>
            {move || reading.with(|r| step_text(e, here.get(), &r.tally))}
        </p>
        <pre class="source" tabindex="0" aria-label=format!("{}: {}", e.label, e.path)>
            <code data-source=e.name>{lines}</code>
        </pre>
    }
}

#[component]
pub fn CodePanel(follow: RwSignal<Follow>, hold: RwSignal<Option<u64>>) -> impl IntoView {
    let page = crate::page::use_page();
    let (reading, language) = (page.reading(), page.language());
    let showing_code = page.showing_code();
    // The listing's line the followed thread is on.
    let here = Memo::new(move |_| reading.with(|r| r.followed.and_then(|(_, _, p, _)| line_of(p))));
    let panel = NodeRef::<leptos::html::Section>::new();
    // "Write it yourself" on one's own, not yet answered: the card and the
    // code stay hidden (style/code.css).
    let assembling = page.assembling();
    let hides_code = move || assembling.with(|st| st.as_ref().is_some_and(|s| s.hides_code()));
    // The lit line scrolled into its box (never the page): on a new line,
    // another language, or the code shown again in the fleet's place.
    let mut was_shown = false;
    crate::dom::effect(move || {
        here.track();
        language.track();
        let shown = showing_code.get();
        if let Some(body) = crate::web::document().body() {
            let _ = body.class_list().toggle_with_force("showing-code", shown);
        }
        // The Code tab just picked: the panel to the top of the phone's
        // screen, in the fleet's place.
        let picked = shown && !was_shown;
        was_shown = shown;
        // Once the lines are lit (their own effects, this task).
        if let Some(p) = panel.get_untracked() {
            let p: web_sys::Element = p.into();
            crate::dom::task(Box::new(move || {
                if picked {
                    p.scroll_into_view_with_bool(true);
                }
                scroll_to_lit(&p);
            }));
        }
    });
    // Following a thread: the picker and the line it is on, with plain DOM
    // calls (see `crate::dom`).
    let root = NodeRef::<leptos::html::Div>::new();
    crate::dom::build_once(
        move || root.get().map(Into::into),
        move |div| {
            build_follow(&div, reading, follow);
            build_walk(
                &div,
                Walker {
                    reading,
                    follow,
                    page,
                    hold,
                },
            );
        },
    );
    let tab = move |code: bool, label: &'static str| {
        view! {
            <button
                type="button"
                role="tab"
                data-code-tab=if code { "code" } else { "fleet" }
                aria-selected=move || (showing_code.get() == code).to_string()
                on:click=move |_| {
                    page.act(Action::ShowCode(code));
                }
            >
                {label}
            </button>
        }
    };
    view! {
        // A phone: the fleet or the code, one at a time (style/code.css).
        <div class="code-tabs" role="tablist" aria-label="Show the fleet or the code">
            {tab(false, "Fleet")}
            {tab(true, "Code")}
        </div>
        <section
            class="panel code"
            data-code-panel
            aria-labelledby="code-title"
            node_ref=panel
            data-hides-code=move || hides_code().then_some("")
        >
            <h2 id="code-title">"The read path, counted"</h2>
            <p class="code-hidden" hidden=move || !hides_code()>
                "Hidden while you write it on your own: run your read path through the storms (Write it yourself, above) and the card and the code come back."
            </p>
            <div class="follow" node_ref=root></div>
            <fieldset class="write-it" data-write-it>
                <legend>"Write it in"</legend>
                <div class="choices">
                    {choices()
                        .map(|(name, label)| {
                            let picked = move || language.get().unwrap_or("card") == name;
                            let pick = move |_| {
                                let l = language_of(name).flatten();
                                page.act(Action::Language(l));
                            };
                            view! {
                                <label>
                                    <input type="radio" name="write-it" value=name prop:checked=picked on:change=pick />
                                    <span>{label}</span>
                                </label>
                            }
                        })
                        .collect_view()}
                </div>
            </fieldset>
            <ol class="listing" tabindex="0" aria-label="The read path, line by line" hidden=move || language.get().is_some()>
                {LISTING
                    .iter()
                    .map(|l| {
                        let busy = move || reading.with(|r| l.counts.iter().any(|(k, _)| count(&r.tally, *k) > 0));
                        view! {
                            <li class:busy=busy style:--indent=l.indent.to_string()>
                                <code>{l.code}</code>
                                <span class="line-count">{move || reading.with(|r| counts_text(&r.tally, l))}</span>
                            </li>
                        }
                    })
                    .collect_view()}
            </ol>
            {move || {
                language.get().and_then(examples::example).map(|e| source_view(e, here, reading))
            }}
            <p class="code-note" hidden=move || language.get().is_some()>
                "Counted since t = 0 from the simulation's events. With the claim outside singleflight, the claim lines run before the flight; without singleflight every thread leads its own."
            </p>
        </section>
    }
}

/// Scrolls the box holding the lit line (the code, or the card's listing
/// where it scrolls) so that the line is in view, a quarter down.
fn scroll_to_lit(panel: &web_sys::Element) {
    use wasm_bindgen::JsCast;
    let lit = panel
        .query_selector(":is(pre.source, .listing:not([hidden])) [data-lit]")
        .ok()
        .flatten()
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
    let boxed = lit.as_ref().and_then(|l| {
        l.closest("pre.source, .listing")
            .ok()
            .flatten()
            .and_then(|b| b.dyn_into::<web_sys::HtmlElement>().ok())
    });
    let (Some(line), Some(b)) = (lit, boxed) else {
        return;
    };
    // The lit block: the line and the lit lines after it.
    let mut bottom = line.offset_top() + line.offset_height();
    let mut next = line.next_element_sibling();
    while let Some(n) = next.filter(|n| n.has_attribute("data-lit")) {
        if let Some(h) = n.dyn_ref::<web_sys::HtmlElement>() {
            bottom = h.offset_top() + h.offset_height();
        }
        next = n.next_element_sibling();
    }
    // Offsets count from the box's top: both boxes are positioned.
    let top = line.offset_top();
    let h = b.client_height();
    if top < b.scroll_top() || bottom > b.scroll_top() + h {
        b.set_scroll_top(top - h / 4);
    }
}

fn build_follow(
    div: &web_sys::Element,
    reading: crate::page::Read<Reading>,
    follow: RwSignal<Follow>,
) {
    use crate::dom::{el, put, set, set_text, text_el, Listeners};
    use wasm_bindgen::JsCast;
    let label = el("label", "");
    let _ = label.append_with_str_1("Follow ");
    let select = el("select", "");
    set(&select, "data-control", "follow");
    for (v, l) in FOLLOW_CHOICES {
        let o = text_el("option", "", l);
        set(&o, "value", v);
        put(&select, &o);
    }
    let mut on = Listeners::default();
    on.on(&select, "change", move |ev| {
        if let Some(s) = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::HtmlSelectElement>().ok())
        {
            let threads = reading.with_untracked(|r| r.threads);
            follow.set(follow_of(&s.value(), threads));
        }
    });
    put(&label, &select);
    let _ = label.append_with_str_1(" or click a thread in the fleet");
    put(div, &label);
    // The picker says whom the fleet follows, however it was chosen: a
    // thread clicked on the fleet gets an option of its own; the claim
    // holder stays "the claim holder" once its thread is known.
    let picker = StoredValue::new_local(select.clone());
    crate::dom::effect(move || {
        let f = follow.get();
        let threads = reading.with_untracked(|r| r.threads);
        let (value, extra) = picker_of(f, threads);
        picker.with_value(|select| {
            if let Ok(Some(old)) = select.query_selector("option[data-clicked]") {
                old.remove();
            }
            if let Some(l) = extra {
                let o = text_el("option", "", &l);
                set(&o, "value", &value);
                set(&o, "data-clicked", "");
                put(select, &o);
            }
            if let Some(s) = select.dyn_ref::<web_sys::HtmlSelectElement>() {
                if s.value() != value {
                    s.set_value(&value);
                }
            }
        });
    });
    // One event of the followed thread at a time (the clock goes to its
    // next event and pauses there).
    let step = crate::dom::button("thread-step", "Step this thread");
    step.set_class_name("thread-step");
    set(
        &step,
        "title",
        "Move the clock to the followed thread's next event",
    );
    let page = crate::page::use_page();
    on.on(&step, "click", move |_| {
        if let Some((g, ..)) = reading.with_untracked(|r| r.followed) {
            page.act(crate::page::action::Action::Transport(
                crate::page::Command::ThreadStep(g),
            ));
        }
    });
    put(div, &step);
    let said = el("p", "followed");
    set(&said, "data-followed", "");
    put(div, &said);
    let parts = StoredValue::new_local((div.clone(), said, on, step));
    crate::dom::effect(move || {
        reading.with(|r| {
            parts.with_value(|(div, said, _, step)| {
                let _ = step.toggle_attribute_with_force("disabled", r.followed.is_none());
                let here = r.followed.and_then(|(_, _, p, _)| line_of(p));
                // Presenter mode puts the listing beside the fleet while a
                // thread is followed (style/presenter.css).
                let following = r.followed.is_some();
                if div.class_list().contains("on") != following {
                    let _ = div.class_list().toggle_with_force("on", following);
                    if let Some(b) = crate::web::document().body() {
                        let _ = b.class_list().toggle_with_force("following", following);
                    }
                }
                let text = caption(r);
                set_text(said, &text);
                let lines = div
                    .parent_element()
                    .and_then(|s| s.query_selector_all(".listing > li").ok());
                if let Some(lines) = lines {
                    for i in 0..lines.length() {
                        if let Some(li) = lines
                            .item(i)
                            .and_then(|n| n.dyn_into::<web_sys::Element>().ok())
                        {
                            let lit = here == Some(i as usize);
                            let _ = li.class_list().toggle_with_force("here", lit);
                            let _ = li.toggle_attribute_with_force("data-lit", lit);
                        }
                    }
                }
            })
        })
    });
}

/// The signals the walk-through reads and drives.
#[derive(Clone, Copy)]
struct Walker {
    reading: crate::page::Read<Reading>,
    follow: RwSignal<Follow>,
    page: Page,
    /// Where playback stops: just before the followed thread's answering event.
    hold: RwSignal<Option<u64>>,
}

/// The walk-through of the run on screen: the core's questions for the
/// followed thread, which have been answered, which one is asked now.
#[derive(Default)]
struct WalkState {
    of: Option<(std::sync::Arc<stampede::Scenario>, u64, Who, Level)>,
    walk: Walk,
    done: Vec<bool>,
    shown: Option<usize>,
    /// The last pick's feedback, and whether it was right.
    said: Option<(String, bool)>,
    /// The question `said` answers (a later question's feedback is the
    /// previous one's until a pick: marked as the last answer).
    said_of: Option<usize>,
}

struct WalkView {
    root: web_sys::Element,
    question: web_sys::Element,
    options: web_sys::Element,
    show: web_sys::Element,
    feedback: web_sys::Element,
}

fn stored_level() -> Level {
    Kept::WalkLevel
        .get()
        .and_then(|v| Level::parse(&v))
        .unwrap_or_default()
}

/// The walk-through's level picker, at `level`, put in `div`.
fn level_picker(div: &web_sys::Element, level: Level) -> web_sys::Element {
    use crate::dom::{el, put, set, text_el};
    let label = el("label", "walk-level");
    let _ = label.append_with_str_1("Walk-through ");
    let select = el("select", "");
    set(&select, "data-walk-level", "");
    for l in Level::ALL {
        let o = text_el("option", "", l.label());
        set(&o, "value", l.name());
        if l == level {
            set(&o, "selected", "");
        }
        put(&select, &o);
    }
    put(&label, &select);
    put(div, &label);
    select
}

/// The level just picked, remembered.
fn picked(ev: &web_sys::Event) -> Option<Level> {
    use wasm_bindgen::JsCast;
    let s = ev.target()?.dyn_into::<web_sys::HtmlSelectElement>().ok()?;
    let l = Level::parse(&s.value()).unwrap_or_default();
    Kept::WalkLevel.set(l.name());
    Some(l)
}

fn build_walk(div: &web_sys::Element, w: Walker) {
    use crate::dom::{button, el, put, set, Listeners};
    use wasm_bindgen::JsCast;
    let level = RwSignal::new(stored_level());
    let select = level_picker(div, level.get_untracked());
    let root = el("div", "walk");
    set(&root, "data-walk", "");
    set(&root, "hidden", "");
    let question = el("p", "walk-question");
    set(&question, "data-walk-question", "");
    let options = el("div", "walk-options");
    let show = button("", "Show me");
    let _ = show.remove_attribute("data-control");
    set(&show, "data-walk-show", "");
    let feedback = el("p", "walk-feedback");
    set(&feedback, "data-walk-feedback", "");
    // The page has one polite live region (the counters'); the feedback is
    // each option's description instead, read with the focused option.
    set(&feedback, "id", "walk-feedback");
    put(&root, &question);
    put(&root, &options);
    put(&root, &show);
    put(&root, &feedback);
    put(div, &root);
    let view = StoredValue::new_local(WalkView {
        root,
        question,
        options: options.clone(),
        show: show.clone(),
        feedback,
    });
    let state = StoredValue::new_local(WalkState::default());
    let sync = move || {
        w.reading
            .with_untracked(|r| sync_walk(w, level.get_untracked(), r, state, view))
    };
    let mut on = Listeners::default();
    on.on(&select, "change", move |ev| {
        if let Some(l) = picked(&ev) {
            level.set(l);
        }
    });
    // A pick: feedback at once; a right one (or "show me") resumes the run.
    let pick = move |key: Option<String>| {
        let right = state
            .try_update_value(|st| {
                let a = st.walk.asked.get(st.shown?)?;
                let c = match &key {
                    Some(k) => a.options.iter().find(|o| o.key == k.as_str())?,
                    None => a.options.iter().find(|o| o.correct)?,
                };
                // "Show me" is not the learner's answer: the answer, shown.
                let text = match key {
                    None => c.shown(),
                    Some(_) => c.feedback.clone(),
                };
                st.said = Some((text, c.correct));
                st.said_of = st.shown;
                if c.correct {
                    // Marked done; the next sync moves on from it.
                    if let Some(d) = st.shown.and_then(|i| st.done.get_mut(i)) {
                        *d = true;
                    }
                }
                Some(c.correct)
            })
            .flatten();
        view.with_value(|v| state.with_value(|st| write_feedback(v, st)));
        if right == Some(true) {
            w.page.act(Action::Play(true));
            sync();
        }
    };
    on.on(&options, "click", move |ev| {
        let key = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|t| t.closest("[data-walk-option]").ok().flatten())
            .and_then(|b| b.get_attribute("data-walk-option"));
        if key.is_some() {
            pick(key);
        }
    });
    on.on(&show, "click", move |_| pick(None));
    let listeners = StoredValue::new_local(on);
    crate::dom::effect(move || {
        listeners.with_value(|_| ());
        let l = level.get();
        w.follow.track();
        // Play pressed with a question open goes on (sync_walk).
        w.page.playing().track();
        w.reading.with(|r| sync_walk(w, l, r, state, view));
    });
}

/// Brings the walk-through up to the reading: works the walk out when the
/// run, the thread or the level changed, holds playback just before the
/// next question's event and asks it once the clock stands there.
fn sync_walk(
    w: Walker,
    level: Level,
    r: &Reading,
    state: StoredValue<WalkState, LocalStorage>,
    view: StoredValue<WalkView, LocalStorage>,
) {
    let who = match w.follow.get_untracked() {
        Follow::Nobody => None,
        Follow::ClaimHolder(_) => Some(Who::Holder),
        Follow::Thread(g) => Some(Who::Thread(g)),
    };
    let mut follow_thread = None;
    let (want_hold, pause, fresh) = state
        .try_update_value(|st| {
            let Some(who) = who.filter(|_| level != Level::Narrated) else {
                let fresh = st.of.is_some() || st.shown.is_some();
                *st = WalkState::default();
                return (None, false, fresh);
            };
            let same = st.of.as_ref().is_some_and(|(s, seed, w0, l)| {
                (std::sync::Arc::ptr_eq(s, &r.scenario) || **s == *r.scenario)
                    && *seed == r.seed
                    && *l == level
                    && (*w0 == who
                        || (*w0 == Who::Holder
                            && st.walk.thread.is_some_and(|g| who == Who::Thread(g))))
            });
            let mut fresh = false;
            if !same {
                let t0 = crate::web::wall_now();
                st.walk = catalogue::walkthrough::walk(&r.scenario, r.seed, who, level);
                // What working it out cost (BENCHMARKS.md), on <html>.
                if let Some(html) = crate::web::document().document_element() {
                    let ms = stampede::metrics::one_decimal(crate::web::wall_now() - t0);
                    crate::dom::set(&html, "data-walk-ms", &ms);
                }
                // What the thread decided before it was followed is behind
                // the learner, not jumped over.
                st.done = st.walk.asked.iter().map(|a| a.t <= r.now).collect();
                st.of = Some((r.scenario.clone(), r.seed, who, level));
                st.shown = None;
                st.said = None;
                st.said_of = None;
                fresh = true;
                if who == Who::Holder {
                    // The holder is known ahead of its win: follow it from
                    // its first step.
                    follow_thread = st.walk.thread;
                }
            }
            let now = r.now;
            // Play pressed while a question stands open: the learner goes on
            // without answering, so it is shown, as "Show me" shows it.
            let open = st
                .shown
                .filter(|i| !st.done.get(*i).copied().unwrap_or(true));
            if let Some(i) = open.filter(|_| w.page.playing().get_untracked()) {
                let right = st.walk.asked[i].options.iter().find(|o| o.correct);
                if let (Some(c), Some(d)) = (right, st.done.get_mut(i)) {
                    st.said = Some((c.shown(), true));
                    st.said_of = Some(i);
                    *d = true;
                    fresh = true;
                }
            }
            // Gone back (a restart, a step back): ask again what lies ahead.
            for (a, d) in st.walk.asked.iter().zip(st.done.iter_mut()) {
                if *d && now + 1 < a.t {
                    *d = false;
                }
            }
            // Jumped past a question (the next event, the timeline dragged
            // beyond it): not asked, so its answer is shown, and said so.
            let mut jumped = None;
            for (i, (a, d)) in st.walk.asked.iter().zip(st.done.iter_mut()).enumerate() {
                if !*d && a.t <= now {
                    *d = true;
                    jumped = Some(i);
                }
            }
            if let Some(i) = jumped {
                st.said = Some((st.walk.asked[i].jumped(), true));
                st.said_of = Some(i);
                fresh = true;
            }
            let next = st
                .walk
                .asked
                .iter()
                .zip(&st.done)
                .position(|(a, d)| !d && a.t > now);
            let at = next.filter(|i| now + 1 >= st.walk.asked[*i].t);
            if at != st.shown {
                st.shown = at;
                fresh = true;
            }
            (next.map(|i| st.walk.asked[i].t - 1), at.is_some(), fresh)
        })
        .unwrap_or((None, false, false));
    // Still the holder, now known: the picker keeps saying so.
    if let Some(g) = follow_thread {
        if w.follow.get_untracked() != Follow::ClaimHolder(Some(g)) {
            w.follow.set(Follow::ClaimHolder(Some(g)));
        }
    }
    if w.hold.get_untracked() != want_hold {
        w.hold.set(want_hold);
    }
    if pause && w.page.playing().get_untracked() {
        w.page.act(Action::Play(false));
    }
    if fresh {
        view.with_value(|v| state.with_value(|st| write_walk(v, st, who.is_some(), level)));
    }
}

fn write_walk(v: &WalkView, st: &WalkState, following: bool, level: Level) {
    use crate::dom::{put, set, set_text, text_el};
    let on = level != Level::Narrated;
    let _ = v.root.toggle_attribute_with_force("hidden", !on);
    set(&v.root, "data-walk-now", level.name());
    v.options.set_text_content(None);
    let asked = st.shown.and_then(|i| st.walk.asked.get(i));
    let _ = v
        .show
        .toggle_attribute_with_force("hidden", asked.is_none());
    let _ = v
        .question
        .toggle_attribute_with_force("data-asking", asked.is_some());
    let Some(a) = asked else {
        let left = st.done.iter().filter(|d| !**d).count();
        let text = if !following {
            "Pick a thread to follow: the run pauses at its decisions and asks what it does next."
                .to_string()
        } else if let Some(n) = &st.walk.note {
            n.clone()
        } else if st.walk.asked.is_empty() {
            "This thread's request meets none of the decisions asked at this level.".to_string()
        } else {
            match left {
                0 => format!("All {} questions answered or shown.", st.walk.asked.len()),
                _ => format!(
                    "{} of {} questions answered or shown; the run pauses at the next.",
                    st.walk.asked.len() - left,
                    st.walk.asked.len()
                ),
            }
        };
        set_text(&v.question, &text);
        write_feedback(v, st);
        return;
    };
    set_text(&v.question, a.question);
    // The question in view: over the side column on a desktop (style/
    // learn.css), else where it stands in the read path's panel.
    bring_into_view(&v.root);
    // Clicks only: the digits are presenter mode's presets (src/app.rs).
    for o in &a.options {
        let b = text_el("button", "", o.label);
        set(&b, "type", "button");
        set(&b, "data-walk-option", o.key);
        set(&b, "aria-describedby", "walk-feedback");
        put(&v.options, &b);
    }
    // A keyboard learner who just answered goes on from the new options.
    let doc = crate::web::document();
    let here = doc
        .active_element()
        .is_none_or(|e| Some(&e) == doc.body().as_deref() || v.root.contains(Some(&e)));
    if here {
        if let Some(first) = v
            .options
            .first_element_child()
            .and_then(|e| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(e).ok())
        {
            let _ = first.focus();
        }
    }
    write_feedback(v, st);
}

/// Scrolls a question that is off screen into view: the run has paused
/// for it, and the learner is likely watching the fleet.
fn bring_into_view(e: &web_sys::Element) {
    use js_sys::{Function, Reflect};
    use wasm_bindgen::JsCast;
    let rect = Reflect::get(e, &"getBoundingClientRect".into())
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
        .and_then(|f| f.call0(e).ok());
    let side = |name: &str| {
        rect.as_ref()
            .and_then(|r| Reflect::get(r, &name.into()).ok())
            .and_then(|v| v.as_f64())
    };
    let height = crate::web::window()
        .inner_height()
        .ok()
        .and_then(|h| h.as_f64());
    if let (Some(top), Some(bottom), Some(h)) = (side("top"), side("bottom"), height) {
        if bottom <= 0.0 || top >= h {
            e.scroll_into_view();
        }
    }
}

fn write_feedback(v: &WalkView, st: &WalkState) {
    use crate::dom::{set, set_text};
    match &st.said {
        Some((text, right)) => {
            set_text(&v.feedback, text);
            // Under a newer question it is the last one's answer, said so.
            let _ = v.feedback.toggle_attribute_with_force(
                "data-last",
                st.shown.is_some() && st.said_of != st.shown,
            );
            set(
                &v.feedback,
                "data-correct",
                if *right { "true" } else { "false" },
            );
        }
        None => {
            set_text(&v.feedback, "");
            let _ = v.feedback.remove_attribute("data-correct");
            let _ = v.feedback.remove_attribute("data-last");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holders_places_run_down_the_listing() {
        assert_eq!(line_of(Place::None), None);
        assert_eq!(line_of(Place::Crashed), None);
        // Every line after `handle(key):` is one of the core's places.
        assert_eq!(LISTING.len(), catalogue::walkthrough::LINES.len() + 1);
        assert_eq!(line_of(Place::Settling), Some(LISTING.len() - 1));
        // The claim holder's path, as the core tells it, runs down the
        // listing through the recompute, the write and the release.
        let path = [
            Place::Reading,
            Place::Leading,
            Place::Claiming,
            Place::Won,
            Place::Rechecking,
            Place::Recomputing,
            Place::Writing,
            Place::Releasing,
        ];
        let lines: Vec<usize> = path.iter().filter_map(|p| line_of(*p)).collect();
        assert_eq!(lines.len(), path.len());
        assert!(lines.windows(2).all(|w| w[0] < w[1]), "{lines:?}");
        assert!(LISTING[line_of(Place::Recomputing).unwrap()]
            .code
            .contains("recompute"));
        assert!(LISTING[line_of(Place::Writing).unwrap()]
            .code
            .starts_with("SET key"));
        assert!(LISTING[line_of(Place::Releasing).unwrap()]
            .code
            .starts_with("release"));
        assert!(LISTING[line_of(Place::Won).unwrap()]
            .code
            .starts_with("if won"));
        assert_eq!(follow_of("office3", 200), Follow::Thread(401));
        assert_eq!(follow_of("holder", 200), Follow::ClaimHolder(None));
        assert_eq!(follow_of("bogus", 200), Follow::Nobody);
    }

    #[test]
    fn the_picker_says_whom_the_fleet_follows() {
        // Nobody, a choice of its own, the holder before and after its
        // thread is known.
        assert_eq!(picker_of(Follow::Nobody, 4), ("nobody".into(), None));
        assert_eq!(picker_of(Follow::Thread(9), 4), ("office3".into(), None));
        assert_eq!(picker_of(Follow::Thread(0), 4), ("office1".into(), None));
        for known in [None, Some(6)] {
            assert_eq!(
                picker_of(Follow::ClaimHolder(known), 4),
                ("holder".into(), None)
            );
        }
        // A thread clicked on the fleet: an option naming it, whose value
        // reads back as that thread.
        let (v, label) = picker_of(Follow::Thread(6), 4);
        assert_eq!(label.as_deref(), Some("thread 3 of office 2"));
        assert_eq!(follow_of(&v, 4), Follow::Thread(6));
        assert_ne!(v, "nobody");
    }

    #[test]
    fn the_followed_step_lights_the_same_step_in_every_language() {
        assert_eq!(LISTING.len(), examples::STEPS);
        let mut t = [0u64; KINDS];
        t[E::Claim as usize] = 40;
        t[E::ClaimWon as usize] = 1;
        for e in &examples::EXAMPLES {
            let text: Vec<&str> = e.text.lines().collect();
            // Nobody followed: nothing lit, and the line says how to light it.
            assert_eq!(lit(e, None), None);
            assert!(step_text(e, None, &t).starts_with("Follow a thread"));
            // Every place of the core's path lights its lines, or says why
            // this code leaves it out.
            for p in std::iter::once(Place::Arrived).chain(catalogue::walkthrough::LINES) {
                let here = line_of(p);
                let step = here.unwrap();
                let said = step_text(e, here, &t);
                match lit(e, here) {
                    Some(r) => {
                        assert!(r.end <= text.len(), "{}: {p:?}", e.path);
                        assert!(
                            said.contains(&format!("line {}", r.start + 1))
                                || said.contains(&format!("lines {}", r.start + 1)),
                            "{said}"
                        );
                    }
                    None => {
                        assert!(examples::absent(e, step).is_some(), "{}: {p:?}", e.path);
                        assert!(said.contains("not in this code"), "{said}");
                    }
                }
            }
            // The holder's claim: its SET NX, with the card line's counts.
            let r = lit(e, line_of(Place::Claiming)).unwrap();
            assert!(text[r].iter().any(|l| l.contains("NX")), "{}", e.path);
            let said = step_text(e, line_of(Place::Claiming), &t);
            assert!(
                said.starts_with("Card line 6, SET lock:key token NX PX ttl: line"),
                "{said}"
            );
            assert!(said.ends_with("(40 attempts · 1 won)."), "{said}");
        }
        // The second read after a win is in every file, and lit there.
        for e in &examples::EXAMPLES {
            let said = step_text(e, line_of(Place::Rechecking), &t);
            assert!(said.starts_with("Card line 8, v = GET key"), "{said}");
            assert!(!said.contains("not in this code"), "{}: {said}", e.path);
        }
    }

    #[test]
    fn kinds_cover_the_event_enum() {
        assert_eq!(
            E::Handover as usize,
            KINDS - 1,
            "the last event kind fits the tally"
        );
        let mut t = [0u64; KINDS];
        t[E::Lead as usize] = 1;
        t[E::Follow as usize] = 39;
        assert_eq!(counts_text(&t, &LISTING[3]), "1 lead · 39 follow");
        assert_eq!(counts_text(&t, &LISTING[2]), "");
    }
}
