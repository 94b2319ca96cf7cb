//! The tower layer: concurrent requests with one key make one inner call
//! and each gets a copy of its response; every way a flight can end
//! without one is answered to all of its requests.

#![cfg(feature = "tower")]
use std::convert::Infallible;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use stampede_redis::layer::{by_method_and_uri, CoalesceLayer};
use tokio::time::sleep;
use tower::{service_fn, Layer, Service, ServiceExt};

fn get(uri: &str) -> Request<Full<Bytes>> {
    Request::get(uri).body(Full::new(Bytes::new())).unwrap()
}

/// Sends `req` through a clone of `svc` and reads the answer's body.
async fn send<S>(svc: &S, req: Request<Full<Bytes>>) -> Result<(StatusCode, String), S::Error>
where
    S: Service<
            Request<Full<Bytes>>,
            Response = Response<stampede_redis::layer::CoalescedBody<Full<Bytes>>>,
        > + Clone,
{
    let res = svc.clone().oneshot(req).await?;
    let status = res.status();
    let body = res.into_body().collect().await.unwrap().to_bytes();
    Ok((status, String::from_utf8(body.to_vec()).unwrap()))
}

#[tokio::test(start_paused = true)]
async fn concurrent_requests_with_one_key_make_one_call() {
    let calls = Arc::new(AtomicUsize::new(0));
    let inner = {
        let calls = calls.clone();
        service_fn(move |req: Request<Full<Bytes>>| {
            let calls = calls.clone();
            async move {
                calls.fetch_add(1, Ordering::SeqCst);
                sleep(Duration::from_millis(100)).await;
                let res = Response::builder()
                    .status(StatusCode::OK)
                    .header("x-path", req.uri().path())
                    .body(Full::new(Bytes::from(format!("page {}", req.uri()))))
                    .unwrap();
                Ok::<_, Infallible>(res)
            }
        })
    };
    let svc = CoalesceLayer::new(by_method_and_uri, Duration::from_secs(5)).layer(inner);
    let mut tasks = Vec::new();
    for i in 0..30 {
        let svc = svc.clone();
        let uri = if i % 3 == 0 { "/b" } else { "/a" };
        tasks.push(tokio::spawn(async move {
            let res = svc.oneshot(get(uri)).await.unwrap();
            let header = res.headers()["x-path"].to_str().unwrap().to_string();
            let body = res.into_body().collect().await.unwrap().to_bytes();
            (uri, header, body)
        }));
    }
    for t in tasks {
        let (uri, header, body) = t.await.unwrap();
        assert_eq!(header, uri);
        assert_eq!(body, Bytes::from(format!("page {uri}")));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 2, "one call per key");
    assert_eq!(svc.in_flight(), 0);
    // Nothing is remembered: the next request calls again.
    send(&svc, get("/a")).await.unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), 3);
}

#[tokio::test(start_paused = true)]
async fn requests_without_a_key_pass_through() {
    let calls = Arc::new(AtomicUsize::new(0));
    let inner = {
        let calls = calls.clone();
        service_fn(move |_req: Request<Full<Bytes>>| {
            let calls = calls.clone();
            async move {
                calls.fetch_add(1, Ordering::SeqCst);
                sleep(Duration::from_millis(50)).await;
                Ok::<_, Infallible>(Response::new(Full::new(Bytes::from("done"))))
            }
        })
    };
    let svc = CoalesceLayer::new(by_method_and_uri, Duration::from_secs(5)).layer(inner);
    let mut tasks = Vec::new();
    for _ in 0..5 {
        let svc = svc.clone();
        tasks.push(tokio::spawn(async move {
            let req = Request::builder()
                .method(Method::POST)
                .uri("/a")
                .body(Full::new(Bytes::new()))
                .unwrap();
            send(&svc, req).await.unwrap()
        }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap(), (StatusCode::OK, "done".into()));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 5);
}

#[tokio::test(start_paused = true)]
async fn an_inner_error_reaches_every_request() {
    let calls = Arc::new(AtomicUsize::new(0));
    let inner = {
        let calls = calls.clone();
        service_fn(move |_req: Request<Full<Bytes>>| {
            let calls = calls.clone();
            async move {
                calls.fetch_add(1, Ordering::SeqCst);
                sleep(Duration::from_millis(50)).await;
                Err::<Response<Full<Bytes>>, _>(String::from("upstream refused"))
            }
        })
    };
    let svc =
        CoalesceLayer::<_, String>::new(by_method_and_uri, Duration::from_secs(5)).layer(inner);
    let mut tasks = Vec::new();
    for _ in 0..10 {
        let svc = svc.clone();
        tasks.push(tokio::spawn(async move { send(&svc, get("/a")).await }));
    }
    for t in tasks {
        assert_eq!(t.await.unwrap(), Err("upstream refused".to_string()));
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(svc.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_panic_in_the_future_or_in_call_is_a_500_for_every_request() {
    for in_call in [false, true] {
        let calls = Arc::new(AtomicUsize::new(0));
        let inner = {
            let calls = calls.clone();
            service_fn(move |_req: Request<Full<Bytes>>| {
                let n = calls.fetch_add(1, Ordering::SeqCst);
                if in_call && n == 0 {
                    panic!("call panicked before its future existed");
                }
                async move {
                    sleep(Duration::from_millis(50)).await;
                    if n == 0 {
                        panic!("the inner future panicked");
                    }
                    Ok::<_, Infallible>(Response::new(Full::new(Bytes::from("ok"))))
                }
            })
        };
        let svc = CoalesceLayer::new(by_method_and_uri, Duration::from_secs(5)).layer(inner);
        // A panic in `call` happens as the leader joins, before anyone can
        // follow it: that request alone gets the 500. A panic in the future
        // reaches the whole flight.
        let n = if in_call { 1 } else { 10 };
        let mut tasks = Vec::new();
        for _ in 0..n {
            let svc = svc.clone();
            tasks.push(tokio::spawn(async move { send(&svc, get("/a")).await }));
        }
        for t in tasks {
            let (status, _) = t.await.unwrap().unwrap();
            assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert_eq!(svc.in_flight(), 0, "the key is free again");
        assert_eq!(
            send(&svc, get("/a")).await.unwrap(),
            (StatusCode::OK, "ok".into())
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_wait_that_passes_is_a_504_and_the_call_goes_on() {
    let calls = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let inner = {
        let (calls, done) = (calls.clone(), done.clone());
        service_fn(move |_req: Request<Full<Bytes>>| {
            let (calls, done) = (calls.clone(), done.clone());
            async move {
                calls.fetch_add(1, Ordering::SeqCst);
                sleep(Duration::from_millis(500)).await;
                done.fetch_add(1, Ordering::SeqCst);
                Ok::<_, Infallible>(Response::new(Full::new(Bytes::from("late"))))
            }
        })
    };
    let svc = CoalesceLayer::new(by_method_and_uri, Duration::from_millis(100)).layer(inner);
    let (status, _) = send(&svc, get("/a")).await.unwrap();
    assert_eq!(status, StatusCode::GATEWAY_TIMEOUT);
    sleep(Duration::from_secs(1)).await;
    assert_eq!(done.load(Ordering::SeqCst), 1, "the call was not cancelled");
    assert_eq!(svc.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_request_that_leaves_does_not_strand_the_others() {
    let calls = Arc::new(AtomicUsize::new(0));
    let inner = {
        let calls = calls.clone();
        service_fn(move |_req: Request<Full<Bytes>>| {
            let calls = calls.clone();
            async move {
                calls.fetch_add(1, Ordering::SeqCst);
                sleep(Duration::from_millis(100)).await;
                Ok::<_, Infallible>(Response::new(Full::new(Bytes::from("v"))))
            }
        })
    };
    let svc = CoalesceLayer::new(by_method_and_uri, Duration::from_secs(5)).layer(inner);
    let first = {
        let svc = svc.clone();
        tokio::spawn(async move { send(&svc, get("/a")).await })
    };
    while svc.in_flight() == 0 {
        tokio::task::yield_now().await;
    }
    let second = {
        let svc = svc.clone();
        tokio::spawn(async move { send(&svc, get("/a")).await })
    };
    tokio::task::yield_now().await;
    first.abort();
    assert_eq!(second.await.unwrap().unwrap(), (StatusCode::OK, "v".into()));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}
