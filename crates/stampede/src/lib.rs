//! Stampede Lab's core: what a request does when a hot cache key is missing.
//!
//! - [`flight`]: in-process coalescing (singleflight) over waiter handles.
//! - [`claim`]: `SET NX PX` and compare-and-delete release on an explicit clock.
//! - [`read_path`]: one request as a sans-IO state machine, configured by a
//!   [`read_path::Strategy`].
//! - [`trace`]: the simulation's log lines, below the read path and the simulation.
//! - [`sim`]: a deterministic fleet simulation that drives the read path.
//! - [`scenario`]: every knob and its validation, the presets and
//!   comparisons (`scenario::catalogue`), the URL form (`scenario::link`).
//! - [`lesson`]: what proves the running lesson, and its sentence.
//! - [`tour`]: the guided tour as data, its words filled from the run.
//! - [`walkthrough`]: the interview mode's decisions, asked from the thread's log.
//! - [`sizing`]: rules for sizing the knobs, worked out from a scenario.
//! - [`interview`]: the interviewer's kit: levels, red flags, follow-ups, curveballs.
//! - [`drill`]: graded puzzles as data, and their grading over fixed seeds.
//! - [`playlist`]: a trainer's list of views as one link parameter.
//! - [`practice`]: progress and the spaced review schedule, as text.
//! - [`metrics`]: the counters and histograms everyone reports.
//! - [`decimal`]: decimal text to and from `f64`, without the standard
//!   library's general float code.
//!
//! Nothing here does I/O or reads a clock; the same code runs natively, in
//! wasm, and under a real Redis driver.

pub mod claim;
pub mod claims;
pub mod decimal;
pub mod drill;
pub mod flight;
pub mod interview;
pub mod lesson;
pub mod metrics;
pub mod playlist;
pub mod practice;
pub mod read_path;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod sizing;
pub mod tour;
pub mod trace;
pub mod walkthrough;

pub use metrics::Report;
pub use scenario::Scenario;
pub use sim::Fleet;
