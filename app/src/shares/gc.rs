//! The self-healing share GC: delete the file first; only then mark the share purged.

use std::time::Duration;

use serde::Serialize;
use sqlx::PgPool;

use super::lifecycle::{mark_purge_failed, mark_purged, select_purgeable};
use crate::storage::BlobStore;

/// Shares handled per request-triggered run (the ticker and CLI use larger batches).
pub const ACCESS_TIME_BATCH: i64 = 5;

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

/// What one run did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct GcReport {
    pub purged: u64,
    pub failed: u64,
}

/// Purges up to `limit` eligible shares. A file that cannot be deleted keeps its share
/// unpurged, counts an attempt and backs off; one that is already absent counts as deleted.
/// Idempotent: after a crash between the delete and the update, the next run finishes the job.
pub async fn collect(pool: &PgPool, store: &dyn BlobStore, limit: i64, rules: GcRules) -> Result<GcReport, sqlx::Error> {
    let mut report = GcReport::default();
    for share in select_purgeable(pool, limit, rules.delivery_grace).await? {
        if let Err(e) = store.delete(&share.blob_key).await {
            tracing::warn!(share.id = share.id, error = %e, "share file delete failed; will retry after backoff");
            mark_purge_failed(pool, share.id, rules.backoff_base).await?;
            report.failed += 1;
            continue;
        }
        if mark_purged(pool, share.id).await? {
            report.purged += 1;
        }
    }
    Ok(report)
}

impl std::ops::AddAssign for GcReport {
    fn add_assign(&mut self, other: Self) {
        self.purged += other.purged;
        self.failed += other.failed;
    }
}

/// Claim of the traffic-triggered GC: at most one small run per interval over all instances.
const ACCESS_CLAIM: &str = "share_gc_access_at";
const ACCESS_INTERVAL: Duration = Duration::from_secs(10);
/// Claim of the ticker's (and the CLI's) larger sweep.
const SWEEP_CLAIM: &str = "share_gc_sweep_at";
const SWEEP_INTERVAL: Duration = Duration::from_secs(60);
/// A sweep handles up to `SWEEP_BATCH × SWEEP_MAX_BATCHES` shares; the rest waits for the next.
pub const SWEEP_BATCH: i64 = 100;
pub const SWEEP_MAX_BATCHES: u32 = 10;

/// Best-effort, after the response (share page, download, admin list): collect up to
/// [`ACCESS_TIME_BATCH`] shares if this run wins the claim. Never affects the response.
pub fn gc_in_background(state: &crate::state::AppState) {
    use crate::maintenance::claim::{epoch_ms, try_claim};
    let now = time::OffsetDateTime::now_utc();
    let now_ms = epoch_ms(now);
    if !state.share_gc_hint.worth_trying(now_ms) {
        return;
    }
    let (pool, blobs, rules, hint) = (state.pool.clone(), state.blobs.clone(), state.config.share_gc, state.share_gc_hint.clone());
    state.background.spawn("share-gc", async move {
        let won = try_claim(&pool, ACCESS_CLAIM, now, ACCESS_INTERVAL).await?;
        hint.wait(now_ms, ACCESS_INTERVAL);
        if won {
            let report = collect(&pool, &*blobs, ACCESS_TIME_BATCH, rules).await?;
            if report != GcReport::default() {
                tracing::info!(job = "share-gc", purged = report.purged, failed = report.failed, "share GC ran");
            }
        }
        Ok::<_, sqlx::Error>(())
    });
}

/// The ticker's and the CLI's run: batches of [`SWEEP_BATCH`] until nothing is left or the bound
/// is reached. Claimed unless `force`; `None` when another run had the claim.
pub async fn sweep(pool: &PgPool, store: &dyn BlobStore, rules: GcRules, force: bool) -> Result<Option<GcReport>, sqlx::Error> {
    use crate::maintenance::claim::{force_claim, try_claim};
    let now = time::OffsetDateTime::now_utc();
    if force {
        force_claim(pool, SWEEP_CLAIM, now).await?;
    } else if !try_claim(pool, SWEEP_CLAIM, now, SWEEP_INTERVAL).await? {
        return Ok(None);
    }
    let mut total = GcReport::default();
    for _ in 0..SWEEP_MAX_BATCHES {
        let report = collect(pool, store, SWEEP_BATCH, rules).await?;
        total += report;
        if report.purged + report.failed < SWEEP_BATCH as u64 {
            break;
        }
    }
    Ok(Some(total))
}
