//! The share state machine: active → consumed → purged, forward only. Every transition is one
//! autocommit conditional UPDATE whose WHERE holds the rule; the row count says who won.

use std::time::Duration;

use sqlx::PgPool;

/// A share the GC may purge now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Purgeable {
    pub id: i64,
    pub blob_key: String,
}

/// Claims a download: only an active, unexpired share with downloads left counts one more
/// (moving to consumed with its last one). Call it before sending a byte, outside any
/// transaction (the claim must be committed first).
pub async fn mark_consumed(pool: &PgPool, id: i64) -> Result<bool, sqlx::Error> {
    let mut tx = pool.begin().await?;
    if !claim(&mut tx, id).await? {
        return Ok(false);
    }
    tx.commit().await?;
    Ok(true)
}

/// [`mark_consumed`] with the delivery it starts: the row holds the hash of the receipt that
/// lets this client resume, and what the server's stream sends. Returns the delivery's id when
/// the claim was won; claim, delivery and audit event are one commit.
pub async fn claim_delivery(pool: &PgPool, id: i64, receipt_hash: &[u8], client_hash: &str) -> Result<Option<i64>, sqlx::Error> {
    let mut tx = pool.begin().await?;
    if !claim(&mut tx, id).await? {
        return Ok(None);
    }
    let delivery = sqlx::query_scalar!(
        "insert into share_deliveries (share_id, receipt_hash, client_hash, started_at, last_at)
         values ($1, $2, $3, clock_timestamp(), clock_timestamp()) returning id",
        id,
        receipt_hash,
        client_hash,
    )
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(Some(delivery))
}

/// The claim of [`mark_consumed`] in `tx`, with its audit event: one conditional UPDATE, so of
/// any number of concurrent downloads exactly `max_downloads` win. Expiry is compared with the
/// statement's clock (`clock_timestamp()`), not the transaction's start: a download whose
/// transaction began before a revoke, and that waited on the row the revoke held, sees the revoke
/// as the past and is refused.
pub async fn claim(tx: &mut sqlx::Transaction<'_, sqlx::Postgres>, id: i64) -> Result<bool, sqlx::Error> {
    let r = sqlx::query!(
        "update shares set downloads = downloads + 1, last_download_at = clock_timestamp(),
                status = case when downloads + 1 >= max_downloads then 'consumed' else 'active' end,
                consumed_at = case when downloads + 1 >= max_downloads then clock_timestamp() end
         where id = $1 and status = 'active' and expires_at > clock_timestamp() and downloads < max_downloads",
        id,
    )
    .execute(&mut **tx)
    .await?;
    if r.rows_affected() != 1 {
        return Ok(false);
    }
    // The download is recorded with the claim, in one commit (the recipient is a visitor: only
    // the share's id and the hashed client are kept).
    kernel::audit::record_admin_action(tx, None, kernel::audit::AuditKind::ShareDownload, Some(&id.to_string())).await?;
    Ok(true)
}

/// Shares whose file may be deleted now: consumed longer ago than `grace` (longer than any
/// download, and the time a receipt can resume), or never consumed and expired with no download
/// won within `grace` — and whose retry time has come, and that are not on
/// legal hold (`not held` is a filter on the partial index's rows: the index still serves).
pub async fn select_purgeable(pool: &PgPool, limit: i64, grace: Duration) -> Result<Vec<Purgeable>, sqlx::Error> {
    sqlx::query_as!(
        Purgeable,
        r#"select id, blob_key from shares
           where status <> 'purged' and not held
             and (next_purge_attempt_at is null or next_purge_attempt_at <= now())
             and (revoked_at is not null
                  or (status = 'consumed' and consumed_at <= now() - make_interval(secs => $2))
                  or (status <> 'consumed' and expires_at <= now()
                      and (last_download_at is null or last_download_at <= now() - make_interval(secs => $2))))
           order by next_purge_attempt_at nulls first, id
           limit $1"#,
        limit,
        grace.as_secs_f64(),
    )
    .fetch_all(pool)
    .await
}

/// Marks a share purged after its file was deleted, forgetting its file name and note (a name
/// can be personal data: "Passport Ann Example.pdf"; the row stays for the counts and receipts).
/// The WHERE re-checks eligibility, so an active, unexpired share can never be purged (its file
/// would then never be collected), nor a held one.
pub async fn mark_purged(pool: &PgPool, id: i64) -> Result<bool, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let r = sqlx::query!(
        "update shares set status = 'purged', purged_at = now(), file_name = '-', note = null
         where id = $1 and status <> 'purged' and not held and (status = 'consumed' or expires_at <= now())",
        id,
    )
    .execute(&mut *tx)
    .await?;
    if r.rows_affected() != 1 {
        return Ok(false);
    }
    kernel::audit::record(&mut tx, &kernel::audit::Actor::system(), kernel::audit::AuditKind::SharePurge, Some(("share", &id.to_string())), None).await?;
    // Counted with the purge it counts: a GC run killed after this has a record that says so.
    kernel::jobs::count(&mut tx, "purged", 1).await?;
    tx.commit().await?;
    Ok(true)
}

/// Records a failed delete: counts it and pushes the next attempt out by
/// `base × 2^min(attempts, 6)`, so a failing row never blocks the rows behind it.
/// Returns the number of failed attempts so far (0 when the share was purged meanwhile).
pub async fn mark_purge_failed(pool: &PgPool, id: i64, base: Duration) -> Result<i32, sqlx::Error> {
    let attempts = sqlx::query_scalar!(
        "update shares set purge_attempts = purge_attempts + 1,
                next_purge_attempt_at = now() + make_interval(secs => $2 * power(2, least(purge_attempts, 6)))
         where id = $1 and status <> 'purged'
         returning purge_attempts",
        id,
        base.as_secs_f64(),
    )
    .fetch_optional(pool)
    .await?;
    Ok(attempts.unwrap_or(0))
}
