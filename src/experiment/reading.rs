//! What one animation frame measured, handed from the engine to the panels
//! as one signal: the clock, the counters, the comparison rows' scores, the
//! read path's tally, the timeline's markers.

use crate::lab::{Defence, Score, Tally};
use stampede::metrics::Metric;

/// What one frame measured, shared with the page as one signal.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reading {
    /// Virtual time shown (µs).
    pub now: u64,
    /// The timeline's length (µs).
    pub span: u64,
    /// Where the run ended, once known (µs).
    pub end: Option<u64>,
    pub fields: Vec<(String, String)>,
    /// The counters themselves, for the core's lesson and tour words.
    pub report: stampede::Report,
    pub recomputes: u64,
    pub instances: u32,
    pub threads: u32,
    /// What each comparison run's requests got so far.
    pub scores: [Option<Score>; 3],
    /// What the animated run's requests got so far.
    pub score: Score,
    /// The comparison runs lag behind the clock this frame.
    pub compared_behind: bool,
    /// Events by kind since t = 0.
    pub tally: Tally,
    /// The workload is one burst (the formulas' own case).
    pub burst: bool,
    /// The workload is a cold start over many keys.
    pub cold: bool,
    pub defence: Option<Defence>,
    pub catching_up: bool,
    /// The run reached the end the lab gives it (`Fleet::cut_off`) with
    /// work still pending: its span is not its last event.
    pub cut_off: bool,
    pub aggregated: bool,
    pub at_end: bool,
    /// Which counters can no longer change (the core's `Fleet::finality`):
    /// a number is revealed when it is final, not at the run's end.
    pub finality: stampede::sim::Finality,
    /// Virtual time of the next timeline marker, if any.
    pub next_marker: Option<u64>,
    /// The clock is fast-forwarding through a quiet stretch.
    pub fast_forward: bool,
    /// The timeline's markers: virtual time (µs) and what happens.
    pub markers: Vec<(u64, &'static str)>,
    /// The thread being followed (global index), what it is doing (a
    /// `read_path::Activity` as u8), where it is on the read path (the
    /// core's) and when it last crashed (µs), if it did.
    pub followed: Option<(u32, u8, stampede::read_path::Place, Option<u64>)>,
    /// The scenario on screen (shared, not copied each frame), for the
    /// panels that work from its knobs (the sizing rules).
    pub scenario: std::sync::Arc<stampede::Scenario>,
    /// The seed of the run on screen.
    pub seed: u64,
}

impl Reading {
    /// Counter `m`'s value as text (empty before the first frame).
    /// `fields` is `Report::fields`, in the order of `Metric::ALL`.
    pub fn text(&self, m: Metric) -> &str {
        self.fields.get(m as usize).map_or("", |(_, v)| v.as_str())
    }

    pub fn naive(&self) -> u64 {
        u64::from(self.instances) * u64::from(self.threads)
    }
}
