//! An async singleflight group on tokio, driven by the core's flight table
//! (`stampede::flight::FlightTable`): the table decides who leads a key and
//! who is attached when it settles; this module supplies the tasks, the
//! channels and the clock.
//!
//! Rules, each pinned by a test in `tests/group.rs`:
//! - Concurrent callers of one key share one execution and receive the same
//!   `Arc`'d result, success or failure.
//! - Nothing is remembered: once a flight settles, the next caller starts a
//!   new one (a failure is handed to the current waiters only).
//! - The work is detached from every caller, the one that started it
//!   included: it runs as a task of its own, so a caller whose deadline
//!   passes, or whose future is dropped, leaves without cancelling the work
//!   the others still wait for, and without stranding them.
//! - A computation that panics settles the flight with `Failure::Panicked`
//!   for everyone attached; no waiter hangs and the key is free again.
//!
//! Where this differs from the core's own model: the table can promote the
//! oldest follower when a leader vanishes. Here the leader never vanishes
//! before its work is done, because the work is not in the leader's future
//! at all; promotion is kept for the day a caller runs the work inline.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use stampede::flight::{FlightPolicy, FlightTable, Join, LeaderTicket, Outcome, WaiterTicket};
use tokio::sync::oneshot;
use tokio::time::Instant;

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

struct State<K, V, E> {
    table: FlightTable<K, u64>,
    /// Each attached waiter's way back, by waiter id.
    senders: HashMap<u64, oneshot::Sender<Shared<V, E>>>,
    next_id: u64,
}

/// One process's coalescing map for keys `K` and results `Result<V, E>`.
pub struct Group<K, V, E> {
    state: Arc<Mutex<State<K, V, E>>>,
}

impl<K, V, E> Default for Group<K, V, E>
where
    K: Hash + Eq + Clone,
{
    fn default() -> Self {
        Group {
            state: Arc::new(Mutex::new(State {
                table: FlightTable::new(FlightPolicy::default()),
                senders: HashMap::new(),
                next_id: 0,
            })),
        }
    }
}

impl<K, V, E> Clone for Group<K, V, E> {
    fn clone(&self) -> Self {
        Group {
            state: self.state.clone(),
        }
    }
}

/// Leaves the flight if the waiter stops waiting first (deadline or drop).
struct Attached<K: Hash + Eq + Clone, V, E> {
    state: Arc<Mutex<State<K, V, E>>>,
    key: K,
    id: u64,
    ticket: Option<WaiterTicket>,
}

impl<K: Hash + Eq + Clone, V, E> Drop for Attached<K, V, E> {
    fn drop(&mut self) {
        let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(t) = self.ticket {
            st.table.detach(&self.key, t);
        }
        st.senders.remove(&self.id);
    }
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
        let (tx, rx) = oneshot::channel();
        // The lock is taken and released here, before any await.
        let (id, joined) = {
            let mut st = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            let id = st.next_id;
            st.next_id += 1;
            let joined = st.table.join(key.clone(), id);
            if let Join::Follow(_) = joined {
                st.senders.insert(id, tx);
                (id, (joined, None))
            } else {
                (id, (joined, Some(tx)))
            }
        };
        let (ticket, own) = match joined {
            (Join::Lead(t), Some(own)) => (t, own),
            (Join::Follow(w), _) => {
                obs::count(obs::FOLLOWERS, "group");
                let span = obs::Span::group("follower");
                let guard = Attached {
                    state: self.state.clone(),
                    key,
                    id,
                    ticket: Some(w),
                };
                return observed(wait(rx, deadline, guard).await, &span);
            }
            // The policy never remembers, so this cannot occur; answering it
            // as a failure is the safe reading.
            _ => return Ok(Arc::new(Err(Failure::Panicked))),
        };
        obs::count(obs::FLIGHTS, "group");
        let span = obs::Span::group("leader");
        // The closure runs before its future exists: a panic there must
        // settle the flight too, or every later caller of the key would
        // join a flight nobody runs.
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(work) => self.spawn_work(key.clone(), ticket, own, work),
            Err(_) => settle(
                &self.state,
                &key,
                ticket,
                own,
                Arc::new(Err(Failure::Panicked)),
            ),
        }
        let guard = Attached {
            state: self.state.clone(),
            key,
            id,
            ticket: None,
        };
        observed(wait(rx, deadline, guard).await, &span)
    }

    /// Runs the work as a task of its own and settles the flight with its
    /// result, for whoever is attached then (the leader's own channel too).
    fn spawn_work<Fut>(
        &self,
        key: K,
        ticket: LeaderTicket,
        own: oneshot::Sender<Shared<V, E>>,
        work: Fut,
    ) where
        Fut: Future<Output = Result<V, E>> + Send + 'static,
    {
        let state = self.state.clone();
        tokio::spawn(async move {
            // A panic in the work is caught where it is polled (one task,
            // not a second one spawned to catch it as a JoinError).
            let result = match CatchUnwind(Box::pin(work)).await {
                Ok(r) => r.map_err(Failure::Error),
                Err(()) => Err(Failure::Panicked),
            };
            settle(&state, &key, ticket, own, Arc::new(result));
        });
    }

    /// Flights running now (0 once everything settled: nothing is kept).
    pub fn in_flight(&self) -> usize {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .table
            .in_flight()
    }

    /// Waiters attached to `key`'s flight right now.
    pub fn waiting(&self, key: &K) -> usize {
        self.state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .table
            .waiting(key)
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

/// Ends `key`'s flight with `shared`, for whoever is attached now (the
/// leader's own channel too).
fn settle<K: Hash + Eq + Clone, V, E>(
    state: &Mutex<State<K, V, E>>,
    key: &K,
    ticket: LeaderTicket,
    own: oneshot::Sender<Shared<V, E>>,
    shared: Shared<V, E>,
) {
    let mut st = state.lock().unwrap_or_else(PoisonError::into_inner);
    // The core's table only decides who is attached; the value itself
    // travels in `shared`.
    let delivered = st.table.settle(key, ticket, Outcome::Degraded);
    let senders: Vec<_> = match delivered {
        Ok(settled) => settled
            .deliveries
            .into_iter()
            .filter_map(|(w, _)| st.senders.remove(&w))
            .collect(),
        Err(_) => Vec::new(),
    };
    drop(st);
    for s in senders {
        let _ = s.send(shared.clone());
    }
    let _ = own.send(shared);
}

async fn wait<K: Hash + Eq + Clone, V, E>(
    rx: oneshot::Receiver<Shared<V, E>>,
    deadline: Instant,
    guard: Attached<K, V, E>,
) -> Result<Shared<V, E>, TimedOut> {
    let out = match tokio::time::timeout_at(deadline, rx).await {
        Ok(Ok(shared)) => Ok(shared),
        // The work's task ended without a word: the runtime is shutting
        // down. There is no value; say so rather than hang.
        Ok(Err(_)) => Ok(Arc::new(Err(Failure::Panicked))),
        Err(_) => Err(TimedOut),
    };
    drop(guard);
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
