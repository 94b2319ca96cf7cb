//! The adopter's path: an axum service built from the crate README's first
//! snippet alone. Everything between the two `README` marks is that
//! snippet, word for word (`tests/adopter.rs` checks it, then runs this
//! example against a real `redis-server`); `main` only serves it.
//!
//! ```text
//! REDIS_URL=redis://127.0.0.1:6379 ADDR=127.0.0.1:3000 cargo run -p stampede-redis --example adopter
//! curl -i localhost:3000/profile/42
//! ```

// README: begin
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use stampede_redis::cache::{BuildError, Cache, CacheError, ClaimMode, LoserPolicy};

#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub struct Profile {
    pub name: String,
}

/// The slow thing the cache stands in front of (a database, a service).
async fn load_profile(id: &str) -> Result<Profile, std::io::Error> {
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(Profile {
        name: format!("user {id}"),
    })
}

/// One cache per process; its clones share it.
pub async fn profiles(redis_url: &str) -> Result<Cache<Profile>, BuildError> {
    Cache::builder()
        .redis(redis_url)
        .key_prefix("profiles:")
        .singleflight(true)
        .claim(ClaimMode::Inner)
        .loser(LoserPolicy::Wait)
        .ttl(Duration::from_secs(60))
        .stale(Duration::from_secs(30))
        .deadline(Duration::from_millis(1000))
        .origin_timeout(Duration::from_millis(700))
        .origin(|id: String| async move { load_profile(&id).await })
        .build()
        .await
}

/// `GET /profile/{id}`: the profile, and where it came from.
async fn profile(
    State(cache): State<Cache<Profile>>,
    Path(id): Path<String>,
) -> Result<([(&'static str, String); 1], Json<Profile>), (StatusCode, String)> {
    match cache.get(id).await {
        Ok(got) => Ok(([("x-cache", format!("{:?}", got.source))], Json(got.value))),
        Err(CacheError::Timeout) => Err((StatusCode::GATEWAY_TIMEOUT, "try again".into())),
        Err(CacheError::Origin(e)) => Err((StatusCode::BAD_GATEWAY, e.to_string())),
        Err(e) => Err((StatusCode::SERVICE_UNAVAILABLE, e.to_string())),
    }
}

pub fn app(cache: Cache<Profile>) -> Router {
    Router::new()
        .route("/profile/{id}", get(profile))
        .with_state(cache)
}
// README: end

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let redis = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let addr = std::env::var("ADDR").unwrap_or_else(|_| "127.0.0.1:3000".into());
    let cache = profiles(&redis).await?;
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    // The test reads the port from this line.
    println!("listening on {}", listener.local_addr()?);
    axum::serve(listener, app(cache)).await?;
    Ok(())
}
