//! Periodic claimed jobs: the in-process ticker and the CLI's `maintenance run`.

use std::time::Duration;

use app::maintenance::prune::{prune_if_due, PruneCtx, PruneError, PruneOutcome, Trigger};
use app::state::AppState;
use tokio_util::sync::CancellationToken;

/// The run's bounds and clock.
pub fn prune_ctx(state: &AppState) -> PruneCtx {
    state.config.prune_ctx(time::OffsetDateTime::now_utc())
}

/// Runs prune (if its claim is won) every `every`, so a site without traffic still cleans up.
/// Periodic claimed job: several instances tick, one runs.
pub async fn ticker(state: AppState, every: Duration, stop: CancellationToken) {
    let mut interval = tokio::time::interval(every);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = interval.tick() => {}
        }
        match prune_if_due(&state.pool, &state.prune_steps, prune_ctx(&state), Trigger::Ticker, false).await {
            Ok(_) => {}
            Err(e) => tracing::warn!(job = "prune", error = %e, "maintenance tick failed"),
        }
    }
}

/// `ebb maintenance run [--force]`: runs prune now (honouring the claim unless forced).
pub async fn run_now(state: &AppState, force: bool) -> Result<PruneOutcome, PruneError> {
    prune_if_due(&state.pool, &state.prune_steps, prune_ctx(state), Trigger::Cli, force).await
}
