//! File requests ("send me a file"): a one-time upload link. The landing page reads, never
//! consumes; the upload that completes first consumes it with one conditional UPDATE, in the
//! transaction that writes the received file's share row (a private item: no public link).

use sqlx::{PgPool, Postgres, Transaction};
use time::OffsetDateTime;
use uuid::Uuid;

use super::{FileRequestLanding, FileRequestState, FileRequestSummary};
use kernel::audit::{self, Actor, AuditKind};

/// Requests that ended (used, expired or revoked) are forgotten this long after.
pub const FORGET_AFTER_DAYS: i32 = 30;

/// A request as the upload needs it.
#[derive(Debug, Clone)]
pub struct FileRequestRecord {
    pub id: i64,
    pub note: Option<String>,
    pub max_bytes: i64,
    pub status: String,
    pub expires_at: OffsetDateTime,
    pub now: OffsetDateTime,
}

impl FileRequestRecord {
    pub fn state(&self) -> FileRequestState {
        state_of(&self.status, self.expires_at, self.now)
    }

    /// What the uploader's page shows.
    pub fn landing(&self) -> FileRequestLanding {
        match self.state() {
            FileRequestState::Open => FileRequestLanding::Open { note: self.note.clone(), max_bytes: self.max_bytes, expires_at: self.expires_at },
            FileRequestState::Used => FileRequestLanding::Used,
            FileRequestState::Expired => FileRequestLanding::Expired,
        }
    }
}

fn state_of(status: &str, expires_at: OffsetDateTime, now: OffsetDateTime) -> FileRequestState {
    match status {
        "used" => FileRequestState::Used,
        _ if expires_at <= now => FileRequestState::Expired,
        _ => FileRequestState::Open,
    }
}

/// Creates a request; returns its id and expiry.
pub async fn insert(
    tx: &mut Transaction<'_, Postgres>,
    token_hash: &[u8],
    note: Option<&str>,
    max_bytes: i64,
    expires_hours: u32,
    created_by: Uuid,
) -> Result<(i64, OffsetDateTime), sqlx::Error> {
    let row = sqlx::query!(
        "insert into file_requests (token_hash, note, max_bytes, expires_at, created_by)
         values ($1, $2, $3, now() + make_interval(hours => $4), $5) returning id, expires_at",
        token_hash,
        note,
        max_bytes,
        expires_hours as i32,
        created_by,
    )
    .fetch_one(&mut **tx)
    .await?;
    Ok((row.id, row.expires_at))
}

/// Looks a request up by the hash of its token.
pub async fn find_by_token_hash(pool: &PgPool, hash: &[u8]) -> Result<Option<FileRequestRecord>, sqlx::Error> {
    sqlx::query_as!(FileRequestRecord, r#"select id, note, max_bytes, status, expires_at, now() as "now!" from file_requests where token_hash = $1"#, hash,)
        .fetch_optional(pool)
        .await
}

/// The received file, stored, whose share row is to be written.
pub struct Received<'a> {
    pub blob_key: &'a str,
    pub file_name: &'a str,
    pub size_bytes: i64,
    pub content_type: &'a str,
    /// How long the received file is kept.
    pub keep_hours: u32,
}

/// Consumes the request and writes the received file's share row, in one transaction: of any
/// number of concurrent uploads exactly one wins (`open → used` while unexpired, by the
/// statement's clock). Returns the new share's id, or `None` when another upload won or the
/// request expired (nothing was written).
///
/// The request's end is journaled before the commit (`store`'s deletion journal): a database
/// restored from an older backup does not open it again (`ebb doctor --after-restore`).
pub async fn receive(
    pool: &PgPool,
    store: &dyn kernel::storage::BlobStore,
    request_id: i64,
    file: &Received<'_>,
    actor: &Actor,
) -> Result<Option<i64>, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let won = sqlx::query!(
        "update file_requests set status = 'used', used_at = clock_timestamp()
         where id = $1 and status = 'open' and expires_at > clock_timestamp()
         returning note, created_by",
        request_id,
    )
    .fetch_optional(&mut *tx)
    .await?;
    let Some(request) = won else {
        return Ok(None);
    };
    let share_id = sqlx::query_scalar!(
        "insert into shares (token_hash, blob_key, file_name, size_bytes, content_type, note, created_by, expires_at, origin, file_request_id)
         values (null, $1, $2, $3, $4, $5, $6, now() + make_interval(hours => $7), 'request', $8) returning id",
        file.blob_key,
        file.file_name,
        file.size_bytes,
        file.content_type,
        request.note,
        request.created_by,
        file.keep_hours as i32,
        request_id,
    )
    .fetch_one(&mut *tx)
    .await?;
    audit::record(&mut tx, actor, AuditKind::FileRequestReceive, Some(("share", &share_id.to_string())), Some(&format!("file request {request_id}"))).await?;
    kernel::storage::journal::record(&mut *tx, store, kernel::storage::journal::Deletion::FileRequestEnd { ids: vec![request_id] })
        .await
        .map_err(|e| sqlx::Error::Protocol(format!("the deletion journal could not take the file request's end: {e}")))?;
    tx.commit().await?;
    Ok(Some(share_id))
}

/// The newest requests (at most `limit`), with the admin who made each.
pub async fn list(pool: &PgPool, limit: i64) -> Result<Vec<FileRequestSummary>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"select r.id, r.note, r.max_bytes, r.status, r.expires_at, r.used_at, r.created_at, a.name as "created_by?", s.id as "share_id?", now() as "now!"
           from file_requests r
           left join admin_names a on a.id = r.created_by
           left join shares s on s.file_request_id = r.id
           order by r.id desc limit $1"#,
        limit,
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| FileRequestSummary {
            id: r.id,
            note: r.note,
            max_bytes: r.max_bytes,
            state: state_of(&r.status, r.expires_at, r.now),
            expires_at: r.expires_at,
            used_at: r.used_at,
            created_at: r.created_at,
            created_by: r.created_by,
            share_id: r.share_id,
        })
        .collect())
}

/// Revokes an open request: it expires now (by the statement's clock, which the upload's claim
/// compares with). Returns whether something changed.
pub async fn revoke(tx: &mut Transaction<'_, Postgres>, id: i64) -> Result<bool, sqlx::Error> {
    let r = sqlx::query!("update file_requests set expires_at = clock_timestamp() where id = $1 and status = 'open' and expires_at > clock_timestamp()", id)
        .execute(&mut **tx)
        .await?;
    Ok(r.rows_affected() == 1)
}

/// Forgets up to `limit` requests that ended more than [`FORGET_AFTER_DAYS`] ago (their received
/// files are shares of their own and stay); returns how many.
pub async fn forget_ended(pool: &PgPool, limit: i64) -> Result<u64, sqlx::Error> {
    let r = sqlx::query!(
        "delete from file_requests where id in (
             select id from file_requests
             where greatest(expires_at, coalesce(used_at, expires_at)) < now() - make_interval(days => $1)
               and (status = 'used' or expires_at < now())
             order by greatest(expires_at, coalesce(used_at, expires_at)) limit $2)",
        FORGET_AFTER_DAYS,
        limit,
    )
    .execute(pool)
    .await?;
    Ok(r.rows_affected())
}

/// A received file that can be shared: what its copy needs.
pub struct Publishable {
    pub blob_key: String,
    pub size_bytes: i64,
}

/// The received file `share_id` when it can be shared (received, active, unexpired).
pub async fn publishable(pool: &PgPool, share_id: i64) -> Result<Option<Publishable>, sqlx::Error> {
    sqlx::query_as!(
        Publishable,
        "select blob_key, size_bytes from shares
         where id = $1 and origin = 'request' and status = 'active' and expires_at > clock_timestamp()",
        share_id,
    )
    .fetch_optional(pool)
    .await
}

/// The one-time share made of a received file: a new row for the copy stored under `blob_key`
/// (the received file keeps its own row, lifetime and deletion). The link lasts until the
/// received file's own expiry. `None`: the received file ended meanwhile (nothing written).
pub async fn publish_copy(
    tx: &mut Transaction<'_, Postgres>,
    share_id: i64,
    token_hash: &[u8],
    blob_key: &str,
    admin: uuid::Uuid,
) -> Result<Option<(i64, String, i64, OffsetDateTime)>, sqlx::Error> {
    let row = sqlx::query!(
        "insert into shares (token_hash, blob_key, file_name, size_bytes, content_type, note, created_by, expires_at, max_downloads)
         select $2, $3, file_name, size_bytes, content_type, note, $4, expires_at, 1 from shares
         where id = $1 and origin = 'request' and status = 'active' and expires_at > clock_timestamp()
         returning id, file_name, size_bytes, expires_at",
        share_id,
        token_hash,
        blob_key,
        admin,
    )
    .fetch_optional(&mut **tx)
    .await?;
    Ok(row.map(|r| (r.id, r.file_name, r.size_bytes, r.expires_at)))
}

/// How long an upload's lease on its file request lasts without renewal (the upload renews it
/// while its body streams; a crashed instance's lease runs out).
pub const UPLOAD_LEASE: std::time::Duration = std::time::Duration::from_secs(60);

/// Takes the request's upload lease for `lease` (a random id): one upload in flight per request.
/// `false`: the request is not open, or another upload holds the lease.
pub async fn take_lease(pool: &PgPool, id: i64, lease: &str) -> Result<bool, sqlx::Error> {
    hold_lease(pool, id, lease, true).await
}

/// Renews a lease; `false` when the request is no longer open (revoked, expired) or the lease
/// was lost: the upload then stops reading.
pub async fn renew_lease(pool: &PgPool, id: i64, lease: &str) -> Result<bool, sqlx::Error> {
    hold_lease(pool, id, lease, false).await
}

/// One statement for both: the lease runs [`UPLOAD_LEASE`] from now while the request is open —
/// taken when no lease is in force (`take`), renewed when it is still `lease`'s.
async fn hold_lease(pool: &PgPool, id: i64, lease: &str, take: bool) -> Result<bool, sqlx::Error> {
    let r = sqlx::query!(
        "update file_requests set upload_lease = $2, upload_lease_until = clock_timestamp() + make_interval(secs => $3)
          where id = $1 and status = 'open' and expires_at > clock_timestamp()
            and case when $4 then upload_lease_until is null or upload_lease_until < clock_timestamp() else upload_lease = $2 end",
        id,
        lease,
        UPLOAD_LEASE.as_secs_f64(),
        take,
    )
    .execute(pool)
    .await?;
    Ok(r.rows_affected() == 1)
}

/// Gives a lease back (the upload ended, stored or not).
pub async fn release_lease(pool: &PgPool, id: i64, lease: &str) -> Result<(), sqlx::Error> {
    sqlx::query!("update file_requests set upload_lease = null, upload_lease_until = null where id = $1 and upload_lease = $2", id, lease)
        .execute(pool)
        .await?;
    Ok(())
}
