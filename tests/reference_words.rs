//! The static reference's words (`index.html`: the interview answers and
//! the printable summary; `real-systems.html`: the table), the README and
//! the reference it links under `docs/` (the core's decisions in
//! `docs/CORE.md`, the real-systems table in `docs/REAL-SYSTEMS.md`), pinned
//! to the simulation: every number they state is the run's, and the corrections of
//! issue 15 stay made (the false sentences are gone, the true ones are
//! there). A host test; on wasm32 it compiles to nothing.
#![cfg(not(target_arch = "wasm32"))]

use stampede::scenario::Scenario;
use stampede::sim::{EventKind, Fleet};
use stampede::Report;

const HTML: &str = include_str!("../index.html");
/// The real-systems table, a page of its own beside `index.html`.
const REAL: &str = include_str!("../real-systems.html");
const README: &str = include_str!("../README.md");
/// The core's reference, moved out of the README (issue 30): its modules and
/// the decisions worth knowing.
const CORE_MD: &str = include_str!("../docs/CORE.md");
/// The real-systems table in Markdown, moved out of the README (issue 30).
const REAL_MD: &str = include_str!("../docs/REAL-SYSTEMS.md");
/// The rest of the reference the README links (issue 30), read for what no
/// page of it may say.
const OTHER_DOCS: [(&str, &str); 6] = [
    ("docs/PAGE.md", include_str!("../docs/PAGE.md")),
    ("docs/LINKS.md", include_str!("../docs/LINKS.md")),
    ("docs/HOOKS.md", include_str!("../docs/HOOKS.md")),
    ("docs/CLI.md", include_str!("../docs/CLI.md")),
    ("docs/TESTING.md", include_str!("../docs/TESTING.md")),
    ("docs/BUILD.md", include_str!("../docs/BUILD.md")),
];
/// The async singleflight group whose panic handling question 4 cites.
const GROUP: &str = include_str!("../crates/stampede-redis/src/group.rs");

/// Whitespace collapsed, so a phrase matches across Markdown's line wraps.
fn flat(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The static reference: `index.html` and `real-systems.html`.
fn html() -> String {
    flat(&format!("{HTML}{REAL}"))
}

fn readme() -> String {
    flat(README)
}

fn core_md() -> String {
    flat(CORE_MD)
}

fn real_md() -> String {
    flat(REAL_MD)
}

/// Every page of words a reader meets, by name: the static reference, the
/// README and every Markdown file of `docs/` that took part of it. What the
/// README must never say, none of them may say.
fn every_page() -> Vec<(&'static str, String)> {
    let mut pages = vec![
        ("index.html", html()),
        ("README", readme()),
        ("docs/CORE.md", core_md()),
        ("docs/REAL-SYSTEMS.md", real_md()),
    ];
    pages.extend(OTHER_DOCS.iter().map(|(name, text)| (*name, flat(text))));
    pages
}

#[track_caller]
fn says(doc: &str, name: &str, phrase: &str) {
    assert!(doc.contains(phrase), "{name} should say: {phrase}");
}

#[track_caller]
fn never_says(doc: &str, name: &str, phrase: &str) {
    let (d, p) = (doc.to_lowercase(), phrase.to_lowercase());
    assert!(!d.contains(&p), "{name} still says: {phrase}");
}

/// The fleet of a share link's query, on the link's seed (1 unless it says),
/// as the page runs it: a link with notices would show a banner.
fn fleet(query: &str) -> Fleet {
    let (s, seed, notices) = Scenario::from_query(query);
    assert!(notices.is_empty(), "?{query}: {notices:?}");
    Fleet::new(&s, seed)
}

fn run(query: &str) -> Report {
    fleet(query).run()
}

/// 8000 -> "8,000", as the words write counts.
fn n(x: u64) -> String {
    let digits: Vec<char> = x.to_string().chars().rev().collect();
    let groups: Vec<String> = digits.chunks(3).map(|g| g.iter().rev().collect()).collect();
    groups.into_iter().rev().collect::<Vec<_>>().join(",")
}

fn metric(r: &Report, name: &str) -> String {
    r.fields()
        .into_iter()
        .find(|(k, _)| k == name)
        .unwrap_or_else(|| panic!("no metric {name}"))
        .1
}

#[test]
fn layering_saves_claims_and_polls_not_the_gets() {
    let (h, md) = (html(), readme());
    let card = run("preset=burst");
    let outer = run("preset=claim-outer");
    // Every thread GETs before it joins a flight: at least one round trip
    // per request in both orders.
    assert_eq!(card.requests, 8000);
    assert!(card.redis_round_trips >= card.requests);
    assert!(outer.redis_round_trips >= outer.requests);
    assert_eq!(card.claim_attempts, 40);
    assert_eq!(outer.claim_attempts, 8000);
    let gets = format!("the same {} GETs", n(card.requests));
    let ours = format!(
        "The card makes {} claim attempts and {} Redis round trips in all.",
        card.claim_attempts,
        n(card.redis_round_trips)
    );
    let theirs = format!(
        "{} claim attempts and {} round trips",
        n(outer.claim_attempts),
        n(outer.redis_round_trips)
    );
    for p in [&gets, &ours, &theirs] {
        says(&h, "question 3", p);
    }
    says(
        &md,
        "README",
        &format!(
            "{} claim attempts instead of {}, and {} Redis round trips in all instead of {}",
            card.claim_attempts,
            n(outer.claim_attempts),
            n(card.redis_round_trips),
            n(outer.redis_round_trips)
        ),
    );
    says(
        &md,
        "README",
        &format!("({} GETs either way)", n(card.requests)),
    );
    says(
        &h,
        "the summary",
        "every thread GETs, but 40 claim and poll, not 8,000",
    );
    for (name, doc) in every_page() {
        for p in [
            "only one thread per instance ever",
            "ever talks to Redis",
            "ever reaches Redis",
            "40 callers reach Redis",
        ] {
            never_says(&doc, name, p);
        }
    }
}

#[test]
fn refused_releases_are_told_apart() {
    let h = html();
    let r = run("preset=short-ttl");
    assert!(r.releases > 0 && r.releases_refused == r.releases);
    assert_eq!(
        r.releases_refused_expired + r.releases_refused_taken,
        r.releases_refused
    );
    assert!(r.releases_refused_taken > 0 && r.releases_refused_expired > 0);
    says(
        &h,
        "question 10",
        &format!(
            "all {} releases come too late and are refused; {} find the claim expired and free, and {} find another instance holding it, the only ones a plain <code>DEL</code> would have harmed",
            r.releases_refused, r.releases_refused_expired, r.releases_refused_taken
        ),
    );
    says(
        &h,
        "question 10",
        "a late release finds it gone and deletes nothing either way",
    );
    never_says(&h, "question 10", "every late release is refused");
}

#[test]
fn stale_while_revalidate_does_not_survive_redis_down() {
    let h = html();
    let swr = run("preset=swr");
    let down = run("preset=swr&rd=1");
    assert_eq!(swr.stale_served, swr.requests);
    assert_eq!(down.stale_served, 0, "the stale copy lives in Redis");
    says(
        &h,
        "question 9",
        &format!(
            "the same with Redis down</a>: {} stale answers and {} recomputes",
            down.stale_served, down.recomputes
        ),
    );
    says(&h, "question 9", "the stale copy lives in Redis");
    says(
        &h,
        "the summary",
        "a stale copy kept in Redis goes down with Redis",
    );
    for (name, doc) in every_page() {
        never_says(&doc, name, "never stalls a request");
        never_says(&doc, name, "Redis outage never");
    }
}

#[test]
fn a_panic_fails_the_waiters_and_a_cancelled_leader_hands_over() {
    let h = html();
    never_says(&h, "question 4", "href=\"?rtt=600\"");
    says(
        &h,
        "question 4",
        "A panic inside the computation is the computation failing: every waiter attached to the flight gets that failure",
    );
    says(&h, "question 4", "<code>Failure::Panicked</code>");
    // What the answer says of the async group is its behaviour, tested
    // where it lives: `a_panicking_computation_fails_every_waiter_and_frees_the_key`
    // in crates/stampede-redis/tests/group.rs. Here, only that the group
    // still answers a panic with its own failure kind.
    assert!(
        GROUP.contains("Failure::Panicked") || GROUP.contains("Panicked"),
        "the async group has no panic failure: question 4 names one"
    );
    let link = "rc=1500&sp=1000";
    says(
        &h,
        "question 4",
        "<a href=\"?rc=1500&amp;sp=1000\" data-expect-metric=\"handovers\" data-expect=\"&gt;0\">",
    );
    let r = run(link);
    assert_eq!(r.recomputes, 1);
    assert!(r.handovers > 0 && r.shared > 0);
    says(
        &h,
        "question 4",
        &format!(
            "({} handovers); {} early callers time out, and {} later ones get the one recompute's value",
            n(r.handovers),
            n(r.timeouts),
            n(r.shared)
        ),
    );
    let (s, _, _) = Scenario::from_query(link);
    assert!(
        s.recompute_ms > s.deadline_ms,
        "the leaders must give up before the value lands"
    );
    says(
        &h,
        "question 4",
        &format!(
            "with a {} s recompute and callers arriving over {} s, the leaders of the instances that lost the claim reach their {} s deadline",
            s.recompute_ms as f64 / 1000.0,
            s.spread_ms / 1000,
            s.deadline_ms / 1000
        ),
    );
}

#[test]
fn fail_open_needs_fail_fast_and_admission_control() {
    let h = html();
    let card = run("rd=1");
    assert_eq!(card.timeouts, 0);
    says(
        &h,
        "question 13",
        &format!("singleflight still holds: {} in the card", card.recomputes),
    );
    assert_eq!(card.recomputes, 40);
    let steady = "i=10&t=20&w=steady&vt=5000&dur=20000&th=100";
    let down = run(&format!("rd=1&{steady}"));
    let up = run(steady);
    let (s, _, _) = Scenario::from_query(steady);
    // At least one recompute per instance per expiry (the claim's saving is
    // gone); here more, since the cache is in the same Redis.
    assert!(down.recomputes >= u64::from(s.instances) * up.recomputes);
    says(
        &h,
        "question 13",
        &format!(
            "{} s of steady traffic on {} instances with Redis down</a>: {} recomputes, against {} with Redis up",
            s.duration_ms / 1000,
            s.instances,
            n(down.recomputes),
            n(up.recomputes)
        ),
    );
    for p in [
        "Fail open must also fail fast",
        "only as good as a short client timeout or a circuit breaker",
        "at least one recompute per instance per expiry for every key",
        "So it belongs behind admission control.",
    ] {
        says(&h, "question 13", p);
    }
    says(
        &h,
        "the summary",
        "Redis down: fail open, but fail fast (a short client timeout or a breaker) and behind admission control",
    );
    never_says(
        &h,
        "the summary",
        "Redis down: fail open, the refresh goes on.",
    );
}

/// Question 13 names the page's two outages apart (issue 39 §6): one that
/// errors refuses each command within a round trip, one that hangs holds
/// each until the client's timeout; both answer no command, and each
/// number is its run's.
#[test]
fn question_13_tells_an_erroring_redis_from_a_hanging_one() {
    let h = html();
    never_says(
        &h,
        "question 13",
        "answers every command with an error within one round trip",
    );
    let (down_q, hang_q) = ("rd=1", "rd=1&ro=hang");
    let (s, _, _) = Scenario::from_query(hang_q);
    let (down, hang) = (run(down_q), run(hang_q));
    for r in [&down, &hang] {
        assert!(r.redis_errors > 0 && r.redis_round_trips == 0, "{r:?}");
    }
    assert!(down.redis_p99_ms <= f64::from(s.rtt_ms), "{down:?}");
    assert_eq!(hang.redis_p99_ms, f64::from(s.redis_timeout_ms), "{hang:?}");
    assert!(hang.p99_ms > down.p99_ms && hang.p99_ms < f64::from(s.deadline_ms));
    says(
        &h,
        "question 13",
        &format!(
            "a Redis that errors</a> refuses each command at once, within the {} ms round trip, and the callers' p99 is {} ms",
            s.rtt_ms,
            metric(&down, "p99_ms")
        ),
    );
    says(
        &h,
        "question 13",
        &format!(
            "a Redis that hangs</a> holds each command until the client's {} ms timeout, and the callers' p99 is {} ms, near their {} ms deadline",
            s.redis_timeout_ms,
            metric(&hang, "p99_ms"),
            n(u64::from(s.deadline_ms))
        ),
    );
}

#[test]
fn the_origin_timeout_bounds_the_wait_not_the_call() {
    let (h, core) = (html(), core_md());
    let mut f = fleet("preset=hang");
    let r = f.run();
    assert_eq!(r.origin_timeouts, 1);
    assert!(
        f.origin_running() >= 1,
        "the hung call should still run at the origin"
    );
    let s = f.scenario();
    says(
        &h,
        "question 5",
        &format!(
            "the {} s origin timeout frees the flight and the claim, and the call it gave up on is still running at the origin when the run ends",
            s.origin_timeout_ms / 1000
        ),
    );
    says(
        &h,
        "question 5",
        "An origin timeout bounds the wait for the origin, not the call",
    );
    says(
        &h,
        "the summary",
        "# an origin timeout bounds the wait, not the call",
    );
    says(
        &h,
        "the summary",
        "The origin timeout bounds the wait, not the call: cancellation at the origin, a breaker or a negative cache bound that.",
    );
    says(
        &core,
        "docs/CORE.md",
        "The origin timeout bounds the wait for the origin, not the call",
    );
    says(
        &core,
        "docs/CORE.md",
        "cancellation at the origin, a circuit breaker, or a short negative cache",
    );
    never_says(
        &h,
        "question 5",
        "The work needs bounds of its own instead: an origin timeout.",
    );
    never_says(&h, "the summary", "# bounded by an origin timeout");
    never_says(&h, "the summary", "the work has its own timeout");
}

#[test]
fn a_cheap_recompute_costs_the_poll_interval() {
    let h = html();
    let alone = run("preset=cheap");
    let claim = run("rc=20");
    let fast_poll = run("rc=20&poll=20");
    let slow_alone = run("c=off&rc=700");
    let slow_claim = run("rc=700");
    assert_eq!(Scenario::default().poll_ms, 50);
    // The median waits for the losers' poll, not for a round trip.
    assert!(claim.p50_ms > alone.p50_ms && claim.p50_ms >= 40.0);
    assert!(claim.p99_ms < alone.p99_ms);
    assert!(fast_poll.p50_ms < alone.p50_ms);
    let ms = |x: f64| format!("{x:.1} ms");
    says(
        &h,
        "question 2",
        &format!(
            "at 20 ms with the default 50 ms poll, the median caller waits {} with the claim against {} without, while the p99 is still the claim's ({} against {}",
            ms(claim.p50_ms),
            ms(alone.p50_ms),
            ms(claim.p99_ms),
            ms(alone.p99_ms)
        ),
    );
    says(
        &h,
        "question 2",
        &format!(
            "Poll every 20 ms and the claim answers in {} (p99 {})",
            ms(fast_poll.p50_ms),
            ms(fast_poll.p99_ms)
        ),
    );
    says(
        &h,
        "question 2",
        &format!(
            "({} Redis round trips against {}); at 700 ms the claim makes {} against {}",
            n(claim.redis_round_trips),
            n(alone.redis_round_trips),
            n(slow_claim.redis_round_trips),
            n(slow_alone.redis_round_trips)
        ),
    );
    says(
        &h,
        "question 2",
        "The honest case for singleflight alone is then simplicity",
    );
    says(
        &h,
        "question 2",
        "the claim's cost is the losers' poll interval, not a round trip",
    );
    never_says(&h, "question 2", "a claim would add a round trip");
    // "With the default poll the claim still has the better p99 at every cost
    // from 20 to 700 ms" (issue 15): the words lean on it.
    for rc in [20, 50, 100, 200, 400, 700] {
        let a = run(&format!("c=off&rc={rc}"));
        let b = run(&format!("rc={rc}"));
        assert!(
            b.p99_ms <= a.p99_ms,
            "at {rc} ms the claim's p99 {} > {}",
            b.p99_ms,
            a.p99_ms
        );
    }
}

#[test]
fn a_cold_start_needs_both() {
    let h = html();
    let with = run("preset=cold");
    let without = run("preset=cold&sf=0");
    // Uniformly popular keys: nothing to coalesce.
    assert_eq!(with.recomputes, without.recomputes);
    says(
        &h,
        "question 8",
        &format!(
            "{} recomputes with singleflight, {} without",
            with.recomputes, without.recomputes
        ),
    );
    says(
        &h,
        "question 8",
        "It needs coalescing too: popularity in a real restart is skewed",
    );
    says(
        &h,
        "the summary",
        "a cold cache needs admission control and coalescing both",
    );
    never_says(&h, "index.html", "needs admission control, not coalescing");
    never_says(&h, "index.html", "nothing to coalesce, so");
    // Skewed keys: coalescing answers more callers with a value.
    let answered = |r: &stampede::Report| r.hits + r.computed + r.shared + r.stale_served;
    let skew = run("preset=cold-skew");
    let bare = run("preset=cold-skew&sf=0&c=off");
    assert!(answered(&skew) > answered(&bare));
    says(
        &h,
        "question 8",
        &format!(
            "the cold-skew preset: {} of {} with singleflight and the claim, {} without",
            answered(&skew),
            skew.requests,
            answered(&bare)
        ),
    );
    never_says(&h, "index.html", "this model has no skew");
}

#[test]
fn duplicate_work_is_instances_times_threads_only_within_one_recompute() {
    let (h, md) = (html(), readme());
    let naive = run("preset=naive");
    assert_eq!(naive.recomputes, 40 * 200);
    let mut f = fleet("preset=naive&sp=5000");
    f.set_recording(true);
    let r = f.run();
    let first = f
        .drain_events()
        .into_iter()
        .find(|e| e.kind == EventKind::CacheSet && e.detail == 0)
        .expect("a value is written")
        .t as f64
        / 1000.0;
    let (s, _, _) = Scenario::from_query("preset=naive&sp=5000");
    let rate = f64::from(s.instances * s.threads) / f64::from(s.spread_ms);
    let formula = rate * first;
    assert!(
        (formula - r.recomputes as f64).abs() / (r.recomputes as f64) < 0.1,
        "arrival rate x time to the first write = {formula:.0}, the run makes {}",
        r.recomputes
    );
    says(
        &h,
        "the summary",
        "When every thread misses within one recompute, duplicate recomputes of one expired key = instances × threads.",
    );
    says(
        &h,
        "the summary",
        &format!(
            "{} arrivals over {} s with the first write after {:.0} ms make {} recomputes",
            n(u64::from(s.instances * s.threads)),
            s.spread_ms / 1000,
            first,
            r.recomputes
        ),
    );
    says(
        &md,
        "README",
        &format!(
            "`preset=naive&sp=5000` ({} arrivals over {} s, the first write after {:.0} ms) makes {}.",
            n(u64::from(s.instances * s.threads)),
            s.spread_ms / 1000,
            first,
            r.recomputes
        ),
    );
    says(
        &md,
        "README",
        "when every thread misses within one recompute",
    );
    never_says(&h, "the summary", "= instances × threads that miss it");
}

/// How long before the value's expiry the first early refresh of each
/// expiry started, in seconds.
fn xfetch_margins(query: &str) -> Vec<f64> {
    let mut f = fleet(query);
    f.set_recording(true);
    f.run();
    let ttl = u64::from(f.scenario().value_ttl_ms) * 1000;
    let (mut expiry, mut first, mut out) = (None, false, vec![]);
    for e in f.drain_events() {
        match e.kind {
            _ if e.key != 0 => {}
            EventKind::CacheSet if e.detail == 0 => (expiry, first) = (Some(e.t + ttl), true),
            EventKind::RecomputeStart if first => {
                if let Some(x) = expiry {
                    out.push((x as f64 - e.t as f64) / 1e6);
                }
                first = false;
            }
            _ => {}
        }
    }
    out
}

#[test]
fn xfetch_refreshes_earlier_the_more_traffic() {
    let (h, core) = (html(), core_md());
    let range = |m: &[f64]| {
        let lo = m.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = m.iter().copied().fold(0.0, f64::max);
        (lo, hi)
    };
    let preset = xfetch_margins("preset=xfetch");
    let card = xfetch_margins("preset=xfetch&i=40&t=200");
    assert!(preset.len() >= 3 && card.len() >= 3);
    let mean = |m: &[f64]| m.iter().sum::<f64>() / m.len() as f64;
    assert!(
        mean(&card) > mean(&preset),
        "more traffic should refresh earlier"
    );
    let (a, b) = range(&preset);
    let (c, d) = range(&card);
    says(
        &h,
        "the reference note",
        &format!("began {a:.1}–{b:.1} s before a 5 s expiry in the xfetch preset (10 × 20 threads), and {c:.1}–{d:.1} s before it at 40 × 200"),
    );
    says(
        &core,
        "docs/CORE.md",
        &format!("began {a:.1}-{b:.1} s before a 5 s expiry in the `xfetch` preset (10 x 20), {c:.1}-{d:.1} s before it at 40 x 200"),
    );
    says(
        &h,
        "the reference note",
        "How early grows with traffic, roughly Δ·β·ln(rate·Δ·β)",
    );
    for (name, doc) in every_page() {
        never_says(&doc, name, "just before expir");
    }
}

#[test]
fn a_late_writer_needs_no_lock() {
    let (h, core) = (html(), core_md());
    let r = run("preset=late-writer&c=off");
    assert_eq!(r.claim_wins, 0);
    assert!(r.stale_overwrites > 0, "unclaimed fills overwrite too");
    says(
        &h,
        "question 11",
        &format!("with no claim at all</a> {} do.", r.stale_overwrites),
    );
    says(
        &core,
        "docs/CORE.md",
        &format!("writes an older value last {} times", r.stale_overwrites),
    );
    for p in [
        "The damage itself needs no lock",
        "a database write plus a cache delete racing a slow fill",
        "memcache's leases fix that",
        "That race is not modelled here.",
    ] {
        says(&h, "question 11", p);
    }
    says(&core, "docs/CORE.md", "is not modelled");
}

#[test]
fn negative_caching_tells_a_not_found_from_an_error() {
    let h = html();
    for p in [
        "A not-found is a real answer: cache it like a value.",
        "An error is not: cache it briefly or not at all.",
        "needs validation or a Bloom filter in front",
    ] {
        says(&h, "question 8", p);
    }
    never_says(&h, "question 8", "a short negative cache fixes it");
}

#[test]
fn the_claim_ttl_exceeds_the_origin_timeout_plus_the_write() {
    let (h, core) = (html(), core_md());
    let s = Scenario::default();
    assert!(
        s.claim_ttl_ms > s.origin_timeout_ms + s.rtt_ms,
        "the defaults break the rule the words give"
    );
    says(
        &h,
        "question 12",
        &format!(
            "a {} s claim TTL over a {} s origin timeout and a {} ms write",
            s.claim_ttl_ms / 1000,
            s.origin_timeout_ms / 1000,
            s.rtt_ms
        ),
    );
    says(
        &h,
        "question 12",
        "the origin timeout plus the write (or renew the claim while the work runs)",
    );
    says(
        &h,
        "the summary",
        &format!(
            "The claim's TTL exceeds the origin timeout plus the write ({} s over {} s here)",
            s.claim_ttl_ms / 1000,
            s.origin_timeout_ms / 1000
        ),
    );
    says(
        &core,
        "docs/CORE.md",
        &format!(
            "the defaults, {} s over {} s and a {} ms round trip, follow that rule",
            s.claim_ttl_ms / 1000,
            s.origin_timeout_ms / 1000,
            s.rtt_ms
        ),
    );
    never_says(&h, "the summary", "sits above the p99 recompute");
    never_says(
        &h,
        "question 12",
        "Longer than the slowest recompute you expect",
    );
}

/// The real-systems rows of real-systems.html: (system, the row's text).
fn html_rows() -> Vec<(String, String)> {
    let body = REAL
        .split("<tbody>")
        .nth(1)
        .unwrap()
        .split("</tbody>")
        .next()
        .unwrap();
    body.split("<tr>")
        .skip(1)
        .map(|row| {
            let system = row
                .split("<th scope=\"row\">")
                .nth(1)
                .unwrap()
                .split("</th>")
                .next()
                .unwrap();
            (system.to_string(), flat(row))
        })
        .collect()
}

#[test]
fn the_real_systems_rows_follow_their_sources() {
    let (h, md) = (html(), real_md());
    let rows = html_rows();
    // One source per row, a real address, in the last cell (the e2e test
    // reads exactly one link there).
    for (system, row) in &rows {
        let last = row.rsplit("<td>").next().unwrap();
        assert_eq!(last.matches("<a ").count(), 1, "{system}: {row}");
        assert!(last.contains("href=\"https://"), "{system}: {row}");
    }
    // docs/REAL-SYSTEMS.md carries the same table.
    let md_rows = REAL_MD
        .lines()
        .skip_while(|l| !l.starts_with("| system | lesson |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .count();
    assert_eq!(
        md_rows,
        rows.len(),
        "docs/REAL-SYSTEMS.md's table and the page's differ in rows"
    );
    let row = |system: &str, lesson: &str| -> String {
        rows.iter()
            .find(|(s, r)| s.contains(system) && r.contains(&format!("<td>{lesson}</td>")))
            .unwrap_or_else(|| panic!("no {system} row for {lesson}"))
            .1
            .clone()
    };
    // NGINX: the lock is for a new entry; an expired one is use_stale's.
    let lock = row("NGINX", "singleflight");
    assert!(
        lock.contains("fills a <em>new</em> cache entry")
            && lock.contains("An expired entry takes no lock")
    );
    let stale = row("NGINX", "serve stale: the expired entry");
    assert!(
        stale.contains("#proxy_cache_use_stale")
            && stale.contains("The case Stampede Lab's card is about")
    );
    says(
        &h,
        "the reference note",
        "only a missing entry reaches <code>ngx_http_file_cache_lock</code>",
    );
    // CDNs coordinate their copies through tiers and shields.
    assert!(
        row("Cloudflare", "the instances: copies across data centres")
            .contains("only upper tiers ask the origin")
    );
    assert!(
        row("Amazon CloudFront", "the instances: copies across edges").contains("Origin Shield")
    );
    for (name, doc) in every_page() {
        never_says(&doc, name, "None of the caches below coordinates");
        never_says(&doc, name, "None of these caches coordinates");
    }
    for (doc, name) in [(&h, "index.html"), (&md, "docs/REAL-SYSTEMS.md")] {
        says(
            doc,
            name,
            "Each cache below coalesces within one copy of itself",
        );
    }
    // CloudFront: only minimum TTL 0 plus no-cache stops collapsing.
    let cf = row("Amazon CloudFront", "singleflight (at an edge)");
    assert!(cf.contains("minimum TTL 0") && cf.contains("even a <code>no-cache</code> one"));
    never_says(&h, "index.html", "responses may be shared with them");
    // groupcache mirrors hot keys to its peers.
    assert!(row("groupcache", "a hot key's copies").contains("one time in ten"));
    // Cloudflare per its current docs: asynchronous revalidation.
    assert!(row("Cloudflare", "serve stale; collapsing").contains("asynchronous"));
    never_says(
        &h,
        "index.html",
        "After expiry one request revalidates while it and the others get the stale copy.",
    );
    // Varnish's built-in VCL now takes the hit-for-miss TTL from a parameter.
    assert!(row("Varnish", "don't coalesce the uncacheable")
        .contains("<code>uncacheable_ttl</code>, 2m"));
    // Fastly's docs: each queued request goes on its own, not one at a time.
    assert!(row("Fastly", "singleflight; don't coalesce the uncacheable").contains("on its own"));
    never_says(&h, "index.html", "one at a time, which hit-for-pass");
}

/// Every answer's scenario link loads without a notice, and where it names
/// an exact number, the host run gives that number (the e2e test checks the
/// page; this checks the words against the core without a browser).
#[test]
fn every_answer_link_is_a_clean_scenario_with_its_number() {
    let mut checked = 0;
    for part in HTML.split("<a href=\"?").skip(1) {
        let tag = part.split('>').next().unwrap();
        let Some(metric) = tag.split("data-expect-metric=\"").nth(1) else {
            continue;
        };
        let metric = metric.split('"').next().unwrap();
        let query = tag.split('"').next().unwrap().replace("&amp;", "&");
        if query.starts_with("cmp=") {
            continue;
        }
        let want = tag
            .split("data-expect=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        let got = metric_of(&query, metric);
        match want.strip_prefix("&gt;") {
            Some(lo) => assert!(
                got.parse::<f64>().unwrap() > lo.parse::<f64>().unwrap(),
                "?{query}: {metric} = {got}, want >{lo}"
            ),
            None => assert_eq!(got, want, "?{query}: {metric}"),
        }
        checked += 1;
    }
    assert!(checked >= 18, "{checked} links checked");
    for id in [
        "id=\"questions\"",
        "id=\"real-systems\"",
        "id=\"summary\"",
        "id=\"lab\"",
    ] {
        assert!(HTML.contains(id), "{id} is gone");
    }
    assert_eq!(HTML.matches("<details data-question=").count(), 15);
}

fn metric_of(query: &str, name: &str) -> String {
    metric(&run(query), name)
}
