//! Samples for the timeline chart.

use super::*;

/// A cheap snapshot of the counters a timeline chart plots. Cumulative
/// fields only grow; the chart differences them per bucket.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Sample {
    pub t: Micros,
    /// Recomputes running at the origin right now.
    pub origin_running: u64,
    /// The most that have run at once since t = 0 (the report's
    /// `origin_peak_concurrency` so far): a sample can fall between peaks.
    pub origin_peak: u64,
    pub recomputes: u64,
    pub redis_round_trips: u64,
    /// Errors plus timeouts.
    pub failures: u64,
    pub stale_served: u64,
    pub served: u64,
    pub flights: u64,
    pub live_claims: u64,
}

impl Fleet {
    pub fn sample(&self) -> Sample {
        let r = &self.r;
        Sample {
            t: self.now,
            origin_running: self.origin_running,
            origin_peak: r.origin_peak_concurrency,
            recomputes: r.recomputes,
            redis_round_trips: r.redis_round_trips,
            failures: r.errors + r.timeouts,
            stale_served: r.stale_served,
            served: r.ended(),
            flights: self.flights_in_flight() as u64,
            live_claims: self.claims.live(self.now) as u64,
        }
    }

    /// Time of the last event that changed something visible (a deadline
    /// timer for an already answered request does not count).
    pub fn last_activity(&self) -> Micros {
        self.last_activity
    }
}
