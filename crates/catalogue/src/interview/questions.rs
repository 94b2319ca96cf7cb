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

use super::{on, point, shown, FollowUp, Level, Point, Question, RedFlag, Throw};
use crate::drill::{at_least, at_most, exactly};
use crate::lesson::{
    CLAIM_SHORT, COALESCED, CORRUPTED, CRASHED, DEAD_CLAIM_OUTLASTED, EVERY_MISS_CLAIMED,
    EVERY_PINNED, MORE_THAN_ONE_PER_INSTANCE, NEGATIVE_HITS, NOTHING_SHARED, NO_RECOMPUTES,
    NO_STALE, NO_WINS, OVERLAPS, OVERWRITES, PER_INSTANCE, REDIS_FAILED, REFUSED_TAKEN, REMEMBERED,
    SWAMPED, TIMEOUTS, TIMEOUT_OUTSIDE, UNCLAIMED,
};

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
    because: "A blip becomes a sticky outage: later callers get the old error after the origin has recovered.",
    shown: on(
        "preset=failure&pf=remember-failure",
        at_least("remembered_failures", 1.0),
    ),
    lesson: "remember-failure",
    claims: &[REMEMBERED],
    fixed: "preset=failure",
};

/// A negative cache as long as a value's TTL: the error is an answer.
const LONG_NEGATIVE_CACHE: RedFlag = RedFlag {
    says: "Cache the error like a value, for the value's whole TTL.",
    because: "An error is not an answer: cached that long, it reaches callers the recovered origin could have served.",
    shown: on("preset=failure&nt=2000", at_least("errors", 800.0)),
    lesson: "failure",
    claims: &[NEGATIVE_HITS],
    fixed: "preset=failure",
};

/// Nothing bounds a wait on a flight that never settles.
const NO_DEADLINE: RedFlag = RedFlag {
    says: "A waiter stays until the computation finishes; it will finish.",
    because: "Behind a hung origin every caller is then pinned, long past its deadline.",
    shown: on("preset=hang&pf=no-deadline", at_least("pinned", 1.0)),
    lesson: "no-deadline",
    claims: &[EVERY_PINNED],
    fixed: "preset=hang",
};

/// A flight key that is not the cache key: nothing coalesces.
const KEY_MISMATCH: RedFlag = RedFlag {
    says: "The flight map may key its entries its own way; it is only local.",
    because: "Threads that miss the same entry never find each other's flight: one claim attempt per thread, 8000.",
    shown: on("pf=key-mismatch", exactly("claim_attempts", 8000.0)),
    lesson: "key-mismatch",
    claims: &[NOTHING_SHARED],
    fixed: "preset=burst",
};

/// A plain DEL for the release: a late holder frees another's claim.
const PLAIN_DEL: RedFlag = RedFlag {
    says: "Release the claim with a plain DEL: it is yours.",
    because:
        "A holder can outlive its claim; its DEL then frees another instance's claim for a third.",
    shown: on("preset=short-ttl", at_least("releases_refused_taken", 1.0)),
    lesson: "short-ttl",
    claims: &[REFUSED_TAKEN],
    fixed: "preset=short-ttl&ct=5000",
};

/// A TTL lock taken as a correctness lock: a late holder's write lands.
const TTL_LOCK_IS_SAFE: RedFlag = RedFlag {
    says: "The claim makes the write safe: one writer at a time.",
    because: "A recompute that outlives its claim writes while another instance holds it: older values land over newer ones.",
    shown: on("preset=late-writer", at_least("stale_overwrites", 1.0)),
    lesson: "late-writer",
    claims: &[OVERWRITES, CLAIM_SHORT, OVERLAPS],
    fixed: "preset=late-writer&fw=1",
};

/// A claim TTL below the work: a second holder starts the same recompute.
const SHORT_CLAIM_TTL: RedFlag = RedFlag {
    says: "Size the claim's TTL to a typical recompute.",
    because: "Under the slower recomputes the claim expires mid-work, and another instance starts the same one.",
    shown: on("preset=short-ttl", at_least("overlapping_recomputes", 1.0)),
    lesson: "short-ttl",
    claims: &[OVERLAPS],
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
                    point(
                        "Every waiter attached at that moment gets the failure: there is no value.",
                        shown("preset=failure", at_least("errors", 1.0)),
                    ),
                    point(
                        "The entry leaves the map as the flight settles; the next request starts afresh.",
                        shown("preset=failure", exactly("remembered_failures", 0.0)),
                    ),
                ],
            ),
            solid(
                "Says why the entry must go, and that damping retries is a separate, deliberate choice.",
                &[
                    point(
                        "Left in the map, a brief blip becomes a lasting outage for that key.",
                        None,
                    ),
                    point(
                        "Once the origin recovers, the next flight writes the value again.",
                        shown("preset=failure", at_least("values_written", 1.0)),
                    ),
                    point(
                        "To damp retries against a failing origin: a short negative-cache entry, on purpose.",
                        shown("preset=failure&nt=500", at_least("negative_hits", 1.0)),
                    ),
                ],
            ),
            deeper(
                "Tells an error from an answer and bounds what a failure costs the origin.",
                &[
                    point(
                        "An error is cached briefly or not at all; a not-found is an answer, cached like a value.",
                        None,
                    ),
                    point(
                        "Retries coalesced in the map join a running attempt instead of each calling the origin.",
                        shown("preset=retry-storm&sf=1", at_most("recomputes", 50.0)),
                    ),
                    point(
                        "A panic is the same path: the computation failed, and every waiter is told so.",
                        None,
                    ),
                ],
            ),
        ),
        red_flags: &[REMEMBER_FAILURE, LONG_NEGATIVE_CACHE],
        follow_ups: &[
            FollowUp {
                question: 7,
                listen_for: "Attached waiters get it; one arriving a moment later finds no flight and tries again.",
                shown: on("preset=failure", exactly("remembered_failures", 0.0)),
            },
            FollowUp {
                question: 8,
                listen_for: "A not-found is cached like a value; an error briefly, if at all.",
                shown: on("preset=failure&nt=500", at_least("negative_hits", 1.0)),
            },
            FollowUp {
                question: 4,
                listen_for: "A panic is the computation failing: the same answer to every waiter, the entry gone.",
                shown: on("preset=failure", at_least("errors", 1.0)),
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
                    point(
                        "When one recompute per instance does the origin no harm: 40 copies of a cheap query are nothing.",
                        shown("preset=cheap", exactly("recomputes", 40.0)),
                    ),
                    point(
                        "Singleflight alone has no lock key, no TTL to size, no policy for losers, no release script.",
                        None,
                    ),
                ],
            ),
            solid(
                "Counts what the claim costs Redis and knows it is not a latency win.",
                &[
                    point(
                        "Without the claim Redis sees only the reads and the writes: 8080 round trips.",
                        shown("preset=cheap", exactly("redis_round_trips", 8080.0)),
                    ),
                    point(
                        "The claim adds a SET NX, a poll per loser every interval and a release to each miss.",
                        None,
                    ),
                    point(
                        "On a cheap query the claim's losers wait out a poll interval: the median is slower.",
                        shown("rc=20", at_least("p50_ms", 40.0)),
                    ),
                ],
            ),
            deeper(
                "Knows where the claim starts to pay, and tunes its cost.",
                &[
                    point(
                        "A shorter poll gives the losers their wait back, at the price of more polls.",
                        shown("rc=20&poll=20", at_most("p50_ms", 40.0)),
                    ),
                    point(
                        "The claim pays when the recompute is slow, rate-limited or billed: 1 call for the fleet.",
                        shown("rc=700", exactly("recomputes", 1.0)),
                    ),
                    point(
                        "Or when the fleet is so large that the instance count alone is the load.",
                        None,
                    ),
                ],
            ),
        ),
        red_flags: &[RedFlag {
            says: "Singleflight alone is enough, however slow the recompute.",
            because: "Each instance still calls the origin: 40 slow recomputes at once, and callers miss their deadline.",
            shown: on("rc=700&c=off", exactly("recomputes", 40.0)),
            lesson: "singleflight",
            claims: &[COALESCED, PER_INSTANCE, TIMEOUTS],
            fixed: "rc=700",
        }],
        follow_ups: &[
            FollowUp {
                question: 3,
                listen_for: "With both layers, only each instance's leader claims: the claim's cost scales with instances.",
                shown: on("preset=burst", exactly("claim_attempts", 40.0)),
            },
            FollowUp {
                question: 13,
                listen_for: "Without Redis the fleet is back to singleflight alone: one recompute per instance.",
                shown: on("preset=redis-down", exactly("recomputes", 40.0)),
            },
            FollowUp {
                question: 12,
                listen_for: "The claim brings a TTL to size and a dead holder to wait out.",
                shown: on("preset=holder-crash", exactly("claim_wins", 2.0)),
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
                    point(
                        "Singleflight outside: only each instance's leader claims, 40 claim attempts.",
                        shown("preset=burst", exactly("claim_attempts", 40.0)),
                    ),
                    point(
                        "Every thread still reads the value first, so both orders make the same reads: 8000 misses.",
                        shown("preset=burst", exactly("misses", 8000.0)),
                    ),
                ],
            ),
            solid(
                "Says what the order saves after the miss: claims, polls, releases and the wait.",
                &[
                    point(
                        "The other threads wait on the local flight, for free: 7960 share their leader's value.",
                        shown("preset=burst", exactly("shared", 7960.0)),
                    ),
                    point(
                        "Only the leader polls and releases, so Redis sees about one command per request.",
                        shown("preset=burst", at_most("redis_round_trips", 8300.0)),
                    ),
                ],
            ),
            deeper(
                "Sees the read path whole and what silently undoes the outer layer.",
                &[
                    point(
                        "Moving the read inside the flight would cut the reads to one per flight too.",
                        None,
                    ),
                    point(
                        "The outer layer only works if its key is the cache key: one function builds both.",
                        None,
                    ),
                ],
            ),
        ),
        red_flags: &[
            RedFlag {
                says: "Take the Redis claim first, then coalesce: the order makes no difference.",
                because: "Every thread then claims and polls on its own: 8000 claim attempts for one recompute.",
                shown: on("preset=claim-outer", exactly("claim_attempts", 8000.0)),
                lesson: "claim-outer",
                claims: &[MORE_THAN_ONE_PER_INSTANCE, EVERY_MISS_CLAIMED],
                fixed: "preset=burst",
            },
            KEY_MISMATCH,
        ],
        follow_ups: &[
            FollowUp {
                question: 15,
                listen_for: "A flight key off by a character puts every thread at the claim.",
                shown: on("pf=key-mismatch", exactly("claim_attempts", 8000.0)),
            },
            FollowUp {
                question: 2,
                listen_for: "Whether the inner layer is needed at all: one recompute per instance may be harmless.",
                shown: on("preset=cheap", exactly("recomputes", 40.0)),
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
                    point(
                        "A panic is the computation failing: every attached waiter gets the failure.",
                        shown("preset=failure", at_least("errors", 1.0)),
                    ),
                    point(
                        "The entry leaves the map as for any error; the next caller starts afresh.",
                        shown("preset=failure", exactly("remembered_failures", 0.0)),
                    ),
                ],
            ),
            solid(
                "Knows followers are never stranded by a leader that leaves.",
                &[
                    point(
                        "A leader cancelled before the work starts hands the flight to its oldest follower.",
                        shown("rc=1500&sp=1000", at_least("handovers", 1.0)),
                    ),
                    point(
                        "After a panic nobody is promoted: there is no work left to finish.",
                        None,
                    ),
                ],
            ),
            deeper(
                "Separates the work from every caller, and knows what the promoted follower carries.",
                &[
                    point(
                        "Once started, the work belongs to no caller and runs to its end: 1 value written.",
                        shown("dl=100", exactly("values_written", 1.0)),
                    ),
                    point(
                        "The promoted follower keeps its own deadline; a claim the leader asked for is released with the leader's token.",
                        None,
                    ),
                    point(
                        "The group catches the panic and answers each waiter with it, rather than crashing them.",
                        None,
                    ),
                ],
            ),
        ),
        red_flags: &[
            RedFlag {
                says: "After a panic, keep the entry, so nobody re-runs a computation that crashes.",
                because: "The failure is then handed out after its flight ended: a blip becomes an outage for the key.",
                ..REMEMBER_FAILURE
            },
            RedFlag {
                says: "The followers simply wait for the leader to come back.",
                because: "With no deadline of their own, every follower is pinned behind a leader that never answers.",
                ..NO_DEADLINE
            },
        ],
        follow_ups: &[
            FollowUp {
                question: 1,
                listen_for: "The failure goes to the attached waiters, the entry leaves the map.",
                shown: on("preset=failure", exactly("remembered_failures", 0.0)),
            },
            FollowUp {
                question: 5,
                listen_for: "A waiter leaving never cancels the work: it runs on and fills the cache.",
                shown: on("dl=100", exactly("values_written", 1.0)),
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
                    point(
                        "No: it detaches and answers its own caller; all 8000 callers give up here.",
                        shown("dl=100", exactly("timeouts", 8000.0)),
                    ),
                    point(
                        "The work goes on for whoever still waits, and fills the cache: 1 value written.",
                        shown("dl=100", exactly("values_written", 1.0)),
                    ),
                ],
            ),
            solid(
                "Says why cancelling is wrong and that the work needs bounds of its own.",
                &[
                    point(
                        "Cancelling throws away a nearly finished recompute and starts the stampede again.",
                        None,
                    ),
                    point(
                        "An origin timeout bounds the work's wait on the origin, and frees the flight and the claim.",
                        shown("preset=hang", exactly("origin_timeouts", 1.0)),
                    ),
                ],
            ),
            deeper(
                "Knows what a timeout does not stop, and what keeps new calls off a bad origin.",
                &[
                    point(
                        "The timeout ends the wait, not the call: it runs on at the origin until the origin stops it.",
                        None,
                    ),
                    point(
                        "A circuit breaker or a short negative cache keeps new calls from piling onto a failing origin.",
                        shown("preset=failure&nt=500", at_least("negative_hits", 1.0)),
                    ),
                ],
            ),
        ),
        red_flags: &[NO_DEADLINE],
        follow_ups: &[
            FollowUp {
                question: 6,
                listen_for: "A stuck flight is ended by bounds, or dropped with Forget; nobody stays pinned.",
                shown: on("preset=hang", exactly("pinned", 0.0)),
            },
            FollowUp {
                question: 12,
                listen_for: "The claim outlives the origin timeout, so a hung call never lets a second holder in.",
                shown: on("preset=hang", exactly("overlapping_recomputes", 0.0)),
            },
            FollowUp {
                question: 4,
                listen_for: "A leader that leaves before the work starts hands its flight on.",
                shown: on("rc=1500&sp=1000", at_least("handovers", 1.0)),
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
                    point(
                        "Forget drops the entry so the next call starts afresh instead of joining one known to be stuck or bad.",
                        None,
                    ),
                    point(
                        "Deadlines end every wait on a stuck flight: nobody stays pinned.",
                        shown("preset=hang", exactly("pinned", 0.0)),
                    ),
                ],
            ),
            solid(
                "Names the cleanup race.",
                &[
                    point(
                        "An old flight finishing late and deleting the key removes the newer flight that replaced it.",
                        None,
                    ),
                    point(
                        "The next callers then start a third: remove an entry only if it is still yours.",
                        None,
                    ),
                ],
            ),
            deeper(
                "Sees the same ownership rule in the claim, and what bounds the stuck call.",
                &[
                    point(
                        "It is the claim's rule too: delete only what still holds your token.",
                        None,
                    ),
                    point(
                        "The origin timeout settles the stuck flight itself, and frees its claim.",
                        shown("preset=hang", exactly("origin_timeouts", 1.0)),
                    ),
                    point(
                        "Forgetting a flight that still runs lets a second one start: the origin sees both.",
                        None,
                    ),
                ],
            ),
        ),
        red_flags: &[
            RedFlag {
                says: "An old flight may delete its key unconditionally when it finishes.",
                because: "A late finisher then removes its replacement; here releases found another holder's claim, which a plain delete would have freed.",
                ..PLAIN_DEL
            },
            RedFlag {
                says: "A stuck flight will finish eventually; nothing needs to bound it.",
                because: "Behind a hung origin every caller then waits on it for good.",
                ..NO_DEADLINE
            },
        ],
        follow_ups: &[
            FollowUp {
                question: 10,
                listen_for: "Compare-and-delete by token: the same rule for the claim.",
                shown: on("preset=short-ttl", at_least("releases_refused_taken", 1.0)),
            },
            FollowUp {
                question: 5,
                listen_for: "The work is bounded by its own timeout, not by the waiters leaving.",
                shown: on("dl=100", exactly("values_written", 1.0)),
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
                    point(
                        "Every waiter attached when the flight settles gets the error.",
                        shown("preset=failure", at_least("errors", 1.0)),
                    ),
                    point(
                        "One arriving a moment later finds no flight and starts a new attempt.",
                        shown("preset=failure", exactly("remembered_failures", 0.0)),
                    ),
                ],
            ),
            solid(
                "Says what that buys: a failure does not outlive the failure.",
                &[
                    point(
                        "Once the origin recovers, the next attempt writes the value again.",
                        shown("preset=failure", at_least("values_written", 1.0)),
                    ),
                    point(
                        "The waiters get the error itself, not a timeout: they can tell failure from slowness.",
                        None,
                    ),
                ],
            ),
            deeper(
                "Damps retries on purpose, not by accident.",
                &[
                    point(
                        "A short negative cache shares a failure beyond its flight, for a bounded time.",
                        shown("preset=failure&nt=500", at_least("negative_hits", 1.0)),
                    ),
                    point(
                        "Retries that join a running flight make no origin call of their own.",
                        shown("preset=retry-storm&sf=1", at_most("recomputes", 50.0)),
                    ),
                ],
            ),
        ),
        red_flags: &[
            RedFlag {
                says: "The next caller should get the same error from the map, to spare the origin.",
                because: "The error then outlives the failure: callers get it after the origin has recovered.",
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
                listen_for: "Kept in the map, the error becomes a sticky outage.",
                shown: on(
                    "preset=failure&pf=remember-failure",
                    at_least("remembered_failures", 1.0),
                ),
            },
            FollowUp {
                question: 14,
                listen_for: "The waiters share one result, an error or a value: it must not be changed.",
                shown: on("pf=mutable-result", at_least("corrupted", 1.0)),
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
                    point(
                        "A stampede is many misses for one hot key: coalescing and the claim take it to 1 recompute.",
                        shown("preset=burst", exactly("recomputes", 1.0)),
                    ),
                    point(
                        "A cold start is thousands of different keys at once: admission control bounds the origin.",
                        shown("preset=cold", at_least("admission_shed", 1.0)),
                    ),
                    point(
                        "An avalanche is many keys expiring together: TTL jitter spreads them.",
                        shown("preset=jitter", at_most("origin_peak_concurrency", 60.0)),
                    ),
                ],
            ),
            solid(
                "Knows penetration and that a cold start needs coalescing too.",
                &[
                    point(
                        "Penetration is requests for keys that do not exist: a not-found is an answer, cached like a value.",
                        None,
                    ),
                    point(
                        "A real restart is skewed: the hot keys still arrive in bursts, and coalescing answers them.",
                        shown("preset=cold-skew", at_least("shared", 200.0)),
                    ),
                ],
            ),
            deeper(
                "Knows where each fix stops working.",
                &[
                    point(
                        "An error is no answer: cache it briefly, if at all.",
                        shown("preset=failure&nt=500", at_least("negative_hits", 1.0)),
                    ),
                    point(
                        "A flood of random missing keys misses every cache, a negative one too: validate, or a Bloom filter in front.",
                        None,
                    ),
                    point(
                        "A deploy that re-warms every key with one TTL undoes the jitter: the wave comes one TTL later.",
                        None,
                    ),
                ],
            ),
        ),
        red_flags: &[
            RedFlag {
                says: "Coalescing protects a cold cache as well as a hot key.",
                because: "Most misses are different keys: coalescing merges only the same key, so without admission control the origin is swamped.",
                shown: on("preset=cold&adm=0", at_least("origin_peak_concurrency", 100.0)),
                lesson: "cold",
                claims: &[SWAMPED],
                fixed: "preset=cold",
            },
            RedFlag {
                says: "Give every key the same TTL: it is simpler to reason about.",
                because: "Keys written together then expire together: the recomputes come in waves past the origin's capacity.",
                shown: on("preset=jitter&j=0", at_least("origin_peak_concurrency", 150.0)),
                lesson: "jitter",
                claims: &[SWAMPED],
                fixed: "preset=jitter",
            },
        ],
        follow_ups: &[
            FollowUp {
                question: 9,
                listen_for: "Serving stale during a refresh: nobody waits, if an old answer is acceptable.",
                shown: on("preset=swr", exactly("stale_served", 8000.0)),
            },
            FollowUp {
                question: 1,
                listen_for: "A failure leaves the flight map; caching it is a separate, short, deliberate choice.",
                shown: on("preset=failure", exactly("remembered_failures", 0.0)),
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
                    point(
                        "When someone acts on it: a balance, a stock level, a revoked permission, a price at checkout.",
                        None,
                    ),
                    point(
                        "Where slightly old data is fine, nobody waits: 8000 answered stale at once.",
                        shown("preset=swr", exactly("stale_served", 8000.0)),
                    ),
                ],
            ),
            solid(
                "Bounds staleness per key, and keeps the refresh guarded.",
                &[
                    point(
                        "Bound it: a short stale window, or a synchronous refresh for the keys that must be fresh.",
                        None,
                    ),
                    point(
                        "The claim still guards the refresh behind the stale answers: 1 recompute.",
                        shown("preset=swr", exactly("recomputes", 1.0)),
                    ),
                ],
            ),
            deeper(
                "Knows where the stale copy lives and what else serves stale.",
                &[
                    point(
                        "Without revalidating in the background, a stale window still lets the claim's losers answer at once.",
                        shown("preset=stale", at_least("stale_served", 1.0)),
                    ),
                    point(
                        "The stale copy lives where the cache lives: an outage of Redis takes it too, unless each process keeps one.",
                        None,
                    ),
                ],
            ),
        ),
        red_flags: &[
            RedFlag {
                says: "Stale-while-revalidate keeps answering through a Redis outage.",
                because: "The stale copy lives in Redis: with Redis down there is none to serve, and every caller waits on a recompute.",
                shown: on("preset=swr&rd=1", exactly("stale_served", 0.0)),
                lesson: "redis-down",
                claims: &[NO_STALE],
                fixed: "preset=swr",
            },
            RedFlag {
                says: "Serving stale makes the claim unnecessary.",
                because: "The refresh behind the stale answers is still a stampede: each instance refreshes, 40 recomputes.",
                shown: on("preset=swr&c=off", exactly("recomputes", 40.0)),
                lesson: "swr",
                claims: &[UNCLAIMED],
                fixed: "preset=swr",
            },
        ],
        follow_ups: &[
            FollowUp {
                question: 13,
                listen_for: "With Redis down, failing open still holds the fleet to one recompute per instance.",
                shown: on("preset=redis-down", exactly("recomputes", 40.0)),
            },
            FollowUp {
                question: 11,
                listen_for: "Where correctness matters, fencing, not a TTL lock, keeps an older write from landing.",
                shown: on("preset=late-writer&fw=1", exactly("stale_overwrites", 0.0)),
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
                    point(
                        "The claim's value is a random token; the release deletes the key only if it still holds it.",
                        None,
                    ),
                    point(
                        "A holder can outlive its claim: the TTL runs out while it computes.",
                        None,
                    ),
                ],
            ),
            solid(
                "Tells the harmless late release from the harmful one, and makes it atomic.",
                &[
                    point(
                        "If nobody took the claim since, a late release finds it gone and deletes nothing either way.",
                        None,
                    ),
                    point(
                        "Compare and delete in one script: a GET then a DEL can interleave with another holder's claim.",
                        None,
                    ),
                ],
            ),
            deeper(
                "Sizes the TTL so the token rarely matters, and knows what it does not protect.",
                &[
                    point(
                        "With the TTL above the work, no release is refused at all.",
                        shown("preset=burst", exactly("releases_refused", 0.0)),
                    ),
                    point(
                        "The token guards the release, not the write: a late value needs fenced writes.",
                        shown("preset=late-writer&fw=1", exactly("stale_overwrites", 0.0)),
                    ),
                ],
            ),
        ),
        red_flags: &[
            PLAIN_DEL,
            RedFlag {
                says: "With a token release, a late holder can do no harm.",
                because: "The token guards the release, not the write: the late holder's older value still lands over a newer one.",
                ..TTL_LOCK_IS_SAFE
            },
        ],
        follow_ups: &[
            FollowUp {
                question: 11,
                listen_for: "Fencing numbers on the writes: the store refuses an older one.",
                shown: on("preset=late-writer&fw=1", at_least("writes_refused", 1.0)),
            },
            FollowUp {
                question: 12,
                listen_for: "A TTL above the origin timeout plus the write, so holders do not outlive it.",
                shown: on("preset=short-ttl", at_least("overlapping_recomputes", 1.0)),
            },
            FollowUp {
                question: 6,
                listen_for: "The flight map's own cleanup needs the same rule: remove only your own entry.",
                shown: on("preset=hang", exactly("pinned", 0.0)),
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
                    point(
                        "A holder that pauses past its TTL (a long GC, a slow network) still believes it holds the lock while another does.",
                        None,
                    ),
                    point(
                        "For saving duplicate work that is harmless; for correctness it is not.",
                        None,
                    ),
                ],
            ),
            solid(
                "Names fencing and what it refuses.",
                &[
                    point(
                        "Fencing: each claim takes an increasing number, each write carries it, the store refuses an older one.",
                        shown("preset=late-writer&fw=1", at_least("writes_refused", 1.0)),
                    ),
                    point(
                        "With fenced writes no older value lands over a newer one.",
                        shown("preset=late-writer&fw=1", exactly("stale_overwrites", 0.0)),
                    ),
                ],
            ),
            deeper(
                "Knows the race needs no lock, and how production systems close it.",
                &[
                    point(
                        "The common cause is a database write plus a cache delete racing a slow fill that read the old row.",
                        None,
                    ),
                    point(
                        "Leases (memcache) close it: the delete voids the lease, and the late set is refused.",
                        None,
                    ),
                ],
            ),
        ),
        red_flags: &[
            TTL_LOCK_IS_SAFE,
            RedFlag {
                says: "With no lock at all there is no late writer to fear.",
                because: "Two fills of the same key race with or without a lock, and the older can land last.",
                shown: on("preset=late-writer&c=off", at_least("stale_overwrites", 1.0)),
                lesson: "late-writer",
                claims: &[OVERWRITES],
                fixed: "preset=late-writer&fw=1",
            },
        ],
        follow_ups: &[
            FollowUp {
                question: 10,
                listen_for: "The token keeps a late holder from freeing another's claim; it does not stop its write.",
                shown: on("preset=short-ttl", at_least("releases_refused_taken", 1.0)),
            },
            FollowUp {
                question: 12,
                listen_for: "A longer TTL makes a late holder rarer, never impossible, and a crash costlier.",
                shown: on("preset=holder-crash", exactly("claim_wins", 2.0)),
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
                    point(
                        "Longer than the longest the work can hold it: the origin timeout plus the write.",
                        shown("preset=burst", exactly("overlapping_recomputes", 0.0)),
                    ),
                    point("Or renew the claim while the work runs.", None),
                ],
            ),
            solid(
                "Sizes it to the bound, not to the usual case.",
                &[
                    point(
                        "Even on a hung origin the flight settles at the origin timeout, inside the TTL: no second holder.",
                        shown("preset=hang", exactly("overlapping_recomputes", 0.0)),
                    ),
                    point(
                        "Sized to the p99 recompute, it runs out under the slowest ones, and a second holder overlaps.",
                        None,
                    ),
                ],
            ),
            deeper(
                "Knows the TTL is also the longest stall a crash can cause.",
                &[
                    point(
                        "Not much longer: a dead holder blocks the refresh until its TTL runs out.",
                        shown("preset=holder-crash", at_least("timeouts", 1.0)),
                    ),
                    point(
                        "Once the dead claim expires the next caller wins it, and the refresh resumes.",
                        shown("preset=holder-crash", exactly("claim_wins", 2.0)),
                    ),
                ],
            ),
        ),
        red_flags: &[
            SHORT_CLAIM_TTL,
            RedFlag {
                says: "Make the claim's TTL a minute, to be safe.",
                because: "A holder that dies keeps everyone off the refresh for the whole TTL: here it outlasts the run, and no refresh runs at all.",
                shown: on("preset=holder-crash&ct=60000", at_least("timeouts", 2000.0)),
                lesson: "holder-crash",
                claims: &[CRASHED, DEAD_CLAIM_OUTLASTED, NO_RECOMPUTES],
                fixed: "preset=holder-crash&ct=5000",
            },
        ],
        follow_ups: &[
            FollowUp {
                question: 10,
                listen_for: "A holder that outlives its claim must release by token.",
                shown: on("preset=short-ttl", at_least("releases_refused_taken", 1.0)),
            },
            FollowUp {
                question: 5,
                listen_for: "The origin timeout bounds the work, so the TTL can bound the claim.",
                shown: on("preset=hang", exactly("origin_timeouts", 1.0)),
            },
            FollowUp {
                question: 13,
                listen_for: "No TTL helps when Redis itself is out: the policy decides.",
                shown: on("preset=redis-down", exactly("recomputes", 40.0)),
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
                    point(
                        "Open: treat the claim as won and refresh; singleflight still holds, 40 recomputes, one per instance.",
                        shown("preset=redis-down", exactly("recomputes", 40.0)),
                    ),
                    point(
                        "Failing open, every caller is answered: 0 time out.",
                        shown("preset=redis-down", exactly("timeouts", 0.0)),
                    ),
                ],
            ),
            solid(
                "Knows fail open is only as good as failing fast.",
                &[
                    point(
                        "An unreachable Redis hangs each call until the client's timeout: keep it inside the callers' deadline.",
                        shown("preset=redis-hang&rto=50", exactly("timeouts", 0.0)),
                    ),
                    point(
                        "A circuit breaker stops asking a Redis that just failed.",
                        shown("preset=redis-hang&rto=50&rbk=1000", at_least("redis_skipped", 1.0)),
                    ),
                ],
            ),
            deeper(
                "Counts what failing open costs in steady traffic, and bounds it.",
                &[
                    point(
                        "It is not free: in steady traffic each instance recomputes each key at every expiry at least.",
                        shown(
                            "rd=1&i=10&t=20&w=steady&vt=5000&dur=20000&th=100",
                            at_least("recomputes", 700.0),
                        ),
                    ),
                    point(
                        "Far more where the cache lives in the same Redis, as every read misses; so it belongs behind admission control.",
                        None,
                    ),
                ],
            ),
        ),
        red_flags: &[
            RedFlag {
                says: "Fail closed: better no refresh than duplicate work.",
                because: "Nobody may refresh while Redis is out: all 8000 callers give up waiting for a value nobody was allowed to compute.",
                shown: on("preset=redis-down&re=closed", exactly("timeouts", 8000.0)),
                lesson: "redis-down",
                claims: &[NO_WINS, NO_RECOMPUTES],
                fixed: "preset=redis-down",
            },
            RedFlag {
                says: "Failing open is enough, whatever the client's timeout.",
                because: "A hung Redis holds each command until that timeout; past the callers' deadline, all 8000 time out first.",
                shown: on("preset=redis-hang", exactly("timeouts", 8000.0)),
                lesson: "redis-hang",
                claims: &[REDIS_FAILED, TIMEOUT_OUTSIDE],
                fixed: "preset=redis-hang&rto=50",
            },
        ],
        follow_ups: &[
            FollowUp {
                question: 12,
                listen_for: "The claim's TTL bounds a dead holder; an outage is bounded by the client's timeout.",
                shown: on("preset=holder-crash", exactly("claim_wins", 2.0)),
            },
            FollowUp {
                question: 9,
                listen_for: "The stale copy lives in Redis too: there is none to serve while it is down.",
                shown: on("preset=swr&rd=1", exactly("stale_served", 0.0)),
            },
            FollowUp {
                question: 8,
                listen_for: "Admission control bounds the origin whatever the cause of the misses.",
                shown: on("preset=cold", at_least("admission_shed", 1.0)),
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
                    point(
                        "Every waiter receives the same object: 7960 followers share their leader's result.",
                        shown("preset=burst", exactly("shared", 7960.0)),
                    ),
                    point(
                        "Share an immutable value, or give each waiter a copy: nobody reads a changed result.",
                        shown("preset=burst", exactly("corrupted", 0.0)),
                    ),
                ],
            ),
            solid(
                "Sees the change reach the cache too.",
                &[
                    point(
                        "A change in place (a sort, a filled-in field) reaches the other waiters at once.",
                        None,
                    ),
                    point(
                        "If the cache holds the same object, the change outlives the request.",
                        None,
                    ),
                ],
            ),
            deeper(
                "Weighs copying against freezing, and tests for it.",
                &[
                    point(
                        "A copy per waiter costs an allocation each; a frozen or persistent value costs none.",
                        None,
                    ),
                    point(
                        "A test: have one waiter change its result, and check what the others got.",
                        None,
                    ),
                ],
            ),
        ),
        red_flags: &[RedFlag {
            says: "Each waiter may change its result in place: it is theirs.",
            because: "Every waiter holds the same object: the first one's change reaches the rest.",
            shown: on("pf=mutable-result", at_least("corrupted", 1.0)),
            lesson: "mutable-result",
            claims: &[CORRUPTED],
            fixed: "preset=burst",
        }],
        follow_ups: &[
            FollowUp {
                question: 7,
                listen_for: "An error is shared the same way: every attached waiter gets the one failure.",
                shown: on("preset=failure", at_least("errors", 1.0)),
            },
            FollowUp {
                question: 15,
                listen_for: "Sharing only happens when the keys match.",
                shown: on("pf=key-mismatch", exactly("claim_attempts", 8000.0)),
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
                    point(
                        "Build both keys with the same function: each instance's leader alone claims, 40 attempts.",
                        shown("preset=burst", exactly("claim_attempts", 40.0)),
                    ),
                    point(
                        "Nothing fails loudly: the values stay right, only the protection is gone.",
                        None,
                    ),
                ],
            ),
            solid(
                "Says where the load goes when nothing coalesces.",
                &[
                    point(
                        "With matching keys the threads share one flight: 7960 get their leader's value.",
                        shown("preset=burst", exactly("shared", 7960.0)),
                    ),
                    point(
                        "With a claim, every thread goes to Redis on its own; without one, to the origin.",
                        None,
                    ),
                ],
            ),
            deeper(
                "Prevents it and catches it.",
                &[
                    point(
                        "Normalise once (case, parameter order, encoding), in the function both layers call.",
                        None,
                    ),
                    point(
                        "Test it: fire concurrent misses at one key on one instance and count origin calls, 1.",
                        shown("preset=singleflight&i=1", exactly("recomputes", 1.0)),
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
                listen_for: "The same damage as the claim outside singleflight: one claim attempt per thread.",
                shown: on("preset=claim-outer", exactly("claim_attempts", 8000.0)),
            },
            FollowUp {
                question: 14,
                listen_for: "What coalescing shares must not be changed by a waiter.",
                shown: on("preset=burst", exactly("corrupted", 0.0)),
            },
        ],
        throws: &[Throw {
            kind: "redis",
            ask: "Redis just went down with the keys still mismatched. What reaches the origin now?",
        }],
    },
];
