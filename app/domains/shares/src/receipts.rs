//! Delivery receipts: each won download is a row of `share_deliveries` holding the hash of the
//! receipt that lets that client resume (an HttpOnly cookie scoped to the share's path) and what
//! the server's own stream sent.

use sqlx::PgPool;
use time::OffsetDateTime;

/// The receipt cookie's name (its path is the share's `/s/{token}`).
pub const COOKIE: &str = "ebb_receipt";

/// Most resumes of one delivery: enough for a bad connection, not for replaying the file.
pub const MAX_RESUMES: i32 = 10;

/// A delivery found by its receipt.
#[derive(Debug, Clone)]
pub struct DeliveryRecord {
    pub id: i64,
    pub client_hash: String,
    pub started_at: OffsetDateTime,
    /// Whether the delivery grace after the start has not ended yet (database clock).
    pub in_grace: bool,
    /// The contiguous prefix the server's stream sent.
    pub bytes_sent: i64,
    pub resumes: i32,
    /// When the whole file had been sent (then nothing is left to resume).
    pub completed_at: Option<OffsetDateTime>,
}

/// The delivery of `share_id` whose receipt hashes to `receipt_hash`.
pub async fn find(pool: &PgPool, share_id: i64, receipt_hash: &[u8], grace: std::time::Duration) -> Result<Option<DeliveryRecord>, sqlx::Error> {
    sqlx::query_as!(
        DeliveryRecord,
        r#"select id, client_hash, started_at, started_at + make_interval(secs => $3) > now() as "in_grace!",
                  bytes_sent, resumes, completed_at
           from share_deliveries where share_id = $1 and receipt_hash = $2"#,
        share_id,
        receipt_hash,
        grace.as_secs_f64(),
    )
    .fetch_optional(pool)
    .await
}

/// Counts a resume of a delivery, with its audit event (the visitor: a keyed hash only), unless
/// the delivery completed or used its [`MAX_RESUMES`] meanwhile, or its share was revoked (one
/// conditional UPDATE: concurrent resumes cannot pass the cap together). Returns whether it
/// was counted.
pub async fn note_resume(pool: &PgPool, id: i64, share_id: i64, actor: &kernel::audit::Actor) -> Result<bool, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let counted = sqlx::query!(
        "update share_deliveries d set resumes = resumes + 1, last_at = now()
          where d.id = $1 and d.completed_at is null and d.resumes < $2
            and not exists (select 1 from shares s where s.id = d.share_id and s.revoked_at is not null)",
        id,
        MAX_RESUMES,
    )
    .execute(&mut *tx)
    .await?
    .rows_affected()
        == 1;
    if !counted {
        return Ok(false);
    }
    kernel::audit::record(&mut tx, actor, kernel::audit::AuditKind::ShareResume, Some(("share", &share_id.to_string())), None).await?;
    tx.commit().await?;
    Ok(true)
}

/// Records what one response of a delivery sent: `sent` bytes from offset `start`. The contiguous
/// prefix grows when the response started inside it; the delivery completes when the prefix
/// reaches `size`. Returns whether this response completed it.
pub async fn record_sent(pool: &PgPool, id: i64, start: i64, sent: i64, size: i64) -> Result<bool, sqlx::Error> {
    let completed = sqlx::query_scalar!(
        r#"with old as (select completed_at from share_deliveries where id = $1 for update)
           update share_deliveries d
              set bytes_sent = greatest(d.bytes_sent, $2 + $3), last_at = now(),
                  completed_at = case when d.completed_at is null and greatest(d.bytes_sent, $2 + $3) >= $4 then now() else d.completed_at end
             from old
            where d.id = $1 and $2 <= d.bytes_sent
           returning (old.completed_at is null and d.completed_at is not null) as "completed!""#,
        id,
        start,
        sent,
        size,
    )
    .fetch_optional(pool)
    .await?;
    Ok(completed.unwrap_or(false))
}
