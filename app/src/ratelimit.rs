//! Fixed-window rate limits whose counters live in PostgreSQL, so every instance shares them.

use std::time::Duration;

use sha2::{Digest, Sha256};
use sqlx::PgPool;

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
pub fn bucket(limit: &Limit, client: &str) -> String {
    let digest = Sha256::digest(format!("{}\0{}", limit.name, client).as_bytes());
    hex::encode(&digest[..16])
}

/// Counts one hit for `client` and says whether it is within the limit. One upsert: concurrent
/// hits from several instances are counted exactly. The window is cut from the database clock,
/// so every instance counts into the same window whatever its own clock says.
pub async fn hit(pool: &PgPool, limit: &Limit, client: &str) -> Result<Decision, sqlx::Error> {
    let window = limit.window.as_secs().max(1) as i64;
    let row = sqlx::query!(
        r#"with t as (select extract(epoch from clock_timestamp())::bigint as now_s)
           insert into rate_limit_counters (bucket, window_start, hits)
           select $1, to_timestamp(now_s - mod(now_s, $2)), 1 from t
           on conflict (bucket, window_start) do update set hits = rate_limit_counters.hits + 1
           returning hits, (extract(epoch from window_start)::bigint + $2
                            - extract(epoch from clock_timestamp())::bigint) as "retry_after!""#,
        bucket(limit, client),
        window,
    )
    .fetch_one(pool)
    .await?;
    if row.hits as u32 > limit.max {
        metrics::counter!("ebb_rate_limit_refusals_total", "limit" => limit.name).increment(1);
        Ok(Decision::Limited { retry_after_secs: row.retry_after.max(1) as u64 })
    } else {
        Ok(Decision::Allowed)
    }
}
