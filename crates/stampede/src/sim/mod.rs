//! A deterministic discrete-event simulation of a fleet running the read
//! path: instances with pools of request threads, one flight table and one
//! admission limit per instance, a shared cache and claim table behind a
//! round-trip time, and an origin with a latency distribution, a capacity,
//! failures, hangs and outages. Same scenario and seed give the same event
//! log bit for bit, on the host and in wasm: time is integer microseconds,
//! randomness is one seeded stream, and ties are broken by insertion order.
//!
//! Where things live: this file holds the fleet's state, its public surface
//! and the event loop (which event is next, arrivals, deadlines, parking);
//! `perform` drives the read path (each step a machine emits,
//! performed against the simulated world), `world` is that world's side
//! (the cache's answers, the origin, admission, crashes, recording an
//! answer), `build` constructs a fleet in slices, `markers` keeps the
//! timeline's moments and `sample` the chart's samples.
//!
//! Modelling choices worth knowing:
//! - Redis applies a command when it is sent; the reply arrives one round
//!   trip later, plus its wait in Redis's queue when Redis has a finite
//!   throughput (`redis_ops_per_ms`: one command at a time, first come
//!   first served). With Redis down every command errors after a round
//!   trip, or, when it hangs, after the client's timeout; an instance's
//!   breaker then answers its commands with the error at once, unsent.
//! - A Redis that hangs (a paused server) keeps the writes sent to it
//!   (claims, releases, values, markers) and runs them, in the order sent,
//!   when it resumes; their clients gave up at their timeout whenever it
//!   resumes (even a resume before the timeout still answers the timeout:
//!   a simplification). So a claim its client took for failed may land,
//!   and holds its key unless the release by its token, sent after it on
//!   the same connection, clears it.
//! - An instance's local copy (`local_cache_ms`) is taken from a fresh
//!   value a GET returned and answers that instance's reads until it ages
//!   out, whatever Redis holds meanwhile.
//! - A caller's deadline ends its wait, never work it started: a recompute
//!   runs to its end (write, settle, release) after its caller has been
//!   answered, as a detached task would. The thread stays with that work
//!   until it ends, so in a steady run it takes its next request later.
//! - The origin call's timeout ends the work's wait for the origin, not the
//!   call: the origin keeps working on it until it finishes (forever if it
//!   hangs), and the call keeps its admission permit until then, so the
//!   limit really bounds what the origin sees.
//! - Burst: the hot key (key 0) is absent at t=0, or present but already
//!   expired when `stale_ms > 0` (so there is something stale to serve).
//!   Steady: every key is written at t=0, so without jitter they expire
//!   together. Cold: the cache is empty and keys are drawn from `keys`.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use serde::Serialize;

use crate::claim::{ClaimTable, Micros, ReleaseReply, SetReply};
use crate::flight::{Abandoned, Failure, FlightPolicy, FlightTable, Join, Value, WaiterTicket};
use crate::ledger::{Cause, End, FaultActs};
use crate::metrics::{ms, Ending, Histogram, Report};
use crate::read_path::{
    Activity, CacheReply, ClaimReply, FlightKey, FlightReply, Input, ReadPath, Step, Strategy,
};
use crate::rng::{Digest, FxHashMap, Rng};
use crate::scenario::{Arrivals, Fault, FaultKind, Notice, RedisOutage, Scenario, Workload};
pub use crate::trace::{Event, EventKind};

#[derive(Clone, Copy, Debug)]
enum EvKind {
    Arrive,
    /// The next attempt of the thread's request (after a failure or a
    /// timeout, once its backoff has passed).
    Retry,
    /// The next open-loop arrival (the event's `thread` is unused).
    OpenArrive,
    /// The instance's accept queue drops what waited past its deadline
    /// (the event's `thread` is the instance).
    QueueExpire,
    Deliver(Input),
    /// Redis resumes from a hang: it runs the commands it held.
    Resume,
    OriginDone {
        key: u32,
        result: Result<Value, Failure>,
        /// The call holds an admission permit of the thread's instance.
        permit: bool,
        /// The request still waits for this result (false when the origin
        /// timeout already answered it).
        notify: bool,
    },
}

#[derive(Clone, Copy, Debug)]
struct Ev {
    t: Micros,
    seq: u64,
    thread: u32,
    wseq: u32,
    kind: EvKind,
}

impl PartialEq for Ev {
    fn eq(&self, o: &Self) -> bool {
        (self.t, self.seq) == (o.t, o.seq)
    }
}
impl Eq for Ev {}
impl PartialOrd for Ev {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Ev {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.t, self.seq).cmp(&(o.t, o.seq))
    }
}

/// The claim at Redis at one moment ([`Fleet::claim_clock`]): when it was
/// set and runs out, and its holder: recomputing since when, or dead with
/// it (its token outlives it until the TTL runs out).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClaimClock {
    /// The holder's global thread index (None: it finished without
    /// releasing, so nobody holds the token).
    pub holder: Option<u32>,
    /// The holder died holding the claim.
    pub dead: bool,
    pub set_at: Micros,
    pub expires_at: Micros,
    /// The claim's TTL (PX).
    pub ttl: Micros,
    /// When the live holder started its work, if it has.
    pub working_since: Option<Micros>,
    /// The moment read.
    pub now: Micros,
}

impl ClaimClock {
    /// The TTL left (µs).
    pub fn left(&self) -> Micros {
        self.expires_at.saturating_sub(self.now)
    }

    /// How long the holder has been working (µs), if it is.
    pub fn working(&self) -> Option<Micros> {
        self.working_since.map(|w| self.now.saturating_sub(w))
    }
}

/// Which counters of a run's report can no longer change. A number is
/// final then, not at the run's virtual end: the page reveals a
/// prediction's answer and a step's verdict at this moment. Callers'
/// outcomes are final once every caller is answered; the origin calls
/// once, besides, every piece of work still running has made its call
/// (the card with no defence: 8,000 at 0.4 s of a 68.6 s run); the rest
/// once the fleet has settled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Finality {
    /// Every caller is answered: their outcomes and latencies are final.
    pub callers: bool,
    /// No origin call can start again.
    pub calls: bool,
    /// Nothing is left to change any counter (but the clock).
    pub all: bool,
}

impl Finality {
    /// Counter `m` can no longer change.
    pub fn of(self, m: crate::metrics::Metric) -> bool {
        use crate::metrics::Metric::*;
        match m {
            ElapsedMs | Events => false,
            Recomputes
            | EarlyRefreshes
            | RetryRecomputes
            | OverlappingRecomputes
            | OriginPeakConcurrency => self.calls,
            Requests | Hits | StaleServed | Computed | Shared | Degraded | Errors | Timeouts
            | Pinned | Misses | Retries | Rejected | RememberedFailures | Corrupted | P50Ms
            | P99Ms | MaxMs => self.callers || self.all,
            _ => self.all,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    Heap,
    Replies,
    Arrivals,
    Deadlines,
    Faults,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Park {
    None,
    Reply,
    Follow(FlightKey, WaiterTicket),
    Queued,
    Origin,
    Sleep,
}

#[derive(Clone)]
struct Slot {
    path: ReadPath,
    active: bool,
    /// Bumped whenever the thread stops waiting; stale events carry old values.
    wseq: u32,
    /// Which request of this thread (deadline entries carry it).
    req: u32,
    park: Park,
    started: Micros,
    wait_from: Micros,
    waited: Micros,
    permit: bool,
    ending: Option<Ending>,
    /// The answer was a shared value another caller had changed.
    corrupted: bool,
    /// The token of this request's winning `SET NX`, if one won: a release
    /// with any other token (sent at a deadline, before the reply came) is
    /// a harmless no-op, not a holder that lost its claim.
    won: Option<crate::claim::Token>,
    /// Which attempt of its request this is (0: the first).
    attempt: u32,
    /// The attempt failed and a retry is owed once the thread is free.
    retry: bool,
    /// This attempt has called the origin (its recompute is counted).
    called: bool,
    /// The cause an answer from its flight carries: the leader's work's,
    /// or a remembered failure's (the ledger's cause for a follower).
    inherited: Option<Cause>,
    /// Its origin call failed because an origin fault window was open.
    origin_fault: bool,
    /// What it was waiting on when its deadline passed.
    waited_on: Option<Cause>,
    /// Time this attempt spent (or has committed to spend) on Redis
    /// commands that failed or hung, and when the last of them ends.
    redis_lost: Micros,
    redis_lost_until: Micros,
}

#[derive(Clone, Copy, Debug)]
struct CacheEntry {
    value: Option<Value>,
    /// A negative-cache marker answers "failed" until then.
    negative_until: Micros,
    fresh_until: Micros,
    stale_until: Micros,
    /// How long the recompute that produced the value took (XFetch's delta).
    delta: Micros,
    /// The fencing number of the write that stored the value (0: none).
    fence: u64,
}

#[derive(Clone, Default)]
struct Admission {
    free: u32,
    queue: VecDeque<(u32, u32)>,
}

/// `Clone` is a snapshot: a copy goes on exactly as the original would
/// (the page keeps some, to seek back without replaying from t = 0).
#[derive(Clone)]
pub struct Fleet {
    scenario: Scenario,
    notices: Vec<Notice>,
    strategy: Strategy,
    seed: u64,
    rng: Rng,
    now: Micros,
    horizon: Micros,
    heap: BinaryHeap<Reverse<Ev>>,
    /// Redis replies all arrive one fixed round trip after they are sent, so
    /// they are already in time order: a queue, not a heap. Ties with the
    /// heap are broken by `seq`, exactly as if both were one heap.
    replies: VecDeque<Ev>,
    seq: u64,
    arrivals: Vec<(Micros, u32)>,
    next_arrival: usize,
    deadlines: VecDeque<(Micros, u32, u32)>,
    /// Per-request state lives in slots; a slot serves one thread. In a
    /// burst, slots are numbered in arrival order so that the run sweeps
    /// memory front to back instead of jumping around it.
    slots: Vec<Slot>,
    thread_of: Vec<u32>,
    states: Vec<u8>,
    flights: Vec<FlightTable<FlightKey, u32>>,
    admission: Vec<Admission>,
    claims: ClaimTable<u32>,
    cache: FxHashMap<u32, CacheEntry>,
    /// Each instance's own copies of values read from Redis, and until when.
    local: Vec<FxHashMap<u32, (Value, Micros)>>,
    /// Each instance's breaker: open from, until (empty when `from >= until`).
    breakers: Vec<(Micros, Micros)>,
    /// When Redis finishes the last command it has queued.
    redis_busy_until: Micros,
    redis_latency: Histogram,
    /// When each command sent to a hanging Redis times out, in time order.
    hung: Vec<Micros>,
    /// The same for each fault window (by index) that hung Redis: its acts
    /// count a command as failed when the client gives up on it, not when
    /// it was sent (`report`).
    hung_by_window: Vec<Vec<Micros>>,
    /// The commands a hanging Redis holds, in the order sent: it runs them
    /// when it resumes.
    held: VecDeque<(usize, perform::Held)>,
    /// Claims that landed when Redis resumed, their clients having given
    /// up on them, while they still hold their key (key, token).
    late: Vec<(u32, crate::claim::Token)>,
    /// Key popularity as a cumulative distribution (empty: the workload's own).
    zipf: Vec<f64>,
    /// Faults that act at their start (a holder dies), in time order: at
    /// one instant they come after every other event, so a fault injected
    /// into a running fleet lands where a linked one would.
    /// (at, kind, index in the scenario's list).
    fault_events: VecDeque<(Micros, FaultKind, usize)>,
    /// A holder fault (its index) found nobody holding a claim: the next
    /// winner dies.
    crash_armed: Option<usize>,
    /// Tokens of claims whose holder died holding them, with the holder
    /// (its global thread index).
    dead_tokens: Vec<(crate::claim::Token, u32)>,
    /// Open-loop traffic: each instance's idle threads (slots), and the
    /// requests waiting for one (arrived at, key).
    idle: Vec<Vec<u32>>,
    accept: Vec<VecDeque<(Micros, u32)>>,
    versions: FxHashMap<u32, u32>,
    running_per_key: FxHashMap<u32, u32>,
    origin_running: u64,
    next_req_id: u64,
    holder_crashed: bool,
    /// Successful origin answers that came back within the origin timeout:
    /// each must end in a cache write (a tested invariant).
    origin_answers_in_time: u64,
    r: Report,
    latency: Histogram,
    max_wait: Micros,
    digest: Digest,
    last_activity: Micros,
    build: Build,
    /// Requests that arrived and have not been answered (signed, so that a
    /// request answered twice shows up as a mismatch rather than a panic).
    unanswered: i64,
    /// Events handled plus machine steps taken: the unit of `advance_to`'s budget.
    work: u64,
    recording: bool,
    log: Vec<Event>,
    /// Timeline markers in time order (some are known ahead: an expiry).
    markers: Vec<Marker>,
    last_mark: [Option<Micros>; Milestone::COUNT],
}

const US: Micros = 1000;

/// How long past the last arrival a run may go before it is cut off (a run
/// with pinned threads or endless polling would otherwise never end): ten
/// times the longest chain a request can legitimately wait through.
fn tail(sc: &Scenario) -> Micros {
    let chain = sc.deadline_ms as u64 + sc.claim_ttl_ms as u64 + 5 * sc.recompute_ms as u64;
    (10 * chain).clamp(5_000, 120_000) * US
}

impl Fleet {
    /// Builds the fleet at t=0. The scenario is validated first (clamped into
    /// range); what changed is available from [`Fleet::notices`].
    pub fn new(scenario: &Scenario, seed: u64) -> Fleet {
        let mut sc = scenario.clone();
        let notices = sc.validate();
        let strategy = Strategy::from_scenario(&sc);
        let n = sc.instances as usize * sc.threads as usize;
        let policy = FlightPolicy {
            remember_failure: sc.pitfalls.remember_failure,
            mutable_result: sc.pitfalls.mutable_result,
        };
        let mut f = Fleet {
            notices,
            strategy,
            seed,
            rng: Rng::new(seed),
            now: 0,
            horizon: 0,
            heap: BinaryHeap::new(),
            replies: VecDeque::new(),
            seq: 0,
            arrivals: Vec::new(),
            next_arrival: 0,
            deadlines: VecDeque::new(),
            slots: Vec::with_capacity(n),
            thread_of: (0..n as u32).collect(),
            states: vec![Activity::Idle as u8; n],
            flights: (0..sc.instances)
                .map(|_| FlightTable::new(policy))
                .collect(),
            admission: (0..sc.instances)
                .map(|_| Admission {
                    free: sc.admission,
                    queue: VecDeque::new(),
                })
                .collect(),
            claims: ClaimTable::new(),
            cache: FxHashMap::default(),
            local: (0..sc.instances).map(|_| FxHashMap::default()).collect(),
            breakers: vec![(0, 0); sc.instances as usize],
            redis_busy_until: 0,
            redis_latency: Histogram::default(),
            hung: Vec::new(),
            hung_by_window: Vec::new(),
            held: VecDeque::new(),
            late: Vec::new(),
            zipf: zipf_cdf(&sc),
            fault_events: VecDeque::new(),
            crash_armed: None,
            dead_tokens: Vec::new(),
            idle: open_pools(&sc),
            accept: (0..sc.instances).map(|_| VecDeque::new()).collect(),
            versions: FxHashMap::default(),
            running_per_key: FxHashMap::default(),
            origin_running: 0,
            next_req_id: 0,
            holder_crashed: false,
            origin_answers_in_time: 0,
            r: Report::default(),
            latency: Histogram::default(),
            max_wait: 0,
            digest: Digest::default(),
            last_activity: 0,
            build: Build::Done,
            unanswered: 0,
            work: 0,
            recording: false,
            log: Vec::new(),
            markers: Vec::new(),
            last_mark: [None; Milestone::COUNT],
            scenario: sc,
        };
        f.prepare();
        f
    }

    fn push(&mut self, t: Micros, thread: u32, wseq: u32, kind: EvKind) {
        self.seq += 1;
        self.heap.push(Reverse(Ev {
            t,
            seq: self.seq,
            thread,
            wseq,
            kind,
        }));
    }

    fn log(&mut self, slot: u32, kind: EventKind, key: u32, detail: u8) {
        let thread = self.thread_of[slot as usize];
        self.r.events += 1;
        self.last_activity = self.now;
        self.digest.add(self.now);
        self.digest
            .add(((thread as u64) << 32) | ((kind as u64) << 8) | detail as u64);
        self.digest.add(key as u64);
        match kind {
            EventKind::ClaimWon => self.mark(self.now, Milestone::ClaimWon),
            EventKind::RecomputeStart => self.mark(self.now, Milestone::RecomputeStarts),
            EventKind::CacheSet if detail == 0 => self.mark(self.now, Milestone::ValueWritten),
            EventKind::Crash => {
                self.mark(self.now, Milestone::HolderCrashes);
                // A claim set with no PX (the no-expiry pitfall) never does.
                if !self.scenario.pitfalls.no_expiry {
                    let ttl = self.scenario.claim_ttl_ms as Micros * US;
                    self.mark(self.now + ttl, Milestone::DeadClaimExpires);
                }
            }
            EventKind::OriginTimeout => self.mark(self.now, Milestone::OriginTimeout),
            EventKind::Shed => self.mark(self.now, Milestone::Shed),
            _ => {}
        }
        if self.recording {
            self.log.push(Event {
                t: self.now,
                thread,
                kind,
                key,
                detail,
            });
        }
    }

    // ---- public surface ----------------------------------------------------

    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// What validation clamped or ignored when the fleet was built.
    pub fn notices(&self) -> &[Notice] {
        &self.notices
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    pub fn now(&self) -> Micros {
        self.now
    }

    pub fn now_ms(&self) -> f64 {
        ms(self.now)
    }

    /// Work done so far (events handled plus machine steps): the unit of
    /// [`Fleet::advance_to`]'s budget, so also a measure of replay cost.
    pub fn work(&self) -> u64 {
        self.work
    }

    /// About how many bytes a [`Clone`] of the fleet holds (its per-thread
    /// state and queues; the small tables not counted), to cap snapshots.
    pub fn snapshot_bytes(&self) -> usize {
        use std::mem::size_of;
        size_of::<Fleet>()
            + self.slots.capacity() * size_of::<Slot>()
            + self.thread_of.capacity() * size_of::<u32>()
            + self.states.capacity()
            + (self.heap.capacity() + self.replies.capacity()) * size_of::<Ev>()
            + self.arrivals.capacity() * size_of::<(Micros, u32)>()
            + self.deadlines.capacity() * size_of::<(Micros, u32, u32)>()
            + self.idle.iter().map(|v| v.capacity() * 4).sum::<usize>()
            + self.log.capacity() * size_of::<Event>()
            + self.markers.capacity() * size_of::<Marker>()
            + self.cache.len() * size_of::<(u32, CacheEntry)>()
    }

    /// One byte per thread (`Activity as u8`), indexed `instance * threads + thread`.
    pub fn thread_states(&self) -> &[u8] {
        &self.states
    }

    /// Keep events in memory for [`Fleet::drain_events`] (the page turns this on).
    pub fn set_recording(&mut self, on: bool) {
        self.recording = on;
        if !on {
            self.log.clear();
        }
    }

    pub fn drain_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.log)
    }

    /// A digest of every event so far; equal logs give equal hashes.
    pub fn log_hash(&self) -> u64 {
        self.digest.value()
    }

    /// Requests not answered yet, counted by looking at every thread (and
    /// at the open-loop accept queues): the
    /// ground truth for `Report::pinned`, which is kept as a running count.
    /// O(threads); for tests.
    pub fn pinned_by_scan(&self) -> u64 {
        let waiting: usize = self.accept.iter().map(VecDeque::len).sum();
        self.slots
            .iter()
            .filter(|s| s.active && !s.path.has_responded())
            .count() as u64
            + waiting as u64
    }

    /// Threads with a request still in progress (answered or not).
    pub fn busy_threads(&self) -> usize {
        self.slots.iter().filter(|s| s.active).count()
    }

    /// Successful origin answers that came back within the origin timeout.
    pub fn origin_answers_in_time(&self) -> u64 {
        self.origin_answers_in_time
    }

    pub fn origin_running(&self) -> u64 {
        self.origin_running
    }

    pub fn flights_in_flight(&self) -> usize {
        self.flights.iter().map(|f| f.in_flight()).sum()
    }

    pub fn remembered_failures_held(&self) -> usize {
        self.flights.iter().map(|f| f.remembered()).sum()
    }

    /// Live claims at the current time.
    pub fn live_claims(&self) -> usize {
        self.claims.live(self.now)
    }

    /// The thread (its global index) holding a claim token it has not
    /// released, if any: the one the page follows as "the claim holder".
    /// Leaders under singleflight alone, and recomputing threads with no
    /// defence, hold no claim.
    pub fn claim_holder(&self) -> Option<u32> {
        self.slots
            .iter()
            .position(|s| s.active && s.path.holds_claim())
            .map(|i| self.thread_of[i])
    }

    /// The instance whose token is a live claim at Redis now, if one is:
    /// the office the page names as the claim's holder. Unlike
    /// [`Fleet::claim_holder`] it skips a holder whose claim expired (and
    /// may have passed to another).
    pub fn live_claim_office(&self) -> Option<u32> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.active)
            .find(|(_, s)| {
                s.path.token().is_some_and(|t| {
                    self.claims
                        .holder(&s.path.key(), self.now)
                        .is_some_and(|c| c.token == t)
                })
            })
            .map(|(i, _)| self.thread_of[i] / self.scenario.threads.max(1))
    }

    /// The claim at Redis now, as the page draws it: its TTL running down
    /// against its holder's recompute, or its holder dead. Of several live
    /// claims (one per hot key), the lowest key's.
    pub fn claim_clock(&self) -> Option<ClaimClock> {
        let (_, c) = self.claims.live_claims(self.now).min_by_key(|(k, _)| **k)?;
        let ttl = if self.scenario.pitfalls.no_expiry {
            crate::claim::NO_EXPIRY
        } else {
            Micros::from(self.scenario.claim_ttl_ms.max(1)) * US
        };
        let alive = self
            .slots
            .iter()
            .position(|s| s.active && s.path.token() == Some(c.token));
        let (holder, dead, working_since) = match alive {
            Some(i) => (
                Some(self.thread_of[i]),
                false,
                self.slots[i].path.working_since(),
            ),
            None => match self.dead_tokens.iter().find(|(t, _)| *t == c.token) {
                Some((_, g)) => (Some(*g), true, None),
                None => (None, false, None),
            },
        };
        Some(ClaimClock {
            holder,
            dead,
            set_at: c.expires_at.saturating_sub(ttl),
            expires_at: c.expires_at,
            ttl,
            working_since,
            now: self.now,
        })
    }

    /// Virtual time of the next event, if any remain before the horizon.
    pub fn next_event_at(&self) -> Option<Micros> {
        self.next_source()
            .map(|(t, _)| t)
            .filter(|t| *t <= self.horizon)
    }

    /// The earliest pending event and which queue holds it. Order: time,
    /// then scheduled events (heap and replies, by insertion), then
    /// arrivals, then deadlines.
    fn next_source(&self) -> Option<(Micros, Source)> {
        let mut best: Option<(Micros, u8, u64, Source)> = None;
        let mut offer = |c: (Micros, u8, u64, Source)| {
            if best.is_none_or(|b| (c.0, c.1, c.2) < (b.0, b.1, b.2)) {
                best = Some(c);
            }
        };
        if let Some(Reverse(e)) = self.heap.peek() {
            offer((e.t, 0, e.seq, Source::Heap));
        }
        if let Some(e) = self.replies.front() {
            offer((e.t, 0, e.seq, Source::Replies));
        }
        if let Some(a) = self.arrivals.get(self.next_arrival) {
            offer((a.0, 1, 0, Source::Arrivals));
        }
        if let Some(d) = self.deadlines.front() {
            offer((d.0, 2, 0, Source::Deadlines));
        }
        if let Some(f) = self.fault_events.front() {
            offer((f.0, 3, 0, Source::Faults));
        }
        best.map(|b| (b.0, b.3))
    }

    /// True when the run stopped at its horizon with events still pending
    /// (threads pinned or polling forever), rather than going quiet.
    pub fn cut_off(&self) -> bool {
        self.next_source().is_some_and(|(t, _)| t > self.horizon)
    }

    /// Every request the run will make has been made and answered: no
    /// arrival to come (steady traffic never gets here before its end), no
    /// caller waiting or queued, no retry owed, no fault still to come.
    /// Work committed to may still run behind the callers.
    fn answered_all(&self) -> bool {
        self.arrived_all() && self.unanswered <= 0
    }

    /// Every request the run will make has arrived and left the accept
    /// queue, and no fault is still to come.
    fn arrived_all(&self) -> bool {
        self.ready()
            && self.scenario.workload != Workload::Steady
            && self.next_arrival >= self.arrivals.len()
            && self.fault_events.is_empty()
            && self.accept.iter().all(VecDeque::is_empty)
    }

    /// Every request answered and no work left behind them (no thread busy,
    /// no hung command still to time out): the report's counters will not
    /// change again (but `elapsed_ms` and `events`), though the run may go
    /// on (a claim's TTL to run out, a value to expire).
    pub fn settled(&self) -> bool {
        self.answered_all()
            && self.hung.last().is_none_or(|t| *t <= self.now)
            && self.held.is_empty()
            && self.slots.iter().all(|s| !s.active)
    }

    /// Which of the report's counters can no longer change (see
    /// [`Finality`]). One pass over the threads.
    pub fn finality(&self) -> Finality {
        let all = self.settled();
        // Every busy thread has made its origin call, and none can make
        // another: no request to come, and none that may retry.
        let calls = all
            || (self.arrived_all()
                && (self.scenario.retries == 0 || self.unanswered <= 0)
                && self.slots.iter().all(|s| !s.active || s.called));
        Finality {
            callers: all || self.answered_all(),
            calls,
            all,
        }
    }

    /// Counter `m` of the report can no longer change.
    pub fn is_final(&self, m: crate::metrics::Metric) -> bool {
        self.finality().of(m)
    }

    /// No events left (or the horizon was reached): nothing more will change.
    pub fn is_quiet(&self) -> bool {
        self.ready() && self.next_event_at().is_none()
    }

    /// Processes events up to virtual time `t`, at most `budget` of them.
    /// Returns true when it reached `t` (the clock then reads `t`), false
    /// when the budget ran out first (call again next frame).
    ///
    /// The budget counts work, not events: one event can wake a thousand
    /// followers, and each of those steps counts, so a slice stays short.
    pub fn advance_to(&mut self, t: Micros, budget: usize) -> bool {
        let start = self.work;
        if !self.ready() {
            // Building is work too: a thread's share costs about a step.
            self.work += self.build_some(budget.max(1) as u64);
            if !self.ready() {
                return false;
            }
        }
        while let Some(next) = self.next_event_at() {
            if next > t {
                break;
            }
            if self.work - start >= budget as u64 {
                return false;
            }
            self.step_one();
        }
        self.now = self.now.max(t.min(self.horizon));
        true
    }

    /// Runs to the end and returns the report.
    pub fn run(&mut self) -> Report {
        self.build_some(u64::MAX);
        while self.next_event_at().is_some() {
            self.step_one();
        }
        self.report()
    }

    /// Cheap enough to call every frame: no per-thread scan.
    pub fn report(&self) -> Report {
        let mut r = self.r.clone();
        r.pinned = self.unanswered.max(0) as u64;
        r.p50_ms = ms(self.latency.quantile(0.5));
        r.p99_ms = ms(self.latency.quantile(0.99));
        r.redis_p99_ms = ms(self.redis_latency.quantile(0.99));
        r.redis_errors += self.hung.partition_point(|t| *t <= self.now) as u64;
        for (i, hung) in self.hung_by_window.iter().enumerate() {
            let failed = hung.partition_point(|t| *t <= self.now) as u64;
            if let Some(a) = r.fault_acts.get_mut(i) {
                a.redis_failed += failed;
                r.fault_bites += failed;
            }
        }
        r.max_ms = ms(self.latency.max());
        r.max_wait_ms = ms(self.max_wait);
        r.elapsed_ms = ms(self.last_activity);
        r.ledger.add(End::Unanswered, Cause::Pending, r.pinned);
        r
    }

    // ---- the event loop ----------------------------------------------------

    fn step_one(&mut self) {
        let Some((t, which)) = self.next_source() else {
            return;
        };
        self.work += 1;
        self.now = self.now.max(t);
        match which {
            Source::Heap => {
                let Some(Reverse(ev)) = self.heap.pop() else {
                    return;
                };
                self.handle(ev);
            }
            Source::Replies => {
                let Some(ev) = self.replies.pop_front() else {
                    return;
                };
                self.handle(ev);
            }
            Source::Arrivals => {
                let (_, thread) = self.arrivals[self.next_arrival];
                self.next_arrival += 1;
                self.arrive(thread);
            }
            Source::Deadlines => {
                let Some((_, thread, req)) = self.deadlines.pop_front() else {
                    return;
                };
                self.deadline(thread, req);
            }
            Source::Faults => {
                let Some((_, kind, i)) = self.fault_events.pop_front() else {
                    return;
                };
                if kind == FaultKind::TtlSync {
                    self.sync_ttls(i);
                } else if kind == FaultKind::Holder {
                    // Whoever holds a claim now dies holding it; with
                    // nobody holding one, the next winner does.
                    match self
                        .slots
                        .iter()
                        .position(|s| s.active && s.path.holds_claim())
                    {
                        Some(slot) => {
                            self.bite(i, |a| a.holders_killed += 1);
                            self.crash(slot as u32)
                        }
                        None => self.crash_armed = Some(i),
                    }
                }
            }
        }
    }

    fn handle(&mut self, ev: Ev) {
        match ev.kind {
            EvKind::Arrive => self.arrive(ev.thread),
            EvKind::Retry => {
                let (key, attempt) = {
                    let s = &self.slots[ev.thread as usize];
                    (s.path.key(), s.attempt + 1)
                };
                self.begin(ev.thread, key, attempt, None);
            }
            EvKind::OpenArrive => self.open_arrive(),
            EvKind::Resume => self.resume_redis(),
            EvKind::QueueExpire => self.expire_queue(ev.thread as usize),
            EvKind::Deliver(input) => {
                let s = &self.slots[ev.thread as usize];
                if s.active && s.wseq == ev.wseq {
                    let key = s.path.key();
                    match input {
                        Input::Shed => {
                            self.r.admission_shed += 1;
                            self.log(ev.thread, EventKind::Shed, key, 0);
                        }
                        Input::Origin(Err(Failure::Timeout)) => {
                            self.r.origin_timeouts += 1;
                            self.log(ev.thread, EventKind::OriginTimeout, key, 0);
                        }
                        // A poller that slept out the rest of its budget
                        // times out as it wakes: what it waited on is
                        // named now, while it is still parked on it.
                        Input::Woke if s.path.expires_on_wake() => {
                            let waited_on = self.waited_on(ev.thread);
                            self.slots[ev.thread as usize].waited_on = Some(waited_on);
                        }
                        _ => {}
                    }
                    self.unpark(ev.thread);
                    self.drive(ev.thread, input);
                }
            }
            EvKind::OriginDone {
                key,
                result,
                permit,
                notify,
            } => {
                self.origin_running -= 1;
                if permit {
                    let inst = self.instance_of(ev.thread);
                    self.release_permit(inst);
                }
                if let Some(c) = self.running_per_key.get_mut(&key) {
                    *c -= 1;
                }
                let ok = result.is_ok();
                if ok && notify {
                    self.origin_answers_in_time += 1;
                }
                self.log(ev.thread, EventKind::RecomputeEnd, key, (!ok) as u8);
                let s = &self.slots[ev.thread as usize];
                if notify && s.active && s.wseq == ev.wseq {
                    self.unpark(ev.thread);
                    self.drive(ev.thread, Input::Origin(result));
                }
            }
        }
    }

    fn arrive(&mut self, thread: u32) {
        let key = self.draw_key();
        self.begin(thread, key, 0, None);
    }

    /// The key a new request asks for.
    fn draw_key(&mut self) -> u32 {
        draw_key(&self.scenario, &self.zipf, &mut self.rng)
    }

    /// The gap to the next open-loop arrival: exponential at the rate.
    pub(super) fn open_gap(&mut self) -> Micros {
        let mean = 1e6 / f64::from(self.scenario.rate_per_s.max(1));
        let u = self.rng.unit();
        ((-(1.0 - u).ln() * mean) as Micros).max(1)
    }

    /// An open-loop request arrives at a random instance: a thread takes
    /// it, or it waits for one in the accept queue, or, the queue full, it
    /// is turned away.
    fn open_arrive(&mut self) {
        let end = self.scenario.duration_ms as Micros * US;
        let next = self.now + self.open_gap();
        if next < end {
            self.push(next, 0, 0, EvKind::OpenArrive);
        }
        let inst = self.rng.below(u64::from(self.scenario.instances)) as usize;
        let key = self.draw_key();
        if let Some(slot) = self.idle[inst].pop() {
            self.begin(slot, key, 0, None);
            return;
        }
        self.r.requests += 1;
        if self.accept[inst].len() >= self.scenario.threads as usize {
            self.r.rejected += 1;
            self.r.ledger.record(End::TurnedAway, Cause::PoolFull);
            let slot = inst as u32 * self.scenario.threads;
            self.log(slot, EventKind::Respond, key, 255);
            return;
        }
        self.unanswered += 1;
        self.accept[inst].push_back((self.now, key));
        if let Some(d) = self.strategy.deadline {
            self.push(self.now + d, inst as u32, 0, EvKind::QueueExpire);
        }
    }

    /// Requests that waited in the accept queue past their deadline time out
    /// there, never having reached a thread.
    fn expire_queue(&mut self, inst: usize) {
        let Some(d) = self.strategy.deadline else {
            return;
        };
        while let Some(&(since, key)) = self.accept[inst].front() {
            if since + d > self.now {
                break;
            }
            self.accept[inst].pop_front();
            self.unanswered -= 1;
            self.r.timeouts += 1;
            self.r.ledger.record(End::Timeout, Cause::WaitedAccept);
            self.latency.record(self.now - since);
            let slot = inst as u32 * self.scenario.threads;
            self.log(
                slot,
                EventKind::Respond,
                key,
                crate::metrics::Ending::Timeout as u8,
            );
        }
    }

    /// A thread of an open-loop pool is free: it takes the oldest waiting
    /// request, or goes idle.
    pub(super) fn free_thread(&mut self, slot: u32) {
        let inst = self.instance_of(slot);
        self.expire_queue(inst);
        match self.accept[inst].pop_front() {
            Some((since, key)) => self.begin(slot, key, 0, Some(since)),
            None => self.idle[inst].push(slot),
        }
    }

    /// Starts attempt `attempt` of a request for `key` on `thread`: the first
    /// counts as a new request; a retry keeps its request's start (its
    /// latency is the caller's whole wait) and gets a deadline of its own,
    /// as a client's per-attempt timeout does.
    ///
    /// `queued`: the request arrived then and waited in the accept queue
    /// (already counted; its deadline runs from its arrival).
    fn begin(&mut self, thread: u32, key: u32, attempt: u32, queued: Option<Micros>) {
        let id = self.next_req_id;
        self.next_req_id += 1;
        let now = self.now;
        let slot = &mut self.slots[thread as usize];
        slot.path = ReadPath::new(&self.strategy, key, id, now);
        slot.active = true;
        slot.attempt = attempt;
        slot.retry = false;
        slot.called = false;
        slot.req = slot.req.wrapping_add(1);
        slot.wseq = slot.wseq.wrapping_add(1);
        slot.park = Park::None;
        if attempt == 0 {
            slot.started = queued.unwrap_or(now);
            slot.waited = queued.map_or(0, |since| now - since);
        }
        slot.permit = false;
        slot.ending = None;
        slot.corrupted = false;
        slot.won = None;
        slot.inherited = None;
        slot.origin_fault = false;
        slot.waited_on = None;
        slot.redis_lost = 0;
        slot.redis_lost_until = 0;
        let req = slot.req;
        if let Some(d) = self.strategy.deadline {
            match queued {
                None => self.deadlines.push_back((now + d, thread, req)),
                Some(since) => {
                    let at = since + d;
                    let i = self.deadlines.partition_point(|e| e.0 <= at);
                    self.deadlines.insert(i, (at, thread, req));
                }
            }
        }
        if queued.is_some() {
            self.log(thread, EventKind::Arrive, key, 2);
        } else if attempt == 0 {
            self.r.requests += 1;
            self.unanswered += 1;
            self.log(thread, EventKind::Arrive, key, 0);
        } else {
            self.log(thread, EventKind::Arrive, key, 1);
        }
        self.drive(thread, Input::Start);
    }

    fn deadline(&mut self, thread: u32, req: u32) {
        let s = &self.slots[thread as usize];
        if !s.active || s.req != req || s.path.deadline().is_none() {
            return;
        }
        let key = s.path.key();
        // Work the request committed to keeps its pending reply; anything
        // else it was waiting on is cancelled.
        let waited_on = self.waited_on(thread);
        self.slots[thread as usize].waited_on = Some(waited_on);
        if !self.slots[thread as usize].path.work_outlives_caller() {
            self.unpark(thread);
        }
        self.log(thread, EventKind::DeadlinePassed, key, 0);
        self.drive(thread, Input::DeadlinePassed);
    }

    /// What the thread is waiting on now, as the ledger names it: the
    /// cause of its timeout if its deadline passes now. A follower waits
    /// on whatever its flight's leader waits on.
    fn waited_on(&self, thread: u32) -> Cause {
        let s = &self.slots[thread as usize];
        // A Redis that failed or hung took half its deadline or more: that
        // is what the caller's time went on, whatever it waits on now.
        let lost = s.redis_lost - s.redis_lost_until.saturating_sub(self.now);
        if let Some(d) = self.strategy.deadline {
            if 2 * lost >= d {
                return Cause::WaitedRedis;
            }
        }
        // A command to a Redis that failed, hung or queued it.
        let slow_redis = s.redis_lost_until > self.now || self.scenario.redis_ops_per_ms > 0;
        match s.park {
            Park::Origin => Cause::WaitedOrigin,
            // A write after its own origin call, with Redis taking less
            // than half its deadline (above): the time went to the origin.
            Park::Reply if !s.path.is_polling() && s.called => Cause::WaitedOrigin,
            Park::Reply if slow_redis => Cause::WaitedRedis,
            Park::Queued => Cause::WaitedAdmission,
            Park::Sleep | Park::Reply if s.path.saw_redis_fail() => Cause::WaitedRedis,
            // A poll's round trip to a healthy Redis is part of the wait
            // for the claim's holder, as the sleep between polls is.
            Park::Reply if !s.path.is_polling() => Cause::WaitedRedis,
            Park::Sleep | Park::Reply => match self.claims.holder(&s.path.key(), self.now) {
                Some(c) if self.dead_tokens.iter().any(|(t, _)| *t == c.token) => {
                    Cause::WaitedDeadHolder
                }
                _ => Cause::WaitedClaim,
            },
            Park::Follow(fk, _) => {
                let inst = self.instance_of(thread);
                match self.flights[inst].leader(&fk) {
                    Some(l)
                        if l != thread
                            && !matches!(self.slots[l as usize].park, Park::Follow(..)) =>
                    {
                        self.waited_on(l)
                    }
                    _ => Cause::WaitedFlight,
                }
            }
            Park::None => Cause::WaitedFlight,
        }
    }

    /// A fault window (its index in the scenario's list) acted.
    pub(super) fn bite(&mut self, i: usize, act: impl FnOnce(&mut FaultActs)) {
        if let Some(a) = self.r.fault_acts.get_mut(i) {
            act(a);
        }
        self.r.fault_bites += 1;
    }

    /// The index of the first window of this kind in force now.
    pub(super) fn fault_index(&self, kind: FaultKind) -> Option<usize> {
        let now = ms(self.now);
        self.scenario
            .faults
            .iter()
            .position(|f| f.kind == kind && f.active_at(now))
    }

    /// The thread stops waiting: cancel whatever it was parked on.
    fn unpark(&mut self, thread: u32) {
        let now = self.now;
        let inst = self.instance_of(thread);
        let s = &mut self.slots[thread as usize];
        s.wseq = s.wseq.wrapping_add(1);
        let park = std::mem::replace(&mut s.park, Park::None);
        match park {
            Park::Follow(k, t) => {
                s.waited += now - s.wait_from;
                self.flights[inst].detach(&k, t);
            }
            Park::Queued | Park::Sleep => {
                s.waited += now - s.wait_from;
                // A queued entry is skipped lazily when its wseq no longer matches.
            }
            // The origin call keeps its permit until it really ends.
            Park::Origin | Park::Reply | Park::None => {}
        }
    }

    fn park(&mut self, thread: u32, park: Park) {
        let now = self.now;
        let s = &mut self.slots[thread as usize];
        s.park = park;
        s.wait_from = now;
    }

    fn instance_of(&self, slot: u32) -> usize {
        (self.thread_of[slot as usize] / self.scenario.threads) as usize
    }

    fn set_state(&mut self, slot: u32, a: Activity) {
        let t = self.thread_of[slot as usize] as usize;
        self.states[t] = a as u8;
    }

    fn rtt(&self) -> Micros {
        self.scenario.rtt_ms as Micros * US
    }

    /// Redis is unreachable now.
    pub(super) fn redis_down_now(&self) -> bool {
        self.scenario.redis_down || self.fault_now(FaultKind::Redis)
    }

    /// A fault of this kind from the scenario's list is in force now.
    pub(super) fn fault_now(&self, kind: FaultKind) -> bool {
        let now = ms(self.now);
        self.scenario
            .faults
            .iter()
            .any(|f| f.kind == kind && f.active_at(now))
    }

    /// A deploy's warm-up (a `ttl-sync` fault): every key holding a value
    /// is written again now with the scenario's TTL and no jitter (the same
    /// value: no origin call, no random draw), so every one of them expires
    /// at the same instant, `value_ttl_ms` from now.
    fn sync_ttls(&mut self, i: usize) {
        let now = self.now;
        let ttl = self.scenario.value_ttl_ms as Micros * US;
        let stale = self.scenario.stale_ms as Micros * US;
        for e in self.cache.values_mut().filter(|e| e.value.is_some()) {
            self.r.fault_bites += 1;
            if let Some(a) = self.r.fault_acts.get_mut(i) {
                a.keys_rewarmed += 1;
            }
            // A write, as the read path's: it clears a negative mark.
            e.negative_until = 0;
            e.fresh_until = now + ttl;
            e.stale_until = now + ttl + stale;
        }
        if self.scenario.workload == Workload::Steady && self.cache.contains_key(&0) {
            self.mark_expiry(now + ttl);
        }
    }

    /// Its markers, and for a fault that acts at its start, its event.
    fn schedule_fault(&mut self, f: Fault, i: usize) {
        if self.r.fault_acts.len() <= i {
            self.r.fault_acts.resize(i + 1, FaultActs::default());
        }
        let start = f.start_ms as Micros * US;
        self.mark(start, Milestone::FaultStarts);
        if let Some(d) = f.duration_ms {
            self.mark(start + d as Micros * US, Milestone::FaultEnds);
        }
        if f.kind.is_moment() {
            let at = self.fault_events.partition_point(|e| e.0 <= start);
            self.fault_events.insert(at, (start, f.kind, i));
        }
    }

    /// Adds a fault to the running fleet, starting after the current time
    /// (a curveball): the run from here is, event for event, the one a
    /// fleet built with the fault in its scenario makes.
    pub fn inject(&mut self, fault: Fault) -> Result<(), String> {
        if (fault.start_ms as Micros) * US <= self.now {
            return Err(format!(
                "a fault must start after the current time ({} ms)",
                crate::metrics::one_decimal(ms(self.now))
            ));
        }
        let mut sc = self.scenario.clone();
        sc.faults.push(fault);
        let notices = sc.validate();
        if !notices.is_empty() {
            return Err(notices
                .iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join("; "));
        }
        self.scenario = sc;
        self.schedule_fault(fault, self.scenario.faults.len() - 1);
        Ok(())
    }

    /// [`Fleet::inject`] for a Redis fault whose outage is of this kind
    /// (errors or hangs). The kind only matters while Redis is down, so it
    /// may change only while Redis has not been down yet: then the run from
    /// here is the one a fleet built with both in its scenario makes.
    pub fn inject_redis_outage(&mut self, fault: Fault, outage: RedisOutage) -> Result<(), String> {
        if fault.kind != FaultKind::Redis {
            return Err(format!("{} is not a Redis fault", fault.kind.name()));
        }
        let was_down = self.scenario.redis_down
            || self
                .scenario
                .faults
                .iter()
                .any(|f| f.kind == FaultKind::Redis && (f.start_ms as Micros) * US <= self.now);
        if was_down && outage != self.scenario.redis_outage {
            return Err(
                "Redis has been down already in this run; its outage cannot change kind"
                    .to_string(),
            );
        }
        let before = self.scenario.redis_outage;
        self.scenario.redis_outage = outage;
        let done = self.inject(fault);
        if done.is_err() {
            self.scenario.redis_outage = before;
        }
        done
    }
}

/// Open-loop steady traffic: every thread starts idle in its instance's
/// pool (lowest slot first); none otherwise.
fn open_pools(sc: &Scenario) -> Vec<Vec<u32>> {
    if sc.workload != Workload::Steady || sc.arrivals != Arrivals::Open {
        return Vec::new();
    }
    (0..sc.instances)
        .map(|i| {
            let first = i * sc.threads;
            (first..first + sc.threads).rev().collect()
        })
        .collect()
}

/// The key a new request asks for, with `zipf` the scenario's
/// [`zipf_cdf`]: 0 in a burst; uniform, or by the Zipf law, in a cold
/// start; skewed towards low keys (key 0 the hottest) in steady traffic.
/// The real fleet draws its keys with this too.
pub fn draw_key(sc: &Scenario, zipf: &[f64], rng: &mut Rng) -> u32 {
    match sc.workload {
        Workload::Burst => 0,
        Workload::Cold | Workload::Steady if !zipf.is_empty() => {
            let u = rng.unit();
            (zipf.partition_point(|c| *c <= u) as u32).min(sc.keys - 1)
        }
        Workload::Cold => rng.below(sc.keys as u64) as u32,
        Workload::Steady => {
            // Skewed towards low keys: key 0 is the hottest.
            let u = rng.unit();
            ((u * u * u * sc.keys as f64) as u32).min(sc.keys - 1)
        }
    }
}

/// Zipf popularity over the keys (key 0 the hottest) as a cumulative
/// distribution, when the scenario asks for a skew its workload draws keys
/// from; empty otherwise.
pub fn zipf_cdf(sc: &Scenario) -> Vec<f64> {
    if sc.key_skew <= 0.0 || sc.workload == Workload::Burst {
        return Vec::new();
    }
    let mut acc = 0.0;
    let mut cdf: Vec<f64> = (1..=sc.keys)
        .map(|k| {
            acc += (-sc.key_skew * f64::from(k).ln()).exp();
            acc
        })
        .collect();
    for c in &mut cdf {
        *c /= acc;
    }
    cdf
}

mod build;
mod markers;
mod perform;
mod sample;
mod world;

use build::Build;
pub use markers::{Marker, Milestone};
pub use sample::Sample;

#[cfg(test)]
mod tests;
