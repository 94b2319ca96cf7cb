//! The page's reference questions (`data-question` 1 to 15) as the kit
//! asks them: levels, red flags, follow-ups and curveballs of each.
//!
//! The facts are the page's own answers (`index.html`, `#questions`); the
//! words here are for the interviewer: what a candidate at each level
//! names. A number in a point or a red flag's reason is one its run shows
//! exactly on every seed (a host test checks it); elsewhere there is none.
//! A point's run shows good practice or a plain fact, never a red flag's
//! mistake: those runs belong to the red flags (and to follow-ups that
//! show the same mistake).

use super::{said, shown, FollowUp, Level, Point, Question, RedFlag, Throw};
use crate::claims::Row;
use crate::drill::{at_least, at_most, exactly};
use crate::lesson::{
    CLAIM_SHORT, COALESCED, CORRUPTED, CRASHED, DEAD_CLAIM_OUTLASTED, EVERY_MISS_CLAIMED,
    EVERY_PINNED, MORE_THAN_ONE_PER_INSTANCE, NEGATIVE_HITS, NOTHING_SHARED, NO_RECOMPUTES,
    NO_STALE, NO_WINS, OVERLAPS, OVERWRITES, PER_INSTANCE, REDIS_FAILED, REFUSED_TAKEN, REMEMBERED,
    SWAMPED, TIMEOUTS, TIMEOUT_OUTSIDE, UNCLAIMED,
};
use stampede::Metric;

const fn levels(basics: Level, solid: Level, deeper: Level) -> [Level; 3] {
    [basics, solid, deeper]
}

const fn basics(gist: &'static str, names: &'static [Point]) -> Level {
    Level {
        name: "basics",
        gist,
        names,
    }
}

const fn solid(gist: &'static str, names: &'static [Point]) -> Level {
    Level {
        name: "solid",
        gist,
        names,
    }
}

const fn deeper(gist: &'static str, names: &'static [Point]) -> Level {
    Level {
        name: "deeper",
        gist,
        names,
    }
}

// ---- red flags shared by several questions ------------------------------------

/// Keeping a failed flight's result: the failure outlives the failure.
const REMEMBER_FAILURE: RedFlag = RedFlag {
    says: "Keep the failed result in the map, so the callers after it stop retrying.",
    row: Row {
        link: "preset=failure&pf=remember-failure",
        claims: &[at_least(Metric::RememberedFailures, 1.0).claim(), REMEMBERED],
        words: "A blip becomes a sticky outage: later callers get the old error after the origin has recovered.",
    },
    lesson: "remember-failure",
    fixed: "preset=failure",
};

/// A negative cache as long as a value's TTL: the error is an answer.
const LONG_NEGATIVE_CACHE: RedFlag = RedFlag {
    says: "Cache the error like a value, for the value's whole TTL.",
    row: Row {
        link: "preset=failure&nt=2000",
        claims: &[at_least(Metric::Errors, 800.0).claim(), NEGATIVE_HITS],
        words: "An error is not an answer: cached that long, it reaches callers the recovered origin could have served.",
    },
    lesson: "failure",
    fixed: "preset=failure",
};

/// Nothing bounds a wait on a flight that never settles.
const NO_DEADLINE: RedFlag = RedFlag {
    says: "A waiter stays until the computation finishes; it will finish.",
    row: Row {
        link: "preset=hang&pf=no-deadline",
        claims: &[at_least(Metric::Pinned, 1.0).claim(), EVERY_PINNED],
        words: "Behind a hung origin every caller is then pinned, long past its deadline.",
    },
    lesson: "no-deadline",
    fixed: "preset=hang",
};

/// A flight key that is not the cache key: nothing coalesces.
const KEY_MISMATCH: RedFlag = RedFlag {
    says: "The flight map may key its entries its own way; it is only local.",
    row: Row {
        link: "pf=key-mismatch",
        claims: &[exactly(Metric::ClaimAttempts, 8000.0).claim(), NOTHING_SHARED],
        words: "Threads that miss the same entry never find each other's flight: one claim attempt per thread, 8000.",
    },
    lesson: "key-mismatch",
    fixed: "preset=burst",
};

/// A plain DEL for the release: a late holder frees another's claim.
const PLAIN_DEL: RedFlag = RedFlag {
    says: "Release the claim with a plain DEL: it is yours.",
    row: Row {
        link: "preset=short-ttl",
        claims: &[at_least(Metric::ReleasesRefusedTaken, 1.0).claim(), REFUSED_TAKEN],
        words: "A holder can outlive its claim; its DEL then frees another instance's claim for a third.",
    },
    lesson: "short-ttl",
    fixed: "preset=short-ttl&ct=5000",
};

/// A TTL lock taken as a correctness lock: a late holder's write lands.
const TTL_LOCK_IS_SAFE: RedFlag = RedFlag {
    says: "The claim makes the write safe: one writer at a time.",
    row: Row {
        link: "preset=late-writer",
        claims: &[at_least(Metric::StaleOverwrites, 1.0).claim(), OVERWRITES, CLAIM_SHORT, OVERLAPS],
        words: "A recompute that outlives its claim writes while another instance holds it: older values land over newer ones.",
    },
    lesson: "late-writer",
    fixed: "preset=late-writer&fw=1",
};

/// A claim TTL below the work: a second holder starts the same recompute.
const SHORT_CLAIM_TTL: RedFlag = RedFlag {
    says: "Size the claim's TTL to a typical recompute.",
    row: Row {
        link: "preset=short-ttl",
        claims: &[at_least(Metric::OverlappingRecomputes, 1.0).claim(), OVERLAPS],
        words: "Under the slower recomputes the claim expires mid-work, and another instance starts the same one.",
    },
    lesson: "short-ttl",
    fixed: "preset=short-ttl&ct=5000",
};

/// Questions 1 to 15, in the page's order.
pub const REFERENCE: [Question; 15] = [
    Question {
        number: 1,
        asks: "The shared computation throws. What happens to the waiters, and to the in-flight entry?",
        levels: levels(
            basics(
                "Knows the failure goes to the waiters attached to it, and only to them.",
                &[
                    shown(
                        "Every waiter attached at that moment gets the failure: there is no value.",
                        "preset=failure",
                        &[at_least(Metric::Errors, 1.0).claim()],
                    ),
                    shown(
                        "The entry leaves the map as the flight settles; the next request starts afresh.",
                        "preset=failure",
                        &[exactly(Metric::RememberedFailures, 0.0).claim()],
                    ),
                ],
            ),
            solid(
                "Says why the entry must go, and that damping retries is a separate, deliberate choice.",
                &[
                    said("Left in the map, a brief blip becomes a lasting outage for that key."),
                    shown(
                        "Once the origin recovers, the next flight writes the value again.",
                        "preset=failure",
                        &[at_least(Metric::ValuesWritten, 1.0).claim()],
                    ),
                    shown(
                        "To damp retries against a failing origin: a short negative-cache entry, on purpose.",
                        "preset=failure&nt=500",
                        &[at_least(Metric::NegativeHits, 1.0).claim()],
                    ),
                ],
            ),
            deeper(
                "Tells an error from an answer and bounds what a failure costs the origin.",
                &[
                    said("An error is cached briefly or not at all; a not-found is an answer, cached like a value."),
                    shown(
                        "Retries coalesced in the map join a running attempt instead of each calling the origin.",
                        "preset=retry-storm&sf=1",
                        &[at_most(Metric::Recomputes, 50.0).claim()],
                    ),
                    said("A panic is the same path: the computation failed, and every waiter is told so."),
                ],
            ),
        ),
        red_flags: &[REMEMBER_FAILURE, LONG_NEGATIVE_CACHE],
        follow_ups: &[
            FollowUp {
                question: 7,
                row: Row {
                    link: "preset=failure",
                    claims: &[exactly(Metric::RememberedFailures, 0.0).claim()],
                    words: "Attached waiters get it; one arriving a moment later finds no flight and tries again.",
                },
            },
            FollowUp {
                question: 8,
                row: Row {
                    link: "preset=failure&nt=500",
                    claims: &[at_least(Metric::NegativeHits, 1.0).claim()],
                    words: "A not-found is cached like a value; an error briefly, if at all.",
                },
            },
            FollowUp {
                question: 4,
                row: Row {
                    link: "preset=failure",
                    claims: &[at_least(Metric::Errors, 1.0).claim()],
                    words: "A panic is the computation failing: the same answer to every waiter, the entry gone.",
                },
            },
        ],
        throws: &[
            Throw {
                kind: "origin",
                ask: "The origin starts failing now. Who gets the error, and what does the caller after the flight settles do?",
            },
            Throw {
                kind: "origin-hang",
                ask: "The origin hangs instead of failing. When does this flight settle, and with what?",
            },
        ],
    },
    Question {
        number: 2,
        asks: "When is in-process coalescing enough on its own, without a Redis claim?",
        levels: levels(
            basics(
                "Knows singleflight alone leaves one recompute per instance, and when that is harmless.",
                &[
                    shown(
                        "When one recompute per instance does the origin no harm: 40 copies of a cheap query are nothing.",
                        "preset=cheap",
                        &[exactly(Metric::Recomputes, 40.0).claim()],
                    ),
                    said("Singleflight alone has no lock key, no TTL to size, no policy for losers, no release script."),
                ],
            ),
            solid(
                "Counts what the claim costs Redis and knows it is not a latency win.",
                &[
                    shown(
                        "Without the claim Redis sees only the reads and the writes: 8080 round trips.",
                        "preset=cheap",
                        &[exactly(Metric::RedisRoundTrips, 8080.0).claim()],
                    ),
                    said("The claim adds a SET NX, a poll per loser every interval and a release to each miss."),
                    shown(
                        "On a cheap query the claim's losers wait out a poll interval: the median is slower.",
                        "rc=20",
                        &[at_least(Metric::P50Ms, 40.0).claim()],
                    ),
                ],
            ),
            deeper(
                "Knows where the claim starts to pay, and tunes its cost.",
                &[
                    shown(
                        "A shorter poll gives the losers their wait back, at the price of more polls.",
                        "rc=20&poll=20",
                        &[at_most(Metric::P50Ms, 40.0).claim()],
                    ),
                    shown(
                        "The claim pays when the recompute is slow, rate-limited or billed: 1 call for the fleet.",
                        "rc=700",
                        &[exactly(Metric::Recomputes, 1.0).claim()],
                    ),
                    said("Or when the fleet is so large that the instance count alone is the load."),
                ],
            ),
        ),
        red_flags: &[RedFlag {
            says: "Singleflight alone is enough, however slow the recompute.",
            row: Row {
                link: "rc=700&c=off",
                claims: &[exactly(Metric::Recomputes, 40.0).claim(), COALESCED, PER_INSTANCE, TIMEOUTS],
                words: "Each instance still calls the origin: 40 slow recomputes at once, and callers miss their deadline.",
            },
            lesson: "singleflight",
            fixed: "rc=700",
        }],
        follow_ups: &[
            FollowUp {
                question: 3,
                row: Row {
                    link: "preset=burst",
                    claims: &[exactly(Metric::ClaimAttempts, 40.0).claim()],
                    words: "With both layers, only each instance's leader claims: the claim's cost scales with instances.",
                },
            },
            FollowUp {
                question: 13,
                row: Row {
                    link: "preset=redis-down",
                    claims: &[exactly(Metric::Recomputes, 40.0).claim()],
                    words: "Without Redis the fleet is back to singleflight alone: one recompute per instance.",
                },
            },
            FollowUp {
                question: 12,
                row: Row {
                    link: "preset=holder-crash",
                    claims: &[exactly(Metric::ClaimWins, 2.0).claim()],
                    words: "The claim brings a TTL to size and a dead holder to wait out.",
                },
            },
        ],
        throws: &[
            Throw {
                kind: "redis",
                ask: "Redis just went down. What changes for singleflight alone, and what for the claim?",
            },
            Throw {
                kind: "ttl-sync",
                ask: "A deploy re-warmed every key with one TTL. Is one recompute per instance per key still harmless when they all expire together?",
            },
        ],
    },
    Question {
        number: 3,
        asks: "Why singleflight outside and the claim inside, not the other way round?",
        levels: levels(
            basics(
                "Knows the outer layer decides how many callers reach Redis.",
                &[
                    shown(
                        "Singleflight outside: only each instance's leader claims, 40 claim attempts.",
                        "preset=burst",
                        &[exactly(Metric::ClaimAttempts, 40.0).claim()],
                    ),
                    shown(
                        "Every thread still reads the value first, so both orders make the same reads: 8000 misses.",
                        "preset=burst",
                        &[exactly(Metric::Misses, 8000.0).claim()],
                    ),
                ],
            ),
            solid(
                "Says what the order saves after the miss: claims, polls, releases and the wait.",
                &[
                    shown(
                        "The other threads wait on the local flight, for free: 7960 share their leader's value.",
                        "preset=burst",
                        &[exactly(Metric::Shared, 7960.0).claim()],
                    ),
                    shown(
                        "Only the leader polls and releases, so Redis sees about one command per request.",
                        "preset=burst",
                        &[at_most(Metric::RedisRoundTrips, 8300.0).claim()],
                    ),
                ],
            ),
            deeper(
                "Sees the read path whole and what silently undoes the outer layer.",
                &[
                    said("Moving the read inside the flight would cut the reads to one per flight too."),
                    said("The outer layer only works if its key is the cache key: one function builds both."),
                ],
            ),
        ),
        red_flags: &[
            RedFlag {
                says: "Take the Redis claim first, then coalesce: the order makes no difference.",
                row: Row {
                    link: "preset=claim-outer",
                    claims: &[exactly(Metric::ClaimAttempts, 8000.0).claim(), MORE_THAN_ONE_PER_INSTANCE, EVERY_MISS_CLAIMED],
                    words: "Every thread then claims and polls on its own: 8000 claim attempts for one recompute.",
                },
                lesson: "claim-outer",
                fixed: "preset=burst",
            },
            KEY_MISMATCH,
        ],
        follow_ups: &[
            FollowUp {
                question: 15,
                row: Row {
                    link: "pf=key-mismatch",
                    claims: &[exactly(Metric::ClaimAttempts, 8000.0).claim()],
                    words: "A flight key off by a character puts every thread at the claim.",
                },
            },
            FollowUp {
                question: 2,
                row: Row {
                    link: "preset=cheap",
                    claims: &[exactly(Metric::Recomputes, 40.0).claim()],
                    words: "Whether the inner layer is needed at all: one recompute per instance may be harmless.",
                },
            },
        ],
        throws: &[
            Throw {
                kind: "holder",
                ask: "The instance holding the claim just died. Who waits on whom now, in each order?",
            },
            Throw {
                kind: "redis-hang",
                ask: "Redis stops answering. How many callers wait on a Redis command with singleflight outside, and how many with it inside?",
            },
        ],
    },
    Question {
        number: 4,
        asks: "The leader panics, or its caller is cancelled before the work starts. What happens to its followers?",
        levels: levels(
            basics(
                "Tells a failed computation from a caller that left.",
                &[
                    shown(
                        "A panic is the computation failing: every attached waiter gets the failure.",
                        "preset=failure",
                        &[at_least(Metric::Errors, 1.0).claim()],
                    ),
                    shown(
                        "The entry leaves the map as for any error; the next caller starts afresh.",
                        "preset=failure",
                        &[exactly(Metric::RememberedFailures, 0.0).claim()],
                    ),
                ],
            ),
            solid(
                "Knows followers are never stranded by a leader that leaves.",
                &[
                    shown(
                        "A leader cancelled before the work starts hands the flight to its oldest follower.",
                        "rc=1500&sp=1000",
                        &[at_least(Metric::Handovers, 1.0).claim()],
                    ),
                    said("After a panic nobody is promoted: there is no work left to finish."),
                ],
            ),
            deeper(
                "Separates the work from every caller, and knows what the promoted follower carries.",
                &[
                    shown(
                        "Once started, the work belongs to no caller and runs to its end: 1 value written.",
                        "dl=100",
                        &[exactly(Metric::ValuesWritten, 1.0).claim()],
                    ),
                    said("The promoted follower keeps its own deadline; a claim the leader asked for is released with the leader's token."),
                    said("The group catches the panic and answers each waiter with it, rather than crashing them."),
                ],
            ),
        ),
        red_flags: &[
            RedFlag {
                says: "After a panic, keep the entry, so nobody re-runs a computation that crashes.",
                row: Row {
                    words: "The failure is then handed out after its flight ended: a blip becomes an outage for the key.",
                    ..REMEMBER_FAILURE.row
                },
                ..REMEMBER_FAILURE
            },
            RedFlag {
                says: "The followers simply wait for the leader to come back.",
                row: Row {
                    words: "With no deadline of their own, every follower is pinned behind a leader that never answers.",
                    ..NO_DEADLINE.row
                },
                ..NO_DEADLINE
            },
        ],
        follow_ups: &[
            FollowUp {
                question: 1,
                row: Row {
                    link: "preset=failure",
                    claims: &[exactly(Metric::RememberedFailures, 0.0).claim()],
                    words: "The failure goes to the attached waiters, the entry leaves the map.",
                },
            },
            FollowUp {
                question: 5,
                row: Row {
                    link: "dl=100",
                    claims: &[exactly(Metric::ValuesWritten, 1.0).claim()],
                    words: "A waiter leaving never cancels the work: it runs on and fills the cache.",
                },
            },
        ],
        throws: &[
            Throw {
                kind: "holder",
                ask: "The claim holder died mid-recompute. Which follower takes over, in its process and across the fleet, and when?",
            },
            Throw {
                kind: "origin",
                ask: "The origin starts failing, as a panic would. What do the followers get, and what is left in the map?",
            },
        ],
    },
    Question {
        number: 5,
        asks: "A waiter gives up at its deadline. Must it cancel the computation?",
        levels: levels(
            basics(
                "Knows the waiter detaches and the work goes on.",
                &[
                    shown(
                        "No: it detaches and answers its own caller; all 8000 callers give up here.",
                        "dl=100",
                        &[exactly(Metric::Timeouts, 8000.0).claim()],
                    ),
                    shown(
                        "The work goes on for whoever still waits, and fills the cache: 1 value written.",
                        "dl=100",
                        &[exactly(Metric::ValuesWritten, 1.0).claim()],
                    ),
                ],
            ),
            solid(
                "Says why cancelling is wrong and that the work needs bounds of its own.",
                &[
                    said("Cancelling throws away a nearly finished recompute and starts the stampede again."),
                    shown(
                        "An origin timeout bounds the work's wait on the origin, and frees the flight and the claim.",
                        "preset=hang",
                        &[exactly(Metric::OriginTimeouts, 1.0).claim()],
                    ),
                ],
            ),
            deeper(
                "Knows what a timeout does not stop, and what keeps new calls off a bad origin.",
                &[
                    said("The timeout ends the wait, not the call: it runs on at the origin until the origin stops it."),
                    shown(
                        "A circuit breaker or a short negative cache keeps new calls from piling onto a failing origin.",
                        "preset=failure&nt=500",
                        &[at_least(Metric::NegativeHits, 1.0).claim()],
                    ),
                ],
            ),
        ),
        red_flags: &[NO_DEADLINE],
        follow_ups: &[
            FollowUp {
                question: 6,
                row: Row {
                    link: "preset=hang",
                    claims: &[exactly(Metric::Pinned, 0.0).claim()],
                    words: "A stuck flight is ended by bounds, or dropped with Forget; nobody stays pinned.",
                },
            },
            FollowUp {
                question: 12,
                row: Row {
                    link: "preset=hang",
                    claims: &[exactly(Metric::OverlappingRecomputes, 0.0).claim()],
                    words: "The claim outlives the origin timeout, so a hung call never lets a second holder in.",
                },
            },
            FollowUp {
                question: 4,
                row: Row {
                    link: "rc=1500&sp=1000",
                    claims: &[at_least(Metric::Handovers, 1.0).claim()],
                    words: "A leader that leaves before the work starts hands its flight on.",
                },
            },
        ],
        throws: &[Throw {
            kind: "origin-hang",
            ask: "The origin hangs now. Who is still waiting at their deadline, and what is still running after it?",
        }],
    },
    Question {
        number: 6,
        asks: "What is Forget for, and what goes wrong if an old flight removes a new one?",
        levels: levels(
            basics(
                "Knows what Forget does and when to call it.",
                &[
                    said("Forget drops the entry so the next call starts afresh instead of joining one known to be stuck or bad."),
                    shown(
                        "Deadlines end every wait on a stuck flight: nobody stays pinned.",
                        "preset=hang",
                        &[exactly(Metric::Pinned, 0.0).claim()],
                    ),
                ],
            ),
            solid(
                "Names the cleanup race.",
                &[
                    said("An old flight finishing late and deleting the key removes the newer flight that replaced it."),
                    said("The next callers then start a third: remove an entry only if it is still yours."),
                ],
            ),
            deeper(
                "Sees the same ownership rule in the claim, and what bounds the stuck call.",
                &[
                    said("It is the claim's rule too: delete only what still holds your token."),
                    shown(
                        "The origin timeout settles the stuck flight itself, and frees its claim.",
                        "preset=hang",
                        &[exactly(Metric::OriginTimeouts, 1.0).claim()],
                    ),
                    said("Forgetting a flight that still runs lets a second one start: the origin sees both."),
                ],
            ),
        ),
        red_flags: &[
            RedFlag {
                says: "An old flight may delete its key unconditionally when it finishes.",
                row: Row {
                    words: "A late finisher then removes its replacement; here releases found another holder's claim, which a plain delete would have freed.",
                    ..PLAIN_DEL.row
                },
                ..PLAIN_DEL
            },
            RedFlag {
                says: "A stuck flight will finish eventually; nothing needs to bound it.",
                row: Row {
                    words: "Behind a hung origin every caller then waits on it for good.",
                    ..NO_DEADLINE.row
                },
                ..NO_DEADLINE
            },
        ],
        follow_ups: &[
            FollowUp {
                question: 10,
                row: Row {
                    link: "preset=short-ttl",
                    claims: &[at_least(Metric::ReleasesRefusedTaken, 1.0).claim()],
                    words: "Compare-and-delete by token: the same rule for the claim.",
                },
            },
            FollowUp {
                question: 5,
                row: Row {
                    link: "dl=100",
                    claims: &[exactly(Metric::ValuesWritten, 1.0).claim()],
                    words: "The work is bounded by its own timeout, not by the waiters leaving.",
                },
            },
        ],
        throws: &[Throw {
            kind: "origin-hang",
            ask: "The origin hangs now. Would you Forget this flight, and what happens to the call it leaves running?",
        }],
    },
    Question {
        number: 7,
        asks: "Does every waiter see the leader's error?",
        levels: levels(
            basics(
                "Knows who gets the error and who does not.",
                &[
                    shown(
                        "Every waiter attached when the flight settles gets the error.",
                        "preset=failure",
                        &[at_least(Metric::Errors, 1.0).claim()],
                    ),
                    shown(
                        "One arriving a moment later finds no flight and starts a new attempt.",
                        "preset=failure",
                        &[exactly(Metric::RememberedFailures, 0.0).claim()],
                    ),
                ],
            ),
            solid(
                "Says what that buys: a failure does not outlive the failure.",
                &[
                    shown(
                        "Once the origin recovers, the next attempt writes the value again.",
                        "preset=failure",
                        &[at_least(Metric::ValuesWritten, 1.0).claim()],
                    ),
                    said("The waiters get the error itself, not a timeout: they can tell failure from slowness."),
                ],
            ),
            deeper(
                "Damps retries on purpose, not by accident.",
                &[
                    shown(
                        "A short negative cache shares a failure beyond its flight, for a bounded time.",
                        "preset=failure&nt=500",
                        &[at_least(Metric::NegativeHits, 1.0).claim()],
                    ),
                    shown(
                        "Retries that join a running flight make no origin call of their own.",
                        "preset=retry-storm&sf=1",
                        &[at_most(Metric::Recomputes, 50.0).claim()],
                    ),
                ],
            ),
        ),
        red_flags: &[
            RedFlag {
                says: "The next caller should get the same error from the map, to spare the origin.",
                row: Row {
                    words: "The error then outlives the failure: callers get it after the origin has recovered.",
                    ..REMEMBER_FAILURE.row
                },
                ..REMEMBER_FAILURE
            },
            RedFlag {
                says: "Cache the error so later callers see it too, as long as a value would live.",
                ..LONG_NEGATIVE_CACHE
            },
        ],
        follow_ups: &[
            FollowUp {
                question: 1,
                row: Row {
                    link: "preset=failure&pf=remember-failure",
                    claims: &[at_least(Metric::RememberedFailures, 1.0).claim()],
                    words: "Kept in the map, the error becomes a sticky outage.",
                },
            },
            FollowUp {
                question: 14,
                row: Row {
                    link: "pf=mutable-result",
                    claims: &[at_least(Metric::Corrupted, 1.0).claim()],
                    words: "The waiters share one result, an error or a value: it must not be changed.",
                },
            },
        ],
        throws: &[Throw {
            kind: "origin",
            ask: "The origin starts failing now. Which waiters see this error, and which will try again?",
        }],
    },
    Question {
        number: 8,
        asks: "Stampede, cold start, cache penetration, avalanche: what is the difference?",
        levels: levels(
            basics(
                "Tells the four apart by what misses, and names the fix of each.",
                &[
                    shown(
                        "A stampede is many misses for one hot key: coalescing and the claim take it to 1 recompute.",
                        "preset=burst",
                        &[exactly(Metric::Recomputes, 1.0).claim()],
                    ),
                    shown(
                        "A cold start is thousands of different keys at once: admission control bounds the origin.",
                        "preset=cold",
                        &[at_least(Metric::AdmissionShed, 1.0).claim()],
                    ),
                    shown(
                        "An avalanche is many keys expiring together: TTL jitter spreads them.",
                        "preset=jitter",
                        &[at_most(Metric::OriginPeakConcurrency, 60.0).claim()],
                    ),
                ],
            ),
            solid(
                "Knows penetration and that a cold start needs coalescing too.",
                &[
                    said("Penetration is requests for keys that do not exist: a not-found is an answer, cached like a value."),
                    shown(
                        "A real restart is skewed: the hot keys still arrive in bursts, and coalescing answers them.",
                        "preset=cold-skew",
                        &[at_least(Metric::Shared, 200.0).claim()],
                    ),
                ],
            ),
            deeper(
                "Knows where each fix stops working.",
                &[
                    shown(
                        "An error is no answer: cache it briefly, if at all.",
                        "preset=failure&nt=500",
                        &[at_least(Metric::NegativeHits, 1.0).claim()],
                    ),
                    said("A flood of random missing keys misses every cache, a negative one too: validate, or a Bloom filter in front."),
                    said("A deploy that re-warms every key with one TTL undoes the jitter: the wave comes one TTL later."),
                ],
            ),
        ),
        red_flags: &[
            RedFlag {
                says: "Coalescing protects a cold cache as well as a hot key.",
                row: Row {
                    link: "preset=cold&adm=0",
                    claims: &[at_least(Metric::OriginPeakConcurrency, 100.0).claim(), SWAMPED],
                    words: "Most misses are different keys: coalescing merges only the same key, so without admission control the origin is swamped.",
                },
                lesson: "cold",
                fixed: "preset=cold",
            },
            RedFlag {
                says: "Give every key the same TTL: it is simpler to reason about.",
                row: Row {
                    link: "preset=jitter&j=0",
                    claims: &[at_least(Metric::OriginPeakConcurrency, 150.0).claim(), SWAMPED],
                    words: "Keys written together then expire together: the recomputes come in waves past the origin's capacity.",
                },
                lesson: "jitter",
                fixed: "preset=jitter",
            },
        ],
        follow_ups: &[
            FollowUp {
                question: 9,
                row: Row {
                    link: "preset=swr",
                    claims: &[exactly(Metric::StaleServed, 8000.0).claim()],
                    words: "Serving stale during a refresh: nobody waits, if an old answer is acceptable.",
                },
            },
            FollowUp {
                question: 1,
                row: Row {
                    link: "preset=failure",
                    claims: &[exactly(Metric::RememberedFailures, 0.0).claim()],
                    words: "A failure leaves the flight map; caching it is a separate, short, deliberate choice.",
                },
            },
        ],
        throws: &[
            Throw {
                kind: "ttl-sync",
                ask: "A deploy just re-warmed every key with one TTL. Which of the four is this, one TTL from now, and what spreads it?",
            },
            Throw {
                kind: "origin-hang",
                ask: "The origin hangs during a cold start. What bounds the threads waiting on thousands of keys?",
            },
        ],
    },
    Question {
        number: 9,
        asks: "When is stale-while-revalidate not acceptable?",
        levels: levels(
            basics(
                "Knows when an old answer is a wrong answer.",
                &[
                    said("When someone acts on it: a balance, a stock level, a revoked permission, a price at checkout."),
                    shown(
                        "Where slightly old data is fine, nobody waits: 8000 answered stale at once.",
                        "preset=swr",
                        &[exactly(Metric::StaleServed, 8000.0).claim()],
                    ),
                ],
            ),
            solid(
                "Bounds staleness per key, and keeps the refresh guarded.",
                &[
                    said("Bound it: a short stale window, or a synchronous refresh for the keys that must be fresh."),
                    shown(
                        "The claim still guards the refresh behind the stale answers: 1 recompute.",
                        "preset=swr",
                        &[exactly(Metric::Recomputes, 1.0).claim()],
                    ),
                ],
            ),
            deeper(
                "Knows where the stale copy lives and what else serves stale.",
                &[
                    shown(
                        "Without revalidating in the background, a stale window still lets the claim's losers answer at once.",
                        "preset=stale",
                        &[at_least(Metric::StaleServed, 1.0).claim()],
                    ),
                    said("The stale copy lives where the cache lives: an outage of Redis takes it too, unless each process keeps one."),
                ],
            ),
        ),
        red_flags: &[
            RedFlag {
                says: "Stale-while-revalidate keeps answering through a Redis outage.",
                row: Row {
                    link: "preset=swr&rd=1",
                    claims: &[exactly(Metric::StaleServed, 0.0).claim(), NO_STALE],
                    words: "The stale copy lives in Redis: with Redis down there is none to serve, and every caller waits on a recompute.",
                },
                lesson: "redis-down",
                fixed: "preset=swr",
            },
            RedFlag {
                says: "Serving stale makes the claim unnecessary.",
                row: Row {
                    link: "preset=swr&c=off",
                    claims: &[exactly(Metric::Recomputes, 40.0).claim(), UNCLAIMED],
                    words: "The refresh behind the stale answers is still a stampede: each instance refreshes, 40 recomputes.",
                },
                lesson: "swr",
                fixed: "preset=swr",
            },
        ],
        follow_ups: &[
            FollowUp {
                question: 13,
                row: Row {
                    link: "preset=redis-down",
                    claims: &[exactly(Metric::Recomputes, 40.0).claim()],
                    words: "With Redis down, failing open still holds the fleet to one recompute per instance.",
                },
            },
            FollowUp {
                question: 11,
                row: Row {
                    link: "preset=late-writer&fw=1",
                    claims: &[exactly(Metric::StaleOverwrites, 0.0).claim()],
                    words: "Where correctness matters, fencing, not a TTL lock, keeps an older write from landing.",
                },
            },
        ],
        throws: &[
            Throw {
                kind: "redis",
                ask: "Redis just went down. What do the callers get now that the stale copy is gone with it?",
            },
            Throw {
                kind: "holder",
                ask: "The claim holder refreshing behind the stale answers just died. Who notices, and how stale does the value get?",
            },
        ],
    },
    Question {
        number: 10,
        asks: "Why does releasing the claim need a token?",
        levels: levels(
            basics(
                "Knows a holder can outlive its claim.",
                &[
                    said("The claim's value is a random token; the release deletes the key only if it still holds it."),
                    said("A holder can outlive its claim: the TTL runs out while it computes."),
                ],
            ),
            solid(
                "Tells the harmless late release from the harmful one, and makes it atomic.",
                &[
                    said("If nobody took the claim since, a late release finds it gone and deletes nothing either way."),
                    said("Compare and delete in one script: a GET then a DEL can interleave with another holder's claim."),
                ],
            ),
            deeper(
                "Sizes the TTL so the token rarely matters, and knows what it does not protect.",
                &[
                    shown(
                        "With the TTL above the work, no release is refused at all.",
                        "preset=burst",
                        &[exactly(Metric::ReleasesRefused, 0.0).claim()],
                    ),
                    shown(
                        "The token guards the release, not the write: a late value needs fenced writes.",
                        "preset=late-writer&fw=1",
                        &[exactly(Metric::StaleOverwrites, 0.0).claim()],
                    ),
                ],
            ),
        ),
        red_flags: &[
            PLAIN_DEL,
            RedFlag {
                says: "With a token release, a late holder can do no harm.",
                row: Row {
                    words: "The token guards the release, not the write: the late holder's older value still lands over a newer one.",
                    ..TTL_LOCK_IS_SAFE.row
                },
                ..TTL_LOCK_IS_SAFE
            },
        ],
        follow_ups: &[
            FollowUp {
                question: 11,
                row: Row {
                    link: "preset=late-writer&fw=1",
                    claims: &[at_least(Metric::WritesRefused, 1.0).claim()],
                    words: "Fencing numbers on the writes: the store refuses an older one.",
                },
            },
            FollowUp {
                question: 12,
                row: Row {
                    link: "preset=short-ttl",
                    claims: &[at_least(Metric::OverlappingRecomputes, 1.0).claim()],
                    words: "A TTL above the origin timeout plus the write, so holders do not outlive it.",
                },
            },
            FollowUp {
                question: 6,
                row: Row {
                    link: "preset=hang",
                    claims: &[exactly(Metric::Pinned, 0.0).claim()],
                    words: "The flight map's own cleanup needs the same rule: remove only your own entry.",
                },
            },
        ],
        throws: &[
            Throw {
                kind: "holder",
                ask: "The claim holder just died without releasing. What frees the claim, and what would a late release from it do?",
            },
            Throw {
                kind: "redis-hang",
                ask: "Redis hangs and resumes. A claim the client gave up on may land late: what clears it?",
            },
        ],
    },
    Question {
        number: 11,
        asks: "Why is a lock with a TTL an efficiency lock and not a correctness lock?",
        levels: levels(
            basics(
                "Knows a paused holder can hold a lock that is no longer its.",
                &[
                    said("A holder that pauses past its TTL (a long GC, a slow network) still believes it holds the lock while another does."),
                    said("For saving duplicate work that is harmless; for correctness it is not."),
                ],
            ),
            solid(
                "Names fencing and what it refuses.",
                &[
                    shown(
                        "Fencing: each claim takes an increasing number, each write carries it, the store refuses an older one.",
                        "preset=late-writer&fw=1",
                        &[at_least(Metric::WritesRefused, 1.0).claim()],
                    ),
                    shown(
                        "With fenced writes no older value lands over a newer one.",
                        "preset=late-writer&fw=1",
                        &[exactly(Metric::StaleOverwrites, 0.0).claim()],
                    ),
                ],
            ),
            deeper(
                "Knows the race needs no lock, and how production systems close it.",
                &[
                    said("The common cause is a database write plus a cache delete racing a slow fill that read the old row."),
                    said("Leases (memcache) close it: the delete voids the lease, and the late set is refused."),
                ],
            ),
        ),
        red_flags: &[
            TTL_LOCK_IS_SAFE,
            RedFlag {
                says: "With no lock at all there is no late writer to fear.",
                row: Row {
                    link: "preset=late-writer&c=off",
                    claims: &[at_least(Metric::StaleOverwrites, 1.0).claim(), OVERWRITES],
                    words: "Two fills of the same key race with or without a lock, and the older can land last.",
                },
                lesson: "late-writer",
                fixed: "preset=late-writer&fw=1",
            },
        ],
        follow_ups: &[
            FollowUp {
                question: 10,
                row: Row {
                    link: "preset=short-ttl",
                    claims: &[at_least(Metric::ReleasesRefusedTaken, 1.0).claim()],
                    words: "The token keeps a late holder from freeing another's claim; it does not stop its write.",
                },
            },
            FollowUp {
                question: 12,
                row: Row {
                    link: "preset=holder-crash",
                    claims: &[exactly(Metric::ClaimWins, 2.0).claim()],
                    words: "A longer TTL makes a late holder rarer, never impossible, and a crash costlier.",
                },
            },
        ],
        throws: &[
            Throw {
                kind: "redis-hang",
                ask: "Redis hangs, then resumes and runs the claims it held. Who holds the lock now, and who believes they do?",
            },
            Throw {
                kind: "holder",
                ask: "The claim holder just died. Is a dead holder the worst case for correctness, or a paused one?",
            },
        ],
    },
    Question {
        number: 12,
        asks: "How long should the claim's TTL be?",
        levels: levels(
            basics(
                "Knows the TTL must outlast the work that holds it.",
                &[
                    shown(
                        "Longer than the longest the work can hold it: the origin timeout plus the write.",
                        "preset=burst",
                        &[exactly(Metric::OverlappingRecomputes, 0.0).claim()],
                    ),
                    said("Or renew the claim while the work runs."),
                ],
            ),
            solid(
                "Sizes it to the bound, not to the usual case.",
                &[
                    shown(
                        "Even on a hung origin the flight settles at the origin timeout, inside the TTL: no second holder.",
                        "preset=hang",
                        &[exactly(Metric::OverlappingRecomputes, 0.0).claim()],
                    ),
                    said("Sized to the p99 recompute, it runs out under the slowest ones, and a second holder overlaps."),
                ],
            ),
            deeper(
                "Knows the TTL is also the longest stall a crash can cause.",
                &[
                    shown(
                        "Not much longer: a dead holder blocks the refresh until its TTL runs out.",
                        "preset=holder-crash",
                        &[at_least(Metric::Timeouts, 1.0).claim()],
                    ),
                    shown(
                        "Once the dead claim expires the next caller wins it, and the refresh resumes.",
                        "preset=holder-crash",
                        &[exactly(Metric::ClaimWins, 2.0).claim()],
                    ),
                ],
            ),
        ),
        red_flags: &[
            SHORT_CLAIM_TTL,
            RedFlag {
                says: "Make the claim's TTL a minute, to be safe.",
                row: Row {
                    link: "preset=holder-crash&ct=60000",
                    claims: &[at_least(Metric::Timeouts, 2000.0).claim(), CRASHED, DEAD_CLAIM_OUTLASTED, NO_RECOMPUTES],
                    words: "A holder that dies keeps everyone off the refresh for the whole TTL: here it outlasts the run, and no refresh runs at all.",
                },
                lesson: "holder-crash",
                fixed: "preset=holder-crash&ct=5000",
            },
        ],
        follow_ups: &[
            FollowUp {
                question: 10,
                row: Row {
                    link: "preset=short-ttl",
                    claims: &[at_least(Metric::ReleasesRefusedTaken, 1.0).claim()],
                    words: "A holder that outlives its claim must release by token.",
                },
            },
            FollowUp {
                question: 5,
                row: Row {
                    link: "preset=hang",
                    claims: &[exactly(Metric::OriginTimeouts, 1.0).claim()],
                    words: "The origin timeout bounds the work, so the TTL can bound the claim.",
                },
            },
            FollowUp {
                question: 13,
                row: Row {
                    link: "preset=redis-down",
                    claims: &[exactly(Metric::Recomputes, 40.0).claim()],
                    words: "No TTL helps when Redis itself is out: the policy decides.",
                },
            },
        ],
        throws: &[
            Throw {
                kind: "holder",
                ask: "The claim holder just died. How long until someone may refresh, and what sets that?",
            },
            Throw {
                kind: "origin-hang",
                ask: "The origin hangs now. Does the claim expire before the origin timeout frees the holder?",
            },
        ],
    },
    Question {
        number: 13,
        asks: "Redis is down. Should the claim fail open or fail closed?",
        levels: levels(
            basics(
                "Fails open for a cache, and knows the worst case.",
                &[
                    shown(
                        "Open: treat the claim as won and refresh; singleflight still holds, 40 recomputes, one per instance.",
                        "preset=redis-down",
                        &[exactly(Metric::Recomputes, 40.0).claim()],
                    ),
                    shown(
                        "Failing open, every caller is answered: 0 time out.",
                        "preset=redis-down",
                        &[exactly(Metric::Timeouts, 0.0).claim()],
                    ),
                ],
            ),
            solid(
                "Knows fail open is only as good as failing fast.",
                &[
                    shown(
                        "An unreachable Redis hangs each call until the client's timeout: keep it inside the callers' deadline.",
                        "preset=redis-hang&rto=50",
                        &[exactly(Metric::Timeouts, 0.0).claim()],
                    ),
                    shown(
                        "A circuit breaker stops asking a Redis that just failed.",
                        "preset=redis-hang&rto=50&rbk=1000",
                        &[at_least(Metric::RedisSkipped, 1.0).claim()],
                    ),
                ],
            ),
            deeper(
                "Counts what failing open costs in steady traffic, and bounds it.",
                &[
                    shown(
                        "It is not free: in steady traffic each instance recomputes each key at every expiry at least.",
                        "rd=1&i=10&t=20&w=steady&vt=5000&dur=20000&th=100",
                        &[at_least(Metric::Recomputes, 700.0).claim()],
                    ),
                    said("Far more where the cache lives in the same Redis, as every read misses; so it belongs behind admission control."),
                ],
            ),
        ),
        red_flags: &[
            RedFlag {
                says: "Fail closed: better no refresh than duplicate work.",
                row: Row {
                    link: "preset=redis-down&re=closed",
                    claims: &[exactly(Metric::Timeouts, 8000.0).claim(), NO_WINS, NO_RECOMPUTES],
                    words: "Nobody may refresh while Redis is out: all 8000 callers give up waiting for a value nobody was allowed to compute.",
                },
                lesson: "redis-down",
                fixed: "preset=redis-down",
            },
            RedFlag {
                says: "Failing open is enough, whatever the client's timeout.",
                row: Row {
                    link: "preset=redis-hang",
                    claims: &[exactly(Metric::Timeouts, 8000.0).claim(), REDIS_FAILED, TIMEOUT_OUTSIDE],
                    words: "A hung Redis holds each command until that timeout; past the callers' deadline, all 8000 time out first.",
                },
                lesson: "redis-hang",
                fixed: "preset=redis-hang&rto=50",
            },
        ],
        follow_ups: &[
            FollowUp {
                question: 12,
                row: Row {
                    link: "preset=holder-crash",
                    claims: &[exactly(Metric::ClaimWins, 2.0).claim()],
                    words: "The claim's TTL bounds a dead holder; an outage is bounded by the client's timeout.",
                },
            },
            FollowUp {
                question: 9,
                row: Row {
                    link: "preset=swr&rd=1",
                    claims: &[exactly(Metric::StaleServed, 0.0).claim()],
                    words: "The stale copy lives in Redis too: there is none to serve while it is down.",
                },
            },
            FollowUp {
                question: 8,
                row: Row {
                    link: "preset=cold",
                    claims: &[at_least(Metric::AdmissionShed, 1.0).claim()],
                    words: "Admission control bounds the origin whatever the cause of the misses.",
                },
            },
        ],
        throws: &[
            Throw {
                kind: "redis",
                ask: "Redis just went down. Which policy is running, and what does the origin see?",
            },
            Throw {
                kind: "redis-hang",
                ask: "Redis hangs instead of refusing. How long does failing open take to act, against the callers' deadline?",
            },
        ],
    },
    Question {
        number: 14,
        asks: "What goes wrong if waiters share one mutable result?",
        levels: levels(
            basics(
                "Knows the waiters share one object.",
                &[
                    shown(
                        "Every waiter receives the same object: 7960 followers share their leader's result.",
                        "preset=burst",
                        &[exactly(Metric::Shared, 7960.0).claim()],
                    ),
                    shown(
                        "Share an immutable value, or give each waiter a copy: nobody reads a changed result.",
                        "preset=burst",
                        &[exactly(Metric::Corrupted, 0.0).claim()],
                    ),
                ],
            ),
            solid(
                "Sees the change reach the cache too.",
                &[
                    said("A change in place (a sort, a filled-in field) reaches the other waiters at once."),
                    said("If the cache holds the same object, the change outlives the request."),
                ],
            ),
            deeper(
                "Weighs copying against freezing, and tests for it.",
                &[
                    said("A copy per waiter costs an allocation each; a frozen or persistent value costs none."),
                    said("A test: have one waiter change its result, and check what the others got."),
                ],
            ),
        ),
        red_flags: &[RedFlag {
            says: "Each waiter may change its result in place: it is theirs.",
            row: Row {
                link: "pf=mutable-result",
                claims: &[at_least(Metric::Corrupted, 1.0).claim(), CORRUPTED],
                words: "Every waiter holds the same object: the first one's change reaches the rest.",
            },
            lesson: "mutable-result",
            fixed: "preset=burst",
        }],
        follow_ups: &[
            FollowUp {
                question: 7,
                row: Row {
                    link: "preset=failure",
                    claims: &[at_least(Metric::Errors, 1.0).claim()],
                    words: "An error is shared the same way: every attached waiter gets the one failure.",
                },
            },
            FollowUp {
                question: 15,
                row: Row {
                    link: "pf=key-mismatch",
                    claims: &[exactly(Metric::ClaimAttempts, 8000.0).claim()],
                    words: "Sharing only happens when the keys match.",
                },
            },
        ],
        throws: &[Throw {
            kind: "origin",
            ask: "The origin starts failing now. Is the error object shared too, and may a waiter change it?",
        }],
    },
    Question {
        number: 15,
        asks: "The flight map's key differs slightly from the cache key. So what?",
        levels: levels(
            basics(
                "Knows the flight and the cache must agree on the key.",
                &[
                    shown(
                        "Build both keys with the same function: each instance's leader alone claims, 40 attempts.",
                        "preset=burst",
                        &[exactly(Metric::ClaimAttempts, 40.0).claim()],
                    ),
                    said("Nothing fails loudly: the values stay right, only the protection is gone."),
                ],
            ),
            solid(
                "Says where the load goes when nothing coalesces.",
                &[
                    shown(
                        "With matching keys the threads share one flight: 7960 get their leader's value.",
                        "preset=burst",
                        &[exactly(Metric::Shared, 7960.0).claim()],
                    ),
                    said("With a claim, every thread goes to Redis on its own; without one, to the origin."),
                ],
            ),
            deeper(
                "Prevents it and catches it.",
                &[
                    said("Normalise once (case, parameter order, encoding), in the function both layers call."),
                    shown(
                        "Test it: fire concurrent misses at one key on one instance and count origin calls, 1.",
                        "preset=singleflight&i=1",
                        &[exactly(Metric::Recomputes, 1.0).claim()],
                    ),
                ],
            ),
        ),
        red_flags: &[RedFlag {
            says: "A small difference between the flight key and the cache key is harmless.",
            ..KEY_MISMATCH
        }],
        follow_ups: &[
            FollowUp {
                question: 3,
                row: Row {
                    link: "preset=claim-outer",
                    claims: &[exactly(Metric::ClaimAttempts, 8000.0).claim()],
                    words: "The same damage as the claim outside singleflight: one claim attempt per thread.",
                },
            },
            FollowUp {
                question: 14,
                row: Row {
                    link: "preset=burst",
                    claims: &[exactly(Metric::Corrupted, 0.0).claim()],
                    words: "What coalescing shares must not be changed by a waiter.",
                },
            },
        ],
        throws: &[Throw {
            kind: "redis",
            ask: "Redis just went down with the keys still mismatched. What reaches the origin now?",
        }],
    },
];
