//! The async group's rules, one test each, including the failures known
//! from other singleflight implementations: Go's x/sync/singleflight (a
//! panicking function leaving waiters blocked; Forget), async_singleflight
//! (followers stranded when the leader's future is dropped) and moka's
//! coalescing (an init that panics or fails must reach every waiter and
//! must not be cached).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use stampede_redis::{Failure, Group, TimedOut};
use tokio::time::{sleep, Instant};

fn far() -> Instant {
    Instant::now() + Duration::from_secs(3600)
}

#[tokio::test(start_paused = true)]
async fn concurrent_callers_share_one_execution_and_one_allocation() {
    let g: Group<&str, u64, String> = Group::new();
    let runs = Arc::new(AtomicUsize::new(0));
    let mut calls = Vec::new();
    for _ in 0..200 {
        let (g, runs) = (g.clone(), runs.clone());
        calls.push(tokio::spawn(async move {
            g.get_or_compute("k", far(), move || async move {
                runs.fetch_add(1, Ordering::SeqCst);
                sleep(Duration::from_millis(200)).await;
                Ok(42)
            })
            .await
        }));
    }
    let mut results = Vec::new();
    for c in calls {
        results.push(c.await.unwrap().unwrap());
    }
    assert_eq!(runs.load(Ordering::SeqCst), 1);
    assert!(results.iter().all(|r| matches!(**r, Ok(42))));
    assert!(results.windows(2).all(|w| Arc::ptr_eq(&w[0], &w[1])));
    assert_eq!(g.in_flight(), 0, "nothing is kept after settle");
}

#[tokio::test(start_paused = true)]
async fn a_failure_reaches_the_current_waiters_and_is_not_remembered() {
    let g: Group<u8, u64, &'static str> = Group::new();
    let runs = Arc::new(AtomicUsize::new(0));
    let call = |g: Group<u8, u64, &'static str>, runs: Arc<AtomicUsize>, fail: bool| async move {
        g.get_or_compute(1, far(), move || async move {
            runs.fetch_add(1, Ordering::SeqCst);
            sleep(Duration::from_millis(50)).await;
            if fail {
                Err("origin down")
            } else {
                Ok(7)
            }
        })
        .await
    };
    let a = tokio::spawn(call(g.clone(), runs.clone(), true));
    let b = tokio::spawn(call(g.clone(), runs.clone(), true));
    let (a, b) = (a.await.unwrap().unwrap(), b.await.unwrap().unwrap());
    assert_eq!(*a, Err(Failure::Error("origin down")));
    assert!(
        Arc::ptr_eq(&a, &b),
        "the same failure for every current waiter"
    );
    // The next caller starts over: a blip is not a sticky outage.
    let c = call(g.clone(), runs.clone(), false).await.unwrap();
    assert_eq!(*c, Ok(7));
    assert_eq!(runs.load(Ordering::SeqCst), 2);
}

/// A follower that leaves at its deadline is detached from the flight at
/// once (the core's table no longer counts it); the flight goes on and
/// answers the followers still attached.
#[tokio::test(start_paused = true)]
async fn a_follower_that_leaves_is_detached_and_the_others_still_get_the_result() {
    let g: Group<u8, u64, ()> = Group::new();
    let leader = {
        let g = g.clone();
        tokio::spawn(async move {
            g.get_or_compute(1, far(), || async {
                sleep(Duration::from_millis(500)).await;
                Ok(7)
            })
            .await
        })
    };
    let stays = {
        let g = g.clone();
        tokio::spawn(async move { g.get_or_compute(1, far(), || async { Ok(0) }).await })
    };
    while g.waiting(&1) < 1 {
        tokio::task::yield_now().await;
    }
    let leaves = g.get_or_compute(1, Instant::now() + Duration::from_millis(100), || async {
        Ok(0)
    });
    assert_eq!(leaves.await, Err(TimedOut));
    assert_eq!(g.waiting(&1), 1, "only the follower that stays is attached");
    assert_eq!(*stays.await.unwrap().unwrap(), Ok(7));
    assert_eq!(*leader.await.unwrap().unwrap(), Ok(7));
    assert_eq!(g.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_waiter_leaves_at_its_own_deadline_without_cancelling_the_work() {
    let g: Group<u8, u64, ()> = Group::new();
    let done = Arc::new(AtomicUsize::new(0));
    let d = done.clone();
    let impatient = g.get_or_compute(
        1,
        Instant::now() + Duration::from_millis(100),
        move || async move {
            sleep(Duration::from_millis(500)).await;
            d.fetch_add(1, Ordering::SeqCst);
            Ok(9)
        },
    );
    let patient = {
        let g = g.clone();
        tokio::spawn(async move {
            sleep(Duration::from_millis(10)).await;
            g.get_or_compute(1, far(), || async { Ok(0) }).await
        })
    };
    // The leader's caller gives up at 100 ms: its deadline, not the work's.
    assert_eq!(impatient.await, Err(TimedOut));
    assert_eq!(g.waiting(&1), 1, "the other waiter is still attached");
    assert_eq!(*patient.await.unwrap().unwrap(), Ok(9), "the work went on");
    assert_eq!(done.load(Ordering::SeqCst), 1);
    assert_eq!(g.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_dropped_leader_does_not_strand_its_followers() {
    let g: Group<u8, u64, ()> = Group::new();
    let leader = {
        let g = g.clone();
        tokio::spawn(async move {
            g.get_or_compute(1, far(), || async {
                sleep(Duration::from_millis(300)).await;
                Ok(5)
            })
            .await
        })
    };
    sleep(Duration::from_millis(10)).await;
    let follower = {
        let g = g.clone();
        tokio::spawn(async move { g.get_or_compute(1, far(), || async { Ok(0) }).await })
    };
    sleep(Duration::from_millis(10)).await;
    leader.abort();
    assert!(leader.await.is_err(), "the leader's caller is gone");
    assert_eq!(*follower.await.unwrap().unwrap(), Ok(5));
}

#[tokio::test(start_paused = true)]
async fn a_panicking_computation_fails_every_waiter_and_frees_the_key() {
    let g: Group<u8, u64, ()> = Group::new();
    let mut calls = Vec::new();
    for _ in 0..10 {
        let g = g.clone();
        calls.push(tokio::spawn(async move {
            g.get_or_compute(1, far(), || async {
                sleep(Duration::from_millis(20)).await;
                if true {
                    panic!("the origin client blew up");
                }
                Ok(1)
            })
            .await
        }));
    }
    for c in calls {
        assert_eq!(*c.await.unwrap().unwrap(), Err(Failure::Panicked));
    }
    assert_eq!(g.in_flight(), 0);
    let again = g
        .get_or_compute(1, far(), || async { Ok(2) })
        .await
        .unwrap();
    assert_eq!(*again, Ok(2));
}

#[tokio::test(start_paused = true)]
async fn a_closure_that_panics_before_its_future_exists_frees_the_key() {
    let g: Group<u8, u64, ()> = Group::new();
    let boom = || -> std::future::Ready<Result<u64, ()>> { panic!("building the request failed") };
    let first = g.get_or_compute(1, far(), boom).await.unwrap();
    assert_eq!(*first, Err(Failure::Panicked));
    assert_eq!(g.in_flight(), 0, "no flight is left without a leader");
    // The next caller leads a new flight (a flight nobody runs would
    // answer it `TimedOut` at its deadline instead).
    let again = g.get_or_compute(1, far(), || async { Ok(2) }).await;
    assert_eq!(*again.unwrap(), Ok(2));
}

#[tokio::test(start_paused = true)]
async fn keys_are_independent() {
    let g: Group<u32, u32, ()> = Group::new();
    let runs = Arc::new(AtomicUsize::new(0));
    let mut calls = Vec::new();
    for key in 0..100u32 {
        for _ in 0..10 {
            let (g, runs) = (g.clone(), runs.clone());
            calls.push(tokio::spawn(async move {
                g.get_or_compute(key, far(), move || async move {
                    runs.fetch_add(1, Ordering::SeqCst);
                    sleep(Duration::from_millis(5)).await;
                    Ok(key * 2)
                })
                .await
                .map(|r| (key, r))
            }));
        }
    }
    for c in calls {
        let (key, r) = c.await.unwrap().unwrap();
        assert_eq!(*r, Ok(key * 2));
    }
    assert_eq!(runs.load(Ordering::SeqCst), 100);
}

// Every way a leader can fail to settle, each a test: the work runs in the
// leader's own future until the leader leaves, and is handed to a task of
// its own then.

#[tokio::test(start_paused = true)]
async fn a_leader_that_leaves_alone_still_finishes_its_work() {
    let g: Group<u8, u64, ()> = Group::new();
    let done = Arc::new(AtomicUsize::new(0));
    let d = done.clone();
    let r = g
        .get_or_compute(
            1,
            Instant::now() + Duration::from_millis(10),
            || async move {
                sleep(Duration::from_millis(100)).await;
                d.fetch_add(1, Ordering::SeqCst);
                Ok(1)
            },
        )
        .await;
    assert_eq!(r, Err(TimedOut));
    assert_eq!(g.in_flight(), 1, "the work goes on, detached");
    sleep(Duration::from_millis(200)).await;
    assert_eq!(done.load(Ordering::SeqCst), 1);
    assert_eq!(g.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn detached_work_that_panics_answers_every_follower() {
    let g: Group<u8, u64, ()> = Group::new();
    let leader = {
        let g = g.clone();
        tokio::spawn(async move {
            g.get_or_compute(1, far(), || async {
                sleep(Duration::from_millis(100)).await;
                if true {
                    panic!("the detached work blew up");
                }
                Ok(5)
            })
            .await
        })
    };
    sleep(Duration::from_millis(10)).await;
    let mut followers = Vec::new();
    for _ in 0..5 {
        let g = g.clone();
        followers.push(tokio::spawn(async move {
            g.get_or_compute(1, far(), || async { Ok(0) }).await
        }));
    }
    sleep(Duration::from_millis(10)).await;
    leader.abort();
    for f in followers {
        assert_eq!(*f.await.unwrap().unwrap(), Err(Failure::Panicked));
    }
    assert_eq!(g.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_caller_dropped_before_its_first_poll_starts_nothing() {
    let g: Group<u8, u64, ()> = Group::new();
    let never = g.get_or_compute(1, far(), || async { Ok(1) });
    drop(never);
    assert_eq!(g.in_flight(), 0);
}

/// Polls `fut` once, inside the runtime it is called in.
async fn poll_once<F: std::future::Future + Unpin>(fut: &mut F) {
    std::future::poll_fn(|cx| {
        let _ = std::pin::Pin::new(&mut *fut).poll(cx);
        std::task::Poll::Ready(())
    })
    .await
}

#[test]
fn a_leader_dropped_outside_any_runtime_settles_its_flight() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let g: Group<u8, u64, ()> = Group::new();
    let (leader, follower) = rt.block_on(async {
        let g2 = g.clone();
        let mut leader = Box::pin(async move {
            g2.get_or_compute(1, far(), || async {
                sleep(Duration::from_secs(60)).await;
                Ok(1)
            })
            .await
        });
        poll_once(&mut leader).await;
        let g3 = g.clone();
        let follower =
            tokio::spawn(async move { g3.get_or_compute(1, far(), || async { Ok(0) }).await });
        while g.waiting(&1) == 0 {
            tokio::task::yield_now().await;
        }
        (leader, follower)
    });
    // No runtime here to take the work over: the flight settles at once.
    drop(leader);
    assert_eq!(g.in_flight(), 0);
    let answered = rt.block_on(follower).unwrap().unwrap();
    assert_eq!(*answered, Err(Failure::Panicked));
}

#[test]
fn a_runtime_shut_down_under_detached_work_settles_its_flight() {
    let g: Group<u8, u64, ()> = Group::new();
    let first = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    first.block_on(async {
        let r = g
            .get_or_compute(1, Instant::now() + Duration::from_millis(1), || async {
                sleep(Duration::from_secs(3600)).await;
                Ok(1)
            })
            .await;
        assert_eq!(r, Err(TimedOut));
    });
    assert_eq!(g.in_flight(), 1, "detached onto the first runtime");
    drop(first);
    assert_eq!(
        g.in_flight(),
        0,
        "its task was dropped, and settled the flight"
    );
    let second = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let again = second.block_on(g.get_or_compute(1, far(), || async { Ok(2) }));
    assert_eq!(*again.unwrap(), Ok(2));
}

#[tokio::test(start_paused = true)]
async fn no_key_is_left_stuck_by_leaves_panics_errors_and_timeouts() {
    let g: Group<u32, u32, u32> = Group::new();
    let mut tasks = Vec::new();
    for i in 0..2000u32 {
        let g = g.clone();
        let task = tokio::spawn(async move {
            let deadline = Instant::now() + Duration::from_millis(u64::from(i % 7));
            g.get_or_compute(i % 20, deadline, move || {
                if i % 31 == 0 {
                    panic!("the closure blew up");
                }
                async move {
                    sleep(Duration::from_millis(u64::from(i % 5))).await;
                    match i % 3 {
                        0 => Ok(i),
                        1 => Err(i),
                        _ if i % 11 == 0 => panic!("the future blew up"),
                        _ => Ok(i),
                    }
                }
            })
            .await
        });
        if i % 13 == 0 {
            // Some callers leave at once, leaders among them.
            tokio::task::yield_now().await;
            task.abort();
        } else {
            tasks.push(task);
        }
        if i % 100 == 0 {
            sleep(Duration::from_millis(1)).await;
        }
    }
    for t in tasks {
        // Every caller returns: a value, an error, a panic or its deadline.
        t.await.unwrap().ok();
    }
    // The longest work is 4 ms of (paused) time.
    sleep(Duration::from_secs(1)).await;
    assert_eq!(g.in_flight(), 0, "no flight outlived its work");
    for k in 0..20 {
        let r = g.get_or_compute(k, far(), || async { Ok(7) }).await;
        assert_eq!(*r.unwrap(), Ok(7), "key {k} leads a new flight");
    }
}

/// Followers share a timer where they can (the earliest deadline's), yet
/// each still leaves at its own deadline: when the follower with the timer
/// leaves (at its deadline, or dropped), the ones after it time out at
/// theirs, and the latest gets the value.
#[tokio::test(start_paused = true)]
async fn each_follower_leaves_at_its_own_deadline_though_they_share_a_timer() {
    let g: Group<u8, u64, ()> = Group::new();
    let start = Instant::now();
    let leader = {
        let g = g.clone();
        tokio::spawn(async move {
            g.get_or_compute(1, far(), || async {
                sleep(Duration::from_millis(1000)).await;
                Ok(7)
            })
            .await
        })
    };
    sleep(Duration::from_millis(1)).await;
    // In order of arrival: the first has the earliest deadline (the
    // timer); the next ones' deadlines are later.
    let follower = |ms: u64| {
        let g = g.clone();
        tokio::spawn(async move {
            let r = g
                .get_or_compute(1, start + Duration::from_millis(ms), || async { Ok(0) })
                .await;
            (r.map(|v| *v == Ok(7)), start.elapsed().as_millis() as u64)
        })
    };
    let first = follower(100);
    sleep(Duration::from_millis(1)).await;
    let dropped = follower(150);
    sleep(Duration::from_millis(1)).await;
    let second = follower(200);
    let third = follower(400);
    let last = follower(5000);
    sleep(Duration::from_millis(1)).await;
    assert_eq!(g.waiting(&1), 5);
    assert_eq!(first.await.unwrap(), (Err(TimedOut), 100));
    // A follower dropped while it would hold the timer.
    sleep(Duration::from_millis(10)).await;
    dropped.abort();
    assert_eq!(second.await.unwrap(), (Err(TimedOut), 200));
    assert_eq!(third.await.unwrap(), (Err(TimedOut), 400));
    assert_eq!(last.await.unwrap(), (Ok(true), 1000));
    assert_eq!(*leader.await.unwrap().unwrap(), Ok(7));
    assert_eq!(g.in_flight(), 0);
}

/// The leader's deadline covers its followers (they take no timer while
/// it stays), yet when it leaves at its deadline, the work going on, each
/// follower still leaves at its own deadline, and one that outlasts the
/// work gets the value.
#[tokio::test(start_paused = true)]
async fn followers_covered_by_the_leaders_deadline_leave_at_their_own() {
    let g: Group<u8, u64, ()> = Group::new();
    let start = Instant::now();
    let call = |ms: u64| {
        let g = g.clone();
        tokio::spawn(async move {
            let r = g
                .get_or_compute(1, start + Duration::from_millis(ms), || async {
                    sleep(Duration::from_millis(1000)).await;
                    Ok(7)
                })
                .await;
            (r.map(|v| *v == Ok(7)), start.elapsed().as_millis() as u64)
        })
    };
    let leader = call(100);
    sleep(Duration::from_millis(1)).await;
    let (a, b, last) = (call(150), call(300), call(5000));
    sleep(Duration::from_millis(1)).await;
    assert_eq!(g.waiting(&1), 3);
    assert_eq!(leader.await.unwrap(), (Err(TimedOut), 100));
    assert_eq!(a.await.unwrap(), (Err(TimedOut), 150));
    assert_eq!(b.await.unwrap(), (Err(TimedOut), 300));
    assert_eq!(last.await.unwrap(), (Ok(true), 1000));
    assert_eq!(g.in_flight(), 0);
}

/// A small deterministic generator for the schedules below (xorshift64*).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) % n
    }
}

/// What one computation did: the order numbers of its start and its end
/// (on the test's one-thread runtime, the flight settles in the same poll
/// as its end), its key and how it ended (0 ok, 1 error, 2 panicked).
#[derive(Clone, Copy, Debug)]
struct Ran {
    key: u8,
    start: usize,
    end: usize,
    ended: u8,
}

/// The group's rules over many random schedules: callers of a few keys
/// arriving over time, each with its own deadline, some dropped; work that
/// succeeds, fails, panics in its future or in the closure, of random
/// lengths. Against a log of every computation and every answer:
/// - one computation per key at a time (their spans never overlap, the
///   detached work of a leader that left included);
/// - every answer is the outcome of the computation of its key that was
///   running when the caller called (success, error or panic alike): a
///   caller shares the running flight, and no settled result, a failure
///   included, reaches a caller that came after it;
/// - a caller that timed out did so at its own deadline, not before, and
///   its flight was still running then;
/// - nothing is left in flight, and each key computes anew afterwards.
#[tokio::test(start_paused = true)]
async fn random_schedules_keep_the_rules() {
    for seed in 1..=150u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let g: Group<u8, usize, usize> = Group::new();
        let order = Arc::new(AtomicUsize::new(0));
        let log = Arc::new(std::sync::Mutex::new(Vec::<Ran>::new()));
        let keys = 1 + rng.below(3) as u8;
        let callers = 10 + rng.below(40);
        let start = Instant::now();
        let mut tasks = Vec::new();
        for i in 0..callers {
            let key = rng.below(u64::from(keys)) as u8;
            let arrive = Duration::from_millis(rng.below(30));
            let patience = Duration::from_millis(1 + rng.below(25));
            let work = Duration::from_millis(rng.below(12));
            let ending = rng.below(10);
            let dropped_at = (rng.below(6) == 0).then(|| Duration::from_millis(rng.below(30)));
            let (g, order, log) = (g.clone(), order.clone(), log.clone());
            let task = tokio::spawn(async move {
                sleep(arrive).await;
                let deadline = Instant::now() + patience;
                let called = order.fetch_add(1, Ordering::SeqCst);
                let (o, l) = (order.clone(), log.clone());
                let got = g
                    .get_or_compute(key, deadline, move || {
                        let started = o.fetch_add(1, Ordering::SeqCst);
                        let id = l.lock().unwrap().len();
                        let ran = move |ended| Ran {
                            key,
                            start: started,
                            end: o.fetch_add(1, Ordering::SeqCst),
                            ended,
                        };
                        if ending == 0 {
                            l.lock().unwrap().push(ran(2));
                            panic!("the closure blew up");
                        }
                        l.lock().unwrap().push(Ran {
                            key,
                            start: started,
                            end: usize::MAX,
                            ended: 9,
                        });
                        async move {
                            sleep(work).await;
                            let ended = match ending {
                                1 | 2 => 1,
                                3 => 2,
                                _ => 0,
                            };
                            l.lock().unwrap()[id] = ran(ended);
                            match ended {
                                0 => Ok(id),
                                1 => Err(id),
                                _ => panic!("the future blew up"),
                            }
                        }
                    })
                    .await;
                (
                    i,
                    key,
                    called,
                    deadline,
                    got,
                    Instant::now(),
                    order.fetch_add(1, Ordering::SeqCst),
                )
            });
            tasks.push((task, dropped_at));
        }
        let mut answers = Vec::new();
        for (task, dropped_at) in tasks {
            if let Some(at) = dropped_at {
                tokio::time::sleep_until(start + at).await;
                task.abort();
            }
            if let Ok(answer) = task.await {
                answers.push(answer);
            }
        }
        // The longest work is 11 ms; detached work ends by itself.
        sleep(Duration::from_millis(100)).await;
        let log = log.lock().unwrap().clone();
        assert!(
            log.iter().all(|r| r.end != usize::MAX),
            "seed {seed}: work left unfinished {log:?}"
        );
        for (a, x) in log.iter().enumerate() {
            for y in &log[a + 1..] {
                assert!(
                    x.key != y.key || x.end < y.start || y.end < x.start,
                    "seed {seed}: two computations of key {} at once: {x:?} {y:?}",
                    x.key
                );
            }
        }
        // The computation of `key` running at order number `at`.
        let running = |key: u8, at: usize| {
            log.iter()
                .enumerate()
                .find(|(_, r)| r.key == key && r.start <= at + 1 && at <= r.end)
        };
        for (i, key, called, deadline, got, at, returned) in answers {
            match got {
                Ok(shared) => {
                    let (id, ran) = running(key, called).unwrap_or_else(|| {
                        panic!("seed {seed}: caller {i} answered with no computation running")
                    });
                    let want = match ran.ended {
                        0 => Ok(id),
                        1 => Err(Failure::Error(id)),
                        _ => Err(Failure::Panicked),
                    };
                    assert_eq!(*shared, want, "seed {seed}: caller {i} of key {key}");
                    assert!(returned > ran.end, "seed {seed}: caller {i} answered early");
                }
                Err(TimedOut) => {
                    assert_eq!(
                        at, deadline,
                        "seed {seed}: caller {i} left off its deadline"
                    );
                    let (_, ran) = running(key, called).unwrap_or_else(|| {
                        panic!("seed {seed}: caller {i} timed out with no computation running")
                    });
                    assert!(
                        ran.end > returned,
                        "seed {seed}: caller {i} timed out after its flight ended"
                    );
                }
            }
        }
        assert_eq!(g.in_flight(), 0, "seed {seed}: a flight outlived its work");
        for key in 0..keys {
            let r = g
                .get_or_compute(key, far(), || async { Ok(usize::MAX) })
                .await;
            assert_eq!(
                *r.unwrap(),
                Ok(usize::MAX),
                "seed {seed}: key {key} computes anew"
            );
        }
    }
}
