//! Every change a visitor, a trainer's list or the interviewer's kit makes
//! to the page, as data: an [`Action`], applied by [`Page::act`]. A button,
//! a key and a kit message that mean the same thing are the same action, so
//! they cannot drift apart; the kit sends actions over its channel in their
//! wire form ([`Action::to_wire`], [`Action::from_wire`]), never a CSS
//! selector. `Page::act` touches no web API: the host tests below run
//! sequences of actions and read the state.

use catalogue::interview::{self, Curveball};
use catalogue::tour::{self, Place};

use leptos::prelude::{Callable, GetUntracked, Set, WithUntracked};

use super::{Command, Page};
use crate::url_state;

/// One change to the page.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// A tour step, at t = 0 (a step's link, the practice map, a level).
    Tour(Place),
    /// The tour's next step (→, Page Down, a clicker, Next).
    TourNext,
    /// The tour's step before (←, Page Up, Back).
    TourBack,
    /// Leaves the tour (or the A/B view) for the sandbox on the scenario on
    /// screen ("Open the sandbox").
    Sandbox,
    /// The sandbox on a share link's scenario: a step's action, a digit
    /// key's row of the card, the kit's "Show".
    Open(String),
    /// The A/B view on a named comparison.
    Compare(&'static str),
    /// The transport: play, pause, a step of the clock, a seek.
    Transport(Command),
    /// A curveball thrown into the running lab now (its kind).
    Throw(&'static Curveball),
    /// Presenter mode on or off.
    Present(bool),
    /// The read path as the card's pseudo-code (None) or in a language
    /// (an example's name, `catalogue::examples`).
    Language(Option<&'static str>),
    /// Back or Forward to a history entry: its address's query and hash
    /// (`#tour/basics/1`, or empty). The entry's view, scenario, seed and
    /// speed, and the A/B view's settings; its moment is the stage's (the
    /// app seeks there once the view is built).
    Entry { query: String, hash: String },
}

/// What an action did, for whoever sent it (the kit says it back).
#[derive(Clone, Debug, PartialEq)]
pub enum Acted {
    Done,
    /// A curveball landed in the run, starting at this moment (ms).
    Thrown {
        at_ms: u32,
    },
    /// Nothing changed, and why.
    Refused(String),
}

impl Action {
    /// The action as one line of text (the kit's channel).
    pub fn to_wire(&self) -> String {
        match self {
            Action::Tour(p) => format!("tour {}", tour::place_name(*p)),
            Action::TourNext => "tour-next".into(),
            Action::TourBack => "tour-back".into(),
            Action::Sandbox => "sandbox".into(),
            Action::Open(q) => format!("open {q}"),
            Action::Compare(name) => format!("compare {name}"),
            Action::Transport(c) => format!("transport {}", transport_word(*c)),
            Action::Throw(b) => format!("throw {}", b.kind),
            Action::Present(on) => format!("present {}", u8::from(*on)),
            Action::Language(l) => format!("language {}", l.unwrap_or("card")),
            Action::Entry { query, hash } => format!("entry {query}{hash}"),
        }
    }

    /// Reads [`Action::to_wire`]'s line; what it cannot read is an error in
    /// words, never a guess.
    pub fn from_wire(line: &str) -> Result<Action, String> {
        let (verb, rest) = line.split_once(' ').unwrap_or((line, ""));
        let rest = rest.trim();
        match verb {
            "tour" => tour::parse_hash(&format!("#tour/{rest}"))
                .map(Action::Tour)
                .ok_or_else(|| format!("'{rest}' is not a tour step")),
            "tour-next" => Ok(Action::TourNext),
            "tour-back" => Ok(Action::TourBack),
            "sandbox" => Ok(Action::Sandbox),
            "open" => Ok(Action::Open(rest.to_string())),
            "compare" => catalogue::presets::comparison(rest)
                .map(|c| Action::Compare(c.name))
                .ok_or_else(|| format!("there is no comparison named '{rest}'")),
            "transport" => command_of(rest)
                .map(Action::Transport)
                .ok_or_else(|| format!("'{rest}' is not a transport command")),
            "throw" => interview::curveball(rest)
                .map(Action::Throw)
                .ok_or_else(|| format!("there is no curveball '{rest}'")),
            "present" => match rest {
                "1" => Ok(Action::Present(true)),
                "0" => Ok(Action::Present(false)),
                _ => Err(format!("present takes 1 or 0, not '{rest}'")),
            },
            "language" => language_of(rest)
                .map(Action::Language)
                .ok_or_else(|| format!("there is no language '{rest}'")),
            "entry" => {
                let (query, hash) = rest.split_once('#').unwrap_or((rest, ""));
                let hash = if rest.contains('#') {
                    format!("#{hash}")
                } else {
                    String::new()
                };
                Ok(Action::Entry {
                    query: query.trim_start_matches('?').to_string(),
                    hash,
                })
            }
            _ => Err(format!("'{verb}' is not an action")),
        }
    }
}

/// A language's wire name as the page's state: `card` is the card's
/// pseudo-code, any other an example's name.
pub fn language_of(name: &str) -> Option<Option<&'static str>> {
    match name {
        "card" => Some(None),
        _ => catalogue::examples::example(name).map(|e| Some(e.name)),
    }
}

fn transport_word(c: Command) -> String {
    match c {
        Command::TogglePlay => "play".into(),
        Command::Step => "step".into(),
        Command::StepBack => "step-back".into(),
        Command::NextEvent => "next-event".into(),
        Command::Restart => "restart".into(),
        Command::Replay => "replay".into(),
        Command::Seek(us) => format!("seek {us}"),
        Command::Tour => "tour".into(),
        Command::Room => "room".into(),
    }
}

fn command_of(word: &str) -> Option<Command> {
    let (w, n) = word.split_once(' ').unwrap_or((word, ""));
    Some(match w {
        "play" => Command::TogglePlay,
        "step" => Command::Step,
        "step-back" => Command::StepBack,
        "next-event" => Command::NextEvent,
        "restart" => Command::Restart,
        "replay" => Command::Replay,
        "seek" => Command::Seek(n.parse().ok()?),
        _ => return None,
    })
}

impl Page {
    /// Applies `a` to the page's state. The views follow the state (the
    /// tour bar its step, the engine the scenario, the address all of it).
    pub fn act(&self, a: Action) -> Acted {
        match a {
            Action::Tour(p) => match tour::step(p.0, p.1) {
                Some(step) => {
                    self.compare.set(None);
                    self.tour.set(Some(p));
                    self.set_query(step.row.link);
                }
                None => return Acted::Refused(format!("there is no step {}", tour::place_name(p))),
            },
            Action::TourNext | Action::TourBack => {
                let at = self.tour.get_untracked();
                let to = if a == Action::TourNext {
                    at.and_then(tour::next)
                } else {
                    at.and_then(tour::back)
                };
                match to {
                    Some(p) => return self.act(Action::Tour(p)),
                    None if at.is_none() => return Acted::Refused("the tour is not open".into()),
                    None => return Acted::Refused("no step that way".into()),
                }
            }
            Action::Sandbox => {
                self.tour.set(None);
                self.compare.set(None);
            }
            Action::Open(query) => {
                self.tour.set(None);
                self.set_query(&query);
            }
            Action::Compare(name) => {
                self.tour.set(None);
                self.compare.set(Some(name));
            }
            Action::Transport(c) => self.send.run(c),
            Action::Throw(ball) => {
                // The A/B view's two runs are not the sandbox's: the fault
                // lands in both at the A/B clock's moment, never in the run
                // behind the view.
                if self.compare.get_untracked().is_some() {
                    return match self.ab_throw.run(ball) {
                        Some(Ok(at_ms)) => Acted::Thrown { at_ms },
                        Some(Err(why)) => Acted::Refused(why),
                        None => Acted::Refused("the A/B view has not started yet".into()),
                    };
                }
                return match self.throw.run(ball) {
                    Ok(at_ms) => Acted::Thrown { at_ms },
                    Err(why) => Acted::Refused(why),
                };
            }
            Action::Present(on) => {
                if self.presenting.get_untracked() != on {
                    self.presenting.set(on);
                }
            }
            Action::Language(l) => {
                if self.language.get_untracked() != l {
                    self.language.set(l);
                }
            }
            Action::Entry { query, hash } => {
                // An anchor in the page (`#questions`) is not a view.
                let place = tour::parse_hash(&hash);
                if place.is_none() && !hash.is_empty() {
                    return Acted::Refused(format!("'{hash}' is a place on the page, not a view"));
                }
                let (st, _) = url_state::parse(&query);
                self.ab_throws.set(st.throws.clone());
                self.compare.set(st.compare);
                self.cost.set(st.cost);
                self.tour.set(place);
                if place.is_none() {
                    self.speed.set(st.speed);
                    // The same run stays (its moment is the stage's); another
                    // is built.
                    if self.seed.get_untracked() != st.seed {
                        self.seed.set(st.seed);
                    }
                    if self.scenario.with_untracked(|s| *s != st.scenario) {
                        self.scenario.set(st.scenario);
                    }
                }
            }
        }
        Acted::Done
    }

    /// Sets a share link's scenario, seed and speed; the page then runs it
    /// from t = 0.
    pub(crate) fn set_query(&self, query: &str) {
        let (state, _) = url_state::parse(query);
        self.compare.set(None);
        self.speed.set(state.speed);
        // Setting a signal reruns its effects even with an equal value, and
        // a new seed or scenario rebuilds the fleet: only what changed.
        if self.seed.get_untracked() != state.seed {
            self.seed.set(state.seed);
        }
        if self.scenario.with_untracked(|s| *s != state.scenario) {
            self.scenario.set(state.scenario);
        }
    }
}

#[cfg(all(test, not(target_family = "wasm")))]
mod tests {
    use super::*;
    use catalogue::tour::Level;
    use leptos::prelude::{Callback, Memo, Owner, RwSignal};
    use std::sync::{Arc, Mutex};

    /// A page on fresh signals, with the transport and the thrower recording
    /// what reached them (the engine is the stage's, not the page's).
    fn page() -> (Page, Arc<Mutex<Vec<String>>>) {
        let log = Arc::new(Mutex::new(Vec::new()));
        let (l1, l2) = (log.clone(), log.clone());
        let scenario = RwSignal::new(stampede::Scenario::default());
        let page = Page {
            tour: RwSignal::new(Some((Level::Basics, 0))),
            scenario,
            seed: RwSignal::new(1),
            speed: RwSignal::new(1.0),
            compare: RwSignal::new(None),
            cost: RwSignal::new(None),
            ab_throws: RwSignal::new(Vec::new()),
            reading: RwSignal::new(crate::reading::Reading::default()),
            mark: RwSignal::new(None),
            proof: Memo::new(|_| catalogue::lesson::Proof {
                metric: "recomputes",
                note: "",
                damage: false,
            }),
            contrasts: RwSignal::new(Vec::new()),
            send: Callback::new(move |c: Command| l1.lock().unwrap().push(format!("{c:?}"))),
            throw: Callback::new(move |b: &'static Curveball| {
                l2.lock().unwrap().push(format!("throw {}", b.kind));
                Ok(120)
            }),
            playing: RwSignal::new(true),
            asking: RwSignal::new(false),
            presenting: RwSignal::new(false),
            language: RwSignal::new(None),
            opens_at: None,
            first_pick: None,
            ab_clock: Callback::new(|_| None),
            ab_throw: Callback::new(|_| None),
        };
        (page, log)
    }

    fn with_owner(f: impl FnOnce()) {
        let owner = Owner::new();
        owner.with(f);
    }

    #[test]
    fn tour_steps_move_and_set_their_own_scenario() {
        with_owner(|| {
            let (p, _) = page();
            assert_eq!(p.act(Action::TourNext), Acted::Done);
            assert_eq!(p.tour.get_untracked(), Some((Level::Basics, 1)));
            let step = tour::step(Level::Basics, 1).unwrap();
            let (want, seed, _) = stampede::Scenario::from_query(step.row.link);
            assert_eq!(p.scenario.get_untracked(), want);
            assert_eq!(p.seed.get_untracked(), seed);
            assert_eq!(p.act(Action::TourBack), Acted::Done);
            assert_eq!(p.tour.get_untracked(), Some((Level::Basics, 0)));
            // Before the first step there is none.
            assert!(matches!(p.act(Action::TourBack), Acted::Refused(_)));
            assert_eq!(p.tour.get_untracked(), Some((Level::Basics, 0)));
            // Out of the tour, Next has no step to go to.
            p.act(Action::Sandbox);
            assert!(matches!(p.act(Action::TourNext), Acted::Refused(_)));
            assert_eq!(p.tour.get_untracked(), None);
        });
    }

    #[test]
    fn a_link_opened_mid_run_leaves_the_tour_for_its_scenario() {
        with_owner(|| {
            let (p, log) = page();
            p.act(Action::Transport(Command::TogglePlay));
            p.act(Action::Open("preset=naive&seed=3".into()));
            assert_eq!(p.tour.get_untracked(), None);
            assert_eq!(p.compare.get_untracked(), None);
            let (want, _, _) = stampede::Scenario::from_query("preset=naive");
            assert_eq!(p.scenario.get_untracked(), want);
            assert_eq!(p.seed.get_untracked(), 3);
            assert_eq!(*log.lock().unwrap(), ["TogglePlay"]);
            // The A/B view, then a step again: each view at its turn.
            p.act(Action::Compare("layering"));
            assert_eq!(p.compare.get_untracked(), Some("layering"));
            p.act(Action::Tour((Level::Solid, 1)));
            assert_eq!(p.compare.get_untracked(), None);
            assert_eq!(p.tour.get_untracked(), Some((Level::Solid, 1)));
        });
    }

    #[test]
    fn a_curveball_reaches_the_thrower_and_says_when_it_landed() {
        with_owner(|| {
            let (p, log) = page();
            let ball = interview::curveball("holder").unwrap();
            assert_eq!(p.act(Action::Throw(ball)), Acted::Thrown { at_ms: 120 });
            assert_eq!(*log.lock().unwrap(), ["throw holder"]);
        });
    }

    #[test]
    fn a_curveball_into_the_a_b_view_lands_there_not_behind_it() {
        with_owner(|| {
            let (mut p, log) = page();
            p.ab_throw = Callback::new(|b: &'static interview::Curveball| {
                Some(if b.kind == "holder" {
                    Ok(6401)
                } else {
                    Err("no claim to hold".into())
                })
            });
            p.act(Action::Compare(catalogue::presets::COMPARISONS[0].name));
            let ball = interview::curveball("holder").unwrap();
            assert_eq!(p.act(Action::Throw(ball)), Acted::Thrown { at_ms: 6401 });
            let other = interview::curveball("redis").unwrap();
            assert_eq!(
                p.act(Action::Throw(other)),
                Acted::Refused("no claim to hold".into())
            );
            assert!(
                log.lock().unwrap().is_empty(),
                "thrown into the run behind the view"
            );
            // Before the A/B view has started, it says so.
            p.ab_throw = Callback::new(|_| None);
            assert!(
                matches!(p.act(Action::Throw(ball)), Acted::Refused(w) if w.contains("not started"))
            );
        });
    }

    #[test]
    fn presenter_mode_follows_its_action() {
        with_owner(|| {
            let (p, _) = page();
            p.act(Action::Present(true));
            assert!(p.presenting.get_untracked());
            p.act(Action::Present(false));
            assert!(!p.presenting.get_untracked());
        });
    }

    #[test]
    fn the_language_is_page_state_and_the_card_is_none() {
        with_owner(|| {
            let (p, log) = page();
            assert_eq!(p.act(Action::Language(Some("go"))), Acted::Done);
            assert_eq!(p.language.get_untracked(), Some("go"));
            // A tour step or a link keeps the learner's language.
            p.act(Action::TourNext);
            p.act(Action::Open("preset=naive".into()));
            assert_eq!(p.language.get_untracked(), Some("go"));
            p.act(Action::Language(None));
            assert_eq!(p.language.get_untracked(), None);
            assert!(log.lock().unwrap().is_empty());
            // Every example has a wire name, and only those.
            for e in &catalogue::examples::EXAMPLES {
                assert_eq!(
                    Action::from_wire(&format!("language {}", e.name)),
                    Ok(Action::Language(Some(e.name)))
                );
            }
            assert_eq!(language_of("card"), Some(None));
            assert_eq!(language_of("cobol"), None);
        });
    }

    #[test]
    fn back_and_forward_are_an_action_that_sets_the_entrys_view() {
        with_owner(|| {
            let (p, log) = page();
            // Back to a sandbox entry: its scenario and seed, the tour left.
            let back = Action::Entry {
                query: "preset=burst&seed=5&speed=2".into(),
                hash: String::new(),
            };
            assert_eq!(p.act(back), Acted::Done);
            assert_eq!(p.tour.get_untracked(), None);
            let (want, _, _) = stampede::Scenario::from_query("preset=burst");
            assert_eq!(p.scenario.get_untracked(), want);
            assert_eq!(p.seed.get_untracked(), 5);
            assert_eq!(p.speed.get_untracked(), 2.0);
            // Forward to an A/B view with its cost and a curveball.
            let ab = Action::Entry {
                query: "cmp=cost&cost=700&throw=holder@1200".into(),
                hash: String::new(),
            };
            assert_eq!(p.act(ab), Acted::Done);
            assert_eq!(p.compare.get_untracked(), Some("cost"));
            assert_eq!(p.cost.get_untracked(), Some(700));
            assert_eq!(p.ab_throws.get_untracked(), [("holder", 1200)]);
            // To a tour step: the step, and the A/B view closed.
            let step = Action::Entry {
                query: String::new(),
                hash: "#tour/solid/2".into(),
            };
            assert_eq!(p.act(step), Acted::Done);
            assert_eq!(p.tour.get_untracked(), Some((Level::Solid, 1)));
            assert_eq!(p.compare.get_untracked(), None);
            assert!(p.ab_throws.get_untracked().is_empty());
            // An anchor in the page is not a view: nothing moves.
            let anchor = Action::Entry {
                query: "preset=naive".into(),
                hash: "#questions".into(),
            };
            assert!(matches!(p.act(anchor), Acted::Refused(_)));
            assert_eq!(p.tour.get_untracked(), Some((Level::Solid, 1)));
            // The moment is the stage's: the transport is not driven.
            assert!(log.lock().unwrap().is_empty());
        });
    }

    #[test]
    fn every_action_survives_the_wire() {
        let mut all = vec![
            Action::TourNext,
            Action::TourBack,
            Action::Sandbox,
            Action::Open("preset=naive&seed=3".into()),
            Action::Compare(catalogue::presets::COMPARISONS[0].name),
            Action::Present(true),
            Action::Present(false),
            Action::Language(None),
            Action::Language(Some("rust")),
            Action::Entry {
                query: "preset=naive&seed=3".into(),
                hash: String::new(),
            },
            Action::Entry {
                query: String::new(),
                hash: "#tour/solid/2".into(),
            },
        ];
        for l in Level::ALL {
            for k in 0..tour::count(l) {
                all.push(Action::Tour((l, k)));
            }
        }
        for c in [
            Command::TogglePlay,
            Command::Step,
            Command::StepBack,
            Command::NextEvent,
            Command::Restart,
            Command::Replay,
            Command::Seek(120_000),
        ] {
            all.push(Action::Transport(c));
        }
        for b in interview::CURVEBALLS {
            all.push(Action::Throw(interview::curveball(b.kind).unwrap()));
        }
        for a in all {
            assert_eq!(
                Action::from_wire(&a.to_wire()),
                Ok(a.clone()),
                "{}",
                a.to_wire()
            );
        }
    }

    #[test]
    fn a_line_that_is_no_action_is_refused_in_words() {
        for (line, says) in [
            ("", "is not an action"),
            ("jump", "'jump' is not an action"),
            ("tour nowhere/9", "is not a tour step"),
            ("throw meteor", "no curveball 'meteor'"),
            ("compare nothing", "no comparison named 'nothing'"),
            ("transport fly", "not a transport command"),
            ("present maybe", "present takes 1 or 0"),
            ("language cobol", "no language 'cobol'"),
        ] {
            let why = Action::from_wire(line).unwrap_err();
            assert!(why.contains(says), "{line:?}: {why}");
        }
    }
}
