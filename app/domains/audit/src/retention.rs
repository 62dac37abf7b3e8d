//! The audit trail's kinds of data, as the retention report reads them (see
//! `kernel::retention`): events in the database, archived months, export files and requests.

use std::time::Duration;

use common::retention::Promise;
use futures::future::BoxFuture;
use kernel::retention::{table_size, Figures, Kind, ReadCtx, ReadError, Reading};
use kernel::storage::{BlobStore as _, Namespace};
use time::OffsetDateTime;

use crate::upkeep::{add_months, month_start, months_before};
use crate::{archive, exports, upkeep, DETACH_AFTER_MONTHS, EXPORT_KEEP_DAYS, PROMISE_MONTHS};

/// Export files listed at most (a store with more is reported as "at least").
const EXPORT_LIST_MAX: usize = 50_000;
const UPKEEP_EVERY: Duration = Duration::from_secs(7 * 86_400);
const ARCHIVE_EVERY: Duration = Duration::from_secs(86_400);

pub fn kinds() -> Vec<Kind> {
    vec![
        Kind { kind: "audit_events", job: archive::JOB, step: "drop", read: events },
        Kind { kind: "archived_months", job: archive::JOB, step: "objects", read: archived_months },
        Kind { kind: "export_files", job: exports::JOB, step: "expired_files", read: export_files },
        Kind { kind: "export_requests", job: archive::JOB, step: "requests", read: export_requests },
    ]
}

/// Audit events in the database: months whose end is 25 months back are detached (weekly
/// upkeep), then archived and dropped (daily archive). Past promise: rows of such months still
/// attached, and rows waiting detached. Overdue: one upkeep interval (plus one archive interval
/// for detached ones) later. Past and overdue by a range of `occurred_at`: partition pruning
/// reads only the months past the promise (normally none); the total from the catalogue.
fn events<'a>(ctx: &'a ReadCtx<'a>) -> BoxFuture<'a, Result<Reading, ReadError>> {
    Box::pin(async move {
        let pool = &ctx.state.pool;
        let (now, upkeep_every) = (ctx.now, ctx.every(upkeep::JOB, UPKEEP_EVERY));
        let threshold = month_start(months_before(now, DETACH_AFTER_MONTHS));
        let late = month_start(months_before(now - upkeep_every, DETACH_AFTER_MONTHS));
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
        let (count, estimated) = table_size(pool, "audit_events").await?;
        figures.count = count;
        let mut conn = pool.acquire().await?;
        let waiting_late = months_before(now - upkeep_every - ctx.every(archive::JOB, ARCHIVE_EVERY), DETACH_AFTER_MONTHS);
        for table in &archive::pending(&mut conn).await? {
            // The name comes from the catalog; quoted as an identifier all the same.
            let sql = format!("select count(*) from audit_pending.\"{}\"", table.name.replace('"', "\"\""));
            let n: i64 = sqlx::query_scalar(&sql).fetch_one(&mut *conn).await?;
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
        let promise = Promise::AuditEvents { promise_months: i64::from(PROMISE_MONTHS), detach_months: i64::from(DETACH_AFTER_MONTHS) };
        Ok(Reading { promise, figures, estimated })
    })
}

/// Archived months: kept in archive storage (no expiry), each object checked daily.
fn archived_months<'a>(ctx: &'a ReadCtx<'a>) -> BoxFuture<'a, Result<Reading, ReadError>> {
    Box::pin(async move {
        let figures = sqlx::query_as!(
            Figures,
            r#"select count(*) as "count!", min(period)::timestamp at time zone 'UTC' as oldest_at,
                      0::bigint as "past!", 0::bigint as "overdue!", 0::bigint as "held!"
               from audit_partition_archives where status = 'verified'"#
        )
        .fetch_one(&ctx.state.pool)
        .await?;
        Ok(Reading { promise: Promise::ArchivedMonths, figures, estimated: false })
    })
}

/// Export files, from the store's own listing.
fn export_files<'a>(ctx: &'a ReadCtx<'a>) -> BoxFuture<'a, Result<Reading, ReadError>> {
    Box::pin(async move {
        let keep = time::Duration::days(EXPORT_KEEP_DAYS);
        let every = ctx.every(exports::JOB, Duration::from_secs(60));
        let mut figures = Figures::default();
        let mut after: Option<String> = None;
        loop {
            let page = ctx.state.blobs.list(Namespace::Exports, after.as_deref(), 1000).await?;
            for o in &page.objects {
                let modified = OffsetDateTime::from(o.modified);
                figures.count += 1;
                figures.oldest_at = Some(figures.oldest_at.map_or(modified, |m| m.min(modified)));
                figures.past += i64::from(modified < ctx.now - keep);
                figures.overdue += i64::from(modified < ctx.now - keep - every);
            }
            after = page.next;
            if after.is_none() || figures.count as usize >= EXPORT_LIST_MAX {
                break;
            }
        }
        Ok(Reading { promise: Promise::ExportFiles { days: EXPORT_KEEP_DAYS }, figures, estimated: after.is_some() })
    })
}

/// Export requests (the ledger of who asked for what).
fn export_requests<'a>(ctx: &'a ReadCtx<'a>) -> BoxFuture<'a, Result<Reading, ReadError>> {
    Box::pin(async move {
        let keep = time::Duration::days(archive::REQUEST_KEEP_DAYS);
        let figures = sqlx::query_as!(
            Figures,
            r#"select count(*) as "count!", min(requested_at) as oldest_at,
                      count(*) filter (where requested_at < $1) as "past!",
                      count(*) filter (where requested_at < $2) as "overdue!",
                      0::bigint as "held!"
               from audit_export_requests"#,
            ctx.now - keep,
            ctx.now - keep - ctx.every(archive::JOB, ARCHIVE_EVERY),
        )
        .fetch_one(&ctx.state.pool)
        .await?;
        Ok(Reading { promise: Promise::ExportRequests { days: archive::REQUEST_KEEP_DAYS }, figures, estimated: false })
    })
}
