//! The interviewer's kit (`?kit=1`): a second window beside the candidate's,
//! kept in step through a `BroadcastChannel`. Two windows, not a split,
//! because the candidate's window is the one shared on screen (a call, a
//! projector): the rubric, the red flags and the notes must stay off it.
//!
//! The kit is the core's data (`catalogue::interview`); this module draws it,
//! keeps the interviewer's scoresheet, and speaks to the candidate's window.
//!
//! **Pairing.** Every page window has a short code of its own (kept for the
//! tab's life, `sessionStorage`), shown at its foot (`data-pair-code`) once a
//! kit is open in the browser. The interviewer pairs the kit with the one
//! window whose code the candidate's screen shows; from then on the kit's
//! messages are addressed to that code and every other window ignores them.
//! The messages are plain lines:
//!
//! - kit → all: `hello` (who is there?), `pair <code>` (the one paired);
//! - kit → the paired window: `ping <code>` (each second), and
//!   `to <code> <seq> <action>`: an [`Action`] in its wire form
//!   (`throw holder`, `open preset=naive`);
//! - kit → the paired window: `ask <code> <n>`, the question asked now
//!   (0 is the card's), which the window shows at its top: the question's
//!   words only ([`asked::Asked`]);
//! - page → kit: `here <code> <t_ms> <query>` (answering `hello`, `pair`
//!   and `ping`), `asked <code> <n>` (the question it shows; `-` for none,
//!   once, as a new or reloaded window first answers: the kit then asks
//!   again), `ack <code> <seq> <reply>` where the reply is the page's
//!   own report of what landed: `thrown <kind> <at_ms> <was_ms> <query>`,
//!   `refused <kind> <why>` or `done <action>`; `bye <code>` as the
//!   window goes.
//!
//! The kit says a message arrived only on its `ack`, and that the
//! candidate's window is gone when it stops answering the pings (or says
//! `bye`).
//!
//! **The questions.** The card's question and the page's fifteen reference
//! questions (`catalogue::interview::questions`), one on screen at a time
//! (`data-kit-question`), picked from a row of numbers or by a follow-up's
//! "Ask next"; a paired window shows the same question's words (never its
//! levels or red flags), and the kit says which it shows
//! (`data-candidate-sees`). The curveballs are the run's, whichever question is on
//! screen; the question's own come first, with its own ask.
//!
//! **The scoresheet** (`data-scoresheet`, [`sheet::Sheet`]): the candidate,
//! the date, a tick per point, red flag and follow-up of every question
//! asked, the notes, an overall rating and a recommendation, with the timer:
//! kept in `localStorage` on every change (the kit says so when the browser
//! refuses storage), printed on one page with every question asked,
//! exported as Markdown.

mod asked;
mod cue;
mod remote;
mod sheet;

use catalogue::claims::Row;
use catalogue::interview::{self, Curveball, Question, CURVEBALLS};
use leptos::prelude::*;
use stampede::scenario::Scenario;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::engine::Engine;
use crate::page::action::{Acted, Action};
use crate::page::kept::Kept;
use crate::page::Page;
use crate::relay::wire::Wire;
use crate::web::window;
use sheet::{heading, mm_ss, rating_words, tick_id, Sheet, RATINGS, RECOMMENDATIONS};

/// The candidate's window is gone when it has not answered for this long.
const GONE_AFTER_MS: f64 = 3_500.0;
/// A message is "not arrived" when unanswered for this long.
const ACK_WITHIN_MS: f64 = 3_000.0;
/// Letters and digits nobody misreads off a shared screen (no 0/O, 1/I/L).
const CODE_LETTERS: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";

/// True when the link asks for the kit.
pub fn wanted(query: &str) -> bool {
    query
        .trim_start_matches('?')
        .split('&')
        .any(|kv| kv == "kit=1" || kv == "kit")
}

/// A four-letter pairing code from a random number.
fn code_of(mut n: u32) -> String {
    let base = CODE_LETTERS.len() as u32;
    (0..4)
        .map(|_| {
            let c = CODE_LETTERS[(n % base) as usize] as char;
            n /= base;
            c
        })
        .collect()
}

/// A code as typed: upper case, no spaces; None unless it could be one.
fn typed_code(s: &str) -> Option<String> {
    let c: String = s
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_ascii_uppercase();
    (c.len() == 4 && c.bytes().all(|b| CODE_LETTERS.contains(&b))).then_some(c)
}

/// One line on the channel (see the module's doc).
#[derive(Debug, PartialEq)]
enum Line<'a> {
    Hello,
    Pair(&'a str),
    Ping(&'a str),
    To {
        code: &'a str,
        seq: u32,
        action: &'a str,
    },
    Here {
        code: &'a str,
        state: &'a str,
    },
    Ack {
        code: &'a str,
        seq: u32,
        reply: &'a str,
    },
    Bye(&'a str),
    /// The kit: show this question (its number).
    Ask {
        code: &'a str,
        question: u32,
    },
    /// The window: the question it shows (None: none yet).
    Asked {
        code: &'a str,
        question: Option<u32>,
    },
}

fn parse(line: &str) -> Option<Line<'_>> {
    let (verb, rest) = line.split_once(' ').unwrap_or((line, ""));
    let (code, tail) = rest.split_once(' ').unwrap_or((rest, ""));
    let numbered = || {
        let (n, t) = tail.split_once(' ').unwrap_or((tail, ""));
        Some((n.parse::<u32>().ok()?, t))
    };
    Some(match verb {
        "hello" => Line::Hello,
        "pair" => Line::Pair(code),
        "ping" => Line::Ping(code),
        "bye" => Line::Bye(code),
        "here" => Line::Here { code, state: tail },
        "ask" => Line::Ask {
            code,
            question: tail.parse().ok()?,
        },
        "asked" => Line::Asked {
            code,
            question: match tail {
                "-" => None,
                n => Some(n.parse().ok()?),
            },
        },
        "to" => {
            let (seq, action) = numbered()?;
            Line::To { code, seq, action }
        }
        "ack" => {
            let (seq, reply) = numbered()?;
            Line::Ack { code, seq, reply }
        }
        _ => return None,
    })
}

/// What the kit says of a reply (`thrown`, `refused`, `state`): its words,
/// and for a refused curveball its kind.
fn said(reply: &str) -> (String, Option<String>) {
    let mut parts = reply.splitn(3, ' ');
    match (parts.next(), parts.next(), parts.next()) {
        (Some("thrown"), Some(kind), Some(rest)) => {
            let mut r = rest.splitn(3, ' ');
            let at: u64 = r.next().and_then(|x| x.parse().ok()).unwrap_or(0);
            let was: u64 = r.next().and_then(|x| x.parse().ok()).unwrap_or(0);
            let q = r.next().unwrap_or("");
            let how = if at < was {
                format!(
                    "the run had nothing left for it after {was} ms, so it restarted with the fault at {at} ms"
                )
            } else if at > was + 1 {
                format!("it lands at {at} ms, the next moment it finds work (the clock was at {was} ms)")
            } else {
                format!("it landed at {at} ms, without a restart")
            };
            // Only a link that carries the fault replays it (`f=` in the
            // sandbox, `throw=` in the A/B view).
            let carries = q
                .split('&')
                .any(|p| p.starts_with("f=") || p.starts_with("throw="));
            let replay = if carries {
                format!("The link now replays it: ?{q}")
            } else {
                format!("The link (?{q}) does not carry it: a reload plays the run without it")
            };
            (format!("Thrown: {kind}: {how}. {replay}"), None)
        }
        (Some("refused"), Some(kind), why) => (
            format!("Not thrown: {kind}: {}", why.unwrap_or("")),
            Some(kind.to_string()),
        ),
        (Some("done"), Some(verb), rest) => (
            format!(
                "Arrived: the candidate's window did it: {verb} {}",
                rest.unwrap_or("")
            ),
            None,
        ),
        (Some("state"), Some(t), q) => (
            format!(
                "Arrived. Candidate's window: t = {t} ms, ?{}",
                q.unwrap_or("")
            ),
            None,
        ),
        _ => (format!("Arrived: {reply}"), None),
    }
}

/// The one click that makes a refused curveball bite: the steady run with
/// both layers (keys expire all along, so every curveball finds work), with
/// the fault 5 s in, opened in the candidate's window.
fn biting_link(ball: &Curveball) -> String {
    let (mut s, _, _) = Scenario::from_query("preset=jitter&c=inner");
    s.faults.push(catalogue::interview::fault(ball, 5_001));
    if let Some(outage) = ball.outage {
        s.redis_outage = outage;
    }
    s.to_query(1)
}

/// The candidate and the date as a CSS string, for a printed page's foot.
fn print_label(candidate: &str, date: &str) -> String {
    let words: Vec<&str> = [candidate.trim(), date.trim()]
        .into_iter()
        .filter(|w| !w.is_empty())
        .collect();
    let text: String = words
        .join(" · ")
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Whether a `here` line's state (`<t_ms> <query>`) is the A/B view's.
fn in_the_ab_view(state: &str) -> bool {
    state
        .split_once(' ')
        .is_some_and(|(_, q)| q.split('&').any(|p| p.starts_with("cmp=")))
}

/// The one click that makes a refused curveball bite while the candidate
/// is in the A/B view, keeping them there (it once opened the sandbox):
/// the first comparison whose both runs take it, thrown at the first
/// moment where it moves its counter in either run (`throw=`).
fn biting_ab_link(ball: &Curveball) -> Option<String> {
    use stampede::sim::Fleet;
    catalogue::presets::COMPARISONS.iter().find_map(|c| {
        let sides = [c.a(), c.b()];
        let takes = sides
            .iter()
            .all(|s| interview::throw(&mut Fleet::new(s, 1), ball, 1).is_ok());
        if !takes {
            return None;
        }
        let mut aims: Vec<u32> = sides
            .iter()
            .flat_map(|s| {
                let mut quiet = Fleet::new(s, 1);
                quiet.set_recording(false);
                quiet.run();
                interview::aims(ball, quiet.markers())
            })
            .collect();
        aims.sort_unstable();
        aims.dedup();
        aims.into_iter().take(4).find_map(|at| {
            sides
                .iter()
                .any(|s| interview::bites(&Fleet::new(s, 1), ball, at))
                .then(|| format!("cmp={}&throw={}@{at}", c.name, ball.kind))
        })
    })
}

fn query_now() -> String {
    window()
        .location()
        .search()
        .unwrap_or_default()
        .trim_start_matches('?')
        .to_string()
}

fn now_ms() -> f64 {
    js_sys::Date::now()
}

/// Throws `ball` so that it bites the page's running lab (now, at the next
/// moment it finds work, or the run restarted with it at an earlier
/// moment: [`crate::lab::Lab::throw`]): the scenario that now carries the
/// fault (the page takes it, `Action::Throw`, so its link replays this
/// run) and the fault's start (ms). The kit's `throw` and the sandbox's
/// Faults group both come here, through the page.
pub(crate) fn throw_here(
    engine: StoredValue<Engine, LocalStorage>,
    ball: &'static Curveball,
) -> Result<(Scenario, u32), String> {
    match engine.try_update_value(|e| e.throw(ball)) {
        Some(Ok((s, landed))) => Ok((s, landed.at_ms())),
        Some(Err(why)) => Err(why),
        None => Err("the page is not running".to_string()),
    }
}

/// The window's own pairing code: kept for the tab's life, so a reload
/// keeps the pairing.
fn own_code() -> String {
    if let Some(c) = Kept::PairCode.get().and_then(|c| typed_code(&c)) {
        return c;
    }
    let c = code_of((js_sys::Math::random() * f64::from(u32::MAX)) as u32);
    Kept::PairCode.set(&c);
    c
}

/// The code at the foot of a page window, shown once a kit is open in the
/// browser, and whether this window is the one paired (plain DOM: the
/// page's view tree is the app's, and this is the kit's one part in it).
struct Badge(web_sys::Element);

impl Badge {
    fn new(code: &str) -> Option<Badge> {
        let body = crate::web::document().body()?;
        let e = crate::dom::el("p", "pair-badge screen-only");
        crate::dom::set(&e, "data-pair-code", code);
        crate::dom::set(&e, "hidden", "");
        crate::dom::set(&e, "role", "status");
        crate::dom::put(&body, &e);
        // Hidden until a kit in this browser says hello: a visitor with no
        // kit open never sees it.
        Some(Badge(e))
    }

    fn show(&self, paired: bool) {
        let code = self.0.get_attribute("data-pair-code").unwrap_or_default();
        let words = if paired {
            format!("Paired with the interviewer's kit · {code}")
        } else {
            format!("Kit pairing code: {code}")
        };
        crate::dom::set_text(&self.0, &words);
        crate::dom::set(&self.0, "data-paired", if paired { "1" } else { "0" });
        let _ = self.0.remove_attribute("hidden");
    }
}

/// The candidate's side, installed by the page: answers the kit's `hello`
/// with its code, the run's moment and link, and applies every action the
/// kit addresses to its code (no other), saying back what came of it.
pub(crate) fn listen(page: Page) {
    // The browser's channel, or the relay when the link joins a room.
    let ch = Wire::for_window();
    let code = own_code();
    let badge = Badge::new(&code);
    if let (Some(r), Some(b)) = (ch.remote(), &badge) {
        remote::notes_on(r, b.0.clone());
    }
    let out = ch.clone();
    let say = move |text: String| out.post(&text);
    let now_of = move || page.reading().with_untracked(|r| r.now / 1000);
    let here = {
        let code = code.clone();
        move || format!("here {code} {} {}", now_of(), query_now())
    };
    let me = code.clone();
    // The question the kit asks, shown at the window's top, and whether
    // this window told its kit what it shows: a new or reloaded window
    // says it shows none, once, and its kit asks again.
    let shown = std::rc::Rc::new(std::cell::Cell::new(None::<u32>));
    let asked = asked::Asked::default();
    let told = std::rc::Rc::new(std::cell::Cell::new(false));
    let tell = {
        let say = say.clone();
        let me = me.clone();
        let shown = shown.clone();
        move || {
            let n = shown
                .get()
                .map_or_else(|| "-".to_string(), |n| n.to_string());
            say(format!("asked {me} {n}"));
        }
    };
    let first_answer = {
        let tell = tell.clone();
        move || {
            if !told.replace(true) {
                tell();
            }
        }
    };
    ch.on_line(move |msg| match parse(&msg) {
        Some(Line::Hello) => {
            if let Some(b) = &badge {
                let paired = b.0.get_attribute("data-paired").as_deref() == Some("1");
                b.show(paired);
            }
            say(here());
        }
        Some(Line::Pair(c)) => {
            if let Some(b) = &badge {
                b.show(c == me);
            }
            if c == me {
                say(here());
                first_answer();
            }
        }
        Some(Line::Ping(c)) if c == me => {
            // A ping to this code is its kit's: the badge says paired even
            // if the one `pair` line was lost (a connection made again).
            if let Some(b) = &badge {
                if b.0.get_attribute("data-paired").as_deref() != Some("1") {
                    b.show(true);
                }
            }
            say(here());
            first_answer();
        }
        Some(Line::Ask { code: c, question }) if c == me => {
            if asked.show(question) {
                shown.set(Some(question));
            }
            tell();
        }
        Some(Line::To {
            code: c,
            seq,
            action,
        }) if c == me => {
            // The clock on screen: the A/B view's own while it is open.
            let was = if page.compare().get_untracked().is_some() {
                page.ab_clock().map_or(0, |(us, _)| us / 1000)
            } else {
                now_of()
            };
            let reply: Box<dyn Fn() -> String> = match Action::from_wire(action) {
                Err(why) => {
                    let what = action.strip_prefix("throw ").unwrap_or(action).to_string();
                    Box::new(move || format!("refused {what} {why}"))
                }
                Ok(parsed) => {
                    let kind = match &parsed {
                        Action::Throw(b) => Some(b.kind),
                        _ => None,
                    };
                    match (page.act(parsed), kind) {
                        (Acted::Thrown { at_ms }, Some(kind)) => {
                            // A run restarted with the fault earlier plays
                            // on from there.
                            if u64::from(at_ms) < was && !page.playing().get_untracked() {
                                page.act(Action::Transport(crate::page::Command::TogglePlay));
                            }
                            thrown_cue(page, kind, at_ms, was);
                            // The link is written by the page's own effect.
                            Box::new(move || format!("thrown {kind} {at_ms} {was} {}", query_now()))
                        }
                        (Acted::Refused(why), kind) => {
                            let what = kind.unwrap_or(action_verb(&msg)).to_string();
                            Box::new(move || format!("refused {what} {why}"))
                        }
                        // Done: what it did, in its own words (its run
                        // and link are rebuilt after this).
                        _ => {
                            let did = action.to_string();
                            Box::new(move || format!("done {did}"))
                        }
                    }
                }
            };
            let say = say.clone();
            let me = me.clone();
            set_timeout(
                move || say(format!("ack {me} {seq} {}", reply())),
                std::time::Duration::ZERO,
            );
        }
        _ => {}
    });
    // The kit hears at once that this window is going.
    let bye = ch.clone();
    let gone = Closure::<dyn FnMut()>::new(move || bye.post(&format!("bye {code}")));
    let _ = window().add_event_listener_with_callback("pagehide", gone.as_ref().unchecked_ref());
    gone.forget();
    // Open for the page's life: dropping the handle would close it.
    std::mem::forget(ch);
}

/// The candidate's cue for a curveball `kind` that landed at `at_ms` with
/// the clock at `was_ms`: the page's own sentence for it, in a box they
/// cannot miss ([`cue::show`]). Also for a throw that arrives another way.
pub(crate) fn thrown_cue(page: Page, kind: &str, at_ms: u32, was_ms: u64) {
    if let Some(ball) = interview::curveball(kind) {
        let ttl = page.scenario().with_untracked(|s| s.value_ttl_ms);
        cue::show(&interview::thrown_sentence(
            ball,
            at_ms,
            ttl,
            u64::from(at_ms) < was_ms,
        ));
    }
}

/// The action's verb in a `to` line, for a refusal's words.
fn action_verb(msg: &str) -> &str {
    msg.split(' ').nth(3).unwrap_or("action")
}

fn today() -> String {
    js_sys::Date::new_0()
        .to_iso_string()
        .as_string()
        .unwrap_or_default()
        .chars()
        .take(10)
        .collect()
}

/// Offers `text` as a file download named `name`.
fn download(name: &str, text: &str) -> Result<(), JsValue> {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type("text/markdown");
    let blob = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts)?;
    let href = web_sys::Url::create_object_url_with_blob(&blob)?;
    let a = crate::web::document().create_element("a")?;
    a.set_attribute("href", &href)?;
    a.set_attribute("download", name)?;
    if let Some(a) = a.dyn_ref::<web_sys::HtmlElement>() {
        a.click();
    }
    let _ = web_sys::Url::revoke_object_url(&href);
    Ok(())
}

/// What the kit's status line says: the words, and for a refused
/// curveball its kind (`data-refused`) and the link that makes it bite.
#[derive(Clone, Debug, Default, PartialEq)]
struct Status {
    words: String,
    refused: Option<String>,
    fix: Option<String>,
}

impl Status {
    fn says(words: impl Into<String>) -> Status {
        Status {
            words: words.into(),
            ..Status::default()
        }
    }
}

/// The kit's window.
#[component]
pub fn Kit() -> impl IntoView {
    if let Some(body) = crate::web::document().body() {
        let _ = body.class_list().add_1("kit-window");
    }
    // The browser's channel, or the relay when the link names one.
    let ch = Wire::for_kit();
    let remote = ch.remote();
    let through_relay = remote.is_some();
    let post = {
        let ch = ch.clone();
        move |text: String| ch.post(&text)
    };

    // ---- pairing ----
    let paired = RwSignal::new(Kept::KitPaired.get().and_then(|c| typed_code(&c)));
    let heard = RwSignal::new(Vec::<String>::new());
    let seen_at = StoredValue::new(0.0f64);
    // The paired window shows the A/B view (its last `here`).
    let in_ab = StoredValue::new(false);
    let alive = RwSignal::new(false);
    let seq = StoredValue::new(0u32);
    let waiting = StoredValue::new(None::<(u32, String, f64)>);
    let status = RwSignal::new(Status::says(
        "Not paired: pair with the candidate's window (its code shows at the foot of its page).",
    ));
    let typed = RwSignal::new(String::new());
    // The question the paired window says it shows (its `asked`).
    let on_screen = RwSignal::new(None::<u32>);

    let pair = {
        let post = post.clone();
        move |code: Option<String>| {
            match &code {
                Some(c) => {
                    Kept::KitPaired.set(c);
                }
                None => Kept::KitPaired.remove(),
            }
            alive.set(false);
            seen_at.set_value(0.0);
            waiting.set_value(None);
            on_screen.set(None);
            post(format!("pair {}", code.as_deref().unwrap_or("-")));
            status.set(Status::says(match &code {
                Some(c) => format!("Pairing with {c}…"),
                None => "Not paired.".to_string(),
            }));
            paired.set(code);
        }
    };
    // Sends an action to the paired window, numbered for its `ack`.
    let send = {
        let post = post.clone();
        move |wire: String| {
            let Some(code) = paired.get_untracked() else {
                status.set(Status::says(
                    "Not sent: pair with the candidate's window first (its code shows at the foot of its page).",
                ));
                return;
            };
            let n = seq.get_value() + 1;
            seq.set_value(n);
            waiting.set_value(Some((n, wire.clone(), now_ms())));
            status.set(Status::says(format!("Sent to {code}: {wire}…")));
            post(format!("to {code} {n} {wire}"));
        }
    };
    {
        let remote = remote.clone();
        let pair = pair.clone();
        ch.on_line(move |msg| {
            let mine = |code: &str| paired.get_untracked().as_deref() == Some(code);
            match parse(&msg) {
                Some(Line::Here { code, .. })
                    if remote::pairs_now(remote.as_deref(), code, paired) =>
                {
                    // Through the relay the room's one window is the
                    // candidate's: the kit pairs with it as it answers.
                    pair(Some(code.to_string()));
                }
                Some(Line::Here { code, state }) => {
                    if !heard.with_untracked(|h| h.iter().any(|c| c == code)) {
                        heard.update(|h| h.push(code.to_string()));
                    }
                    if mine(code) {
                        seen_at.set_value(now_ms());
                        in_ab.set_value(in_the_ab_view(state));
                        if !alive.get_untracked() {
                            alive.set(true);
                            if waiting.with_value(Option::is_none) {
                                let (t, q) = state.split_once(' ').unwrap_or((state, ""));
                                status.set(Status::says(format!(
                                    "Paired with {code}: its run is at t = {t} ms, ?{q}"
                                )));
                            }
                        }
                    }
                }
                Some(Line::Ack {
                    code,
                    seq: n,
                    reply,
                }) if mine(code) => {
                    seen_at.set_value(now_ms());
                    alive.set(true);
                    if waiting.with_value(|w| w.as_ref().is_some_and(|(s, _, _)| *s == n)) {
                        waiting.set_value(None);
                    }
                    let (words, refused) = said(reply);
                    // In the A/B view the fix keeps the candidate there.
                    let fix = refused
                        .as_deref()
                        .and_then(catalogue::interview::curveball)
                        .and_then(|b| {
                            if in_ab.get_value() {
                                // A page entry: the link's own view, A/B.
                                biting_ab_link(b).map(|q| format!("entry {q}"))
                            } else {
                                Some(format!("open {}", biting_link(b)))
                            }
                        });
                    status.set(Status {
                        words,
                        refused,
                        fix,
                    });
                }
                Some(Line::Asked { code, question }) if mine(code) => {
                    seen_at.set_value(now_ms());
                    on_screen.set(question);
                }
                Some(Line::Bye(code)) if mine(code) => {
                    alive.set(false);
                    on_screen.set(None);
                    seen_at.set_value(0.0);
                    heard.update(|h| h.retain(|c| c != code));
                }
                Some(Line::Bye(code)) => heard.update(|h| h.retain(|c| c != code)),
                _ => {}
            }
        });
    }
    post("hello".to_string());
    if let Some(c) = paired.get_untracked() {
        post(format!("pair {c}"));
    }

    // ---- the scoresheet, kept on every change ----
    let stored = Kept::KitSheet.get();
    let first = match stored {
        Some(text) => Sheet::from_store(&text).resumed(now_ms()),
        None => Sheet {
            date: today(),
            notes: Kept::KitNotes.get().unwrap_or_default(),
            ..Sheet::default()
        },
    };
    let sheet = RwSignal::new(first);
    let storage_ok = RwSignal::new(true);
    crate::dom::effect(move || {
        let mut s = sheet.get();
        s.saved_at = now_ms();
        let ok = Kept::KitSheet.set(&s.to_store());
        if ok != storage_ok.get_untracked() {
            storage_ok.set(ok);
        }
    });

    // The question asked now goes to the paired window as it changes, as
    // the window answers (paired, back, reloaded), and again each second
    // until the window says it shows it.
    let asking = Memo::new(move |_| sheet.with(|s| s.current));
    let ask_now = {
        let post = post.clone();
        move || {
            let n = asking.get_untracked();
            if let (true, Some(code)) = (alive.get_untracked(), paired.get_untracked()) {
                if on_screen.get_untracked() != Some(n) {
                    post(format!("ask {code} {n}"));
                }
            }
        }
    };
    {
        let ask_now = ask_now.clone();
        crate::dom::effect(move || {
            asking.track();
            alive.track();
            on_screen.track();
            ask_now();
        });
    }

    // Every printed page's foot names the candidate and the date (the
    // print's @page box reads this property; later pages once carried
    // neither).
    crate::dom::effect(move || {
        let label = sheet.with(|s| print_label(&s.candidate, &s.date));
        if let Some(html) = crate::web::document()
            .document_element()
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
        {
            let _ = html.style().set_property("--kit-candidate", &label);
        }
    });

    // Each second: the timer, the heartbeat, and a message unanswered.
    {
        let post = post.clone();
        let _ = set_interval_with_handle(
            move || {
                if sheet.with_untracked(|s| s.running) {
                    sheet.update(|s| s.seconds += 1);
                }
                // Unpaired, the kit says hello each second, so a window
                // opened after it shows its code and joins the list.
                let Some(code) = paired.get_untracked() else {
                    post("hello".to_string());
                    return;
                };
                post(format!("ping {code}"));
                ask_now();
                let now = now_ms();
                if alive.get_untracked() && now - seen_at.get_value() > GONE_AFTER_MS {
                    alive.set(false);
                }
                if let Some((_, wire, sent)) = waiting.get_value() {
                    if now - sent > ACK_WITHIN_MS {
                        waiting.set_value(None);
                        status.set(Status::says(format!(
                            "Not arrived: {code} did not acknowledge “{wire}”. Is the candidate's window still open?"
                        )));
                    }
                }
            },
            std::time::Duration::from_secs(1),
        );
    }

    let tick_box = move |id: String| {
        let id2 = id.clone();
        let id3 = id.clone();
        view! {
            <input type="checkbox" data-tick=id.clone()
                prop:checked=move || sheet.with(|s| s.ticked(&id2))
                on:change=move |e| {
                    let on = event_target_checked(&e);
                    sheet.update(|s| {
                        if on { s.ticks.insert(id.clone()); } else { s.ticks.remove(&id); }
                    });
                } />
            <span class="tick-mark print-only" aria-hidden="true">
                {move || if sheet.with(|s| s.ticked(&id3)) { "[x] " } else { "[ ] " }}
            </span>
        }
    };

    let show = {
        let send = send.clone();
        move |s: Row| {
            let send = send.clone();
            view! {
                <button type="button" class="kit-show" data-show=s.link
                    title=format!("Open ?{} in the candidate's window: {}", s.link, s.bound().map(|b| crate::page::bound_words(&b)).unwrap_or_default())
                    on:click=move |_| send(format!("open {}", s.link))>
                    "Show"
                </button>
            }
        }
    };
    // One section per question; only the one asked now is on screen, and
    // every question on the sheet is printed.
    let section = {
        let show = show.clone();
        move |q: &'static Question| {
            let n = q.number;
            let levels = q
                .levels
                .iter()
                .map(|l| {
                    let points = l
                        .names
                        .iter()
                        .enumerate()
                        .map(|(i, p)| {
                            let button = p.shown().map(show.clone());
                            let id = tick_id(n, &format!("{}/{i}", l.name));
                            view! {
                                <li><label data-point=l.name>{tick_box(id)}" " {p.text()}</label> {button}</li>
                            }
                        })
                        .collect_view();
                    view! {
                        <section class="kit-level" data-level=l.name>
                            <h3>{l.name}</h3>
                            <p class="kit-gist">{l.gist}</p>
                            <ul>{points}</ul>
                        </section>
                    }
                })
                .collect_view();
            let flags = q
                .red_flags
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let button = show.clone()(f.row);
                    view! {
                        <li data-red-flag="">
                            <label>{tick_box(tick_id(n, &format!("flag/{i}")))}" “" {f.says} "”"</label>
                            <span class="kit-why">{f.row.words}</span> {button}
                        </li>
                    }
                })
                .collect_view();
            let follow = q
                .follow_ups
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let button = show.clone()(f.row);
                    let asks = interview::question(f.question).map_or("", |q| q.asks);
                    let next = f.question;
                    view! {
                        <li data-follow-up=f.question>
                            <label>{tick_box(tick_id(n, &format!("follow/{i}")))}" " <strong>{asks}</strong></label>
                            <span class="kit-listen">"Listen for: " {f.row.words}</span> {button}
                            " "
                            <button type="button" class="kit-ask-next screen-only" data-ask=next
                                title=format!("Put question {next} on screen, with its own levels and red flags")
                                on:click=move |_| sheet.update(|s| s.open(next))>
                                {format!("Ask {next} next")}
                            </button>
                        </li>
                    }
                })
                .collect_view();
            view! {
                <section class="kit-q" data-kit-question=n
                    hidden=move || sheet.with(|s| s.current != n)
                    data-on-sheet=move || sheet.with(|s| n == 0 || s.asked.contains(&n)).then_some("")>
                    <h2 class="kit-q-head">{heading(q)}</h2>
                    <p class="kit-question">{q.asks}</p>
                    <div class="kit-levels">{levels}</div>
                    <section class="kit-flags">
                        <h3>"Red flags: saying one costs the question"</h3>
                        <ul>{flags}</ul>
                    </section>
                    <section class="kit-follow">
                        <h3>"Follow-ups, in order"</h3>
                        <ol>{follow}</ol>
                    </section>
                </section>
            }
        }
    };
    let sections = interview::questions().map(section).collect_view();
    // The questions, to pick the one asked now: the card's first.
    let picker = interview::questions()
        .map(|q| {
            let n = q.number;
            // Its number and title: the picker once read bare numbers.
            let label = match n {
                0 => interview::titles::title(0).to_string(),
                n => format!("{n} · {}", interview::titles::title(n)),
            };
            view! {
                <button type="button" class="kit-pick" data-ask=n title=q.asks
                    aria-current=move || sheet.with(|s| s.current == n).then_some("true")
                    data-ticks=move || sheet.with(|s| s.ticks_of(n))
                    on:click=move |_| sheet.update(|s| s.open(n))>
                    {label}
                </button>
            }
        })
        .collect_view();
    // The same questions in words, for a screen with no hover to read a
    // number's title (a tablet): one click puts a question on screen.
    let all_ref = NodeRef::<leptos::html::Details>::new();
    let listed = interview::questions()
        .map(|q| {
            let n = q.number;
            view! {
                <li>
                    <button type="button" class="kit-pick-words" data-ask-words=n
                        on:click=move |_| {
                            sheet.update(|s| s.open(n));
                            // The list folds away: the question is under it.
                            if let Some(d) = all_ref.get_untracked() {
                                d.set_open(false);
                            }
                        }>
                        <strong>{sheet::heading(q)}": "</strong> {q.asks}
                    </button>
                </li>
            }
        })
        .collect_view();
    // The curveballs: the question's own first, with its own ask; then the
    // rest, with the general one.
    let balls = {
        let send = send.clone();
        move || {
            let q = sheet
                .with(|s| interview::question(s.current))
                .unwrap_or(&interview::CARD);
            let own = q
                .throws
                .iter()
                .filter_map(|t| Some((interview::curveball(t.kind)?, t.ask, true)));
            let rest = CURVEBALLS
                .iter()
                .filter(|b| !q.throws.iter().any(|t| t.kind == b.kind))
                .map(|b| (b, b.ask, false));
            own.chain(rest)
                .map(|(b, ask, mine): (&'static Curveball, &'static str, bool)| {
                    let send = send.clone();
                    view! {
                        <li class:kit-ball-other=!mine>
                            <button type="button" data-curveball=b.kind
                                on:click=move |_| send(format!("throw {}", b.kind))>{b.label}</button>
                            <span class="kit-ask">{ask}</span>
                        </li>
                    }
                })
                .collect_view()
        }
    };

    let pairing = {
        let pair = pair.clone();
        move || {
            let pair = pair.clone();
            match paired.get() {
                Some(code) => {
                    let unpair = pair.clone();
                    view! {
                        <p class="kit-paired">
                            "Paired with the candidate's window "
                            <strong class="kit-code" data-pair-code=code.clone()>{code.clone()}</strong>
                            " · "
                            <span data-pair-alive=move || if alive.get() { "1" } else { "0" }>
                                {move || if alive.get() {
                                    "it answers.".to_string()
                                } else {
                                    "its window is gone (closed, or not answering): reopen it, or pair again.".to_string()
                                }}
                            </span>
                            " "
                            <span class="kit-sees" data-candidate-sees=move || on_screen.get().map(|n| n.to_string())>
                                {move || match on_screen.get().and_then(interview::question) {
                                    Some(q) => format!("On their screen: {} (its words only).", heading(q)),
                                    None => "No question on their screen yet.".to_string(),
                                }}
                            </span>
                            " "
                            <button type="button" on:click=move |_| unpair(None)>"Unpair"</button>
                        </p>
                    }
                    .into_any()
                }
                None if through_relay => view! {
                    <p class="kit-paired">"Not paired yet: open a room above and send the candidate its link."</p>
                }
                .into_any(),
                None => {
                    let by_button = pair.clone();
                    let by_typing = pair.clone();
                    let windows = move || {
                        let by_button = by_button.clone();
                        heard
                            .get()
                            .into_iter()
                            .map(|c| {
                                let pair = by_button.clone();
                                let c2 = c.clone();
                                view! {
                                    <button type="button" data-pair-with=c.clone()
                                        on:click=move |_| pair(Some(c2.clone()))>{format!("Pair with {c}")}</button>
                                }
                            })
                            .collect_view()
                    };
                    view! {
                        <form class="kit-pair-form" on:submit=move |e| {
                            e.prevent_default();
                            match typed_code(&typed.get_untracked()) {
                                Some(c) => by_typing(Some(c)),
                                None => status.set(Status::says("A pairing code is four letters or digits, as the candidate's window shows it.")),
                            }
                        }>
                            <label>"Pair with the candidate's window: the code at the foot of its page "
                                <input type="text" maxlength="4" size="5" data-pair-input="" autocomplete="off"
                                    prop:value=move || typed.get()
                                    on:input=move |e| typed.set(event_target_value(&e)) />
                            </label>
                            " " <button type="submit">"Pair"</button>
                            " " {windows}
                        </form>
                    }
                    .into_any()
                }
            }
        }
    };

    let rating_radios = (1..=4u8)
        .map(|r| {
            view! {
                <label class="kit-rating-option">
                    <input type="radio" name="kit-rating" data-rating=r
                        prop:checked=move || sheet.with(|s| s.rating == r)
                        on:change=move |_| sheet.update(|s| s.rating = r) />
                    " " {RATINGS[usize::from(r) - 1]}
                </label>
            }
        })
        .collect_view();
    let recommendations = RECOMMENDATIONS
        .iter()
        .map(|r| view! { <option value=*r prop:selected=move || sheet.with(|s| s.recommendation == *r)>{*r}</option> })
        .collect_view();
    let export = move |_| {
        let s = sheet.get_untracked();
        if download(&s.file_name(), &s.markdown()).is_err() {
            status.set(Status::says(
                "The Markdown could not be offered for download.",
            ));
        }
    };
    let refused = move || status.with(|s| s.refused.clone());
    let fix = {
        let send = send.clone();
        move || {
            let send = send.clone();
            status.with(|s| s.fix.clone()).map(|wire| {
                view! {
                    <button type="button" class="kit-fix" data-fix=wire.clone()
                        on:click=move |_| send(wire.clone())>
                        "Make it bite: show it on steady traffic"
                    </button>
                }
            })
        }
    };

    view! {
        <main class="kit" data-kit="" data-scoresheet="">
            <header class="kit-head">
                <h1>"Interviewer's kit" <span class="print-only">" · scoresheet"</span></h1>
                <div class="kit-sheet-head">
                    <label>"Candidate "
                        <input type="text" data-candidate="" class="screen-only"
                            prop:value=move || sheet.with(|s| s.candidate.clone())
                            on:input=move |e| { let v = event_target_value(&e); sheet.update(|s| s.candidate = v); } />
                        <strong class="print-only" data-candidate-print="">{move || sheet.with(|s| s.candidate.clone())}</strong>
                    </label>
                    <label>"Date "
                        <input type="date" data-date="" class="screen-only"
                            prop:value=move || sheet.with(|s| s.date.clone())
                            on:input=move |e| { let v = event_target_value(&e); sheet.update(|s| s.date = v); } />
                        <span class="print-only">{move || sheet.with(|s| s.date.clone())}</span>
                    </label>
                    <span class="kit-timer">
                        <span data-timer="" aria-live="off">{move || mm_ss(sheet.with(|s| s.seconds))}</span>
                        <button type="button" class="screen-only" data-timer-toggle=""
                            on:click=move |_| sheet.update(|s| s.running = !s.running)>
                            {move || if sheet.with(|s| s.running) { "Pause" } else { "Start" }}
                        </button>
                        <button type="button" class="screen-only" on:click=move |_| sheet.update(|s| s.seconds = 0)>"Reset"</button>
                    </span>
                </div>
                <p class="kit-storage screen-only" data-storage-off="" role="alert" hidden=move || storage_ok.get()>
                    "This browser keeps nothing for this page (storage is off, blocked or full): the scoresheet lasts until this window closes. Export it as Markdown before then."
                </p>
            </header>
            // Pairing and the last message's fate stay in view while the
            // interviewer scrolls to the curveballs.
            <div class="kit-bar screen-only">
                <section class="kit-pair">{remote::panel(remote)}{pairing}</section>
                <p class="kit-status" data-kit-status="" role="status" data-refused=refused>
                    {move || status.with(|s| s.words.clone())} " " {fix}
                </p>
            </div>
            <nav class="kit-picker screen-only" aria-label="Questions">
                <span>"Ask: "</span> {picker}
            </nav>
            <details class="kit-all screen-only" node_ref=all_ref>
                <summary>"Every question, in words"</summary>
                <ol>{listed}</ol>
            </details>
            // Near the top, beside the question: they once began 1,975 px
            // down the kit's page, under the question's levels.
            <section class="kit-curveballs screen-only">
                <h2>"Curveballs: each bites the candidate's run, or says why not"</h2>
                <ul>{balls}</ul>
            </section>
            {sections}
            <section class="kit-notes">
                <h2><label for="kit-notes">"Notes"</label></h2>
                <textarea id="kit-notes" class="screen-only" rows="6" prop:value=move || sheet.with(|s| s.notes.clone())
                    on:input=move |e| { let v = event_target_value(&e); sheet.update(|s| s.notes = v); }></textarea>
                <div class="kit-notes-print print-only">{move || sheet.with(|s| s.notes.clone())}</div>
            </section>
            <section class="kit-verdict">
                <h2>"Verdict"</h2>
                <fieldset class="kit-rating screen-only">
                    <legend>"Overall rating"</legend>
                    {rating_radios}
                </fieldset>
                <label class="screen-only">"Recommendation "
                    <select data-recommendation="" on:change=move |e| { let v = event_target_value(&e); sheet.update(|s| s.recommendation = v); }>
                        <option value="" prop:selected=move || sheet.with(|s| s.recommendation.is_empty())>"—"</option>
                        {recommendations}
                    </select>
                </label>
                <p class="print-only">
                    "Overall rating: " {move || sheet.with(|s| rating_words(s.rating))}
                    " · Recommendation: " {move || sheet.with(|s| if s.recommendation.is_empty() { "—".to_string() } else { s.recommendation.clone() })}
                </p>
                <p class="kit-actions screen-only">
                    <button type="button" data-print="" on:click=move |_| { let _ = window().print(); }>"Print the scoresheet"</button>
                    " "
                    <button type="button" data-export="" on:click=export>"Export as Markdown"</button>
                </p>
            </section>
        </main>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn a_printed_page_s_foot_quotes_the_candidate_safely() {
        assert_eq!(print_label("Ada", "2026-12-02"), "\"Ada · 2026-12-02\"");
        assert_eq!(print_label(" ", ""), "\"\"");
        assert_eq!(print_label("A \"B\" \\ C\n", ""), "\"A \\\"B\\\" \\\\ C\"");
    }

    #[test]
    fn the_kit_is_asked_for_by_its_key_only() {
        assert!(wanted("?kit=1"));
        assert!(wanted("seed=3&kit"));
        assert!(!wanted("?kit=0"));
        assert!(!wanted("?skit=1&preset=burst"));
    }

    #[test]
    fn pairing_codes_are_four_unmistakable_letters_and_typed_loosely() {
        let codes: BTreeSet<String> = (0..2000u32)
            .map(|n| code_of(n.wrapping_mul(2_654_435_761)))
            .collect();
        assert!(codes.len() > 1900, "codes repeat: {}", codes.len());
        for c in &codes {
            assert_eq!(typed_code(c).as_deref(), Some(c.as_str()));
            assert!(!c.contains(['0', 'O', '1', 'I', 'L']), "{c}");
        }
        assert_eq!(typed_code(" k7q2 ").as_deref(), Some("K7Q2"));
        assert_eq!(typed_code("K7Q"), None);
        assert_eq!(typed_code("K0Q2"), None, "0 is never a code's");
    }

    #[test]
    fn lines_are_addressed_and_numbered() {
        assert_eq!(parse("hello"), Some(Line::Hello));
        assert_eq!(parse("pair K7Q2"), Some(Line::Pair("K7Q2")));
        assert_eq!(
            parse("to K7Q2 12 open preset=naive&seed=3"),
            Some(Line::To {
                code: "K7Q2",
                seq: 12,
                action: "open preset=naive&seed=3"
            })
        );
        assert_eq!(
            parse("ack K7Q2 12 thrown holder 4001 4000 preset=burst&f=holder%404001"),
            Some(Line::Ack {
                code: "K7Q2",
                seq: 12,
                reply: "thrown holder 4001 4000 preset=burst&f=holder%404001"
            })
        );
        assert_eq!(
            parse("here K7Q2 3000 preset=burst"),
            Some(Line::Here {
                code: "K7Q2",
                state: "3000 preset=burst"
            })
        );
        assert_eq!(
            parse("to K7Q2 x throw holder"),
            None,
            "no number, no message"
        );
        assert_eq!(parse("throw holder"), None, "an action must be addressed");
    }

    #[test]
    fn the_question_asked_is_a_number_both_ways() {
        assert_eq!(
            parse("ask K7Q2 12"),
            Some(Line::Ask {
                code: "K7Q2",
                question: 12
            })
        );
        assert_eq!(
            parse("asked K7Q2 0"),
            Some(Line::Asked {
                code: "K7Q2",
                question: Some(0)
            })
        );
        assert_eq!(
            parse("asked K7Q2 -"),
            Some(Line::Asked {
                code: "K7Q2",
                question: None
            })
        );
        assert_eq!(parse("ask K7Q2 twelve"), None);
        assert_eq!(parse("ask K7Q2"), None);
        assert_eq!(parse("asked K7Q2 x"), None);
    }

    #[test]
    fn the_kit_says_what_the_candidate_reports() {
        let (w, r) = said("thrown holder 4001 4000 q");
        assert!(w.contains("at 4001 ms, without a restart"), "{w}");
        assert_eq!(r, None);
        let (w, _) = said("thrown origin 900 12000 q");
        assert!(w.contains("restarted with the fault at 900 ms"), "{w}");
        let (w, _) = said("thrown origin 9000 5000 q");
        assert!(w.contains("lands at 9000 ms, the next moment"), "{w}");
        let (w, _) = said("done open sf=0&c=off");
        assert_eq!(w, "Arrived: the candidate's window did it: open sf=0&c=off");
        let (w, r) = said("refused ttl-sync nothing to hit");
        assert!(w.starts_with("Not thrown: ttl-sync: nothing to hit"), "{w}");
        assert_eq!(r.as_deref(), Some("ttl-sync"));
    }

    #[test]
    fn every_refused_curveball_has_a_link_where_it_bites() {
        use stampede::sim::Fleet;
        let quiet = Fleet::new(&Scenario::from_query("preset=jitter&c=inner").0, 1).run();
        for ball in &CURVEBALLS {
            let link = biting_link(ball);
            let (s, seed, notices) = Scenario::from_query(&link);
            assert!(notices.is_empty(), "{link}: {notices:?}");
            let hit = Fleet::new(&s, seed).run();
            let (before, after) = (
                stampede::metrics::value(&quiet, ball.metric).unwrap(),
                stampede::metrics::value(&hit, ball.metric).unwrap(),
            );
            assert!(after > before, "{}: {link}: {before} -> {after}", ball.kind);
        }
    }
}
