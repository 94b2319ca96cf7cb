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
//! - The group and the cache's in-process flights are one singleflight (a
//!   private module on the core's flight table; the crate's
//!   ARCHITECTURE.md says which and why).
//!
//! - [`claim`]: the claim on a real Redis, `SET NX PX` with an unguessable
//!   token and a compare-and-delete release invoked by its script hash; and
//!   fenced writes: a claim win takes a fencing number, and a value written
//!   under an older one than the stored value's is refused.
//!
//! - [`conn`]: one Redis or a Redis Cluster behind one connection type.
//!
//! - [`row`]: the one value layout the cache, the claim store and the
//!   scripts share: one string, a text header and the payload, read with
//!   one `GET`.
//!
//! Inside, a driver runs the read path on real I/O: each request runs the
//! core's state machine in a task of its own; the driver only performs the
//! steps it emits (Redis reads, polls, the claim scripts, the flight table,
//! an admission semaphore, the origin, the write). The caller is answered
//! when the machine says so and the work goes on after it.
//!
//! - [`redis`]: the redis-rs the crate is built on, re-exported (its
//!   types are in the API):
//!
//! ```
//! use stampede_redis::redis;
//! let client = redis::Client::open("redis://127.0.0.1:6379/").unwrap();
//! let _ = stampede_redis::Cache::<String>::builder().client(client);
//! ```
//!
//! ## The feature `harness` is not part of the library
//!
//! The test harness (the `stampede-fleet` crate of this workspace: the
//! fleet, the fault proxy, the conformance table and the `stampede-fleet`
//! binary) runs that driver straight from a core `Scenario`, the page's
//! teaching pitfalls included (a flight key that is not the cache key, no
//! deadline), and makes claim holders die on purpose. The cargo feature
//! `harness` makes the driver public for it (module `driver`, with the
//! holder-fault hook on its `Origin`), hidden from these docs
//! (`#[doc(hidden)]`); without the feature the driver is private and the
//! hook is not compiled. It carries no stability promise and a service has
//! no reason to turn it on: the library is [`Cache`] (its builder and
//! errors), [`Group`], [`ClaimStore`] and the tower layer, and the builder
//! offers none of the pitfalls: its [`ClaimMode`](cache::ClaimMode) has no
//! claim-outside order, every request has a deadline and an origin
//! timeout, and the flight key is the cache key.

mod breaker;
pub mod cache;
pub mod claim;
pub mod conn;
// The harness's door: hidden from the docs, named as the harness's.
#[cfg(feature = "harness")]
#[doc(hidden)]
pub mod driver;
#[cfg(not(feature = "harness"))]
pub(crate) mod driver;
mod flights;
pub mod group;
#[cfg(feature = "tower")]
pub mod layer;
mod local;
pub mod obs;
pub mod row;

/// The redis-rs this crate is built on: its types are in the public API
/// (`Conn`'s connections, `CacheBuilder::client`, `BuildError::Redis`), so
/// a service names them through this re-export and never has two versions
/// of redis-rs apart.
pub use redis;

pub use breaker::BreakerState;
pub use cache::{
    BuildError, Cache, CacheBuilder, CacheError, CacheStats, Codec, Fetched, Json, OriginError,
    Source,
};
pub use claim::{
    fence_key, lock_key, value_key, ClaimStore, Release, Token, FENCE_LIFE, MAX_KEY_BYTES,
};
pub use conn::{Conn, Target};
pub use group::{Failure, Group, Shared, TimedOut};
pub use local::Coherence;
