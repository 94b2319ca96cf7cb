//! Stampede Lab's core: what a request does when a hot cache key is missing.
//!
//! - [`flight`]: in-process coalescing (singleflight) over waiter handles.
//! - [`claim`]: `SET NX PX` and compare-and-delete release on an explicit clock.
//! - [`read_path`]: one request as a sans-IO state machine, configured by a
//!   [`read_path::Strategy`].
//! - [`trace`]: the simulation's log lines, below the read path and the simulation.
//! - [`sim`]: a deterministic fleet simulation that drives the read path.
//! - [`scenario`]: every knob and its validation, the named scenarios
//!   (`scenario::presets`), the URL form (`scenario::link`).
//! - [`metrics`]: the counters and histograms everyone reports.
//! - [`decimal`]: decimal text to and from `f64`, without the standard
//!   library's general float code.
//!
//! Nothing here does I/O or reads a clock; the same code runs natively, in
//! wasm, and under a real Redis driver. The lessons, the tour and every
//! sentence said about a run are the catalogue's (`stampede-catalogue`): a
//! service built on this crate never compiles them.

pub mod claim;
pub mod decimal;
pub mod flight;
pub mod ledger;
pub mod metrics;
pub mod read_path;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod trace;

pub use metrics::{Metric, Report};
pub use scenario::Scenario;
pub use sim::Fleet;
