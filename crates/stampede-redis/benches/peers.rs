//! The async group beside its peers, and the Redis side of the crate:
//!
//! - `group/*`: this crate's `Group` against `async_singleflight::Group`
//!   and moka's `future::Cache::try_get_with` (which also memoizes: each
//!   moka run starts from an empty cache, and the uncontended call
//!   invalidates its key after the call, so that every call computes);
//!   - `uncontended`: one caller, one key, a computation that is ready at
//!     once;
//!   - `waiters_10k`: 10,000 callers attached to one key's flight; the time
//!     from the computation's end (its release) to the last waiter woken;
//!   - `keys_1k_x_10`: 1,000 keys x 10 callers each, all at once, each
//!     computation yielding once; the time until every caller has its value.
//!     (It hardly coalesces: a leader is often done before its key's next
//!     caller comes, so each group runs close to 10,000 computations.)
//!   - `hot_1_key` and `hot_16_keys`: 1,000 callers, each asking again as
//!     soon as it has its answer (4 calls each, on key `caller % keys`),
//!     each computation yielding 16 times: they coalesce. The time until
//!     every caller has its 4 answers; each group's computations per run
//!     are printed beside it (`computations:` on stderr). moka memoizes:
//!     there (`moka_get_with`) the caller whose computation ran
//!     invalidates the key once it has the value, so that the next caller
//!     after the flight computes anew.
//!   - `interleaved` (not a criterion case; `-- interleaved` runs it
//!     alone): the same hot-key runs with the three groups interleaved
//!     run by run (5 repetitions of 100 rounds, one run of each group per
//!     round), on 1 and 2 workers; each group's median run and
//!     computations, and `Group`'s ratio to each peer per repetition (on a
//!     shared machine, cases measured one after the other see different
//!     loads).
//! - `redis/*`: claim round trips against a local redis-server that the
//!   bench starts on a free loopback port (`claim_release`: one claim and
//!   its release in turn, two round trips; `claims_64_in_flight`: 64
//!   callers claiming distinct keys at once, per claim).
//!
//! Run: `cargo bench -p stampede-redis --bench peers` (redis-server on PATH);
//! `cargo bench -p stampede-redis --bench peers -- interleaved` for the
//! interleaved hot-key comparison alone.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, Criterion};
use stampede_redis::{ClaimStore, Group};

mod support;
use support::{in_task, runtime, BenchRedis};
use tokio::sync::Semaphore;

fn far() -> tokio::time::Instant {
    tokio::time::Instant::now() + Duration::from_secs(3600)
}

type Moka = moka::future::Cache<u64, u64>;

fn uncontended(c: &mut Criterion) {
    let rt = runtime();
    let mut g = c.benchmark_group("group/uncontended");
    let ours: Group<u64, u64, ()> = Group::new();
    g.bench_function("stampede-redis", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let ours = ours.clone();
            in_task(iters, move || {
                let ours = ours.clone();
                async move {
                    let r = ours.get_or_compute(1, far(), || async { Ok(1) }).await;
                    assert!(r.is_ok());
                }
            })
        })
    });
    let theirs = Arc::new(async_singleflight::Group::<u64, ()>::new());
    g.bench_function("async_singleflight", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let theirs = theirs.clone();
            in_task(iters, move || {
                let theirs = theirs.clone();
                async move {
                    let r = theirs.work("1", async { Ok(1) }).await;
                    assert!(r.0.is_some());
                }
            })
        })
    });
    let moka = Moka::new(10_000);
    g.bench_function("moka_try_get_with", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let moka = moka.clone();
            in_task(iters, move || {
                let moka = moka.clone();
                async move {
                    let v = moka.try_get_with(1, async { Ok::<_, ()>(1) }).await;
                    moka.invalidate(&1).await;
                    assert!(v.is_ok());
                }
            })
        })
    });
    g.finish();
}

/// Spawns `n` callers on one key whose computation waits for `release`,
/// waits until they are all attached, then times release -> last answer.
async fn settle_to_last<F, Fut>(n: usize, attached: impl Fn() -> bool, call: F) -> Duration
where
    F: Fn(Arc<Semaphore>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let release = Arc::new(Semaphore::new(0));
    let mut calls = Vec::with_capacity(n);
    for _ in 0..n {
        calls.push(tokio::spawn(call(release.clone())));
    }
    while !attached() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let t = Instant::now();
    release.add_permits(1);
    for c in calls {
        c.await.unwrap();
    }
    t.elapsed()
}

fn waiters_10k(c: &mut Criterion) {
    const N: usize = 10_000;
    let rt = runtime();
    let mut g = c.benchmark_group("group/waiters_10k");
    g.sample_size(20);
    g.bench_function("stampede-redis", |b| {
        b.to_async(&rt).iter_custom(|iters| async move {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let ours: Group<u64, u64, ()> = Group::new();
                let o = ours.clone();
                total += settle_to_last(
                    N,
                    || o.waiting(&1) == N - 1,
                    move |release| {
                        let ours = ours.clone();
                        async move {
                            let r = ours
                                .get_or_compute(1, far(), move || async move {
                                    let _p = release.acquire().await;
                                    Ok(1)
                                })
                                .await;
                            assert!(r.is_ok());
                        }
                    },
                )
                .await;
            }
            total
        })
    });
    g.bench_function("async_singleflight", |b| {
        b.to_async(&rt).iter_custom(|iters| async move {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let theirs = Arc::new(async_singleflight::Group::<u64, ()>::new());
                let started = Arc::new(AtomicUsize::new(0));
                let s = started.clone();
                total += settle_to_last(
                    N,
                    // No count of attached waiters: every task has started
                    // its call, and the scheduler had time to park them.
                    || s.load(Ordering::SeqCst) == N,
                    move |release| {
                        let (theirs, started) = (theirs.clone(), started.clone());
                        async move {
                            started.fetch_add(1, Ordering::SeqCst);
                            let r = theirs
                                .work("1", async move {
                                    let _p = release.acquire().await;
                                    Ok(1)
                                })
                                .await;
                            assert!(r.0.is_some());
                        }
                    },
                )
                .await;
            }
            total
        })
    });
    g.bench_function("moka_try_get_with", |b| {
        b.to_async(&rt).iter_custom(|iters| async move {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let moka = Moka::new(10_000);
                let started = Arc::new(AtomicUsize::new(0));
                let s = started.clone();
                total += settle_to_last(
                    N,
                    || s.load(Ordering::SeqCst) == N,
                    move |release| {
                        let (moka, started) = (moka.clone(), started.clone());
                        async move {
                            started.fetch_add(1, Ordering::SeqCst);
                            let r = moka
                                .try_get_with(1, async move {
                                    let _p = release.acquire().await;
                                    Ok::<_, ()>(1)
                                })
                                .await;
                            assert!(r.is_ok());
                        }
                    },
                )
                .await;
            }
            total
        })
    });
    g.finish();
}

fn keys_1k_x_10(c: &mut Criterion) {
    const KEYS: u64 = 1000;
    const CALLERS: u64 = 10;
    let rt = runtime();
    let mut g = c.benchmark_group("group/keys_1k_x_10");
    g.sample_size(20);
    g.bench_function("stampede-redis", |b| {
        b.to_async(&rt).iter_custom(|iters| async move {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let ours: Group<u64, u64, ()> = Group::new();
                let t = Instant::now();
                let mut calls = Vec::new();
                for i in 0..KEYS * CALLERS {
                    let ours = ours.clone();
                    calls.push(tokio::spawn(async move {
                        let k = i % KEYS;
                        ours.get_or_compute(k, far(), move || async move {
                            tokio::task::yield_now().await;
                            Ok(k)
                        })
                        .await
                        .is_ok()
                    }));
                }
                for c in calls {
                    assert!(c.await.unwrap());
                }
                total += t.elapsed();
            }
            total
        })
    });
    g.bench_function("async_singleflight", |b| {
        b.to_async(&rt).iter_custom(|iters| async move {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let theirs = Arc::new(async_singleflight::Group::<u64, ()>::new());
                let names: Arc<Vec<String>> = Arc::new((0..KEYS).map(|k| k.to_string()).collect());
                let t = Instant::now();
                let mut calls = Vec::new();
                for i in 0..KEYS * CALLERS {
                    let (theirs, names) = (theirs.clone(), names.clone());
                    calls.push(tokio::spawn(async move {
                        let k = i % KEYS;
                        theirs
                            .work(&names[k as usize], async move {
                                tokio::task::yield_now().await;
                                Ok(k)
                            })
                            .await
                            .0
                            .is_some()
                    }));
                }
                for c in calls {
                    assert!(c.await.unwrap());
                }
                total += t.elapsed();
            }
            total
        })
    });
    g.bench_function("moka_try_get_with", |b| {
        b.to_async(&rt).iter_custom(|iters| async move {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let moka = Moka::new(10_000);
                let t = Instant::now();
                let mut calls = Vec::new();
                for i in 0..KEYS * CALLERS {
                    let moka = moka.clone();
                    calls.push(tokio::spawn(async move {
                        let k = i % KEYS;
                        moka.try_get_with(k, async move {
                            tokio::task::yield_now().await;
                            Ok::<_, ()>(k)
                        })
                        .await
                        .is_ok()
                    }));
                }
                for c in calls {
                    assert!(c.await.unwrap());
                }
                total += t.elapsed();
            }
            total
        })
    });
    g.finish();
}

/// Callers per run of the hot-key cases, calls per caller, and the
/// computation's yields.
const HOT_CALLERS: u64 = 1000;
const HOT_CALLS: u64 = 4;
const HOT_YIELDS: u32 = 16;

/// The computation of the hot-key cases: counted, then 16 yields.
async fn hot_work(computations: Arc<AtomicUsize>, k: u64) -> u64 {
    computations.fetch_add(1, Ordering::Relaxed);
    for _ in 0..HOT_YIELDS {
        tokio::task::yield_now().await;
    }
    k
}

/// A group under test in the hot-key cases: how one is made for a run,
/// and one call of it on key `k` (true: it answered).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Peer {
    Ours,
    AsyncSingleflight,
    Moka,
}

impl Peer {
    const ALL: [Peer; 3] = [Peer::Ours, Peer::AsyncSingleflight, Peer::Moka];

    fn name(self) -> &'static str {
        match self {
            Peer::Ours => "stampede-redis",
            Peer::AsyncSingleflight => "async_singleflight",
            Peer::Moka => "moka_get_with",
        }
    }

    /// One run of the hot-key case on `keys` keys: 1,000 callers, each
    /// calling 4 times in turn. Its time, and the computations it ran.
    async fn hot_run(self, keys: u64) -> (Duration, usize) {
        match self {
            Peer::Ours => {
                hot_run(
                    keys,
                    Group::<u64, u64, ()>::new(),
                    |ours, computations, k| async move {
                        ours.get_or_compute(k, far(), move || hot_work(computations, k).map_ok())
                            .await
                            .is_ok()
                    },
                )
                .await
            }
            Peer::AsyncSingleflight => {
                let names: Arc<Vec<String>> = Arc::new((0..keys).map(|k| k.to_string()).collect());
                hot_run(
                    keys,
                    Arc::new(async_singleflight::Group::<u64, ()>::new()),
                    move |theirs, computations, k| {
                        let names = names.clone();
                        async move {
                            theirs
                                .work(&names[k as usize], hot_work(computations, k).map_ok())
                                .await
                                .0
                                .is_some()
                        }
                    },
                )
                .await
            }
            // moka memoizes: the caller whose computation ran takes the
            // value out again once it has it, so that, as in a
            // singleflight, the next caller after the flight computes
            // anew (callers that come between the insert and that
            // invalidation get the value without a computation, as
            // async_singleflight's do between its send and its removal).
            Peer::Moka => {
                hot_run(
                    keys,
                    Moka::new(10_000),
                    |moka, computations, k| async move {
                        let led = std::sync::atomic::AtomicBool::new(false);
                        let v = moka
                            .get_with(k, async {
                                led.store(true, Ordering::Relaxed);
                                hot_work(computations, k).await
                            })
                            .await;
                        if led.load(Ordering::Relaxed) {
                            moka.invalidate(&k).await;
                        }
                        v == k
                    },
                )
                .await
            }
        }
    }
}

/// One run of a hot-key case: 1,000 callers at once on `group`, each
/// calling `call` 4 times in turn on key `caller % keys`; the time until
/// every caller has its 4 answers, and the computations run.
async fn hot_run<G, C, Fut>(keys: u64, group: G, call: C) -> (Duration, usize)
where
    G: Clone + Send + 'static,
    C: Fn(G, Arc<AtomicUsize>, u64) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = bool> + Send + 'static,
{
    let computations = Arc::new(AtomicUsize::new(0));
    let finished = Arc::new(Finished {
        left: AtomicUsize::new(HOT_CALLERS as usize),
        all: tokio::sync::Notify::new(),
    });
    let all = finished.all.notified();
    tokio::pin!(all);
    all.as_mut().enable();
    let t = Instant::now();
    let mut callers = Vec::with_capacity(HOT_CALLERS as usize);
    for i in 0..HOT_CALLERS {
        let (group, computations, call) = (group.clone(), computations.clone(), call.clone());
        let done = Done(finished.clone());
        callers.push(tokio::spawn(async move {
            for _ in 0..HOT_CALLS {
                assert!(call(group.clone(), computations.clone(), i % keys).await);
            }
            drop(done);
        }));
    }
    // One wake-up when the last caller is done, not one per caller: the
    // join handles awaited in turn from this (non-worker) thread would
    // wake it once for each caller that ends after the previous one, and
    // charge a group that answers its callers in arrival order with
    // those thread wake-ups.
    all.await;
    let took = t.elapsed();
    for c in callers {
        c.await.unwrap();
    }
    (took, computations.load(Ordering::Relaxed))
}

/// The callers of a hot-key run not done yet, and the wake-up of the last.
struct Finished {
    left: AtomicUsize,
    all: tokio::sync::Notify,
}

/// A caller's share of [`Finished`]: dropped when it is done (or panics).
struct Done(Arc<Finished>);

impl Drop for Done {
    fn drop(&mut self) {
        if self.0.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.all.notify_waiters();
        }
    }
}

/// Computations and runs of each hot-key case, by (keys, group): printed
/// once all cases ran.
static COMPUTATIONS: std::sync::Mutex<std::collections::BTreeMap<(u64, Peer), (u64, u64)>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

fn print_computations() {
    for ((keys, peer), (computations, runs)) in COMPUTATIONS.lock().unwrap().iter() {
        eprintln!(
            "computations: {} on {keys} key(s): {:.1} per run of {} calls ({runs} runs)",
            peer.name(),
            *computations as f64 / *runs as f64,
            HOT_CALLERS * HOT_CALLS
        );
    }
}

fn hot_keys(c: &mut Criterion) {
    let rt = runtime();
    for keys in [1u64, 16] {
        let mut g = c.benchmark_group(format!(
            "group/hot_{keys}_key{}",
            if keys == 1 { "" } else { "s" }
        ));
        g.sample_size(20);
        for peer in Peer::ALL {
            g.bench_function(peer.name(), |b| {
                b.to_async(&rt).iter_custom(|iters| async move {
                    let (mut total, mut computations) = (Duration::ZERO, 0);
                    for _ in 0..iters {
                        let (took, computed) = peer.hot_run(keys).await;
                        total += took;
                        computations += computed as u64;
                    }
                    let mut counted = COMPUTATIONS.lock().unwrap();
                    let row = counted.entry((keys, peer)).or_default();
                    row.0 += computations;
                    row.1 += iters;
                    total
                })
            });
        }
        g.finish();
    }
}

/// Rounds per repetition of the interleaved comparison (each round one
/// run of each group; `INTERLEAVED_ROUNDS` in the environment to change
/// it), and repetitions.
const INTERLEAVED_ROUNDS: usize = 100;
const INTERLEAVED_REPS: usize = 5;

fn interleaved_rounds() -> usize {
    std::env::var("INTERLEAVED_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .filter(|&r| r > 0)
        .unwrap_or(INTERLEAVED_ROUNDS)
}

/// The hot-key cases with the three groups interleaved, on a runtime of 1
/// and of 2 workers: each of 5 repetitions is 100 rounds of one run of
/// each group (in an order that rotates from round to round), so that a
/// change of the machine's load falls on the three alike. Prints each
/// group's median run and computations per run in each repetition, and
/// `Group`'s median as a ratio of each peer's. (Criterion's cases above
/// measure one group after the other, which on a shared machine moves the
/// ratios by more than the groups differ.)
fn interleaved() {
    let rounds = interleaved_rounds();
    for workers in [1, 2] {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_all()
            .build()
            .unwrap();
        for keys in [1u64, 16] {
            let mut worst = (0f64, 0f64);
            for rep in 0..INTERLEAVED_REPS {
                let mut times: [Vec<Duration>; 3] = Default::default();
                let mut computations = [0usize; 3];
                rt.block_on(async {
                    for round in 0..rounds {
                        for i in 0..Peer::ALL.len() {
                            let j = (i + round) % Peer::ALL.len();
                            let (took, computed) = Peer::ALL[j].hot_run(keys).await;
                            times[j].push(took);
                            computations[j] += computed;
                        }
                    }
                });
                let medians: Vec<f64> = times
                    .iter_mut()
                    .map(|t| {
                        t.sort();
                        t[t.len() / 2].as_secs_f64()
                    })
                    .collect();
                let line: Vec<String> = Peer::ALL
                    .iter()
                    .enumerate()
                    .map(|(j, peer)| {
                        format!(
                            "{} {:.3} ms ({:.1} computations)",
                            peer.name(),
                            medians[j] * 1e3,
                            computations[j] as f64 / rounds as f64
                        )
                    })
                    .collect();
                let ratio = (medians[0] / medians[1], medians[0] / medians[2]);
                worst = (worst.0.max(ratio.0), worst.1.max(ratio.1));
                println!(
                    "interleaved: {workers} worker(s), {keys} key(s), rep {}: {}; ratio {:.2}x async_singleflight, {:.2}x moka",
                    rep + 1,
                    line.join(", "),
                    ratio.0,
                    ratio.1
                );
            }
            println!(
                "interleaved: {workers} worker(s), {keys} key(s): worst ratio {:.2}x async_singleflight, {:.2}x moka",
                worst.0, worst.1
            );
        }
    }
}

trait MapOk: std::future::Future<Output = u64> + Sized {
    /// The work as a computation that cannot fail.
    fn map_ok(self) -> impl std::future::Future<Output = Result<u64, ()>> + Send
    where
        Self: Send,
    {
        async move { Ok(self.await) }
    }
}

impl<F: std::future::Future<Output = u64>> MapOk for F {}

fn redis_claims(c: &mut Criterion) {
    let rt = runtime();
    let redis = BenchRedis::start();
    let store = rt.block_on(async {
        let mut last = None;
        for _ in 0..100 {
            match ClaimStore::connect(&redis.url).await {
                Ok(s) => return s,
                Err(e) => last = Some(e),
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("no Redis: {last:?}");
    });
    let mut g = c.benchmark_group("redis");
    let ttl = Duration::from_secs(10);
    g.bench_function("claim_release", |b| {
        b.to_async(&rt).iter(|| {
            let store = store.clone();
            async move {
                let t = store.claim("bench", ttl).await.unwrap().unwrap();
                assert_eq!(
                    store.release("bench", &t).await.unwrap(),
                    stampede_redis::Release::Released
                );
            }
        })
    });
    g.bench_function("claims_64_in_flight", |b| {
        b.to_async(&rt).iter_custom(|iters| {
            let store = store.clone();
            async move {
                // `iters` claims, 64 at a time, each on a key of its own.
                let t = Instant::now();
                let mut done = 0u64;
                while done < iters {
                    let batch = (iters - done).min(64);
                    let mut calls = Vec::new();
                    for i in 0..batch {
                        let store = store.clone();
                        let key = format!("bench:{}", done + i);
                        calls.push(tokio::spawn(async move {
                            let t = store.claim(&key, ttl).await.unwrap().unwrap();
                            // Released outside the count would cost a round
                            // trip too; leave the claim to expire instead.
                            drop(t);
                        }));
                    }
                    for c in calls {
                        c.await.unwrap();
                    }
                    done += batch;
                }
                let took = t.elapsed();
                let _: () = redis::cmd("FLUSHDB")
                    .query_async(&mut store.connection())
                    .await
                    .unwrap();
                took
            }
        })
    });
    g.finish();
}

criterion_group!(
    benches,
    uncontended,
    waiters_10k,
    keys_1k_x_10,
    hot_keys,
    redis_claims
);
/// One group's hot-key runs alone, to profile it (`-- profile PEER
/// WORKERS KEYS RUNS`, e.g. `-- profile stampede-redis 1 1 500` under
/// `perf record`): prints the median run and the computations per run.
fn profile(args: &[String]) {
    let arg = |i: usize, default: &str| args.get(i).cloned().unwrap_or_else(|| default.into());
    let peer = arg(0, "stampede-redis");
    let peer = *Peer::ALL
        .iter()
        .find(|p| p.name() == peer)
        .unwrap_or_else(|| {
            panic!("no peer {peer}: one of stampede-redis, async_singleflight, moka_get_with")
        });
    let workers: usize = arg(1, "1").parse().expect("workers");
    let keys: u64 = arg(2, "1").parse().expect("keys");
    let runs: usize = arg(3, "500").parse().expect("runs");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .unwrap();
    let (mut times, mut computations) = (Vec::with_capacity(runs), 0);
    rt.block_on(async {
        for _ in 0..runs {
            let (took, computed) = peer.hot_run(keys).await;
            times.push(took);
            computations += computed;
        }
    });
    times.sort();
    println!(
        "profile: {} on {workers} worker(s), {keys} key(s): median {:.3} ms, {:.1} computations per run",
        peer.name(),
        times[runs / 2].as_secs_f64() * 1e3,
        computations as f64 / runs as f64
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `-- interleaved` runs the interleaved comparison alone (no criterion
    // case, no redis-server); `-- profile ...` one group alone.
    if args.iter().any(|a| a == "interleaved") {
        interleaved();
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "profile") {
        profile(&args[i + 1..]);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
    print_computations();
}
