//! The prune job (seed 000): claimed at most once an hour, then a list of steps, each deleting
//! expired rows in bounded batches. Later features add their steps to [`default_steps`].

use std::{sync::Arc, time::Duration};

use futures::future::BoxFuture;
use serde::Serialize;
use sqlx::PgPool;
use time::OffsetDateTime;

use super::{claim, retention_days_or_default};

/// The settings key holding the prune claim.
pub const CLAIM_KEY: &str = "last_cleanup_at";
/// At most one prune run per hour, across all instances.
pub const CLAIM_INTERVAL: Duration = Duration::from_secs(3600);

/// What a step sees: the run's clock and its bounds.
#[derive(Debug, Clone, Copy)]
pub struct PruneCtx {
    pub now: OffsetDateTime,
    pub batch_size: i64,
    pub max_batches: u32,
    /// Sessions signed in longer ago than this are ended, however active.
    pub session_absolute: Duration,
}

/// What a step did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct StepReport {
    pub deleted: u64,
    /// Statements issued that deleted rows; each is its own short transaction.
    pub batches: u32,
    /// True when the step stopped at `max_batches` with rows left for the next run.
    pub more: bool,
}

type StepFn = dyn Fn(PgPool, PruneCtx) -> BoxFuture<'static, Result<StepReport, sqlx::Error>> + Send + Sync;

/// One named step of the prune job.
#[derive(Clone)]
pub struct PruneStep {
    pub name: &'static str,
    pub run: Arc<StepFn>,
}

impl PruneStep {
    pub fn new<F, Fut>(name: &'static str, f: F) -> Self
    where
        F: Fn(PgPool, PruneCtx) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<StepReport, sqlx::Error>> + Send + 'static,
    {
        PruneStep { name, run: Arc::new(move |pool, ctx| Box::pin(f(pool, ctx))) }
    }
}

/// The steps every prune run performs, in order.
pub fn default_steps() -> Vec<PruneStep> {
    vec![
        PruneStep::new("inquiries", |pool, ctx| async move { delete_old_inquiries(&pool, ctx).await }),
        PruneStep::new("rate_limit_counters", |pool, ctx| async move { delete_old_rate_limit_counters(&pool, ctx).await }),
        PruneStep::new("maintenance_runs", |pool, ctx| async move { delete_old_maintenance_runs(&pool, ctx).await }),
        PruneStep::new("passkey_challenges", |pool, ctx| async move { delete_expired_challenges(&pool, ctx).await }),
        PruneStep::new("sessions", |pool, ctx| async move { delete_expired_sessions(&pool, ctx).await }),
        PruneStep::new("admin_invites", |pool, ctx| async move { delete_expired_invites(&pool, ctx).await }),
    ]
}

/// Reads the retention period from `settings` (1–3,650 days; 180 when missing or invalid).
pub async fn retention_days(pool: &PgPool) -> Result<u32, sqlx::Error> {
    let stored = sqlx::query_scalar!("select value from settings where key = 'retention_days'")
        .fetch_optional(pool)
        .await?;
    Ok(retention_days_or_default(stored.as_deref()))
}

/// How many inquiries a prune at `now` with `days` of retention would delete (the dry run).
pub async fn count_older_than(pool: &PgPool, now: OffsetDateTime, days: u32) -> Result<i64, sqlx::Error> {
    let cutoff = now - time::Duration::days(days as i64);
    sqlx::query_scalar!(r#"select count(*) as "n!" from inquiries where created_at < $1"#, cutoff)
        .fetch_one(pool)
        .await
}

/// Stores a (validated) retention period.
pub async fn set_retention_days(conn: &mut sqlx::PgConnection, days: u32) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "insert into settings (key, value, updated_at) values ('retention_days', $1, now())
         on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at",
        days.to_string(),
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// The last prune run and when the next may start.
pub async fn status(pool: &PgPool) -> Result<super::MaintenanceStatus, sqlx::Error> {
    let last = sqlx::query!(
        "select started_at, trigger, ok, steps from maintenance_runs where job = 'prune' order by started_at desc limit 1"
    )
    .fetch_optional(pool)
    .await?;
    let claimed_ms = sqlx::query_scalar!("select value from settings where key = $1", CLAIM_KEY).fetch_optional(pool).await?;
    let next_possible_at = claimed_ms
        .and_then(|v| v.parse::<i64>().ok())
        .and_then(|ms| OffsetDateTime::from_unix_timestamp_nanos(ms as i128 * 1_000_000).ok())
        .map(|t| t + CLAIM_INTERVAL)
        .filter(|t| *t > OffsetDateTime::now_utc());
    let last_run = last.map(|r| super::RunSummary {
        started_at: r.started_at,
        trigger: r.trigger,
        ok: r.ok,
        steps: r
            .steps
            .as_array()
            .map(|steps| {
                steps
                    .iter()
                    .map(|s| super::StepSummary {
                        step: s["step"].as_str().unwrap_or_default().to_owned(),
                        deleted: s["deleted"].as_i64().unwrap_or(0),
                        error: s["error"].as_str().map(str::to_owned),
                    })
                    .collect()
            })
            .unwrap_or_default(),
    });
    Ok(super::MaintenanceStatus { last_run, next_possible_at, ran_now: None })
}

/// Runs `delete_batch` (which must delete at most `ctx.batch_size` rows and return the count)
/// until it deletes fewer than a full batch or `ctx.max_batches` is reached.
async fn in_batches<F, Fut>(ctx: PruneCtx, mut delete_batch: F) -> Result<StepReport, sqlx::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<u64, sqlx::Error>>,
{
    let mut report = StepReport::default();
    loop {
        if report.batches >= ctx.max_batches {
            report.more = true;
            return Ok(report);
        }
        let deleted = delete_batch().await?;
        if deleted > 0 {
            report.batches += 1;
            report.deleted += deleted;
        }
        if (deleted as i64) < ctx.batch_size {
            return Ok(report);
        }
    }
}

/// Deletes inquiries older than the retention period, oldest first, one batch per statement.
pub async fn delete_old_inquiries(pool: &PgPool, ctx: PruneCtx) -> Result<StepReport, sqlx::Error> {
    let days = retention_days(pool).await?;
    let cutoff = ctx.now - time::Duration::days(days as i64);
    in_batches(ctx, || async {
        // SKIP LOCKED: an admin deleting the same rows at the same moment never blocks prune.
        let r = sqlx::query!(
            r#"with doomed as (
                   select id from inquiries where created_at < $1
                   order by created_at limit $2 for update skip locked)
               delete from inquiries i using doomed where i.id = doomed.id"#,
            cutoff,
            ctx.batch_size,
        )
        .execute(pool)
        .await?;
        Ok(r.rows_affected())
    })
    .await
}

/// Deletes rate-limit counters whose window ended (no limit has a window longer than a day).
pub async fn delete_old_rate_limit_counters(pool: &PgPool, ctx: PruneCtx) -> Result<StepReport, sqlx::Error> {
    let cutoff = ctx.now - time::Duration::days(1);
    in_batches(ctx, || async {
        let r = sqlx::query!(
            r#"with doomed as (
                   select bucket, window_start from rate_limit_counters where window_start < $1 limit $2)
               delete from rate_limit_counters c using doomed
               where c.bucket = doomed.bucket and c.window_start = doomed.window_start"#,
            cutoff,
            ctx.batch_size,
        )
        .execute(pool)
        .await?;
        Ok(r.rows_affected())
    })
    .await
}

/// Keeps 90 days of maintenance run records.
pub async fn delete_old_maintenance_runs(pool: &PgPool, ctx: PruneCtx) -> Result<StepReport, sqlx::Error> {
    let cutoff = ctx.now - time::Duration::days(90);
    in_batches(ctx, || async {
        let r = sqlx::query!(
            r#"with doomed as (select id from maintenance_runs where started_at < $1 limit $2)
               delete from maintenance_runs m using doomed where m.id = doomed.id"#,
            cutoff,
            ctx.batch_size,
        )
        .execute(pool)
        .await?;
        Ok(r.rows_affected())
    })
    .await
}

/// Deletes abandoned passkey ceremonies (used ones are deleted at once).
pub async fn delete_expired_challenges(pool: &PgPool, ctx: PruneCtx) -> Result<StepReport, sqlx::Error> {
    in_batches(ctx, || async {
        let r = sqlx::query!(
            r#"with doomed as (select id from passkey_challenges where expires_at < $1 limit $2)
               delete from passkey_challenges c using doomed where c.id = doomed.id"#,
            ctx.now,
            ctx.batch_size,
        )
        .execute(pool)
        .await?;
        Ok(r.rows_affected())
    })
    .await
}

/// Deletes sessions past their idle expiry or their absolute lifetime (our session rows go with
/// them: `on delete cascade`).
pub async fn delete_expired_sessions(pool: &PgPool, ctx: PruneCtx) -> Result<StepReport, sqlx::Error> {
    let absolute_cutoff = ctx.now - ctx.session_absolute;
    in_batches(ctx, || async {
        let r = sqlx::query!(
            r#"with doomed as (
                   select t.id from tower_sessions.session t
                   left join admin_sessions s on s.session_id = t.id
                   where t.expiry_date < $1 or s.created_at < $2
                   limit $3)
               delete from tower_sessions.session t using doomed where t.id = doomed.id"#,
            ctx.now,
            absolute_cutoff,
            ctx.batch_size,
        )
        .execute(pool)
        .await?;
        Ok(r.rows_affected())
    })
    .await
}

/// Deletes invites that expired unredeemed (redeemed ones stay as the record of who joined how).
pub async fn delete_expired_invites(pool: &PgPool, ctx: PruneCtx) -> Result<StepReport, sqlx::Error> {
    in_batches(ctx, || async {
        let r = sqlx::query!(
            r#"with doomed as (select id from admin_invites where redeemed_at is null and expires_at < $1 limit $2)
               delete from admin_invites i using doomed where i.id = doomed.id"#,
            ctx.now,
            ctx.batch_size,
        )
        .execute(pool)
        .await?;
        Ok(r.rows_affected())
    })
    .await
}

/// What triggered a run (recorded with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    Contact,
    Signin,
    AdminInbox,
    Admin,
    Ticker,
    Cli,
}

impl Trigger {
    fn as_str(self) -> &'static str {
        match self {
            Trigger::Contact => "contact",
            Trigger::Signin => "signin",
            Trigger::AdminInbox => "admin_inbox",
            Trigger::Admin => "admin",
            Trigger::Ticker => "ticker",
            Trigger::Cli => "cli",
        }
    }
}

/// One step's outcome in a run.
#[derive(Debug, Clone, Serialize)]
pub struct StepOutcome {
    pub step: &'static str,
    #[serde(flatten)]
    pub report: StepReport,
    pub error: Option<String>,
}

/// The result of asking for a prune run.
#[derive(Debug, Clone)]
pub enum PruneOutcome {
    /// Another run holds the claim (it ran less than an hour ago).
    NotDue,
    /// This caller won the claim and ran every step.
    Ran(Vec<StepOutcome>),
}

/// Error returned when one or more steps failed; every step still ran.
#[derive(Debug, thiserror::Error)]
#[error("prune steps failed: {}", .0.join(", "))]
pub struct StepsFailed(pub Vec<String>);

/// Claims the prune job at `now` (unless `force`) and, if won, runs every step. A failing step
/// is recorded and does not stop the others; the run record is written either way. Returns
/// `Err` only when the claim itself could not be attempted or some step failed.
pub async fn prune_if_due(
    pool: &PgPool,
    steps: &[PruneStep],
    ctx: PruneCtx,
    trigger: Trigger,
    force: bool,
) -> Result<PruneOutcome, PruneError> {
    if force {
        claim::force_claim(pool, CLAIM_KEY, ctx.now).await?;
    } else if !claim::try_claim(pool, CLAIM_KEY, ctx.now, CLAIM_INTERVAL).await? {
        tracing::debug!(job = "prune", "not due");
        return Ok(PruneOutcome::NotDue);
    }
    let started_at = OffsetDateTime::now_utc();
    let mut outcomes = Vec::with_capacity(steps.len());
    for step in steps {
        let outcome = match (step.run)(pool.clone(), ctx).await {
            Ok(report) => {
                tracing::info!(job = "prune", step = step.name, deleted = report.deleted, batches = report.batches, more = report.more, "prune step done");
                StepOutcome { step: step.name, report, error: None }
            }
            Err(e) => {
                tracing::warn!(job = "prune", step = step.name, error = %e, "prune step failed");
                StepOutcome { step: step.name, report: StepReport::default(), error: Some(e.to_string()) }
            }
        };
        outcomes.push(outcome);
    }
    let failed: Vec<String> = outcomes.iter().filter(|o| o.error.is_some()).map(|o| o.step.to_string()).collect();
    let record = serde_json::to_value(&outcomes).unwrap_or_default();
    sqlx::query!(
        r#"insert into maintenance_runs (job, trigger, started_at, finished_at, ok, steps)
           values ('prune', $1, $2, now(), $3, $4)"#,
        trigger.as_str(),
        started_at,
        failed.is_empty(),
        record,
    )
    .execute(pool)
    .await?;
    if failed.is_empty() {
        Ok(PruneOutcome::Ran(outcomes))
    } else {
        Err(PruneError::Steps(StepsFailed(failed)))
    }
}

/// Why a prune run failed.
#[derive(Debug, thiserror::Error)]
pub enum PruneError {
    #[error("database error: {0}")]
    Database(#[from] sqlx::Error),
    #[error(transparent)]
    Steps(#[from] StepsFailed),
}
