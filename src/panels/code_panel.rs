//! The read path as pseudo-code, each line with how many times the fleet has
//! run it so far (counted from the simulation's events), so the numbers in
//! the arithmetic can be traced to the line that produced them.

use leptos::prelude::*;
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
pub const LISTING: [Line; 12] = [
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

/// "8000 GETs", "1 lead · 39 follow".
pub fn counts_text(t: &Tally, l: &Line) -> String {
    l.counts
        .iter()
        .map(|(k, label)| format!("{} {label}", count(t, *k)))
        .collect::<Vec<_>>()
        .join(" · ")
}

#[component]
pub fn CodePanel(reading: RwSignal<Reading>) -> impl IntoView {
    view! {
        <section class="panel code" aria-labelledby="code-title">
            <h2 id="code-title">"The read path, counted"</h2>
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

#[cfg(test)]
mod tests {
    use super::*;

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
