//! The report's figures, read from the live tables (and the store's listing of export files) at
//! one database clock reading, with the job registry's intervals and run records. The prune job
//! runs [`step`] each hour: items past their promise by more than one interval of their job
//! raise an alert (and the alert is resolved once they are gone).

use std::time::Duration;

use sqlx::PgPool;
use time::OffsetDateTime;

use super::{KindReport, LastRun, PublicPromises, RetentionReport};
use crate::alerts::{self, AlertKind};
use crate::jobs::{Job, StepCtx, StepError, StepReport};
use crate::state::AppState;
use crate::storage::{BlobError, BlobStore as _, Namespace};

/// The prune step's name.
pub const STEP: &str = "retention_check";
/// Export files are kept this many days (the bucket rule and the exports job agree).
pub const EXPORT_KEEP_DAYS: i64 = 7;
/// Export files listed at most (a store with more is reported as "at least").
const EXPORT_LIST_MAX: usize = 50_000;

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    #[error("storage: {0}")]
    Storage(#[from] BlobError),
}

impl From<ReportError> for StepError {
    fn from(e: ReportError) -> Self {
        StepError::new(e.to_string())
    }
}

fn secs(d: Duration) -> time::Duration {
    time::Duration::seconds(d.as_secs() as i64)
}

fn plural(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// Figures read by one query.
struct Figures {
    count: i64,
    oldest_at: Option<OffsetDateTime>,
    past: i64,
    overdue: i64,
    held: i64,
}

/// A kind's row with its job's facts.
async fn row(
    pool: &PgPool,
    jobs: &crate::jobs::Registry,
    kind: &str,
    label: &str,
    promise: String,
    job_step: Option<(&str, &str)>,
    f: Figures,
) -> Result<KindReport, sqlx::Error> {
    let job: Option<&Job> = job_step.and_then(|(j, _)| jobs.get(j));
    let last_run = match (job, job_step) {
        (Some(job), Some((_, step))) => crate::jobs::last_run(pool, job.name).await?.map(|run| {
            let did = match run.steps.iter().find(|s| s.step == step) {
                Some(s) if s.status == "done" || s.status == "failed" => {
                    let counts = s.counts.iter().map(|(k, v)| format!("{} {v}", k.replace('_', " "))).collect::<Vec<_>>().join(", ");
                    let counts = if counts.is_empty() { "done".to_string() } else { counts };
                    if s.status == "failed" {
                        format!("{counts} (failed)")
                    } else if s.more {
                        format!("{counts} (more next run)")
                    } else {
                        counts
                    }
                }
                Some(_) => "skipped (the run's budget ended first)".into(),
                None => "did not reach this step".into(),
            };
            LastRun { started_at: run.started_at, outcome: run.outcome, trigger: run.trigger, did }
        }),
        _ => None,
    };
    Ok(KindReport {
        kind: kind.into(),
        label: label.into(),
        promise,
        count: f.count,
        oldest_at: f.oldest_at,
        past_promise: f.past,
        overdue: f.overdue,
        held: f.held,
        job: job.map(|j| j.name.to_string()),
        job_title: job.map(|j| j.title.to_string()),
        job_interval_secs: job.map(|j| j.interval.as_secs()),
        last_run,
    })
}

fn interval_of(jobs: &crate::jobs::Registry, name: &str, default: Duration) -> Duration {
    jobs.get(name).map(|j| j.interval).unwrap_or(default)
}

/// What the visitor's page states.
pub async fn public_promises(state: &AppState) -> Result<PublicPromises, sqlx::Error> {
    let shares = state.domain::<crate::shares::ShareSettings>();
    Ok(PublicPromises {
        retention_days: crate::maintenance::prune::retention_days(&state.pool).await?,
        delivery_grace_mins: shares.gc.delivery_grace.as_secs().div_ceil(60),
        max_share_hours: shares.max_expiry_hours,
    })
}

/// Reads the whole report now.
pub async fn compute(state: &AppState) -> Result<RetentionReport, ReportError> {
    use crate::audit::upkeep::{add_months, month_start, months_before};
    let pool = &state.pool;
    let jobs = &*state.jobs;
    let now = crate::jobs::claim::db_now(pool).await?;
    let prune_every = interval_of(jobs, crate::maintenance::prune::JOB, crate::maintenance::prune::CLAIM_INTERVAL);
    let gc_every = interval_of(jobs, crate::shares::gc::JOB, Duration::from_secs(60));
    let upkeep_every = interval_of(jobs, crate::audit::upkeep::JOB, Duration::from_secs(7 * 86_400));
    let archive_every = interval_of(jobs, crate::audit::archive::JOB, Duration::from_secs(86_400));
    let exports_every = interval_of(jobs, crate::audit::exports::JOB, Duration::from_secs(60));
    let step = |job: &'static str, step: &'static str| Some((job, step));
    let mut kinds = Vec::new();

    // Inquiries: the retention setting; held ones (own or sender's hold) apart.
    let days = crate::maintenance::prune::retention_days(pool).await?;
    let cutoff = now - time::Duration::days(days as i64);
    let r = sqlx::query!(
        r#"with f as (
               select created_at, held or exists (select 1 from legal_holds h where h.email = lower(i.email)) as kept from inquiries i)
           select count(*) as "count!", min(created_at) as oldest,
                  count(*) filter (where created_at < $1 and not kept) as "past!",
                  count(*) filter (where created_at < $2 and not kept) as "overdue!",
                  count(*) filter (where kept) as "held!"
           from f"#,
        cutoff,
        cutoff - secs(prune_every),
    )
    .fetch_one(pool)
    .await?;
    kinds.push(
        row(
            pool,
            jobs,
            "inquiries",
            "Inquiries",
            format!("Deleted {} after they arrive (retention setting).", plural(days as u64, "day", "days")),
            step(crate::maintenance::prune::JOB, crate::maintenance::prune::STEP_INQUIRIES),
            Figures { count: r.count, oldest_at: r.oldest, past: r.past, overdue: r.overdue, held: r.held },
        )
        .await?,
    );

    // Shares that still have a stored file (not purged).
    let gc = state.domain::<crate::shares::ShareSettings>().gc;
    let r = sqlx::query!(
        r#"select count(*) as "count!", min(created_at) as oldest,
                  count(*) filter (where not held and ((status = 'consumed' and consumed_at <= $1::timestamptz - make_interval(secs => $2))
                                                       or (status = 'active' and expires_at <= $1))) as "past!",
                  count(*) filter (where not held and ((status = 'consumed' and consumed_at <= $1::timestamptz - make_interval(secs => $2 + $3))
                                                       or (status = 'active' and expires_at <= $1::timestamptz - make_interval(secs => $3)))) as "overdue!",
                  count(*) filter (where held) as "held!"
           from shares where status <> 'purged'"#,
        now,
        gc.delivery_grace.as_secs_f64(),
        gc_every.as_secs_f64(),
    )
    .fetch_one(pool)
    .await?;
    kinds.push(
        row(
            pool,
            jobs,
            "share_files",
            "Shared files",
            format!(
                "Deleted {} after the one download, or when the link expires unused.",
                plural(gc.delivery_grace.as_secs().div_ceil(60), "minute", "minutes")
            ),
            step(crate::shares::gc::JOB, crate::shares::gc::STEP_PURGE),
            Figures { count: r.count, oldest_at: r.oldest, past: r.past, overdue: r.overdue, held: r.held },
        )
        .await?,
    );

    // Admin sessions: idle expiry or absolute lifetime.
    let auth = state.domain::<crate::auth::AuthSettings>();
    let absolute_cutoff = now - secs(auth.session_absolute);
    let r = sqlx::query!(
        r#"select count(*) as "count!", min(s.created_at) as oldest,
                  count(*) filter (where t.expiry_date < $1 or s.created_at < $2) as "past!",
                  count(*) filter (where t.expiry_date < $1::timestamptz - make_interval(secs => $3) or s.created_at < $2::timestamptz - make_interval(secs => $3)) as "overdue!"
           from tower_sessions.session t left join admin_sessions s on s.session_id = t.id"#,
        now,
        absolute_cutoff,
        prune_every.as_secs_f64(),
    )
    .fetch_one(pool)
    .await?;
    kinds.push(
        row(
            pool,
            jobs,
            "sessions",
            "Admin sessions",
            format!(
                "Ended after {} unused, and {} after sign-in at the latest.",
                plural(auth.session_idle.as_secs() / 3600, "hour", "hours"),
                plural(auth.session_absolute.as_secs() / 86_400, "day", "days")
            ),
            step(crate::maintenance::prune::JOB, crate::maintenance::prune::STEP_SESSIONS),
            Figures { count: r.count, oldest_at: r.oldest, past: r.past, overdue: r.overdue, held: 0 },
        )
        .await?,
    );

    // Passkey ceremonies (used ones are deleted at once; abandoned ones expire).
    let r = sqlx::query!(
        r#"select count(*) as "count!", min(expires_at) as oldest,
                  count(*) filter (where expires_at < $1) as "past!",
                  count(*) filter (where expires_at < $1::timestamptz - make_interval(secs => $2)) as "overdue!"
           from passkey_challenges"#,
        now,
        prune_every.as_secs_f64(),
    )
    .fetch_one(pool)
    .await?;
    kinds.push(
        row(
            pool,
            jobs,
            "passkey_challenges",
            "Passkey challenges",
            "Deleted when used; abandoned ones when they expire (minutes).".into(),
            step(crate::maintenance::prune::JOB, crate::maintenance::prune::STEP_CHALLENGES),
            // Their creation time is not kept: the oldest is shown by its expiry.
            Figures { count: r.count, oldest_at: r.oldest, past: r.past, overdue: r.overdue, held: 0 },
        )
        .await?,
    );

    // Invites: unredeemed ones go when they expire; redeemed ones are the record of who joined.
    let r = sqlx::query!(
        r#"select count(*) as "count!", min(created_at) as oldest,
                  count(*) filter (where redeemed_at is null and expires_at < $1) as "past!",
                  count(*) filter (where redeemed_at is null and expires_at < $1::timestamptz - make_interval(secs => $2)) as "overdue!"
           from admin_invites"#,
        now,
        prune_every.as_secs_f64(),
    )
    .fetch_one(pool)
    .await?;
    kinds.push(
        row(
            pool,
            jobs,
            "invites",
            "Admin invites",
            "Unused invites are deleted when they expire; used ones are kept as the record of who joined.".into(),
            step(crate::maintenance::prune::JOB, crate::maintenance::prune::STEP_INVITES),
            Figures { count: r.count, oldest_at: r.oldest, past: r.past, overdue: r.overdue, held: 0 },
        )
        .await?,
    );

    // Rate-limit windows (no limit's window is longer than a day).
    let day = time::Duration::days(1);
    let r = sqlx::query!(
        r#"select count(*) as "count!", min(window_start) as oldest,
                  count(*) filter (where window_start < $1) as "past!",
                  count(*) filter (where window_start < $2) as "overdue!"
           from rate_limit_counters"#,
        now - day,
        now - day - secs(prune_every),
    )
    .fetch_one(pool)
    .await?;
    kinds.push(
        row(
            pool,
            jobs,
            "rate_limit_windows",
            "Rate-limit windows",
            "Deleted a day after their window starts (they hold keyed hashes of addresses, never addresses).".into(),
            step(crate::maintenance::prune::JOB, crate::maintenance::prune::STEP_RATE_LIMITS),
            Figures { count: r.count, oldest_at: r.oldest, past: r.past, overdue: r.overdue, held: 0 },
        )
        .await?,
    );

    // Audit events in the database: months whose end is 25 months back are detached (weekly
    // upkeep), then archived and dropped (daily archive). Past promise: rows of such months still
    // attached, and rows waiting detached. Overdue: one upkeep interval (plus one archive
    // interval for detached ones) later.
    let threshold = month_start(months_before(now, crate::audit::DETACH_AFTER_MONTHS));
    let late = month_start(months_before(now - secs(upkeep_every), crate::audit::DETACH_AFTER_MONTHS));
    let r = sqlx::query!(
        r#"select count(*) as "count!", min(occurred_at) as oldest,
                  count(*) filter (where occurred_at < $1) as "past!",
                  count(*) filter (where occurred_at < $2) as "overdue!"
           from audit_events"#,
        threshold,
        late,
    )
    .fetch_one(pool)
    .await?;
    let (mut count, mut oldest, mut past, mut overdue) = (r.count, r.oldest, r.past, r.overdue);
    let mut conn = pool.acquire().await?;
    let pending = crate::audit::archive::pending(&mut conn).await?;
    let waiting_late = months_before(now - secs(upkeep_every) - secs(archive_every), crate::audit::DETACH_AFTER_MONTHS);
    for table in &pending {
        // The name comes from the catalog; quoted as an identifier all the same.
        let n: i64 = sqlx::query_scalar(&format!("select count(*) from audit_pending.\"{}\"", table.name.replace('"', "\"\""))).fetch_one(&mut *conn).await?;
        count += n;
        past += n;
        if let Ok(period) = table.period {
            let start = period.midnight().assume_utc();
            oldest = Some(oldest.map_or(start, |o| o.min(start)));
            if add_months(start, 1) <= waiting_late {
                overdue += n;
            }
        }
    }
    drop(conn);
    kinds.push(
        row(
            pool,
            jobs,
            "audit_events",
            "Audit events in the database",
            format!(
                "Queryable for {} months; a month is detached after {} months, archived, verified, then removed from the database.",
                crate::audit::PROMISE_MONTHS,
                crate::audit::DETACH_AFTER_MONTHS
            ),
            step(crate::audit::archive::JOB, "drop"),
            Figures { count, oldest_at: oldest, past, overdue, held: 0 },
        )
        .await?,
    );

    // Archived months: kept in archive storage, each object checked daily.
    let r =
        sqlx::query!(r#"select count(*) as "count!", min(period) as oldest from audit_partition_archives where status = 'verified'"#).fetch_one(pool).await?;
    kinds.push(
        row(
            pool,
            jobs,
            "archived_months",
            "Archived audit months",
            "Kept in archive storage; each object's size and checksum are checked daily.".into(),
            step(crate::audit::archive::JOB, "objects"),
            Figures { count: r.count, oldest_at: r.oldest.map(|d| d.midnight().assume_utc()), past: 0, overdue: 0, held: 0 },
        )
        .await?,
    );

    // Export files, from the store's own listing.
    let keep = time::Duration::days(EXPORT_KEEP_DAYS);
    let (mut count, mut oldest, mut past, mut overdue) = (0i64, None::<OffsetDateTime>, 0i64, 0i64);
    let mut after: Option<String> = None;
    loop {
        let page = state.blobs.list(Namespace::Exports, after.as_deref(), 1000).await?;
        for o in &page {
            let modified = OffsetDateTime::from(o.modified);
            count += 1;
            oldest = Some(oldest.map_or(modified, |m| m.min(modified)));
            if modified < now - keep {
                past += 1;
            }
            if modified < now - keep - secs(exports_every) {
                overdue += 1;
            }
        }
        if page.len() < 1000 || count as usize >= EXPORT_LIST_MAX {
            break;
        }
        after = page.last().map(|o| o.key.clone());
    }
    kinds.push(
        row(
            pool,
            jobs,
            "export_files",
            "Audit export files",
            format!("Deleted {EXPORT_KEEP_DAYS} days after they are written."),
            step(crate::audit::exports::JOB, "expired_files"),
            Figures { count, oldest_at: oldest, past, overdue, held: 0 },
        )
        .await?,
    );

    // Export requests (the ledger of who asked for what).
    let keep = time::Duration::days(crate::audit::archive::REQUEST_KEEP_DAYS);
    let r = sqlx::query!(
        r#"select count(*) as "count!", min(requested_at) as oldest,
                  count(*) filter (where requested_at < $1) as "past!",
                  count(*) filter (where requested_at < $2) as "overdue!"
           from audit_export_requests"#,
        now - keep,
        now - keep - secs(archive_every),
    )
    .fetch_one(pool)
    .await?;
    kinds.push(
        row(
            pool,
            jobs,
            "export_requests",
            "Audit export requests",
            format!("Deleted {} days after they are made.", crate::audit::archive::REQUEST_KEEP_DAYS),
            step(crate::audit::archive::JOB, "requests"),
            Figures { count: r.count, oldest_at: r.oldest, past: r.past, overdue: r.overdue, held: 0 },
        )
        .await?,
    );

    // Run records of the lifecycle jobs.
    let keep = time::Duration::days(90);
    let r = sqlx::query!(
        r#"select count(*) as "count!", min(started_at) as oldest,
                  count(*) filter (where started_at < $1) as "past!",
                  count(*) filter (where started_at < $2) as "overdue!"
           from maintenance_runs"#,
        now - keep,
        now - keep - secs(prune_every),
    )
    .fetch_one(pool)
    .await?;
    kinds.push(
        row(
            pool,
            jobs,
            "run_records",
            "Job run records",
            "Deleted 90 days after the run.".into(),
            step(crate::maintenance::prune::JOB, crate::maintenance::prune::STEP_RUNS),
            Figures { count: r.count, oldest_at: r.oldest, past: r.past, overdue: r.overdue, held: 0 },
        )
        .await?,
    );

    let holds = crate::holds::db::count(pool).await?;
    Ok(RetentionReport { generated_at: now, kinds, holds })
}

/// Raises one alert per kind with items past their promise by more than one interval of their
/// job, and resolves the alerts of kinds that are back on time.
pub async fn raise_alerts(pool: &PgPool, report: &RetentionReport) -> Result<(), sqlx::Error> {
    for k in &report.kinds {
        if k.overdue > 0 {
            alerts::raise(
                pool,
                AlertKind::RetentionOverdue,
                &k.kind,
                &format!(
                    "{}: {} past their promise by more than one run of {} ({}). Check that job's last runs on the dashboard, and the Retention page.",
                    k.label,
                    plural(k.overdue as u64, "item is", "items are"),
                    k.job_title.as_deref().unwrap_or("their job"),
                    k.promise.trim_end_matches('.'),
                ),
            )
            .await?;
        } else {
            alerts::resolve(pool, AlertKind::RetentionOverdue, &k.kind).await?;
        }
    }
    Ok(())
}

/// The prune job's last step: clears hold flags no hold backs, then checks every promise.
pub fn step() -> crate::jobs::Step {
    crate::jobs::Step::new(STEP, |ctx: StepCtx| async move {
        let fixed = crate::holds::db::clear_stale_flags(&ctx.state.pool).await?;
        let report = compute(&ctx.state).await?;
        raise_alerts(&ctx.state.pool, &report).await?;
        Ok::<_, StepError>(StepReport {
            counts: vec![("past_promise", report.past_promise() as u64), ("overdue", report.overdue() as u64), ("hold_flags_cleared", fixed)],
            rows: 0,
            more: false,
        })
    })
    .labelled("every kind of data checked against its promise")
}
