//! The interviewer's kit (`?kit=1`): a second window beside the candidate's,
//! kept in step through a `BroadcastChannel`. Two windows, not a split,
//! because the candidate's window is the one shared on screen (a call, a
//! projector): the rubric, the red flags and the notes must stay off it.
//!
//! The kit is the core's data (`stampede::interview`); this module draws it
//! and speaks to the candidate's window. The messages are plain text:
//!
//! - kit → page: `hello`, `throw <kind>` (a curveball at the current
//!   moment), `open <query>` (a scenario to show);
//! - page → kit: `state <t_ms> <query>`, `thrown <kind> <at_ms> <query>`,
//!   `refused <kind> <why>`.

use leptos::prelude::*;
use stampede::interview::Curveball;
use stampede::interview::{Shown, CURVEBALLS, FOLLOW_UPS, LEVELS, QUESTION, RED_FLAGS};
use stampede::scenario::Scenario;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::engine::Engine;
use crate::page::action::{Acted, Action};
use crate::page::Page;
use crate::web::window;

/// The channel both windows open (same origin, same browser).
const CHANNEL: &str = "stampede-lab-kit";
/// Where the interviewer's notes survive a reload of the kit.
const NOTES_KEY: &str = "stampede-kit-notes";

/// True when the link asks for the kit.
pub fn wanted(query: &str) -> bool {
    query
        .trim_start_matches('?')
        .split('&')
        .any(|kv| kv == "kit=1" || kv == "kit")
}

fn channel() -> Option<web_sys::BroadcastChannel> {
    web_sys::BroadcastChannel::new(CHANNEL).ok()
}

fn on_message(ch: &web_sys::BroadcastChannel, mut f: impl FnMut(String) + 'static) {
    let cb = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
        if let Some(text) = e.data().as_string() {
            f(text);
        }
    });
    ch.set_onmessage(Some(cb.as_ref().unchecked_ref()));
    // Both windows listen for as long as they are open.
    cb.forget();
}

fn query_now() -> String {
    window()
        .location()
        .search()
        .unwrap_or_default()
        .trim_start_matches('?')
        .to_string()
}

/// Throws `ball` into the page's running lab at the current moment (the
/// clock goes on, the run is not restarted) and puts the scenario that now
/// carries the fault in `scenario`, so the page's link replays this run.
/// Returns the fault's start (ms). The kit's `throw` and the sandbox's
/// Faults group both come here.
pub(crate) fn throw_here(
    engine: StoredValue<Engine, LocalStorage>,
    scenario: RwSignal<Scenario>,
    ball: &'static Curveball,
) -> Result<u32, String> {
    match engine.try_update_value(|e| e.throw(ball)) {
        Some(Ok(s)) => {
            let at = s.faults.last().map_or(0, |f| f.start_ms);
            scenario.set(s);
            Ok(at)
        }
        Some(Err(why)) => Err(why),
        None => Err("the page is not running".to_string()),
    }
}

/// The candidate's side, installed by the page: answers the kit's `hello`
/// with the run's moment and link, and applies every other line it sends
/// as an [`Action`] (its wire form: `throw holder`, `open preset=naive`),
/// saying back what came of it (`thrown`, `refused`, or the new state).
pub(crate) fn listen(page: Page) {
    let Some(ch) = channel() else { return };
    let out = ch.clone();
    let say = move |text: String| {
        let _ = out.post_message(&JsValue::from_str(&text));
    };
    let state = move || {
        let t = page.reading.with_untracked(|r| r.now / 1000);
        format!("state {t} {}", query_now())
    };
    on_message(&ch, move |msg| {
        if msg == "hello" {
            return say(state());
        }
        let action = match Action::from_wire(&msg) {
            Ok(a) => a,
            Err(why) => {
                let what = msg.strip_prefix("throw ").unwrap_or(&msg);
                return say(format!("refused {what} {why}"));
            }
        };
        let kind = match &action {
            Action::Throw(b) => Some(b.kind),
            _ => None,
        };
        let said = match (page.act(action), kind) {
            (Acted::Thrown { at_ms }, Some(kind)) => {
                // The link is written by the page's own effect; let it run.
                Box::new(move || format!("thrown {kind} {at_ms} {}", query_now()))
                    as Box<dyn Fn() -> String>
            }
            (Acted::Refused(why), _) => {
                let what = kind.unwrap_or(msg.as_str()).to_string();
                return say(format!("refused {what} {why}"));
            }
            _ => Box::new(state),
        };
        let say = say.clone();
        set_timeout(move || say(said()), std::time::Duration::ZERO);
    });
    // Open for the page's life: dropping the handle would close it.
    std::mem::forget(ch);
}

/// The question's summary as the page's reference words it (`data-question`).
fn question_text(n: u32) -> String {
    crate::web::document()
        .query_selector(&format!("[data-question=\"{n}\"] summary"))
        .ok()
        .flatten()
        .and_then(|e| e.text_content())
        .unwrap_or_else(|| format!("Question {n}"))
}

fn mm_ss(s: u32) -> String {
    format!("{}:{:02}", s / 60, s % 60)
}

/// The kit's window.
#[component]
pub fn Kit() -> impl IntoView {
    if let Some(body) = crate::web::document().body() {
        let _ = body.class_list().add_1("kit-window");
    }
    let ch = channel();
    let status = RwSignal::new(String::from(
        "No candidate window answers yet: open the page in another window of this browser.",
    ));
    let post = {
        let ch = ch.clone();
        move |text: String| {
            if let Some(ch) = &ch {
                let _ = ch.post_message(&JsValue::from_str(&text));
            }
        }
    };
    if let Some(c) = &ch {
        on_message(c, move |msg| {
            let mut parts = msg.splitn(3, ' ');
            let words = match (parts.next(), parts.next(), parts.next()) {
                (Some("state"), Some(t), q) => {
                    format!("Candidate's window: t = {t} ms, ?{}", q.unwrap_or(""))
                }
                (Some("thrown"), Some(kind), rest) => {
                    let (at, q) = rest.unwrap_or("").split_once(' ').unwrap_or(("", ""));
                    format!("Thrown: {kind} from {at} ms. The link now replays it: ?{q}")
                }
                (Some("refused"), Some(kind), why) => {
                    format!("Not thrown: {kind}: {}", why.unwrap_or(""))
                }
                _ => return,
            };
            status.set(words);
        });
    }
    post("hello".to_string());

    // The timer: started and paused by hand, shown as m:ss.
    let seconds = RwSignal::new(0u32);
    let running = RwSignal::new(false);
    let _ = set_interval_with_handle(
        move || {
            if running.get_untracked() {
                seconds.update(|s| *s += 1);
            }
        },
        std::time::Duration::from_secs(1),
    );
    let notes = RwSignal::new(
        crate::web::storage("localStorage", "getItem", &[NOTES_KEY])
            .and_then(|v| v.as_string())
            .unwrap_or_default(),
    );
    Effect::new(move |_| {
        let text = notes.get();
        let _ = crate::web::storage("localStorage", "setItem", &[NOTES_KEY, &text]);
    });

    let show = {
        let post = post.clone();
        move |s: Shown| {
            let post = post.clone();
            view! {
                <button type="button" class="kit-show" data-show=s.link
                    title=format!("Open ?{} in the candidate's window; its {} shows it", s.link, s.criterion.name())
                    on:click=move |_| post(format!("open {}", s.link))>
                    "Show"
                </button>
            }
        }
    };
    let levels = LEVELS
        .iter()
        .map(|l| {
            let points = l
                .names
                .iter()
                .map(|p| {
                    let button = p.shown.map(show.clone());
                    view! {
                        <li><label><input type="checkbox" data-point=l.name />" " {p.text}</label> {button}</li>
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
    let flags = RED_FLAGS
        .iter()
        .map(|f| {
            let button = show.clone()(f.shown);
            view! {
                <li data-red-flag="">
                    <label><input type="checkbox" />" “" {f.says} "”"</label>
                    <span class="kit-why">{f.because}</span> {button}
                </li>
            }
        })
        .collect_view();
    let follow = FOLLOW_UPS
        .iter()
        .map(|f| {
            let button = show.clone()(f.shown);
            view! {
                <li data-follow-up=f.question>
                    <strong>{question_text(f.question)}</strong>
                    <span class="kit-listen">"Listen for: " {f.listen_for}</span> {button}
                </li>
            }
        })
        .collect_view();
    let balls = CURVEBALLS
        .iter()
        .map(|b: &'static Curveball| {
            let post = post.clone();
            view! {
                <li>
                    <button type="button" data-curveball=b.kind
                        on:click=move |_| post(format!("throw {}", b.kind))>{b.label}</button>
                    <span class="kit-ask">{b.ask}</span>
                </li>
            }
        })
        .collect_view();

    view! {
        <main class="kit" data-kit="">
            <header class="kit-head">
                <h1>"Interviewer's kit"</h1>
                <p class="kit-question">{QUESTION}</p>
                <div class="kit-timer">
                    <span data-timer="" aria-live="off">{move || mm_ss(seconds.get())}</span>
                    <button type="button" on:click=move |_| running.update(|r| *r = !*r)>
                        {move || if running.get() { "Pause" } else { "Start" }}
                    </button>
                    <button type="button" on:click=move |_| seconds.set(0)>"Reset"</button>
                    <button type="button" class="screen-only" on:click=move |_| { let _ = window().print(); }>
                        "Print the scoresheet"
                    </button>
                </div>
                <p class="kit-status screen-only" data-kit-status="" role="status">{move || status.get()}</p>
            </header>
            <div class="kit-levels">{levels}</div>
            <section class="kit-flags">
                <h2>"Red flags: saying one costs the question"</h2>
                <ul>{flags}</ul>
            </section>
            <section class="kit-follow">
                <h2>"Follow-ups, in order"</h2>
                <ol>{follow}</ol>
            </section>
            <section class="kit-curveballs screen-only">
                <h2>"Curveballs: thrown into the candidate's run now, without a restart"</h2>
                <ul>{balls}</ul>
            </section>
            <section class="kit-notes">
                <h2><label for="kit-notes">"Notes"</label></h2>
                <textarea id="kit-notes" rows="8" prop:value=move || notes.get()
                    on:input=move |e| notes.set(event_target_value(&e))></textarea>
            </section>
        </main>
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kit_is_asked_for_by_its_key_only() {
        assert!(wanted("?kit=1"));
        assert!(wanted("seed=3&kit"));
        assert!(!wanted("?kit=0"));
        assert!(!wanted("?skit=1&preset=burst"));
    }

    #[test]
    fn the_timer_reads_minutes_and_seconds() {
        assert_eq!(mm_ss(0), "0:00");
        assert_eq!(mm_ss(65), "1:05");
        assert_eq!(mm_ss(45 * 60), "45:00");
    }
}
