//! An async singleflight group on tokio: one execution per key at a time,
//! its result shared as one `Arc` by every caller attached when it settles.
//!
//! Rules, each pinned by a test in `tests/group.rs`:
//! - Concurrent callers of one key share one execution and receive the same
//!   `Arc`'d result, success or failure.
//! - Nothing is remembered: once a flight settles, the next caller starts a
//!   new one (a failure is handed to the current waiters only).
//! - The work is detached from every caller, the one that started it
//!   included: a caller whose deadline passes, or whose future is dropped,
//!   leaves without cancelling the work, and without stranding the others.
//! - A computation that panics, in its future or in the closure before the
//!   future exists, settles the flight with [`Failure::Panicked`] for
//!   everyone attached; no waiter hangs and the key is free again.
//! - Each waiter has its own deadline.
//!
//! How, and where the time goes:
//! - **One singleflight in the crate.** The flights are the crate's
//!   `flights` module, the one the driver behind [`crate::Cache`] runs on:
//!   the core's flight table (`stampede::flight::FlightTable`) decides who
//!   leads and follows and which flight a settle belongs to (by its
//!   generation, so a settle can never end a later flight of the same key),
//!   behind sharded locks, with one result and one wake-up list per flight
//!   (no per-waiter channel, no wake-up when nobody followed).
//! - **The leader runs the work inline**, in its own task: no task is
//!   spawned and no channel made for a flight whose leader stays until it
//!   settles. The work is moved to a task of its own (detached) only if the
//!   leader leaves first, at its deadline or by being dropped; if there is
//!   no runtime to take it, the flight settles as [`Failure::Panicked`]. So
//!   a leader's future must be polled for its flight to progress, as any
//!   future must; one that is held but never polled holds its followers
//!   until their deadlines. (The core's table would hand a leaving
//!   leader's flight to its oldest follower, as the cache's driver does;
//!   here the leader hands over its work instead, so nobody is promoted.)

use std::future::{poll_fn, Future};
use std::hash::Hash;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll};

use stampede::flight::{Failure as Ended, LeaderTicket, Outcome, Value};
use tokio::time::{Instant, Sleep};

use crate::flights::{Flights, Joined, Woken};
use crate::obs;

/// Why a shared computation produced no value.
#[derive(Debug, PartialEq, Eq)]
pub enum Failure<E> {
    /// The computation returned this error (every current waiter sees it).
    Error(E),
    /// The computation panicked or was cancelled.
    Panicked,
}

/// What every waiter of one flight receives: the same allocation.
pub type Shared<V, E> = Arc<Result<V, Failure<E>>>;

/// The caller's own deadline passed before the flight settled. The work
/// goes on for the others (and fills whatever it fills).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimedOut;

/// One process's coalescing map for keys `K` and results `Result<V, E>`.
/// Cheap to clone: clones share the flights.
pub struct Group<K, V, E> {
    flights: Flights<K, Shared<V, E>>,
}

impl<K: Hash + Eq + Clone, V, E> Default for Group<K, V, E> {
    fn default() -> Self {
        Group {
            flights: Flights::new(),
        }
    }
}

impl<K, V, E> Clone for Group<K, V, E> {
    fn clone(&self) -> Self {
        Group {
            flights: self.flights.clone(),
        }
    }
}

/// What the core's table is told a flight ended with (the group's callers
/// get the result itself, from the flight's board).
fn outcome<V, E>(shared: &Shared<V, E>) -> Outcome {
    match **shared {
        Ok(_) => Outcome::Fresh(Value::fresh(0, 0)),
        Err(Failure::Error(_)) => Outcome::Failed(Ended::Origin),
        Err(Failure::Panicked) => Outcome::Failed(Ended::Crashed),
    }
}

/// Ends the flight of `key` led with `ticket`, for everyone attached.
fn settle<K: Hash + Eq + Clone, V, E>(
    flights: &Flights<K, Shared<V, E>>,
    key: &K,
    ticket: LeaderTicket,
    shared: Shared<V, E>,
) {
    flights.settle(key, ticket, outcome(&shared), shared);
}

impl<K, V, E> Group<K, V, E>
where
    K: Hash + Eq + Clone + Send + 'static,
    V: Send + Sync + 'static,
    E: Send + Sync + 'static,
{
    pub fn new() -> Self {
        Self::default()
    }

    /// The value for `key`: computed by `f` if no flight for it is running,
    /// else the running flight's. Waits until `deadline` at most.
    pub async fn get_or_compute<F, Fut>(
        &self,
        key: K,
        deadline: Instant,
        f: F,
    ) -> Result<Shared<V, E>, TimedOut>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<V, E>> + Send + 'static,
    {
        let flights = &self.flights;
        // The leader's deadline goes on the flight's board: followers whose
        // deadlines are no earlier need no timer while it stays.
        let (ticket, key) = match Flights::join_until(flights, key, Some(deadline)) {
            Joined::Lead(ticket, key) => (ticket, key),
            Joined::Follow(mut follower) => {
                obs::count(obs::FOLLOWERS, "group");
                let span = obs::Span::group("follower");
                // Its own deadline, on a timer it shares with the flight's
                // other followers when it can (`wait_until`).
                let out = match follower.wait_until(deadline).await {
                    Some(Woken::Settled(shared)) => Ok(shared),
                    // Nobody is promoted in a group: its leaders hand over
                    // their work instead of leaving the flight.
                    Some(Woken::Promoted(_)) => Ok(Arc::new(Err(Failure::Panicked))),
                    None => Err(TimedOut),
                };
                return observed(out, &span);
            }
            // The core's pitfall, never on in the crate's tables.
            Joined::Remembered(_) => return Ok(Arc::new(Err(Failure::Panicked))),
        };
        obs::count(obs::FLIGHTS, "group");
        let span = obs::Span::group("leader");
        // The closure runs before its future exists: a panic there must
        // settle the flight too, or every later caller of the key would
        // join a flight nobody runs.
        let work = match catch_unwind(AssertUnwindSafe(f)) {
            Ok(work) => work,
            Err(_) => {
                let shared: Shared<V, E> = Arc::new(Err(Failure::Panicked));
                settle(flights, &key, ticket, shared.clone());
                return observed(Ok(shared), &span);
            }
        };
        let mut lead = Lead {
            flights,
            key,
            ticket,
            work: Some(Box::pin(work)),
            settled: None,
        };
        // Made at the first `Pending` only (a flight that is ready at once
        // never touches the timer), in place: no allocation for it.
        let mut sleep = pin!(None::<Sleep>);
        let out = poll_fn(|cx| lead.poll_until(cx, deadline, sleep.as_mut())).await;
        observed(out, &span)
    }

    /// Flights running now (0 once everything settled: nothing is kept).
    pub fn in_flight(&self) -> usize {
        self.flights.in_flight()
    }

    /// Followers attached to `key`'s flight right now (its leader not
    /// counted).
    pub fn waiting(&self, key: &K) -> usize {
        self.flights.waiting(key)
    }
}

/// The leader's side of a flight: polls the work in the leader's task, and
/// hands it to a task of its own if dropped before it is done, telling the
/// flight's board it left (its deadline covered the followers whose
/// deadlines are no earlier: they decide again).
struct Lead<
    'a,
    K: Hash + Eq + Clone + Send + 'static,
    V: Send + Sync + 'static,
    E: Send + Sync + 'static,
    Fut,
> where
    Fut: Future<Output = Result<V, E>> + Send + 'static,
{
    flights: &'a Flights<K, Shared<V, E>>,
    key: K,
    ticket: LeaderTicket,
    /// `None` once the flight settled.
    work: Option<Pin<Box<Fut>>>,
    /// What it settled with, for a poll after the answer.
    settled: Option<Shared<V, E>>,
}

impl<K, V, E, Fut> Lead<'_, K, V, E, Fut>
where
    K: Hash + Eq + Clone + Send + 'static,
    V: Send + Sync + 'static,
    E: Send + Sync + 'static,
    Fut: Future<Output = Result<V, E>> + Send + 'static,
{
    /// Polls the work until it settles, or until `deadline` on the timer
    /// `sleep` (made here at the first `Pending`).
    fn poll_until(
        &mut self,
        cx: &mut Context<'_>,
        deadline: Instant,
        mut sleep: Pin<&mut Option<Sleep>>,
    ) -> Poll<Result<Shared<V, E>, TimedOut>> {
        let this = self;
        let Some(work) = this.work.as_mut() else {
            // Polled again after it settled.
            return Poll::Ready(this.settled.clone().ok_or(TimedOut));
        };
        // A panicking future is never polled again (it is dropped below),
        // so nothing observes what the panic left half-changed.
        let result = match catch_unwind(AssertUnwindSafe(|| work.as_mut().poll(cx))) {
            Ok(Poll::Pending) => {
                if sleep.is_none() {
                    sleep.set(Some(tokio::time::sleep_until(deadline)));
                }
                // At the deadline the leader leaves; dropping it detaches
                // the work.
                return match sleep.as_pin_mut().map(|s| s.poll(cx)) {
                    Some(Poll::Ready(())) => Poll::Ready(Err(TimedOut)),
                    _ => Poll::Pending,
                };
            }
            Ok(Poll::Ready(r)) => r.map_err(Failure::Error),
            Err(_) => Err(Failure::Panicked),
        };
        this.work = None;
        let shared = Arc::new(result);
        settle(this.flights, &this.key, this.ticket, shared.clone());
        this.settled = Some(shared.clone());
        Poll::Ready(Ok(shared))
    }
}

impl<K, V, E, Fut> Drop for Lead<'_, K, V, E, Fut>
where
    K: Hash + Eq + Clone + Send + 'static,
    V: Send + Sync + 'static,
    E: Send + Sync + 'static,
    Fut: Future<Output = Result<V, E>> + Send + 'static,
{
    fn drop(&mut self) {
        let Some(work) = self.work.take() else {
            return;
        };
        // Before the work can settle: the board is still this flight's.
        self.flights.leader_left(&self.key);
        // The leader left before the work was done: the work goes on in a
        // task of its own, and settles the flight there.
        let unsettled = Unsettled {
            flights: self.flights.clone(),
            key: self.key.clone(),
            ticket: Some(self.ticket),
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let result = match CatchUnwind(work).await {
                    Ok(r) => r.map_err(Failure::Error),
                    Err(()) => Err(Failure::Panicked),
                };
                unsettled.finish(Arc::new(result));
            });
        }
        // Without a runtime `unsettled` is dropped here, and settles the
        // flight as `Panicked`.
    }
}

/// A detached flight not settled yet. Dropped before it is (its task
/// dropped as the runtime shuts down, or no runtime to run it), it settles
/// the flight as [`Failure::Panicked`]: no follower waits on a flight that
/// nobody runs.
struct Unsettled<K: Hash + Eq + Clone, V, E> {
    flights: Flights<K, Shared<V, E>>,
    key: K,
    ticket: Option<LeaderTicket>,
}

impl<K: Hash + Eq + Clone, V, E> Unsettled<K, V, E> {
    fn finish(mut self, shared: Shared<V, E>) {
        if let Some(ticket) = self.ticket.take() {
            settle(&self.flights, &self.key, ticket, shared);
        }
    }
}

impl<K: Hash + Eq + Clone, V, E> Drop for Unsettled<K, V, E> {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket.take() {
            settle(
                &self.flights,
                &self.key,
                ticket,
                Arc::new(Err(Failure::Panicked)),
            );
        }
    }
}

/// Records how a caller's wait ended on its span (and a timeout in the
/// counters), and hands the answer on.
#[inline]
fn observed<V, E>(
    out: Result<Shared<V, E>, TimedOut>,
    span: &obs::Span,
) -> Result<Shared<V, E>, TimedOut> {
    let outcome = match &out {
        Ok(shared) => match **shared {
            Ok(_) => "ok",
            Err(Failure::Error(_)) => "error",
            Err(Failure::Panicked) => "panicked",
        },
        Err(TimedOut) => {
            obs::count(obs::TIMEOUTS, "group");
            "timed_out"
        }
    };
    span.record("outcome", outcome);
    out
}

/// A future that turns a panic while it is polled into `Err(())`. The
/// panicking future is never polled again (it is dropped with the wrapper),
/// so nothing observes state a panic left half-changed: asserting unwind
/// safety is sound here.
pub(crate) struct CatchUnwind<F: ?Sized>(pub(crate) Pin<Box<F>>);

impl<F: Future + ?Sized> Future for CatchUnwind<F> {
    type Output = Result<F::Output, ()>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.0.as_mut();
        match catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Ready(v)) => Poll::Ready(Ok(v)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(_) => Poll::Ready(Err(())),
        }
    }
}
