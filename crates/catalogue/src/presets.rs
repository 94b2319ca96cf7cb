//! The lessons as data: one preset per lesson (the interview card first) and
//! the A/B view's comparisons, two designs on the same traffic.

use crate::claims::{
    Claim, Row, CRASHED, FEWER_ATTEMPTS_THAN_THEN, FEWER_MISSES_THAN_THEN,
    FEWER_RECOMPUTES_THAN_THEN, FEWER_TIMEOUTS_THAN_THEN, LOWER_P50_THAN_THEN, LOWER_P99_THAN_THEN,
    LOWER_PEAK_THAN_THEN, MERGED, NONE_PINNED, NO_TIMEOUTS, ORIGIN_TIMED_OUT, OVERLAPS,
    PER_INSTANCE, REDIS_FAILED, SHED, STALE, TIMEOUTS, UNCLAIMED,
};
use stampede::scenario::*;

/// A named starting point: the interview card's scenario and one per lesson.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    pub name: &'static str,
    pub title: &'static str,
    /// The lesson: its words, and what they state about the preset's run
    /// (`preset=<name>`), each a claim checked at the end of its run on
    /// any seed (the words are shown only for the preset exactly, whatever
    /// its seed).
    pub row: Row,
    /// The counter (a `Report` field) whose value proves the lesson.
    pub proof: &'static str,
    /// The knobs the lesson asks a visitor to turn (long names, or
    /// `pitfall-<name>`), shown beside its text.
    pub turn: &'static [&'static str],
}

impl Preset {
    pub fn scenario(&self) -> Scenario {
        named(self.name)
    }
}

const ONE_FOR_THE_FLEET: Claim = Claim::new("one recompute for the fleet", |x| x.r.recomputes == 1);
const ONE_ATTEMPT_PER_INSTANCE: Claim = Claim::new("one claim attempt per instance", |x| {
    x.r.claim_attempts == u64::from(x.s.instances)
});
const A_CALL_PER_MISS: Claim = Claim::new("every thread that missed recomputed", |x| {
    x.r.recomputes == x.r.misses
});
const MOST_TOO_LATE: Claim = Claim::new("most callers were answered too late", |x| {
    2 * x.r.timeouts > x.r.requests
});
const EVERY_THREAD_CLAIMS: Claim = Claim::new("every thread that missed claimed", |x| {
    x.r.claim_attempts >= x.r.misses
});
const CLAIMED_AGAIN: Claim = Claim::new("later arrivals claimed again", |x| {
    x.r.claim_attempts > u64::from(x.s.instances)
});
const FAILED: Claim = Claim::new("a failure reached callers", |x| x.r.errors > 0);
const NOT_REMEMBERED: Claim = Claim::new("no failure was handed out again", |x| {
    x.r.remembered_failures == 0
});
const LATE_RELEASES_REFUSED: Claim =
    Claim::new("the token check refused every late release", |x| {
        x.r.releases_refused > 0
            && x.r.releases_refused == x.r.releases_refused_expired + x.r.releases_refused_taken
    });
const REFRESHED: Claim = Claim::new("the refresh went on", |x| x.r.recomputes > 0);
const RETRIES_CALLED: Claim = Claim::new("retries were origin calls of their own", |x| {
    x.r.retries > 0 && 2 * x.r.retry_recomputes > x.r.retries
});
const TURNED_AWAY: Claim = Claim::new("requests were turned away", |x| x.r.rejected > 0);
const QUEUED_AT_REDIS: Claim = Claim::new("the queue at Redis set the latency", |x| {
    x.r.redis_queue_peak > 1 && x.r.p99_ms > f64::from(x.s.recompute_ms)
});
const BOUNDED: Claim = Claim::new("admission bounded the origin", |x| {
    x.s.admission > 0
        && x.r.origin_peak_concurrency <= u64::from(x.s.admission) * u64::from(x.s.instances)
});
/// Misses that were neither a recompute of their own nor shed: those a
/// flight answered.
const LITTLE_MERGED: Claim = Claim::new("little to coalesce", |x| {
    10 * x
        .r
        .misses
        .saturating_sub(x.r.recomputes + x.r.admission_shed)
        <= x.r.misses
});
const EVERYONE_TIMED_OUT: Claim = Claim::new("failing open still timed everyone out", |x| {
    x.r.timeouts == x.r.requests
});
const NO_MISS: Claim = Claim::new("nobody met a miss", |x| x.r.misses == 0);
const OLDER_LANDED: Claim = Claim::new("the older value landed last", |x| x.r.stale_overwrites > 0);

pub const PRESETS: [Preset; 21] = [
    Preset {
        name: "burst",
        title: "The interview card: 40 x 200, both layers",
        row: Row {
            link: "preset=burst",
            claims: &[ONE_FOR_THE_FLEET, ONE_ATTEMPT_PER_INSTANCE],
            words: "Singleflight outside, claim inside: one recompute for the fleet, one claim attempt per instance.",
        },
        proof: "recomputes",
        // The card's knobs, all of them: the sandbox opens on this preset,
        // and a learner's first screen holds what the card varies.
        turn: &[
            "instances",
            "threads",
            "singleflight",
            "claim",
            "fail_rate",
            "workload",
            "redis_down",
        ],
    },
    Preset {
        name: "naive",
        title: "No protection",
        row: Row {
            link: "preset=naive",
            claims: &[A_CALL_PER_MISS, MOST_TOO_LATE],
            words: "Every thread that misses recomputes: instances x threads when all of them miss within one recompute, and the swamped origin answers most callers too late.",
        },
        proof: "recomputes",
        turn: &["singleflight"],
    },
    Preset {
        name: "singleflight",
        title: "Singleflight only",
        row: Row {
            link: "preset=singleflight",
            claims: &[PER_INSTANCE],
            words: "Threads collapse inside each instance: one recompute per instance.",
        },
        proof: "recomputes",
        turn: &["claim"],
    },
    Preset {
        name: "claim-outer",
        title: "Claim outside singleflight",
        row: Row {
            link: "preset=claim-outer",
            claims: &[ONE_FOR_THE_FLEET, EVERY_THREAD_CLAIMS],
            words: "Still one recompute, but every thread claims, and polls, at Redis on its own.",
        },
        proof: "claim_attempts",
        turn: &["claim"],
    },
    Preset {
        name: "stale",
        title: "Losers serve stale",
        row: Row {
            link: "preset=stale",
            claims: &[STALE, CLAIMED_AGAIN],
            words: "Losers answer stale at once; only the winner's instance waits. Flights end fast, so later arrivals claim again.",
        },
        proof: "stale_served",
        turn: &["loser"],
    },
    Preset {
        name: "failure",
        title: "A failing origin",
        row: Row {
            link: "preset=failure",
            claims: &[FAILED, NOT_REMEMBERED],
            words: "Failures reach the current waiters only; turn on remember-failure to see a sticky outage.",
        },
        proof: "errors",
        turn: &["pitfall-remember-failure"],
    },
    Preset {
        name: "hang",
        title: "A hung origin",
        row: Row {
            link: "preset=hang",
            claims: &[NONE_PINNED, TIMEOUTS, ORIGIN_TIMED_OUT],
            words: "Deadlines free the callers and the origin timeout frees the flight and the claim (the call itself runs on at the origin); turn on no-deadline to pin them all.",
        },
        proof: "timeouts",
        turn: &["pitfall-no-deadline"],
    },
    Preset {
        name: "holder-crash",
        title: "The claim holder dies",
        row: Row {
            link: "preset=holder-crash",
            claims: &[CRASHED, TIMEOUTS],
            words: "Nobody may refresh until the claim's TTL runs out: a long TTL is a long stall.",
        },
        proof: "timeouts",
        turn: &["claim_ttl_ms"],
    },
    Preset {
        name: "short-ttl",
        title: "Claim TTL shorter than the recompute",
        row: Row {
            link: "preset=short-ttl",
            claims: &[OVERLAPS, LATE_RELEASES_REFUSED],
            words: "The claim expires mid-recompute: another instance starts an overlapping one, and the token check refuses every late release.",
        },
        proof: "releases_refused",
        turn: &["claim_ttl_ms"],
    },
    Preset {
        name: "redis-down",
        title: "Redis is down",
        row: Row {
            link: "preset=redis-down",
            claims: &[REDIS_FAILED, REFRESHED],
            words: "Fail open and the refresh goes on, as long as Redis fails fast; fail closed and nobody may refresh.",
        },
        proof: "redis_errors",
        turn: &["redis_error"],
    },
    Preset {
        name: "redis-hang",
        title: "Redis hangs",
        row: Row {
            link: "preset=redis-hang",
            claims: &[REDIS_FAILED, EVERYONE_TIMED_OUT],
            words: "A Redis that hangs holds every command for the client's timeout: with a long one, failing open still times everyone out. A short timeout and a breaker let the refresh go on.",
        },
        proof: "timeouts",
        turn: &["redis_timeout_ms", "redis_breaker_ms", "redis_error"],
    },
    Preset {
        name: "retry-storm",
        title: "A retry storm",
        row: Row {
            link: "preset=retry-storm",
            claims: &[RETRIES_CALLED],
            words: "Callers retry a failing origin: with no coalescing retries are origin calls of their own, up to (1 + retries) times the load; with singleflight the retries join the flight already running.",
        },
        proof: "recomputes",
        turn: &["singleflight", "retries", "retry_backoff_ms"],
    },
    Preset {
        name: "open-loop",
        title: "Users keep arriving",
        row: Row {
            link: "preset=open-loop",
            claims: &[TURNED_AWAY],
            words: "Open-loop traffic does not slow down when the service does: while the origin hangs, the threads fill, the accept queue backs up and requests are turned away. A closed-loop test hides this.",
        },
        proof: "rejected",
        turn: &["arrivals", "rate_per_s", "faults"],
    },
    Preset {
        name: "hot-key",
        title: "A hot key at Redis",
        row: Row {
            link: "preset=hot-key",
            claims: &[QUEUED_AT_REDIS],
            words: "Every read of one hot key is a command on one Redis: at its throughput the queue, not the origin, sets the latency. A short local copy in each instance brings it back.",
        },
        proof: "p99_ms",
        turn: &["local_cache_ms", "redis_ops_per_ms"],
    },
    Preset {
        name: "cold-skew",
        title: "A cold cache, skewed keys",
        row: Row {
            link: "preset=cold-skew",
            claims: &[MERGED, SHED, BOUNDED],
            words: "After a restart a few keys are hot: coalescing merges the requests that share them, and admission bounds the rest. Do both.",
        },
        proof: "admission_shed",
        turn: &["singleflight", "claim", "admission"],
    },
    Preset {
        name: "cold",
        title: "A cold cache",
        row: Row {
            link: "preset=cold",
            claims: &[LITTLE_MERGED, SHED, BOUNDED],
            words: "After a restart the misses are for many keys, equally popular here: little to coalesce. Admission bounds the origin and sheds the rest at once; with skewed keys, do both.",
        },
        proof: "admission_shed",
        turn: &["admission", "admission_wait_ms"],
    },
    Preset {
        name: "jitter",
        title: "TTL jitter",
        row: Row {
            link: "preset=jitter",
            claims: &[],
            words: "Keys written together expire together unless their TTLs are spread.",
        },
        proof: "origin_peak_concurrency",
        turn: &["jitter"],
    },
    Preset {
        name: "swr",
        title: "Nobody waits on a lock",
        row: Row {
            link: "preset=swr",
            claims: &[STALE, NO_TIMEOUTS],
            words: "Stale answers go out at once; the claim guards only the refresh, so a dead holder never stalls a request. The stale copy lives in Redis: an outage leaves none to serve.",
        },
        proof: "stale_served",
        turn: &["holder_crash", "redis_down"],
    },
    Preset {
        name: "xfetch",
        title: "Early refresh (XFetch)",
        row: Row {
            link: "preset=xfetch",
            claims: &[NO_MISS],
            words: "Readers refresh a hot key before it expires, the earlier the busier the key, so nobody meets a miss; with no lock a few instances may refresh at once.",
        },
        proof: "misses",
        turn: &["xfetch_beta", "claim"],
    },
    Preset {
        name: "late-writer",
        title: "A late holder writes old data",
        row: Row {
            link: "preset=late-writer",
            claims: &[OVERLAPS, OLDER_LANDED],
            words: "The claim expires under a slow recompute, another instance recomputes too, and the older value lands last. Turn on fenced writes and they refuse it.",
        },
        proof: "stale_overwrites",
        turn: &["fenced_writes", "claim_ttl_ms"],
    },
    Preset {
        name: "cheap",
        title: "A cheap recompute",
        row: Row {
            link: "preset=cheap",
            claims: &[UNCLAIMED, NO_TIMEOUTS],
            words: "One copy per instance of a 20 ms query is no load: singleflight alone is enough, with nothing to poll and less Redis load.",
        },
        proof: "p99_ms",
        turn: &["claim"],
    },
];

/// Two designs on the same traffic: the A/B view's presets. Both sides run
/// the same fleet and seed; `metric` is the counter the question is about
/// and `winner` the side that is better on it, as `shows` claims: a claim
/// of the winner's run against the other side's ([`crate::claims::Run::against`]),
/// checked by the tests on every seed.
#[derive(Clone, Copy, Debug)]
pub struct Comparison {
    pub name: &'static str,
    pub question: &'static str,
    pub a_label: &'static str,
    pub b_label: &'static str,
    pub metric: &'static str,
    pub winner: char,
    /// What the winner's run shows against the other side's.
    pub shows: Claim,
    /// The view offers the recompute-cost control (both sides' recompute).
    pub cost_control: bool,
    a: fn() -> Scenario,
    b: fn() -> Scenario,
}

impl Comparison {
    pub fn a(&self) -> Scenario {
        (self.a)()
    }
    pub fn b(&self) -> Scenario {
        (self.b)()
    }
}

fn c_losers_wait() -> Scenario {
    Scenario {
        stale_ms: 60_000,
        holder_crash: true,
        ..Scenario::default()
    }
}
fn c_nobody_waits() -> Scenario {
    Scenario {
        holder_crash: true,
        ..named("swr")
    }
}
fn c_fail_closed() -> Scenario {
    Scenario {
        redis_error: RedisErrorPolicy::Closed,
        ..named("redis-down")
    }
}
fn c_no_jitter() -> Scenario {
    Scenario {
        jitter: 0.0,
        ..named("jitter")
    }
}
fn c_sync_refresh() -> Scenario {
    Scenario {
        instances: 10,
        threads: 20,
        workload: Workload::Steady,
        value_ttl_ms: 5000,
        stale_ms: 60_000,
        duration_ms: 20_000,
        think_ms: 100,
        ..Scenario::default()
    }
}
fn c_swr_refresh() -> Scenario {
    Scenario {
        stale_while_revalidate: true,
        ..c_sync_refresh()
    }
}
fn c_claim_only() -> Scenario {
    Scenario {
        claim: ClaimMode::Inner,
        xfetch_beta: 0.0,
        ..named("xfetch")
    }
}
fn c_early_refresh() -> Scenario {
    Scenario {
        claim: ClaimMode::Inner,
        ..named("xfetch")
    }
}

pub const COMPARISONS: [Comparison; 8] = [
    Comparison {
        name: "layered",
        question: "Singleflight alone, or singleflight with the claim inside?",
        a_label: "singleflight only",
        b_label: "singleflight + claim",
        metric: "recomputes",
        winner: 'b',
        shows: FEWER_RECOMPUTES_THAN_THEN,
        cost_control: false,
        a: || named("singleflight"),
        b: || named("burst"),
    },
    Comparison {
        name: "claim-order",
        question: "The claim inside singleflight, or outside it?",
        a_label: "claim outside",
        b_label: "claim inside",
        metric: "claim_attempts",
        winner: 'b',
        shows: FEWER_ATTEMPTS_THAN_THEN,
        cost_control: false,
        a: || named("claim-outer"),
        b: || named("burst"),
    },
    Comparison {
        name: "losers",
        question: "When the claim holder dies: losers that wait on the lock, or nobody waits on a lock?",
        a_label: "losers wait (bounded)",
        b_label: "claim only on the refresh",
        metric: "timeouts",
        winner: 'b',
        shows: FEWER_TIMEOUTS_THAN_THEN,
        cost_control: false,
        a: c_losers_wait,
        b: c_nobody_waits,
    },
    Comparison {
        name: "redis-outage",
        question: "Redis is down: fail closed or fail open?",
        a_label: "fail closed",
        b_label: "fail open",
        metric: "timeouts",
        winner: 'b',
        shows: FEWER_TIMEOUTS_THAN_THEN,
        cost_control: false,
        a: c_fail_closed,
        b: || named("redis-down"),
    },
    Comparison {
        name: "jitter",
        question: "Keys written together: the same TTL, or a jittered one?",
        a_label: "no jitter",
        b_label: "TTL jitter",
        metric: "origin_peak_concurrency",
        winner: 'b',
        shows: LOWER_PEAK_THAN_THEN,
        cost_control: false,
        a: c_no_jitter,
        b: || named("jitter"),
    },
    Comparison {
        name: "swr",
        question: "A stale hot key: refresh while the callers wait, or answer stale and refresh behind?",
        a_label: "synchronous refresh",
        b_label: "stale-while-revalidate",
        metric: "p99_ms",
        winner: 'b',
        shows: LOWER_P99_THAN_THEN,
        cost_control: false,
        a: c_sync_refresh,
        b: c_swr_refresh,
    },
    Comparison {
        name: "xfetch",
        question: "A hot key expiring: the claim alone, or early refresh as well?",
        a_label: "claim at expiry",
        b_label: "early refresh (XFetch)",
        metric: "misses",
        winner: 'b',
        shows: FEWER_MISSES_THAN_THEN,
        cost_control: false,
        a: c_claim_only,
        b: c_early_refresh,
    },
    Comparison {
        name: "cost",
        question: "Is the claim worth it? For a cheap query singleflight alone answers the median sooner (the claim's losers poll for the value), though the claim's p99 is lower; raise the recompute's cost and watch where the claim starts to pay.",
        a_label: "singleflight only",
        b_label: "singleflight + claim",
        // At its own 20 ms cost; the A/B view's cost control flips it.
        metric: "p50_ms",
        winner: 'a',
        shows: LOWER_P50_THAN_THEN,
        cost_control: true,
        a: || named("cheap"),
        b: p_cheap_claimed,
    },
];
fn p_cheap_claimed() -> Scenario {
    Scenario {
        claim: ClaimMode::Inner,
        ..named("cheap")
    }
}

/// A preset's scenario, by the name the core gives it.
fn named(name: &str) -> Scenario {
    preset(name).expect("every preset of the catalogue is named in the core")
}

pub fn comparison(name: &str) -> Option<&'static Comparison> {
    COMPARISONS.iter().find(|c| c.name == name)
}

/// What the losers of the claim can do, side by side on the same traffic:
/// `s` with each loser policy, and waiting once more with a poll five
/// times shorter (a loser is answered up to one poll after the value
/// lands; a shorter poll costs GETs). Serving stale needs a stale window:
/// a scenario without one gets the `stale` preset's minute. The labels
/// carry the poll intervals they ran with.
pub fn loser_choices(s: &Scenario) -> Vec<(String, Scenario)> {
    let with = |loser: LoserPolicy| Scenario { loser, ..s.clone() };
    let stale = Scenario {
        stale_ms: if s.stale_ms == 0 { 60_000 } else { s.stale_ms },
        ..with(LoserPolicy::Stale)
    };
    let fast = (s.poll_ms / 5).max(1);
    vec![
        ("serve stale".to_string(), stale),
        (
            format!("wait, poll {} ms", s.poll_ms),
            with(LoserPolicy::Wait),
        ),
        (
            format!("wait, poll {fast} ms"),
            Scenario {
                poll_ms: fast,
                ..with(LoserPolicy::Wait)
            },
        ),
        ("degrade".to_string(), with(LoserPolicy::Degrade)),
        ("recompute anyway".to_string(), with(LoserPolicy::Compute)),
    ]
}

#[cfg(test)]
mod loser_tests {
    use super::*;

    #[test]
    fn every_preset_has_words_and_every_word_a_preset() {
        // The core names the scenarios; the catalogue gives each its words,
        // in the same order (the page lists them in it).
        let words: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
        assert_eq!(words, preset_names());
        for p in PRESETS {
            assert_eq!(p.row.link, format!("preset={}", p.name));
        }
        for c in COMPARISONS {
            // Every side builds (a side is a preset or made from one).
            assert!(c.a().validated().is_ok(), "{}: side a", c.name);
            assert!(c.b().validated().is_ok(), "{}: side b", c.name);
        }
    }

    #[test]
    fn the_losers_choices_trade_latency_load_and_staleness() {
        let runs: Vec<(String, stampede::Report)> = loser_choices(&Scenario::default())
            .into_iter()
            .map(|(l, s)| (l, stampede::Fleet::new(&s, 1).run()))
            .collect();
        let r = |label: &str| &runs.iter().find(|(l, _)| l == label).unwrap().1;
        let (stale, wait, fast, degrade, anyway) = (
            r("serve stale"),
            r("wait, poll 50 ms"),
            r("wait, poll 10 ms"),
            r("degrade"),
            r("recompute anyway"),
        );
        // Stale and degrade answer at once; waiting answers with the value.
        assert!(stale.stale_served > 0 && stale.p50_ms < wait.p50_ms);
        assert!(degrade.degraded > 0 && degrade.p50_ms < wait.p50_ms);
        assert_eq!((wait.stale_served, wait.degraded), (0, 0));
        // Recomputing anyway loads the origin: one per instance, not one.
        assert_eq!(wait.recomputes, 1);
        assert_eq!(anyway.recomputes, 40);
        assert!(anyway.origin_peak_concurrency > wait.origin_peak_concurrency);
        // A shorter poll: more GETs, a shorter wait.
        assert!(fast.redis_round_trips > wait.redis_round_trips);
        assert!(fast.max_wait_ms < wait.max_wait_ms);
        // A stale window of the scenario's own is kept.
        let own = loser_choices(&Scenario {
            stale_ms: 500,
            ..Scenario::default()
        });
        assert_eq!(own[0].1.stale_ms, 500);
        // A poll of 1 ms stays 1 ms, never 0.
        let tiny = loser_choices(&Scenario {
            poll_ms: 1,
            ..Scenario::default()
        });
        assert_eq!(tiny[2].1.poll_ms, 1);
    }
}
