//! Claims: one conditional write decides which caller runs a job.

use std::sync::{atomic::AtomicI64, atomic::Ordering, Arc};
use std::time::Duration;

use sqlx::PgPool;
use time::OffsetDateTime;

/// Milliseconds since the Unix epoch (the claims' stored format).
pub fn epoch_ms(t: OffsetDateTime) -> i64 {
    (t.unix_timestamp_nanos() / 1_000_000) as i64
}

/// This process's guess of when a traffic-triggered claim could next be won. It only spares
/// requests a futile upsert on one hot row; the claim in PostgreSQL still decides.
#[derive(Debug, Clone, Default)]
pub struct ClaimHint(Arc<AtomicI64>);

impl ClaimHint {
    /// False while the last attempt said the claim would be lost.
    pub fn worth_trying(&self, now_ms: i64) -> bool {
        now_ms >= self.0.load(Ordering::Relaxed)
    }

    /// Do not try again before `now_ms + wait`.
    pub fn wait(&self, now_ms: i64, wait: Duration) {
        self.0.store(now_ms + wait.as_millis() as i64, Ordering::Relaxed);
    }
}

/// Tries to claim `key` (a `settings` row holding epoch milliseconds) at `now`. The upsert only
/// replaces the stored value when it is at least `interval` old, so of any number of concurrent
/// callers — in one process or many — exactly one sees a changed row and wins. An unreadable
/// stored value counts as old (it cannot block the job forever).
pub async fn try_claim(pool: &PgPool, key: &str, now: OffsetDateTime, interval: Duration) -> Result<bool, sqlx::Error> {
    let now_ms = epoch_ms(now);
    let due_before_ms = now_ms - interval.as_millis() as i64;
    let result = sqlx::query!(
        r#"insert into settings (key, value, updated_at) values ($1, $2, now())
           on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at
           where case when settings.value ~ '^-?[0-9]{1,18}$' then settings.value::bigint <= $3
                      else true end"#,
        key,
        now_ms.to_string(),
        due_before_ms,
    )
    .execute(pool)
    .await?;
    Ok(result.rows_affected() == 1)
}

/// Takes the claim unconditionally (an operator's `--force`); the next regular claim waits a full
/// interval from now.
pub async fn force_claim(pool: &PgPool, key: &str, now: OffsetDateTime) -> Result<(), sqlx::Error> {
    let now_ms = epoch_ms(now);
    sqlx::query!(
        r#"insert into settings (key, value, updated_at) values ($1, $2, now())
           on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at"#,
        key,
        now_ms.to_string(),
    )
    .execute(pool)
    .await?;
    Ok(())
}
