//! Periodic claimed jobs: the in-process ticker and the CLI's `maintenance run`.

use std::time::Duration;

use app::maintenance::prune::{prune_if_due, PruneCtx, PruneError, PruneOutcome, Trigger};
use app::shares::gc::{sweep, GcReport};
use app::state::AppState;
use tokio_util::sync::CancellationToken;

/// Partly written uploads older than this were interrupted (no upload takes a day).
pub const ABANDONED_UPLOAD_AGE: Duration = Duration::from_secs(24 * 3600);

/// The run's bounds and clock.
pub fn prune_ctx(state: &AppState) -> PruneCtx {
    state.config.prune_ctx(time::OffsetDateTime::now_utc())
}

/// Runs the claimed jobs every `every`, so a site without traffic still cleans up: prune, the
/// share GC's larger sweep, and leftovers of interrupted uploads. Several instances tick, one
/// runs each job.
pub async fn ticker(state: AppState, every: Duration, stop: CancellationToken) {
    let mut interval = tokio::time::interval(every);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = interval.tick() => {}
        }
        let report = run_jobs(&state, Trigger::Ticker, false).await;
        if let Err(e) = report.prune {
            tracing::warn!(job = "prune", error = %e, "maintenance tick failed");
        }
        match report.share_gc {
            Ok(Some(r)) if r != GcReport::default() => tracing::info!(job = "share-gc", purged = r.purged, failed = r.failed, "share GC sweep ran"),
            Ok(_) => {}
            Err(e) => tracing::warn!(job = "share-gc", error = %e, "maintenance tick failed"),
        }
        match report.abandoned_uploads {
            Ok(0) => {}
            Ok(n) => tracing::info!(job = "uploads", removed = n, "removed files of interrupted uploads"),
            Err(e) => tracing::warn!(job = "uploads", error = %e, "maintenance tick failed"),
        }
    }
}

/// What one maintenance run did, job by job.
pub struct RunReport {
    pub prune: Result<PruneOutcome, PruneError>,
    /// `None`: another run had the claim less than a minute ago.
    pub share_gc: Result<Option<GcReport>, sqlx::Error>,
    pub abandoned_uploads: Result<u64, app::storage::BlobError>,
}

/// Every maintenance job once (honouring the claims unless forced); a failing job does not stop
/// the others.
async fn run_jobs(state: &AppState, trigger: Trigger, force: bool) -> RunReport {
    RunReport {
        prune: prune_if_due(&state.pool, &state.prune_steps, prune_ctx(state), trigger, force).await,
        share_gc: sweep(&state.pool, &*state.blobs, state.config.share_gc, force).await,
        abandoned_uploads: state.blobs.remove_abandoned_uploads(ABANDONED_UPLOAD_AGE).await,
    }
}

/// `ebb maintenance run [--force]`: every job now.
pub async fn run_now(state: &AppState, force: bool) -> RunReport {
    run_jobs(state, Trigger::Cli, force).await
}
