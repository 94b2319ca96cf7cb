//! The verdicts' arithmetic on real runs: the best row and the A/B view's
//! better side, over the named scenarios.

use stampede::metrics::{differences, Better, Metric, Report, Score};
use stampede::scenario::preset;
use stampede::sim::Fleet;

#[test]
fn a_run_whose_requests_failed_is_never_best() {
    // The hung origin's runs: one recompute, every request timed out.
    let hung = Fleet::new(&preset("hang").unwrap(), 1).run();
    let card = Fleet::new(&preset("burst").unwrap(), 1).run();
    let (hung, card) = (Score::of(&hung, true), Score::of(&card, true));
    assert!(hung.failing() && !card.failing());
    assert_eq!(Score::best(&[Some(hung), Some(card)]), Some(1));
    assert_eq!(Score::best(&[Some(hung)]), None);
    // Mid-run, unanswered requests are on their way, not failures.
    let r = Report {
        requests: 10,
        hits: 4,
        pinned: 6,
        ..Report::default()
    };
    assert!(!Score::of(&r, false).failing());
    assert!(Score::of(&r, true).failing());
}

#[test]
fn differences_say_which_side_is_better() {
    let run = |name: &str| Fleet::new(&preset(name).unwrap(), 1).run();
    let (outer, inner) = (run("claim-outer"), run("burst"));
    let d = differences(&outer, &inner);
    let claims = d
        .iter()
        .find(|x| x.metric == Metric::ClaimAttempts)
        .unwrap();
    assert_eq!((claims.a, claims.b), (8000.0, 40.0));
    assert_eq!(claims.ratio, Some(0.005));
    assert_eq!(claims.better, Some('b'));
    assert!(
        d.iter().all(|x| x.metric != Metric::Recomputes),
        "both recompute once"
    );
    assert!(differences(&inner, &inner).is_empty());
    assert_eq!(Metric::LocalHits.better(), Some(Better::Higher));
    assert_eq!(Metric::Hits.better(), None);
    assert_eq!(Metric::Requests.better(), None);
}

/// The open-loop preset, scored as the arithmetic scores its rows: the
/// callers turned away at the door count against a run, so the run with
/// no defence (whose pool fills with origin calls) is not the best.
#[test]
fn turned_away_callers_count_against_a_run() {
    use stampede::scenario::{ClaimMode, Scenario};
    let s = preset("open-loop").unwrap();
    let rows = [
        (false, ClaimMode::Off),
        (true, ClaimMode::Off),
        (true, ClaimMode::Inner),
    ]
    .map(|(singleflight, claim)| {
        let r = Fleet::new(
            &Scenario {
                singleflight,
                claim,
                ..s.clone()
            },
            1,
        )
        .run();
        let sc = Score::of(&r, true);
        // Every request is scored, once: the denominator is a counter.
        assert_eq!(sc.total(), r.requests, "{r:?}");
        (r, sc)
    });
    let none = &rows[0];
    assert!(
        none.0.rejected > 0,
        "the preset turns callers away: {:?}",
        none.0
    );
    let best = Score::best(&rows.each_ref().map(|r| Some(r.1))).unwrap();
    assert_ne!(
        best,
        0,
        "no defence is best: {:?}",
        rows.each_ref().map(|r| r.1)
    );
}

/// A Redis command that failed is one command, not two, and not none: it
/// is no round trip (nothing answered it), but it was sent.
#[test]
fn a_failed_redis_command_counts_once() {
    for name in ["redis-down", "redis-hang"] {
        let r = Fleet::new(&preset(name).unwrap(), 1).run();
        assert!(r.redis_errors > 0);
        assert_eq!(r.redis_round_trips, 0, "{name}");
        assert_eq!(Score::of(&r, true).redis, r.redis_errors, "{name}");
    }
    let (s, _, _) = stampede::scenario::Scenario::from_query("preset=burst&f=redis@0%2B3");
    let r = Fleet::new(&s, 1).run();
    assert!(r.redis_errors > 0 && r.redis_round_trips > 0, "{r:?}");
    assert_eq!(
        Score::of(&r, true).redis,
        r.redis_round_trips + r.redis_errors
    );
}
