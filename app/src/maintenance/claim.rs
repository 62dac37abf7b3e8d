//! Claims: one conditional write decides which caller runs a job.

use std::time::Duration;

use sqlx::PgPool;
use time::OffsetDateTime;

/// Tries to claim `key` (a `settings` row holding epoch milliseconds) at `now`. The upsert only
/// replaces the stored value when it is at least `interval` old, so of any number of concurrent
/// callers — in one process or many — exactly one sees a changed row and wins. An unreadable
/// stored value counts as old (it cannot block the job forever).
pub async fn try_claim(pool: &PgPool, key: &str, now: OffsetDateTime, interval: Duration) -> Result<bool, sqlx::Error> {
    let now_ms = (now.unix_timestamp_nanos() / 1_000_000) as i64;
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
    let now_ms = (now.unix_timestamp_nanos() / 1_000_000) as i64;
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
