//! Retention, jobs and alerts server functions for the settings page, the dashboard and the
//! banner on every admin page (admin only).

#[cfg(feature = "ssr")]
use common::admin::Role;
use leptos::prelude::*;

use super::RetentionPreview;
use common::alerts::AlertView;
use common::error::AppError;
use common::jobs::{JobView, RunNowView};

#[cfg(feature = "ssr")]
use super::texts::SettingsT;
#[cfg(feature = "ssr")]
use common::i18n::t;
#[cfg(feature = "ssr")]
use kernel::request::internal;

#[cfg(feature = "ssr")]
fn parse_days(days: i64) -> Result<u32, AppError> {
    u32::try_from(days)
        .ok()
        .filter(|d| super::RETENTION_DAYS_RANGE.contains(d))
        .ok_or_else(|| AppError::Invalid([("retention_days".to_string(), t(SettingsT::RetentionDaysInvalid).to_string())].into()))
}

/// The current retention, and what a new value would delete now (a dry run).
#[server(prefix = "/api", endpoint = "admin/retention/preview")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn preview_retention(days: Option<i64>) -> Result<RetentionPreview, AppError> {
    let (state, _, _) = kernel::session::require(Role::Admin).await?;
    let stored = kernel::settings::read(&state.pool, common::retention::RETENTION_KEY).await.map_err(internal("retention"))?;
    let current = super::retention_days_or_default(stored.as_deref());
    let days = match days {
        Some(d) => parse_days(d)?,
        None => current,
    };
    let now = kernel::jobs::claim::db_now(&state.pool).await.map_err(internal("clock"))?;
    // The items are contact's: it answers through the kernel's hook.
    let dry_run = *state.domain::<kernel::retention::DryRun>();
    let would_delete = (dry_run.0)(&state.pool, now, days).await.map_err(internal("dry run"))?;
    Ok(RetentionPreview { current_days: current, days, would_delete })
}

#[server(prefix = "/api", endpoint = "admin/retention/save")]
#[middleware(kernel::session::Needs(Role::Owner))]
pub async fn save_retention(days: i64) -> Result<u32, AppError> {
    let (state, session, admin) = kernel::session::require(Role::Owner).await?;
    let days = parse_days(days)?;
    // Lowering the period deletes sooner: a sensitive action (a fresh passkey check).
    let stored = kernel::settings::read(&state.pool, common::retention::RETENTION_KEY).await.map_err(internal("retention"))?;
    if days < common::retention::retention_days_or_default(stored.as_deref()) {
        kernel::session::fresh(&state, &session, &admin).await?;
    }
    let mut tx = state.pool.begin().await.map_err(internal("begin"))?;
    kernel::settings::put(&mut tx, common::retention::RETENTION_KEY, &days.to_string()).await.map_err(internal("save retention"))?;
    kernel::audit::record_admin_action(&mut tx, Some(admin.id), kernel::audit::AuditKind::RetentionChange, Some(&days.to_string()))
        .await
        .map_err(internal("record"))?;
    tx.commit().await.map_err(internal("commit"))?;
    // Every instance drops the pages it keeps rendered (the public retention page shows it).
    state.live.touch(kernel::live::Topic::Settings, None);
    Ok(days)
}

/// Every job in the registry: last run, next possible start.
#[server(prefix = "/api", endpoint = "admin/jobs")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn list_jobs() -> Result<Vec<JobView>, AppError> {
    let (state, _, _) = kernel::session::require(Role::Auditor).await?;
    let mut out = Vec::with_capacity(state.jobs().jobs().len());
    for job in state.jobs().jobs() {
        out.push(kernel::jobs::view(&state.pool, job).await.map_err(internal("job status"))?);
    }
    Ok(out)
}

/// "Run now": takes the same claim and lease as every other trigger, so it says so when a run
/// happened less than an interval ago (or is running) instead of running twice.
#[server(prefix = "/api", endpoint = "admin/jobs/run")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn run_job_now(job: String) -> Result<RunNowView, AppError> {
    use kernel::jobs::{run_job_as, RunOutcome, Trigger};
    let (state, _, admin) = kernel::session::require(Role::Admin).await?;
    let Some(entry) = state.jobs().get(&job) else {
        return Err(AppError::NotFound);
    };
    // The run is a tracked background task (drained on shutdown, with the job's budget): a
    // closed tab or a dropped request never cancels it half-way. The answer waits a moment
    // for a quick outcome (not due, busy, a short run); a longer run is answered as started,
    // and the dashboard follows it live. Its one audit event names the admin.
    let (tx, rx) = tokio::sync::oneshot::channel();
    let (task_state, task_job) = (state.clone(), entry.clone());
    let actor = kernel::audit::Actor::in_request(Some(admin.id));
    state.background.spawn_with_timeout(entry.name, entry.budget.time + entry.step_grace * 2, async move {
        let outcome = run_job_as(&task_state, &task_job, Trigger::Admin, false, actor).await;
        let failed = matches!(&outcome, Ok(RunOutcome::Ran(r)) if r.outcome == kernel::jobs::Outcome::Failed);
        let error = outcome.as_ref().err().map(|e| e.to_string());
        let _ = tx.send(outcome.map(|o| matches!(o, RunOutcome::Ran(_))));
        match (error, failed) {
            (Some(e), _) => Err(format!("{}: {e}", task_job.name)),
            (None, true) => Err(format!("{}: steps failed", task_job.name)),
            (None, false) => Ok(()),
        }
    });
    let (ran, started) = match tokio::time::timeout(std::time::Duration::from_secs(2), rx).await {
        Ok(Ok(Ok(ran))) => (ran, false),
        Ok(Ok(Err(e))) => return Err(AppError::internal("run job", e)),
        Ok(Err(_)) => return Err(AppError::internal("run job", "the run's task ended without an answer")),
        Err(_) => (true, true),
    };
    let view = kernel::jobs::view(&state.pool, entry).await.map_err(internal("job status"))?;
    Ok(RunNowView { ran, started, job: view })
}

/// Open alerts (the banner on every admin page).
#[server(prefix = "/api", endpoint = "admin/alerts")]
#[middleware(kernel::session::Needs(Role::Auditor))]
pub async fn list_alerts() -> Result<Vec<AlertView>, AppError> {
    let (state, _, _) = kernel::session::require(Role::Auditor).await?;
    kernel::alerts::open(&state.pool).await.map_err(internal("alerts"))
}

/// An admin marks an alert resolved (it comes back if its condition persists).
#[server(prefix = "/api", endpoint = "admin/alerts/resolve")]
#[middleware(kernel::session::Needs(Role::Admin))]
pub async fn resolve_alert(id: common::id::Id) -> Result<(), AppError> {
    let id = id.0;
    let (state, _, admin) = kernel::session::require(Role::Admin).await?;
    // The change and its event commit together or not at all.
    let mut tx = state.pool.begin().await.map_err(internal("begin"))?;
    if !kernel::alerts::resolve_by_admin(&mut tx, id, admin.id).await.map_err(internal("resolve alert"))? {
        return Err(AppError::Gone);
    }
    kernel::audit::record_admin_action(&mut tx, Some(admin.id), kernel::audit::AuditKind::AlertResolve, Some(&id.to_string()))
        .await
        .map_err(internal("record"))?;
    tx.commit().await.map_err(internal("commit"))?;
    Ok(())
}
