//! Retention and maintenance server functions for the settings page and dashboard (admin only).

use leptos::prelude::*;

use super::{MaintenanceStatus, RetentionPreview};
use crate::error::AppError;

#[cfg(feature = "ssr")]
use crate::server::internal;

/// Best-effort after the response: prune if due.
#[cfg(feature = "ssr")]
///
/// Traffic-triggered prune skips the claim while this process knows it would lose it: after a
/// won claim for the claim interval, after a lost one for a minute. The claim in PostgreSQL still
/// decides; the hint only spares every request a futile upsert on one hot row (a due prune may
/// start up to a minute late). The ticker, the CLI and "Run cleanup now" always ask the claim.
pub fn prune_in_background(state: &crate::state::AppState, trigger: super::prune::Trigger) {
    let now_ms = super::claim::epoch_ms(time::OffsetDateTime::now_utc());
    if !state.prune_hint.worth_trying(now_ms) {
        return;
    }
    let (pool, steps, cfg, hint) = (state.pool.clone(), state.prune_steps.clone(), state.config.clone(), state.prune_hint.clone());
    state.background.spawn("prune", async move {
        let ctx = cfg.prune_ctx(time::OffsetDateTime::now_utc());
        let outcome = super::prune::prune_if_due(&pool, &steps, ctx, trigger, false).await;
        let wait = match &outcome {
            Ok(super::prune::PruneOutcome::NotDue) => std::time::Duration::from_secs(60),
            Ok(super::prune::PruneOutcome::Ran(_)) | Err(super::prune::PruneError::Steps(_)) => super::prune::CLAIM_INTERVAL,
            Err(super::prune::PruneError::Database(_)) => std::time::Duration::ZERO,
        };
        hint.wait(now_ms, wait);
        outcome.map(|_| ())
    });
}

#[cfg(feature = "ssr")]
fn parse_days(days: i64) -> Result<u32, AppError> {
    u32::try_from(days)
        .ok()
        .filter(|d| super::RETENTION_DAYS_RANGE.contains(d))
        .ok_or_else(|| crate::server::fail(AppError::Invalid([("retention_days".to_string(), super::RETENTION_DAYS_MESSAGE.to_string())].into())))
}

/// The current retention, and what a new value would delete now (a dry run).
#[server(prefix = "/api", endpoint = "admin/retention/preview")]
pub async fn preview_retention(days: Option<i64>) -> Result<RetentionPreview, AppError> {
    let (state, _, _) = crate::auth::service::require_admin().await?;
    let current = super::prune::retention_days(&state.pool).await.map_err(internal("retention"))?;
    let days = match days {
        Some(d) => parse_days(d)?,
        None => current,
    };
    let would_delete = super::prune::count_older_than(&state.pool, time::OffsetDateTime::now_utc(), days).await.map_err(internal("dry run"))?;
    Ok(RetentionPreview { current_days: current, days, would_delete })
}

#[server(prefix = "/api", endpoint = "admin/retention/save")]
pub async fn save_retention(days: i64) -> Result<u32, AppError> {
    let (state, _, admin) = crate::auth::service::require_admin().await?;
    let days = parse_days(days)?;
    let mut tx = state.pool.begin().await.map_err(internal("begin"))?;
    super::prune::set_retention_days(&mut tx, days).await.map_err(internal("save retention"))?;
    crate::audit::db::record_admin_action(&mut tx, Some(admin.id), "settings.retention_days", Some(&days.to_string()))
        .await
        .map_err(internal("record"))?;
    tx.commit().await.map_err(internal("commit"))?;
    Ok(days)
}

#[server(prefix = "/api", endpoint = "admin/maintenance")]
pub async fn get_maintenance_status() -> Result<MaintenanceStatus, AppError> {
    let (state, _, _) = crate::auth::service::require_admin().await?;
    super::prune::status(&state.pool).await.map_err(internal("maintenance status"))
}

/// "Run cleanup now": takes the same claim as every other trigger, so it says so when a run
/// happened less than an hour ago instead of running twice.
#[server(prefix = "/api", endpoint = "admin/maintenance/run")]
pub async fn run_cleanup_now() -> Result<MaintenanceStatus, AppError> {
    use super::prune::{prune_if_due, PruneError, PruneOutcome, Trigger};
    let (state, _, admin) = crate::auth::service::require_admin().await?;
    let ctx = state.config.prune_ctx(time::OffsetDateTime::now_utc());
    let outcome = prune_if_due(&state.pool, &state.prune_steps, ctx, Trigger::Admin, false).await;
    let ran = match outcome {
        Ok(PruneOutcome::Ran(_)) | Err(PruneError::Steps(_)) => true,
        Ok(PruneOutcome::NotDue) => false,
        Err(PruneError::Database(e)) => return Err(crate::server::fail(AppError::internal("cleanup", e))),
    };
    if ran {
        let mut conn = state.pool.acquire().await.map_err(internal("acquire"))?;
        crate::audit::db::record_admin_action(&mut conn, Some(admin.id), "maintenance.prune", None).await.map_err(internal("record"))?;
    }
    let mut status = super::prune::status(&state.pool).await.map_err(internal("maintenance status"))?;
    status.ran_now = Some(ran);
    Ok(status)
}
