//! The test harness of `stampede-redis`, apart from the library: what the
//! page's scenarios look like when they run for real, on tokio tasks
//! against a real Redis, beside the simulation's numbers.
//!
//! - [`fleet`]: any scenario run for real (bursts, cold starts, steady
//!   traffic closed- or open-loop, skewed keys, local copies; a Redis
//!   outage, refused or hung, a crashing holder and faults at a moment
//!   injected; retries), counted in the simulation's names; and the
//!   conformance table ([`fleet::checks`], [`fleet::compare`]): bursts
//!   agree with the simulation exactly, what runs on real timers within a
//!   tolerance per metric ([`fleet::TOLERANCE_NOTE`]).
//! - [`proxy`]: a TCP proxy that delays, cuts or holds the bytes between
//!   the instances and Redis (a slow Redis, a Redis that refuses, a Redis
//!   that hangs and runs what was sent when it resumes).
//! - [`faults`]: the holder faults (a claim winner that dies holding its
//!   claim), as an origin wrapper the driver asks.
//! - [`seed`]: the values a run starts from, written straight into Redis in
//!   the cache's layout, and a deploy's re-warm (`ttl-sync`).
//! - the `stampede-fleet` binary: one scenario for real, `--compare` beside
//!   the simulation, `--conformance` the whole table
//!   (`scripts/conformance.sh` writes `data/conformance.tsv` with it).
//!
//! ## How the harness reaches the driver
//!
//! A fleet instance is the same read-path driver a `stampede_redis::Cache`
//! runs on, built from a core `Scenario` instead of a builder: so it can
//! run the page's teaching pitfalls (a flight key that is not the cache
//! key, no deadline), which the library's builder does not offer, and its
//! origin can make a claim holder die. `stampede-redis` makes that driver
//! public only under its cargo feature `harness` (and hidden from its
//! docs), which this crate turns on. The feature is not part of the library: it is named in its crate
//! docs as the harness's, carries no stability promise, and a service has
//! no reason to turn it on. Without it the driver is private, its fault
//! hook is not compiled, and the library's public face is `Cache` (with
//! its builder and errors), `Group`, `ClaimStore` and the tower layer.
//! (Cargo unifies features within a build: in `cargo test --workspace`,
//! the library is built once, with the feature, because this crate asks
//! for it.)

pub mod faults;
pub mod fleet;
pub mod proxy;
pub mod seed;

pub use faults::{connect_in, connect_in_fleet, Faulty, Instance};
pub use stampede_redis::driver::{Answer, Counters, Driver, Key, Origin, OriginFuture};
