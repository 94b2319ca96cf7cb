//! A deterministic discrete-event simulation of a fleet running the read
//! path: instances with pools of request threads, one flight table and one
//! admission limit per instance, a shared cache and claim table behind a
//! round-trip time, and an origin with a latency distribution, a capacity,
//! failures, hangs and outages. Same scenario and seed give the same event
//! log bit for bit, on the host and in wasm: time is integer microseconds,
//! randomness is one seeded stream, and ties are broken by insertion order.
//!
//! Modelling choices worth knowing:
//! - Redis applies a command when it is sent; the reply arrives one round
//!   trip later. With Redis down every command errors after a round trip.
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
use crate::metrics::{ms, Ending, Histogram, Report};
use crate::read_path::{
    Activity, CacheReply, ClaimReply, FlightKey, FlightReply, Input, ReadPath, Step, Strategy,
};
use crate::rng::{Digest, FxHashMap, Rng};
use crate::scenario::{Notice, Scenario, Workload};

/// What happened, for the page's pulses and counts and for the log hash.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    Arrive = 0,
    CacheGet = 1,
    Lead = 2,
    Follow = 3,
    Claim = 4,
    ClaimWon = 5,
    ClaimLost = 6,
    RecomputeStart = 7,
    RecomputeEnd = 8,
    CacheSet = 9,
    Release = 10,
    Settle = 11,
    Respond = 12,
    Crash = 13,
    DeadlinePassed = 14,
    Remembered = 15,
    ClaimError = 16,
    Poll = 17,
    /// The origin call ran past its timeout; the work counts it as failed.
    OriginTimeout = 18,
    /// No admission permit came within the queue budget.
    Shed = 19,
    /// A leader left before its work started; a follower took the flight.
    Handover = 20,
}

/// A moment worth a marker on the timeline: what a presenter would point at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Milestone {
    KeyExpires,
    ClaimWon,
    RecomputeStarts,
    ValueWritten,
    HolderCrashes,
    DeadClaimExpires,
    OriginTimeout,
    Shed,
    OutageEnds,
}

impl Milestone {
    pub const COUNT: usize = 9;

    pub fn label(self) -> &'static str {
        match self {
            Milestone::KeyExpires => "key expires",
            Milestone::ClaimWon => "claim won",
            Milestone::RecomputeStarts => "recompute starts",
            Milestone::ValueWritten => "value written",
            Milestone::HolderCrashes => "holder crashes",
            Milestone::DeadClaimExpires => "dead claim expires",
            Milestone::OriginTimeout => "origin timeout",
            Milestone::Shed => "admission sheds",
            Milestone::OutageEnds => "outage ends",
        }
    }
}

/// A milestone at a virtual time (µs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Marker {
    pub t: Micros,
    pub what: Milestone,
}

/// Markers of one kind closer together than this are one marker (a wave of
/// 40 claims is one "claim won"); a run keeps at most `MAX_MARKERS`.
const MARK_GAP: Micros = 500_000;
const MAX_MARKERS: usize = 256;

/// One log line: at `t` (µs), `thread` (global index) did `kind` on `key`.
/// `detail` carries the ending for `Respond` and 1 for a failed recompute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Event {
    pub t: Micros,
    pub thread: u32,
    pub kind: EventKind,
    pub key: u32,
    pub detail: u8,
}

#[derive(Clone, Copy, Debug)]
enum EvKind {
    Arrive,
    Deliver(Input),
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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    Heap,
    Replies,
    Arrivals,
    Deadlines,
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

#[derive(Default)]
struct Admission {
    free: u32,
    queue: VecDeque<(u32, u32)>,
}

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

    /// Slots are filled in slices by the first calls to `advance_to`, so
    /// that building a million-thread fleet never blocks a frame.
    fn fill_slots(&mut self, max: usize) -> usize {
        let n = self.thread_of.len();
        let todo = (n - self.slots.len()).min(max);
        if todo > 0 {
            let template = Slot {
                path: ReadPath::new(&self.strategy, 0, 0, 0),
                active: false,
                wseq: 0,
                req: 0,
                park: Park::None,
                started: 0,
                wait_from: 0,
                waited: 0,
                permit: false,
                ending: None,
                corrupted: false,
                won: None,
            };
            self.slots.reserve_exact(n - self.slots.len());
            self.slots.extend(std::iter::repeat_n(template, todo));
        }
        todo
    }

    /// Construction is finished: every slot exists and arrivals are ordered.
    fn ready(&self) -> bool {
        matches!(self.build, Build::Done)
    }

    /// Cheap set-up only; everything proportional to the fleet's size is
    /// done by [`Fleet::build_some`] in slices (see `advance_to`).
    fn prepare(&mut self) {
        let ms = |v: u32| v as Micros * US;
        let outage = ms(self.scenario.origin_outage_ms);
        if outage > 0 {
            self.mark(outage, Milestone::OutageEnds);
        }
        if self.scenario.workload != Workload::Steady {
            self.mark(0, Milestone::KeyExpires);
        }
        let sc = &self.scenario;
        match sc.workload {
            Workload::Burst | Workload::Cold => {
                let spread = ms(sc.spread_ms);
                self.horizon = spread + tail(sc);
                if sc.workload == Workload::Burst && sc.stale_ms > 0 {
                    let stale_until = ms(sc.stale_ms);
                    self.cache.insert(
                        0,
                        CacheEntry {
                            value: Some(Value::fresh(0, 0)),
                            negative_until: 0,
                            fresh_until: 0,
                            stale_until,
                            delta: (sc.recompute_ms + 3 * sc.rtt_ms) as Micros * US,
                            fence: 0,
                        },
                    );
                }
                self.build = Build::Times(Vec::with_capacity(self.thread_of.len()));
            }
            Workload::Steady => {
                self.horizon = ms(sc.duration_ms) + tail(sc);
                self.build = Build::SteadyArrivals(0);
            }
        }
    }

    /// Does up to `budget` units of the fleet's construction and returns how
    /// many it did. The order of random draws is the same however the work
    /// is sliced, so a sliced build and a whole one give the same fleet.
    fn build_some(&mut self, budget: u64) -> u64 {
        let n = self.thread_of.len();
        let ms = |v: u32| v as Micros * US;
        let mut done = 0u64;
        while done < budget {
            let left = (budget - done) as usize;
            match std::mem::replace(&mut self.build, Build::Done) {
                Build::Done => break,
                Build::Times(mut times) => {
                    let spread = ms(self.scenario.spread_ms);
                    let k = (n - times.len()).min(left);
                    for _ in 0..k {
                        times.push(self.rng.below(spread + 1));
                    }
                    done += k as u64;
                    self.build = if times.len() == n {
                        let width = bucket_width(spread, n);
                        let buckets = (spread / width) as usize + 1;
                        Build::Count(times, vec![0; buckets + 1], 0)
                    } else {
                        Build::Times(times)
                    };
                }
                Build::Count(times, mut start, i) => {
                    let width = bucket_width(ms(self.scenario.spread_ms), n);
                    let k = (n - i).min(left);
                    for t in &times[i..i + k] {
                        start[(*t / width) as usize + 1] += 1;
                    }
                    done += k as u64;
                    self.build = if i + k == n {
                        for b in 1..start.len() {
                            start[b] += start[b - 1];
                        }
                        done += start.len() as u64;
                        Build::Place(times, start, vec![(0, 0); n], 0)
                    } else {
                        Build::Count(times, start, i + k)
                    };
                }
                Build::Place(times, mut start, mut out, i) => {
                    let width = bucket_width(ms(self.scenario.spread_ms), n);
                    let k = (n - i).min(left);
                    for (j, t) in times[i..i + k].iter().enumerate() {
                        let at = &mut start[(*t / width) as usize];
                        out[*at as usize] = (*t, (i + j) as u32);
                        *at += 1;
                    }
                    done += k as u64;
                    self.build = if i + k == n {
                        Build::SortBuckets(start, out, 0)
                    } else {
                        Build::Place(times, start, out, i + k)
                    };
                }
                Build::SortBuckets(start, mut out, b) => {
                    // After placing, start[b] is where bucket b ends. Within a
                    // bucket entries are in thread order; order them by time.
                    let buckets = start.len() - 1;
                    let k = (buckets - b).min(left);
                    for bucket in b..b + k {
                        let from = if bucket == 0 { 0 } else { start[bucket - 1] } as usize;
                        let to = start[bucket] as usize;
                        if to - from > 1 {
                            out[from..to].sort_unstable();
                        }
                        done += (to - from) as u64;
                    }
                    done += k as u64;
                    self.build = if b + k == buckets {
                        Build::Number(out, 0)
                    } else {
                        Build::SortBuckets(start, out, b + k)
                    };
                }
                Build::Number(mut out, i) => {
                    let k = (n - i).min(left);
                    for (slot, a) in out[i..i + k].iter_mut().enumerate() {
                        self.thread_of[i + slot] = a.1;
                        a.1 = (i + slot) as u32;
                    }
                    done += k as u64;
                    if i + k == n {
                        self.arrivals = out;
                        self.build = Build::Slots;
                    } else {
                        self.build = Build::Number(out, i + k);
                    }
                }
                Build::SteadyArrivals(i) => {
                    let think = ms(self.scenario.think_ms);
                    let k = (n - i).min(left);
                    for t in i..i + k {
                        let at = self.rng.below(think + 1);
                        self.push(at, t as u32, 0, EvKind::Arrive);
                    }
                    done += k as u64;
                    self.build = if i + k == n {
                        Build::SteadyKeys(0)
                    } else {
                        Build::SteadyArrivals(i + k)
                    };
                }
                Build::SteadyKeys(k0) => {
                    let keys = self.scenario.keys;
                    let (vt, st) = (ms(self.scenario.value_ttl_ms), ms(self.scenario.stale_ms));
                    let k = (keys - k0).min(left as u32);
                    for key in k0..k0 + k {
                        let ttl = self.jittered(vt);
                        if key == 0 {
                            self.mark_expiry(ttl);
                        }
                        self.cache.insert(
                            key,
                            CacheEntry {
                                value: Some(Value::fresh(key, 0)),
                                negative_until: 0,
                                fresh_until: ttl,
                                stale_until: ttl + st,
                                delta: self.nominal_delta(),
                                fence: 0,
                            },
                        );
                    }
                    done += k as u64;
                    self.build = if k0 + k == keys {
                        Build::Slots
                    } else {
                        Build::SteadyKeys(k0 + k)
                    };
                }
                Build::Slots => {
                    done += self.fill_slots(left) as u64;
                    self.build = if self.slots.len() == n {
                        Build::Done
                    } else {
                        Build::Slots
                    };
                }
            }
        }
        done
    }

    fn jittered(&mut self, ttl: Micros) -> Micros {
        let j = self.scenario.jitter;
        if j <= 0.0 {
            return ttl.max(1);
        }
        let f = 1.0 - j + 2.0 * j * self.rng.unit();
        ((ttl as f64 * f) as Micros).max(1)
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
                let ttl = self.scenario.claim_ttl_ms as Micros * US;
                self.mark(self.now + ttl, Milestone::DeadClaimExpires);
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

    /// XFetch's delta for a value nobody measured (written before the run):
    /// the mean recompute plus the claim, re-check and write round trips,
    /// as the read path measures it.
    fn nominal_delta(&self) -> Micros {
        (self.scenario.recompute_ms as Micros + 3 * self.scenario.rtt_ms as Micros) * US
    }

    /// The hottest key's value expires at `t` (if traffic still runs then).
    fn mark_expiry(&mut self, t: Micros) {
        if t < self.scenario.duration_ms as Micros * US {
            self.mark(t, Milestone::KeyExpires);
        }
    }

    /// Records a milestone at `t`, unless one of its kind is within
    /// `MARK_GAP` before it; kept in time order.
    fn mark(&mut self, t: Micros, what: Milestone) {
        let k = what as usize;
        if self.last_mark[k].is_some_and(|last| t < last + MARK_GAP && t >= last)
            || self.markers.len() >= MAX_MARKERS
        {
            return;
        }
        self.last_mark[k] = Some(t);
        let at = self.markers.partition_point(|m| m.t <= t);
        self.markers.insert(at, Marker { t, what });
    }

    // ---- public surface ----------------------------------------------------

    /// The timeline's markers so far, in time order (an expiry or a dead
    /// claim's end is known, and listed, before it happens).
    pub fn markers(&self) -> &[Marker] {
        &self.markers
    }

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

    /// Requests not answered yet, counted by looking at every thread: the
    /// ground truth for `Report::pinned`, which is kept as a running count.
    /// O(threads); for tests.
    pub fn pinned_by_scan(&self) -> u64 {
        self.slots
            .iter()
            .filter(|s| s.active && !s.path.has_responded())
            .count() as u64
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
        best.map(|b| (b.0, b.3))
    }

    /// True when the run stopped at its horizon with events still pending
    /// (threads pinned or polling forever), rather than going quiet.
    pub fn cut_off(&self) -> bool {
        self.next_source().is_some_and(|(t, _)| t > self.horizon)
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
        r.max_ms = ms(self.latency.max());
        r.max_wait_ms = ms(self.max_wait);
        r.elapsed_ms = ms(self.last_activity);
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
        }
    }

    fn handle(&mut self, ev: Ev) {
        match ev.kind {
            EvKind::Arrive => self.arrive(ev.thread),
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
        let sc = &self.scenario;
        let key = match sc.workload {
            Workload::Burst => 0,
            Workload::Cold => self.rng.below(sc.keys as u64) as u32,
            Workload::Steady => {
                // Skewed towards low keys: key 0 is the hottest.
                let u = self.rng.unit();
                ((u * u * u * sc.keys as f64) as u32).min(sc.keys - 1)
            }
        };
        let id = self.next_req_id;
        self.next_req_id += 1;
        let now = self.now;
        let slot = &mut self.slots[thread as usize];
        slot.path = ReadPath::new(&self.strategy, key, id, now);
        slot.active = true;
        slot.req = slot.req.wrapping_add(1);
        slot.wseq = slot.wseq.wrapping_add(1);
        slot.park = Park::None;
        slot.started = now;
        slot.waited = 0;
        slot.permit = false;
        slot.ending = None;
        slot.corrupted = false;
        slot.won = None;
        let req = slot.req;
        if let Some(d) = self.strategy.deadline {
            self.deadlines.push_back((now + d, thread, req));
        }
        self.r.requests += 1;
        self.unanswered += 1;
        self.log(thread, EventKind::Arrive, key, 0);
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
        if !s.path.work_outlives_caller() {
            self.unpark(thread);
        }
        self.log(thread, EventKind::DeadlinePassed, key, 0);
        self.drive(thread, Input::DeadlinePassed);
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

    fn reply_later(&mut self, thread: u32, input: Input) {
        let t = self.now + self.rtt();
        let wseq = self.slots[thread as usize].wseq;
        self.park(thread, Park::Reply);
        self.seq += 1;
        self.replies.push_back(Ev {
            t,
            seq: self.seq,
            thread,
            wseq,
            kind: EvKind::Deliver(input),
        });
        self.r.redis_round_trips += 1;
        if self.scenario.redis_down {
            self.r.redis_errors += 1;
        }
    }

    /// Runs the thread's machine until it blocks on something.
    fn drive(&mut self, thread: u32, first: Input) {
        let mut input = first;
        let s_strategy = self.strategy;
        loop {
            self.work += 1;
            let now = self.now;
            let slot = &mut self.slots[thread as usize];
            let step = slot.path.resume(&s_strategy, input, now);
            let act = slot.path.activity(&step);
            let key = slot.path.key();
            if let Some(act) = act {
                self.set_state(thread, act);
            }
            let next = self.perform(thread, key, step);
            match next {
                Some(i) => input = i,
                None => return,
            }
        }
    }

    /// Performs one step. `Some(input)` when the answer is immediate.
    fn perform(&mut self, thread: u32, key: u32, step: Step) -> Option<Input> {
        let down = self.scenario.redis_down;
        let inst = self.instance_of(thread);
        match step {
            Step::CacheGet { key } => {
                self.log(thread, EventKind::CacheGet, key, 0);
                let reply = if down {
                    CacheReply::Error
                } else {
                    self.cache_get(key)
                };
                if matches!(reply, CacheReply::Miss | CacheReply::Stale(_))
                    && self.slots[thread as usize].path.is_first_read()
                {
                    self.r.misses += 1;
                }
                self.reply_later(thread, Input::Cache(reply));
                None
            }
            Step::Poll { key } => {
                self.log(thread, EventKind::Poll, key, 0);
                let (cache, claim_free) = if down {
                    (CacheReply::Error, false)
                } else {
                    let c = self.cache_get(key);
                    (c, self.claims.holder(&key, self.now).is_none())
                };
                self.reply_later(thread, Input::Polled { cache, claim_free });
                None
            }
            Step::AbandonFlight { key: fk, ticket } => {
                self.log(thread, EventKind::Handover, key, 0);
                self.abandon(inst, fk, ticket);
                Some(Input::Ack)
            }
            Step::Wait => None,
            Step::JoinFlight { key: fk } => match self.flights[inst].join(fk, thread) {
                Join::Lead(t) => {
                    self.log(thread, EventKind::Lead, key, 0);
                    Some(Input::Flight(FlightReply::Lead(t)))
                }
                Join::Follow(t) => {
                    self.log(thread, EventKind::Follow, key, 0);
                    self.park(thread, Park::Follow(fk, t));
                    None
                }
                Join::Remembered(o) => {
                    self.r.remembered_failures += 1;
                    self.log(thread, EventKind::Remembered, key, 0);
                    Some(Input::Flight(FlightReply::Shared(o)))
                }
            },
            Step::TryLead { key: fk } => {
                if self.flights[inst].leader(&fk).is_some() {
                    Some(Input::Flight(FlightReply::Busy))
                } else {
                    match self.flights[inst].join(fk, thread) {
                        Join::Lead(t) => {
                            self.log(thread, EventKind::Lead, key, 0);
                            Some(Input::Flight(FlightReply::Lead(t)))
                        }
                        // Remembered failure: nothing to refresh with.
                        _ => Some(Input::Flight(FlightReply::Busy)),
                    }
                }
            }
            Step::SettleFlight {
                key: fk,
                ticket,
                outcome,
            } => {
                self.log(thread, EventKind::Settle, key, 0);
                if let Ok(settled) = self.flights[inst].settle(&fk, ticket, outcome) {
                    for (w, o) in settled.deliveries {
                        let ws = &mut self.slots[w as usize];
                        // Detached waiters are not in the list; a delivered
                        // waiter stops waiting now.
                        ws.park = Park::None;
                        ws.wseq = ws.wseq.wrapping_add(1);
                        ws.waited += self.now - ws.wait_from;
                        self.drive(w, Input::Flight(FlightReply::Shared(o)));
                    }
                }
                Some(Input::Ack)
            }
            Step::Claim { key, token, ttl } => {
                self.r.claim_attempts += 1;
                self.log(thread, EventKind::Claim, key, 0);
                let reply = if down {
                    ClaimReply::Error
                } else {
                    match self.claims.set_nx_px(key, token, ttl, self.now) {
                        Ok(SetReply::Ok { .. }) => ClaimReply::Won {
                            fence: self.claims.next_fence(key),
                        },
                        Ok(SetReply::Held) => ClaimReply::Held,
                        Err(_) => ClaimReply::Error,
                    }
                };
                let kind = match reply {
                    ClaimReply::Won { .. } => {
                        self.r.claim_wins += 1;
                        self.slots[thread as usize].won = Some(token);
                        EventKind::ClaimWon
                    }
                    ClaimReply::Held => EventKind::ClaimLost,
                    ClaimReply::Error => EventKind::ClaimError,
                };
                self.log(thread, kind, key, 0);
                if matches!(reply, ClaimReply::Won { .. })
                    && self.scenario.holder_crash
                    && !self.holder_crashed
                {
                    self.holder_crashed = true;
                    self.crash(thread);
                    return None;
                }
                self.reply_later(thread, Input::Claim(reply));
                None
            }
            Step::Release { key, token } => {
                self.r.releases += 1;
                self.log(thread, EventKind::Release, key, 0);
                if !down {
                    match self.claims.release(&key, token, self.now) {
                        ReleaseReply::Released => {}
                        ReleaseReply::NotHolder | ReleaseReply::Absent => {
                            if self.slots[thread as usize].won == Some(token) {
                                self.r.releases_refused += 1
                            }
                        }
                    }
                }
                self.reply_later(thread, Input::Ack);
                None
            }
            Step::Admit { max_wait } => {
                let a = &mut self.admission[inst];
                if a.free > 0 {
                    a.free -= 1;
                    self.slots[thread as usize].permit = true;
                    Some(Input::Admitted)
                } else {
                    self.r.admission_waits += 1;
                    let wseq = self.slots[thread as usize].wseq;
                    a.queue.push_back((thread, wseq));
                    self.park(thread, Park::Queued);
                    // The shed timer shares the queue entry's wseq: whichever
                    // comes first (a permit or the timer) voids the other.
                    let at = self.now.saturating_add(max_wait);
                    self.push(at, thread, wseq, EvKind::Deliver(Input::Shed));
                    None
                }
            }
            Step::Recompute { key, timeout } => {
                self.start_recompute(thread, key, timeout);
                None
            }
            Step::CacheSet {
                key,
                value,
                delta,
                fence,
            } => {
                self.log(thread, EventKind::CacheSet, key, 0);
                let stored = self.cache.get(&key).copied();
                // A fenced write older than the stored value's is refused,
                // as the fenced-write script does in Redis.
                let refused = match (fence, stored) {
                    (Some(f), Some(e)) => f < e.fence,
                    _ => false,
                };
                if !down && refused {
                    self.r.writes_refused += 1;
                } else if !down {
                    if stored
                        .and_then(|e| e.value)
                        .is_some_and(|old| old.version > value.version)
                    {
                        // An older value lands on a newer one: a late writer.
                        self.r.stale_overwrites += 1;
                    }
                    self.r.values_written += 1;
                    let sc = &self.scenario;
                    let (vt, st) = (sc.value_ttl_ms as Micros * US, sc.stale_ms as Micros * US);
                    let ttl = self.jittered(vt);
                    let now = self.now;
                    if key == 0 && self.scenario.workload == Workload::Steady {
                        self.mark_expiry(now + ttl);
                    }
                    self.cache.insert(
                        key,
                        CacheEntry {
                            value: Some(value),
                            negative_until: 0,
                            fresh_until: now + ttl,
                            stale_until: now + ttl + st,
                            delta,
                            // Unfenced writes (no claim won) leave the fence.
                            fence: fence.unwrap_or(stored.map_or(0, |e| e.fence)),
                        },
                    );
                }
                self.reply_later(thread, Input::Ack);
                None
            }
            Step::CacheSetNegative { key, ttl } => {
                self.log(thread, EventKind::CacheSet, key, 1);
                if !down {
                    let now = self.now;
                    // The marker shadows the key for its TTL; a stale value
                    // underneath stays servable to the stale paths after it.
                    let e = self.cache.entry(key).or_insert(CacheEntry {
                        value: None,
                        negative_until: 0,
                        fresh_until: 0,
                        stale_until: 0,
                        delta: 0,
                        fence: 0,
                    });
                    e.negative_until = now + ttl;
                }
                self.reply_later(thread, Input::Ack);
                None
            }
            Step::Sleep { until } => {
                let wseq = self.slots[thread as usize].wseq;
                self.park(thread, Park::Sleep);
                self.push(
                    until.max(self.now),
                    thread,
                    wseq,
                    EvKind::Deliver(Input::Woke),
                );
                None
            }
            Step::Respond { ending, corrupted } => {
                self.record_ending(thread, key, ending, corrupted);
                Some(Input::Ack)
            }
            Step::Finish => {
                self.finish(thread);
                None
            }
        }
    }

    fn cache_get(&mut self, key: u32) -> CacheReply {
        let now = self.now;
        let Some(e) = self.cache.get(&key).copied() else {
            return CacheReply::Miss;
        };
        if let Some(v) = e.value.filter(|_| now < e.fresh_until) {
            if self.strategy.xfetch_beta > 0.0 {
                // Early refresh needs the expiry, the delta and a draw; the
                // draw is taken only when XFetch is on, so runs without it
                // keep their random stream (and their event logs) as before.
                return CacheReply::FreshUntil {
                    value: v,
                    expires_at: e.fresh_until,
                    delta: e.delta,
                    draw: self.rng.next_u64() as u32,
                };
            }
            return CacheReply::Fresh(v);
        }
        if now < e.negative_until {
            self.r.negative_hits += 1;
            return CacheReply::Negative(e.value.filter(|_| now < e.stale_until));
        }
        match e.value {
            Some(v) if now < e.fresh_until => CacheReply::Fresh(v),
            Some(v) if now < e.stale_until => CacheReply::Stale(v),
            _ => {
                self.cache.remove(&key);
                CacheReply::Miss
            }
        }
    }

    fn start_recompute(&mut self, thread: u32, key: u32, timeout: Option<Micros>) {
        let sc = self.scenario.clone();
        let now = self.now;
        self.r.recomputes += 1;
        if self.slots[thread as usize].path.is_early_refresh() {
            self.r.early_refreshes += 1;
        }
        let running = self.running_per_key.entry(key).or_insert(0);
        if *running > 0 {
            self.r.overlapping_recomputes += 1;
        }
        *running += 1;
        self.origin_running += 1;
        self.r.origin_peak_concurrency = self.r.origin_peak_concurrency.max(self.origin_running);
        self.log(thread, EventKind::RecomputeStart, key, 0);
        let wseq = self.slots[thread as usize].wseq;
        // The permit moves from the request to the call: a caller that gives
        // up does not make room at the origin, only a finished call does.
        let permit = std::mem::replace(&mut self.slots[thread as usize].permit, false);
        self.park(thread, Park::Origin);
        if sc.hang {
            // Never answers (nor frees its permit); the origin timeout ends
            // the work's wait, and a deadline ends a caller's.
            if let Some(to) = timeout {
                self.push(
                    now.saturating_add(to),
                    thread,
                    wseq,
                    EvKind::Deliver(Input::Origin(Err(Failure::Timeout))),
                );
            }
            return;
        }
        // Latency: base x [0.75, 1.25), with a 2% tail at 2-4x; beyond the
        // origin's capacity every call slows in proportion to the overload.
        let base = sc.recompute_ms as Micros * US;
        let mut lat = base * (750 + self.rng.below(500)) / 1000;
        if self.rng.below(100) < 2 {
            lat *= 2 + self.rng.below(3);
        }
        let cap = sc.origin_capacity.max(1) as Micros;
        if self.origin_running > cap {
            lat = lat * self.origin_running / cap;
        }
        let outage = now < sc.origin_outage_ms as Micros * US;
        let fails = outage || (sc.fail_rate > 0.0 && self.rng.unit() < sc.fail_rate);
        let result = if fails {
            self.r.origin_failures += 1;
            Err(Failure::Origin)
        } else {
            let v = self.versions.entry(key).or_insert(0);
            *v += 1;
            Ok(Value::fresh(key, *v))
        };
        let lat = lat.max(1);
        let notify = match timeout {
            Some(to) if to < lat => {
                self.push(
                    now + to,
                    thread,
                    wseq,
                    EvKind::Deliver(Input::Origin(Err(Failure::Timeout))),
                );
                false
            }
            _ => true,
        };
        self.push(
            now + lat,
            thread,
            wseq,
            EvKind::OriginDone {
                key,
                result,
                permit,
                notify,
            },
        );
    }

    fn release_permit(&mut self, inst: usize) {
        while let Some((t, wseq)) = self.admission[inst].queue.pop_front() {
            let s = &self.slots[t as usize];
            if s.active && s.wseq == wseq && s.park == Park::Queued {
                // Hand the permit straight over.
                let s = &mut self.slots[t as usize];
                s.permit = true;
                s.park = Park::None;
                s.wseq = s.wseq.wrapping_add(1);
                s.waited += self.now - s.wait_from;
                self.drive(t, Input::Admitted);
                return;
            }
        }
        self.admission[inst].free += 1;
    }

    /// The first claim winner dies as it wins: its claim stays
    /// until the TTL runs out, and its flight's followers must not be
    /// stranded.
    fn crash(&mut self, thread: u32) {
        let inst = self.instance_of(thread);
        let key = self.slots[thread as usize].path.key();
        self.r.crashed += 1;
        self.log(thread, EventKind::Crash, key, 0);
        if let Some(ticket) = self.slots[thread as usize].path.leader_ticket() {
            let fk = self.slots[thread as usize].path.flight_key(&self.strategy);
            self.abandon(inst, fk, ticket);
        }
        if !self.slots[thread as usize].path.has_responded() {
            self.record_ending(thread, key, Ending::Error, false);
        }
        self.finish(thread);
    }

    /// A leader leaves its flight: the oldest follower takes it over.
    fn abandon(&mut self, inst: usize, fk: FlightKey, ticket: crate::flight::LeaderTicket) {
        if let Ok(Abandoned::Promoted { leader, ticket }) = self.flights[inst].abandon(&fk, ticket)
        {
            self.r.handovers += 1;
            let s = &mut self.slots[leader as usize];
            s.park = Park::None;
            s.wseq = s.wseq.wrapping_add(1);
            s.waited += self.now - s.wait_from;
            self.drive(leader, Input::Flight(FlightReply::Promoted(ticket)));
        }
    }

    fn record_ending(&mut self, thread: u32, key: u32, ending: Ending, corrupted: bool) {
        let now = self.now;
        let s = &mut self.slots[thread as usize];
        // A caller answered at its deadline while its work is still queued
        // has waited until now, though the work's wait goes on.
        let waiting = match s.park {
            Park::Follow(..) | Park::Queued | Park::Sleep => now - s.wait_from,
            _ => 0,
        };
        // No guard against a second ending on purpose: conservation
        // (requests = endings + pinned) is a tested invariant, and a guard
        // here would hide the bug it exists to catch.
        s.ending = Some(ending);
        self.unanswered -= 1;
        let lat = self.now - s.started;
        let waited = s.waited + waiting;
        self.latency.record(lat);
        self.max_wait = self.max_wait.max(waited);
        match ending {
            Ending::Hit => self.r.hits += 1,
            Ending::Stale => self.r.stale_served += 1,
            Ending::Computed => self.r.computed += 1,
            Ending::Shared => self.r.shared += 1,
            Ending::Degraded => self.r.degraded += 1,
            Ending::Error => self.r.errors += 1,
            Ending::Timeout => self.r.timeouts += 1,
        }
        self.slots[thread as usize].corrupted = corrupted;
        let shown = if corrupted {
            self.r.corrupted += 1;
            Activity::Corrupted
        } else {
            Activity::of_ending(ending)
        };
        self.set_state(thread, shown);
        self.log(thread, EventKind::Respond, key, ending as u8);
    }

    fn finish(&mut self, thread: u32) {
        let s = &mut self.slots[thread as usize];
        s.active = false;
        s.park = Park::None;
        s.wseq = s.wseq.wrapping_add(1);
        if s.permit {
            s.permit = false;
            let inst = self.instance_of(thread);
            self.release_permit(inst);
        }
        let s = &self.slots[thread as usize];
        if let Some(e) = s.ending {
            let shown = if s.corrupted {
                Activity::Corrupted
            } else {
                Activity::of_ending(e)
            };
            self.set_state(thread, shown);
        }
        if self.scenario.workload == Workload::Steady {
            let end = self.scenario.duration_ms as Micros * US;
            let think = self.scenario.think_ms as Micros * US;
            let pause = think / 2 + self.rng.below(think + 1);
            let at = self.now + pause.max(1);
            if at < end {
                self.push(at, thread, 0, EvKind::Arrive);
            }
        }
    }
}

/// Construction in slices. Burst and cold arrivals are ordered by (time,
/// thread) with a bucket sort: buckets of `bucket_width` microseconds (one
/// microsecond for a burst, so it is a counting sort), each then sorted.
enum Build {
    Times(Vec<Micros>),
    Count(Vec<Micros>, Vec<u32>, usize),
    Place(Vec<Micros>, Vec<u32>, Vec<(Micros, u32)>, usize),
    SortBuckets(Vec<u32>, Vec<(Micros, u32)>, usize),
    Number(Vec<(Micros, u32)>, usize),
    SteadyArrivals(usize),
    SteadyKeys(u32),
    Slots,
    Done,
}

/// About four buckets per thread at most, and never narrower than 1 µs.
fn bucket_width(window: Micros, n: usize) -> Micros {
    let buckets = 4 * n as Micros + 1024;
    (window + 1).div_ceil(buckets).max(1)
}

/// A cheap snapshot of the counters a timeline chart plots. Cumulative
/// fields only grow; the chart differences them per bucket.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Sample {
    pub t: Micros,
    /// Recomputes running at the origin right now.
    pub origin_running: u64,
    pub recomputes: u64,
    pub redis_round_trips: u64,
    /// Errors plus timeouts.
    pub failures: u64,
    pub stale_served: u64,
    pub served: u64,
    pub flights: u64,
    pub live_claims: u64,
}

impl Fleet {
    pub fn sample(&self) -> Sample {
        let r = &self.r;
        Sample {
            t: self.now,
            origin_running: self.origin_running,
            recomputes: r.recomputes,
            redis_round_trips: r.redis_round_trips,
            failures: r.errors + r.timeouts,
            stale_served: r.stale_served,
            served: r.ended(),
            flights: self.flights_in_flight() as u64,
            live_claims: self.claims.live(self.now) as u64,
        }
    }

    /// Time of the last event that changed something visible (a deadline
    /// timer for an already answered request does not count).
    pub fn last_activity(&self) -> Micros {
        self.last_activity
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_only_grow_and_end_where_the_run_does() {
        let s = Scenario::default();
        let full = Fleet::new(&s, 1).run();
        let mut probe = Fleet::new(&s, 1);
        probe.run();
        let end = probe.last_activity();
        assert!(
            end < 1_100_000,
            "the burst is over within its deadline: {end}"
        );
        let mut f = Fleet::new(&s, 1);
        let mut samples = vec![f.sample()];
        for i in 1..=50u64 {
            f.advance_to(end * i / 50, usize::MAX);
            samples.push(f.sample());
        }
        assert_eq!(samples.len(), 51);
        let last = samples.last().unwrap();
        assert_eq!(last.recomputes, full.recomputes);
        assert_eq!(last.served, full.ended());
        for w in samples.windows(2) {
            assert!(w[0].t <= w[1].t);
            assert!(w[0].redis_round_trips <= w[1].redis_round_trips);
            assert!(w[0].served <= w[1].served);
        }
    }

    #[test]
    fn arrivals_are_ordered_by_time_then_thread_however_the_build_is_sliced() {
        for (n, spread_ms, budget) in [
            (1u32, 0u32, 1u64),
            (50, 10, 7),
            (1000, 3, 100),
            (100, 60_000, 13),
        ] {
            let s = Scenario {
                instances: 1,
                threads: n,
                spread_ms,
                ..Scenario::default()
            };
            let mut whole = Fleet::new(&s, 9);
            whole.build_some(u64::MAX);
            let mut sliced = Fleet::new(&s, 9);
            while !sliced.ready() {
                sliced.build_some(budget);
            }
            assert_eq!(whole.arrivals, sliced.arrivals);
            assert_eq!(whole.thread_of, sliced.thread_of);
            let by_thread: Vec<(Micros, u32)> = whole
                .arrivals
                .iter()
                .map(|(t, slot)| (*t, whole.thread_of[*slot as usize]))
                .collect();
            let mut sorted = by_thread.clone();
            sorted.sort_unstable();
            assert_eq!(by_thread, sorted);
            let mut threads = whole.thread_of.clone();
            threads.sort_unstable();
            assert_eq!(threads, (0..n).collect::<Vec<_>>());
        }
    }

    #[test]
    fn markers_tell_each_story_in_order() {
        let kinds = |name: &str| {
            let mut f = Fleet::new(&crate::scenario::preset(name).unwrap(), 1);
            f.run();
            assert!(f.markers().windows(2).all(|w| w[0].t <= w[1].t));
            f.markers().iter().map(|m| m.what).collect::<Vec<_>>()
        };
        use Milestone::*;
        assert_eq!(
            kinds("burst"),
            [KeyExpires, ClaimWon, RecomputeStarts, ValueWritten]
        );
        let crash = kinds("holder-crash");
        let at = |k| crash.iter().position(|m| *m == k).unwrap();
        assert!(at(KeyExpires) < at(HolderCrashes));
        assert!(at(HolderCrashes) < at(DeadClaimExpires));
        assert!(at(DeadClaimExpires) < at(ValueWritten), "{crash:?}");
        assert!(kinds("failure").contains(&OutageEnds));
        assert!(kinds("hang").contains(&OriginTimeout));
        assert!(kinds("cold").contains(&Shed));
        // A steady run marks each expiry of its hottest key.
        let steady = kinds("jitter");
        assert!(steady.iter().filter(|m| **m == KeyExpires).count() >= 3);
    }

    #[test]
    fn states_describe_every_thread() {
        let s = Scenario {
            instances: 3,
            threads: 7,
            ..Scenario::default()
        };
        let mut f = Fleet::new(&s, 4);
        assert_eq!(f.thread_states().len(), 21);
        assert!(f.thread_states().iter().all(|b| *b == Activity::Idle as u8));
        f.advance_to(5_000, usize::MAX);
        assert!(f.thread_states().iter().any(|b| *b != Activity::Idle as u8));
        f.run();
        // Every thread ends showing how it was answered.
        assert!(f
            .thread_states()
            .iter()
            .all(|b| *b >= Activity::Hit as u8 && (*b as usize) < Activity::COUNT));
    }
}
