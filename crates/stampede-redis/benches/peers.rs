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
//!     are printed beside it (`computations:` on stderr).
//! - `redis/*`: claim round trips against a local redis-server that the
//!   bench starts on a free loopback port (`claim_release`: one claim and
//!   its release in turn, two round trips; `claims_64_in_flight`: 64
//!   callers claiming distinct keys at once, per claim).
//!
//! Run: `cargo bench -p stampede-redis --bench peers` (redis-server on PATH).

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

/// Runs `iters` runs of the hot-key case on `keys` keys through `call`
/// (one group per run, made by `new`), and prints the computations per run.
async fn hot_runs<G, C, Fut>(
    name: &str,
    keys: u64,
    iters: u64,
    new: impl Fn() -> G,
    call: C,
) -> Duration
where
    G: Clone + Send + 'static,
    C: Fn(G, Arc<AtomicUsize>, u64) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = bool> + Send + 'static,
{
    let computations = Arc::new(AtomicUsize::new(0));
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        let group = new();
        let t = Instant::now();
        let mut callers = Vec::with_capacity(HOT_CALLERS as usize);
        for i in 0..HOT_CALLERS {
            let (group, computations, call) = (group.clone(), computations.clone(), call.clone());
            callers.push(tokio::spawn(async move {
                for _ in 0..HOT_CALLS {
                    assert!(call(group.clone(), computations.clone(), i % keys).await);
                }
            }));
        }
        for c in callers {
            c.await.unwrap();
        }
        total += t.elapsed();
    }
    let mut counted = COMPUTATIONS.lock().unwrap();
    let row = counted.entry((keys, name.to_string())).or_default();
    row.0 += computations.load(Ordering::Relaxed) as u64;
    row.1 += iters;
    total
}

/// Computations and runs of each hot-key case, by (keys, group): printed
/// once all cases ran.
static COMPUTATIONS: std::sync::Mutex<std::collections::BTreeMap<(u64, String), (u64, u64)>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

fn print_computations() {
    for ((keys, name), (computations, runs)) in COMPUTATIONS.lock().unwrap().iter() {
        eprintln!(
            "computations: {name} on {keys} key(s): {:.1} per run of {} calls ({runs} runs)",
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
        g.bench_function("stampede-redis", |b| {
            b.to_async(&rt).iter_custom(|iters| {
                hot_runs(
                    "stampede-redis",
                    keys,
                    iters,
                    Group::<u64, u64, ()>::new,
                    |ours: Group<u64, u64, ()>, computations, k| async move {
                        ours.get_or_compute(k, far(), move || hot_work(computations, k).map_ok())
                            .await
                            .is_ok()
                    },
                )
            })
        });
        g.bench_function("async_singleflight", |b| {
            b.to_async(&rt).iter_custom(|iters| {
                let names: Arc<Vec<String>> = Arc::new((0..keys).map(|k| k.to_string()).collect());
                hot_runs(
                    "async_singleflight",
                    keys,
                    iters,
                    || Arc::new(async_singleflight::Group::<u64, ()>::new()),
                    move |theirs: Arc<async_singleflight::Group<u64, ()>>, computations, k| {
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
            })
        });
        g.finish();
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
fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
    print_computations();
}
