//! Fixed-window rate limits whose counters live in PostgreSQL, so every instance shares them.

use std::time::Duration;

use sha2::{Digest, Sha256};
use sqlx::PgPool;
use time::OffsetDateTime;

/// A named limit: at most `max` hits per `window` per client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub name: &'static str,
    pub max: u32,
    pub window: Duration,
}

/// The outcome of counting one hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Allowed,
    Limited { retry_after_secs: u64 },
}

/// The counter key: a hash of the limit's name and the client, so no address is stored.
fn bucket(limit: &Limit, client: &str) -> String {
    let digest = Sha256::digest(format!("{}\0{}", limit.name, client).as_bytes());
    hex::encode(&digest[..16])
}

/// Counts one hit for `client` and says whether it is within the limit. One upsert: concurrent
/// hits from several instances are counted exactly.
pub async fn hit(pool: &PgPool, limit: &Limit, client: &str, now: OffsetDateTime) -> Result<Decision, sqlx::Error> {
    let window = limit.window.as_secs().max(1) as i64;
    let now_secs = now.unix_timestamp();
    let window_start_secs = now_secs - now_secs.rem_euclid(window);
    let window_start = OffsetDateTime::from_unix_timestamp(window_start_secs).expect("valid timestamp");
    let hits = sqlx::query_scalar!(
        r#"insert into rate_limit_counters (bucket, window_start, hits) values ($1, $2, 1)
           on conflict (bucket, window_start) do update set hits = rate_limit_counters.hits + 1
           returning hits"#,
        bucket(limit, client),
        window_start,
    )
    .fetch_one(pool)
    .await?;
    if hits as u32 > limit.max {
        let retry_after_secs = (window_start_secs + window - now_secs).max(1) as u64;
        Ok(Decision::Limited { retry_after_secs })
    } else {
        Ok(Decision::Allowed)
    }
}
