//! The static first screen (`index.html`'s `#first-screen`: the tour's
//! first step and its prediction as plain HTML, there before the wasm)
//! against the core's tour: its place, title, question and options, in the
//! order the page shows them, with the right option the step's own run's
//! number. When the tour's words change, this test fails and prints the
//! block to paste. A host test; on wasm32 it compiles to nothing.
#![cfg(not(target_arch = "wasm32"))]

use catalogue::tour::{self, Level};
use stampede::scenario::Scenario;
use stampede::sim::Fleet;

const HTML: &str = include_str!("../index.html");

/// What the first screen must say: place, title, question, option labels.
fn expected() -> (String, String, String, String, Vec<String>) {
    let place = (Level::Basics, 0);
    let step = tour::step(place.0, place.1).expect("the tour has a first step");
    let p = step
        .predict
        .expect("the tour's first step asks a prediction");
    let (s, seed, _) = Scenario::from_query(step.row.link);
    // The page works the options out on the step's run at its pause, or at
    // its end (src/lesson/tour_view.rs, `known_at`).
    let until = step.pause_ms.map_or(u64::MAX, |ms| u64::from(ms) * 1000);
    let mut fleet = Fleet::new(&s, seed);
    while !fleet.advance_to(until, 100_000) {}
    let options = tour::answers(step, &p, &fleet.report())
        .into_iter()
        .map(|a| a.label)
        .collect();
    (
        tour::place_name(place),
        format!("{}: step 1 of {}", place.0.title(), tour::count(place.0)),
        step.title.to_string(),
        tour::question(&p, &s),
        options,
    )
}

/// The text of every element marked `data-first="<what>"`, in order.
fn marked(html: &str, what: &str) -> Vec<String> {
    let tag = format!("data-first=\"{what}\"");
    html.match_indices(&tag)
        .map(|(i, _)| {
            let rest = &html[i..];
            let start = rest.find('>').expect("a tag ends") + 1;
            let end = rest[start..].find('<').expect("text ends") + start;
            rest[start..end]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

fn block(place: &str, where_: &str, title: &str, question: &str, options: &[String]) -> String {
    let mut out = format!(
        "<section ... data-first-screen=\"{place}\">\n  <p ... data-first=\"place\">{where_}</p>\n  <h2 ... data-first=\"title\">{title}</h2>\n  <legend ... data-first=\"question\">{question}</legend>\n"
    );
    for (i, o) in options.iter().enumerate() {
        out += &format!("  <label><input type=\"radio\" name=\"first-pick\" value=\"{i}\" /><span data-first=\"option\">{o}</span></label>\n");
    }
    out
}

#[test]
fn the_static_first_screen_says_the_tour_s_first_step() {
    let (place, where_, title, question, options) = expected();
    let start = HTML
        .find("data-first-screen=\"")
        .expect("index.html has a first screen (data-first-screen)");
    let end = HTML[start..]
        .find("</section>")
        .expect("the first screen's section ends")
        + start;
    let screen = &HTML[start..end];
    let fix = block(&place, &where_, &title, &question, &options);
    assert!(
        screen.starts_with(&format!("data-first-screen=\"{place}\"")),
        "the first screen names another step; it should read:\n{fix}"
    );
    assert_eq!(
        marked(screen, "place"),
        [where_],
        "the place; it should read:\n{fix}"
    );
    assert_eq!(
        marked(screen, "title"),
        [title],
        "the title; it should read:\n{fix}"
    );
    assert_eq!(
        marked(screen, "question"),
        [question],
        "the question; it should read:\n{fix}"
    );
    assert_eq!(
        marked(screen, "option"),
        options,
        "the options; they should read:\n{fix}"
    );
    // Each option's radio carries its index, which the page takes over.
    for i in 0..options.len() {
        assert!(
            screen.contains(&format!("name=\"first-pick\" value=\"{i}\"")),
            "option {i} has no radio with its index; it should read:\n{fix}"
        );
    }
}

#[test]
fn exactly_one_static_option_is_the_run_s_number() {
    let step = tour::step(Level::Basics, 0).unwrap();
    let p = step.predict.unwrap();
    let (s, seed, _) = Scenario::from_query(step.row.link);
    let mut fleet = Fleet::new(&s, seed);
    while !fleet.advance_to(u64::MAX, 100_000) {}
    let answers = tour::answers(step, &p, &fleet.report());
    let right: Vec<_> = answers
        .iter()
        .filter(|a| a.right)
        .map(|a| &a.label)
        .collect();
    assert_eq!(right.len(), 1, "{answers:?}");
    let start = HTML.find("data-first-screen=\"").unwrap();
    let screen = &HTML[start..HTML[start..].find("</section>").unwrap() + start];
    assert!(
        marked(screen, "option").contains(right[0]),
        "{right:?} is not among the static options"
    );
}
