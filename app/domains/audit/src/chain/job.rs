//! The `audit_seal` job (every minute, on the lifecycle engine): seal new events, write a signed
//! digest when one is due, and verify the database's chains and one archived month (in turn) once a day. Its quiet runs are not
//! written to the audit log (each would be an event to seal: the log would never rest).

use std::time::Duration;

use kernel::audit::{record, Actor};
use kernel::jobs::{Budget, Job, Step, StepCtx, StepError, StepReport};
use kernel::state::AppState;

use super::digest::{self, Reason};
use super::verify::{self, Report};
use crate::AuditKind;

/// The job's name (CLI, dashboard, metrics).
pub const JOB: &str = "audit_seal";
/// The settings row holding when the daily verification last ran.
const VERIFIED_AT: &str = "audit_verified_at";
/// The settings row holding the archived month the daily step read last (`YYYY-MM`).
const ROLLING: &str = "audit_archive_checked";

async fn seal_step(ctx: StepCtx) -> Result<StepReport, StepError> {
    let late = ctx.state.domain::<super::ChainSettings>().late_limit;
    let done = super::seal::seal_all(&ctx.state.pool, super::seal::BATCH, late, ctx.deadline()).await?;
    if done.refused > 0 {
        tracing::warn!(refused = done.refused, "audit seal: events left out of the chain; `ebb audit verify` names them");
    }
    Ok(StepReport { counts: vec![("sealed", done.sealed), ("refused", done.refused)], rows: done.sealed, more: done.more })
}

async fn digest_step(ctx: StepCtx) -> Result<StepReport, StepError> {
    let written = digest::write(&ctx.state, Reason::Scheduled, false).await.map_err(StepError::new)?;
    // The transparency log's checkpoint, signed whenever the log grew (`/audit/checkpoint`).
    let signed = super::tlog::checkpoint(&ctx.state).await.map_err(StepError::new)?;
    Ok(StepReport::rows("digests", u64::from(written.is_some())).with("checkpoints", u64::from(signed.is_some())))
}

async fn verify_step(ctx: StepCtx) -> Result<StepReport, StepError> {
    let due: bool = sqlx::query_scalar!(
        r#"select coalesce((select value::timestamptz < $1::timestamptz - interval '1 day' from settings where key = $2), true) as "due!""#,
        ctx.now,
        VERIFIED_AT
    )
    .fetch_one(&ctx.state.pool)
    .await?;
    if !due && !matches!(ctx.trigger, kernel::jobs::Trigger::Cli | kernel::jobs::Trigger::Admin) {
        return Ok(StepReport::rows("checked", 0));
    }
    // The database's chains, and one archived month a day (in turn): every object is read
    // against the digests within as many days as there are archived months.
    let after: Option<String> = sqlx::query_scalar!("select value from settings where key = $1", ROLLING).fetch_optional(&ctx.state.pool).await?;
    let mut report = verify::in_database(&ctx.state.pool, &*ctx.state.blobs, false).await.map_err(StepError::new)?;
    let month = verify::next_archived(&ctx.state.pool, &*ctx.state.blobs, after.as_deref(), &mut report).await.map_err(StepError::new)?;
    publish(&ctx.state, &report, if month.is_some() { "rolling" } else { "database" }, &Actor::system()).await.map_err(StepError::new)?;
    sqlx::query!(
        "insert into settings (key, value) values ($1, $2::timestamptz::text) on conflict (key) do update set value = excluded.value",
        VERIFIED_AT,
        ctx.now
    )
    .execute(&ctx.state.pool)
    .await?;
    if let Some(month) = month {
        sqlx::query!("insert into settings (key, value) values ($1, $2) on conflict (key) do update set value = excluded.value", ROLLING, month)
            .execute(&ctx.state.pool)
            .await?;
    }
    if !report.ok() {
        return Err(StepError::new(report.summary()).for_a_person());
    }
    Ok(StepReport::rows("checked", report.events))
}

/// Verifies (the database, and the archive with `archive`), raises `audit.chain_broken` naming
/// the first break or resolves it, and records the check in the audit log.
pub async fn run(state: &AppState, archive: bool, actor: &Actor) -> Result<Report, String> {
    let report = verify::in_database(&state.pool, &*state.blobs, archive).await?;
    publish(state, &report, if archive { "archive" } else { "database" }, actor).await?;
    Ok(report)
}

/// A verification's outcome made known: `audit.chain_broken` raised naming the first break (or
/// resolved), and an `audit.verify` event recording what was checked (`scope`).
async fn publish(state: &AppState, report: &Report, scope: &str, actor: &Actor) -> Result<(), String> {
    let db = |e: sqlx::Error| format!("database: {e}");
    match report.problems.first() {
        Some(first) => {
            tracing::error!(place = %first.place(), what = %first.what, "audit trail: verification failed");
            let msg = common::alerts::AlertMessage::ChainBroken { place: first.place() };
            let details: Vec<String> = report.problems.iter().map(|p| format!("{}: {}", p.place(), p.what)).collect();
            kernel::alerts::raise_detailed(&state.pool, common::alerts::AlertKind::AuditChainBroken, "", &msg, &details.join("\n")).await.map_err(db)?;
        }
        None => kernel::alerts::resolve(&state.pool, common::alerts::AlertKind::AuditChainBroken, "").await.map_err(db)?,
    }
    let mut tx = state.pool.begin().await.map_err(db)?;
    let detail = match report.problems.first() {
        None => format!("verifies (events: {}, archived months: {}, digests: {})", report.events, report.archived, report.digests),
        Some(p) => format!("BROKEN at {}", p.place()),
    };
    record(&mut tx, actor, AuditKind::AuditVerify, Some(("chain", scope)), Some(&detail)).await.map_err(db)?;
    tx.commit().await.map_err(db)?;
    Ok(())
}

/// The job.
pub fn job() -> Job {
    let budget = Budget { rows_per_step: 1_000_000, time: Duration::from_secs(50) };
    Job::new(
        JOB,
        "Audit seal",
        "Seals new audit events into their month's hash chain, writes a signed digest of the chains to the storage (audit-digests/) at least hourly when something changed and daily otherwise, and verifies the chains once a day.",
        "audit_seal_at",
        Duration::from_secs(60),
    )
    .budget(budget)
    .traffic_budget(Budget { rows_per_step: 100_000, time: Duration::from_secs(10) })
    .quiet()
    .step(Step::new("seal", seal_step).labelled("new events sealed into their chain").past_budget())
    .step(Step::new("digest", digest_step).labelled("signed digest written when due").past_budget())
    .step(Step::new("verify", verify_step).labelled("chains verified (daily)"))
}
