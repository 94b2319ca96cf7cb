//! An axum service in front of a slow origin, protected from stampedes.
//!
//! ```text
//! REDIS_URL=redis://127.0.0.1:6379 cargo run -p stampede-redis --example service
//! # or: cargo run -p stampede-redis --example service -- redis://127.0.0.1:6379 127.0.0.1:3000
//! curl localhost:3000/item/42     # through the Cache: Redis, singleflight, the claim
//! curl localhost:3000/edge/42     # through the tower layer only: coalesced, not cached
//! ```
//!
//! A burst on one item makes one origin call per process (and, with the
//! claim, one per fleet of these processes on the same Redis); the answer's
//! `source` says where each response's value came from.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};
use stampede_redis::cache::{Cache, CacheError, ClaimMode, LoserPolicy};
use stampede_redis::layer::{by_method_and_uri, CoalesceLayer};

/// What the origin serves.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Item {
    id: String,
    /// The origin's call count when this was computed.
    computed_by_call: u64,
}

/// The slow thing the cache stands in front of (a database, another
/// service): 300 ms a call.
async fn slow_origin(calls: &AtomicU64, id: String) -> Result<Item, String> {
    let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
    tokio::time::sleep(Duration::from_millis(300)).await;
    Ok(Item {
        id,
        computed_by_call: n,
    })
}

#[derive(Serialize)]
struct Reply {
    item: Item,
    source: String,
}

#[derive(Clone)]
struct App {
    cache: Cache<Item>,
    calls: Arc<AtomicU64>,
}

async fn item(
    State(app): State<App>,
    Path(id): Path<String>,
) -> Result<Json<Reply>, (StatusCode, String)> {
    match app.cache.get(format!("item:{id}")).await {
        Ok(got) => Ok(Json(Reply {
            item: got.value,
            source: format!("{:?}", got.source),
        })),
        Err(CacheError::Timeout) => Err((StatusCode::GATEWAY_TIMEOUT, "timed out".into())),
        Err(e) => Err((StatusCode::SERVICE_UNAVAILABLE, e.to_string())),
    }
}

async fn edge(State(app): State<App>, Path(id): Path<String>) -> Json<Item> {
    let item = slow_origin(&app.calls, id)
        .await
        .expect("the example's origin never fails");
    Json(item)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let redis = args
        .next()
        .or_else(|| std::env::var("REDIS_URL").ok())
        .unwrap_or_else(|| "redis://127.0.0.1:6379".into());
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:3000".into());

    let calls = Arc::new(AtomicU64::new(0));
    let origin_calls = calls.clone();
    let cache = Cache::builder()
        .redis(redis.as_str())
        .singleflight(true)
        .claim(ClaimMode::Inner)
        .loser(LoserPolicy::Wait)
        .ttl(Duration::from_secs(30))
        .stale(Duration::from_secs(30))
        .deadline(Duration::from_secs(1))
        .origin_timeout(Duration::from_millis(700))
        .origin(move |key: String| {
            let calls = origin_calls.clone();
            async move { slow_origin(&calls, key).await }
        })
        .build()
        .await?;
    let app = App { cache, calls };

    let router = Router::new()
        .route("/item/{id}", get(item))
        .merge(
            Router::new()
                .route("/edge/{id}", get(edge))
                .layer(CoalesceLayer::new(
                    by_method_and_uri,
                    Duration::from_secs(2),
                )),
        )
        .with_state(app);
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{addr} (Redis at {redis})");
    axum::serve(listener, router).await?;
    Ok(())
}
