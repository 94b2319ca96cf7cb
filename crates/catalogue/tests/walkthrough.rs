//! The walk-through's answers against the machine: over every preset, many
//! seeds and the interview mode's three threads, each question's right
//! option is what the thread's own log shows it did next, checked here
//! against the log and the scenario's knobs, not against the classifier.

use std::collections::HashSet;

use catalogue::walkthrough::{self as w, Asked, Kind, Level, ThreadLog, Who};
use stampede::metrics::{one_decimal, Ending};
use stampede::scenario::{self, LoserPolicy, RedisErrorPolicy, Scenario};
use stampede::sim::{Event, EventKind as E};

const SEEDS: [u64; 5] = [1, 2, 3, 7, 42];

fn whos(s: &Scenario) -> Vec<(&'static str, Who)> {
    ["holder", "office1", "office3"]
        .into_iter()
        .filter_map(|v| w::who(v, s.threads).map(|who| (v, who)))
        .collect()
}

/// The thread's event that answers `a`: the first of its log at `a.t` of
/// the kind the question says answered it.
fn answering<'a>(log: &'a ThreadLog, a: &Asked) -> (usize, &'a Event) {
    log.events
        .iter()
        .enumerate()
        .find(|(_, e)| e.t == a.t && e.kind == a.event)
        .unwrap_or_else(|| panic!("no event of the thread answers {a:?}"))
}

/// The thread's deadline shows in its log: the deadline's event, or an
/// attempt that ends in a timeout (answered, or retried).
fn reached(e: &Event) -> bool {
    e.kind == E::DeadlinePassed
        || (matches!(e.kind, E::Respond | E::Retry) && e.detail == Ending::Timeout as u8)
}

/// How the attempt under way at `from` ends: its answer, or the failure
/// it retries after.
fn next_respond(log: &ThreadLog, from: usize) -> Option<&Event> {
    log.events[from..]
        .iter()
        .find(|e| matches!(e.kind, E::Respond | E::Retry))
}

fn check(
    name: &str,
    s: &Scenario,
    log: &ThreadLog,
    asked: &[Asked],
    seen: &mut HashSet<(Kind, &'static str)>,
) {
    let ctx = |a: &Asked| format!("{name}: {a:?}");
    let mut last = 0;
    for a in asked {
        assert!(a.t >= last, "in time order: {}", ctx(a));
        last = a.t;
        let (i, e) = answering(log, a);
        assert_eq!(e.thread, log.thread.unwrap());
        // The right option is what the thread did next.
        let want: Option<&str> = match a.kind {
            Kind::LeadOrFollow => match e.kind {
                E::Lead => Some("lead"),
                E::Follow | E::Remembered => Some("follow"),
                _ => None,
            },
            Kind::Claim => match e.kind {
                E::ClaimWon => Some("won"),
                E::ClaimLost => Some("lost"),
                E::ClaimError => Some("error"),
                _ => None,
            },
            Kind::Deadline => Some(if reached(e) { "yes" } else { "no" }),
            Kind::Loser => {
                let answer = next_respond(log, i).map(|r| r.detail);
                let before_answer = &log.events[i..log.events[i..]
                    .iter()
                    .position(|e| matches!(e.kind, E::Respond | E::Retry))
                    .map_or(log.events.len(), |p| i + p)];
                match a.right {
                    "stale" => {
                        assert_eq!(s.loser, LoserPolicy::Stale, "{}", ctx(a));
                        (answer == Some(Ending::Stale as u8)).then_some("stale")
                    }
                    "degrade" => (answer == Some(Ending::Degraded as u8)).then_some("degrade"),
                    "wait" => {
                        assert_eq!(s.loser, LoserPolicy::Wait, "{}", ctx(a));
                        (before_answer
                            .iter()
                            .any(|e| matches!(e.kind, E::Poll | E::DeadlinePassed))
                            || answer == Some(Ending::Timeout as u8))
                        .then_some("wait")
                    }
                    "compute" => {
                        assert!(
                            matches!(s.loser, LoserPolicy::Compute | LoserPolicy::Stale),
                            "{}",
                            ctx(a)
                        );
                        before_answer
                            .iter()
                            .any(|e| {
                                matches!(
                                    e.kind,
                                    E::RecomputeStart | E::Lead | E::Follow | E::Shed | E::CacheGet
                                )
                            })
                            .then_some("compute")
                    }
                    _ => None,
                }
            }
            Kind::Line => {
                let mut place = stampede::read_path::Place::None;
                for e in &log.events[..=i] {
                    place = place.after(e.kind, e.detail);
                }
                Some(w::place_key(place))
            }
        };
        assert_eq!(want, Some(a.right), "{}", ctx(a));
        // One right option; the wrong ones differ from it, in key and words.
        let right: Vec<_> = a.options.iter().filter(|o| o.correct).collect();
        assert_eq!(right.len(), 1, "{}", ctx(a));
        assert_eq!(right[0].key, a.right);
        assert!(a.options.len() >= 2, "{}", ctx(a));
        let keys: HashSet<_> = a.options.iter().map(|o| o.key).collect();
        assert_eq!(keys.len(), a.options.len(), "{}", ctx(a));
        for o in &a.options {
            assert!(!o.feedback.is_empty());
            assert_eq!(o.feedback.starts_with("Right"), o.correct, "{}", ctx(a));
            if !o.correct {
                assert_ne!(o.feedback, right[0].feedback);
            }
            // The moment it names is the answering event's.
            let at = format!("{} ms", one_decimal(a.t as f64 / 1000.0));
            assert!(
                o.feedback.contains(&at),
                "{at} in {:?} ({})",
                o.feedback,
                ctx(a)
            );
        }
        seen.insert((a.kind, a.right));
    }
    // Every claim reply the thread got is asked about, and every loser's
    // answer at most once per lost claim.
    let faded: Vec<_> = asked.iter().filter(|a| a.kind != Kind::Line).collect();
    let replies = log
        .events
        .iter()
        .filter(|e| matches!(e.kind, E::ClaimWon | E::ClaimLost | E::ClaimError))
        .count();
    assert_eq!(
        faded.iter().filter(|a| a.kind == Kind::Claim).count(),
        replies,
        "{name}"
    );
    let lost = log
        .events
        .iter()
        .filter(|e| {
            e.kind == E::ClaimLost
                || (e.kind == E::ClaimError && s.redis_error == RedisErrorPolicy::Closed)
        })
        .count();
    assert!(
        faded.iter().filter(|a| a.kind == Kind::Loser).count() <= lost,
        "{name}"
    );
    // A deadline that passed while the thread waited is asked about.
    let yes = faded
        .iter()
        .filter(|a| a.kind == Kind::Deadline && a.right == "yes")
        .count();
    let passed = log.events.iter().filter(|e| reached(e)).count();
    assert!(yes <= passed, "{name}");
}

#[test]
fn the_walk_throughs_answers_are_what_the_thread_did_next() {
    let mut seen = HashSet::new();
    for p in catalogue::presets::PRESETS.iter() {
        let s = scenario::preset(p.name).unwrap();
        for seed in SEEDS {
            for (v, who) in whos(&s) {
                let name = format!("{} seed {seed} {v}", p.name);
                let log = w::thread_log(&s, seed, who);
                if log.thread.is_none() {
                    assert_eq!(who, Who::Holder, "{name}");
                    let walk = w::walk_of(&s, &log, Level::Faded);
                    assert!(walk.asked.is_empty() && walk.note.is_some(), "{name}");
                    continue;
                }
                assert!(
                    matches!(
                        log.events.first().map(|e| e.kind),
                        Some(E::Arrive | E::Retry)
                    ),
                    "{name}: the log starts with its arrival"
                );
                let narrated = w::walk_of(&s, &log, Level::Narrated);
                let faded = w::walk_of(&s, &log, Level::Faded);
                let own = w::walk_of(&s, &log, Level::OnYourOwn);
                assert!(narrated.asked.is_empty(), "{name}");
                assert!(faded.asked.iter().all(|a| a.kind != Kind::Line), "{name}");
                assert!(own.asked.len() >= faded.asked.len(), "{name}");
                // On your own asks every faded decision too, at the same moment.
                for a in &faded.asked {
                    assert!(
                        own.asked
                            .iter()
                            .any(|o| o.t == a.t && o.kind == a.kind && o.right == a.right),
                        "{name}: {a:?}"
                    );
                }
                check(&name, &s, &log, &faded.asked, &mut seen);
                check(&name, &s, &log, &own.asked, &mut seen);
                // The page's walk is the same as the log's.
                if seed == 1 {
                    assert_eq!(w::walk(&s, seed, who, Level::Faded), faded, "{name}");
                }
            }
        }
    }
    for kind in Kind::CARD {
        assert!(
            seen.iter().any(|(k, _)| *k == kind),
            "{kind:?} never asked: {seen:?}"
        );
    }
    for want in [
        (Kind::LeadOrFollow, "lead"),
        (Kind::LeadOrFollow, "follow"),
        (Kind::Claim, "won"),
        (Kind::Claim, "lost"),
        (Kind::Deadline, "yes"),
        (Kind::Deadline, "no"),
        (Kind::Loser, "wait"),
    ] {
        assert!(seen.contains(&want), "{want:?} never right: {seen:?}");
    }
    assert!(seen.iter().any(|(k, _)| *k == Kind::Line));
}

/// The first thread the run shows losing a claim.
fn first_loser(s: &Scenario, seed: u64) -> Option<u32> {
    let mut fleet = stampede::Fleet::new(s, seed);
    fleet.set_recording(true);
    fleet.run();
    fleet
        .drain_events()
        .into_iter()
        .find(|e| e.kind == E::ClaimLost)
        .map(|e| e.thread)
}

#[test]
fn every_loser_branch_comes_up_when_the_policy_says_so() {
    // The loser branches of the read path, each from a preset with the
    // policy turned: the outer claim makes office 3's thread claim itself.
    let mut got = HashSet::new();
    for (policy, link) in [
        (LoserPolicy::Stale, "preset=stale"),
        (LoserPolicy::Stale, "preset=stale&c=outer"),
        (LoserPolicy::Degrade, "preset=burst&c=outer&loser=degrade"),
        (LoserPolicy::Wait, "preset=burst&c=outer&loser=wait"),
        (LoserPolicy::Wait, "preset=burst&c=outer&loser=wait&dl=60"),
        (LoserPolicy::Compute, "preset=burst&c=outer&loser=compute"),
    ] {
        let (s, seed, notices) = Scenario::from_query(link);
        assert!(notices.is_empty(), "{link}: {notices:?}");
        assert_eq!(s.loser, policy, "{link}");
        let loser = first_loser(&s, seed).expect("somebody loses the claim");
        for who in [
            Who::Thread(0),
            w::who("office3", s.threads).unwrap(),
            Who::Thread(loser),
        ] {
            let log = w::thread_log(&s, seed, who);
            let walk = w::walk_of(&s, &log, Level::Faded);
            let mut seen = HashSet::new();
            check(link, &s, &log, &walk.asked, &mut seen);
            // A poller whose budget ends before its next read: the deadline
            // is reached though no deadline event is logged.
            if link.ends_with("dl=60") {
                assert!(seen.contains(&(Kind::Deadline, "yes")), "{link}: {seen:?}");
            }
            got.extend(
                seen.into_iter()
                    .filter(|(k, _)| *k == Kind::Loser)
                    .map(|(_, r)| r),
            );
        }
    }
    for want in ["stale", "wait", "degrade", "compute"] {
        assert!(got.contains(want), "{want} never: {got:?}");
    }
}

#[test]
fn levels_and_pickers_parse() {
    for l in Level::ALL {
        assert_eq!(Level::parse(l.name()), Some(l));
    }
    assert_eq!(Level::parse("bogus"), None);
    assert_eq!(w::who("office3", 200), Some(Who::Thread(401)));
    assert_eq!(w::who("office1", 200), Some(Who::Thread(0)));
    assert_eq!(w::who("holder", 200), Some(Who::Holder));
    assert_eq!(w::who("nobody", 200), None);
    // A thread past the fleet: nobody to follow, an explanation, no panic.
    let s = scenario::preset("burst").unwrap();
    let walk = w::walk(&s, 1, Who::Thread(u32::MAX), Level::Faded);
    assert!(walk.asked.is_empty());
    assert!(w::walk(&s, 1, Who::Holder, Level::Narrated)
        .asked
        .is_empty());
    // A fleet too big to look through in one go: what was found, and a note.
    let (big, seed, _) = Scenario::from_query("preset=burst&i=200&t=2000");
    let walk = w::walk(&big, seed, Who::Holder, Level::Faded);
    assert!(walk.thread.is_some() && !walk.asked.is_empty());
    assert!(
        walk.note.as_deref().is_some_and(|n| n.contains("too long")),
        "{walk:?}"
    );
}

fn sim(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_stampede-sim"))
        .args(args)
        .output()
        .expect("run stampede-sim");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_cli_prints_the_walk_the_page_asks() {
    // The same link, thread and level: the core's walk, as JSON.
    let (code, out, err) = sim(&[
        "--walk",
        "--url",
        "preset=hang",
        "--follow",
        "office3",
        "--level",
        "faded",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let (s, seed, _) = Scenario::from_query("preset=hang");
    let want = w::walk(
        &s,
        seed,
        w::who("office3", s.threads).unwrap(),
        Level::Faded,
    );
    assert!(!want.asked.is_empty());
    assert_eq!(out.trim(), serde_json::to_string(&want).unwrap());
    // As text: a line per question with its right option.
    let (code, out, _) = sim(&["--walk", "--url", "preset=hang", "--follow", "office3"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), want.asked.len() + 1, "{out}");
    for a in &want.asked {
        assert!(out.contains(&format!("->  {} (", a.right)), "{out}");
    }
    // Bad values: a clear message, no panic.
    let (code, _, err) = sim(&["--walk", "--level", "sideways"]);
    assert_ne!(code, 0);
    assert!(err.contains("--level: 'sideways'"), "{err}");
    let (code, _, err) = sim(&["--walk", "--follow", "somebody"]);
    assert_ne!(code, 0);
    assert!(err.contains("--follow: 'somebody'"), "{err}");
}

/// Every thread's events of a whole run of `s`, by thread.
fn every_event(s: &Scenario, seed: u64) -> std::collections::HashMap<u32, Vec<Event>> {
    let mut fleet = stampede::Fleet::new(s, seed);
    fleet.set_recording(true);
    fleet.run();
    let mut by = std::collections::HashMap::<u32, Vec<Event>>::new();
    for e in fleet.drain_events() {
        by.entry(e.thread).or_default().push(e);
    }
    by
}

/// The feedback says what happened to the followed request, read off the
/// whole run's events (not the walk's own log): "the caller gets a
/// timeout" only where its attempt is answered with one, no retry between;
/// where a retry follows it says so and how the request finally ended;
/// "answer every waiter with the same v" only where the flight settled
/// with a value (its work wrote or computed one); and every fact a
/// feedback states holds in the request's log ([`w::check`]). Over every
/// preset, with and without two retries, on several seeds and the three
/// threads. (`preset=hang&rt=2`, office 3: "the caller gets a timeout" at
/// 1,007.3 ms, where it retried twice and timed out at 3,106 ms.)
#[test]
fn the_feedback_says_how_the_request_ended() {
    let mut timeouts = 0;
    let mut retries = 0;
    let mut settled = 0;
    for p in catalogue::presets::PRESETS.iter() {
        for (extra, seeds) in [("", &[1u64][..]), ("&rt=2", &[1, 2, 7][..])] {
            let link = format!("preset={}{extra}", p.name);
            let (s, _, _) = Scenario::from_query(&link);
            for &seed in seeds {
                let all = every_event(&s, seed);
                for (v, who) in whos(&s) {
                    let name = format!("{link} seed {seed} {v}");
                    let log = w::thread_log(&s, seed, who);
                    let Some(g) = log.thread else { continue };
                    let walk = w::walk_of(&s, &log, Level::OnYourOwn);
                    if let Err(e) = w::check(&log, &walk) {
                        panic!("{name}: {e}");
                    }
                    let mine = &all[&g];
                    for a in &walk.asked {
                        let right = a.options.iter().find(|o| o.correct).unwrap();
                        let at = mine
                            .iter()
                            .position(|e| e.t == a.t && e.kind == a.event)
                            .unwrap_or_else(|| panic!("{name}: {a:?}"));
                        let end = mine[at..]
                            .iter()
                            .find(|e| matches!(e.kind, E::Respond | E::Retry));
                        if right.feedback.contains("the caller gets a timeout") {
                            assert!(
                                end.is_some_and(
                                    |e| e.kind == E::Respond && e.detail == Ending::Timeout as u8
                                ),
                                "{name}: {:?}, then {end:?}",
                                right.feedback
                            );
                            timeouts += 1;
                        }
                        if a.kind == Kind::Deadline
                            && a.right == "yes"
                            && end.is_some_and(|e| e.kind == E::Retry)
                        {
                            assert!(
                                right.feedback.contains("tries again at"),
                                "{name}: {:?}",
                                right.feedback
                            );
                            retries += 1;
                        }
                        if right.feedback.contains("with the same v") {
                            let start = mine[..at]
                                .iter()
                                .rposition(|e| e.kind == E::Arrive)
                                .unwrap_or(0);
                            let work = mine[start..at].iter().rev().find(|e| {
                                matches!(
                                    e.kind,
                                    E::CacheSet | E::RecomputeEnd | E::OriginTimeout | E::Shed
                                )
                            });
                            let answer = mine[at..]
                                .iter()
                                .find(|e| matches!(e.kind, E::Respond | E::Retry));
                            let value = match work {
                                Some(e) => {
                                    matches!(e.kind, E::CacheSet | E::RecomputeEnd) && e.detail == 0
                                }
                                None => answer.is_some_and(|e| {
                                    e.kind == E::Respond
                                        && [
                                            Ending::Hit,
                                            Ending::Stale,
                                            Ending::Computed,
                                            Ending::Shared,
                                        ]
                                        .iter()
                                        .any(|x| *x as u8 == e.detail)
                                }),
                            };
                            assert!(value, "{name}: {:?} with no value", right.feedback);
                            settled += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(
        timeouts > 10 && retries > 10 && settled > 10,
        "{timeouts} {retries} {settled}"
    );
}
