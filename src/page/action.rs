//! Every change to the page, as data: an [`Action`], applied by
//! [`Page::act`]. A button, a key, a tour step, a trainer's list, Back and
//! Forward and a kit message that mean the same thing are the same action,
//! so they cannot drift apart; `Page`'s signals are private to `page/`, so
//! nothing else changes them. The kit sends actions over its channel in
//! their wire form ([`Action::to_wire`], [`Action::from_wire`]), never a CSS
//! selector. `Page::act` touches no web API: the host tests below run
//! sequences of actions and read the state.

use catalogue::interview::{self, Curveball};
use catalogue::tour::{self, Level, Place};

use leptos::prelude::{Callable, GetUntracked, GetValue, Set, SetValue, Update, WithUntracked};

use super::{Bet, Command, Contrast, Page};
use crate::url_state;
use stampede::Metric;

/// One change to the page.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// A tour step, at t = 0 (a step's link, the practice map, a level),
    /// with its prediction asked unless predictions are skipped.
    Tour(Place),
    /// The tour's next step (→, Page Down, a clicker, Next).
    TourNext,
    /// The tour's step before (←, Page Up, Back).
    TourBack,
    /// A level of the tour, from its first step (the level picker).
    Level(Level),
    /// Leaves the tour (or the A/B view) for the sandbox on the scenario on
    /// screen ("Open the sandbox", "Back to the sandbox").
    Sandbox,
    /// The sandbox on a share link's scenario: a step's action, a digit
    /// key's row of the card, the kit's "Show", a pitfall's "where it bites".
    Open(String),
    /// The A/B view on a named comparison (its own cost and no curveball
    /// when it is another one).
    Compare(&'static str),
    /// The A/B view's recompute cost (ms).
    Cost(u32),
    /// A preset from the picker: its scenario, at its own speed.
    Preset(&'static str),
    /// A knob set from its control's text (a core name, or
    /// `pitfall-<name>`).
    Knob(&'static str, String),
    /// The scenario set whole, the seed kept (a drill's worked solution).
    Solution(Box<stampede::Scenario>),
    Seed(u64),
    /// The playback speed (× real time).
    Speed(f64),
    /// The transport: play, pause, a step of the clock, a seek.
    Transport(Command),
    /// Plays (true) or pauses, wherever the clock stands.
    Play(bool),
    /// A curveball thrown into the running lab now (its kind).
    Throw(&'static Curveball),
    /// Presenter mode on or off.
    Present(bool),
    /// The read path as the card's pseudo-code (None) or in a language
    /// (an example's name, `catalogue::examples`).
    Language(Option<&'static str>),
    /// On a phone, the code in the fleet's place (true) or the fleet.
    ShowCode(bool),
    /// The step's prediction: an option picked, or "just show me" (None).
    Predict(Option<usize>),
    /// "Skip predictions" (true), or "Predict first" (false: the step on
    /// screen asks again, from t = 0).
    SkipPredictions(bool),
    /// The step's number is known: a prediction being watched is revealed.
    Reveal,
    /// A question's link names a counter (on a side of the A/B view) to
    /// bring into view.
    Mark {
        metric: Option<Metric>,
        side: Option<char>,
    },
    /// Back or Forward to a history entry: its address's query and hash
    /// (`#tour/basics/1`, or empty). The entry's view, scenario, seed and
    /// speed, and the A/B view's settings; its moment is the stage's (the
    /// app seeks there once the view is built).
    Entry {
        query: String,
        hash: String,
    },
    /// The engine built the run of the page's scenario and seed: sitting at
    /// a link's moment, then playing or not (`Some`), or at t = 0, held at
    /// its start for the reader's Play (an embedded run) or not.
    Built {
        at: Option<bool>,
        held: bool,
    },
    /// A contrast run finished (the words' `then.`).
    Contrast(Box<Contrast>),
    /// "Write it yourself" (`?assemble=1`): opened, a block moved or
    /// picked, the assembly run through the storms (`super::assembly`).
    Assemble(super::assembly::Edit),
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
    /// The action as one line of text (the kit's channel). What only the
    /// page's own controls and parts do (a knob, the seed, a prediction, a
    /// run built) is no message: its line is its name, which does not read
    /// back.
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
            Action::ShowCode(on) => format!("show-code {}", u8::from(*on)),
            Action::Entry { query, hash } => format!("entry {query}{hash}"),
            Action::Level(_) => "level".into(),
            Action::Cost(_) => "cost".into(),
            Action::Preset(_) => "preset".into(),
            Action::Knob(..) => "knob".into(),
            Action::Solution(_) => "solution".into(),
            Action::Seed(_) => "seed".into(),
            Action::Speed(_) => "speed".into(),
            Action::Play(_) => "play".into(),
            Action::Predict(_) => "predict".into(),
            Action::SkipPredictions(_) => "skip-predictions".into(),
            Action::Reveal => "reveal".into(),
            Action::Mark { .. } => "mark".into(),
            Action::Built { .. } => "built".into(),
            Action::Contrast(_) => "contrast".into(),
            Action::Assemble(_) => "assemble".into(),
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
            "show-code" => match rest {
                "1" => Ok(Action::ShowCode(true)),
                "0" => Ok(Action::ShowCode(false)),
                _ => Err(format!("show-code takes 1 or 0, not '{rest}'")),
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
            "level" | "cost" | "preset" | "knob" | "solution" | "seed" | "speed" | "play"
            | "predict" | "skip-predictions" | "reveal" | "mark" | "built" | "contrast" => {
                Err(format!("'{verb}' is the page's own, not a message"))
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
        Command::ThreadStep(g) => format!("thread-step {g}"),
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
        "thread-step" => Command::ThreadStep(n.parse().ok()?),
        _ => return None,
    })
}

/// Sets a signal only when the value changes: setting one reruns its
/// effects even with an equal value (a new seed or scenario rebuilds the
/// fleet).
fn change<T: PartialEq + Send + Sync + 'static>(s: leptos::prelude::RwSignal<T>, v: T) {
    if s.with_untracked(|x| *x != v) {
        s.set(v);
    }
}

impl Page {
    /// Applies `a` to the page's state, the whole change. The views follow
    /// the state (the tour bar its step, the engine the scenario, the
    /// address all of it).
    pub fn act(&self, a: Action) -> Acted {
        match a {
            Action::Tour(p) => match tour::step(p.0, p.1) {
                Some(step) => {
                    self.tour.set(Some(p));
                    self.set_query(step.row.link);
                    // The tour's pace: the reveal within 3 s.
                    self.speed.set(tour::speed(step));
                    self.enter(p, step);
                }
                None => return Acted::Refused(format!("there is no step {}", tour::place_name(p))),
            },
            Action::TourNext | Action::TourBack => {
                let at = self.tour.get_untracked();
                let to = if matches!(a, Action::TourNext) {
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
            Action::Level(l) => return self.act(Action::Tour((l, 0))),
            Action::Sandbox => {
                self.leave_tour();
                change(self.compare, None);
            }
            Action::Open(query) => {
                self.leave_tour();
                self.set_query(&query);
            }
            Action::Compare(name) => {
                self.leave_tour();
                if self.compare.get_untracked() != Some(name) {
                    change(self.cost, None);
                    change(self.ab_throws, Vec::new());
                    self.compare.set(Some(name));
                }
                // The sandbox waits while the A/B view runs its own clock.
                change(self.playing, false);
            }
            Action::Cost(ms) => {
                if self.compare.get_untracked().is_none() {
                    return Acted::Refused("the A/B view is not open".into());
                }
                change(self.cost, Some(ms));
            }
            Action::Preset(name) => {
                let Some(p) = catalogue::presets::PRESETS.iter().find(|p| p.name == name) else {
                    return Acted::Refused(format!("there is no preset named '{name}'"));
                };
                let s = p.scenario();
                self.speed.set(crate::clock::default_speed(&s));
                change(self.scenario, s);
            }
            Action::Knob(name, text) => {
                let Some(k) = super::knob::knob_named(name) else {
                    return Acted::Refused(format!("there is no knob named '{name}'"));
                };
                if self.scenario.with_untracked(|s| super::knob::read(s, &k)) == text {
                    return Acted::Done;
                }
                let mut next = self.scenario.get_untracked();
                let n = super::knob::write(&mut next, &k, &text);
                self.notices.set(n);
                change(self.scenario, next);
            }
            Action::Solution(s) => change(self.scenario, *s),
            Action::Seed(sd) => change(self.seed, sd),
            Action::Speed(x) => change(self.speed, x),
            Action::Transport(c) => self.command(c),
            Action::Play(on) => change(self.playing, on),
            Action::Throw(ball) => {
                // The A/B view's two runs are not the sandbox's: the fault
                // lands in both at the A/B clock's moment, never in the run
                // behind the view.
                if self.compare.get_untracked().is_some() {
                    return match self.wires.ab_throw.run(ball) {
                        Some(Ok(at_ms)) => {
                            // The link carries it; a build replays it.
                            self.ab_throws.update(|t| t.push((ball.kind, at_ms)));
                            Acted::Thrown { at_ms }
                        }
                        Some(Err(why)) => Acted::Refused(why),
                        None => Acted::Refused("the A/B view has not started yet".into()),
                    };
                }
                return match self.wires.throw.run(ball) {
                    Ok((s, at_ms)) => {
                        // The run already holds it: the same run, not a
                        // new one.
                        change(self.scenario, s);
                        Acted::Thrown { at_ms }
                    }
                    Err(why) => Acted::Refused(why),
                };
            }
            Action::Present(on) => change(self.presenting, on),
            Action::Language(l) => change(self.language, l),
            Action::ShowCode(on) => change(self.showing_code, on),
            Action::Predict(pick) => {
                if self.bet.get_untracked() != Bet::Asking {
                    return Acted::Refused("no question is open".into());
                }
                self.bet.set(Bet::Watching(pick));
                change(self.asking, false);
                change(self.playing, true);
            }
            Action::SkipPredictions(on) => {
                change(self.skipping, on);
                if on {
                    if self.bet.get_untracked() == Bet::Asking {
                        change(self.asking, false);
                        change(self.playing, true);
                    }
                    change(self.bet, Bet::Off);
                } else if let Some(p) = self.tour.get_untracked() {
                    // This step asks again, from t = 0.
                    return self.act(Action::Tour(p));
                }
            }
            Action::Reveal => match self.bet.get_untracked() {
                Bet::Watching(p) => self.bet.set(Bet::Revealed(p)),
                _ => return Acted::Refused("no prediction is being watched".into()),
            },
            Action::Mark { metric, side } => self.mark.update(|m| {
                *m = Some(super::Mark {
                    seq: m.as_ref().map_or(1, |x| x.seq + 1),
                    metric,
                    side,
                })
            }),
            Action::Entry { query, hash } => {
                // An anchor in the page (`#questions`) is not a view.
                let place = tour::parse_hash(&hash);
                if place.is_none() && !hash.is_empty() {
                    return Acted::Refused(format!("'{hash}' is a place on the page, not a view"));
                }
                let (st, _) = url_state::parse(&query);
                change(self.ab_throws, st.throws.clone());
                change(self.cost, st.cost);
                if let Some(p) = place {
                    return self.act(Action::Tour(p));
                }
                self.leave_tour();
                change(self.compare, st.compare);
                if st.compare.is_some() {
                    change(self.playing, false);
                }
                change(self.speed, st.speed);
                // The same run stays (its moment is the stage's); another
                // is built.
                change(self.seed, st.seed);
                change(self.scenario, st.scenario);
            }
            Action::Built { at, held } => match at {
                // At a link's moment (`at=`, or Back to a moment).
                Some(play) => {
                    self.stop_asking();
                    change(self.playing, play);
                }
                None => change(self.playing, !self.asking.get_untracked() && !held),
            },
            Action::Contrast(c) => self.contrasts.update(|have| {
                if have.len() >= 4 {
                    have.remove(0);
                }
                have.push(*c);
            }),
            Action::Assemble(e) => {
                let mut said = Ok(());
                self.assembling
                    .update(|st| said = super::assembly::apply(st, e));
                if let Err(why) = said {
                    return Acted::Refused(why);
                }
            }
        }
        Acted::Done
    }

    /// A transport command: taking the controls while a prediction is
    /// open is "just show me"; the engine says whether the run plays after.
    fn command(&self, c: Command) {
        self.stop_asking();
        let now = self.playing.get_untracked();
        if let Some(p) = self.wires.send.run((c, now)) {
            change(self.playing, p);
        }
    }

    /// The prediction closes unanswered ("just show me").
    fn stop_asking(&self) {
        change(self.asking, false);
        if self.bet.get_untracked() == Bet::Asking {
            self.bet.set(Bet::Watching(None));
        }
    }

    /// Out of the tour: its prediction, if open, closes and the run plays.
    fn leave_tour(&self) {
        change(self.tour, None);
        if self.asking.get_untracked() {
            self.asking.set(false);
            self.playing.set(true);
        }
        change(self.bet, Bet::Off);
    }

    /// A step entered: a step with a prediction opens paused at t = 0 (the
    /// answer picked on the static first screen taken as if clicked), one
    /// opened at a link's moment has its question behind it, and a step
    /// without one plays.
    fn enter(&self, p: Place, step: &tour::Step) {
        change(self.compare, None);
        let at_moment = self.opens_at.get_value() == Some(p);
        if !at_moment {
            self.opens_at.set_value(None);
        }
        let asks = step.predict.is_some() && !self.skipping.get_untracked();
        if !asks {
            if self.asking.get_untracked() {
                self.asking.set(false);
                self.playing.set(true);
            }
            change(self.bet, Bet::Off);
            return;
        }
        if at_moment {
            change(self.asking, false);
            self.bet.set(Bet::Watching(None));
            return;
        }
        self.command(Command::Restart);
        match self.first_pick.get_value().filter(|f| f.place == p) {
            // Picked before the wasm arrived: as if clicked now.
            Some(f) => {
                self.first_pick.set_value(None);
                change(self.asking, false);
                change(self.playing, true);
                self.bet.set(Bet::Watching(Some(f.option)));
            }
            None => {
                change(self.asking, true);
                change(self.playing, false);
                self.bet.set(Bet::Asking);
            }
        }
    }

    /// Sets a share link's scenario, seed and speed; the page then runs it
    /// from t = 0.
    fn set_query(&self, query: &str) {
        let (state, _) = url_state::parse(query);
        change(self.compare, None);
        self.speed.set(state.speed);
        change(self.seed, state.seed);
        change(self.scenario, state.scenario);
    }
}

#[cfg(all(test, not(target_family = "wasm")))]
mod tests {
    use super::*;
    use crate::page::{FirstPick, Start, Wires};
    use catalogue::tour::Level;
    use leptos::prelude::{Callback, Owner};
    use std::sync::{Arc, Mutex};

    /// A page on fresh signals, with the transport and the thrower recording
    /// what reached them (the engine is the stage's, not the page's).
    fn page() -> (Page, Arc<Mutex<Vec<String>>>) {
        page_from(Start {
            tour: Some((Level::Basics, 0)),
            state: crate::url_state::PageState {
                seed: 1,
                speed: 1.0,
                ..Default::default()
            },
            ..Start::default()
        })
    }

    fn page_from(start: Start) -> (Page, Arc<Mutex<Vec<String>>>) {
        let log = Arc::new(Mutex::new(Vec::new()));
        let (l1, l2) = (log.clone(), log.clone());
        let wires = Wires {
            // The engine: a run is built, and plays after a command as
            // the command says (Restart pauses, a seek keeps it).
            send: Callback::new(move |(c, now): (Command, bool)| {
                l1.lock().unwrap().push(format!("{c:?}"));
                Some(match c {
                    Command::TogglePlay => !now,
                    Command::Restart | Command::Step | Command::StepBack => false,
                    Command::Replay => true,
                    _ => now,
                })
            }),
            throw: Callback::new(move |b: &'static Curveball| {
                l2.lock().unwrap().push(format!("throw {}", b.kind));
                let s = stampede::Scenario {
                    instances: 3,
                    ..Default::default()
                };
                Ok((s, 120))
            }),
            ab_clock: Callback::new(|_| None),
            ab_throw: Callback::new(|_| None),
        };
        (Page::new(start, wires), log)
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
            p.wires.ab_throw = Callback::new(|b: &'static interview::Curveball| {
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
            p.wires.ab_throw = Callback::new(|_| None);
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

    /// A phone's tab between the fleet and the code is page state, and a
    /// kit line; a step or a link keeps it.
    #[test]
    fn the_phone_s_code_tab_is_page_state() {
        with_owner(|| {
            let (p, _) = page();
            assert!(!p.showing_code.get_untracked());
            assert_eq!(p.act(Action::ShowCode(true)), Acted::Done);
            assert!(p.showing_code.get_untracked());
            p.act(Action::TourNext);
            assert!(p.showing_code.get_untracked());
            assert_eq!(Action::from_wire("show-code 1"), Ok(Action::ShowCode(true)));
            assert_eq!(
                Action::from_wire(&Action::ShowCode(false).to_wire()),
                Ok(Action::ShowCode(false))
            );
            assert!(Action::from_wire("show-code 2").is_err());
            p.act(Action::ShowCode(false));
            assert!(!p.showing_code.get_untracked());
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
            // No command but a step's own restart (its question).
            assert!(log.lock().unwrap().iter().all(|c| c == "Restart"));
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
            // The moment is the stage's: the transport is not driven (but
            // for a step's own restart, its question).
            assert!(log.lock().unwrap().iter().all(|c| c == "Restart"));
        });
    }

    /// The first step that asks for a prediction.
    fn asking_step() -> Place {
        Level::ALL
            .iter()
            .flat_map(|l| (0..tour::count(*l)).map(move |k| (*l, k)))
            .find(|(l, k)| tour::step(*l, *k).is_some_and(|s| s.predict.is_some()))
            .expect("a step with a prediction")
    }

    /// Another step that asks, after `at`.
    fn other_step(at: Place) -> Place {
        tour::next(at).expect("a step after it")
    }

    #[test]
    fn a_step_that_asks_waits_at_t_0_until_a_pick_then_reveals() {
        with_owner(|| {
            let (p, log) = page();
            let at = asking_step();
            p.act(Action::Tour(at));
            assert_eq!(p.bet.get_untracked(), Bet::Asking);
            assert!(p.asking.get_untracked());
            assert!(!p.playing.get_untracked());
            assert_eq!(
                log.lock().unwrap().last().map(String::as_str),
                Some("Restart")
            );
            assert_eq!(p.act(Action::Predict(Some(1))), Acted::Done);
            assert_eq!(p.bet.get_untracked(), Bet::Watching(Some(1)));
            assert!(p.playing.get_untracked() && !p.asking.get_untracked());
            // One pick a question.
            assert!(matches!(p.act(Action::Predict(Some(0))), Acted::Refused(_)));
            assert_eq!(p.act(Action::Reveal), Acted::Done);
            assert_eq!(p.bet.get_untracked(), Bet::Revealed(Some(1)));
            // Skipped, a step plays, its bet off.
            p.act(Action::SkipPredictions(true));
            p.act(Action::Tour(other_step(asking_step())));
            assert_eq!(p.bet.get_untracked(), Bet::Off);
            assert!(p.playing.get_untracked());
        });
    }

    #[test]
    fn the_transport_while_asking_is_just_show_me() {
        with_owner(|| {
            let (p, _) = page();
            p.act(Action::Tour(asking_step()));
            p.act(Action::Transport(Command::TogglePlay));
            assert_eq!(p.bet.get_untracked(), Bet::Watching(None));
            assert!(!p.asking.get_untracked());
            assert!(p.playing.get_untracked());
            // "Just show me" from its button.
            p.act(Action::Tour(asking_step()));
            p.act(Action::Predict(None));
            assert_eq!(p.bet.get_untracked(), Bet::Watching(None));
            // Leaving the tour mid-question: the run plays, the bet is off.
            p.act(Action::Tour(asking_step()));
            p.act(Action::Sandbox);
            assert_eq!(
                (p.bet.get_untracked(), p.playing.get_untracked()),
                (Bet::Off, true)
            );
        });
    }

    #[test]
    fn skipping_predictions_plays_and_predict_first_asks_again() {
        with_owner(|| {
            let (p, _) = page();
            let at = asking_step();
            p.act(Action::Tour(at));
            p.act(Action::SkipPredictions(true));
            assert!(p.skipping.get_untracked());
            assert_eq!(p.bet.get_untracked(), Bet::Off);
            assert!(p.playing.get_untracked());
            // A step that would ask just plays now.
            p.act(Action::TourNext);
            p.act(Action::Tour(at));
            assert_eq!(p.bet.get_untracked(), Bet::Off);
            // Predict first: this step asks again, from t = 0.
            p.act(Action::SkipPredictions(false));
            assert_eq!(p.bet.get_untracked(), Bet::Asking);
            assert_eq!(p.tour.get_untracked(), Some(at));
        });
    }

    #[test]
    fn the_first_screen_s_answer_is_taken_once_and_a_link_s_moment_skips_the_question() {
        with_owner(|| {
            let at = asking_step();
            let (p, _) = page_from(Start {
                first_pick: Some(FirstPick {
                    place: at,
                    option: 2,
                }),
                ..Start::default()
            });
            p.act(Action::Tour(at));
            assert_eq!(p.bet.get_untracked(), Bet::Watching(Some(2)));
            assert!(p.playing.get_untracked());
            p.act(Action::Tour(at));
            assert_eq!(p.bet.get_untracked(), Bet::Asking, "once");
            // Opened at a moment: the question is behind it, once.
            let (p, _) = page_from(Start {
                opens_at: Some(at),
                ..Start::default()
            });
            p.act(Action::Tour(at));
            assert_eq!(p.bet.get_untracked(), Bet::Watching(None));
            assert!(!p.asking.get_untracked());
            p.act(Action::Tour(other_step(at)));
            p.act(Action::Tour(at));
            assert_eq!(p.bet.get_untracked(), Bet::Asking);
        });
    }

    #[test]
    fn a_level_opens_its_first_step() {
        with_owner(|| {
            let (p, _) = page();
            assert_eq!(p.act(Action::Level(Level::Deeper)), Acted::Done);
            assert_eq!(p.tour.get_untracked(), Some((Level::Deeper, 0)));
        });
    }

    #[test]
    fn a_preset_a_knob_a_solution_a_seed_and_a_speed_set_the_sandbox() {
        with_owner(|| {
            let (p, _) = page();
            p.act(Action::Sandbox);
            let naive = catalogue::presets::PRESETS
                .iter()
                .find(|x| x.name == "naive")
                .unwrap();
            assert_eq!(p.act(Action::Preset("naive")), Acted::Done);
            assert_eq!(p.scenario.get_untracked(), naive.scenario());
            assert_eq!(
                p.speed.get_untracked(),
                crate::clock::default_speed(&naive.scenario())
            );
            assert!(matches!(
                p.act(Action::Preset("nothing")),
                Acted::Refused(_)
            ));
            // A knob: its value, and what was clamped said.
            assert_eq!(p.act(Action::Knob("instances", "7".into())), Acted::Done);
            assert_eq!(p.scenario.get_untracked().instances, 7);
            assert!(p.notices.get_untracked().is_empty());
            p.act(Action::Knob("instances", "0".into()));
            assert!(
                !p.notices.get_untracked().is_empty(),
                "an instance count of 0 is said"
            );
            assert!(matches!(
                p.act(Action::Knob("nothing", "1".into())),
                Acted::Refused(_)
            ));
            let mut solved = naive.scenario();
            solved.threads = 3;
            p.act(Action::Solution(Box::new(solved.clone())));
            assert_eq!(p.scenario.get_untracked(), solved);
            p.act(Action::Seed(42));
            p.act(Action::Speed(0.25));
            assert_eq!(
                (p.seed.get_untracked(), p.speed.get_untracked()),
                (42, 0.25)
            );
        });
    }

    #[test]
    fn the_a_b_view_takes_its_cost_and_a_new_comparison_starts_clean() {
        with_owner(|| {
            let (mut p, _) = page();
            assert!(matches!(p.act(Action::Cost(300)), Acted::Refused(_)));
            p.act(Action::Compare("cost"));
            assert!(!p.playing.get_untracked(), "the sandbox waits");
            p.act(Action::Cost(300));
            assert_eq!(p.cost.get_untracked(), Some(300));
            p.wires.ab_throw = Callback::new(|_| Some(Ok(900)));
            let ball = interview::curveball("holder").unwrap();
            assert_eq!(p.act(Action::Throw(ball)), Acted::Thrown { at_ms: 900 });
            assert_eq!(p.ab_throws.get_untracked(), [("holder", 900)]);
            // The same comparison keeps them; another starts clean.
            p.act(Action::Compare("cost"));
            assert_eq!(p.cost.get_untracked(), Some(300));
            p.act(Action::Compare("layered"));
            assert_eq!(p.cost.get_untracked(), None);
            assert!(p.ab_throws.get_untracked().is_empty());
        });
    }

    #[test]
    fn a_curveball_in_the_sandbox_leaves_its_fault_in_the_scenario() {
        with_owner(|| {
            let (p, _) = page();
            p.act(Action::Sandbox);
            let ball = interview::curveball("holder").unwrap();
            p.act(Action::Throw(ball));
            assert_eq!(p.scenario.get_untracked().instances, 3);
        });
    }

    #[test]
    fn presenter_mode_a_mark_a_built_run_and_the_contrast_runs() {
        with_owner(|| {
            let (p, _) = page();
            p.act(Action::Mark {
                metric: Some(Metric::Timeouts),
                side: Some('b'),
            });
            p.act(Action::Mark {
                metric: Some(Metric::Timeouts),
                side: Some('b'),
            });
            let m = p.mark.get_untracked().unwrap();
            assert_eq!(
                (m.seq, m.metric, m.side),
                (2, Some(Metric::Timeouts), Some('b'))
            );
            // Built: at a link's moment, paused; from t = 0 held for Play.
            p.act(Action::Sandbox);
            p.act(Action::Built {
                at: Some(false),
                held: false,
            });
            assert!(!p.playing.get_untracked());
            p.act(Action::Built {
                at: None,
                held: true,
            });
            assert!(!p.playing.get_untracked());
            p.act(Action::Built {
                at: None,
                held: false,
            });
            assert!(p.playing.get_untracked());
            p.act(Action::Play(false));
            assert!(!p.playing.get_untracked());
            // A built run waits while a question is open.
            p.act(Action::Tour(asking_step()));
            p.act(Action::Built {
                at: None,
                held: false,
            });
            assert!(!p.playing.get_untracked());
            let s = stampede::Scenario::default();
            for sd in 0..6 {
                let r = stampede::Report::default();
                p.act(Action::Contrast(Box::new((s.clone(), sd, r))));
            }
            let have = p.contrasts.get_untracked();
            assert_eq!(have.iter().map(|c| c.1).collect::<Vec<_>>(), [2, 3, 4, 5]);
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
            Command::ThreadStep(7),
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
            ("knob instances 7", "the page's own"),
            ("seed 3", "the page's own"),
        ] {
            let why = Action::from_wire(line).unwrap_err();
            assert!(why.contains(says), "{line:?}: {why}");
        }
    }
}
