#![doc = include_str!("../README.md")]
//!
//! ## Modules
//!
//! The stampede core (`stampede`) driven by real concurrency instead of the
//! simulation's virtual clock. Native only: the page never builds it.
//!
//! - [`cache`]: the service-facing [`Cache`]: string keys, typed values
//!   through a [`Codec`], a builder over the core's read path, the origin
//!   as an async closure of the key.
//!
//! - `layer` (feature `tower`, on by default): a tower layer coalescing
//!   HTTP requests by a key function, for singleflight at the HTTP edge.
//!
//! - [`obs`]: what the `tracing` and `metrics` features report (both off
//!   by default).
//!
//! - [`group`]: an async singleflight group on tokio: one execution per
//!   key at a time, run inline by its leader and detached only if the
//!   leader leaves first; results shared as an `Arc` with the waiters
//!   attached when it settles, each waiter bounded by its own deadline.
//!
//! - [`claim`]: the claim on a real Redis, `SET NX PX` with an unguessable
//!   token and a compare-and-delete release invoked by its script hash; and
//!   fenced writes: a claim win takes a fencing number, and a value written
//!   under an older one than the stored value's is refused.
//!
//! - [`driver`]: the read path on real I/O. Each request runs the core's
//!   state machine in a task of its own; the driver only performs the steps
//!   it emits (Redis reads, polls, the claim scripts, the flight table, an
//!   admission semaphore, the origin, the write). The caller is answered
//!   when the machine says so and the work goes on after it.
//!
//! - [`fleet`]: any scenario run for real (bursts, cold starts, steady
//!   traffic closed- or open-loop, skewed keys, local copies; a Redis outage, refused or hung, a crashing
//!   holder and faults at a moment injected; retries), counted in the
//!   simulation's names; the `stampede-fleet` binary prints it, beside the
//!   simulation's with `--compare`, and the conformance table with
//!   `--conformance`. Bursts agree with the simulation exactly; what runs on
//!   real timers agrees within a tolerance per metric, documented in
//!   [`fleet::checks`] and [`fleet::TOLERANCE_NOTE`].
//!
//! - [`conn`]: one Redis or a Redis Cluster behind one connection type.
//!
//! - [`proxy`]: a TCP proxy that delays, cuts or swallows the bytes
//!   between the instances and Redis (a slow Redis, a Redis that refuses,
//!   a Redis that hangs).

pub mod cache;
pub mod claim;
pub mod conn;
pub mod driver;
pub mod fleet;
pub mod group;
#[cfg(feature = "tower")]
pub mod layer;
pub mod obs;
pub mod proxy;

pub use cache::{
    BuildError, Cache, CacheBuilder, CacheError, CacheStats, Codec, Fetched, Json, Source,
};
pub use claim::{
    fence_key, lock_key, value_key, ClaimStore, Release, Token, FENCE_LIFE, MAX_KEY_BYTES,
};
pub use conn::{Conn, Target};
pub use driver::{Answer, Driver, Key, Origin, OriginFuture};
pub use group::{Failure, Group, Shared, TimedOut};
