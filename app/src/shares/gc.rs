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
