//! Counters and latency histograms shared by the page, the CLI and the tests.
//! The field names of [`Report`] are the public vocabulary: the CLI's JSON
//! keys and the page's `data-metric` attributes are exactly these.

use serde::Serialize;

/// A log-linear latency histogram over microseconds: exact below 64 µs,
/// then 32 sub-buckets per power of two (about 3% relative error).
#[derive(Clone, Debug)]
pub struct Histogram {
    buckets: Vec<u64>,
    count: u64,
    max: u64,
}

const SUB: u32 = 5; // 2^5 = 32 sub-buckets per octave
const LINEAR: u64 = 64;

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            buckets: vec![0; 64 + 64 * (1 << SUB)],
            count: 0,
            max: 0,
        }
    }
}

fn bucket_of(v: u64) -> usize {
    if v < LINEAR {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros(); // >= 6
    let shift = msb - SUB;
    let sub = ((v >> shift) & ((1 << SUB) - 1)) as usize;
    LINEAR as usize + ((msb - 6) as usize) * (1 << SUB) + sub
}

/// The largest value that falls into bucket `b`.
fn bucket_high(b: usize) -> u64 {
    if b < LINEAR as usize {
        return b as u64;
    }
    let rel = b - LINEAR as usize;
    let msb = (rel >> SUB) as u32 + 6;
    let sub = (rel & ((1 << SUB) - 1)) as u64;
    let shift = msb - SUB;
    let low = (1u64 << msb) | (sub << shift);
    low + (1u64 << shift) - 1
}

impl Histogram {
    pub fn record(&mut self, v: u64) {
        self.buckets[bucket_of(v)] += 1;
        self.count += 1;
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    /// The value at quantile `q` in [0, 1], rounded up to its bucket's top
    /// (never above the true maximum). Zero when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return bucket_high(b).min(self.max);
            }
        }
        self.max
    }
}

/// How one request ended. Every request ends exactly once.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Ending {
    /// A fresh value from the cache (first read or after a bounded wait).
    Hit,
    /// A stale value, served on purpose.
    Stale,
    /// This request recomputed the value itself.
    Computed,
    /// The value computed by this instance's flight leader.
    Shared,
    /// An explicit degraded answer.
    Degraded,
    /// A failure: origin error, shared failure, negative-cache hit, crash.
    Error,
    /// The request's own deadline passed.
    Timeout,
}

/// Everything the simulation counts. Field names are the CLI's JSON keys.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Report {
    pub requests: u64,
    pub hits: u64,
    pub stale_served: u64,
    pub computed: u64,
    pub shared: u64,
    pub degraded: u64,
    pub errors: u64,
    pub timeouts: u64,
    /// Requests that had not ended when the run stopped (threads pinned).
    pub pinned: u64,
    pub recomputes: u64,
    /// Recomputes that started while another of the same key was running.
    pub overlapping_recomputes: u64,
    pub origin_failures: u64,
    /// Origin calls that ran past the origin timeout (the call itself went on).
    pub origin_timeouts: u64,
    pub origin_peak_concurrency: u64,
    pub claim_attempts: u64,
    pub claim_wins: u64,
    pub releases: u64,
    /// Releases refused because the caller's token no longer held the claim.
    pub releases_refused: u64,
    pub redis_round_trips: u64,
    pub redis_errors: u64,
    /// Values written to the cache.
    pub values_written: u64,
    pub negative_hits: u64,
    /// Failures handed out again from the flight map after their flight ended.
    pub remembered_failures: u64,
    pub corrupted: u64,
    pub crashed: u64,
    pub admission_waits: u64,
    /// Recomputes shed because no admission permit came within the queue budget.
    pub admission_shed: u64,
    /// Leaders that left before their work started, their flight taken over
    /// by the oldest follower.
    pub handovers: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub max_wait_ms: f64,
    /// Virtual time of the last event that changed anything.
    pub elapsed_ms: f64,
    pub events: u64,
}

impl Report {
    pub fn ended(&self) -> u64 {
        self.hits
            + self.stale_served
            + self.computed
            + self.shared
            + self.degraded
            + self.errors
            + self.timeouts
    }

    /// (name, value as text) for every counter, in declaration order; what
    /// the page and the CLI table iterate over.
    pub fn fields(&self) -> Vec<(String, String)> {
        let v = serde_json::to_value(self).unwrap_or_default();
        let mut out = Vec::new();
        if let serde_json::Value::Object(map) = v {
            for (k, v) in map {
                out.push((k, v.to_string()));
            }
        }
        out
    }
}

pub(crate) fn ms(us: u64) -> f64 {
    // Rounded to 0.001 ms so JSON stays short and identical across targets.
    (us as f64) / 1000.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn buckets_contain_their_values(v in 0u64..u64::MAX / 4) {
            let b = bucket_of(v);
            prop_assert!(bucket_high(b) >= v);
            if b > 0 { prop_assert!(bucket_high(b - 1) < v); }
            // relative error bound
            prop_assert!((bucket_high(b) - v) as f64 <= (v as f64) / 32.0 + 1.0);
        }

        #[test]
        fn quantiles_are_ordered(vals in proptest::collection::vec(0u64..10_000_000, 1..200)) {
            let mut h = Histogram::default();
            for v in &vals { h.record(*v); }
            let max = *vals.iter().max().unwrap();
            prop_assert_eq!(h.max(), max);
            prop_assert!(h.quantile(0.5) <= h.quantile(0.99));
            prop_assert!(h.quantile(0.99) <= max);
            prop_assert_eq!(h.quantile(1.0), max);
        }
    }
}
