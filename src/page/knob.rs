//! Every knob of the scenario, grouped the way the lessons use them, each
//! with one line on what it does (each knob's control is `knob_control`'s).
//! A knob is read and written through the core's `Scenario::get` /
//! `Scenario::set` by its long name, which is also its `data-control` name,
//! so the table cannot drift from the core.

use stampede::scenario::{Notice, Scenario, U32_BOUNDS};

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// A whole number with the core's bounds.
    Count,
    /// A fraction 0..=1.
    Fraction,
    /// XFetch's beta, 0..=XFETCH_BETA_MAX in steps of 0.1.
    Beta,
    Switch,
    Choice(&'static [(&'static str, &'static str)]),
    /// One of the pitfalls, by its kebab-case name.
    Pitfall(&'static str),
    /// Free text the core parses (the faults' list), applied on change;
    /// what it cannot read is said in a notice and the old value kept.
    Text(&'static str),
}

#[derive(Clone, Copy, Debug)]
pub struct Knob {
    /// The core's long name (or the pitfall's name); also `data-control`.
    pub name: &'static str,
    pub label: &'static str,
    pub help: &'static str,
    pub kind: Kind,
}

pub struct Group {
    pub title: &'static str,
    pub knobs: &'static [Knob],
    pub open: bool,
    /// What the group holds, said in its summary while it is closed.
    pub holds: &'static str,
}

const fn knob(name: &'static str, label: &'static str, help: &'static str, kind: Kind) -> Knob {
    Knob {
        name,
        label,
        help,
        kind,
    }
}

use Kind::{Count, Fraction, Switch};

/// The knobs in their groups. The first, open, holds the interview card's
/// knobs; every other group is one click away, and its summary says what
/// it holds.
pub const GROUPS: [Group; 8] = [
    Group {
        title: "The card",
        open: true,
        holds: "the interview card's knobs: the fleet, the two layers, failures, a cold cache, Redis down",
        knobs: &[
            knob("instances", "Instances", "Processes (pods) behind the cache; the second multiplier.", Count),
            knob("threads", "Threads each", "Request threads per instance that miss at once; the first multiplier.", Count),
            knob("singleflight", "Singleflight", "Threads of one instance that miss the same key share one computation.", Switch),
            knob("claim", "Redis claim", "SET lock:key token NX PX ttl so one instance wins the right to recompute.", Kind::Choice(&[("off", "off"), ("inner", "inside singleflight"), ("outer", "outside singleflight"), ("refresh", "refresh only")])),
            knob("fail_rate", "Failure rate", "Chance that one recompute fails.", Fraction),
            knob("workload", "Traffic", "Burst: one hot key expires; steady: traffic over time; cold: an empty cache after a restart.", Kind::Choice(&[("burst", "burst"), ("steady", "steady"), ("cold", "cold")])),
            knob("redis_down", "Redis down", "Redis is unreachable for the whole run.", Switch),
        ],
    },
    Group {
        title: "Traffic shape",
        open: false,
        holds: "keys, the burst's spread, steady and open-loop traffic, key skew",
        knobs: &[
            knob("keys", "Keys", "Distinct keys the traffic asks for; a burst always hits key 0.", Count),
            knob("spread_ms", "Burst spread ms", "The burst's requests all arrive within this window.", Count),
            knob("duration_ms", "Duration ms", "How long steady traffic runs.", Count),
            knob("think_ms", "Think time ms", "Steady traffic: mean pause between one thread's requests.", Count),
            knob("arrivals", "Arrivals", "Steady traffic: closed loop (each thread waits for its answer) or open loop (users arrive at a rate).", Kind::Choice(&[("closed", "closed loop"), ("open", "open loop")])),
            knob("rate_per_s", "Arrivals per s", "Open loop: requests a second across the fleet, whatever the latency.", Count),
            knob("key_skew", "Key skew (Zipf)", "Steady and cold traffic: Zipf skew of key popularity (0 = the workload's own; 1: a few keys hot).", Kind::Beta),
        ],
    },
    Group {
        title: "Waiting",
        open: false,
        holds: "what a claim's loser does, fail open or closed, deadlines, retries, the origin timeout, the claim's TTL, fencing, polling",
        knobs: &[
            knob("loser", "Claim losers", "What a thread that lost the claim does instead of recomputing.", Kind::Choice(&[("wait", "wait (poll)"), ("stale", "serve stale"), ("degrade", "degrade"), ("compute", "recompute anyway")])),
            knob("redis_error", "If Redis errors", "Fail open: treat the claim as won and refresh; closed: treat it as lost.", Kind::Choice(&[("open", "fail open"), ("closed", "fail closed")])),
            knob("deadline_ms", "Deadline ms", "Each caller stops waiting after this long; a recompute it started runs on.", Count),
            knob("retries", "Retries", "A caller whose attempt failed or timed out tries again, this many times (each attempt its own deadline).", Count),
            knob("retry_backoff_ms", "Retry backoff ms", "Pause before a retry: random up to this, doubled per attempt (full jitter).", Count),
            knob("origin_timeout_ms", "Origin timeout ms", "A recompute gives up on the origin after this long and frees its claim.", Count),
            knob("claim_ttl_ms", "Claim TTL ms", "The claim expires on its own after this long; size it past the origin timeout plus the write.", Count),
            knob("fenced_writes", "Fenced writes", "A claim win takes a rising number; the cache refuses a write older than the one it holds.", Switch),
            knob("poll_ms", "Poll every ms", "How often a waiting loser looks for the value and whether the claim came free.", Count),
        ],
    },
    Group {
        title: "Caching",
        open: false,
        holds: "value TTLs and jitter, stale serving, early refresh, a local copy, negative caching, admission",
        knobs: &[
            knob("value_ttl_ms", "Value TTL ms", "How long a computed value stays fresh.", Count),
            knob("jitter", "TTL jitter", "Spread each TTL by up to this fraction so keys stop expiring together.", Fraction),
            knob("stale_ms", "Stale window ms", "After expiry a value may still be served stale this long (0 = never).", Count),
            knob("stale_while_revalidate", "Serve stale, refresh behind", "On a stale hit answer at once and refresh in the background.", Switch),
            knob("xfetch_beta", "Early refresh (XFetch β)", "Readers refresh a value before it expires, more eagerly as β grows (0 = off, 1 = usual).", Kind::Beta),
            knob("local_cache_ms", "Local copy ms", "Each instance answers reads from its own copy of a value this long: no round trip (0 = off).", Count),
            knob("negative_ttl_ms", "Negative cache ms", "Cache a failure this long so retries back off (0 = off).", Count),
            knob("admission", "Admission limit", "Recomputes one instance may run at once (0 = no limit).", Count),
            knob("admission_wait_ms", "Admission queue ms", "A recompute waits this long for a permit, then answers degraded.", Count),
        ],
    },
    Group {
        title: "Origin",
        open: false,
        holds: "recompute time, capacity, an outage, a hang",
        knobs: &[
            knob("recompute_ms", "Recompute ms", "Mean time the origin takes for one recompute.", Count),
            knob("origin_capacity", "Capacity", "Concurrent recomputes the origin absorbs before it slows down.", Count),
            knob("origin_outage_ms", "Outage ms", "Every recompute started before this time fails.", Count),
            knob("hang", "Hangs", "The origin never answers.", Switch),
        ],
    },
    Group {
        title: "Redis",
        open: false,
        holds: "the round trip, throughput, how a down Redis fails, the client's timeout, the breaker",
        knobs: &[
            knob("rtt_ms", "Redis round trip ms", "Time for one command to reach Redis and answer.", Count),
            knob("redis_ops_per_ms", "Redis commands per ms", "Redis serves commands one at a time at this rate; beyond it they queue (0 = unlimited).", Count),
            knob("redis_outage", "A down Redis", "Errors at once (connection refused), or hangs until the client's timeout (a partition).", Kind::Choice(&[("error", "errors at once"), ("hang", "hangs")])),
            knob("redis_timeout_ms", "Redis client timeout ms", "A command to a Redis that hangs fails after this long.", Count),
            knob("redis_breaker_ms", "Redis breaker ms", "After a Redis error or timeout an instance stops asking Redis this long (0 = no breaker).", Count),
        ],
    },
    Group {
        title: "Faults",
        open: false,
        holds: "a crashed claim holder, faults at a moment, and curveballs thrown now",
        knobs: &[
            knob("holder_crash", "Claim holder crashes", "The first claim winner dies without releasing it.", Switch),
            knob("faults", "Faults at a moment", "kind@start+duration ms, comma-separated: redis, origin, origin-hang, origin-slow, holder, ttl-sync.", Kind::Text("redis@2000+3000")),
        ],
    },
    Group {
        title: "Pitfalls",
        open: false,
        holds: "the classic bugs: remembered failures, no deadlines, a key mismatch, a shared mutable result, a plain DEL, a claim with no PX",
        knobs: &[
            knob("pitfall-remember-failure", "Remember failures", "A failed result stays in the flight map and is handed to later callers.", Kind::Pitfall("remember-failure")),
            knob("pitfall-no-deadline", "No deadlines", "No caller deadlines and no origin timeout: a hung origin pins threads forever.", Kind::Pitfall("no-deadline")),
            knob("pitfall-key-mismatch", "Key mismatch", "The coalescing key differs from the cache key, so nothing coalesces.", Kind::Pitfall("key-mismatch")),
            knob("pitfall-mutable-result", "Mutable result", "Waiters share one mutable value and the first one changes it.", Kind::Pitfall("mutable-result")),
            knob("pitfall-plain-del", "Plain DEL", "The release is a plain DEL, no token checked: a holder past its TTL deletes another office's claim.", Kind::Pitfall("plain-del")),
            knob("pitfall-no-expiry", "Claim with no PX", "The claim never expires: a holder that dies with it locks the key for good.", Kind::Pitfall("no-expiry")),
        ],
    },
];

/// The range validation clamps a numeric knob into, as the core defines it.
pub fn knob_bounds(name: &str) -> (u32, u32) {
    match name {
        "think_ms" => (1, 600_000),
        _ => U32_BOUNDS
            .iter()
            .find(|(n, _, _)| *n == name)
            .map_or((0, u32::MAX), |&(_, lo, hi)| (lo, hi)),
    }
}

/// The knob's current value as the control shows it.
pub fn read(s: &Scenario, k: &Knob) -> String {
    match k.kind {
        Kind::Pitfall(p) => on_off(s.pitfalls.enabled().contains(&p)),
        _ => s.get(k.name).unwrap_or_default(),
    }
}

pub(crate) fn on_off(on: bool) -> String {
    if on { "1" } else { "0" }.to_string()
}

/// Sets the knob from the control's text, then validates the scenario.
/// Returns what was clamped or rejected, in words.
pub fn write(s: &mut Scenario, k: &Knob, text: &str) -> Vec<Notice> {
    let result = match k.kind {
        Kind::Pitfall(p) => {
            let mut on: Vec<&str> = s.pitfalls.enabled();
            on.retain(|x| *x != p);
            if matches!(text, "1" | "on" | "true") {
                on.push(p);
            }
            s.set("pitfalls", &on.join("."))
        }
        _ => s.set(k.name, text),
    };
    let mut notices = Vec::new();
    if let Err(e) = result {
        notices.push(Notice {
            knob: k.name.to_string(),
            message: e,
        });
    }
    notices.extend(s.validate());
    notices
}

/// The knob with this name (a core long name, or `pitfall-<name>`).
pub fn knob_named(name: &str) -> Option<Knob> {
    GROUPS
        .iter()
        .flat_map(|g| g.knobs.iter())
        .find(|k| k.name == name)
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede::scenario::Pitfalls;

    fn all() -> impl Iterator<Item = &'static Knob> {
        GROUPS.iter().flat_map(|g| g.knobs.iter())
    }

    #[test]
    fn every_scenario_knob_has_a_control() {
        // Every field of `Scenario`, as the core names it.
        for name in stampede::scenario::knob_names() {
            assert!(Scenario::default().get(name).is_some(), "core knows {name}");
            let covered = if name == "pitfalls" {
                Pitfalls::NAMES
                    .iter()
                    .all(|p| all().any(|k| k.kind == Kind::Pitfall(p)))
            } else {
                all().any(|k| k.name == name)
            };
            assert!(covered, "no control for {name}");
        }
        let mut names: Vec<_> = all().map(|k| k.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all().count(), "data-control names are unique");
    }

    #[test]
    fn controls_read_and_write_through_the_core() {
        let mut s = Scenario::default();
        for k in all() {
            let was = read(&s, k);
            assert!(
                write(&mut s, k, &was).is_empty(),
                "{} rejects its own value",
                k.name
            );
            assert_eq!(read(&s, k), was);
        }
        let pitfall = all().find(|k| k.name == "pitfall-no-deadline").unwrap();
        write(&mut s, pitfall, "1");
        assert!(s.pitfalls.no_deadline);
        write(&mut s, pitfall, "0");
        assert!(!s.pitfalls.no_deadline);
        let instances = all().find(|k| k.name == "instances").unwrap();
        let n = write(&mut s, instances, "5000");
        assert_eq!(s.instances, 1000);
        assert_eq!(n.len(), 1, "the clamp is reported: {n:?}");
    }

    #[test]
    fn help_lines_are_one_line() {
        for k in all() {
            assert!(!k.help.contains('\n') && k.help.len() < 110, "{}", k.name);
        }
        assert_eq!(knob_bounds("threads"), (1, 10_000));
        assert_eq!(knob_bounds("think_ms"), (1, 600_000));
    }
}
