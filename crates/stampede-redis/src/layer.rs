//! A tower [`Layer`] that coalesces HTTP requests by a key, for a service
//! that wants singleflight at its edge: concurrent requests with the same
//! key make one call to the inner service, and each gets a copy of its
//! response (status, headers, the body read into memory once).
//!
//! ```
//! use std::time::Duration;
//! use stampede_redis::layer::{by_method_and_uri, CoalesceLayer};
//!
//! // GET and HEAD requests with the same method and URI share one call;
//! // every other request passes through.
//! let layer: CoalesceLayer<_> = CoalesceLayer::new(by_method_and_uri, Duration::from_secs(2));
//! # let _ = layer;
//! ```
//!
//! The key decides who shares a response: it must name everything the
//! response depends on (a user's credentials included, when it depends on
//! them). What happens when:
//!
//! - **A caller leaves** (its future dropped, its connection closed): the
//!   inner call goes on, detached, for the requests still waiting on it.
//! - **The wait passes** (the layer's `wait`, per request): that request
//!   gets `504 Gateway Timeout`; the call goes on for the others.
//! - **The inner service errs**: every request of the flight gets a clone of
//!   the error (hence `S::Error: Clone`; axum's `Infallible` is).
//! - **The inner service panics**, in its `call` or in its future: every
//!   request of the flight gets `500 Internal Server Error`; the key is free.
//! - **The response body fails** while it is read: `502 Bad Gateway` for
//!   the flight.
//!
//! Nothing is kept after a flight settles: the next request with the key
//! calls the inner service again (this is not a response cache).

use std::convert::Infallible;
use std::fmt::Display;
use std::future::Future;
use std::hash::Hash;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{request, response, Method, Request, Response, StatusCode};
use http_body::Body;
use http_body_util::{BodyExt, Either, Full};
use tokio::time::Instant;
use tower_layer::Layer;
use tower_service::Service;

use crate::group::{Failure, Group};

/// The coalescing key of a GET or HEAD request: its method and URI. Other
/// methods are not coalesced (`None`).
pub fn by_method_and_uri(req: &request::Parts) -> Option<String> {
    (req.method == Method::GET || req.method == Method::HEAD)
        .then(|| format!("{} {}", req.method, req.uri))
}

/// Wraps a service in [`Coalesce`]: requests for which `key` says `Some`
/// share flights. `E` is the inner service's error type (axum's is
/// `Infallible`, the default).
pub struct CoalesceLayer<F, E = Infallible> {
    key: Arc<F>,
    wait: Duration,
    _error: PhantomData<fn() -> E>,
}

impl<F, E> Clone for CoalesceLayer<F, E> {
    fn clone(&self) -> Self {
        CoalesceLayer {
            key: self.key.clone(),
            wait: self.wait,
            _error: PhantomData,
        }
    }
}

impl<F, E> CoalesceLayer<F, E> {
    /// Coalesces the requests for which `key` says `Some`; each request
    /// waits `wait` at most.
    pub fn new(key: F, wait: Duration) -> Self {
        CoalesceLayer {
            key: Arc::new(key),
            wait,
            _error: PhantomData,
        }
    }
}

impl<S, F, K, E> Layer<S> for CoalesceLayer<F, E>
where
    F: Fn(&request::Parts) -> Option<K>,
    K: Hash + Eq + Clone,
{
    type Service = Coalesce<S, F, K, E>;

    fn layer(&self, inner: S) -> Self::Service {
        Coalesce {
            inner,
            key: self.key.clone(),
            wait: self.wait,
            group: Group::default(),
        }
    }
}

/// A response read into memory: what every request of a flight copies.
type Buffered = Result<(response::Parts, Bytes), String>;

/// A service whose concurrent requests with one key share one inner call.
/// Clones share the flights.
pub struct Coalesce<S, F, K, E> {
    inner: S,
    key: Arc<F>,
    wait: Duration,
    group: Group<K, Buffered, E>,
}

impl<S: Clone, F, K, E> Clone for Coalesce<S, F, K, E> {
    fn clone(&self) -> Self {
        Coalesce {
            inner: self.inner.clone(),
            key: self.key.clone(),
            wait: self.wait,
            group: self.group.clone(),
        }
    }
}

impl<S, F, K, E> Coalesce<S, F, K, E>
where
    K: Hash + Eq + Clone + Send + 'static,
    E: Send + Sync + 'static,
{
    /// Flights running now (0 once every flight settled).
    pub fn in_flight(&self) -> usize {
        self.group.in_flight()
    }
}

/// The body of a coalesced response (a copy of the shared one) or of a
/// request passed through.
pub type CoalescedBody<B> = Either<Full<Bytes>, B>;

/// The response future of [`Coalesce`].
pub type CoalesceFuture<B, E> =
    Pin<Box<dyn Future<Output = Result<Response<CoalescedBody<B>>, E>> + Send>>;

fn status<B>(code: StatusCode) -> Response<CoalescedBody<B>> {
    let mut r = Response::new(Either::Left(Full::new(Bytes::new())));
    *r.status_mut() = code;
    r
}

impl<S, F, K, E, ReqBody, ResBody> Service<Request<ReqBody>> for Coalesce<S, F, K, E>
where
    S: Service<Request<ReqBody>, Response = Response<ResBody>, Error = E> + Clone + Send + 'static,
    S::Future: Send + 'static,
    E: Clone + Send + Sync + 'static,
    F: Fn(&request::Parts) -> Option<K> + Send + Sync + 'static,
    K: Hash + Eq + Clone + Send + 'static,
    ReqBody: Send + 'static,
    ResBody: Body<Data = Bytes> + Send + 'static,
    ResBody::Error: Display,
{
    type Response = Response<CoalescedBody<ResBody>>;
    type Error = E;
    type Future = CoalesceFuture<ResBody, E>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), E>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        // The service that was made ready is the one called; a fresh clone
        // takes its place.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let (parts, body) = req.into_parts();
        let key = (self.key)(&parts);
        let req = Request::from_parts(parts, body);
        let Some(key) = key else {
            let call = inner.call(req);
            return Box::pin(async move { Ok(call.await?.map(Either::Right)) });
        };
        let group = self.group.clone();
        let deadline = Instant::now() + self.wait;
        Box::pin(async move {
            let shared = group
                .get_or_compute(key, deadline, move || {
                    // Called only by the flight's leader, and only here:
                    // a panic in `call` is caught by the group too.
                    let call = inner.call(req);
                    async move {
                        let (parts, body) = call.await?.into_parts();
                        Ok(match body.collect().await {
                            Ok(collected) => Ok((parts, collected.to_bytes())),
                            Err(e) => Err(e.to_string()),
                        })
                    }
                })
                .await;
            match shared.as_deref() {
                Ok(Ok(Ok((parts, bytes)))) => Ok(Response::from_parts(
                    parts.clone(),
                    Either::Left(Full::new(bytes.clone())),
                )),
                Ok(Ok(Err(_))) => Ok(status(StatusCode::BAD_GATEWAY)),
                Ok(Err(Failure::Error(e))) => Err(e.clone()),
                Ok(Err(Failure::Panicked)) => Ok(status(StatusCode::INTERNAL_SERVER_ERROR)),
                Err(_) => Ok(status(StatusCode::GATEWAY_TIMEOUT)),
            }
        })
    }
}
