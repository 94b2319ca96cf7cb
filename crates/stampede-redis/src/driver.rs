//! The read path on real I/O: each request runs the core's state machine
//! (`stampede::read_path::ReadPath`) in a task of its own, and this module
//! only performs the steps the machine emits — `GET` and the poll against
//! Redis, the claim and its release by script, the in-process flight table,
//! an admission semaphore, the origin, the value write. No stampede rule is
//! decided here: when to claim, when to wait, what a caller gets at its
//! deadline and what the work does after it are all the machine's.
//!
//! The caller gets its answer through a channel the moment the machine says
//! `Respond`; the task goes on with whatever work the machine still has
//! (write, settle, release), so a caller's deadline never cuts the work.
//!
//! Values live in a Redis hash `value:{key}` with the payload, a version,
//! when it stops being fresh and stale (wall-clock ms, shared by every
//! instance), the recompute's delta, a negative-cache mark and the writer's
//! fence.

use std::borrow::Cow;
use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redis::Script;
use stampede::claim::Micros;
use stampede::flight::{Abandoned, FlightPolicy, FlightTable, Join, Value};
use stampede::metrics::Ending;
use stampede::read_path::{
    CacheReply, ClaimReply, FlightKey, FlightReply, Input, ReadPath, Step, Strategy,
};
use stampede::scenario::Scenario;
use tokio::sync::{oneshot, OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::claim::{fence_key, lock_key, value_key, Token, CLAIM_FENCED, RELEASE};
use crate::conn::{Conn, Target};
use crate::group::CatchUnwind;
use crate::obs;

/// A value's content, shared by every caller it answers.
type Payload = Arc<Vec<u8>>;

/// A key the driver can serve: the conformance harness's `u32`, or a
/// service's `String`.
pub trait Key: Clone + Eq + Hash + Send + Sync + 'static {
    /// The key's name inside the Redis keys (`value:{name}`, `lock:{name}`,
    /// `fence:{name}`).
    fn name(&self) -> Cow<'_, str>;

    /// The number the core's state machine carries for this key. The
    /// driver never uses it to find anything (every step is performed for
    /// the request's own key), so any value is correct.
    fn machine_id(&self) -> u32 {
        0
    }
}

impl Key for u32 {
    fn name(&self) -> Cow<'_, str> {
        Cow::Owned(self.to_string())
    }

    fn machine_id(&self) -> u32 {
        *self
    }
}

impl Key for String {
    fn name(&self) -> Cow<'_, str> {
        Cow::Borrowed(self)
    }
}

/// The origin's answer: a key's payload, or why there is none.
pub type OriginFuture = Pin<Box<dyn Future<Output = Result<Vec<u8>, String>> + Send>>;

/// What a service's origin is: anything that computes a key's payload.
pub trait Origin<K = u32>: Send + Sync + 'static {
    fn compute(&self, key: K) -> OriginFuture;
}

/// What a caller gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub ending: Ending,
    /// The payload, for the endings that carry one.
    pub value: Option<Arc<Vec<u8>>>,
}

/// Counts the conformance run compares with the simulation's.
#[derive(Debug, Default)]
pub struct Counters {
    pub requests: AtomicU64,
    pub recomputes: AtomicU64,
    pub claim_attempts: AtomicU64,
    pub claim_wins: AtomicU64,
    pub releases: AtomicU64,
    pub values_written: AtomicU64,
    /// Redis commands that failed or did not answer within [`REDIS_TIMEOUT`].
    pub redis_errors: AtomicU64,
    /// Recomputes shed because no admission permit came in time.
    pub admission_shed: AtomicU64,
    /// Requests whose first read found nothing fresh (a miss or a stale value).
    pub misses: AtomicU64,
    /// Claim holders made to crash (the `holder_crash` fault).
    pub crashed: AtomicU64,
    /// Value writes refused because a newer fence had written.
    pub writes_refused: AtomicU64,
    /// Requests whose task is still running (answered or not: a write, a
    /// settle or a release may still be under way).
    pub running: AtomicU64,
}

/// Counts a request's task as running until it ends, however it ends.
struct RunningTask<'a>(&'a AtomicU64);

impl Drop for RunningTask<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What the driver needs besides the read path's [`Strategy`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Settings {
    pub value_ttl: Duration,
    pub stale: Duration,
    /// TTL jitter as a fraction in [0, 1].
    pub jitter: f64,
    pub xfetch: bool,
    /// Concurrent recomputes allowed per instance (0 = no limit).
    pub admission: usize,
    pub holder_crash: bool,
}

impl Settings {
    pub(crate) fn from_scenario(scenario: &Scenario) -> Settings {
        let ms = |v: u32| Duration::from_millis(u64::from(v));
        Settings {
            value_ttl: ms(scenario.value_ttl_ms),
            stale: ms(scenario.stale_ms),
            jitter: scenario.jitter,
            xfetch: scenario.xfetch_beta > 0.0,
            admission: scenario.admission as usize,
            holder_crash: scenario.holder_crash,
        }
    }
}

/// A parked follower's way back: the flight's reply, and the leader's
/// payload when it settled with a value.
type ParkedReply = (FlightReply, Option<Payload>);

struct Inner<O, K> {
    strategy: Strategy,
    con: Conn,
    release: Script,
    claim: Script,
    write_fenced: Script,
    /// Flights by the request's key and the machine's coalescing key (the
    /// same for every request of a key unless the key-mismatch pitfall
    /// salts it).
    flights: Mutex<FlightTable<(K, FlightKey), u64>>,
    /// Each parked follower's way back, by waiter id. The leader's payload
    /// travels with the reply, so nothing is kept once a flight settles.
    parked: Mutex<HashMap<u64, oneshot::Sender<ParkedReply>>>,
    admission: Option<Arc<Semaphore>>,
    origin: O,
    epoch: Instant,
    value_ttl: Duration,
    stale: Duration,
    /// TTL jitter as a fraction: each written TTL is drawn from
    /// ttl x [1 - j, 1 + j], as the simulation draws it.
    jitter: f64,
    /// XFetch is on: fresh reads carry the expiry, delta and a draw.
    xfetch: bool,
    /// Draws for jitter and XFetch (they only have to vary).
    draws: AtomicU64,
    next_id: AtomicU64,
    counters: Counters,
    /// The `holder_crash` fault: the first claim winner (fleet-wide, through
    /// the shared flag) dies right after winning, without releasing.
    holder_crash: bool,
    crashed: Arc<std::sync::atomic::AtomicBool>,
}

/// One instance's read path: its own flight table and admission limit, a
/// connection to the shared Redis. Cheap to clone.
pub struct Driver<O, K = u32> {
    inner: Arc<Inner<O, K>>,
}

impl<O, K> Clone for Driver<O, K> {
    fn clone(&self) -> Self {
        Driver {
            inner: self.inner.clone(),
        }
    }
}

/// The fenced write of the driver's value hash (payload, version, fresh and
/// stale until, delta), refusing a fence older than the stored one.
const WRITE_FENCED: &str = r"
local current = tonumber(redis.call('HGET', KEYS[1], 'fence') or '0')
if tonumber(ARGV[2]) < current then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'fence', ARGV[2], 'version', ARGV[3],
    'fresh', ARGV[4], 'stale', ARGV[5], 'delta', ARGV[6], 'neg', 0)
redis.call('PEXPIRE', KEYS[1], ARGV[7])
return 1
";

fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Stores `key` as already expired but servable stale for `stale` (what a
/// burst with a stale window starts from), in the layout `read_value` reads.
pub async fn seed_stale(
    con: &mut impl redis::aio::ConnectionLike,
    key: u32,
    payload: &[u8],
    stale: Duration,
    delta: Micros,
) -> redis::RedisResult<()> {
    seed_value(con, key, payload, Duration::ZERO, stale, delta).await
}

/// Stores `key` (version 0) fresh for `fresh`, then servable stale for
/// `stale` more (what steady traffic starts from), in the layout
/// `read_value` reads.
pub async fn seed_value(
    con: &mut impl redis::aio::ConnectionLike,
    key: u32,
    payload: &[u8],
    fresh: Duration,
    stale: Duration,
    delta: Micros,
) -> redis::RedisResult<()> {
    let now = wall_ms();
    let fresh_until = now + fresh.as_millis() as u64;
    let stale_until = fresh_until + stale.as_millis() as u64;
    redis::cmd("HSET")
        .arg(value_key(&key.to_string()))
        .arg("v")
        .arg(payload)
        .arg("version")
        .arg(0)
        .arg("fresh")
        .arg(fresh_until)
        .arg("stale")
        .arg(stale_until)
        .arg("delta")
        .arg(delta)
        .query_async::<i64>(con)
        .await?;
    if stale_until > now {
        redis::cmd("PEXPIRE")
            .arg(value_key(&key.to_string()))
            .arg(stale_until - now + 1000)
            .query_async::<i64>(con)
            .await?;
    }
    Ok(())
}

/// What performing a step produced besides the machine's input.
enum Got {
    Nothing,
    Read(Option<Arc<Vec<u8>>>),
    Computed(Arc<Vec<u8>>),
    /// A flight's reply to this follower carried the leader's payload.
    Shared(Option<Arc<Vec<u8>>>),
    Permit(OwnedSemaphorePermit),
}

type Op = Pin<Box<dyn Future<Output = (Input, Got)> + Send>>;

fn ready(input: Input) -> Op {
    Box::pin(async move { (input, Got::Nothing) })
}

/// A parked follower: its way back from the flight, and its exit if it
/// stops waiting first (its deadline, or its task dropped).
///
/// Lock order, everywhere: `flights`, then `parked`; a reply to a parked
/// follower (a settle's value, a promotion) is sent with `flights` held.
/// So when a follower leaves, holding `flights`, either the reply is
/// already in its channel or no reply is coming. A promotion found there
/// makes it the flight's leader without its machine ever knowing: it hands
/// the flight on at once (to the next follower, or closes it), instead of
/// leaving a flight whose leader is gone and whose next callers would wait
/// on it until their deadlines.
struct Parked<O, K: Key> {
    inner: Arc<Inner<O, K>>,
    key: (K, FlightKey),
    id: u64,
    ticket: stampede::flight::WaiterTicket,
    /// `None` once the reply was taken by the machine.
    rx: Option<oneshot::Receiver<ParkedReply>>,
}

impl<O, K: Key> Drop for Parked<O, K> {
    fn drop(&mut self) {
        let mut f = self
            .inner
            .flights
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let unread = self.rx.as_mut().and_then(|rx| rx.try_recv().ok());
        if let Some((FlightReply::Promoted(ticket), _)) = unread {
            abandon_locked(&self.inner, &mut f, self.key.clone(), ticket);
        } else {
            f.detach(&self.key, self.ticket);
        }
        self.inner
            .parked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

impl<O: Origin> Driver<O> {
    /// One instance for `scenario`'s read path against the Redis at
    /// `target` (a URL, several comma-separated URLs for a cluster, or a
    /// [`Target`]).
    pub async fn connect(
        target: impl Into<Target>,
        scenario: &Scenario,
        origin: O,
    ) -> redis::RedisResult<Self> {
        Self::connect_in(target, scenario, origin, Arc::default()).await
    }

    /// As [`Driver::connect`], for an instance of a fleet: `crashed` is
    /// shared by every instance, so the `holder_crash` fault makes only the
    /// fleet's first claim winner crash.
    pub async fn connect_in(
        target: impl Into<Target>,
        scenario: &Scenario,
        origin: O,
        crashed: Arc<std::sync::atomic::AtomicBool>,
    ) -> redis::RedisResult<Self> {
        Driver::connect_with(
            target,
            Strategy::from_scenario(scenario),
            Settings::from_scenario(scenario),
            origin,
            crashed,
        )
        .await
    }
}

impl<O: Origin<K>, K: Key> Driver<O, K> {
    /// One instance with this read path and these settings.
    pub(crate) async fn connect_with(
        target: impl Into<Target>,
        strategy: Strategy,
        settings: Settings,
        origin: O,
        crashed: Arc<std::sync::atomic::AtomicBool>,
    ) -> redis::RedisResult<Self> {
        let mut con = target.into().connect().await?;
        let (release, claim, write_fenced) = (
            Script::new(RELEASE),
            Script::new(CLAIM_FENCED),
            Script::new(WRITE_FENCED),
        );
        // Loaded now (on every primary of a cluster), so that the first
        // claim of a burst is one round trip, not NOSCRIPT, a load and a
        // retry inside the command bound.
        for script in [&release, &claim, &write_fenced] {
            script.load_async(&mut con).await?;
        }
        Ok(Driver {
            inner: Arc::new(Inner {
                strategy,
                con,
                release,
                claim,
                write_fenced,
                flights: Mutex::new(FlightTable::new(FlightPolicy::default())),
                parked: Mutex::new(HashMap::new()),
                admission: (settings.admission > 0)
                    .then(|| Arc::new(Semaphore::new(settings.admission))),
                origin,
                epoch: Instant::now(),
                value_ttl: settings.value_ttl,
                stale: settings.stale,
                jitter: settings.jitter.clamp(0.0, 1.0),
                xfetch: settings.xfetch,
                draws: AtomicU64::new(0),
                next_id: AtomicU64::new(0),
                counters: Counters::default(),
                holder_crash: settings.holder_crash,
                crashed,
            }),
        })
    }

    pub fn counters(&self) -> &Counters {
        &self.inner.counters
    }

    /// Flights open in this instance's table right now (0 once every
    /// request's task has ended: a flight nobody leads must not remain).
    pub fn in_flight(&self) -> usize {
        self.inner
            .flights
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .in_flight()
    }

    /// The value for `key`, as the read path decides. The request's work
    /// goes on in its own task after the answer if the machine has more to
    /// do (a write, a settle, a release).
    pub async fn get(&self, key: K) -> Answer {
        let (tx, rx) = oneshot::channel();
        #[cfg(feature = "tracing")]
        let span = obs::request_span(&key.name());
        let task = run(self.inner.clone(), key, tx);
        #[cfg(feature = "tracing")]
        let task = tracing::Instrument::instrument(task, span);
        tokio::spawn(task);
        rx.await.unwrap_or(Answer {
            ending: Ending::Error,
            value: None,
        })
    }
}

impl<O, K> Inner<O, K> {
    /// A uniform draw in [0, 1).
    fn unit(&self) -> f64 {
        let n = self.draws.fetch_add(1, Ordering::Relaxed);
        stampede::rng::Rng::new(n ^ (self as *const Self as u64)).unit()
    }

    fn now(&self) -> Micros {
        self.epoch.elapsed().as_micros() as Micros
    }

    fn at(&self, t: Micros) -> Instant {
        self.epoch + Duration::from_micros(t)
    }
}

/// One request: the machine, stepped until it finishes.
async fn run<O: Origin<K>, K: Key>(
    inner: Arc<Inner<O, K>>,
    key: K,
    answer: oneshot::Sender<Answer>,
) {
    inner.counters.requests.fetch_add(1, Ordering::Relaxed);
    inner.counters.running.fetch_add(1, Ordering::SeqCst);
    let inner2 = inner.clone();
    let _running = RunningTask(&inner2.counters.running);
    let s = inner.strategy;
    let id = inner.next_id.fetch_add(1, Ordering::Relaxed);
    let mut m = ReadPath::new(&s, key.machine_id(), id, inner.now());
    let mut answer = Some(answer);
    let mut tokens: HashMap<u64, Token> = HashMap::new();
    let mut read: Option<Arc<Vec<u8>>> = None;
    let mut computed: Option<Arc<Vec<u8>>> = None;
    // The payload a flight leader handed this follower.
    let mut shared: Option<Arc<Vec<u8>>> = None;
    // Held (never read) while the origin call runs: dropping it frees the
    // admission slot.
    let mut _permit: Option<OwnedSemaphorePermit> = None;
    let mut op: Option<Op> = None;
    let mut input = Input::Start;
    loop {
        let step = m.resume(&s, input, inner.now());
        match step {
            Step::Finish => return,
            Step::Respond { ending, .. } => {
                obs::record("ending", ending_name(ending));
                match ending {
                    Ending::Stale => obs::count(obs::STALE_SERVED, "cache"),
                    Ending::Timeout => obs::count(obs::TIMEOUTS, "cache"),
                    _ => {}
                }
                let value = match ending {
                    Ending::Hit | Ending::Stale => read.clone(),
                    Ending::Computed => computed.clone(),
                    Ending::Shared => shared.clone(),
                    _ => None,
                };
                if let Some(a) = answer.take() {
                    let _ = a.send(Answer { ending, value });
                }
                input = Input::Ack;
                continue;
            }
            // Keep waiting for the operation already under way.
            Step::Wait => {}
            other => {
                op = Some(perform(
                    &inner,
                    &key,
                    other,
                    m.is_first_read(),
                    &mut tokens,
                    &computed,
                    &read,
                ));
            }
        }
        let Some(fut) = op.as_mut() else {
            // Nothing pending and nothing to do: a machine bug; answer.
            if let Some(a) = answer.take() {
                let _ = a.send(Answer {
                    ending: Ending::Error,
                    value: None,
                });
            }
            return;
        };
        let (got_input, got) = match m.deadline() {
            Some(d) => {
                tokio::select! {
                    r = fut => r,
                    _ = tokio::time::sleep_until(inner.at(d)) => {
                        if !m.work_outlives_caller() {
                            // Cancel the wait (a parked follower detaches).
                            op = None;
                        }
                        input = Input::DeadlinePassed;
                        continue;
                    }
                }
            }
            None => fut.await,
        };
        op = None;
        if let Input::Flight(FlightReply::Promoted(_)) = got_input {
            obs::record("role", "promoted");
        }
        if let Input::Claim(ClaimReply::Won { .. }) = got_input {
            if inner.holder_crash && !inner.crashed.swap(true, Ordering::SeqCst) {
                // The fault: this holder dies right after winning. Its
                // flight passes to its oldest follower, its caller gets an
                // error, and its claim is never released: it blocks every
                // other instance until its TTL.
                inner.counters.crashed.fetch_add(1, Ordering::Relaxed);
                if let Some(ticket) = m.leader_ticket() {
                    abandon(&inner, (key.clone(), m.flight_key(&s)), ticket);
                }
                if let Some(a) = answer.take() {
                    let _ = a.send(Answer {
                        ending: Ending::Error,
                        value: None,
                    });
                }
                return;
            }
        }
        match got {
            Got::Nothing => {}
            Got::Read(v) => {
                if v.is_some() {
                    read = v;
                }
            }
            Got::Computed(v) => computed = Some(v),
            Got::Shared(v) => shared = v,
            Got::Permit(p) => _permit = Some(p),
        }
        if matches!(got_input, Input::Origin(_)) {
            // The origin call is over: its permit goes back.
            _permit = None;
        }
        input = got_input;
    }
}

/// An ending's name, as spans record it.
fn ending_name(ending: Ending) -> &'static str {
    match ending {
        Ending::Hit => "Hit",
        Ending::Stale => "Stale",
        Ending::Computed => "Computed",
        Ending::Shared => "Shared",
        Ending::Degraded => "Degraded",
        Ending::Error => "Error",
        Ending::Timeout => "Timeout",
    }
}

/// A leader leaves its flight: the oldest follower, if any, takes it over.
fn abandon<O, K: Key>(
    inner: &Inner<O, K>,
    fk: (K, FlightKey),
    ticket: stampede::flight::LeaderTicket,
) {
    let mut f = inner.flights.lock().unwrap_or_else(PoisonError::into_inner);
    abandon_locked(inner, &mut f, fk, ticket);
}

/// [`abandon`] with `flights` already held (the promotion is sent before
/// it is released; see [`Parked`]).
fn abandon_locked<O, K: Key>(
    inner: &Inner<O, K>,
    f: &mut FlightTable<(K, FlightKey), u64>,
    fk: (K, FlightKey),
    ticket: stampede::flight::LeaderTicket,
) {
    if let Ok(Abandoned::Promoted { leader, ticket }) = f.abandon(&fk, ticket) {
        if let Some(tx) = inner
            .parked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&leader)
        {
            let _ = tx.send((FlightReply::Promoted(ticket), None));
        }
    }
}

/// Performs one step: what the machine asked for, nothing more.
fn perform<O: Origin<K>, K: Key>(
    inner: &Arc<Inner<O, K>>,
    request_key: &K,
    step: Step,
    first_read: bool,
    tokens: &mut HashMap<u64, Token>,
    computed: &Option<Arc<Vec<u8>>>,
    read: &Option<Arc<Vec<u8>>>,
) -> Op {
    let inner = inner.clone();
    let mut con = inner.con.clone();
    // Every step is performed for the request's own key: the machine's
    // `u32` is only relayed back to it.
    let k = request_key.name().into_owned();
    match step {
        Step::CacheGet { key } => Box::pin(async move {
            let (reply, bytes) = read_value(&inner, &mut con, &k, key).await;
            if first_read && reply.is_miss() {
                inner.counters.misses.fetch_add(1, Ordering::Relaxed);
            }
            (Input::Cache(reply), Got::Read(bytes))
        }),
        Step::Poll { key } => Box::pin(async move {
            // One transaction: the value and the claim seen at one instant
            // (two separate reads could see "no value" before a holder's
            // write and "no claim" after its release, and claim for nothing).
            let mut pipe = redis::pipe();
            let r = pipe
                .atomic()
                .cmd("HMGET")
                .arg(value_key(&k))
                .arg(&ROW_FIELDS[..])
                .cmd("EXISTS")
                .arg(lock_key(&k))
                .query_async::<(Row, bool)>(&mut con);
            match bounded(&inner.counters, r).await {
                Ok((row, held)) => {
                    let (cache, bytes) = reply_of(&inner, key, row);
                    let claim_free = !held;
                    (Input::Polled { cache, claim_free }, Got::Read(bytes))
                }
                Err(_) => (
                    Input::Polled {
                        cache: CacheReply::Error,
                        claim_free: false,
                    },
                    Got::Nothing,
                ),
            }
        }),
        Step::JoinFlight { key: fk } => {
            let fk = (request_key.clone(), fk);
            let id = inner.next_id.fetch_add(1, Ordering::Relaxed);
            let mut f = inner.flights.lock().unwrap_or_else(PoisonError::into_inner);
            let joined = f.join(fk.clone(), id);
            match joined {
                Join::Lead(t) => {
                    obs::count(obs::FLIGHTS, "cache");
                    obs::record("role", "leader");
                    ready(Input::Flight(FlightReply::Lead(t)))
                }
                Join::Remembered(o) => ready(Input::Flight(FlightReply::Shared(o))),
                Join::Follow(w) => {
                    obs::count(obs::FOLLOWERS, "cache");
                    obs::record("role", "follower");
                    // Parked before `flights` is released: a settle or a
                    // promotion right after the join finds the way back.
                    let (tx, rx) = oneshot::channel();
                    inner
                        .parked
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(id, tx);
                    drop(f);
                    let mut guard = Parked {
                        inner: inner.clone(),
                        key: fk,
                        id,
                        ticket: w,
                        rx: Some(rx),
                    };
                    Box::pin(async move {
                        let reply = match guard.rx.as_mut() {
                            Some(rx) => rx.await,
                            None => unreachable!("the receiver is taken only here"),
                        };
                        guard.rx = None;
                        drop(guard);
                        match reply {
                            Ok((r, payload)) => (Input::Flight(r), Got::Shared(payload)),
                            Err(_) => (
                                Input::Flight(FlightReply::Shared(
                                    stampede::flight::Outcome::Failed(
                                        stampede::flight::Failure::Crashed,
                                    ),
                                )),
                                Got::Nothing,
                            ),
                        }
                    })
                }
            }
        }
        Step::TryLead { key: fk } => {
            let fk = (request_key.clone(), fk);
            let mut f = inner.flights.lock().unwrap_or_else(PoisonError::into_inner);
            let reply = if f.leader(&fk).is_some() {
                FlightReply::Busy
            } else {
                let id = inner.next_id.fetch_add(1, Ordering::Relaxed);
                match f.join(fk, id) {
                    Join::Lead(t) => {
                        obs::count(obs::FLIGHTS, "cache");
                        obs::record("role", "leader");
                        FlightReply::Lead(t)
                    }
                    _ => FlightReply::Busy,
                }
            };
            ready(Input::Flight(reply))
        }
        Step::SettleFlight {
            key: fk,
            ticket,
            outcome,
        } => {
            // The followers' payload: what this leader computed, or read
            // back when its re-check found the value already there. It
            // travels with each reply; nothing keeps it after the settle.
            let payload = match outcome {
                stampede::flight::Outcome::Fresh(_) => computed.as_ref().or(read.as_ref()).cloned(),
                _ => None,
            };
            let fk = (request_key.clone(), fk);
            let mut f = inner.flights.lock().unwrap_or_else(PoisonError::into_inner);
            if let Ok(settled) = f.settle(&fk, ticket, outcome) {
                let mut parked = inner.parked.lock().unwrap_or_else(PoisonError::into_inner);
                for (w, o) in settled.deliveries {
                    if let Some(tx) = parked.remove(&w) {
                        let _ = tx.send((FlightReply::Shared(o), payload.clone()));
                    }
                }
            }
            drop(f);
            ready(Input::Ack)
        }
        Step::AbandonFlight { key: fk, ticket } => {
            abandon(&inner, (request_key.clone(), fk), ticket);
            ready(Input::Ack)
        }
        Step::Claim { token, ttl, .. } => {
            inner
                .counters
                .claim_attempts
                .fetch_add(1, Ordering::Relaxed);
            // The machine's token names the attempt; Redis gets an
            // unguessable one in its place.
            let secret = tokens.entry(token.0).or_default().clone();
            let script = inner.claim.clone();
            Box::pin(async move {
                let r: Result<u64, _> = bounded(
                    &inner.counters,
                    script
                        .key(lock_key(&k))
                        .key(fence_key(&k))
                        .arg(secret.as_str())
                        .arg((ttl / 1000).max(1))
                        .invoke_async(&mut con),
                )
                .await;
                let reply = match r {
                    Ok(0) => {
                        obs::count(obs::CLAIM_LOSSES, "cache");
                        ClaimReply::Held
                    }
                    Ok(fence) => {
                        obs::count(obs::CLAIM_WINS, "cache");
                        inner.counters.claim_wins.fetch_add(1, Ordering::Relaxed);
                        ClaimReply::Won { fence }
                    }
                    Err(_) => ClaimReply::Error,
                };
                (Input::Claim(reply), Got::Nothing)
            })
        }
        Step::Release { token, .. } => {
            inner.counters.releases.fetch_add(1, Ordering::Relaxed);
            let secret = tokens.get(&token.0).cloned();
            let script = inner.release.clone();
            Box::pin(async move {
                if let Some(secret) = secret {
                    let _ = bounded(
                        &inner.counters,
                        script
                            .key(lock_key(&k))
                            .arg(secret.as_str())
                            .invoke_async::<i64>(&mut con),
                    )
                    .await;
                }
                (Input::Ack, Got::Nothing)
            })
        }
        Step::Admit { max_wait } => match &inner.admission {
            None => ready(Input::Admitted),
            Some(sem) => {
                let sem = sem.clone();
                Box::pin(async move {
                    match tokio::time::timeout(Duration::from_micros(max_wait), sem.acquire_owned())
                        .await
                    {
                        Ok(Ok(p)) => (Input::Admitted, Got::Permit(p)),
                        _ => {
                            inner
                                .counters
                                .admission_shed
                                .fetch_add(1, Ordering::Relaxed);
                            (Input::Shed, Got::Nothing)
                        }
                    }
                })
            }
        },
        Step::Recompute { key, timeout } => {
            inner.counters.recomputes.fetch_add(1, Ordering::Relaxed);
            // The admission permit, if any, stays with this request until
            // the call's answer comes back (see `run`).
            // A panic in the origin, before its future exists or while it
            // is polled, is caught and answered as the origin's failure:
            // the machine settles the flight for every follower and
            // releases the claim, as for any error.
            let call: OriginFuture =
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    inner.origin.compute(request_key.clone())
                })) {
                    Ok(call) => Box::pin(async move {
                        CatchUnwind(call)
                            .await
                            .unwrap_or_else(|()| Err("the origin panicked".into()))
                    }),
                    Err(_) => Box::pin(async { Err("the origin panicked".into()) }),
                };
            // The value's version is when its computation started: a
            // recompute that started earlier read older data, whenever it
            // ends.
            let version = (wall_ms() & 0xffff_ffff) as u32;
            Box::pin(async move {
                let r = match timeout {
                    Some(t) => tokio::time::timeout(Duration::from_micros(t), call)
                        .await
                        .unwrap_or_else(|_| Err("origin timeout".into())),
                    None => call.await,
                };
                match r {
                    Ok(bytes) => (
                        Input::Origin(Ok(Value::fresh(key, version))),
                        Got::Computed(Arc::new(bytes)),
                    ),
                    Err(_) => (
                        Input::Origin(Err(stampede::flight::Failure::Origin)),
                        Got::Nothing,
                    ),
                }
            })
        }
        Step::CacheSet {
            value,
            delta,
            fence,
            ..
        } => {
            let bytes = computed.clone().unwrap_or_default();
            let script = inner.write_fenced.clone();
            let now = wall_ms();
            let ttl = inner.value_ttl.as_millis() as f64;
            let ttl = if inner.jitter > 0.0 {
                ttl * (1.0 - inner.jitter + 2.0 * inner.jitter * inner.unit())
            } else {
                ttl
            };
            let fresh = now + (ttl as u64).max(1);
            let stale = fresh + inner.stale.as_millis() as u64;
            let keep = (stale - now).max(1);
            Box::pin(async move {
                let written = bounded(
                    &inner.counters,
                    script
                        .key(value_key(&k))
                        .arg(bytes.as_slice())
                        .arg(fence.unwrap_or(0))
                        .arg(value.version)
                        .arg(fresh)
                        .arg(stale)
                        .arg(delta)
                        .arg(keep)
                        .invoke_async::<i64>(&mut con),
                )
                .await;
                // Counted as the simulation counts them: a write that
                // landed, or one the fence refused; a failed one is neither.
                match written {
                    Ok(0) => inner
                        .counters
                        .writes_refused
                        .fetch_add(1, Ordering::Relaxed),
                    Ok(_) => inner
                        .counters
                        .values_written
                        .fetch_add(1, Ordering::Relaxed),
                    Err(_) => 0,
                };
                (Input::Ack, Got::Nothing)
            })
        }
        Step::CacheSetNegative { ttl, .. } => Box::pin(async move {
            let until = wall_ms() + ttl / 1000;
            let _ = bounded(
                &inner.counters,
                redis::cmd("HSET")
                    .arg(value_key(&k))
                    .arg("neg")
                    .arg(until)
                    .query_async::<i64>(&mut con),
            )
            .await;
            (Input::Ack, Got::Nothing)
        }),
        Step::Sleep { until } => {
            let at = inner.at(until);
            Box::pin(async move {
                tokio::time::sleep_until(at).await;
                (Input::Woke, Got::Nothing)
            })
        }
        // Handled by the loop.
        Step::Respond { .. } | Step::Wait | Step::Finish => ready(Input::Ack),
    }
}

/// How long any one Redis command may take before the driver treats it as
/// failed. Without a bound, a Redis that went away leaves commands waiting
/// on reconnection, and a fail-open refresh would freeze until every
/// caller's deadline: the outage would decide what fail-open is for.
pub const REDIS_TIMEOUT: Duration = Duration::from_millis(100);

/// A Redis command bounded by [`REDIS_TIMEOUT`]; a late answer is an
/// error. Every error is counted.
async fn bounded<T>(
    counters: &Counters,
    f: impl Future<Output = redis::RedisResult<T>>,
) -> redis::RedisResult<T> {
    let r = tokio::time::timeout(REDIS_TIMEOUT, f)
        .await
        .unwrap_or_else(|_| {
            Err(redis::RedisError::from(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "Redis did not answer in time",
            )))
        });
    if r.is_err() {
        obs::count(obs::REDIS_ERRORS, "cache");
        counters.redis_errors.fetch_add(1, Ordering::Relaxed);
    }
    r
}

/// The fields of `value:{key}` a read asks for, in `Row`'s order.
const ROW_FIELDS: [&str; 6] = ["v", "version", "fresh", "stale", "neg", "delta"];

/// `HMGET value:{key} v version fresh stale neg delta`.
type Row = (
    Option<Vec<u8>>,
    Option<u32>,
    Option<u64>,
    Option<u64>,
    Option<u64>,
    Option<u64>,
);

/// Reads `value:{key}` and says what the machine should hear.
async fn read_value<O, K>(
    inner: &Inner<O, K>,
    con: &mut Conn,
    name: &str,
    key: u32,
) -> (CacheReply, Option<Payload>) {
    let row = bounded(
        &inner.counters,
        redis::cmd("HMGET")
            .arg(value_key(name))
            .arg(&ROW_FIELDS[..])
            .query_async::<Row>(con),
    )
    .await;
    match row {
        Err(_) => (CacheReply::Error, None),
        Ok(row) => reply_of(inner, key, row),
    }
}

/// What a stored row means now: fresh, stale, a negative mark (with the
/// stale value under it, if servable) or a miss.
/// With XFetch on, a fresh read carries its expiry (on the driver's
/// clock), the stored recompute delta and a draw, for the machine to decide
/// on an early refresh.
fn reply_of<O, K>(inner: &Inner<O, K>, key: u32, row: Row) -> (CacheReply, Option<Payload>) {
    let now = wall_ms();
    let (bytes, version, fresh, stale, neg, delta) = row;
    let value = version.map(|v| Value::fresh(key, v));
    let bytes = bytes.map(Arc::new);
    let fresh_ok = fresh.is_some_and(|f| now < f);
    let stale_ok = stale.is_some_and(|s| now < s);
    match (value, fresh_ok, stale_ok, neg.is_some_and(|n| now < n)) {
        (Some(v), true, _, _) if inner.xfetch => {
            let left = fresh.unwrap_or(now).saturating_sub(now) * 1000;
            let reply = CacheReply::FreshUntil {
                value: v,
                expires_at: inner.now() + left,
                delta: delta.unwrap_or(0),
                draw: (inner.unit() * f64::from(u32::MAX)) as u32,
            };
            (reply, bytes)
        }
        (Some(v), true, _, _) => (CacheReply::Fresh(v), bytes),
        (v, _, stale_ok, true) => (CacheReply::Negative(v.filter(|_| stale_ok)), bytes),
        (Some(v), false, true, false) => (CacheReply::Stale(v), bytes),
        _ => (CacheReply::Miss, None),
    }
}
