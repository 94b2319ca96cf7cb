//! The verdicts' arithmetic on real runs: the best row and the A/B view's
//! better side, over the named scenarios.

use stampede::metrics::{better, differences, Better, Report, Score};
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
    let claims = d.iter().find(|x| x.name == "claim_attempts").unwrap();
    assert_eq!((claims.a, claims.b), (8000.0, 40.0));
    assert_eq!(claims.ratio, Some(0.005));
    assert_eq!(claims.better, Some('b'));
    assert!(
        d.iter().all(|x| x.name != "recomputes"),
        "both recompute once"
    );
    assert!(differences(&inner, &inner).is_empty());
    assert_eq!(better("local_hits"), Some(Better::Higher));
    assert_eq!(better("hits"), None);
    assert_eq!(better("requests"), None);
}
