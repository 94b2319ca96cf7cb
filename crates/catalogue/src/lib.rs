//! Stampede Lab's catalogue: what the page and the CLI say about a run, as
//! data checked against the run. The mechanism (the read path, the fleet
//! simulation, the scenario and its counters) is the core's (`stampede`).
//!
//! - [`claims`]: a claim is a predicate over a run with the words that state
//!   it; a sentence is said only where its claims hold.
//! - [`presets`]: the A/B view's comparisons, and the one table of presets
//!   (re-exported from [`lesson`], where each row holds its lesson rule).
//! - [`lesson`]: what proves the running lesson, and its sentence; the one
//!   table of presets (title, words, knobs to turn, rule).
//! - [`tour`]: the guided tour as data, its words filled from the run.
//! - [`pace`]: playback speeds: the slider's scale, the speed a scenario
//!   starts at (the tour's pacing is checked against them).
//! - [`walkthrough`]: the interview mode's decisions, asked from the thread's log.
//! - [`sizing`]: rules for sizing the knobs, worked out from a scenario.
//! - [`interview`]: the interviewer's kit: levels, red flags, follow-ups, curveballs.
//! - [`drill`]: graded puzzles as data, and their grading over fixed seeds.
//! - [`level`]: the course's three rungs, the tour's levels and the drills'
//!   difficulty alike.
//! - [`playlist`]: a trainer's list of views as one link parameter.
//! - [`practice`]: progress and the spaced review schedule, as text.
//! - [`listed`]: every statement of the catalogue about a run, as one
//!   [`claims::Row`] (a link, the claims its run makes, the words), with
//!   where it comes from and the seeds its table is graded on.
//! - [`assemble`]: "Write it yourself": the read path's blocks and their
//!   wrong variants, each mapped to one knob or pitfall; the three storms
//!   an assembly runs through, graded from the run with claimed words.
//! - [`examples`]: the card's read path in Go, Python, TypeScript and Rust,
//!   the files' text and where each marks the card's steps.

pub mod assemble;
pub mod claims;
pub mod drill;
pub mod examples;
pub mod interview;
pub mod lesson;
pub mod level;
pub mod listed;
pub mod pace;
pub mod playlist;
pub mod practice;
pub mod presets;
pub mod progress;
pub mod sizing;
pub mod tour;
pub mod walkthrough;

pub use listed::rows;
