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
