//! Claims and leases, on the database clock.
//!
//! A claim is one conditional upsert of a `settings` row holding epoch milliseconds: it replaces
//! the stored value only when that is at least one interval old, so of any number of concurrent
//! callers — in one process or many — exactly one sees a changed row and wins. Every timestamp is
//! PostgreSQL's `clock_timestamp()`, never the instance's clock, and a stored value further ahead
//! than one interval counts as stale: an instance whose clock was once ahead (or a hand-edited
//! row) cannot stop every instance from cleaning up.
//!
//! A lease keeps a second instance from starting a job while it runs, however long the run takes
//! (the claim only spaces runs out): a session-level advisory lock on a dedicated connection that
//! ends with the run — or with the connection, when the holder crashes.

use std::time::Duration;

use sqlx::{Connection, PgConnection, PgPool};
use time::OffsetDateTime;

/// The database's current time (`clock_timestamp()`: the real time, not the transaction's start).
pub async fn db_now(pool: &PgPool) -> Result<OffsetDateTime, sqlx::Error> {
    sqlx::query_scalar!(r#"select clock_timestamp() as "now!""#).fetch_one(pool).await
}

fn interval_ms(interval: Duration) -> i64 {
    i64::try_from(interval.as_millis()).unwrap_or(i64::MAX / 4)
}

/// Tries to claim `key`. Returns the database time of the claim when this caller won it.
pub async fn try_claim(pool: &PgPool, key: &str, interval: Duration) -> Result<Option<OffsetDateTime>, sqlx::Error> {
    let won = sqlx::query!(
        r#"with before as (select value from settings where key = $1)
           insert into settings (key, value, updated_at)
           values ($1, ((extract(epoch from clock_timestamp()) * 1000)::bigint)::text, clock_timestamp())
           on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at
           where case when settings.value ~ '^-?[0-9]{1,18}$'
                      then settings.value::bigint <= excluded.value::bigint - $2
                        -- further ahead than one interval: written by a clock that was wrong
                        or settings.value::bigint > excluded.value::bigint + $2
                      else true end
           returning updated_at, value, (select value from before) as previous"#,
        key,
        interval_ms(interval),
    )
    .fetch_optional(pool)
    .await?;
    let Some(won) = won else { return Ok(None) };
    // Say so when the claim replaced a value from the future: some instance's clock was wrong
    // (or the row was edited), and operators should know why a job ran "early".
    if let (Some(before), Ok(now)) = (won.previous.and_then(|v| v.parse::<i64>().ok()), won.value.parse::<i64>()) {
        if before > now + interval_ms(interval) {
            tracing::warn!(claim = key, ahead_secs = (before - now) / 1000, "a claim stored ahead of the database clock was treated as stale");
        }
    }
    Ok(Some(won.updated_at))
}

/// Takes the claim unconditionally (an operator's `--force`); the next regular claim waits a full
/// interval from now. Returns the database time of the claim.
pub async fn force_claim(pool: &PgPool, key: &str) -> Result<OffsetDateTime, sqlx::Error> {
    sqlx::query_scalar!(
        r#"insert into settings (key, value, updated_at)
           values ($1, ((extract(epoch from clock_timestamp()) * 1000)::bigint)::text, clock_timestamp())
           on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at
           returning updated_at"#,
        key,
    )
    .fetch_one(pool)
    .await
}

/// When a claim on `key` can next be won (`None`: now), by the same rule as [`try_claim`].
pub async fn next_possible_at(pool: &PgPool, key: &str, interval: Duration) -> Result<Option<OffsetDateTime>, sqlx::Error> {
    Ok(next_claim(pool, key, interval).await?.map(|(at, _)| at))
}

/// [`next_possible_at`] with how long that is from the database's now (one query for both).
pub async fn next_claim(pool: &PgPool, key: &str, interval: Duration) -> Result<Option<(OffsetDateTime, Duration)>, sqlx::Error> {
    let row = sqlx::query!(
        r#"select clock_timestamp() as "now!",
                  (select value from settings where key = $1) as stored"#,
        key,
    )
    .fetch_one(pool)
    .await?;
    let Some(stored_ms) = row.stored.and_then(|v| v.trim().parse::<i64>().ok()) else { return Ok(None) };
    let now_ms = (row.now.unix_timestamp_nanos() / 1_000_000) as i64;
    let interval_ms = interval_ms(interval);
    if stored_ms > now_ms + interval_ms || stored_ms <= now_ms - interval_ms {
        return Ok(None);
    }
    let wait = Duration::from_millis((stored_ms + interval_ms - now_ms) as u64);
    Ok(Some((row.now + wait, wait)))
}

/// A held lease: the advisory lock lives as long as this connection. Dropping it without
/// [`Lease::release`] closes the connection, which ends the lock as well.
pub struct Lease {
    conn: PgConnection,
    key: i64,
}

/// The advisory lock key of a job (stable across versions: a hash of a fixed prefix and the name).
fn lease_key(job: &str) -> i64 {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("ebb.job.{job}").as_bytes());
    i64::from_be_bytes(digest[..8].try_into().expect("8 bytes"))
}

/// Whether some session (of any instance) holds the lease of `job` now.
pub async fn lease_held(pool: &PgPool, job: &str) -> Result<bool, sqlx::Error> {
    // A bigint advisory key shows in `pg_locks` as its two 32-bit halves.
    let key = lease_key(job) as u64;
    let (hi, lo) = ((key >> 32) as i64, (key & 0xffff_ffff) as i64);
    sqlx::query_scalar(
        "select exists (select 1 from pg_locks where locktype = 'advisory' and granted and objsubid = 1
            and database = (select oid from pg_database where datname = current_database())
            and classid = $1::bigint::oid and objid = $2::bigint::oid)",
    )
    .bind(hi)
    .bind(lo)
    .fetch_one(pool)
    .await
}

/// How long a lease outlives its holder's silence. The engine proves it holds the lease every
/// [`super::HEARTBEAT`]; a holder that stops (SIGSTOP, a frozen VM, a hung task) is cut off by
/// PostgreSQL's `idle_session_timeout` on the lease's connection, which ends the lock, and other
/// instances can run the job again. A holder that wakes up finds its lease gone at its next beat
/// and stops its run.
pub const LEASE_IDLE: Duration = Duration::from_secs(60);

/// Tries to take the lease of `job` on a new dedicated connection (not the pool's: a pooled
/// connection going back to the pool would keep the lock). `None` when another holder has it.
pub async fn try_lease(pool: &PgPool, job: &str) -> Result<Option<Lease>, sqlx::Error> {
    try_lease_for(pool, job, LEASE_IDLE).await
}

/// [`try_lease`] with the lease ending after `idle` without a [`Lease::beat`] (tests shorten it).
pub async fn try_lease_for(pool: &PgPool, job: &str, idle: Duration) -> Result<Option<Lease>, sqlx::Error> {
    let mut conn = PgConnection::connect_with(&pool.connect_options()).await?;
    // PostgreSQL 14 and later; on an older server the lease simply lasts as long as its
    // connection, as before (said once in the log, not an error).
    if let Err(e) = sqlx::query(&format!("set idle_session_timeout = {}", idle.as_millis().max(1))).execute(&mut conn).await {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| tracing::warn!(error = %e, "job leases cannot time out on this PostgreSQL (idle_session_timeout needs 14 or later)"));
    }
    let key = lease_key(job);
    let got: bool = sqlx::query_scalar!(r#"select pg_try_advisory_lock($1) as "got!""#, key).fetch_one(&mut conn).await?;
    if got {
        Ok(Some(Lease { conn, key }))
    } else {
        let _ = conn.close().await;
        Ok(None)
    }
}

impl Lease {
    /// Proves the lease is still held (and keeps its connection from timing out). `Err`: the
    /// connection ended — the lease is gone and the job may be running elsewhere.
    pub async fn beat(&mut self) -> Result<(), sqlx::Error> {
        sqlx::query("select 1").execute(&mut self.conn).await?;
        Ok(())
    }

    /// Ends the lease and closes its connection.
    pub async fn release(mut self) {
        let _ = sqlx::query_scalar!(r#"select pg_advisory_unlock($1) as "released!""#, self.key).fetch_one(&mut self.conn).await;
        let _ = self.conn.close().await;
    }
}
