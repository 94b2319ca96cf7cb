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
//! - **The leader runs the work inline**, in its own task: no task is
//!   spawned and no channel made for a flight whose leader stays until it
//!   settles. The work is moved to a task of its own (detached) only if the
//!   leader leaves first, at its deadline or by being dropped; if there is
//!   no runtime to take it, the flight settles as [`Failure::Panicked`]. So
//!   a leader's future must be polled for its flight to progress, as any
//!   future must; one that is held but never polled holds its followers
//!   until their deadlines.
//! - **One wake-up list per flight**: followers wait on the flight's
//!   [`Notify`], woken all at once when it settles (no per-waiter channel,
//!   no per-waiter allocation); the list is not touched at all when nobody
//!   followed.
//! - **A sharded map**, hashed once per call: flights live in one of
//!   several locked tables, chosen by the key's hash, so callers of
//!   different keys rarely meet on a lock. A lock is held only to find,
//!   insert or remove a flight, never while user code runs (except the
//!   key's own `Hash` and `Eq`).
//! - **A settle removes its own flight only** (compared by identity, not by
//!   key), so it can never remove a later flight of the same key.
//!
//! The core's flight table (`stampede::flight::FlightTable`) is the model
//! of these rules and drives the Redis read path (the driver behind [`crate::Cache`]); this
//! group keeps the rules with less bookkeeping than the table's (which
//! tracks tickets, waiter ids and promotions), because here the one caller
//! that could vanish mid-flight, the leader, hands its work over instead of
//! leaving it.

use std::future::Future;
use std::hash::{BuildHasher, Hash};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll};

use hashbrown::HashTable;
use tokio::sync::Notify;
use tokio::time::{Instant, Sleep};

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

/// One execution and the callers waiting on it.
///
/// Laid out so that what woken followers read (the result) shares no cache
/// line with what is written while they are woken (the `Arc`'s count just
/// before this struct, as each follower lets go of the flight; the wake-up
/// list, as it is drained): a line of padding on each side of the result,
/// rather than an alignment, which would make the allocation slower.
#[repr(C)]
struct Flight<V, E> {
    _before: [u8; 64],
    /// Set once, before the followers are woken.
    result: OnceLock<Shared<V, E>>,
    _after: [u8; 64],
    /// The followers' wake-up list.
    notify: Notify,
    /// Followers attached now: each joins under its shard's lock and leaves
    /// when it returns or is dropped (uncounted once the result is out:
    /// nothing reads the count after the settle).
    followers: AtomicUsize,
}

/// The running flights of one shard, by key.
type Table<K, V, E> = HashTable<(K, Arc<Flight<V, E>>)>;

/// A shard on a cache line of its own (its lock is written by every call).
#[repr(align(64))]
struct Shard<K, V, E>(Mutex<Table<K, V, E>>);

struct Inner<K, V, E> {
    hasher: foldhash::fast::RandomState,
    shards: Box<[Shard<K, V, E>]>,
}

/// One process's coalescing map for keys `K` and results `Result<V, E>`.
/// Cheap to clone: clones share the flights.
pub struct Group<K, V, E> {
    inner: Arc<Inner<K, V, E>>,
}

/// Shards per group: four per available core, a power of two, 8 to 256.
fn shard_count() -> usize {
    static COUNT: OnceLock<usize> = OnceLock::new();
    *COUNT.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        (cores * 4).next_power_of_two().clamp(8, 256)
    })
}

impl<K, V, E> Default for Group<K, V, E>
where
    K: Hash + Eq + Clone,
{
    fn default() -> Self {
        Group {
            inner: Arc::new(Inner {
                hasher: foldhash::fast::RandomState::default(),
                shards: (0..shard_count())
                    .map(|_| Shard(Mutex::new(HashTable::new())))
                    .collect(),
            }),
        }
    }
}

impl<K, V, E> Clone for Group<K, V, E> {
    fn clone(&self) -> Self {
        Group {
            inner: self.inner.clone(),
        }
    }
}

impl<K: Hash + Eq, V, E> Inner<K, V, E> {
    fn hash(&self, key: &K) -> u64 {
        self.hasher.hash_one(key)
    }

    /// The shard for `hash`: bits the tables themselves use little (their
    /// buckets take the low bits, their tags the top seven).
    fn shard(&self, hash: u64) -> MutexGuard<'_, Table<K, V, E>> {
        let i = (hash >> 40) as usize & (self.shards.len() - 1);
        self.shards[i]
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Ends `flight` with `shared`: the result first, then the flight out
    /// of the map (if it is still this flight), then its followers woken.
    fn settle(&self, hash: u64, flight: &Arc<Flight<V, E>>, shared: Shared<V, E>) {
        let _ = flight.result.set(shared);
        {
            let mut table = self.shard(hash);
            if let Ok(entry) = table.find_entry(hash, |(_, f)| Arc::ptr_eq(f, flight)) {
                entry.remove();
            }
        }
        // A follower joins under the shard's lock, taken and released just
        // above: any follower of this flight is counted by now, and none can
        // join any more. With none, there is nobody to wake.
        if flight.followers.load(Ordering::Acquire) > 0 {
            flight.notify.notify_waiters();
        }
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
        let inner = &self.inner;
        let hash = inner.hash(&key);
        // The shard's lock is held for this block only, never across an
        // await.
        let joined = {
            let mut table = inner.shard(hash);
            match table.find(hash, |(k, _)| *k == key) {
                Some((_, running)) => {
                    running.followers.fetch_add(1, Ordering::Relaxed);
                    Err(running.clone())
                }
                None => {
                    let flight = Arc::new(Flight {
                        _before: [0; 64],
                        result: OnceLock::new(),
                        _after: [0; 64],
                        notify: Notify::new(),
                        followers: AtomicUsize::new(0),
                    });
                    table.insert_unique(hash, (key, flight.clone()), |(k, _)| inner.hash(k));
                    Ok(flight)
                }
            }
        };
        let flight = match joined {
            Ok(flight) => flight,
            Err(running) => return follow(running, deadline).await,
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
                inner.settle(hash, &flight, shared.clone());
                return observed(Ok(shared), &span);
            }
        };
        let lead = Lead {
            inner,
            hash,
            flight,
            work: Some(Box::pin(work)),
            deadline,
            sleep: None,
        };
        observed(lead.await, &span)
    }

    /// Flights running now (0 once everything settled: nothing is kept).
    pub fn in_flight(&self) -> usize {
        self.inner
            .shards
            .iter()
            .map(|s| s.0.lock().unwrap_or_else(PoisonError::into_inner).len())
            .sum()
    }

    /// Followers attached to `key`'s flight right now (its leader not
    /// counted).
    pub fn waiting(&self, key: &K) -> usize {
        let hash = self.inner.hash(key);
        self.inner
            .shard(hash)
            .find(hash, |(k, _)| k == key)
            .map_or(0, |(_, f)| f.followers.load(Ordering::Relaxed))
    }
}

/// The leader's side of a flight: polls the work in the leader's task, and
/// hands it to a task of its own if dropped before it is done.
struct Lead<
    'a,
    K: Hash + Eq + Send + 'static,
    V: Send + Sync + 'static,
    E: Send + Sync + 'static,
    Fut,
> where
    Fut: Future<Output = Result<V, E>> + Send + 'static,
{
    inner: &'a Arc<Inner<K, V, E>>,
    hash: u64,
    flight: Arc<Flight<V, E>>,
    /// `None` once the flight settled.
    work: Option<Pin<Box<Fut>>>,
    deadline: Instant,
    /// Made at the first `Pending` only: a flight that is ready at once
    /// never touches the timer.
    sleep: Option<Pin<Box<Sleep>>>,
}

impl<K, V, E, Fut> Future for Lead<'_, K, V, E, Fut>
where
    K: Hash + Eq + Send + 'static,
    V: Send + Sync + 'static,
    E: Send + Sync + 'static,
    Fut: Future<Output = Result<V, E>> + Send + 'static,
{
    type Output = Result<Shared<V, E>, TimedOut>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let Some(work) = this.work.as_mut() else {
            // Polled again after it settled.
            return Poll::Ready(this.flight.result.get().cloned().ok_or(TimedOut));
        };
        // A panicking future is never polled again (it is dropped below),
        // so nothing observes what the panic left half-changed.
        let result = match catch_unwind(AssertUnwindSafe(|| work.as_mut().poll(cx))) {
            Ok(Poll::Pending) => {
                let deadline = this.deadline;
                let sleep = this
                    .sleep
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
                // At the deadline the leader leaves; dropping it detaches
                // the work.
                return match sleep.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(TimedOut)),
                    Poll::Pending => Poll::Pending,
                };
            }
            Ok(Poll::Ready(r)) => r.map_err(Failure::Error),
            Err(_) => Err(Failure::Panicked),
        };
        this.work = None;
        let shared = Arc::new(result);
        this.inner.settle(this.hash, &this.flight, shared.clone());
        Poll::Ready(Ok(shared))
    }
}

impl<K, V, E, Fut> Drop for Lead<'_, K, V, E, Fut>
where
    K: Hash + Eq + Send + 'static,
    V: Send + Sync + 'static,
    E: Send + Sync + 'static,
    Fut: Future<Output = Result<V, E>> + Send + 'static,
{
    fn drop(&mut self) {
        let Some(work) = self.work.take() else {
            return;
        };
        // The leader left before the work was done: the work goes on in a
        // task of its own, and settles the flight there.
        let unsettled = Unsettled {
            inner: self.inner.clone(),
            hash: self.hash,
            flight: Some(self.flight.clone()),
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
struct Unsettled<K: Hash + Eq, V, E> {
    inner: Arc<Inner<K, V, E>>,
    hash: u64,
    flight: Option<Arc<Flight<V, E>>>,
}

impl<K: Hash + Eq, V, E> Unsettled<K, V, E> {
    fn finish(mut self, shared: Shared<V, E>) {
        if let Some(flight) = self.flight.take() {
            self.inner.settle(self.hash, &flight, shared);
        }
    }
}

impl<K: Hash + Eq, V, E> Drop for Unsettled<K, V, E> {
    fn drop(&mut self) {
        if let Some(flight) = self.flight.take() {
            self.inner
                .settle(self.hash, &flight, Arc::new(Err(Failure::Panicked)));
        }
    }
}

/// Counts a follower as attached until it returns or is dropped.
struct Attached<'a, V, E>(&'a Flight<V, E>);

impl<V, E> Drop for Attached<'_, V, E> {
    fn drop(&mut self) {
        // After the settle nothing reads the count: a woken follower leaves
        // without writing to a line every other follower is reading.
        if self.0.result.get().is_none() {
            self.0.followers.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// A follower waits for `flight` (already counted in its `followers`) until
/// `deadline`.
async fn follow<V, E>(
    flight: Arc<Flight<V, E>>,
    deadline: Instant,
) -> Result<Shared<V, E>, TimedOut> {
    obs::count(obs::FOLLOWERS, "group");
    let span = obs::Span::group("follower");
    let _attached = Attached(&flight);
    // Made before the result is checked: a settle after this point wakes it
    // (tokio's `Notified` counts `notify_waiters` calls from its creation),
    // and one before it has set the result already.
    let notified = flight.notify.notified();
    if let Some(shared) = flight.result.get() {
        return observed(Ok(shared.clone()), &span);
    }
    let out = match tokio::time::timeout_at(deadline, notified).await {
        // The result is set before the followers are woken.
        Ok(()) => Ok(flight
            .result
            .get()
            .cloned()
            .unwrap_or_else(|| Arc::new(Err(Failure::Panicked)))),
        // It may have landed as the deadline passed.
        Err(_) => flight.result.get().cloned().ok_or(TimedOut),
    };
    observed(out, &span)
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
