//! The report's figures, read from the live tables (and the store's listing of export files) at
//! one database clock reading, with the job registry's intervals and run records. The prune job
//! runs [`step`] each hour: items past their promise by more than one interval of their job
//! raise an alert (and the alert is resolved once they are gone).

use std::collections::HashMap;
use std::time::Duration;

use sqlx::PgPool;
use time::OffsetDateTime;

use super::ui::{Did, Promise, RetentionT};
use super::{KindReport, LastRun, PublicPromises, RetentionReport};
use crate::alerts::{self, AlertKind};
use crate::i18n::{Lang, Text as _};
use crate::jobs::{Job, RunView, StepCtx, StepError, StepReport};
use crate::state::AppState;
use crate::storage::{BlobError, BlobStore as _, Namespace};

/// The prune step's name.
pub const STEP: &str = "retention_check";
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

/// What was counted for one kind (one query, or the store's listing).
struct Figures {
    count: i64,
    oldest_at: Option<OffsetDateTime>,
    past: i64,
    overdue: i64,
    held: i64,
}

/// One kind, before its job's last run is attached. Its label and promise are in English (the
/// JSON, the CLI and alerts keep them stable); the admin page puts them in its language from
/// the kind's id and the promise's figures (retention/ui.rs).
struct Kind {
    kind: &'static str,
    label: &'static str,
    promise: String,
    /// The job that removes these items, and its step.
    job: &'static str,
    step: &'static str,
    figures: Figures,
    /// The count is the planner's estimate (a large table is not counted row by row).
    estimated: bool,
}

/// What `step` did in `run`, in (English) words: the report's text, which the admin page puts in
/// its language ([`Did`]).
fn step_did(run: &RunView, step: &str) -> String {
    let did = match run.steps.iter().find(|s| s.step == step) {
        Some(s) if matches!(s.status.as_str(), "done" | "failed" | "cut_off" | "running") => {
            Did::Ran { counts: s.counts.iter().map(|(k, v)| (k.replace('_', " "), *v)).collect(), failed: s.status == "failed", more: s.more }
        }
        Some(s) if s.status == "stopped" => Did::Stopped,
        Some(_) => Did::Skipped,
        None => Did::NotReached,
    };
    did.text(Lang::En)
}

impl Kind {
    fn report(self, job: Option<&Job>, run: Option<&RunView>) -> KindReport {
        let f = self.figures;
        KindReport {
            kind: self.kind.into(),
            label: self.label.into(),
            promise: self.promise,
            count: f.count,
            count_estimated: self.estimated,
            oldest_at: f.oldest_at,
            past_promise: f.past,
            overdue: f.overdue,
            held: f.held,
            job: job.map(|j| j.name.to_string()),
            job_title: job.map(|j| j.title.to_string()),
            job_interval_secs: job.map(|j| j.interval.as_secs()),
            last_run: job.and(run).map(|run| LastRun {
                started_at: run.started_at,
                outcome: run.outcome.clone(),
                trigger: run.trigger.clone(),
                did: step_did(run, self.step),
            }),
        }
    }
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

/// Tables up to this many rows (by the planner's estimate) are counted exactly; larger ones are
/// given the estimate, so the hourly check costs what is past the promise, not the table's size.
const EXACT_COUNT_MAX: f32 = 100_000.0;

/// Rows in `table` (a fixed name of ours, or a partitioned table: the sum of its partitions),
/// and whether that is the catalogue's estimate (a large, analysed table) rather than a count.
async fn table_size(pool: &PgPool, table: &'static str) -> Result<(i64, bool), sqlx::Error> {
    let estimate: Option<f32> = sqlx::query_scalar!(
        r#"select case when bool_or(c.reltuples < 0) then null else sum(c.reltuples)::real end
           from pg_class c
           where c.oid = $1::text::regclass and c.relkind = 'r'
              or c.oid in (select inhrelid from pg_inherits where inhparent = $1::text::regclass)"#,
        table
    )
    .fetch_one(pool)
    .await?;
    match estimate {
        Some(n) if n > EXACT_COUNT_MAX => Ok((n as i64, true)),
        _ => {
            let n: i64 = sqlx::query_scalar(&format!("select count(*) from {table}")).fetch_one(pool).await?;
            Ok((n, false))
        }
    }
}

/// Reads the whole report now.
pub async fn compute(state: &AppState) -> Result<RetentionReport, ReportError> {
    use crate::audit::upkeep::{add_months, month_start, months_before};
    use crate::maintenance::prune;
    let pool = &state.pool;
    let jobs = &*state.jobs;
    let now = crate::jobs::claim::db_now(pool).await?;
    let prune_every = interval_of(jobs, prune::JOB, prune::CLAIM_INTERVAL);
    let gc_every = interval_of(jobs, crate::shares::gc::JOB, Duration::from_secs(60));
    let upkeep_every = interval_of(jobs, crate::audit::upkeep::JOB, Duration::from_secs(7 * 86_400));
    let archive_every = interval_of(jobs, crate::audit::archive::JOB, Duration::from_secs(86_400));
    let exports_every = interval_of(jobs, crate::audit::exports::JOB, Duration::from_secs(60));
    let mut kinds = Vec::new();

    // Inquiries: the retention setting; held ones (own or sender's hold) apart.
    let days = prune::retention_days(pool).await?;
    let cutoff = now - time::Duration::days(days as i64);
    // Each figure from an index: the oldest by `created_at`, the past and overdue ones by a range
    // of it (what is past the promise, normally nothing), the held ones by the hold flag's and
    // the hold addresses' indexes. The total comes from the catalogue when the table is large.
    let mut figures = sqlx::query_as!(
        Figures,
        r#"select 0::bigint as "count!",
                  (select min(created_at) from inquiries) as oldest_at,
                  (select count(*) from inquiries i where created_at < $1 and not held
                     and not exists (select 1 from legal_holds h where h.email = lower(i.email))) as "past!",
                  (select count(*) from inquiries i where created_at < $2 and not held
                     and not exists (select 1 from legal_holds h where h.email = lower(i.email))) as "overdue!",
                  (select count(*) from (select id from inquiries where held
                                         union select i.id from legal_holds h join inquiries i on lower(i.email) = h.email
                                         where h.email is not null) k) as "held!""#,
        cutoff,
        cutoff - secs(prune_every),
    )
    .fetch_one(pool)
    .await?;
    let (count, inquiries_estimated) = table_size(pool, "inquiries").await?;
    figures.count = count;
    kinds.push(Kind {
        kind: "inquiries",
        label: RetentionT::KindInquiries.get(Lang::En),
        promise: Promise::Inquiries { days: i64::from(days) }.text(Lang::En),
        job: prune::JOB,
        step: prune::STEP_INQUIRIES,
        figures,
        estimated: inquiries_estimated,
    });

    // Shares that still have a stored file (not purged).
    let gc = state.domain::<crate::shares::ShareSettings>().gc;
    let figures = sqlx::query_as!(
        Figures,
        r#"select count(*) as "count!", min(created_at) as oldest_at,
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
    kinds.push(Kind {
        kind: "share_files",
        label: RetentionT::KindShareFiles.get(Lang::En),
        promise: Promise::ShareFiles { grace_mins: gc.delivery_grace.as_secs().div_ceil(60) as i64 }.text(Lang::En),
        job: crate::shares::gc::JOB,
        step: crate::shares::gc::STEP_PURGE,
        figures,
        estimated: false,
    });

    // Admin sessions: idle expiry or absolute lifetime.
    let auth = state.domain::<crate::auth::AuthSettings>();
    let figures = sqlx::query_as!(
        Figures,
        r#"select count(*) as "count!", min(s.created_at) as oldest_at,
                  count(*) filter (where t.expiry_date < $1 or s.created_at < $2) as "past!",
                  count(*) filter (where t.expiry_date < $1::timestamptz - make_interval(secs => $3) or s.created_at < $2::timestamptz - make_interval(secs => $3)) as "overdue!",
                  0::bigint as "held!"
           from tower_sessions.session t left join admin_sessions s on s.session_id = t.id"#,
        now,
        now - secs(auth.session_absolute),
        prune_every.as_secs_f64(),
    )
    .fetch_one(pool)
    .await?;
    kinds.push(Kind {
        kind: "sessions",
        label: RetentionT::KindSessions.get(Lang::En),
        promise: Promise::Sessions {
            idle_hours: (auth.session_idle.as_secs() / 3600) as i64,
            absolute_days: (auth.session_absolute.as_secs() / 86_400) as i64,
        }
        .text(Lang::En),
        job: prune::JOB,
        step: prune::STEP_SESSIONS,
        figures,
        estimated: false,
    });

    // Passkey ceremonies (used ones are deleted at once; abandoned ones expire). Their creation
    // time is not kept: the oldest is shown by its expiry.
    let figures = sqlx::query_as!(
        Figures,
        r#"select count(*) as "count!", min(expires_at) as oldest_at,
                  count(*) filter (where expires_at < $1) as "past!",
                  count(*) filter (where expires_at < $1::timestamptz - make_interval(secs => $2)) as "overdue!",
                  0::bigint as "held!"
           from passkey_challenges"#,
        now,
        prune_every.as_secs_f64(),
    )
    .fetch_one(pool)
    .await?;
    kinds.push(Kind {
        kind: "passkey_challenges",
        label: RetentionT::KindPasskeyChallenges.get(Lang::En),
        promise: Promise::PasskeyChallenges.text(Lang::En),
        job: prune::JOB,
        step: prune::STEP_CHALLENGES,
        figures,
        estimated: false,
    });

    // Invites: unredeemed ones go when they expire; redeemed ones are the record of who joined.
    let figures = sqlx::query_as!(
        Figures,
        r#"select count(*) as "count!", min(created_at) as oldest_at,
                  count(*) filter (where redeemed_at is null and expires_at < $1) as "past!",
                  count(*) filter (where redeemed_at is null and expires_at < $1::timestamptz - make_interval(secs => $2)) as "overdue!",
                  0::bigint as "held!"
           from admin_invites"#,
        now,
        prune_every.as_secs_f64(),
    )
    .fetch_one(pool)
    .await?;
    kinds.push(Kind {
        kind: "invites",
        label: RetentionT::KindInvites.get(Lang::En),
        promise: Promise::Invites.text(Lang::En),
        job: prune::JOB,
        step: prune::STEP_INVITES,
        figures,
        estimated: false,
    });

    // Rate-limit windows.
    let keep = time::Duration::days(prune::RATE_LIMIT_KEEP_DAYS);
    let figures = sqlx::query_as!(
        Figures,
        r#"select count(*) as "count!", min(window_start) as oldest_at,
                  count(*) filter (where window_start < $1) as "past!",
                  count(*) filter (where window_start < $2) as "overdue!",
                  0::bigint as "held!"
           from rate_limit_counters"#,
        now - keep,
        now - keep - secs(prune_every),
    )
    .fetch_one(pool)
    .await?;
    kinds.push(Kind {
        kind: "rate_limit_windows",
        label: RetentionT::KindRateLimitWindows.get(Lang::En),
        promise: Promise::RateLimitWindows.text(Lang::En),
        job: prune::JOB,
        step: prune::STEP_RATE_LIMITS,
        figures,
        estimated: false,
    });

    // Audit events in the database: months whose end is 25 months back are detached (weekly
    // upkeep), then archived and dropped (daily archive). Past promise: rows of such months still
    // attached, and rows waiting detached. Overdue: one upkeep interval (plus one archive
    // interval for detached ones) later.
    let threshold = month_start(months_before(now, crate::audit::DETACH_AFTER_MONTHS));
    let late = month_start(months_before(now - secs(upkeep_every), crate::audit::DETACH_AFTER_MONTHS));
    // Past and overdue by a range of `occurred_at`: partition pruning reads only the months
    // past the promise (normally none). The total from the partitions' catalogue figures.
    let mut figures = sqlx::query_as!(
        Figures,
        r#"select 0::bigint as "count!",
                  (select min(occurred_at) from audit_events) as oldest_at,
                  (select count(*) from audit_events where occurred_at < $1) as "past!",
                  (select count(*) from audit_events where occurred_at < $2) as "overdue!",
                  0::bigint as "held!""#,
        threshold,
        late,
    )
    .fetch_one(pool)
    .await?;
    let (count, events_estimated) = table_size(pool, "audit_events").await?;
    figures.count = count;
    let mut conn = pool.acquire().await?;
    let pending = crate::audit::archive::pending(&mut conn).await?;
    let waiting_late = months_before(now - secs(upkeep_every) - secs(archive_every), crate::audit::DETACH_AFTER_MONTHS);
    for table in &pending {
        // The name comes from the catalog; quoted as an identifier all the same.
        let n: i64 = sqlx::query_scalar(&format!("select count(*) from audit_pending.\"{}\"", table.name.replace('"', "\"\""))).fetch_one(&mut *conn).await?;
        figures.count += n;
        figures.past += n;
        if let Ok(period) = table.period {
            let start = period.midnight().assume_utc();
            figures.oldest_at = Some(figures.oldest_at.map_or(start, |o| o.min(start)));
            if add_months(start, 1) <= waiting_late {
                figures.overdue += n;
            }
        }
    }
    drop(conn);
    kinds.push(Kind {
        kind: "audit_events",
        label: RetentionT::KindAuditEvents.get(Lang::En),
        promise: Promise::AuditEvents { promise_months: i64::from(crate::audit::PROMISE_MONTHS), detach_months: i64::from(crate::audit::DETACH_AFTER_MONTHS) }
            .text(Lang::En),
        job: crate::audit::archive::JOB,
        step: "drop",
        figures,
        estimated: events_estimated,
    });

    // Archived months: kept in archive storage (no expiry), each object checked daily.
    let figures = sqlx::query_as!(
        Figures,
        r#"select count(*) as "count!", min(period)::timestamp at time zone 'UTC' as oldest_at,
                  0::bigint as "past!", 0::bigint as "overdue!", 0::bigint as "held!"
           from audit_partition_archives where status = 'verified'"#
    )
    .fetch_one(pool)
    .await?;
    kinds.push(Kind {
        kind: "archived_months",
        label: RetentionT::KindArchivedMonths.get(Lang::En),
        promise: Promise::ArchivedMonths.text(Lang::En),
        job: crate::audit::archive::JOB,
        step: "objects",
        figures,
        estimated: false,
    });

    // Export files, from the store's own listing.
    let keep = time::Duration::days(crate::audit::EXPORT_KEEP_DAYS);
    let mut figures = Figures { count: 0, oldest_at: None, past: 0, overdue: 0, held: 0 };
    let mut after: Option<String> = None;
    loop {
        let page = state.blobs.list(Namespace::Exports, after.as_deref(), 1000).await?;
        for o in &page.objects {
            let modified = OffsetDateTime::from(o.modified);
            figures.count += 1;
            figures.oldest_at = Some(figures.oldest_at.map_or(modified, |m| m.min(modified)));
            figures.past += i64::from(modified < now - keep);
            figures.overdue += i64::from(modified < now - keep - secs(exports_every));
        }
        after = page.next;
        if after.is_none() || figures.count as usize >= EXPORT_LIST_MAX {
            break;
        }
    }
    kinds.push(Kind {
        kind: "export_files",
        label: RetentionT::KindExportFiles.get(Lang::En),
        promise: Promise::ExportFiles { days: crate::audit::EXPORT_KEEP_DAYS }.text(Lang::En),
        job: crate::audit::exports::JOB,
        step: "expired_files",
        figures,
        estimated: after.is_some(),
    });

    // Export requests (the ledger of who asked for what).
    let keep = time::Duration::days(crate::audit::archive::REQUEST_KEEP_DAYS);
    let figures = sqlx::query_as!(
        Figures,
        r#"select count(*) as "count!", min(requested_at) as oldest_at,
                  count(*) filter (where requested_at < $1) as "past!",
                  count(*) filter (where requested_at < $2) as "overdue!",
                  0::bigint as "held!"
           from audit_export_requests"#,
        now - keep,
        now - keep - secs(archive_every),
    )
    .fetch_one(pool)
    .await?;
    kinds.push(Kind {
        kind: "export_requests",
        label: RetentionT::KindExportRequests.get(Lang::En),
        promise: Promise::ExportRequests { days: crate::audit::archive::REQUEST_KEEP_DAYS }.text(Lang::En),
        job: crate::audit::archive::JOB,
        step: "requests",
        figures,
        estimated: false,
    });

    // Run records of the lifecycle jobs.
    let keep = time::Duration::days(prune::RUN_KEEP_DAYS);
    let mut figures = sqlx::query_as!(
        Figures,
        r#"select 0::bigint as "count!",
                  (select min(started_at) from maintenance_runs) as oldest_at,
                  (select count(*) from maintenance_runs where started_at < $1) as "past!",
                  (select count(*) from maintenance_runs where started_at < $2) as "overdue!",
                  0::bigint as "held!""#,
        now - keep,
        now - keep - secs(prune_every),
    )
    .fetch_one(pool)
    .await?;
    let (count, runs_estimated) = table_size(pool, "maintenance_runs").await?;
    figures.count = count;
    kinds.push(Kind {
        kind: "run_records",
        label: RetentionT::KindRunRecords.get(Lang::En),
        promise: Promise::RunRecords { days: prune::RUN_KEEP_DAYS }.text(Lang::En),
        job: prune::JOB,
        step: prune::STEP_RUNS,
        figures,
        estimated: runs_estimated,
    });

    // Each job's last run, read once (prune removes six kinds).
    let mut runs: HashMap<&str, Option<RunView>> = HashMap::new();
    for k in &kinds {
        if !runs.contains_key(k.job) {
            runs.insert(k.job, crate::jobs::last_run(pool, k.job).await?);
        }
    }
    let kinds = kinds
        .into_iter()
        .map(|k| {
            let (job, run) = (jobs.get(k.job), runs.get(k.job).and_then(Option::as_ref));
            k.report(job, run)
        })
        .collect();
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
