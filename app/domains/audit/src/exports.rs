//! Export requests: an admin asks for a CSV of the audit events of a range of days; a background
//! run writes it gzip'd to `exports/<id>.csv.gz` (standard class) and the request moves
//! pending → running → done or failed, with its row count and size. Files are kept 7 days (bucket
//! lifecycle where the server supports it, and this module's GC on every backend); from then on
//! the request still shows, but is "expired" and gets no link — never a link that cannot
//! download. Request rows are deleted after 90 days by the archive job.

use std::sync::{
    atomic::{AtomicU64, Ordering},
    Arc,
};
use std::time::{Duration, Instant, SystemTime};

use futures::TryStreamExt;
use sqlx::PgPool;
use time::{Date, OffsetDateTime};
use uuid::Uuid;

use super::{AuditFilter, AuditKind, AuditTextT, DownloadLink, ExportStatus, ExportView, EXPORT_KEEP_DAYS, LINK_MINUTES};
use common::error::FieldErrors;
use common::i18n::t;
use kernel::audit::{record, Actor};
use kernel::jobs::{StepCtx, StepError, StepReport};
use kernel::state::AppState;
use kernel::storage::{BlobError, BlobStore, Namespace};

/// The job's name.
pub const JOB: &str = "audit_exports";
/// Requests waiting or running at once, at most (more are refused until these finish).
pub const MAX_OPEN: i64 = 5;
const MAX_EXPORT_BYTES: u64 = 1 << 40;

/// Parses the range as typed (`YYYY-MM-DD`, inclusive, UTC days) against `today`. The errors are
/// in the page's language (the texts of the audit viewer's filter, [`AuditTextT`]).
pub fn parse_range(from: &str, to: &str, today: Date) -> Result<(Date, Date), FieldErrors> {
    let fmt = time::macros::format_description!("[year]-[month]-[day]");
    let mut errors = FieldErrors::new();
    let mut day = |field: &str, raw: &str| match Date::parse(raw.trim(), &fmt) {
        Ok(d) if (2000..=9999).contains(&d.year()) && !raw.trim().starts_with(['+', '-']) => Some(d),
        _ => {
            errors.insert(field.into(), t(AuditTextT::UseDate).into());
            None
        }
    };
    let (from, to) = (day("from", from), day("to", to));
    if let (Some(start), Some(end)) = (from, to) {
        if start > end {
            errors.insert("to".into(), t(AuditTextT::EndBeforeStart).into());
        } else if start > today {
            errors.insert("from".into(), t(AuditTextT::RangeStartsLater).into());
        } else if start < oldest_exportable(today) {
            // Said, not clipped: an export that quietly left out the months before the promise
            // would look complete.
            let first = oldest_exportable(today).to_string();
            errors.insert("from".into(), common::i18n::tf(AuditTextT::RangeTooOld, &[("months", &super::PROMISE_MONTHS), ("first", &first)]));
        }
    }
    match (from, to) {
        (Some(f), Some(t)) if errors.is_empty() => Ok((f, t)),
        _ => Err(errors),
    }
}

/// The first day an export may start on: the log keeps [`super::PROMISE_MONTHS`] months.
pub fn oldest_exportable(today: Date) -> Date {
    super::upkeep::months_before(today.midnight().assume_utc(), super::PROMISE_MONTHS).date()
}

/// Why a request was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    #[error("{MAX_OPEN} exports are already waiting or running; request this one when they are done")]
    TooMany,
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
}

/// Records a request (and its audit event) for the days `from`..=`to`.
pub async fn request(pool: &PgPool, actor: &Actor, from: Date, to: Date) -> Result<Uuid, RequestError> {
    let mut tx = pool.begin().await?;
    // One request at a time decides the cap (two admins at once cannot both pass it).
    sqlx::query!("select pg_advisory_xact_lock(hashtext('ebb.audit_export_request'))").execute(&mut *tx).await?;
    let open = sqlx::query_scalar!(r#"select count(*) as "n!" from audit_export_requests where status in ('pending', 'running')"#).fetch_one(&mut *tx).await?;
    if open >= MAX_OPEN {
        return Err(RequestError::TooMany);
    }
    let id = Uuid::new_v4();
    let to_exclusive = to.next_day().unwrap_or(to).midnight().assume_utc();
    sqlx::query!(
        "insert into audit_export_requests (id, admin_id, admin_name, range_from, range_to)
         values ($1, $2, (select name from admin_names where id = $2), $3, $4)",
        id,
        actor.admin,
        from.midnight().assume_utc(),
        to_exclusive,
    )
    .execute(&mut *tx)
    .await?;
    record(&mut tx, actor, AuditKind::ExportRequest, Some(("export", &id.to_string())), Some(&format!("{from} to {to}"))).await?;
    tx.commit().await?;
    Ok(id)
}

/// Requests `running` for longer than `after` (their process stopped) become failed.
pub async fn fail_stuck(pool: &PgPool, after: Duration) -> Result<u64, sqlx::Error> {
    let r = sqlx::query!(
        "update audit_export_requests set status = 'failed', finished_at = now(),
             failure = 'cut off: the process stopped while writing it; request it again'
         where status = 'running' and started_at < now() - make_interval(secs => $1)",
        after.as_secs_f64()
    )
    .execute(pool)
    .await?;
    Ok(r.rows_affected())
}

/// The file name a request downloads as.
pub fn file_name(from: Date, to: Date) -> String {
    format!("audit-{from}_to_{to}.csv.gz")
}

fn view(
    id: Uuid,
    range: (OffsetDateTime, OffsetDateTime),
    status: ExportStatus,
    admin_name: Option<String>,
    times: (OffsetDateTime, Option<OffsetDateTime>, Option<OffsetDateTime>),
    counts: (Option<i64>, Option<i64>),
    now: OffsetDateTime,
) -> ExportView {
    let (requested_at, started_at, finished_at) = times;
    let to = range.1.date().previous_day().unwrap_or(range.1.date());
    ExportView {
        id,
        from: range.0.date(),
        to,
        expired: status == ExportStatus::Done && !linkable(started_at, now),
        status,
        admin_name,
        requested_at,
        finished_at,
        events: counts.0,
        bytes: counts.1,
    }
}

/// Whether a link given now would work for its whole life: the file (written after `started_at`)
/// is kept 7 days, and a link lives 15 minutes.
fn linkable(started_at: Option<OffsetDateTime>, now: OffsetDateTime) -> bool {
    started_at.is_some_and(|s| now + time::Duration::minutes(LINK_MINUTES) < s + time::Duration::days(EXPORT_KEEP_DAYS))
}

/// The latest requests, newest first.
pub async fn list(pool: &PgPool, limit: i64) -> Result<Vec<ExportView>, sqlx::Error> {
    let now: OffsetDateTime = sqlx::query_scalar!(r#"select now() as "now!""#).fetch_one(pool).await?;
    let rows = sqlx::query!(
        "select id, range_from, range_to, status, admin_name, requested_at, started_at, finished_at, rows_written, bytes
         from audit_export_requests order by requested_at desc, id limit $1",
        limit
    )
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            view(
                r.id,
                (r.range_from, r.range_to),
                ExportStatus::parse(&r.status),
                r.admin_name,
                (r.requested_at, r.started_at, r.finished_at),
                (r.rows_written, r.bytes),
                now,
            )
        })
        .collect())
}

/// Why no link was given.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("no such export")]
    NotFound,
    #[error("the export is not ready")]
    NotReady,
    #[error("the export's file has expired")]
    Expired,
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    #[error("storage: {0}")]
    Storage(#[from] BlobError),
}

/// A 15-minute link to a done export's file (recorded in the audit log), only while the file is
/// there for the link's whole life.
pub async fn link(state: &AppState, actor: &Actor, id: Uuid) -> Result<DownloadLink, LinkError> {
    let pool = &state.pool;
    let row = sqlx::query!("select status, range_from, range_to, started_at, object_key, now() as \"now!\" from audit_export_requests where id = $1", id)
        .fetch_optional(pool)
        .await?
        .ok_or(LinkError::NotFound)?;
    if row.status != "done" {
        return Err(LinkError::NotReady);
    }
    let key = row.object_key.ok_or(LinkError::NotReady)?;
    // Existence only (cheap): an admin's request never reads an object through.
    if !linkable(row.started_at, row.now) || !state.blobs.exists(&key).await? {
        return Err(LinkError::Expired);
    }
    let name = file_name(row.range_from.date(), row.range_to.date().previous_day().unwrap_or(row.range_to.date()));
    let mut tx = pool.begin().await?;
    record(&mut tx, actor, AuditKind::ExportDownload, Some(("export", &id.to_string())), None).await?;
    let url = state.blobs.signed_url(&key, Duration::from_secs(LINK_MINUTES as u64 * 60), &name, row.now).await?;
    tx.commit().await?;
    Ok(DownloadLink { url, file_name: name, expires_at: row.now + time::Duration::minutes(LINK_MINUTES) })
}

/// Runs pending requests, oldest first, until none is left or `deadline` (no new request is taken
/// after it); each request may take up to the stuck limit, and one that takes longer is marked
/// failed. Returns (done, failed).
pub async fn run_pending(state: &AppState, deadline: Instant) -> Result<(u64, u64), sqlx::Error> {
    let limit = state.domain::<ExportSettings>().stuck_after;
    let (mut done, mut failed) = (0, 0);
    while Instant::now() < deadline {
        let Some(req) = sqlx::query!(
            "update audit_export_requests set status = 'running', started_at = now()
             where id = (select id from audit_export_requests where status = 'pending' order by requested_at for update skip locked limit 1)
             returning id, range_from, range_to"
        )
        .fetch_optional(&state.pool)
        .await?
        else {
            break;
        };
        let key = format!("{}{}.csv.gz", Namespace::Exports.prefix(), req.id.simple());
        let filter = AuditFilter {
            from: Some(req.range_from.date()),
            to: Some(req.range_to.date().previous_day().unwrap_or(req.range_to.date())),
            ..AuditFilter::default()
        };
        let rows = Arc::new(AtomicU64::new(0));
        let csv = super::export::counted_stream(state.pool.clone(), filter, rows.clone());
        let body = Box::pin(kernel::csv_export::gzip(csv).map_err(|e| BlobError::Source(e.to_string())));
        let written = tokio::time::timeout(limit, state.blobs.put_stream(&key, body, MAX_EXPORT_BYTES)).await.unwrap_or_else(|_| {
            Err(BlobError::Service(format!("took longer than {} minutes (EBB_EXPORT_STUCK_MINS); request a shorter range", limit.as_secs() / 60)))
        });
        match written {
            Ok(stored) => {
                sqlx::query!(
                    "update audit_export_requests set status = 'done', finished_at = now(), object_key = $2, rows_written = $3, bytes = $4
                     where id = $1 and status = 'running'",
                    req.id,
                    key,
                    rows.load(Ordering::Relaxed) as i64,
                    stored.size as i64
                )
                .execute(&state.pool)
                .await?;
                tracing::info!(export = %req.id, rows = rows.load(Ordering::Relaxed), bytes = stored.size, "audit export written");
                done += 1;
            }
            Err(e) => {
                tracing::warn!(export = %req.id, error = %e, "audit export failed");
                sqlx::query!(
                    "update audit_export_requests set status = 'failed', finished_at = now(), failure = $2 where id = $1 and status = 'running'",
                    req.id,
                    e.to_string()
                )
                .execute(&state.pool)
                .await?;
                failed += 1;
            }
        }
    }
    Ok((done, failed))
}

/// Starts the pending requests now, in a tracked background task of its own (after a request,
/// and from the job): requests are taken for 10 minutes, each runs to the stuck limit.
pub fn start(state: &AppState) {
    let s = state.clone();
    let taking = Duration::from_secs(600);
    let limit = state.domain::<ExportSettings>().stuck_after;
    state.background.spawn_with_timeout("audit_export", taking + limit + Duration::from_secs(60), async move {
        run_pending(&s, Instant::now() + taking).await.map(|_| ()).map_err(|e| e.to_string())
    });
}

/// Deletes export files older than 7 days (every backend; S3's lifecycle rule may be first).
pub async fn delete_expired_files(store: &dyn BlobStore, now: SystemTime, limit: u64) -> Result<(u64, bool), BlobError> {
    let cutoff = now - Duration::from_secs(EXPORT_KEEP_DAYS as u64 * 86_400);
    let (mut deleted, mut after) = (0u64, None::<String>);
    loop {
        // Paged by the store's cursor, never by a page's length: a page with foreign keys
        // skipped comes back short and is not the end.
        let page = store.list(Namespace::Exports, after.as_deref(), 500).await?;
        for o in page.objects.iter().filter(|o| o.modified < cutoff) {
            if deleted >= limit {
                return Ok((deleted, true));
            }
            store.delete(&o.key).await?;
            deleted += 1;
        }
        after = page.next;
        if after.is_none() {
            return Ok((deleted, false));
        }
    }
}

/// Settings of export requests.
#[derive(Debug, Clone, Copy)]
pub struct ExportSettings {
    /// A request `running` longer than this was cut off and becomes failed.
    pub stuck_after: Duration,
}

impl kernel::state::Part for ExportSettings {
    type Slot = kernel::state::slot::AuditExports;
}

/// The exports job: runs waiting requests (a request also starts them at once), fails stuck ones
/// and deletes files past 7 days.
pub fn job() -> kernel::jobs::Job {
    use kernel::jobs::{Budget, Job, Step};
    let budget = Budget { rows_per_step: 1_000, time: Duration::from_secs(120) };
    Job::new(
        JOB,
        "Audit exports",
        "Writes requested CSV exports of the audit log to storage, and deletes export files after 7 days.",
        "audit_exports_at",
        Duration::from_secs(60),
    )
    .budget(budget)
    .traffic_budget(budget)
    .step(
        Step::new("run", |ctx: StepCtx| async move {
            // Requests left waiting (a restart): started in a task of their own, which is not
            // bound by this run's budget.
            let waiting =
                sqlx::query_scalar!(r#"select count(*) as "n!" from audit_export_requests where status = 'pending'"#).fetch_one(&ctx.state.pool).await?;
            if waiting > 0 {
                start(&ctx.state);
            }
            Ok(StepReport::rows("started", waiting as u64))
        })
        .labelled("waiting exports started"),
    )
    .step(
        Step::new("stuck", |ctx: StepCtx| async move {
            let after = ctx.state.domain::<ExportSettings>().stuck_after;
            Ok(StepReport::rows("stuck_failed", fail_stuck(&ctx.state.pool, after).await?))
        })
        .labelled("exports cut off by a stop"),
    )
    .step(
        Step::new("expired_files", |ctx: StepCtx| async move {
            let (deleted, more) = delete_expired_files(&*ctx.state.blobs, SystemTime::from(ctx.now), ctx.rows).await.map_err(StepError::from)?;
            Ok(StepReport { counts: vec![("deleted", deleted)], rows: deleted, more })
        })
        .labelled("export files older than 7 days"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::{date, datetime};

    #[test]
    fn ranges_are_whole_days_up_to_today() {
        let today = date!(2026 - 11 - 30);
        assert_eq!(parse_range("2026-01-01", "2026-11-30", today).unwrap(), (date!(2026 - 01 - 01), today));
        assert!(parse_range("2026-12-01", "2026-12-02", today).unwrap_err().contains_key("from"));
        assert!(parse_range("2026-02-01", "2026-01-01", today).unwrap_err().contains_key("to"));
        assert!(parse_range("-9999-01-01", "2026-01-01", today).unwrap_err().contains_key("from"));
        assert!(parse_range("1900-01-01", "2026-01-01", today).unwrap_err().contains_key("from"));
        let e = parse_range("yesterday", "", today).unwrap_err();
        assert!(e.contains_key("from") && e.contains_key("to"));
        // Older than the log keeps: said, not clipped.
        assert_eq!(oldest_exportable(today), date!(2024 - 11 - 30));
        assert!(parse_range("2024-11-30", "2024-12-31", today).is_ok());
        let e = parse_range("2024-11-29", "2024-12-31", today).unwrap_err();
        assert!(e["from"].contains("2024-11-30"), "{e:?}");
    }

    #[test]
    fn a_link_is_given_only_while_the_file_outlives_it() {
        let started = Some(datetime!(2026-11-01 12:00 UTC));
        assert!(linkable(started, datetime!(2026-11-08 11:44 UTC)));
        assert!(!linkable(started, datetime!(2026-11-08 11:45 UTC)));
        assert!(!linkable(started, datetime!(2026-11-09 0:00 UTC)));
        assert!(!linkable(None, datetime!(2026-11-01 12:00 UTC)));
    }
}
