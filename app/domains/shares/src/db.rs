//! Share queries other than the lifecycle transitions (those are in `lifecycle`).

use sqlx::{PgPool, Postgres, Transaction};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{Delivery, ShareOverview, ShareProblem, ShareState, ShareSummary, PROBLEM_ATTEMPTS};

/// A share to create; its file is already stored under `blob_key`.
pub struct NewShareRow<'a> {
    pub token_hash: &'a [u8],
    pub blob_key: &'a str,
    pub file_name: &'a str,
    pub size_bytes: i64,
    pub content_type: &'a str,
    pub note: Option<&'a str>,
    pub created_by: Uuid,
    pub expires_hours: u32,
    pub max_downloads: i32,
}

/// Inserts a share; returns its id and expiry.
pub async fn insert(tx: &mut Transaction<'_, Postgres>, s: &NewShareRow<'_>) -> Result<(i64, OffsetDateTime), sqlx::Error> {
    let row = sqlx::query!(
        "insert into shares (token_hash, blob_key, file_name, size_bytes, content_type, note, created_by, expires_at, max_downloads)
         values ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(hours => $8), $9)
         returning id, expires_at",
        s.token_hash,
        s.blob_key,
        s.file_name,
        s.size_bytes,
        s.content_type,
        s.note,
        s.created_by,
        s.expires_hours as i32,
        s.max_downloads,
    )
    .fetch_one(&mut **tx)
    .await?;
    Ok((row.id, row.expires_at))
}

/// What the download needs of a share.
#[derive(Debug, Clone)]
pub struct ShareRecord {
    pub id: i64,
    pub blob_key: String,
    pub file_name: String,
    pub size_bytes: i64,
    pub content_type: String,
    pub status: String,
    pub expires_at: OffsetDateTime,
    pub consumed_at: Option<OffsetDateTime>,
    pub downloads: i32,
    pub max_downloads: i32,
    /// When an admin revoked it (its receipts then resume nothing).
    pub revoked_at: Option<OffsetDateTime>,
    pub now: OffsetDateTime,
}

impl ShareRecord {
    /// The state at the database's clock (the one the claim uses).
    pub fn state(&self) -> ShareState {
        ShareState::of(&self.status, self.expires_at, self.consumed_at.is_some(), self.now)
    }
}

/// Looks a share up by the hash of its token.
pub async fn find_by_token_hash(pool: &PgPool, hash: &[u8]) -> Result<Option<ShareRecord>, sqlx::Error> {
    sqlx::query_as!(
        ShareRecord,
        r#"select id, blob_key, file_name, size_bytes, content_type, status, expires_at, consumed_at, downloads, max_downloads, revoked_at, now() as "now!"
           from shares where token_hash = $1"#,
        hash,
    )
    .fetch_optional(pool)
    .await
}

/// A page of shares, newest first, below `before` (an id) when given.
pub async fn list_page(pool: &PgPool, before: Option<i64>, limit: i64, grace: std::time::Duration) -> Result<Vec<ShareSummary>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"select s.id, s.file_name, s.size_bytes, s.note, s.status, s.created_at, a.name as "created_by?",
                  s.expires_at, s.consumed_at, s.purged_at, s.purge_attempts, s.next_purge_attempt_at, s.held, now() as "now!",
                  s.origin, s.token_hash is not null as "public!", s.max_downloads, s.downloads
           from shares s left join admin_names a on a.id = s.created_by
           where s.id < coalesce($1, 9223372036854775807)
           order by s.id desc
           limit $2"#,
        before,
        limit,
    )
    .fetch_all(pool)
    .await?;
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    let mut deliveries = deliveries_of(pool, &ids, grace).await?;
    Ok(rows
        .into_iter()
        .map(|r| ShareSummary {
            deliveries: deliveries.remove(&r.id).unwrap_or_default(),
            received: r.origin == "request",
            public: r.public,
            max_downloads: r.max_downloads,
            downloads: r.downloads,
            id: r.id,
            state: ShareState::of(&r.status, r.expires_at, r.consumed_at.is_some(), r.now),
            file_name: r.file_name,
            size_bytes: r.size_bytes,
            note: r.note,
            created_at: r.created_at,
            created_by: r.created_by,
            expires_at: r.expires_at,
            consumed_at: r.consumed_at,
            purged_at: r.purged_at,
            purge_attempts: r.purge_attempts,
            next_purge_attempt_at: r.next_purge_attempt_at,
            held: r.held,
        })
        .collect())
}

/// The deliveries of these shares, oldest first.
async fn deliveries_of(pool: &PgPool, ids: &[i64], grace: std::time::Duration) -> Result<std::collections::HashMap<i64, Vec<Delivery>>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"select d.share_id, d.started_at, d.bytes_sent, d.resumes, d.completed_at,
                  (d.completed_at is null and d.resumes < $3 and s.revoked_at is null and s.status <> 'purged'
                   and d.started_at + make_interval(secs => $2) > now()) as "resumable!"
           from share_deliveries d join shares s on s.id = d.share_id
           where d.share_id = any($1) order by d.share_id, d.id"#,
        ids,
        grace.as_secs_f64(),
        super::receipts::MAX_RESUMES,
    )
    .fetch_all(pool)
    .await?;
    let mut out = std::collections::HashMap::<i64, Vec<Delivery>>::new();
    for r in rows {
        out.entry(r.share_id).or_default().push(Delivery {
            started_at: r.started_at,
            bytes_sent: r.bytes_sent,
            resumes: r.resumes,
            completed_at: r.completed_at,
            resumable: r.resumable,
        });
    }
    Ok(out)
}

/// Revokes a share whose file is still there: it expires now, by the statement's clock (a
/// download's claim compares with the same clock), its deliveries' receipts resume nothing more,
/// and the GC deletes its file without waiting for the delivery grace. A downloaded share in its
/// grace can be revoked too (the recipient's resume ends). Returns whether something changed.
pub async fn revoke(tx: &mut Transaction<'_, Postgres>, id: i64) -> Result<bool, sqlx::Error> {
    let r = sqlx::query!(
        "update shares set expires_at = least(expires_at, clock_timestamp()), revoked_at = clock_timestamp()
          where id = $1 and status <> 'purged' and revoked_at is null",
        id
    )
    .execute(&mut **tx)
    .await?;
    Ok(r.rows_affected() == 1)
}

/// Counts and the shares whose file could not be deleted several times.
pub async fn overview(pool: &PgPool) -> Result<ShareOverview, sqlx::Error> {
    // Both counts read the partial index only (purged rows are not in it).
    let counts = sqlx::query!(
        r#"select count(*) filter (where status = 'active' and expires_at > now()) as "active!",
                  count(*) filter (where not (status = 'active' and expires_at > now())) as "awaiting!"
           from shares where status <> 'purged'"#
    )
    .fetch_one(pool)
    .await?;
    let problems = sqlx::query_as!(
        ShareProblem,
        "select id, file_name, purge_attempts, next_purge_attempt_at from shares
         where status <> 'purged' and purge_attempts >= $1
         order by purge_attempts desc, id limit 20",
        PROBLEM_ATTEMPTS,
    )
    .fetch_all(pool)
    .await?;
    Ok(ShareOverview { active: counts.active, awaiting_deletion: counts.awaiting, problems })
}

/// How many shares still point at a stored file (not purged): the storage marker's start-up
/// check refuses a store without its marker while any do.
pub async fn live_count(pool: &PgPool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(r#"select count(*) as "n!" from shares where status <> 'purged'"#).fetch_one(pool).await
}
