//! The self-healing share GC (seed 002) as a job on the lifecycle engine: delete the file first;
//! only then mark the share purged. Plus reconciliation (objects no live share points to) and the
//! leftovers of interrupted uploads.

use std::time::Duration;

use serde::Serialize;
use sqlx::PgPool;

use super::lifecycle::{mark_purge_failed, mark_purged, select_purgeable};
use kernel::alerts::{self, AlertKind, AlertMessage};
use kernel::jobs::{Budget, Job, Step, StepCtx, StepError, StepReport, Trigger};
use kernel::storage::journal::{self, Deletion};
use kernel::storage::{BlobError, BlobStore};

/// The job's name (CLI argument, metric label, run records).
pub const JOB: &str = "share_gc";
/// Step names, declared once.
pub const STEP_PURGE: &str = "purge";
pub const STEP_RECONCILE: &str = "reconcile";
pub const STEP_UPLOADS: &str = "abandoned_uploads";
pub const STEP_REQUESTS: &str = "file_requests";

/// Shares handled per request-triggered run (the ticker and CLI use larger batches).
pub const ACCESS_TIME_BATCH: i64 = 5;
/// A sweep handles shares in batches of this many.
pub const SWEEP_BATCH: i64 = 100;
/// Stored objects (and share rows) examined per run by reconciliation.
pub const RECONCILE_PAGE: usize = 1000;
/// Objects no live share points to are deleted once they are this old (no upload takes a day,
/// and an upload's file is younger than its row by at most the commit).
pub const ORPHAN_AGE: Duration = Duration::from_secs(24 * 3600);
/// Partly written uploads older than this were interrupted.
pub const ABANDONED_UPLOAD_AGE: Duration = Duration::from_secs(24 * 3600);
/// Failed deletes of one share before an alert is raised.
pub const ALERT_AFTER_ATTEMPTS: i32 = 3;

/// The GC's timing rules.
#[derive(Debug, Clone, Copy)]
pub struct GcRules {
    /// How long a consumed share's file stays (longer than any download).
    pub delivery_grace: Duration,
    /// First retry delay after a failed delete; doubles per attempt up to 64×.
    pub backoff_base: Duration,
}

impl Default for GcRules {
    fn default() -> Self {
        GcRules { delivery_grace: Duration::from_secs(15 * 60), backoff_base: Duration::from_secs(60 * 60) }
    }
}

/// What one collection did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct GcReport {
    pub purged: u64,
    pub failed: u64,
}

impl std::ops::AddAssign for GcReport {
    fn add_assign(&mut self, other: Self) {
        self.purged += other.purged;
        self.failed += other.failed;
    }
}

/// The job: claimed at most once a minute over all instances, leased while it runs.
pub fn job() -> Job {
    Job::new(
        JOB,
        "Share GC",
        "Deletes the files of downloaded (after the delivery grace) and expired shares, then marks them purged; removes stored files no share points to and leftovers of interrupted uploads; forgets file requests that ended 30 days ago.",
        "share_gc_sweep_at",
        Duration::from_secs(60),
    )
    .budget(Budget { rows_per_step: 1000, time: Duration::from_secs(45) })
    .traffic_budget(Budget { rows_per_step: ACCESS_TIME_BATCH as u64, time: Duration::from_secs(10) })
    .step(Step::new(STEP_PURGE, purge_step).labelled("files of used or expired shares"))
    .step(Step::new(STEP_RECONCILE, reconcile_step).labelled("stored files no share points to"))
    .step(Step::new(STEP_UPLOADS, uploads_step).labelled("leftovers of interrupted uploads"))
    .step(Step::new(STEP_REQUESTS, requests_step).labelled("file requests that ended 30 days ago"))
}

async fn requests_step(ctx: StepCtx) -> Result<StepReport, StepError> {
    let forgotten = super::requests::forget_ended(&ctx.state.pool, ctx.rows.max(1) as i64).await?;
    Ok(StepReport::rows("forgotten", forgotten))
}

/// The store must prove it is the real one before anything counts as deleted. When it cannot,
/// the alert is raised (and resolved once it can again).
async fn marker_checked(pool: &PgPool, store: &dyn BlobStore) -> Result<(), StepError> {
    match store.verify_marker().await {
        Ok(()) => {
            alerts::resolve(pool, AlertKind::StorageMarkerMissing, "").await?;
            Ok(())
        }
        Err(BlobError::MarkerMissing) => {
            alert_marker_missing(pool).await?;
            Err(StepError::new("storage marker missing; nothing deleted"))
        }
        Err(e) => Err(e.into()),
    }
}

/// Raises the missing-marker alert (the GC, and an upload refused for it).
pub async fn alert_marker_missing(pool: &PgPool) -> Result<(), sqlx::Error> {
    alerts::raise(pool, AlertKind::StorageMarkerMissing, "", &AlertMessage::StorageMarker).await
}

async fn purge_step(ctx: StepCtx) -> Result<StepReport, StepError> {
    let settings = *ctx.state.domain::<super::ShareSettings>();
    let store = &*ctx.state.blobs;
    marker_checked(&ctx.state.pool, store).await?;
    let batch = SWEEP_BATCH.min(ctx.rows as i64).max(1);
    let mut total = GcReport::default();
    let mut more = false;
    loop {
        let left = ctx.rows.saturating_sub(total.purged + total.failed);
        if left == 0 || ctx.out_of_time() {
            more = true;
            break;
        }
        let n = batch.min(left as i64);
        let report = collect(&ctx.state.pool, store, n, settings.gc).await.map_err(|e| match e {
            CollectError::Database(e) => StepError::from(e),
            CollectError::Marker => StepError::new("storage marker missing; nothing deleted"),
            CollectError::Journal(e) => StepError::new(format!("cannot write the deletion journal ({e}); nothing deleted")),
        })?;
        total += report;
        if report.purged + report.failed < n as u64 {
            break;
        }
    }
    Ok(StepReport { counts: vec![("purged", total.purged), ("failed", total.failed)], rows: total.purged + total.failed, more })
}

/// Why a collection stopped.
#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    /// The store's marker vanished: nothing was (or will be) marked purged.
    #[error("storage marker missing")]
    Marker,
    /// The deletion journal could not be written: nothing was deleted.
    #[error("cannot write the deletion journal: {0}")]
    Journal(String),
}

/// Purges up to `limit` eligible shares. A file that cannot be deleted keeps its share
/// unpurged, counts an attempt and backs off; one that is already absent counts as deleted —
/// only while the store's marker proves it is the real store.
/// Idempotent: after a crash between the delete and the update, the next run finishes the job.
pub async fn collect(pool: &PgPool, store: &dyn BlobStore, limit: i64, rules: GcRules) -> Result<GcReport, CollectError> {
    let mut report = GcReport::default();
    let batch = select_purgeable(pool, limit, rules.delivery_grace).await?;
    if !batch.is_empty() {
        // Journaled before any delete: a database restored from an older backup gets these
        // shares purged again (`ebb doctor --after-restore`), not served from a stale row.
        let deletion = Deletion::SharePurge { ids: batch.iter().map(|s| s.id).collect(), keys: batch.iter().map(|s| s.blob_key.clone()).collect() };
        match journal::record(pool, store, deletion).await {
            Ok(()) => {}
            Err(BlobError::MarkerMissing) => return Err(CollectError::Marker),
            Err(e) => return Err(CollectError::Journal(e.to_string())),
        }
    }
    for share in batch {
        match store.delete(&share.blob_key).await {
            Ok(()) => {}
            // Not the share's fault: stop, count no attempt, mark nothing.
            Err(BlobError::MarkerMissing) => return Err(CollectError::Marker),
            Err(e) => {
                tracing::warn!(share.id = share.id, error = %e, "share file delete failed; will retry after backoff");
                metrics::counter!("ebb_share_gc_delete_failures_total").increment(1);
                let attempts = mark_purge_failed(pool, share.id, rules.backoff_base).await?;
                if attempts >= ALERT_AFTER_ATTEMPTS {
                    alerts::raise(
                        pool,
                        AlertKind::ShareDeleteFailing,
                        &share.id.to_string(),
                        &AlertMessage::ShareDeleteFailing { share: share.id.to_string(), n: i64::from(attempts) },
                    )
                    .await?;
                }
                report.failed += 1;
                continue;
            }
        }
        // Crash tests stop here: the file is deleted, the row not yet marked purged.
        fail::fail_point!("share-gc-after-delete");
        if mark_purged(pool, share.id).await? {
            report.purged += 1;
            alerts::resolve_each(pool, &[AlertKind::ShareDeleteFailing, AlertKind::ShareFileMissing], &share.id.to_string()).await?;
        }
    }
    Ok(report)
}

/// Only share objects are reconciled (the listing is of `shares/` already; this keeps anything
/// else out whatever a backend returns).
fn is_share_key(key: &str) -> bool {
    kernel::storage::check_key(key).is_ok_and(|ns| ns == kernel::storage::Namespace::Shares)
}

/// Reads a cursor kept in `settings` (reconciliation walks the store and the table in pages
/// across runs, so each run stays bounded however large they are).
async fn cursor(pool: &PgPool, key: &str) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar!("select value from settings where key = $1", key).fetch_optional(pool).await
}

async fn set_cursor(pool: &PgPool, key: &str, value: &str) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "insert into settings (key, value, updated_at) values ($1, $2, now())
         on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at",
        key,
        value
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Stored objects that no live share points to (no row, or its row is purged) and that are older
/// than [`ORPHAN_AGE`] are deleted: a crash between storing a file and committing its row, or a
/// file that was "deleted" while the store was swapped. Live rows whose file is missing are
/// reported (logged with the share id, counted), never changed.
async fn reconcile_step(ctx: StepCtx) -> Result<StepReport, StepError> {
    let pool = &ctx.state.pool;
    let store = &*ctx.state.blobs;
    marker_checked(pool, store).await?;
    let page = RECONCILE_PAGE.min(ctx.rows.max(1) as usize);

    let after = cursor(pool, "share_gc_reconcile_after").await?.filter(|c| !c.is_empty());
    let listing = store.list(kernel::storage::Namespace::Shares, after.as_deref(), page).await?;
    // The store's cursor, not the page's length, says whether the listing goes on.
    let next = listing.next.unwrap_or_default();
    let objects = listing.objects;
    let keys: Vec<String> = objects.iter().filter(|o| is_share_key(&o.key)).map(|o| o.key.clone()).collect();
    let live: std::collections::HashSet<String> =
        sqlx::query_scalar!("select blob_key from shares where blob_key = any($1) and status <> 'purged'", &keys).fetch_all(pool).await?.into_iter().collect();
    let mut orphans_deleted = 0;
    for o in objects.iter().filter(|o| is_share_key(&o.key) && !live.contains(&o.key)) {
        let old = o.modified.elapsed().is_ok_and(|age| age >= ORPHAN_AGE);
        if old {
            store.delete(&o.key).await?;
            orphans_deleted += 1;
        }
    }
    set_cursor(pool, "share_gc_reconcile_after", &next).await?;
    if orphans_deleted > 0 {
        tracing::info!(job = JOB, orphans_deleted, "deleted stored files that no share points to");
    }

    let after_id: i64 = cursor(pool, "share_gc_rowcheck_after").await?.and_then(|c| c.parse().ok()).unwrap_or(0);
    let rows = sqlx::query!("select id, blob_key from shares where status <> 'purged' and id > $1 order by id limit $2", after_id, page as i64)
        .fetch_all(pool)
        .await?;
    let mut missing = 0;
    for r in &rows {
        if !store.exists(&r.blob_key).await? {
            missing += 1;
            alerts::raise(pool, AlertKind::ShareFileMissing, &r.id.to_string(), &AlertMessage::ShareFileMissing { share: r.id.to_string() }).await?;
        }
    }
    let next_id = if rows.len() < page { 0 } else { rows.last().map(|r| r.id).unwrap_or(0) };
    set_cursor(pool, "share_gc_rowcheck_after", &next_id.to_string()).await?;
    Ok(StepReport {
        counts: vec![
            ("files_checked", keys.len() as u64),
            ("orphans_deleted", orphans_deleted),
            ("rows_checked", rows.len() as u64),
            ("files_missing", missing),
        ],
        rows: objects.len() as u64 + rows.len() as u64,
        more: !next.is_empty() || next_id != 0,
    })
}

async fn uploads_step(ctx: StepCtx) -> Result<StepReport, StepError> {
    let removed = ctx.state.blobs.remove_abandoned_uploads(ABANDONED_UPLOAD_AGE).await?;
    Ok(StepReport::rows("removed", removed))
}

/// Best-effort, after the response (share page, download, admin list): a small GC run if this
/// process's hint says it may be due. Never affects the response.
pub fn gc_in_background(state: &kernel::state::AppState) {
    kernel::jobs::nudge_named(state, JOB, Trigger::Shares);
}
