//! The start-up link, read once: which view the page opens on (a tour
//! step, a drill, the sandbox or the A/B view), its scenario, and what the
//! link asks of the page itself (a moment, presenter mode). No web types:
//! the app hands in the address's query and hash, host-tested below.

use catalogue::tour::{self, Level};
use stampede::scenario::Notice;

use super::{FirstPick, Start};
use crate::url_state::{self, PageState};

/// What the address asks the page to open.
pub struct Launch {
    /// The page's state to start from.
    pub start: Start,
    /// The drill a `?drill=NAME` link opens, and whether its list opens
    /// (the name was empty or unknown).
    pub drill: Option<&'static catalogue::drill::Drill>,
    pub drill_list: bool,
    /// What the link asked for that could not be used (the banner's).
    pub notices: Vec<Notice>,
    /// A moment to go to once the run is built: (scenario, seed, ms, play
    /// on from there).
    pub moment: Option<(stampede::Scenario, u64, u64, bool)>,
    /// The A/B view's moment from the link (ms, play), taken by its first
    /// build.
    pub ab_moment: Option<(u64, bool)>,
}

/// A drill link (`?drill=NAME`): the drill, whether the list opens, and
/// what the link asked for that does not exist.
fn open_drill(query: &str) -> (Option<&'static catalogue::drill::Drill>, bool, Vec<Notice>) {
    match url_state::drill_of(query) {
        None => (None, false, Vec::new()),
        Some(name) => match catalogue::drill::drill(&name) {
            Some(d) => (Some(d), false, Vec::new()),
            None if name.is_empty() => (catalogue::drill::DRILLS.first(), true, Vec::new()),
            None => (
                catalogue::drill::DRILLS.first(),
                true,
                vec![Notice::new(
                    "drill",
                    format!(
                        "there is no drill named '{}'; here is the list",
                        stampede::scenario::clip(&name)
                    ),
                )],
            ),
        },
    }
}

/// Reads the address (`query` with or without its `?`, `hash` with its
/// `#`). `kept_present`: presenter mode was on in this tab; `language`,
/// `skipping`: what the browser kept; `first_pick`: the static first
/// screen's answer.
pub fn launch(
    query: &str,
    hash: &str,
    kept_present: bool,
    language: Option<&'static str>,
    skipping: bool,
    first_pick: Option<FirstPick>,
) -> Launch {
    // A tour link opens its step; a first visit (no link at all) opens the
    // tour's first step; a share link opens the sandbox on its scenario.
    // A drill link (`?drill=NAME`) opens the drill on its situation, with
    // the link's allowed knobs applied (a locked one refused, with a notice).
    let (drill, drill_list, mut notices) = open_drill(query);
    let tour_start = tour::parse_hash(hash)
        .filter(|_| drill.is_none())
        .or_else(|| {
            (query.trim_start_matches('?').is_empty() && hash.is_empty())
                .then_some((Level::Basics, 0))
        });
    // A tour step starts on its own scenario: the page builds one fleet, not
    // the link's and then the step's.
    let state = match drill {
        Some(d) => {
            // The page's own keys (presenter mode, a moment, a list) are
            // no knob of the drill's.
            let knobs: Vec<&str> = query
                .trim_start_matches('?')
                .split('&')
                .filter(|p| !catalogue::playlist::is_page_key(p))
                .collect();
            let (s, n) = catalogue::drill::apply(d, &knobs.join("&"));
            notices.extend(n);
            PageState {
                speed: crate::clock::default_speed(&s),
                scenario: s,
                ..PageState::default()
            }
        }
        None => {
            let step = tour_start.and_then(|(l, k)| tour::step(l, k));
            let (mut state, n) = url_state::parse(step.map_or(query, |s| s.row.link));
            notices = n;
            // A step plays at the tour's pace (its reveal within 3 s).
            if let Some(step) = step {
                state.speed = tour::speed(step);
            }
            state
        }
    };
    // What only the page reads stays the link's, whichever scenario opens:
    // presenter mode (also kept for the tab across the page's own links)
    // and the moment to open at.
    let (link, _) = url_state::parse(query);
    let moment = link
        .at
        .map(|ms| (state.scenario.clone(), state.seed, ms, link.play));
    let ab_moment = link
        .at
        .filter(|_| state.compare.is_some())
        .map(|ms| (ms, link.play));
    Launch {
        start: Start {
            tour: tour_start,
            presenting: link.present || kept_present,
            language,
            skipping,
            opens_at: link.at.filter(|ms| *ms > 0).and(tour_start),
            first_pick,
            state,
        },
        drill,
        drill_list,
        notices,
        moment,
        ab_moment,
    }
}

#[cfg(all(test, not(target_family = "wasm")))]
mod tests {
    use super::*;

    #[test]
    fn a_first_visit_opens_the_tour_and_a_share_link_the_sandbox() {
        let first = launch("", "", false, None, false, None);
        assert_eq!(first.start.tour, Some((Level::Basics, 0)));
        let step = tour::step(Level::Basics, 0).unwrap();
        assert_eq!(
            first.start.state.scenario,
            stampede::Scenario::from_query(step.row.link).0
        );
        let share = launch(
            "?preset=naive&seed=3&present=1",
            "",
            false,
            None,
            false,
            None,
        );
        assert_eq!(share.start.tour, None);
        assert_eq!(share.start.state.seed, 3);
        assert!(share.start.presenting);
        assert!(share.drill.is_none() && share.notices.is_empty());
    }

    #[test]
    fn a_tour_link_at_a_moment_opens_its_step_there() {
        let l = launch("at=120", "#tour/solid/2", false, None, false, None);
        assert_eq!(l.start.tour, Some((Level::Solid, 1)));
        assert_eq!(l.start.opens_at, Some((Level::Solid, 1)));
        assert_eq!(l.moment.as_ref().map(|m| m.2), Some(120));
        assert_eq!(l.ab_moment, None);
    }

    #[test]
    fn an_a_b_link_keeps_its_moment_for_the_a_b_view() {
        let l = launch("cmp=cost&cost=700&at=50", "", false, None, false, None);
        assert_eq!(l.start.state.compare, Some("cost"));
        assert_eq!(l.start.state.cost, Some(700));
        assert_eq!(l.ab_moment, Some((50, false)));
    }

    #[test]
    fn a_drill_link_opens_its_drill_and_an_unknown_one_the_list() {
        let name = catalogue::drill::DRILLS[0].name;
        let l = launch(
            &format!("drill={name}"),
            "#tour/basics/1",
            false,
            None,
            false,
            None,
        );
        assert_eq!(l.drill.map(|d| d.name), Some(name));
        assert_eq!(l.start.tour, None, "a drill is not the tour");
        let l = launch("drill=nothing", "", false, None, false, None);
        assert!(l.drill_list);
        assert!(l
            .notices
            .iter()
            .any(|n| n.to_string().contains("no drill named")));
    }
}
