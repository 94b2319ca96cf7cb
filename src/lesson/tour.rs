//! The guided tour as data: one row per step, in three levels. A step names
//! its scenario (a share link's query), what to notice (one to three
//! sentences with one `{}` where the running number goes), the counter that
//! number is, and what that counter must show for the words to be true.
//! The page fills `{}` from the live simulation, never from this table; the
//! tests below run every step's scenario and check its words' claims.
//!
//! No web types here: the page's tour bar lives in `tour_view`.

/// The tour's three levels, shortest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Level {
    /// About twenty seconds of reading: what each layer does.
    Basics,
    /// About a minute: the arithmetic, the costs, the rules.
    Solid,
    /// What goes wrong, and where each technique stops helping.
    Deeper,
}

impl Level {
    pub const ALL: [Level; 3] = [Level::Basics, Level::Solid, Level::Deeper];

    /// The level's name in links and hooks (`#tour/solid/3`).
    pub fn name(self) -> &'static str {
        match self {
            Level::Basics => "basics",
            Level::Solid => "solid",
            Level::Deeper => "deeper",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Level::Basics => "Basics",
            Level::Solid => "A solid answer",
            Level::Deeper => "Going deeper",
        }
    }

    pub fn from_name(name: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|l| l.name() == name)
    }
}

/// What a counter must show at the end of a step's run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    Exactly(u64),
    AtLeast(u64),
}

impl Expect {
    pub fn holds(self, v: u64) -> bool {
        match self {
            Expect::Exactly(want) => v == want,
            Expect::AtLeast(min) => v >= min,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Step {
    pub level: Level,
    pub title: &'static str,
    /// The scenario, as a share link's query (seed 1 unless it says).
    pub query: &'static str,
    /// What to notice; the one `{}` shows `metric` from the running fleet.
    pub text: &'static str,
    /// The counter the step points at (its `data-metric`).
    pub metric: &'static str,
    /// What the words claim, checked by the tests: `metric` first, then any
    /// other counter the words speak of.
    pub expect: &'static [(&'static str, Expect)],
}

use Expect::{AtLeast, Exactly};
use Level::{Basics, Deeper, Solid};

pub const STEPS: &[Step] = &[
    // ---- basics
    Step {
        level: Basics,
        title: "One hot key, a whole fleet",
        query: "preset=naive",
        text: "A hot key has just expired. Forty offices (instances) of two hundred clerks (threads) each miss it at once, and with no protection every clerk asks the origin directly: {} recomputes of the same value.",
        metric: "recomputes",
        expect: &[("recomputes", Exactly(8000))],
    },
    Step {
        level: Basics,
        title: "Singleflight: one clerk per office asks",
        query: "preset=singleflight",
        text: "Inside each office the clerks now share one question: the first to miss asks, the others wait for the same answer. That costs nothing, but an office cannot see the others: {} recomputes, one per office.",
        metric: "recomputes",
        expect: &[("recomputes", Exactly(40))],
    },
    Step {
        level: Basics,
        title: "The claim: one sign-up sheet for the fleet",
        query: "preset=burst",
        text: "Now each office's one clerk also tries to sign a sheet on the shared board, Redis (SET NX with a TTL). One office wins and asks; the others wait for its answer: {} recompute for the whole fleet.",
        metric: "recomputes",
        expect: &[("recomputes", Exactly(1))],
    },
    Step {
        level: Basics,
        title: "The order: singleflight outside, claim inside",
        query: "preset=claim-outer",
        text: "Swap the layers and every clerk walks to the board before the office has coalesced: still one recompute, but {} claim attempts at Redis instead of one per office.",
        metric: "claim_attempts",
        expect: &[("claim_attempts", Exactly(8000)), ("recomputes", Exactly(1))],
    },
    // ---- a solid answer
    Step {
        level: Solid,
        title: "Two multipliers, two layers",
        query: "preset=burst",
        text: "Duplicate work is instances times threads. Singleflight removes the threads for free; the claim removes the instances for one Redis round trip per office: {} claim attempts, one per instance, and a single recompute.",
        metric: "claim_attempts",
        expect: &[("claim_attempts", Exactly(40)), ("recomputes", Exactly(1))],
    },
    Step {
        level: Solid,
        title: "Singleflight is nearly free",
        query: "preset=singleflight",
        text: "Singleflight is a map from key to the computation in flight, in the process's own memory: no network, no TTL, nothing to release. Alone it never takes a lock: {} claim attempts.",
        metric: "claim_attempts",
        expect: &[("claim_attempts", Exactly(0)), ("recomputes", Exactly(40))],
    },
    Step {
        level: Solid,
        title: "The claim's TTL against the slowest recompute",
        query: "preset=short-ttl",
        text: "Here the claim's TTL is shorter than a slow recompute, so it runs out mid-work and another office starts the same recompute: {} recomputes overlapped one still running. Size the TTL above the p99 recompute.",
        metric: "overlapping_recomputes",
        expect: &[("overlapping_recomputes", AtLeast(1))],
    },
    Step {
        level: Solid,
        title: "Release with the token you claimed with",
        query: "preset=short-ttl",
        text: "A holder releases with a compare-and-delete of its own random token. In this run {} releases were refused: those claims had expired and been taken by another office, which a plain DEL would have freed for a third.",
        metric: "releases_refused",
        expect: &[("releases_refused", AtLeast(1))],
    },
    Step {
        level: Solid,
        title: "What the losers do",
        query: "preset=stale",
        text: "An office that lost the claim need not wait for the winner: holding a stale copy, it answers at once. {} requests got the stale value while one office refreshed it.",
        metric: "stale_served",
        expect: &[("stale_served", AtLeast(1)), ("recomputes", Exactly(1))],
    },
    Step {
        level: Solid,
        title: "Failures are shared, never remembered",
        query: "preset=failure",
        text: "The origin fails for a while. A failed recompute reaches only the callers waiting on it, then leaves the map, so the next request tries again: {} errors, while later recomputes succeed and refill the cache.",
        metric: "errors",
        expect: &[("errors", AtLeast(1)), ("remembered_failures", Exactly(0)), ("values_written", AtLeast(1))],
    },
    Step {
        level: Solid,
        title: "Every wait has its own deadline",
        query: "preset=hang",
        text: "The origin never answers. Each caller gives up at its own deadline, {} of them, and the origin timeout bounds the work itself, so no thread stays pinned.",
        metric: "timeouts",
        expect: &[("timeouts", Exactly(8000)), ("pinned", Exactly(0))],
    },
    // ---- going deeper
    Step {
        level: Deeper,
        title: "Pitfall: remembering a failure",
        query: "preset=failure&pf=remember-failure",
        text: "Leave the failed result in the flight map and every later caller is handed the old error: {} answers came from a remembered failure, long after the origin recovered. Damp retries with a short negative cache on purpose instead.",
        metric: "remembered_failures",
        expect: &[("remembered_failures", AtLeast(1))],
    },
    Step {
        level: Deeper,
        title: "Pitfall: waiting without a deadline",
        query: "preset=hang&pf=no-deadline",
        text: "Without deadlines a hung origin holds every thread that asked for the key: {} requests are still pinned when the run stops.",
        metric: "pinned",
        expect: &[("pinned", Exactly(8000))],
    },
    Step {
        level: Deeper,
        title: "Pitfall: a shared mutable result",
        query: "pf=mutable-result",
        text: "Every waiter receives the same object. If it can be changed and the first waiter changes it, the others see the change: {} requests read a corrupted value. Share an immutable value, or hand out copies.",
        metric: "corrupted",
        expect: &[("corrupted", AtLeast(1))],
    },
    Step {
        level: Deeper,
        title: "Pitfall: a flight key that is not the cache key",
        query: "pf=key-mismatch",
        text: "Singleflight coalesces only what has the same key. Build its key differently from the cache's and nothing coalesces in-process: {} claim attempts, every thread for itself.",
        metric: "claim_attempts",
        expect: &[("claim_attempts", Exactly(8000))],
    },
    Step {
        level: Deeper,
        title: "When singleflight alone is enough",
        query: "preset=cheap",
        text: "For a 20 ms indexed query, one copy per instance is no load at all: {} recomputes. A claim would add a Redis round trip and a wait to every miss to save forty cheap queries; the A/B view shows where it starts to pay.",
        metric: "recomputes",
        expect: &[("recomputes", Exactly(40)), ("timeouts", Exactly(0))],
    },
    Step {
        level: Deeper,
        title: "A cold cache: nothing to coalesce",
        query: "preset=cold",
        text: "After a restart the misses are for thousands of different keys, so every recompute is real and neither layer helps. Admission control bounds the origin and turns the excess away at once: {} recomputes shed with a degraded answer.",
        metric: "admission_shed",
        expect: &[("admission_shed", AtLeast(1))],
    },
    Step {
        level: Deeper,
        title: "TTL jitter",
        query: "preset=jitter",
        text: "Keys written together expire together. Spread each TTL by a random fraction and their expiries spread too: at most {} recomputes ran at the origin at once.",
        metric: "origin_peak_concurrency",
        expect: &[("origin_peak_concurrency", AtLeast(1))],
    },
    Step {
        level: Deeper,
        title: "Stale-while-revalidate: nobody waits on a lock",
        query: "preset=swr",
        text: "Every request gets the stale value at once and the claim guards only the refresh behind it: {} answers served stale, and one recompute.",
        metric: "stale_served",
        expect: &[("stale_served", Exactly(8000)), ("recomputes", Exactly(1)), ("timeouts", Exactly(0))],
    },
    Step {
        level: Deeper,
        title: "Redis is down: fail open",
        query: "preset=redis-down",
        text: "Every Redis command errors. Failing open, each office treats the claim as won and refreshes anyway: {} recomputes, one per office, and nobody waits on a lock that cannot be taken.",
        metric: "recomputes",
        expect: &[("recomputes", Exactly(40)), ("timeouts", Exactly(0))],
    },
    Step {
        level: Deeper,
        title: "The holder dies",
        query: "preset=holder-crash",
        text: "The office holding the claim crashes without releasing it. Nobody may refresh until the claim's TTL runs out, and {} callers gave up meanwhile: the TTL is also the longest such stall.",
        metric: "timeouts",
        expect: &[("timeouts", AtLeast(1))],
    },
    Step {
        level: Deeper,
        title: "A lock with a TTL guards efficiency, not correctness",
        query: "preset=late-writer",
        text: "A slow holder outlives its claim, another office recomputes, and the older value lands last: {} newer values were overwritten by older ones. A fencing number on each write lets the store refuse the late one.",
        metric: "stale_overwrites",
        expect: &[("stale_overwrites", AtLeast(1))],
    },
];

/// The steps of one level, in order.
pub fn steps(level: Level) -> impl Iterator<Item = &'static Step> {
    STEPS.iter().filter(move |s| s.level == level)
}

/// How many steps a level has.
pub fn count(level: Level) -> usize {
    steps(level).count()
}

/// Step `k` (from 0) of a level.
pub fn step(level: Level, k: usize) -> Option<&'static Step> {
    steps(level).nth(k)
}

/// A place in the tour: a level and a step index from 0.
pub type Place = (Level, usize);

/// The hook and link name of a place: `basics/1` (steps count from 1).
pub fn place_name((level, k): Place) -> String {
    format!("{}/{}", level.name(), k + 1)
}

/// Reads `#tour/<level>/<k>` (or `#tour`, or `#tour/<level>`); anything else
/// is not a tour link. A step past the level's end is its last step.
pub fn parse_hash(hash: &str) -> Option<Place> {
    let rest = hash
        .strip_prefix('#')
        .unwrap_or(hash)
        .strip_prefix("tour")?;
    let mut parts = rest.strip_prefix('/').unwrap_or(rest).split('/');
    let level = match parts.next() {
        None | Some("") => return Some((Basics, 0)),
        Some(l) => Level::from_name(l)?,
    };
    let k = match parts.next() {
        None | Some("") => 0,
        Some(n) => n.parse::<usize>().ok()?.max(1) - 1,
    };
    Some((level, k.min(count(level) - 1)))
}

/// The next place: the next step, or the next level's first.
pub fn next((level, k): Place) -> Option<Place> {
    if k + 1 < count(level) {
        return Some((level, k + 1));
    }
    let i = Level::ALL.iter().position(|l| *l == level)?;
    Level::ALL.get(i + 1).map(|l| (*l, 0))
}

/// The previous place: the previous step, or the previous level's last.
pub fn back((level, k): Place) -> Option<Place> {
    if k > 0 {
        return Some((level, k - 1));
    }
    let i = Level::ALL.iter().position(|l| *l == level)?;
    let prev = *Level::ALL.get(i.checked_sub(1)?)?;
    Some((prev, count(prev) - 1))
}

/// The step's sentence with `value` in place of `{}`: (before, after).
pub fn split_text(text: &str) -> (&str, &str) {
    text.split_once("{}").unwrap_or((text, ""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede::Fleet;

    #[test]
    fn every_level_has_steps_and_every_step_one_number() {
        for level in Level::ALL {
            assert!(count(level) >= 4, "{level:?}");
        }
        for s in STEPS {
            assert_eq!(s.text.matches("{}").count(), 1, "{}", s.title);
            assert_eq!(s.expect.first().map(|e| e.0), Some(s.metric), "{}", s.title);
            let words = s.text.split_whitespace().count();
            assert!((12..=70).contains(&words), "{}: {words} words", s.title);
        }
    }

    /// The tour's words are true: every step's scenario, run to its end on
    /// the page's own parser and seed, shows what its sentence says.
    #[test]
    fn every_step_says_what_its_run_shows() {
        for s in STEPS {
            let (state, notices) = crate::url_state::parse(s.query);
            assert!(notices.is_empty(), "{}: {notices:?}", s.title);
            let report = Fleet::new(&state.scenario, state.seed).run();
            let fields = report.fields();
            for (metric, want) in s.expect {
                let v = fields
                    .iter()
                    .find(|(k, _)| k == metric)
                    .unwrap_or_else(|| panic!("{}: no counter {metric}", s.title))
                    .1
                    .parse::<u64>()
                    .unwrap_or_else(|e| panic!("{}: {metric} is not a count: {e}", s.title));
                assert!(
                    want.holds(v),
                    "{}: {metric} = {v}, the words want {want:?}",
                    s.title
                );
            }
        }
    }

    #[test]
    fn links_name_every_step_and_walk_the_whole_tour() {
        let mut at = (Basics, 0);
        let mut seen = vec![place_name(at)];
        while let Some(n) = next(at) {
            assert_eq!(back(n), Some(at));
            at = n;
            seen.push(place_name(at));
        }
        assert_eq!(seen.len(), STEPS.len());
        for name in &seen {
            let p = parse_hash(&format!("#tour/{name}")).unwrap();
            assert_eq!(&place_name(p), name);
        }
        assert_eq!(parse_hash("#tour"), Some((Basics, 0)));
        assert_eq!(parse_hash("#tour/deeper"), Some((Deeper, 0)));
        assert_eq!(
            parse_hash("#tour/solid/99"),
            Some((Solid, count(Solid) - 1))
        );
        assert_eq!(parse_hash("#tour/solid/0"), Some((Solid, 0)));
        for bad in [
            "",
            "#",
            "#tours",
            "#tour/nope/1",
            "#tour/solid/x",
            "#questions",
        ] {
            assert_eq!(parse_hash(bad), None, "{bad}");
        }
    }
}
