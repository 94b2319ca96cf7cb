//! The crate's one in-process singleflight: the core's flight table
//! (`stampede::flight::FlightTable`) decides who leads, who follows, which
//! flight a settle or a leave belongs to and who takes over from a leader
//! that left; this module only parks the followers on tokio and hands them
//! the leader's result. Both [`crate::Group`] and the driver behind
//! [`crate::Cache`] run on it (see ARCHITECTURE.md).
//!
//! - **The rules are the core's.** A key's first caller leads; later ones
//!   follow; a settle hands one result to the followers attached at that
//!   moment and removes the flight (nothing is remembered); a follower
//!   leaves at its own deadline ([`FlightTable::detach`]); a leader that
//!   leaves hands the flight to its oldest follower
//!   ([`FlightTable::abandon`]). A settle or a leave with the ticket of a
//!   flight that is over, or of a leader that was replaced, changes nothing.
//! - **One board per flight**: the result, set once before the followers
//!   are woken, and one wake-up list ([`Notify`]) for all of them: no
//!   channel and no map entry per follower, and no wake-up at all when
//!   nobody followed. A promotion (rare) is posted on the board and wakes
//!   every follower; the one it names takes the lead, the others wait on.
//! - **Sharded**: flights live in one of several locked tables chosen by
//!   the key's hash, so callers of different keys rarely meet on a lock. A
//!   lock is held only to join, settle, leave or hand on a flight, never
//!   while user code runs (except the key's own `Hash`, `Eq` and `Clone`).

use std::borrow::Borrow;
use std::hash::{BuildHasher, Hash};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use hashbrown::HashTable;
use stampede::flight::{
    Abandoned, FlightPolicy, FlightTable, Join, LeaderTicket, Outcome, WaiterTicket,
};
use tokio::sync::Notify;
use tokio::time::Instant;

/// No follower promoted (a waiter id never handed out).
const NOBODY: u64 = u64::MAX;

/// One flight's board: what its followers read when woken.
///
/// Laid out so that what woken followers read (the result) shares no cache
/// line with what is written while they are woken (the `Arc`'s count just
/// before this struct, as each follower lets go of the board; the wake-up
/// list, as it is drained): a line of padding on each side of the result,
/// rather than an alignment, which would make the allocation slower.
#[repr(C)]
struct Board<P> {
    _before: [u8; 64],
    /// Set once, before the followers are woken.
    result: OnceLock<P>,
    _after: [u8; 64],
    /// The followers' wake-up list.
    notify: Notify,
    /// A follower promoted to lead (its id and ticket) and not yet told.
    promoted: Mutex<Option<(u64, LeaderTicket)>>,
    /// That follower's id, for a look without the lock (`NOBODY`: none):
    /// written under the lock with `promoted`, before the followers are
    /// woken, so a follower that read it too early is woken and reads
    /// again.
    promoted_to: AtomicU64,
    /// The followers waiting with a timer of their own
    /// ([`Follower::wait_until`]).
    timed: Mutex<Timed>,
    /// The earliest of those deadlines, for a look without the lock: in
    /// nanoseconds from `born` (0 for one before it), `u64::MAX` for none.
    earliest: AtomicU64,
    /// The first timed follower's deadline: what `earliest` counts from.
    born: OnceLock<Instant>,
}

/// The deadlines of a flight's callers that wait with a timer of their
/// own: its leader's, if it gave one ([`Flights::join_until`]) and is
/// still there, and the followers' that took one. A follower whose
/// deadline is no earlier than one of those waits with no timer: that
/// one's timer fires first, and when it leaves without the result it
/// wakes every follower to decide again.
#[derive(Default)]
struct Timed {
    leader: Option<Instant>,
    deadlines: Vec<Instant>,
}

impl Timed {
    fn earliest(&self) -> Option<Instant> {
        self.deadlines.iter().copied().chain(self.leader).min()
    }
}

impl<P> Board<P> {
    /// The board of a flight whose leader waits until `leader` (`None`:
    /// its leader's deadline is not the board's to know).
    fn new(leader: Option<Instant>) -> Self {
        let born = OnceLock::new();
        if let Some(d) = leader {
            let _ = born.set(d);
        }
        Board {
            _before: [0; 64],
            result: OnceLock::new(),
            _after: [0; 64],
            notify: Notify::new(),
            promoted: Mutex::new(None),
            promoted_to: AtomicU64::new(NOBODY),
            timed: Mutex::new(Timed {
                leader,
                deadlines: Vec::new(),
            }),
            // The leader's deadline is `born` itself.
            earliest: AtomicU64::new(if leader.is_some() { 0 } else { u64::MAX }),
            born,
        }
    }

    /// `deadline` in `earliest`'s unit, if it is not before `born`.
    fn since_born(&self, deadline: Instant) -> Option<u64> {
        let born = *self.born.get()?;
        let d = deadline.checked_duration_since(born)?;
        Some(d.as_nanos().min(u128::from(u64::MAX - 1)) as u64)
    }

    /// Whether a timed follower's deadline is no later than `deadline`:
    /// then a follower with `deadline` needs no timer of its own. If not,
    /// `deadline` is put on the list, and the follower takes a timer.
    fn covered_or_timed(&self, deadline: Instant) -> bool {
        // Without the lock: a timed follower that leaves after this look
        // changes `earliest` before it wakes the followers, so a follower
        // that saw the old value is woken and looks again.
        if let Some(d) = self.since_born(deadline) {
            if self.earliest.load(Ordering::SeqCst) <= d {
                return true;
            }
        }
        let mut timed = self.timed();
        if timed.earliest().is_some_and(|d| d <= deadline) {
            return true;
        }
        timed.deadlines.push(deadline);
        self.born.get_or_init(|| deadline);
        self.set_earliest(&timed);
        false
    }

    /// `earliest` from the list, under its lock.
    fn set_earliest(&self, timed: &Timed) {
        let earliest = timed.earliest().map_or(u64::MAX, |d| {
            // Before `born`: 0, which is no later than any deadline
            // after it, as the real one.
            self.since_born(d).unwrap_or(0)
        });
        self.earliest.store(earliest, Ordering::SeqCst);
    }

    /// The leader left without the result (its deadline, or dropped): its
    /// deadline covers nobody from now on, and every follower is woken to
    /// decide again whether it needs a timer of its own.
    fn leader_left(&self) {
        let mut timed = self.timed();
        timed.leader = None;
        self.set_earliest(&timed);
        drop(timed);
        if self.result.get().is_none() {
            self.notify.notify_waiters();
        }
    }

    fn timed(&self) -> MutexGuard<'_, Timed> {
        self.timed.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn promoted(&self) -> MutexGuard<'_, Option<(u64, LeaderTicket)>> {
        self.promoted.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One shard: the core's table, and the board of each flight it runs.
struct Table<K, P> {
    flights: FlightTable<K, u64>,
    boards: HashTable<(K, Arc<Board<P>>)>,
    /// Waiter ids, as the core's table names its leaders and followers:
    /// unique within the shard, which holds every flight of a key (kept
    /// here, under the shard's lock, rather than in one counter that
    /// every call of every key would write).
    next_id: u64,
}

impl<K, P> Table<K, P> {
    fn next_id(&mut self) -> u64 {
        let id = self.next_id;
        // `NOBODY` is never handed out.
        self.next_id = (id + 1) % NOBODY;
        id
    }
}

/// A shard on a cache line of its own (its lock is written by every call).
#[repr(align(64))]
struct Shard<K, P>(Mutex<Table<K, P>>);

struct Inner<K, P> {
    hasher: foldhash::fast::RandomState,
    shards: Box<[Shard<K, P>]>,
}

/// The flights of one process (one `Group`, one cache instance), by key
/// `K`, settled with results `P` that every follower gets a clone of.
/// Cheap to clone: clones share the flights.
pub(crate) struct Flights<K, P> {
    inner: Arc<Inner<K, P>>,
}

impl<K, P> Clone for Flights<K, P> {
    fn clone(&self) -> Self {
        Flights {
            inner: self.inner.clone(),
        }
    }
}

/// Shards per table: four per available core, a power of two, 8 to 256.
fn shard_count() -> usize {
    static COUNT: OnceLock<usize> = OnceLock::new();
    *COUNT.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        (cores * 4).next_power_of_two().clamp(8, 256)
    })
}

/// How a call joined (`H`: how its follower holds the flights).
pub(crate) enum Joined<K: Hash + Eq + Clone, P: Clone, H: Borrow<Flights<K, P>>> {
    /// No flight was running: this caller leads it, and must settle it (or
    /// hand it on) with this ticket. The key is handed back, so that a
    /// caller needs no copy of its own to settle with.
    Lead(LeaderTicket, K),
    /// A flight was running: this caller follows it.
    Follow(Follower<K, P, H>),
    /// The core's `remember_failure` pitfall handed an old failure out (off
    /// in every table this crate makes).
    Remembered(Outcome),
}

/// What a follower's wait ended with.
pub(crate) enum Woken<P> {
    /// The flight settled with this result.
    Settled(P),
    /// Its leader left and this follower leads the flight now.
    Promoted(LeaderTicket),
}

impl<K: Hash + Eq + Clone, P: Clone> Default for Flights<K, P> {
    fn default() -> Self {
        Flights {
            inner: Arc::new(Inner {
                hasher: foldhash::fast::RandomState::default(),
                shards: (0..shard_count())
                    .map(|_| {
                        Shard(Mutex::new(Table {
                            flights: FlightTable::new(FlightPolicy::default()),
                            boards: HashTable::new(),
                            next_id: 0,
                        }))
                    })
                    .collect(),
            }),
        }
    }
}

impl<K: Hash + Eq + Clone, P: Clone> Inner<K, P> {
    fn hash(&self, key: &K) -> u64 {
        self.hasher.hash_one(key)
    }

    /// The shard for `hash`: bits the tables themselves use little (their
    /// buckets take the low bits, their tags the top seven).
    fn shard(&self, hash: u64) -> MutexGuard<'_, Table<K, P>> {
        let i = (hash >> 40) as usize & (self.shards.len() - 1);
        self.shards[i]
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

impl<K: Hash + Eq + Clone, P: Clone> Table<K, P> {
    fn board(&self, hash: u64, key: &K) -> Option<&Arc<Board<P>>> {
        self.boards.find(hash, |(k, _)| k == key).map(|(_, b)| b)
    }

    /// A new flight's board (its leader waiting until `leader`).
    fn open(
        &mut self,
        hasher: &foldhash::fast::RandomState,
        hash: u64,
        key: K,
        leader: Option<Instant>,
    ) {
        self.boards
            .insert_unique(hash, (key, Arc::new(Board::new(leader))), |(k, _)| {
                hasher.hash_one(k)
            });
    }

    /// The core hands `key`'s flight on from the leader holding `ticket`:
    /// to its oldest follower, told on the board, or (none left) closed.
    fn abandon(&mut self, hash: u64, key: &K, ticket: LeaderTicket) {
        match self.flights.abandon(key, ticket) {
            Ok(Abandoned::Promoted { leader, ticket }) => {
                if let Some(board) = self.board(hash, key) {
                    let mut promoted = board.promoted();
                    *promoted = Some((leader, ticket));
                    board.promoted_to.store(leader, Ordering::SeqCst);
                    drop(promoted);
                    board.notify.notify_waiters();
                }
            }
            Ok(Abandoned::Empty) => {
                if let Ok(entry) = self.boards.find_entry(hash, |(k, _)| k == key) {
                    entry.remove();
                }
            }
            Err(_) => {}
        }
    }
}

impl<K: Hash + Eq + Clone, P: Clone> Flights<K, P> {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Leads `key`'s flight, or follows the one running. A follower holds
    /// the flights as `flights` is (borrowed, for a caller that waits in
    /// place, as the group's do, which spares each follower a write to the
    /// flights' shared count; or a clone, for one whose wait must be
    /// `'static`, as the driver's are).
    pub(crate) fn join<H: Borrow<Self>>(flights: H, key: K) -> Joined<K, P, H> {
        Flights::join_until(flights, key, None)
    }

    /// [`Flights::join`] for a caller that, leading, waits until `leader`
    /// at most, on a timer of its own, and then leaves the flight without
    /// handing it on (its work goes on), telling the board
    /// ([`Flights::leader_left`]): its followers whose deadlines are no
    /// earlier wait with no timer until it leaves.
    pub(crate) fn join_until<H: Borrow<Self>>(
        flights: H,
        key: K,
        leader: Option<Instant>,
    ) -> Joined<K, P, H> {
        let inner = &flights.borrow().inner;
        let hash = inner.hash(&key);
        let mut table = inner.shard(hash);
        let id = table.next_id();
        match table.flights.join(key.clone(), id) {
            Join::Lead(ticket) => {
                table.open(&inner.hasher, hash, key.clone(), leader);
                Joined::Lead(ticket, key)
            }
            Join::Follow(ticket) => {
                let board = table
                    .board(hash, &key)
                    .cloned()
                    .unwrap_or_else(|| Arc::new(Board::new(None)));
                drop(table);
                Joined::Follow(Follower {
                    flights,
                    key,
                    hash,
                    id,
                    ticket,
                    board,
                    done: false,
                })
            }
            Join::Remembered(outcome) => Joined::Remembered(outcome),
        }
    }

    /// Leads `key`'s flight if none is running (`None`: one is).
    pub(crate) fn try_lead(&self, key: K) -> Option<LeaderTicket> {
        let inner = &self.inner;
        let hash = inner.hash(&key);
        let mut table = inner.shard(hash);
        if table.flights.leader(&key).is_some() {
            return None;
        }
        let id = table.next_id();
        match table.flights.join(key.clone(), id) {
            Join::Lead(ticket) => {
                table.open(&inner.hasher, hash, key, None);
                Some(ticket)
            }
            _ => None,
        }
    }

    /// Ends `key`'s flight led with `ticket`: `result` to every follower
    /// attached now. Nothing, if the ticket's flight is over or its leader
    /// was replaced.
    pub(crate) fn settle(&self, key: &K, ticket: LeaderTicket, outcome: Outcome, result: P) {
        let inner = &self.inner;
        let hash = inner.hash(key);
        // The result goes on the board and the followers are woken while
        // the flight is still in the table; it leaves the table after. A
        // caller that joins meanwhile joined before the settle, in the
        // table's order, and finds the result at its first look, as a
        // follower attached a moment earlier would: it does not start the
        // key's next flight while the last one is still handing out its
        // result (on several workers, many callers come back in that
        // time). Only this leader can settle or abandon its flight, so the
        // ticket checked here still leads below.
        let (board, woken) = {
            let table = inner.shard(hash);
            if !table.flights.leads(key, ticket) {
                return;
            }
            let board = table.board(hash, key).cloned();
            (board, table.flights.waiting(key) > 0)
        };
        if let Some(board) = &board {
            let _ = board.result.set(result);
            // Nobody attached yet: nobody to wake (one who joins from
            // here on finds the result before it waits).
            if woken {
                board.notify.notify_waiters();
            }
        }
        let mut table = inner.shard(hash);
        let settled = table.flights.settle_attached(key, ticket, outcome);
        debug_assert!(settled.is_ok(), "a flight's leader alone settles it");
        if settled.is_ok() {
            if let Ok(entry) = table.boards.find_entry(hash, |(k, _)| k == key) {
                entry.remove();
            }
        }
    }

    /// The leader of `key`'s flight, joined with a deadline
    /// ([`Flights::join_until`]), leaves it without the result and without
    /// handing it on (its work goes on and settles it): its followers
    /// decide again whether they need timers of their own. To be called
    /// before that work can settle (the flight still in the table).
    pub(crate) fn leader_left(&self, key: &K) {
        let hash = self.inner.hash(key);
        let board = self.inner.shard(hash).board(hash, key).cloned();
        if let Some(board) = board {
            board.leader_left();
        }
    }

    /// The leader holding `ticket` leaves `key`'s flight: its oldest
    /// follower, if any, takes it over.
    pub(crate) fn abandon(&self, key: &K, ticket: LeaderTicket) {
        let hash = self.inner.hash(key);
        self.inner.shard(hash).abandon(hash, key, ticket);
    }

    /// Flights running now (0 once everything settled: nothing is kept).
    pub(crate) fn in_flight(&self) -> usize {
        self.inner
            .shards
            .iter()
            .map(|s| {
                s.0.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .flights
                    .in_flight()
            })
            .sum()
    }

    /// Followers attached to `key`'s flight right now (its leader not
    /// counted).
    pub(crate) fn waiting(&self, key: &K) -> usize {
        let hash = self.inner.hash(key);
        self.inner.shard(hash).flights.waiting(key)
    }
}

/// A caller attached to a running flight. Dropped before its wait ended (its
/// deadline, or its future dropped), it leaves the flight; if it had been
/// promoted meanwhile without being told, it hands the flight on at once,
/// so no flight is left with a leader that is gone.
pub(crate) struct Follower<K: Hash + Eq + Clone, P: Clone, H: Borrow<Flights<K, P>>> {
    flights: H,
    key: K,
    hash: u64,
    id: u64,
    ticket: WaiterTicket,
    board: Arc<Board<P>>,
    /// The wait ended (settled or promoted): nothing to leave.
    done: bool,
}

impl<K: Hash + Eq + Clone, P: Clone, H: Borrow<Flights<K, P>>> Follower<K, P, H> {
    /// Waits until the flight settles or hands this follower the lead.
    pub(crate) async fn wait(&mut self) -> Woken<P> {
        loop {
            // Made before the board is read: a settle or a promotion after
            // this point wakes it (tokio's `Notified` counts
            // `notify_waiters` calls from its creation), and one before it
            // is on the board already.
            let notified = self.board.notify.notified();
            if let Some(woken) = look(&self.board, self.id) {
                self.done = true;
                return woken;
            }
            notified.await;
        }
    }

    /// [`Follower::wait`] until `deadline` at most (`None`: it passed
    /// first; a result posted as it passed is taken).
    ///
    /// Each waiter has its own deadline, but not each its own timer: a
    /// timer entry per follower (registered in tokio's wheel and removed
    /// again) was most of a hot key's cost. A follower takes a timer only
    /// if its deadline is earlier than every timed follower's of its
    /// flight; otherwise one of theirs fires no later than its own, and a
    /// timed follower that leaves without the result (its deadline, its
    /// future dropped, a promotion) wakes every follower, and each decides
    /// again, or times out if its own deadline has passed. With callers of
    /// one deadline length, one timer serves a whole flight.
    pub(crate) async fn wait_until(&mut self, deadline: Instant) -> Option<Woken<P>> {
        let mut first = true;
        loop {
            // Made before anything is read: a settle, a promotion or a
            // timed follower's leave from here on wakes it.
            let notified = self.board.notify.notified();
            if let Some(woken) = look(&self.board, self.id) {
                self.done = true;
                return Some(woken);
            }
            if !first && Instant::now() >= deadline {
                return None;
            }
            first = false;
            if !self.board.covered_or_timed(deadline) {
                drop(notified);
                // Boxed: one follower of a flight (usually) takes this way,
                // and every follower's future would carry its timer.
                return Box::pin(self.wait_timed(deadline)).await;
            }
            notified.await;
        }
    }

    /// The wait of a follower with a timer of its own, its deadline on the
    /// board's list until it leaves.
    async fn wait_timed(&mut self, deadline: Instant) -> Option<Woken<P>> {
        let _timed = TimedWait {
            board: self.board.clone(),
            deadline,
        };
        match tokio::time::timeout_at(deadline, self.wait()).await {
            Ok(woken) => Some(woken),
            // It may have landed as the deadline passed.
            Err(_) => self.look(),
        }
    }

    /// The flight's result or this follower's promotion, if either is
    /// there yet.
    pub(crate) fn look(&mut self) -> Option<Woken<P>> {
        let woken = look(&self.board, self.id);
        self.done |= woken.is_some();
        woken
    }
}

/// A timed follower's place on its board: taken off when it leaves, and
/// if it leaves without the result, every follower is woken to decide
/// again whether it needs a timer of its own.
struct TimedWait<P> {
    board: Arc<Board<P>>,
    deadline: Instant,
}

impl<P> Drop for TimedWait<P> {
    fn drop(&mut self) {
        let mut timed = self.board.timed();
        if let Some(i) = timed.deadlines.iter().position(|&d| d == self.deadline) {
            timed.deadlines.swap_remove(i);
        }
        self.board.set_earliest(&timed);
        drop(timed);
        if self.board.result.get().is_none() {
            self.board.notify.notify_waiters();
        }
    }
}

/// `board`'s result, or the promotion of follower `id` (taken off it).
fn look<P: Clone>(board: &Board<P>, id: u64) -> Option<Woken<P>> {
    if let Some(result) = board.result.get() {
        return Some(Woken::Settled(result.clone()));
    }
    // The common case, a flight nobody was promoted in, takes no lock.
    if board.promoted_to.load(Ordering::SeqCst) != id {
        return None;
    }
    take_promotion(board, id).map(Woken::Promoted)
}

/// Follower `id`'s promotion, taken off `board` (under its lock).
fn take_promotion<P>(board: &Board<P>, id: u64) -> Option<LeaderTicket> {
    let mut promoted = board.promoted();
    match *promoted {
        Some((promoted_id, ticket)) if promoted_id == id => {
            *promoted = None;
            board.promoted_to.store(NOBODY, Ordering::SeqCst);
            Some(ticket)
        }
        _ => None,
    }
}

impl<K: Hash + Eq + Clone, P: Clone, H: Borrow<Flights<K, P>>> Drop for Follower<K, P, H> {
    fn drop(&mut self) {
        if self.done || self.board.result.get().is_some() {
            return;
        }
        let flights = &self.flights.borrow().inner;
        let mut table = flights.shard(self.hash);
        // Under the shard's lock, where every promotion is posted: either
        // this follower's is on the board now, or none is coming.
        match take_promotion(&self.board, self.id) {
            Some(ticket) => table.abandon(self.hash, &self.key, ticket),
            None => {
                table.flights.detach(&self.key, self.ticket);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stampede::flight::{Failure, Value};

    type Table = Flights<u32, &'static str>;

    fn lead(flights: &Table, key: u32) -> LeaderTicket {
        match Flights::join(flights, key) {
            Joined::Lead(ticket, _) => ticket,
            _ => panic!("expected to lead"),
        }
    }

    fn follow(flights: &Table, key: u32) -> Follower<u32, &'static str, &Table> {
        match Flights::join(flights, key) {
            Joined::Follow(follower) => follower,
            _ => panic!("expected to follow"),
        }
    }

    fn fresh() -> Outcome {
        Outcome::Fresh(Value::fresh(1, 1))
    }

    #[test]
    fn a_settle_answers_the_followers_attached_and_frees_the_key() {
        let flights = Table::new();
        let ticket = lead(&flights, 1);
        let (mut a, mut b) = (follow(&flights, 1), follow(&flights, 1));
        assert_eq!(flights.waiting(&1), 2);
        assert!(a.look().is_none(), "nothing yet");
        flights.settle(&1, ticket, fresh(), "v");
        assert!(matches!(a.look(), Some(Woken::Settled("v"))));
        assert!(matches!(b.look(), Some(Woken::Settled("v"))));
        assert_eq!(flights.in_flight(), 0);
        // The next caller starts a new flight, which the old ticket cannot
        // settle.
        let next = lead(&flights, 1);
        flights.settle(&1, ticket, fresh(), "stale ticket");
        assert_eq!(flights.in_flight(), 1);
        flights.settle(&1, next, fresh(), "v2");
        assert_eq!(flights.in_flight(), 0);
    }

    #[test]
    fn a_follower_that_leaves_is_detached() {
        let flights = Table::new();
        let ticket = lead(&flights, 1);
        let a = follow(&flights, 1);
        let mut b = follow(&flights, 1);
        drop(a);
        assert_eq!(flights.waiting(&1), 1);
        flights.settle(&1, ticket, Outcome::Failed(Failure::Origin), "e");
        assert!(matches!(b.look(), Some(Woken::Settled("e"))));
    }

    #[test]
    fn a_leader_that_leaves_hands_the_flight_to_its_oldest_follower() {
        let flights = Table::new();
        let ticket = lead(&flights, 1);
        let (mut a, mut b) = (follow(&flights, 1), follow(&flights, 1));
        flights.abandon(&1, ticket);
        assert!(b.look().is_none(), "the promotion is not b's");
        let Some(Woken::Promoted(promoted)) = a.look() else {
            panic!("a, the oldest, leads now");
        };
        assert_eq!(flights.waiting(&1), 1);
        flights.settle(&1, promoted, fresh(), "by a");
        assert!(matches!(b.look(), Some(Woken::Settled("by a"))));
        assert_eq!(flights.in_flight(), 0);
    }

    /// A follower promoted and dropped before it was told hands the flight
    /// on at once: the next follower leads, nobody waits on a leader that
    /// is gone.
    #[test]
    fn a_follower_dropped_while_promoted_hands_the_flight_on() {
        let flights = Table::new();
        let ticket = lead(&flights, 1);
        let (a, mut b) = (follow(&flights, 1), follow(&flights, 1));
        flights.abandon(&1, ticket);
        drop(a);
        let Some(Woken::Promoted(promoted)) = b.look() else {
            panic!("b leads once a, promoted, is gone");
        };
        flights.settle(&1, promoted, fresh(), "by b");
        assert_eq!(flights.in_flight(), 0);
        // With nobody left to promote, the flight closes.
        let ticket = lead(&flights, 2);
        let c = follow(&flights, 2);
        flights.abandon(&2, ticket);
        drop(c);
        assert_eq!(flights.in_flight(), 0, "no flight left without a leader");
    }

    #[tokio::test]
    async fn a_waiting_follower_is_woken_by_the_settle() {
        let flights = Table::new();
        let ticket = lead(&flights, 1);
        let mut a = follow(&flights, 1);
        let settler = flights.clone();
        let woken = tokio::join!(a.wait(), async move {
            tokio::task::yield_now().await;
            settler.settle(&1, ticket, fresh(), "v");
        });
        assert!(matches!(woken.0, Woken::Settled("v")));
    }
}
