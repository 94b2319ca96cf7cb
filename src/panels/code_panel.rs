//! The read path as pseudo-code, each line with how many times the fleet has
//! run it so far (counted from the simulation's events), so the numbers in
//! the arithmetic can be traced to the line that produced them.

use leptos::prelude::*;
use stampede::read_path::Place;
use stampede::sim::EventKind;

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

/// Whose path through the listing the panel follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Follow {
    #[default]
    Nobody,
    /// A thread by global index (instance × threads + thread).
    Thread(u32),
    /// Whichever thread next holds the claim (then that thread).
    ClaimHolder,
}

/// The picker's choices: (value, label, what to follow for a fleet of
/// `threads` threads per instance).
pub const FOLLOW_CHOICES: [(&str, &str); 4] = [
    ("nobody", "nobody"),
    ("holder", "the claim holder"),
    ("office3", "a follower in office 3"),
    ("office1", "the first thread of office 1"),
];

pub fn follow_of(value: &str, threads: u32) -> Follow {
    match value {
        "holder" => Follow::ClaimHolder,
        "office3" => Follow::Thread(2 * threads + threads.min(2).saturating_sub(1)),
        "office1" => Follow::Thread(0),
        _ => Follow::Nobody,
    }
}

/// The listing line a thread is on, from where the core says it is on the
/// read path (`read_path::Place`, kept from the events it logged).
pub fn line_of(place: Place) -> Option<usize> {
    Some(match place {
        Place::None => return None,
        Place::Arrived => 0,
        Place::Reading => 1,
        Place::Served => 2,
        Place::Leading => 3,
        Place::Following => 4,
        Place::Claiming => 5,
        Place::Won => 6,
        Place::Rechecking => 7,
        Place::Recomputing => 8,
        Place::Writing => 9,
        Place::Releasing => 10,
        Place::Losing => 11,
        Place::Settling => 12,
        // Its request died with it: no line.
        Place::Crashed => return None,
    })
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

#[component]
pub fn CodePanel(reading: RwSignal<Reading>, follow: RwSignal<Follow>) -> impl IntoView {
    // Following a thread: the picker and the line it is on, with plain DOM
    // calls (see `crate::dom`).
    let root = NodeRef::<leptos::html::Div>::new();
    crate::dom::build_once(
        move || root.get().map(Into::into),
        move |div| build_follow(&div, reading, follow),
    );
    view! {
        <section class="panel code" aria-labelledby="code-title">
            <h2 id="code-title">"The read path, counted"</h2>
            <div class="follow" node_ref=root></div>
            <ol class="listing">
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
            <p class="code-note">
                "Counted since t = 0 from the simulation's events. With the claim outside singleflight, the claim lines run before the flight; without singleflight every thread leads its own."
            </p>
        </section>
    }
}

fn build_follow(div: &web_sys::Element, reading: RwSignal<Reading>, follow: RwSignal<Follow>) {
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
    let said = el("p", "followed");
    set(&said, "data-followed", "");
    put(div, &said);
    let parts = StoredValue::new_local((div.clone(), said, on));
    Effect::new(move |_| {
        reading.with(|r| {
            parts.with_value(|(div, said, _)| {
                let here = r.followed.and_then(|(_, _, p, _)| line_of(p));
                // Presenter mode puts the listing beside the fleet while a
                // thread is followed (style/presenter.css).
                let following = r.followed.is_some();
                if div.class_list().contains("on") != following {
                    let _ = div.class_list().toggle_with_force("on", following);
                    if let Some(b) = crate::dom::document().body() {
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
                            let _ = li
                                .class_list()
                                .toggle_with_force("here", here == Some(i as usize));
                        }
                    }
                }
            })
        })
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_holders_places_run_down_the_listing() {
        assert_eq!(line_of(Place::None), None);
        assert_eq!(line_of(Place::Crashed), None);
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
        assert_eq!(follow_of("holder", 200), Follow::ClaimHolder);
        assert_eq!(follow_of("bogus", 200), Follow::Nobody);
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
