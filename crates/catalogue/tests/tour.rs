//! The guided tour's predictions, asked as the page asks them: each step's
//! options are worked out on the step's own run, at its pause or its end
//! (`src/lesson/tour_view.rs` runs `tour::answers` on that report).

use catalogue::tour::{self, Answer, Step};
use stampede::{Fleet, Report, Scenario};

/// The step's run as the page reveals it: at its pause, or its end.
fn revealed(step: &Step) -> (Scenario, Report) {
    let (s, seed, notices) = Scenario::from_query(step.row.link);
    assert!(notices.is_empty(), "{}: {notices:?}", step.row.link);
    let mut fleet = Fleet::new(&s, seed);
    let until = step.pause_ms.map_or(u64::MAX, |ms| u64::from(ms) * 1000);
    fleet.advance_to(until, usize::MAX);
    (s, fleet.report())
}

/// An option's number, if it is one (`8000`, `56.319 ms`).
fn number(label: &str) -> Option<f64> {
    label.trim_end_matches(" ms").parse().ok()
}

/// A round number: 0, or one significant digit (1, 40, 200, 8000, 20.0).
/// A learner who knows nothing still spots the one odd number among round
/// ones, or the one round number among odd ones.
fn round(n: f64) -> bool {
    let m = n.abs();
    if m == 0.0 {
        return true;
    }
    let scale = 10f64.powf(m.log10().floor());
    let lead = m / scale;
    (lead - lead.round()).abs() < 1e-9
}

/// The numbers a text states, as the lessons' own check reads them (a
/// digit glued to a letter, as in p99, is part of a name).
fn numbers_in(text: &str) -> Vec<f64> {
    catalogue::lesson::numbers_in(text)
        .iter()
        .filter_map(|n| n.replace(',', "").parse().ok())
        .collect()
}

/// Why the options give their right answer away, if they do: the right
/// number is the only one of its kind (the only odd number among round
/// ones, or the only round one among odd ones), or the words shown before
/// the reveal already state it.
fn gives_away(options: &[Answer], words: &str) -> Option<String> {
    let right = options.iter().find(|a| a.right)?;
    let n = number(&right.label)?;
    let same_kind = options
        .iter()
        .filter(|a| !a.right)
        .filter_map(|a| number(&a.label))
        .any(|m| round(m) == round(n));
    if !same_kind {
        let kind = if round(n) { "round" } else { "odd" };
        let rest: Vec<&str> = options
            .iter()
            .filter(|a| !a.right)
            .map(|a| a.label.as_str())
            .collect();
        return Some(format!(
            "{} is the only {kind} number among {rest:?}",
            right.label
        ));
    }
    if numbers_in(words).contains(&n) {
        return Some(format!("{} is stated by the words: {words}", right.label));
    }
    None
}

/// The words a learner reads before the reveal that could state its
/// number: the title, and the step's sentence around its hidden number
/// (shown while the run plays, filled from the run and its contrast). The
/// question's numbers are not among them: they are the scenario's knobs
/// the answer is worked out from ("3 offices of 4 clerks", issue 39 §4;
/// `tour::tests` checks that the question shows them and names no
/// counter), and one per office is 3 there.
fn words_before_the_reveal(step: &Step, s: &Scenario, r: &Report) -> String {
    let then = step.contrast.map(|q| {
        let (c, seed, _) = Scenario::from_query(q);
        Fleet::new(&c, seed).run()
    });
    let (before, _, after) = tour::render(step, s, r, true, then.as_ref());
    format!("{} {before} {after}", step.title)
}

/// No option lets a learner pick the right one without understanding:
/// on every step's own run, the right number has a wrong one of its kind
/// beside it, and the words shown before the reveal do not state it.
#[test]
fn no_prediction_gives_its_answer_away() {
    let mut away = Vec::new();
    for step in tour::STEPS {
        let Some(p) = step.predict else { continue };
        let (s, r) = revealed(step);
        let options = tour::answers(step, &p, &r);
        if let Some(why) = gives_away(&options, &words_before_the_reveal(step, &s, &r)) {
            away.push(format!("{} ({}): {why}", step.title, step.row.link));
        }
    }
    assert!(away.is_empty(), "{}", away.join("\n"));
}

fn option(label: &str, right: bool) -> Answer {
    Answer {
        label: label.to_string(),
        right,
        why_not: (!right).then_some("why not"),
    }
}

/// The judge itself catches each way of giving an answer away.
#[test]
fn the_judge_catches_each_giveaway() {
    let odd_among_round = [
        option("0", false),
        option("12", true),
        option("words", false),
    ];
    assert!(gives_away(&odd_among_round, "").is_some());
    let odd_among_round = [
        option("8000", false),
        option("7800", true),
        option("0", false),
        option("40", false),
    ];
    assert!(gives_away(&odd_among_round, "").is_some());
    let round_among_odd = [
        option("7800", false),
        option("8000", true),
        option("no", false),
    ];
    assert!(gives_away(&round_among_odd, "").is_some());
    let ms = [
        option("1000.0 ms", false),
        option("56.319 ms", true),
        option("20.0 ms", false),
    ];
    assert!(gives_away(&ms, "").is_some());
    let fair = [option("0", false), option("12", true), option("15", false)];
    assert_eq!(gives_away(&fair, "p99 of 3 readers, 40 offices"), None);
    assert!(gives_away(&fair, "a claim of 100 ms, 12 overlapped.").is_some());
    assert_eq!(numbers_in("p99 at 56.319 ms, 40."), vec![56.319, 40.0]);
}
