//! One request's journey through the cache, as a sans-IO state machine.
//!
//! The machine never sleeps, reads a clock or does I/O: it emits a [`Step`]
//! ("GET this key", "claim it", "recompute", ...) and its driver performs
//! the step and feeds the result back as an [`Input`] together with the time.
//! The simulation, the native Redis driver and the tests all drive this same
//! code, so what the page animates is what a service would run.
//!
//! The order of the layers is the lesson: with [`ClaimMode::Inner`] only a
//! flight's leader claims, so one thread per instance touches Redis; with
//! [`ClaimMode::Outer`] every thread claims first and needs its own loser
//! handling.

use crate::claim::{Micros, Token};
use crate::flight::{Failure, LeaderTicket, Outcome, Value};
use crate::ledger::{Cause, End};
use crate::metrics::Ending;
use crate::scenario::{ClaimMode, LoserPolicy, RedisErrorPolicy, Scenario};

/// How the read path behaves; shared by every request of a fleet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Strategy {
    pub singleflight: bool,
    pub claim: ClaimMode,
    pub loser: LoserPolicy,
    pub redis_error: RedisErrorPolicy,
    /// Each request's budget from arrival; `None` is the no-deadline pitfall.
    /// It bounds the caller's wait, never a recompute already started.
    pub deadline: Option<Micros>,
    /// The origin call's own bound; `None` under the no-deadline pitfall.
    pub origin_timeout: Option<Micros>,
    pub claim_ttl: Micros,
    /// A waiting loser re-reads the cache this often.
    pub poll: Micros,
    /// Expected Redis round trip: a poll that could not finish before the
    /// deadline is not started.
    pub rtt: Micros,
    /// Cache a failure for this long (`None` = off).
    pub negative_ttl: Option<Micros>,
    pub stale_while_revalidate: bool,
    /// Take a permit from the instance's admission limit before recomputing.
    pub admission: bool,
    /// How long a recompute may queue for a permit before it is shed.
    pub admission_wait: Micros,
    /// Pitfall: the coalescing key is not the cache key.
    pub key_mismatch: bool,
    /// XFetch's beta (0 = off): how eagerly a reader of a fresh value
    /// refreshes it before it expires.
    pub xfetch_beta: f64,
    /// Writes carry the claim's fencing number, and older ones are refused.
    pub fenced_writes: bool,
    /// A claim whose reply timed out may still land (a paused Redis runs it
    /// when it resumes): release it by its token at once, on the same
    /// ordered connection, so the release lands after it. Off, the timeout
    /// is taken for a plain error, and a claim that lands holds its key
    /// until its TTL (the real driver's `release_ambiguous` is always on).
    pub release_timed_out_claims: bool,
}

impl Strategy {
    pub fn from_scenario(s: &Scenario) -> Strategy {
        let ms = |v: u32| v as Micros * 1000;
        Strategy {
            singleflight: s.singleflight,
            claim: s.claim,
            loser: s.loser,
            redis_error: s.redis_error,
            deadline: (!s.pitfalls.no_deadline).then(|| ms(s.deadline_ms)),
            origin_timeout: (!s.pitfalls.no_deadline).then(|| ms(s.origin_timeout_ms.max(1))),
            claim_ttl: ms(s.claim_ttl_ms.max(1)),
            poll: ms(s.poll_ms.max(1)),
            rtt: ms(s.rtt_ms),
            negative_ttl: (s.negative_ttl_ms > 0).then(|| ms(s.negative_ttl_ms)),
            stale_while_revalidate: s.stale_while_revalidate,
            admission: s.admission > 0,
            admission_wait: ms(s.admission_wait_ms),
            key_mismatch: s.pitfalls.key_mismatch,
            xfetch_beta: s.xfetch_beta,
            fenced_writes: s.fenced_writes,
            release_timed_out_claims: true,
        }
    }
}

/// The key a request coalesces on. Equal to the cache key unless the
/// key-mismatch pitfall salts it with something per-request.
pub type FlightKey = u64;

/// What the machine asks its driver to do next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// `GET key`. Reply: [`Input::Cache`].
    CacheGet { key: u32 },
    /// A waiting loser's look: `GET key` and `EXISTS lock:key` in one round
    /// trip (a pipeline). Reply: [`Input::Polled`].
    Poll { key: u32 },
    /// Lead or attach to the in-process flight. Reply: [`Input::Flight`]
    /// with `Lead`, or later with the shared outcome (the driver parks
    /// followers until the leader settles or their deadline passes), or
    /// `Promoted` if the leader gives up before its work starts.
    JoinFlight { key: FlightKey },
    /// Lead the flight only if nobody is running it (background refresh).
    /// Reply: [`Input::Flight`] with `Lead` or `Busy`.
    TryLead { key: FlightKey },
    /// Hand the outcome to every current follower. Reply: [`Input::Ack`].
    SettleFlight {
        key: FlightKey,
        ticket: LeaderTicket,
        outcome: Outcome,
    },
    /// The leader leaves before any work started: the oldest follower takes
    /// over the flight, the others stay attached. Reply: [`Input::Ack`].
    AbandonFlight {
        key: FlightKey,
        ticket: LeaderTicket,
    },
    /// `SET lock:key token NX PX ttl`. Reply: [`Input::Claim`].
    Claim { key: u32, token: Token, ttl: Micros },
    /// Compare-and-delete release. Reply: [`Input::Ack`].
    Release { key: u32, token: Token },
    /// The release of a claim whose reply timed out: it may have been taken
    /// (or be taken when a paused Redis resumes), so it is released by its
    /// token on the same ordered connection, landing after the claim.
    /// Nobody waits for its reply. Reply: [`Input::Ack`] at once.
    Unclaim { key: u32, token: Token },
    /// Take a permit from the admission limit, queueing at most `max_wait`.
    /// Reply: [`Input::Admitted`], or [`Input::Shed`] when the wait ran out.
    Admit { max_wait: Micros },
    /// Call the origin, giving up on it after `timeout` (the call itself may
    /// run on at the origin). Reply: [`Input::Origin`], with
    /// `Err(Failure::Timeout)` if the timeout came first.
    Recompute { key: u32, timeout: Option<Micros> },
    /// `SET key value` with the value TTL, and how long the recompute took
    /// (XFetch's delta, stored beside the value). With fenced writes, the
    /// writer's fencing number: the store refuses a write older than the
    /// one it holds. Reply: [`Input::Ack`].
    CacheSet {
        key: u32,
        value: Value,
        delta: Micros,
        fence: Option<u64>,
    },
    /// Store a short-lived failure marker. Reply: [`Input::Ack`].
    CacheSetNegative { key: u32, ttl: Micros },
    /// Wake at `until`. Reply: [`Input::Woke`].
    Sleep { until: Micros },
    /// The caller's answer is ready; the machine may go on with cleanup.
    /// Reply: [`Input::Ack`].
    Respond { ending: Ending, corrupted: bool },
    /// Nothing new to do: keep waiting for the reply already pending. The
    /// caller has been answered; the work it started goes on.
    Wait,
    /// Nothing left to do.
    Finish,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheReply {
    Fresh(Value),
    /// A fresh value with what early refresh needs: when it expires, how
    /// long its recompute took, and a uniform draw from the driver's seeded
    /// randomness (the machine itself has none).
    FreshUntil {
        value: Value,
        expires_at: Micros,
        delta: Micros,
        draw: u32,
    },
    Stale(Value),
    /// A failure marker; with the stale value under it, if one is still
    /// inside its stale window. The marker damps refreshes, it never hides
    /// a value that may be served.
    Negative(Option<Value>),
    Miss,
    Error,
}

impl CacheReply {
    /// What a request's first read counts as a miss: no value, or one past
    /// its TTL. (A failure marker or a Redis error is counted elsewhere.)
    pub fn is_miss(&self) -> bool {
        matches!(self, CacheReply::Miss | CacheReply::Stale(_))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlightReply {
    Lead(LeaderTicket),
    /// The flight's outcome, as handed to this follower (or a remembered
    /// failure under the pitfall).
    Shared(Outcome),
    /// The leader left (gave up before its work started, or crashed) and
    /// this follower now leads the same flight.
    Promoted(LeaderTicket),
    /// `TryLead` found a flight running.
    Busy,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimReply {
    /// The claim is ours; `fence` is its fencing number (`INCR fence:key`,
    /// taken in the same script): every win gets a larger one.
    Won {
        fence: u64,
    },
    Held,
    Error,
    /// No reply within the client's timeout: the claim may still be taken,
    /// now or when a paused Redis resumes. Handled as [`ClaimReply::Error`]
    /// (the Redis error policy), after releasing the claim by its token.
    TimedOut,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    Start,
    Cache(CacheReply),
    /// A poll's answer: the cache and whether anyone holds the claim.
    Polled {
        cache: CacheReply,
        claim_free: bool,
    },
    Flight(FlightReply),
    Claim(ClaimReply),
    Admitted,
    /// No admission permit came within the queue budget.
    Shed,
    Origin(Result<Value, Failure>),
    Ack,
    Woke,
    /// The driver's timer for [`ReadPath::deadline`] fired first: the caller
    /// stops waiting. Work the request already started is not cut short.
    DeadlinePassed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Idle,
    Read,
    Flight,
    Claim,
    Admit,
    Origin,
    /// Work committed (flight or claim won): read the cache once more first.
    Recheck,
    /// Claim lost (or refused), waiting for the winner's value.
    PollSleep,
    PollRead,
    /// Sleeping out the rest of the budget before timing out.
    Expire,
    /// Stale answer already sent; refreshing behind it.
    RefreshLead,
    RefreshClaim,
    /// A claim timed out: its release by token is on its way (`refresh`:
    /// the claim was a refresh's); next, the Redis error policy.
    Unclaim {
        refresh: bool,
    },
    WrapUp,
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Write {
    None,
    /// The value and how long its recompute took.
    Value(Value, Micros),
    Negative(Micros),
}

/// XFetch's test: refresh now, before `expires_at`? `draw` is uniform over
/// u32; `u = (draw + 1) / 2^32` lies in (0, 1], so `-ln(u) >= 0` and a draw
/// near zero refreshes earliest.
pub fn xfetch_due(now: Micros, expires_at: Micros, delta: Micros, beta: f64, draw: u32) -> bool {
    if beta <= 0.0 {
        return false;
    }
    let u = (f64::from(draw) + 1.0) / 4_294_967_296.0;
    let gap = delta as f64 * beta * -u.ln();
    now as f64 + gap >= expires_at as f64
}

/// What a request is doing, for drawing. One byte per thread.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Activity {
    Idle = 0,
    Reading = 1,
    Following = 2,
    Claiming = 3,
    Holding = 4,
    Polling = 5,
    Recomputing = 6,
    Queued = 7,
    Writing = 8,
    Hit = 9,
    Shared = 10,
    Stale = 11,
    Degraded = 12,
    Error = 13,
    Timeout = 14,
    /// Answered with a shared value that another caller changed in place
    /// (the mutable-result pitfall).
    Corrupted = 15,
}

impl Activity {
    pub const COUNT: usize = 16;
    /// A request doing a recompute's work, from the claim won (or the
    /// flight led) to the value written.
    pub const WORK: [Activity; 3] = [Activity::Holding, Activity::Recomputing, Activity::Writing];
    pub const NAMES: [&'static str; Self::COUNT] = [
        "idle",
        "reading",
        "following",
        "claiming",
        "holding",
        "polling",
        "recomputing",
        "queued",
        "writing",
        "hit",
        "shared",
        "stale",
        "degraded",
        "error",
        "timeout",
        "corrupted",
    ];

    pub fn of_ending(e: Ending) -> Activity {
        match e {
            Ending::Hit => Activity::Hit,
            Ending::Computed => Activity::Hit,
            Ending::Shared => Activity::Shared,
            Ending::Stale => Activity::Stale,
            Ending::Degraded => Activity::Degraded,
            Ending::Error => Activity::Error,
            Ending::Timeout => Activity::Timeout,
        }
    }
}

/// One request. Small and `Copy`-free on purpose: a fleet holds one per thread.
///
/// Two things a request does are kept apart. The *caller* waits for an
/// answer, bounded by its own deadline. The *work* (from the moment the
/// request commits to recomputing: re-check, admission, the origin call,
/// the cache write, settling the flight, releasing the claim) runs to its
/// end whatever happens to the caller, as a detached task would in a
/// service; it is bounded by the admission queue budget and the origin
/// call's timeout instead.
#[derive(Clone, Debug)]
pub struct ReadPath {
    key: u32,
    /// Unique per request: salts the key-mismatch pitfall and the tokens.
    id: u64,
    /// The flight this request joined or leads.
    fkey: FlightKey,
    deadline_at: Option<Micros>,
    phase: Phase,
    stale: Option<Value>,
    leader: Option<LeaderTicket>,
    token: Option<Token>,
    attempts: u16,
    /// A `SET NX` was sent and its reply has not come back.
    claim_in_flight: bool,
    /// The request committed to recomputing: its work outlives its caller.
    committed: bool,
    /// The cache was re-read after winning leadership.
    checked: bool,
    /// The caller was just answered at its deadline; the next `Ack` means
    /// "go back to waiting for the work's pending reply".
    detaching: bool,
    /// An early (XFetch) refresh of a value that is still fresh.
    early: bool,
    /// The fencing number of the claim this request won, if it won one.
    fence: Option<u64>,
    /// Fenced writes are on (the strategy's, kept for the wrap-up).
    fenced: bool,
    /// When the request committed to the work: the written value's delta
    /// (XFetch's estimate of how long a refresh takes) counts from here.
    commit_at: Micros,
    // wrap-up: write -> settle or abandon -> respond -> release -> finish
    settle: Option<Outcome>,
    abandon: bool,
    respond: Option<(Ending, bool)>,
    write: Write,
    responded: bool,
    /// The ledger's entry for the caller's answer: how it ended and why,
    /// recorded by the branch that decided it (see [`ReadPath::ledger_entry`]).
    entry: (End, Cause),
    /// Why the work ended as it did (what its flight's followers inherit).
    work_cause: Cause,
    /// The answer came from the flight it joined (its cause is the
    /// leader's, which only the driver knows).
    by_flight: bool,
    /// The last claim reply was a Redis error or timeout.
    redis_failed: bool,
}

fn ending_of_shared(o: Outcome) -> (Ending, bool) {
    match o {
        Outcome::Fresh(v) => (Ending::Shared, !v.is_intact()),
        Outcome::Stale(v) => (Ending::Stale, !v.is_intact()),
        Outcome::Degraded => (Ending::Degraded, false),
        Outcome::Failed(_) => (Ending::Error, false),
    }
}

impl ReadPath {
    /// A request for `key` arriving at `now`; `id` must be unique in the run.
    pub fn new(s: &Strategy, key: u32, id: u64, now: Micros) -> ReadPath {
        ReadPath {
            key,
            id,
            fkey: key as FlightKey,
            deadline_at: s.deadline.map(|d| now.saturating_add(d)),
            phase: Phase::Idle,
            stale: None,
            leader: None,
            token: None,
            attempts: 0,
            claim_in_flight: false,
            committed: false,
            checked: false,
            detaching: false,
            early: false,
            fence: None,
            fenced: s.fenced_writes,
            commit_at: 0,
            settle: None,
            abandon: false,
            respond: None,
            write: Write::None,
            responded: false,
            entry: (End::Unanswered, Cause::Pending),
            work_cause: Cause::Served,
            by_flight: false,
            redis_failed: false,
        }
    }

    /// The ledger's entry for the caller's answer, as the read path saw
    /// it: how it ended and why. Two causes need the driver's view of the
    /// world, which refines them when it records the answer: a timeout's
    /// cause is what the caller was waiting on at its deadline
    /// ([`Cause::WaitedFlight`] here), and an answer from the flight
    /// ([`ReadPath::answered_by_flight`]) inherits the leader's cause.
    pub fn ledger_entry(&self) -> (End, Cause) {
        self.entry
    }

    /// Why the work ended as it did: what the followers its flight
    /// settles inherit.
    pub fn work_cause(&self) -> Cause {
        self.work_cause
    }

    /// The caller's answer is its flight's shared outcome.
    pub fn answered_by_flight(&self) -> bool {
        self.by_flight
    }

    /// A claim reply of this request was a Redis error or timeout.
    pub fn saw_redis_fail(&self) -> bool {
        self.redis_failed
    }

    /// Records the ledger's entry for the answer being decided: the
    /// caller's (unless it was answered already) and the work's cause.
    fn tag(&mut self, end: End, cause: Cause) {
        self.work_cause = cause;
        if !self.responded {
            self.entry = (end, cause);
        }
    }

    pub fn key(&self) -> u32 {
        self.key
    }

    /// The coalescing key this request uses.
    pub fn flight_key(&self, s: &Strategy) -> FlightKey {
        if s.key_mismatch {
            // e.g. the cache key is "product:42" but the flight map is keyed
            // by "product:42?locale=..&req=..": never equal across requests.
            ((self.id + 1) << 32) | self.key as u64
        } else {
            self.key as u64
        }
    }

    /// When the driver must interrupt the caller with [`Input::DeadlinePassed`].
    /// `None` once the caller has its answer (a refresh behind a stale
    /// answer, or work that outlived its caller, is never cut short) and
    /// under the no-deadline pitfall.
    pub fn deadline(&self) -> Option<Micros> {
        if self.responded {
            None
        } else {
            self.deadline_at
        }
    }

    /// True when the deadline must leave the pending reply in place: the
    /// request has committed to its work, which goes on after the caller is
    /// answered. When false, the driver cancels whatever the request was
    /// waiting on (a follower detaches, a sleep or a Redis reply is dropped).
    pub fn work_outlives_caller(&self) -> bool {
        self.committed && self.phase != Phase::Done
    }

    /// True once the request committed to recomputing.
    pub fn is_committed(&self) -> bool {
        self.committed
    }

    /// The request's first cache read is on its way (not a re-check or a poll).
    pub fn is_first_read(&self) -> bool {
        self.phase == Phase::Read
    }

    /// This request answered a fresh value and refreshes it early (XFetch).
    pub fn is_early_refresh(&self) -> bool {
        self.early
    }

    /// What this request can fall back on: the value it read, stale (or,
    /// for an early refresh, still fresh).
    fn fallback(&self) -> Option<Outcome> {
        self.stale.map(|v| {
            if self.early {
                Outcome::Fresh(v)
            } else {
                Outcome::Stale(v)
            }
        })
    }

    pub fn is_done(&self) -> bool {
        self.phase == Phase::Done
    }

    pub fn has_responded(&self) -> bool {
        self.responded
    }

    /// Lost the claim and waits for the winner's value: sleeping between
    /// polls, or reading the cache for one.
    pub fn is_polling(&self) -> bool {
        matches!(self.phase, Phase::PollSleep | Phase::PollRead)
    }

    /// Sleeps out the rest of its budget because another poll could not
    /// come back in time: it gives up when it wakes, at its deadline.
    pub fn expires_on_wake(&self) -> bool {
        self.phase == Phase::Expire
    }

    /// Holds a live claim token (that it has not released yet).
    pub fn holds_claim(&self) -> bool {
        self.token.is_some()
    }

    /// When it committed to the work (a claim won and the second read
    /// missed, or a flight led): its recompute's clock, if it has one.
    pub fn working_since(&self) -> Option<Micros> {
        self.committed.then_some(self.commit_at)
    }

    /// The claim token it holds and has not released, if any.
    pub fn token(&self) -> Option<Token> {
        self.token
    }

    pub fn leader_ticket(&self) -> Option<LeaderTicket> {
        self.leader
    }

    /// What to draw for the step just emitted (`None`: keep what is shown).
    pub fn activity(&self, step: &Step) -> Option<Activity> {
        Some(match step {
            Step::CacheGet { .. } => Activity::Reading,
            Step::Poll { .. } => Activity::Polling,
            Step::JoinFlight { .. } | Step::TryLead { .. } => Activity::Following,
            Step::Claim { .. } => Activity::Claiming,
            Step::Admit { .. } => Activity::Queued,
            Step::Recompute { .. } if self.token.is_some() => Activity::Holding,
            Step::Recompute { .. } => Activity::Recomputing,
            Step::Sleep { .. } => Activity::Polling,
            // Once the caller is answered it shows its answer, even while
            // the work it started writes and releases behind it.
            Step::SettleFlight { .. }
            | Step::AbandonFlight { .. }
            | Step::Release { .. }
            | Step::CacheSet { .. }
            | Step::CacheSetNegative { .. }
                if self.responded =>
            {
                return None
            }
            Step::SettleFlight { .. }
            | Step::AbandonFlight { .. }
            | Step::Release { .. }
            | Step::CacheSet { .. }
            | Step::CacheSetNegative { .. } => Activity::Writing,
            Step::Respond { ending, .. } => Activity::of_ending(*ending),
            // Sent and not waited for: the request shows what it does next.
            Step::Unclaim { .. } | Step::Wait | Step::Finish => return None,
        })
    }

    fn next_token(&mut self) -> Token {
        self.attempts = self.attempts.wrapping_add(1);
        Token((self.id << 16) | self.attempts as u64)
    }

    /// Does this request take the claim before recomputing?
    fn claims_on_lead(&self, s: &Strategy) -> bool {
        match s.claim {
            ClaimMode::Inner => true,
            // The second card's design: only a refresh of a stale value is
            // claim-guarded; a caller with nothing to serve never waits on it.
            ClaimMode::Refresh => self.stale.is_some(),
            ClaimMode::Off | ClaimMode::Outer => false,
        }
    }

    /// Feeds one result in and returns the next step.
    pub fn resume(&mut self, s: &Strategy, input: Input, now: Micros) -> Step {
        let was = self.committed;
        let step = self.next_step(s, input, now);
        if self.committed && !was {
            self.commit_at = now;
        }
        step
    }

    /// Routes one input to the handler of the state it arrives in. Each
    /// `on_*` method below is one state's whole handling; an input a state
    /// does not expect falls through to [`ReadPath::unexpected`].
    fn next_step(&mut self, s: &Strategy, input: Input, now: Micros) -> Step {
        if input == Input::DeadlinePassed {
            return self.on_deadline(s, now);
        }
        if self.detaching && input == Input::Ack {
            self.detaching = false;
            return Step::Wait;
        }
        match (self.phase, input) {
            (Phase::Idle, Input::Start) => self.on_start(),
            (Phase::Read, Input::Cache(r)) => self.on_read(s, r, now),
            (Phase::RefreshLead, Input::Ack) if self.responded && self.leader.is_none() => {
                self.on_refresh_answered(s)
            }
            (Phase::RefreshLead, Input::Flight(r)) => self.on_refresh_lead(s, r),
            (Phase::RefreshClaim, Input::Claim(r)) => self.on_refresh_claim(s, r),
            (Phase::Unclaim { refresh: true }, Input::Ack) => {
                self.on_refresh_claim(s, ClaimReply::Error)
            }
            (Phase::Unclaim { refresh: false }, Input::Ack) => {
                self.on_claim(s, ClaimReply::Error, now)
            }
            (Phase::Flight, Input::Flight(r)) => self.on_flight(s, r),
            (Phase::Claim, Input::Claim(r)) => self.on_claim(s, r, now),
            (Phase::Admit, Input::Admitted) => self.on_admitted(s),
            (Phase::Admit, Input::Shed) => self.on_shed(),
            (Phase::Origin, Input::Origin(r)) => self.on_origin(s, r, now),
            (Phase::Recheck, Input::Cache(r)) => self.on_recheck(s, r),
            (Phase::PollSleep, Input::Woke) => self.on_poll_woke(),
            (Phase::PollRead, Input::Polled { cache, claim_free }) => {
                self.on_poll_read(s, cache, claim_free, now)
            }
            (Phase::Expire, Input::Woke) => self.on_deadline(s, now),
            (Phase::WrapUp, Input::Ack) => self.wrap_up(),
            (Phase::Done, _) => Step::Finish,
            _ => self.unexpected(input),
        }
    }

    /// `Idle`, started: the first cache read.
    fn on_start(&mut self) -> Step {
        self.phase = Phase::Read;
        Step::CacheGet { key: self.key }
    }

    /// `Read`: the first cache read came back. Answer a hit (refreshing it
    /// early if XFetch says so), serve stale while revalidating, or go the
    /// miss path.
    fn on_read(&mut self, s: &Strategy, r: CacheReply, now: Micros) -> Step {
        match r {
            CacheReply::Fresh(_) => {
                self.tag(End::Hit, Cause::Served);
                self.answer(Ending::Hit, false)
            }
            CacheReply::FreshUntil {
                value,
                expires_at,
                delta,
                draw,
            } => {
                if xfetch_due(now, expires_at, delta, s.xfetch_beta, draw) {
                    // Answer the fresh value now and refresh it behind
                    // the answer, before it expires: nobody meets a miss.
                    self.early = true;
                    self.stale = Some(value);
                    self.tag(End::Hit, Cause::Served);
                    self.respond = Some((Ending::Hit, false));
                    self.phase = Phase::RefreshLead;
                    self.emit_respond()
                } else {
                    self.tag(End::Hit, Cause::Served);
                    self.answer(Ending::Hit, false)
                }
            }
            // A recent failure damps the refresh; what may be served is.
            CacheReply::Negative(Some(_)) => {
                self.tag(End::Stale, Cause::Marker);
                self.answer(Ending::Stale, false)
            }
            CacheReply::Negative(None) => {
                self.tag(End::Error, Cause::Marker);
                self.answer(Ending::Error, false)
            }
            CacheReply::Stale(v) => {
                self.stale = Some(v);
                if s.stale_while_revalidate {
                    self.tag(End::Stale, Cause::Revalidating);
                    self.respond = Some((Ending::Stale, false));
                    self.phase = Phase::RefreshLead;
                    self.emit_respond()
                } else {
                    self.miss(s)
                }
            }
            CacheReply::Miss | CacheReply::Error => self.miss(s),
        }
    }

    /// `RefreshLead`, the answer acknowledged (and no flight led yet): start
    /// the refresh behind it.
    fn on_refresh_answered(&mut self, s: &Strategy) -> Step {
        // The stale answer is out; now refresh behind it, at most one
        // refresher per instance and (with a claim) per fleet.
        if s.singleflight {
            self.fkey = self.flight_key(s);
            Step::TryLead { key: self.fkey }
        } else {
            self.refresh_claim(s)
        }
    }

    /// `RefreshLead`: `TryLead` answered. Leading, go claim; any other
    /// answer means someone on this instance refreshes already.
    fn on_refresh_lead(&mut self, s: &Strategy, r: FlightReply) -> Step {
        match r {
            FlightReply::Lead(t) => {
                self.leader = Some(t);
                self.refresh_claim(s)
            }
            _ => self.finish(),
        }
    }

    /// `RefreshClaim`: the refresh's claim answered. Won (or Redis failed
    /// open), recompute; otherwise someone else refreshes.
    fn on_refresh_claim(&mut self, s: &Strategy, r: ClaimReply) -> Step {
        self.claim_in_flight = false;
        match r {
            ClaimReply::TimedOut if s.release_timed_out_claims => self.unclaim(true),
            ClaimReply::TimedOut => self.on_refresh_claim(s, ClaimReply::Error),
            ClaimReply::Won { fence } => {
                self.fence = Some(fence);
                self.token = Some(self.pending_token());
                self.recompute(s)
            }
            ClaimReply::Error if s.redis_error == RedisErrorPolicy::Open => self.recompute(s),
            _ => {
                // Someone else refreshes. Anyone who attached to our
                // flight meanwhile gets the value we hold.
                let cause = if r == ClaimReply::Error {
                    Cause::RedisFailed
                } else {
                    Cause::ClaimHeld
                };
                self.work_cause = cause;
                let v = self.fallback().unwrap_or(Outcome::Degraded);
                self.conclude(v, None)
            }
        }
    }

    /// `Flight`: joining the instance's flight answered. Lead (claiming
    /// first if the strategy says so), take over a departed leader's
    /// flight, take the shared outcome, or compute when the flight is busy.
    fn on_flight(&mut self, s: &Strategy, r: FlightReply) -> Step {
        match r {
            FlightReply::Lead(t) => {
                self.leader = Some(t);
                if self.token.is_some() || !self.claims_on_lead(s) {
                    // Outer mode already holds (or lost and computes).
                    self.recompute(s)
                } else {
                    self.claim(s)
                }
            }
            FlightReply::Promoted(t) => {
                self.leader = Some(t);
                if self.token.is_some() || !self.claims_on_lead(s) {
                    self.recompute(s)
                } else {
                    // The leader left while the claim was someone else's
                    // or in doubt: look before claiming, exactly as a
                    // waiting loser does.
                    self.phase = Phase::PollRead;
                    Step::Poll { key: self.key }
                }
            }
            FlightReply::Shared(o) => {
                let (e, c) = ending_of_shared(o);
                let end = match o {
                    Outcome::Fresh(_) => End::Shared,
                    Outcome::Stale(_) => End::Stale,
                    Outcome::Degraded => End::Degraded,
                    Outcome::Failed(_) => End::Error,
                };
                self.by_flight = true;
                self.tag(end, Cause::Served);
                self.respond = Some((e, c));
                self.wrap_up()
            }
            FlightReply::Busy => self.recompute(s),
        }
    }

    /// `Claim`: the claim answered. Won (or Redis failed open), go on;
    /// held by someone else (or Redis failed closed), lose and wait.
    fn on_claim(&mut self, s: &Strategy, r: ClaimReply, now: Micros) -> Step {
        self.claim_in_flight = false;
        self.redis_failed = matches!(r, ClaimReply::Error | ClaimReply::TimedOut);
        match r {
            ClaimReply::TimedOut if s.release_timed_out_claims => self.unclaim(false),
            ClaimReply::TimedOut => self.on_claim(s, ClaimReply::Error, now),
            ClaimReply::Won { fence } => {
                self.fence = Some(fence);
                self.token = Some(self.pending_token());
                self.after_claim(s)
            }
            ClaimReply::Held => self.lose(s, now),
            ClaimReply::Error => match s.redis_error {
                RedisErrorPolicy::Open => self.after_claim(s),
                RedisErrorPolicy::Closed => self.lose(s, now),
            },
        }
    }

    /// `Admit`, admitted: call the origin.
    fn on_admitted(&mut self, s: &Strategy) -> Step {
        self.phase = Phase::Origin;
        Step::Recompute {
            key: self.key,
            timeout: s.origin_timeout,
        }
    }

    /// `Admit`, shed: no permit came in time.
    fn on_shed(&mut self) -> Step {
        // Admission control's explicit answer, for everyone waiting
        // on this flight: what is stale if there is one, else degraded.
        match self.fallback() {
            Some(o) => {
                self.tag(End::Stale, Cause::Admission);
                self.conclude(o, Some((Ending::Stale, false)))
            }
            None => {
                self.tag(End::Degraded, Cause::Admission);
                self.conclude(Outcome::Degraded, Some((Ending::Degraded, false)))
            }
        }
    }

    /// `Origin`: the recompute answered. A value is written and shared; a
    /// failure leaves a negative marker (if configured) and serves stale
    /// if there is one.
    fn on_origin(&mut self, s: &Strategy, r: Result<Value, Failure>, now: Micros) -> Step {
        match r {
            Ok(v) => {
                // A refresh's whole length: from the commit (re-check,
                // admission, origin) plus the claim before it and the
                // write after it, a round trip each.
                let delta = now.saturating_sub(self.commit_at) + 2 * s.rtt;
                self.write = Write::Value(v, delta);
                self.tag(End::Computed, Cause::Served);
                self.conclude(Outcome::Fresh(v), Some((Ending::Computed, false)))
            }
            Err(f) => {
                let cause = match f {
                    Failure::Origin => Cause::OriginFailed,
                    Failure::Timeout => Cause::OriginTimedOut,
                    Failure::Crashed => Cause::Crashed,
                };
                if let Some(ttl) = s.negative_ttl {
                    self.write = Write::Negative(ttl);
                }
                match self.fallback() {
                    // Stale-if-error: a servable value beats an error,
                    // for the leader and for everyone attached to it.
                    Some(o) => {
                        self.tag(End::Stale, cause);
                        self.conclude(o, Some((Ending::Stale, false)))
                    }
                    None => {
                        self.tag(End::Error, cause);
                        self.conclude(Outcome::Failed(f), Some((Ending::Error, false)))
                    }
                }
            }
        }
    }

    /// `Recheck`: the cache read once more after committing. Someone
    /// else's fresh value (or marker) ends the work; otherwise recompute.
    fn on_recheck(&mut self, s: &Strategy, r: CacheReply) -> Step {
        match r {
            // An early refresh reads its own, still fresh value back:
            // only a newer one means someone refreshed already.
            CacheReply::FreshUntil { value, .. } | CacheReply::Fresh(value)
                if self.early && Some(value) == self.stale =>
            {
                self.recompute(s)
            }
            CacheReply::Fresh(v) | CacheReply::FreshUntil { value: v, .. } => {
                self.tag(End::Written, Cause::Served);
                self.conclude(Outcome::Fresh(v), Some((Ending::Hit, false)))
            }
            CacheReply::Negative(Some(v)) => {
                self.tag(End::Stale, Cause::Marker);
                self.conclude(Outcome::Stale(v), Some((Ending::Stale, false)))
            }
            CacheReply::Negative(None) => {
                self.tag(End::Error, Cause::Marker);
                self.conclude(
                    Outcome::Failed(Failure::Origin),
                    Some((Ending::Error, false)),
                )
            }
            _ => self.recompute(s),
        }
    }

    /// `PollSleep`, woken: poll again.
    fn on_poll_woke(&mut self) -> Step {
        self.phase = Phase::PollRead;
        Step::Poll { key: self.key }
    }

    /// `PollRead`: a loser's poll answered. Take the winner's value (or
    /// marker), take the claim if it is free, or keep polling.
    fn on_poll_read(
        &mut self,
        s: &Strategy,
        cache: CacheReply,
        claim_free: bool,
        now: Micros,
    ) -> Step {
        match cache {
            CacheReply::Fresh(v) | CacheReply::FreshUntil { value: v, .. } => {
                self.tag(End::Written, Cause::Served);
                self.conclude(Outcome::Fresh(v), Some((Ending::Hit, false)))
            }
            CacheReply::Negative(Some(v)) => {
                self.tag(End::Stale, Cause::Marker);
                self.conclude(Outcome::Stale(v), Some((Ending::Stale, false)))
            }
            CacheReply::Negative(None) => {
                self.tag(End::Error, Cause::Marker);
                self.conclude(
                    Outcome::Failed(Failure::Origin),
                    Some((Ending::Error, false)),
                )
            }
            // A poll Redis could not answer follows the Redis error
            // policy, as a failed claim does: open, the claim is tried
            // (and won open if Redis still cannot answer); closed, keep
            // waiting.
            CacheReply::Error if s.redis_error == RedisErrorPolicy::Open => self.claim(s),
            // Nothing to read and nobody holds the claim: its holder
            // finished without a value (it failed) or is gone (its
            // claim expired). Take it instead of polling until the
            // deadline.
            _ if claim_free => self.claim(s),
            _ => self.poll(s, now),
        }
    }

    /// Any input the current state does not expect is a driver bug;
    /// finishing is the safe answer because it never strands a flight's
    /// followers.
    fn unexpected(&mut self, input: Input) -> Step {
        debug_assert!(false, "unexpected {input:?} in {:?}", self.phase);
        self.tag(End::Error, Cause::Crashed);
        self.conclude(
            Outcome::Failed(Failure::Crashed),
            Some((Ending::Error, false)),
        )
    }

    /// A claim timed out: release it by its token before going on as
    /// after an error (the claim might have been taken, or be taken when a
    /// paused Redis resumes; compare-and-delete makes the release safe
    /// either way).
    fn unclaim(&mut self, refresh: bool) -> Step {
        self.phase = Phase::Unclaim { refresh };
        Step::Unclaim {
            key: self.key,
            token: self.pending_token(),
        }
    }

    fn pending_token(&self) -> Token {
        Token((self.id << 16) | self.attempts as u64)
    }

    fn miss(&mut self, s: &Strategy) -> Step {
        if s.claim == ClaimMode::Outer {
            self.claim(s)
        } else if s.singleflight {
            self.join(s)
        } else if self.claims_on_lead(s) {
            self.claim(s)
        } else {
            self.recompute(s)
        }
    }

    fn join(&mut self, s: &Strategy) -> Step {
        self.phase = Phase::Flight;
        self.fkey = self.flight_key(s);
        Step::JoinFlight { key: self.fkey }
    }

    fn claim(&mut self, s: &Strategy) -> Step {
        self.phase = Phase::Claim;
        self.claim_in_flight = true;
        let token = self.next_token();
        Step::Claim {
            key: self.key,
            token,
            ttl: s.claim_ttl,
        }
    }

    /// Won the claim (or Redis failed and we fail open).
    fn after_claim(&mut self, s: &Strategy) -> Step {
        if s.claim == ClaimMode::Outer && s.singleflight && self.leader.is_none() {
            self.join(s)
        } else {
            self.recompute(s)
        }
    }

    fn refresh_claim(&mut self, s: &Strategy) -> Step {
        if s.claim == ClaimMode::Off {
            return self.recompute(s);
        }
        self.phase = Phase::RefreshClaim;
        self.claim_in_flight = true;
        let token = self.next_token();
        Step::Claim {
            key: self.key,
            token,
            ttl: s.claim_ttl,
        }
    }

    /// Commits to the work: from here on the caller's deadline ends only
    /// the caller's wait.
    fn recompute(&mut self, s: &Strategy) -> Step {
        self.committed = true;
        if !self.checked && (self.leader.is_some() || self.token.is_some()) {
            // Double-check after winning: the first GET may have missed just
            // before the previous leader's write landed, and leading again
            // would recompute a value that is already there.
            self.checked = true;
            self.phase = Phase::Recheck;
            return Step::CacheGet { key: self.key };
        }
        if s.admission {
            self.phase = Phase::Admit;
            Step::Admit {
                max_wait: s.admission_wait,
            }
        } else {
            self.phase = Phase::Origin;
            Step::Recompute {
                key: self.key,
                timeout: s.origin_timeout,
            }
        }
    }

    /// The claim went to someone else (or Redis refused and we fail closed).
    fn lose(&mut self, s: &Strategy, now: Micros) -> Step {
        let cause = if self.redis_failed {
            Cause::RedisFailed
        } else {
            Cause::ClaimHeld
        };
        match s.loser {
            LoserPolicy::Stale => match self.stale {
                Some(v) => {
                    self.tag(End::Stale, cause);
                    self.conclude(Outcome::Stale(v), Some((Ending::Stale, false)))
                }
                // Nothing to serve: compute rather than queue behind a lock.
                None => self.compute_anyway(s),
            },
            LoserPolicy::Degrade => {
                self.tag(End::Degraded, cause);
                self.conclude(Outcome::Degraded, Some((Ending::Degraded, false)))
            }
            LoserPolicy::Compute => self.compute_anyway(s),
            LoserPolicy::Wait => self.poll(s, now),
        }
    }

    fn compute_anyway(&mut self, s: &Strategy) -> Step {
        if s.claim == ClaimMode::Outer && s.singleflight && self.leader.is_none() {
            // Losers of an outer claim still coalesce inside their instance.
            self.join(s)
        } else {
            self.recompute(s)
        }
    }

    fn poll(&mut self, s: &Strategy, now: Micros) -> Step {
        let wake = now.saturating_add(s.poll);
        match self.deadline_at {
            Some(d) if wake.saturating_add(s.rtt) > d => {
                // Another read could not come back in time: wait out the
                // budget and give up exactly at the deadline.
                self.phase = Phase::Expire;
                Step::Sleep { until: d.max(now) }
            }
            _ => {
                self.phase = Phase::PollSleep;
                Step::Sleep { until: wake }
            }
        }
    }

    /// The caller's deadline. Committed work carries on and only the caller
    /// is answered; otherwise the request leaves whatever it was waiting on
    /// and cleans up behind itself: a leader hands its flight to the oldest
    /// follower, and a claim it holds, or asked for and has not heard back
    /// about, is released with its token (compare-and-delete makes that safe
    /// whether or not the `SET NX` won).
    fn on_deadline(&mut self, _s: &Strategy, _now: Micros) -> Step {
        if self.phase == Phase::Done {
            return Step::Finish;
        }
        if self.committed {
            if self.responded {
                return Step::Wait;
            }
            self.entry = (End::Timeout, Cause::WaitedFlight);
            self.responded = true;
            self.detaching = true;
            // An answer the work had lined up (mid wrap-up) is never sent.
            self.respond = None;
            return Step::Respond {
                ending: Ending::Timeout,
                corrupted: false,
            };
        }
        if self.claim_in_flight {
            self.claim_in_flight = false;
            self.token = Some(self.pending_token());
        }
        if self.leader.is_some() {
            self.abandon = true;
        }
        if !self.responded {
            self.entry = (End::Timeout, Cause::WaitedFlight);
            self.respond = Some((Ending::Timeout, false));
        }
        self.wrap_up()
    }

    /// Records what followers get and what the caller gets, then runs the
    /// wrap-up sequence.
    fn conclude(&mut self, outcome: Outcome, respond: Option<(Ending, bool)>) -> Step {
        if self.leader.is_some() {
            self.settle = Some(outcome);
        }
        if !self.responded {
            self.respond = respond;
        }
        self.wrap_up()
    }

    fn answer(&mut self, e: Ending, corrupted: bool) -> Step {
        self.respond = Some((e, corrupted));
        self.wrap_up()
    }

    fn emit_respond(&mut self) -> Step {
        let (ending, corrupted) = self.respond.take().unwrap_or((Ending::Error, false));
        self.responded = true;
        Step::Respond { ending, corrupted }
    }

    /// write -> settle (or abandon) -> respond -> release -> finish,
    /// skipping what does not apply. The value reaches the cache before the
    /// flight settles, so a caller arriving right after the settle finds it
    /// instead of leading a second recompute; the claim is released last for
    /// the same reason, and so a poller that finds the claim free never
    /// finds the value missing because it was still on its way.
    fn wrap_up(&mut self) -> Step {
        self.phase = Phase::WrapUp;
        match std::mem::replace(&mut self.write, Write::None) {
            Write::Value(value, delta) => {
                return Step::CacheSet {
                    key: self.key,
                    value,
                    delta,
                    fence: self.fence.filter(|_| self.fenced),
                }
            }
            Write::Negative(ttl) => return Step::CacheSetNegative { key: self.key, ttl },
            Write::None => {}
        }
        if let Some(ticket) = self.leader {
            if let Some(outcome) = self.settle.take() {
                self.leader = None;
                return Step::SettleFlight {
                    key: self.fkey,
                    ticket,
                    outcome,
                };
            }
            if std::mem::take(&mut self.abandon) {
                self.leader = None;
                return Step::AbandonFlight {
                    key: self.fkey,
                    ticket,
                };
            }
        }
        if self.respond.is_some() {
            return self.emit_respond();
        }
        if let Some(token) = self.token.take() {
            return Step::Release {
                key: self.key,
                token,
            };
        }
        self.finish()
    }

    fn finish(&mut self) -> Step {
        self.phase = Phase::Done;
        Step::Finish
    }
}

/// Where a request stands on its read path, as a listing of the path marks
/// it: told by the core from the steps the request performed, in the order
/// it performed them, never guessed from what is drawn. A driver that only
/// sees the fleet's event log (the page) follows a request with
/// [`Place::after`], one event at a time.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Place {
    /// Not started (or not seen yet).
    #[default]
    None = 0,
    /// A request arrived (or a retry began): `handle(key)`.
    Arrived,
    /// `GET key` sent.
    Reading,
    /// Answered with the fresh value it read.
    Served,
    /// Leads its in-process flight.
    Leading,
    /// Attached to its flight: waits for the leader's result.
    Following,
    /// `SET lock:key token NX PX ttl` sent (or its reply was an error).
    Claiming,
    /// Won the claim: `if won:`.
    Won,
    /// Reads the cache once more after winning its flight or its claim (a
    /// caller whose first read missed just before the last holder's write).
    Rechecking,
    /// The origin call (from its start to its answer or its timeout).
    Recomputing,
    /// `SET key v` sent.
    Writing,
    /// Hands the value to every waiter of its flight.
    Settling,
    /// The claim's compare-and-delete release sent.
    Releasing,
    /// Lost the claim (or polls for the winner's value): the loser's branch.
    Losing,
    /// Crashed (the claim holder dying as it wins).
    Crashed,
}

impl Place {
    /// Where a request is after it logged `kind` (with its `detail`), from
    /// where it was. Events that do not move a request keep its place: a
    /// deadline, a handover, a shed permit, an answer (which comes from the
    /// line the request is on; only a first read's fresh hit moves it, to
    /// `Served`).
    pub fn after(self, kind: crate::trace::EventKind, detail: u8) -> Place {
        use crate::trace::EventKind as E;
        match kind {
            E::Arrive | E::Retry => Place::Arrived,
            E::CacheGet if matches!(self, Place::Leading | Place::Won) => Place::Rechecking,
            E::CacheGet => Place::Reading,
            E::Lead => Place::Leading,
            E::Follow | E::Remembered => Place::Following,
            E::Claim | E::ClaimError => Place::Claiming,
            E::ClaimWon => Place::Won,
            E::ClaimLost | E::Poll => Place::Losing,
            E::RecomputeStart | E::RecomputeEnd | E::OriginTimeout => Place::Recomputing,
            E::CacheSet => Place::Writing,
            E::Settle => Place::Settling,
            E::Release => Place::Releasing,
            E::Crash => Place::Crashed,
            E::Respond if self == Place::Reading && detail == Ending::Hit as u8 => Place::Served,
            E::Respond | E::DeadlinePassed | E::Handover | E::Shed => self,
        }
    }
}

/// Every thread's [`Place`], kept from a fleet's event log, and the first
/// thread that won a claim (the one a "follow the claim holder" follows,
/// even when it dies in the instant it wins) with where each crash was.
#[derive(Clone, Debug, Default)]
pub struct Places {
    at: Vec<Place>,
    first_winner: Option<u32>,
    /// (thread, virtual time) of each crash, in order.
    crashes: Vec<(u32, Micros)>,
}

impl Places {
    /// Takes one logged event into account.
    pub fn record(&mut self, e: &crate::trace::Event) {
        let i = e.thread as usize;
        if i >= self.at.len() {
            self.at.resize(i + 1, Place::None);
        }
        self.at[i] = self.at[i].after(e.kind, e.detail);
        match e.kind {
            crate::trace::EventKind::ClaimWon if self.first_winner.is_none() => {
                self.first_winner = Some(e.thread)
            }
            crate::trace::EventKind::Crash if self.crashes.len() < 64 => {
                self.crashes.push((e.thread, e.t))
            }
            _ => {}
        }
    }

    /// Where thread `thread` (its global index) is.
    pub fn of(&self, thread: u32) -> Place {
        self.at.get(thread as usize).copied().unwrap_or_default()
    }

    /// The first thread that won a claim, once one has.
    pub fn first_winner(&self) -> Option<u32> {
        self.first_winner
    }

    /// When thread `thread` last crashed, if it did.
    pub fn crashed_at(&self, thread: u32) -> Option<Micros> {
        self.crashes
            .iter()
            .rev()
            .find(|(t, _)| *t == thread)
            .map(|(_, at)| *at)
    }
}

#[cfg(test)]
mod tests {
    //! The machine stepped by hand, one input at a time: the order of the
    //! layers and the wrap-up sequence are pinned here exactly.
    use super::*;
    use crate::scenario::Scenario;

    fn strategy(f: impl FnOnce(&mut Scenario)) -> Strategy {
        let mut s = Scenario::default();
        f(&mut s);
        Strategy::from_scenario(&s)
    }

    fn token_of(step: Step) -> Token {
        match step {
            Step::Claim { token, .. } => token,
            other => panic!("expected a claim, got {other:?}"),
        }
    }

    fn lead() -> LeaderTicket {
        // Tickets come from a real table.
        let mut t: crate::flight::FlightTable<u64, u32> =
            crate::flight::FlightTable::new(Default::default());
        match t.join(0, 1) {
            crate::flight::Join::Lead(l) => l,
            _ => unreachable!(),
        }
    }

    #[test]
    fn inner_claim_is_taken_by_the_flight_leader_only() {
        let s = strategy(|_| {});
        let mut p = ReadPath::new(&s, 42, 7, 0);
        assert_eq!(p.resume(&s, Input::Start, 0), Step::CacheGet { key: 42 });
        assert_eq!(
            p.resume(&s, Input::Cache(CacheReply::Miss), 1),
            Step::JoinFlight { key: 42 }
        );
        let t = lead();
        let token = token_of(p.resume(&s, Input::Flight(FlightReply::Lead(t)), 1));
        // Won: re-check the cache before paying for a recompute.
        assert_eq!(
            p.resume(&s, Input::Claim(ClaimReply::Won { fence: 1 }), 2),
            Step::CacheGet { key: 42 }
        );
        assert_eq!(
            p.resume(&s, Input::Cache(CacheReply::Miss), 3),
            Step::Recompute {
                key: 42,
                timeout: Some(3_000_000)
            }
        );
        let v = Value::fresh(42, 1);
        assert_eq!(
            p.resume(&s, Input::Origin(Ok(v)), 200),
            Step::CacheSet {
                key: 42,
                value: v,
                delta: (200 - 2) + 2 * 1000,
                fence: None
            }
        );
        assert_eq!(
            p.resume(&s, Input::Ack, 201),
            Step::SettleFlight {
                key: 42,
                ticket: t,
                outcome: Outcome::Fresh(v)
            }
        );
        assert_eq!(
            p.resume(&s, Input::Ack, 201),
            Step::Respond {
                ending: Ending::Computed,
                corrupted: false
            }
        );
        assert_eq!(
            p.resume(&s, Input::Ack, 201),
            Step::Release { key: 42, token }
        );
        assert_eq!(p.resume(&s, Input::Ack, 202), Step::Finish);
        assert!(p.is_done());
    }

    #[test]
    fn outer_claim_comes_before_the_flight() {
        let s = strategy(|s| s.claim = ClaimMode::Outer);
        let mut p = ReadPath::new(&s, 1, 7, 0);
        p.resume(&s, Input::Start, 0);
        assert!(matches!(
            p.resume(&s, Input::Cache(CacheReply::Miss), 1),
            Step::Claim { .. }
        ));
        assert_eq!(
            p.resume(&s, Input::Claim(ClaimReply::Won { fence: 1 }), 2),
            Step::JoinFlight { key: 1 }
        );
    }

    #[test]
    fn a_follower_that_times_out_just_answers_timeout() {
        let s = strategy(|_| {});
        let mut p = ReadPath::new(&s, 1, 7, 0);
        p.resume(&s, Input::Start, 0);
        p.resume(&s, Input::Cache(CacheReply::Miss), 1);
        assert_eq!(p.deadline(), Some(1_000_000));
        assert_eq!(
            p.resume(&s, Input::DeadlinePassed, 1_000_000),
            Step::Respond {
                ending: Ending::Timeout,
                corrupted: false
            }
        );
        assert_eq!(p.resume(&s, Input::Ack, 1_000_000), Step::Finish);
    }

    #[test]
    fn a_failed_leader_shares_the_failure_and_releases() {
        let s = strategy(|s| s.negative_ttl_ms = 500);
        let mut p = ReadPath::new(&s, 1, 7, 0);
        p.resume(&s, Input::Start, 0);
        p.resume(&s, Input::Cache(CacheReply::Miss), 1);
        let t = lead();
        let token = token_of(p.resume(&s, Input::Flight(FlightReply::Lead(t)), 1));
        p.resume(&s, Input::Claim(ClaimReply::Won { fence: 1 }), 2);
        p.resume(&s, Input::Cache(CacheReply::Miss), 3);
        let f = Outcome::Failed(Failure::Origin);
        assert_eq!(
            p.resume(&s, Input::Origin(Err(Failure::Origin)), 9),
            Step::CacheSetNegative {
                key: 1,
                ttl: 500_000
            }
        );
        assert_eq!(
            p.resume(&s, Input::Ack, 10),
            Step::SettleFlight {
                key: 1,
                ticket: t,
                outcome: f
            }
        );
        assert!(matches!(
            p.resume(&s, Input::Ack, 10),
            Step::Respond {
                ending: Ending::Error,
                ..
            }
        ));
        assert_eq!(
            p.resume(&s, Input::Ack, 10),
            Step::Release { key: 1, token }
        );
    }

    #[test]
    fn losers_follow_their_policy() {
        let cases = [
            (LoserPolicy::Degrade, Ending::Degraded),
            (LoserPolicy::Stale, Ending::Stale),
        ];
        for (policy, want) in cases {
            let s = strategy(|s| s.loser = policy);
            let mut p = ReadPath::new(&s, 1, 7, 0);
            p.resume(&s, Input::Start, 0);
            let stale = Value::fresh(1, 0);
            p.resume(&s, Input::Cache(CacheReply::Stale(stale)), 1);
            let t = lead();
            p.resume(&s, Input::Flight(FlightReply::Lead(t)), 1);
            let step = p.resume(&s, Input::Claim(ClaimReply::Held), 2);
            assert!(matches!(step, Step::SettleFlight { .. }), "{policy:?}");
            assert_eq!(
                p.resume(&s, Input::Ack, 2),
                Step::Respond {
                    ending: want,
                    corrupted: false
                }
            );
        }
        // Wait: poll the cache, and do not re-claim while the claim is surely live.
        let s = strategy(|s| s.loser = LoserPolicy::Wait);
        let mut p = ReadPath::new(&s, 1, 7, 0);
        p.resume(&s, Input::Start, 0);
        p.resume(&s, Input::Cache(CacheReply::Miss), 1);
        p.resume(&s, Input::Flight(FlightReply::Lead(lead())), 1);
        assert_eq!(
            p.resume(&s, Input::Claim(ClaimReply::Held), 2),
            Step::Sleep { until: 50_002 }
        );
        assert_eq!(p.resume(&s, Input::Woke, 50_002), Step::Poll { key: 1 });
        let polled = |free| Input::Polled {
            cache: CacheReply::Miss,
            claim_free: free,
        };
        assert_eq!(
            p.resume(&s, polled(false), 50_003),
            Step::Sleep { until: 100_003 }
        );
        // The claim came free and still no value: take it.
        p.resume(&s, Input::Woke, 100_003);
        assert!(matches!(
            p.resume(&s, polled(true), 100_004),
            Step::Claim { .. }
        ));
    }

    /// A poll Redis cannot answer follows the Redis error policy, as a
    /// failed claim does: failing open it claims (and computes, open, if
    /// Redis still cannot answer); failing closed it keeps waiting.
    #[test]
    fn a_failed_poll_follows_the_redis_error_policy() {
        for (policy, claims) in [
            (RedisErrorPolicy::Open, true),
            (RedisErrorPolicy::Closed, false),
        ] {
            let s = strategy(|s| {
                s.loser = LoserPolicy::Wait;
                s.redis_error = policy;
            });
            let mut p = ReadPath::new(&s, 1, 7, 0);
            p.resume(&s, Input::Start, 0);
            p.resume(&s, Input::Cache(CacheReply::Miss), 1);
            p.resume(&s, Input::Flight(FlightReply::Lead(lead())), 1);
            p.resume(&s, Input::Claim(ClaimReply::Held), 2);
            assert_eq!(p.resume(&s, Input::Woke, 50_002), Step::Poll { key: 1 });
            let failed = Input::Polled {
                cache: CacheReply::Error,
                claim_free: false,
            };
            let next = p.resume(&s, failed, 50_003);
            assert_eq!(
                matches!(next, Step::Claim { .. }),
                claims,
                "{policy:?}: {next:?}"
            );
            if !claims {
                assert!(matches!(next, Step::Sleep { .. }), "{next:?}");
            }
        }
    }

    /// Drives a request to the point where it leads, holds the claim and
    /// has asked the origin.
    fn holder(s: &Strategy, t: LeaderTicket) -> (ReadPath, Token) {
        let mut p = ReadPath::new(s, 1, 7, 0);
        p.resume(s, Input::Start, 0);
        p.resume(s, Input::Cache(CacheReply::Miss), 1);
        let token = token_of(p.resume(s, Input::Flight(FlightReply::Lead(t)), 1));
        p.resume(s, Input::Claim(ClaimReply::Won { fence: 1 }), 2);
        assert!(matches!(
            p.resume(s, Input::Cache(CacheReply::Miss), 3),
            Step::Recompute { .. }
        ));
        (p, token)
    }

    #[test]
    fn a_deadline_ends_the_callers_wait_not_the_work() {
        let s = strategy(|_| {});
        let t = lead();
        let (mut p, token) = holder(&s, t);
        assert!(p.work_outlives_caller());
        assert_eq!(
            p.resume(&s, Input::DeadlinePassed, 1_000_000),
            Step::Respond {
                ending: Ending::Timeout,
                corrupted: false
            }
        );
        assert_eq!(p.resume(&s, Input::Ack, 1_000_000), Step::Wait);
        assert_eq!(p.deadline(), None, "the caller has its answer");
        // The origin answers later: the value is written, the flight
        // settled for whoever is still attached, and only then released.
        let v = Value::fresh(1, 1);
        assert_eq!(
            p.resume(&s, Input::Origin(Ok(v)), 1_500_000),
            Step::CacheSet {
                key: 1,
                value: v,
                delta: (1_500_000 - 2) + 2 * 1000,
                fence: None
            }
        );
        assert_eq!(
            p.resume(&s, Input::Ack, 1_500_001),
            Step::SettleFlight {
                key: 1,
                ticket: t,
                outcome: Outcome::Fresh(v)
            }
        );
        assert_eq!(
            p.resume(&s, Input::Ack, 1_500_001),
            Step::Release { key: 1, token }
        );
        assert_eq!(p.resume(&s, Input::Ack, 1_500_002), Step::Finish);
    }

    #[test]
    fn an_origin_timeout_fails_the_flight_and_frees_the_claim() {
        let s = strategy(|_| {});
        let t = lead();
        let (mut p, token) = holder(&s, t);
        assert!(matches!(
            p.resume(&s, Input::Origin(Err(Failure::Timeout)), 3_000_003),
            Step::SettleFlight {
                outcome: Outcome::Failed(Failure::Timeout),
                ..
            }
        ));
        p.resume(&s, Input::Ack, 3_000_003);
        assert_eq!(
            p.resume(&s, Input::Ack, 3_000_003),
            Step::Release { key: 1, token }
        );
        // Under the no-deadline pitfall there is no origin timeout either.
        let s = strategy(|s| s.pitfalls.no_deadline = true);
        assert_eq!(s.deadline, None);
        assert_eq!(s.origin_timeout, None);
    }

    #[test]
    fn a_leader_that_gives_up_before_working_hands_over_and_releases() {
        let s = strategy(|_| {});
        let t = lead();
        let mut p = ReadPath::new(&s, 1, 7, 0);
        p.resume(&s, Input::Start, 0);
        p.resume(&s, Input::Cache(CacheReply::Miss), 1);
        let token = token_of(p.resume(&s, Input::Flight(FlightReply::Lead(t)), 1));
        // The SET NX reply has not come back when the deadline passes.
        assert!(!p.work_outlives_caller());
        assert_eq!(
            p.resume(&s, Input::DeadlinePassed, 1_000_000),
            Step::AbandonFlight { key: 1, ticket: t }
        );
        assert!(matches!(
            p.resume(&s, Input::Ack, 1_000_000),
            Step::Respond {
                ending: Ending::Timeout,
                ..
            }
        ));
        assert_eq!(
            p.resume(&s, Input::Ack, 1_000_000),
            Step::Release { key: 1, token },
            "the token it sent, whether or not it won"
        );
        // The follower that takes over looks before it claims.
        let mut q = ReadPath::new(&s, 1, 8, 0);
        q.resume(&s, Input::Start, 0);
        q.resume(&s, Input::Cache(CacheReply::Miss), 1);
        assert_eq!(
            q.resume(&s, Input::Flight(FlightReply::Promoted(lead())), 1_000_000),
            Step::Poll { key: 1 }
        );
    }

    #[test]
    fn a_negative_marker_never_hides_a_stale_value() {
        let s = strategy(|s| s.stale_while_revalidate = true);
        let mut p = ReadPath::new(&s, 1, 7, 0);
        p.resume(&s, Input::Start, 0);
        let v = Value::fresh(1, 0);
        assert_eq!(
            p.resume(&s, Input::Cache(CacheReply::Negative(Some(v))), 1),
            Step::Respond {
                ending: Ending::Stale,
                corrupted: false
            }
        );
        assert_eq!(p.resume(&s, Input::Ack, 1), Step::Finish, "no refresh");
        let mut p = ReadPath::new(&s, 1, 8, 0);
        p.resume(&s, Input::Start, 0);
        assert!(matches!(
            p.resume(&s, Input::Cache(CacheReply::Negative(None)), 1),
            Step::Respond {
                ending: Ending::Error,
                ..
            }
        ));
    }

    #[test]
    fn a_failed_leader_with_a_stale_value_shares_the_stale_value() {
        let s = strategy(|_| {});
        let t = lead();
        let mut p = ReadPath::new(&s, 1, 7, 0);
        p.resume(&s, Input::Start, 0);
        let v = Value::fresh(1, 0);
        p.resume(&s, Input::Cache(CacheReply::Stale(v)), 1);
        p.resume(&s, Input::Flight(FlightReply::Lead(t)), 1);
        p.resume(&s, Input::Claim(ClaimReply::Won { fence: 1 }), 2);
        p.resume(&s, Input::Cache(CacheReply::Stale(v)), 3);
        assert_eq!(
            p.resume(&s, Input::Origin(Err(Failure::Origin)), 200),
            Step::SettleFlight {
                key: 1,
                ticket: t,
                outcome: Outcome::Stale(v)
            }
        );
    }

    #[test]
    fn refresh_mode_claims_only_a_refresh() {
        let s = strategy(|s| s.claim = ClaimMode::Refresh);
        // A cold miss leads and computes without touching the claim.
        let mut p = ReadPath::new(&s, 1, 7, 0);
        p.resume(&s, Input::Start, 0);
        p.resume(&s, Input::Cache(CacheReply::Miss), 1);
        assert_eq!(
            p.resume(&s, Input::Flight(FlightReply::Lead(lead())), 1),
            Step::CacheGet { key: 1 },
            "the re-check, then the origin"
        );
        // A stale value is refreshed under the claim.
        let mut p = ReadPath::new(&s, 1, 8, 0);
        p.resume(&s, Input::Start, 0);
        p.resume(&s, Input::Cache(CacheReply::Stale(Value::fresh(1, 0))), 1);
        assert!(matches!(
            p.resume(&s, Input::Flight(FlightReply::Lead(lead())), 1),
            Step::Claim { .. }
        ));
    }

    #[test]
    fn fail_open_recomputes_fail_closed_loses() {
        let open = strategy(|s| s.redis_error = RedisErrorPolicy::Open);
        let mut p = ReadPath::new(&open, 1, 7, 0);
        p.resume(&open, Input::Start, 0);
        p.resume(&open, Input::Cache(CacheReply::Error), 1);
        p.resume(&open, Input::Flight(FlightReply::Lead(lead())), 1);
        // No token is held, but leadership still earns a re-check.
        assert_eq!(
            p.resume(&open, Input::Claim(ClaimReply::Error), 2),
            Step::CacheGet { key: 1 }
        );
        let closed = strategy(|s| {
            s.redis_error = RedisErrorPolicy::Closed;
            s.loser = LoserPolicy::Degrade
        });
        let mut p = ReadPath::new(&closed, 1, 7, 0);
        p.resume(&closed, Input::Start, 0);
        p.resume(&closed, Input::Cache(CacheReply::Error), 1);
        p.resume(&closed, Input::Flight(FlightReply::Lead(lead())), 1);
        assert!(matches!(
            p.resume(&closed, Input::Claim(ClaimReply::Error), 2),
            Step::SettleFlight {
                outcome: Outcome::Degraded,
                ..
            }
        ));
    }

    /// A claim whose reply timed out may still land: it is released by its
    /// token first, and then the Redis error policy applies as after an
    /// error. Under the knob switched off, it is a plain error.
    #[test]
    fn a_timed_out_claim_is_released_by_its_token_then_fails_open() {
        let s = strategy(|s| s.redis_error = RedisErrorPolicy::Open);
        let mut p = ReadPath::new(&s, 1, 7, 0);
        p.resume(&s, Input::Start, 0);
        p.resume(&s, Input::Cache(CacheReply::Error), 1);
        let token = token_of(p.resume(&s, Input::Flight(FlightReply::Lead(lead())), 1));
        assert_eq!(
            p.resume(&s, Input::Claim(ClaimReply::TimedOut), 101),
            Step::Unclaim { key: 1, token }
        );
        assert!(!p.holds_claim(), "the token is not taken for won");
        assert_eq!(p.resume(&s, Input::Ack, 101), Step::CacheGet { key: 1 });
        let mut off = s;
        off.release_timed_out_claims = false;
        let mut p = ReadPath::new(&off, 1, 7, 0);
        p.resume(&off, Input::Start, 0);
        p.resume(&off, Input::Cache(CacheReply::Error), 1);
        p.resume(&off, Input::Flight(FlightReply::Lead(lead())), 1);
        assert_eq!(
            p.resume(&off, Input::Claim(ClaimReply::TimedOut), 101),
            Step::CacheGet { key: 1 }
        );
    }

    #[test]
    fn key_mismatch_salts_the_flight_key() {
        let s = strategy(|s| s.pitfalls.key_mismatch = true);
        let a = ReadPath::new(&s, 1, 7, 0);
        let b = ReadPath::new(&s, 1, 8, 0);
        assert_ne!(a.flight_key(&s), b.flight_key(&s));
        let s = strategy(|_| {});
        assert_eq!(
            ReadPath::new(&s, 1, 7, 0).flight_key(&s),
            ReadPath::new(&s, 1, 8, 0).flight_key(&s)
        );
    }
}
