//! Weekly upkeep of the partitioned audit log (a job on the lifecycle engine; no cron).
//!
//! - Creates the monthly partitions from the current month to `ahead` months ahead — but only by
//!   extending the horizon: a month missing *below* the last partition is a hole someone made, and
//!   it is reported (critical alert), never silently recreated.
//! - Counts the partitions wholly in the future by their bounds; fewer than `ahead` → critical
//!   alert, and the run stops before detaching anything.
//! - Counts the default partition's rows exactly (`count(*)`) and logs the figure every run; rows
//!   there raise an alert (they belong to a month without a partition).
//! - Detaches every partition whose whole range ended at least 25 months ago into schema
//!   `audit_pending`, where the archive picks it up. Detaching never deletes.
//!
//! Every decision reads partition bounds from `pg_catalog` (`pg_get_expr(relpartbound, oid)`).
//! Names are used only to refuse: a partition whose name is not `audit_events_YYYY_MM`, or whose
//! bounds are not one whole month, is left alone and reported.

use sqlx::{Connection as _, PgConnection, PgPool};
use time::{Date, Month, OffsetDateTime, PrimitiveDateTime, Time, UtcOffset};

use super::{AuditKind, UpkeepState, DETACH_AFTER_MONTHS};
use kernel::alerts::{self, AlertKind, AlertMessage};
use kernel::audit::{record, Actor};

/// The CHECK constraint that keeps a detached month's range (its partition bound is gone once
/// detached): `occurred_at >= FROM and occurred_at < TO`.
pub const BOUNDS_CONSTRAINT: &str = "audit_month_bounds";

/// An attached partition of `audit_events`, as `pg_catalog` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    pub name: String,
    /// `None` for the default partition.
    pub bounds: Option<Bounds>,
}

/// A partition's range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bounds {
    /// `FROM (…) TO (…)` with both ends timestamps.
    Range(OffsetDateTime, OffsetDateTime),
    /// Something else (MINVALUE/MAXVALUE, an unreadable expression).
    Other,
}

/// The first instant of the month holding `t` (UTC).
pub fn month_start(t: OffsetDateTime) -> OffsetDateTime {
    let t = t.to_offset(UtcOffset::UTC);
    PrimitiveDateTime::new(Date::from_calendar_date(t.year(), t.month(), 1).expect("day 1 exists"), Time::MIDNIGHT).assume_utc()
}

/// `m` (a month start) moved by `n` months.
pub fn add_months(m: OffsetDateTime, n: i32) -> OffsetDateTime {
    let index = m.year() * 12 + (m.month() as i32 - 1) + n;
    let (year, month) = (index.div_euclid(12), Month::try_from((index.rem_euclid(12) + 1) as u8).expect("1..=12"));
    PrimitiveDateTime::new(Date::from_calendar_date(year, month, 1).expect("day 1 exists"), Time::MIDNIGHT).assume_utc()
}

/// `audit_events_YYYY_MM` for the month starting at `m`.
pub fn partition_name(m: OffsetDateTime) -> String {
    format!("audit_events_{:04}_{:02}", m.year(), m.month() as u8)
}

fn expected_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("audit_events_") else { return false };
    let b = rest.as_bytes();
    b.len() == 7 && b[4] == b'_' && b[..4].iter().chain(&b[5..]).all(u8::is_ascii_digit)
}

/// Parses `FOR VALUES FROM ('2026-11-01 00:00:00+00') TO ('2026-12-01 00:00:00+00')` (as printed
/// with the session time zone UTC); `DEFAULT` gives `None`.
pub fn parse_bounds(expr: &str) -> Option<Bounds> {
    if expr.trim() == "DEFAULT" {
        return None;
    }
    let parse_ts = |s: &str| -> Option<OffsetDateTime> {
        let s = s.trim().strip_prefix("('")?.strip_suffix("')")?;
        let (date_time, offset) = s.rsplit_once(['+', '-']).filter(|(_, o)| o.len() == 2 && o.bytes().all(|b| b.is_ascii_digit()))?;
        if offset != "00" {
            return None;
        }
        let fmt = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second]");
        Some(PrimitiveDateTime::parse(date_time, &fmt).ok()?.assume_utc())
    };
    let range = expr.trim().strip_prefix("FOR VALUES FROM ").and_then(|r| r.split_once(" TO ")).and_then(|(f, t)| Some((parse_ts(f)?, parse_ts(t)?)));
    Some(range.map_or(Bounds::Other, |(f, t)| Bounds::Range(f, t)))
}

/// Partitions wholly after the month starting at `current`, counted by their bounds.
pub fn months_ahead(parts: &[Partition], current: OffsetDateTime) -> i64 {
    let next = add_months(current, 1);
    parts.iter().filter(|p| matches!(p.bounds, Some(Bounds::Range(f, _)) if f >= next)).count() as i64
}

/// A transaction (a savepoint inside the caller's) whose time zone is UTC until it ends: partition
/// bounds and bounds constraints are printed in the session's time zone, and `set local` outside
/// a transaction changes nothing. Commit it after the read; the caller's time zone is untouched.
pub(crate) async fn utc_read(conn: &mut PgConnection) -> Result<sqlx::Transaction<'_, sqlx::Postgres>, sqlx::Error> {
    let mut tx = sqlx::Connection::begin(conn).await?;
    sqlx::query!("set local timezone = 'UTC'").execute(&mut *tx).await?;
    Ok(tx)
}

/// The attached partitions of `audit_events` with their bounds (UTC).
pub async fn partitions(conn: &mut PgConnection) -> Result<Vec<Partition>, sqlx::Error> {
    let mut tx = utc_read(conn).await?;
    let rows = sqlx::query!(
        r#"select c.relname::text as "name!", pg_get_expr(c.relpartbound, c.oid) as "bound!"
           from pg_inherits i join pg_class c on c.oid = i.inhrelid
           where i.inhparent = 'public.audit_events'::regclass
           order by 1"#
    )
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(rows.into_iter().map(|r| Partition { bounds: parse_bounds(&r.bound), name: r.name }).collect())
}

/// What a run did (also its step counts).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpkeepReport {
    pub created: Vec<String>,
    pub detached: Vec<String>,
    /// Partitions left alone: an unexpected name or bounds that are not one whole month.
    pub untouched: Vec<String>,
    /// Months missing below the horizon (holes), as `YYYY-MM`.
    pub holes: Vec<String>,
    pub partitions_ahead: i64,
    pub default_rows: i64,
    /// The run stopped before detaching (too few partitions ahead).
    pub stopped: bool,
}

/// Upkeep as of `now` (injected: tests run it "in" chosen months). Its alerts are raised
/// whatever happens: when a step fails (creating a month whose rows already sit in the default
/// partition, a lock that never came), the partitions ahead and the default partition are still
/// counted and alerted on, and the error is returned for the job's own alert.
pub async fn run(pool: &PgPool, now: OffsetDateTime, ahead: u32) -> Result<UpkeepReport, sqlx::Error> {
    // A dedicated connection: its session-level advisory lock (one upkeep at a time, whatever
    // the claims say: two instances, a CLI run) ends with it, however this returns.
    let mut conn = sqlx::PgConnection::connect_with(&pool.connect_options()).await?;
    sqlx::query!("select pg_advisory_lock(hashtext('ebb.audit_upkeep'))").execute(&mut conn).await?;
    let result = work(&mut conn, now, ahead).await;
    let _ = sqlx::Connection::close(conn).await;
    match result {
        Ok(report) => {
            raise_alerts(pool, &report, ahead).await?;
            Ok(report)
        }
        Err(e) => {
            // What can still be read is alerted on now, not at the next weekly run.
            let mut report = UpkeepReport::default();
            let mut conn = pool.acquire().await?;
            report.partitions_ahead = months_ahead(&partitions(&mut conn).await?, month_start(now));
            report.stopped = report.partitions_ahead < ahead as i64;
            report.default_rows = sqlx::query_scalar!(r#"select count(*) as "n!" from audit_events_default"#).fetch_one(&mut *conn).await?;
            drop(conn);
            raise_alerts(pool, &report, ahead).await?;
            Err(e)
        }
    }
}

/// The upkeep's work on `conn`, in short transactions: partitions ahead created in one; each
/// month to detach gets its period CHECK added `not valid` and validated (a full scan) while
/// only that partition is locked, and then is detached in a short transaction of its own, so
/// audited actions never wait for a scan.
async fn work(conn: &mut PgConnection, now: OffsetDateTime, ahead: u32) -> Result<UpkeepReport, sqlx::Error> {
    let mut report = UpkeepReport::default();
    let current = month_start(now);
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    sqlx::query!("set local lock_timeout = '5s'").execute(&mut *tx).await?;
    let parts = partitions(&mut tx).await?;

    let month_ranges: Vec<(OffsetDateTime, OffsetDateTime, &Partition)> = parts
        .iter()
        .filter_map(|p| match p.bounds {
            Some(Bounds::Range(f, t)) => Some((f, t, p)),
            _ => None,
        })
        .collect();
    for p in &parts {
        let whole_month = matches!(p.bounds, Some(Bounds::Range(f, t)) if month_start(f) == f && add_months(f, 1) == t);
        if p.bounds.is_some() && (!expected_name(&p.name) || !whole_month) {
            report.untouched.push(p.name.clone());
        }
    }
    let horizon = month_ranges.iter().map(|(_, t, _)| *t).max();

    // 1. Partitions ahead: extend the horizon; report holes below it.
    for i in 0..=ahead as i32 {
        let m = add_months(current, i);
        let covered = month_ranges.iter().any(|(f, t, _)| *f <= m && add_months(m, 1) <= *t);
        if covered {
            continue;
        }
        if horizon.is_some_and(|h| m < h) {
            report.holes.push(format!("{:04}-{:02}", m.year(), m.month() as u8));
            continue;
        }
        let name = partition_name(m);
        sqlx::query(&format!(
            // Half-full pages: sealing's update of each event stays on its page (no index write).
            "create table {name} partition of audit_events for values from ('{}') to ('{}') with (fillfactor = 50)",
            m.format(&time::format_description::well_known::Rfc3339).expect("formats"),
            add_months(m, 1).format(&time::format_description::well_known::Rfc3339).expect("formats"),
        ))
        .execute(&mut *tx)
        .await?;
        tracing::info!(partition = %name, "audit upkeep: created a monthly partition");
        report.created.push(name);
    }
    // Recorded once every month is there: an event is written at the database's clock, and its
    // month must exist by then (else it lands in the default partition, and creating that month
    // afterwards would fail on it).
    for name in &report.created {
        record(&mut tx, &Actor::system(), AuditKind::PartitionCreate, Some(("month", &name["audit_events_".len()..].replace('_', "-"))), None).await?;
    }

    // 2. Count what is ahead by bounds (after creating): whole months after the current one.
    report.partitions_ahead = months_ahead(&partitions(&mut tx).await?, current);

    // 3. The default partition, counted exactly.
    report.default_rows = sqlx::query_scalar!(r#"select count(*) as "n!" from audit_events_default"#).fetch_one(&mut *tx).await?;
    tracing::info!(default_rows = report.default_rows, partitions_ahead = report.partitions_ahead, "audit upkeep: default partition rows counted");

    report.stopped = report.partitions_ahead < ahead as i64 || !report.holes.is_empty();
    tx.commit().await?;
    if !report.stopped {
        // 4. Detach whole months that ended 25 months ago or earlier.
        let limit = months_before(now, DETACH_AFTER_MONTHS);
        for (from, to, p) in &month_ranges {
            if *to > limit || report.untouched.contains(&p.name) {
                continue;
            }
            detach_month(conn, &p.name, *from, *to).await?;
            report.detached.push(p.name.clone());
        }
    }
    Ok(report)
}

/// Detaches month partition `name` into `audit_pending`. A detached table loses its partition
/// bound; the same range as a CHECK constraint (validated: it holds for every row) keeps its
/// period provable for the archive. Three short steps, each safe to repeat after a crash:
/// 1. the CHECK added `not valid` (a catalog change, no scan);
/// 2. validated: a full scan under `SHARE UPDATE EXCLUSIVE` on this partition only, so events
///    go on being written (and read) meanwhile;
/// 3. detached and moved in one short transaction (nothing is scanned: the month is already
///    proven), with its event.
async fn detach_month(conn: &mut PgConnection, name: &str, from: OffsetDateTime, to: OffsetDateTime) -> Result<(), sqlx::Error> {
    let rfc = |t: OffsetDateTime| t.format(&time::format_description::well_known::Rfc3339).expect("formats");
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    sqlx::query!("set local lock_timeout = '5s'").execute(&mut *tx).await?;
    let has_check: bool = sqlx::query_scalar!(
        r#"select exists (select 1 from pg_constraint where conrelid = to_regclass('public.' || quote_ident($1)) and conname = $2) as "has!""#,
        name,
        BOUNDS_CONSTRAINT
    )
    .fetch_one(&mut *tx)
    .await?;
    if !has_check {
        sqlx::query(&format!(
            "alter table {name} add constraint {BOUNDS_CONSTRAINT} check (occurred_at >= '{}' and occurred_at < '{}') not valid",
            rfc(from),
            rfc(to)
        ))
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    fail::fail_point!("upkeep-before-validate", |_| Err(sqlx::Error::Protocol("failpoint upkeep-before-validate".into())));
    sqlx::query(&format!("alter table {name} validate constraint {BOUNDS_CONSTRAINT}")).execute(&mut *conn).await?;
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    sqlx::query!("set local lock_timeout = '5s'").execute(&mut *tx).await?;
    sqlx::query(&format!("alter table audit_events detach partition {name}")).execute(&mut *tx).await?;
    sqlx::query(&format!("alter table {name} set schema audit_pending")).execute(&mut *tx).await?;
    record(&mut tx, &Actor::system(), AuditKind::PartitionDetach, Some(("month", &name["audit_events_".len()..].replace('_', "-"))), None).await?;
    tx.commit().await?;
    tracing::info!(partition = %name, "audit upkeep: detached a month for the archive (nothing deleted)");
    Ok(())
}

/// The upkeep's alerts, raised or resolved by what `report` found.
async fn raise_alerts(pool: &PgPool, report: &UpkeepReport, ahead: u32) -> Result<(), sqlx::Error> {
    let problems = [
        (
            AlertKind::AuditPartitionsMissing,
            report.stopped,
            AlertMessage::PartitionsMissing { n: report.partitions_ahead, wanted: i64::from(ahead), months: report.holes.clone() },
        ),
        (AlertKind::AuditDefaultRows, report.default_rows > 0, AlertMessage::DefaultRows { n: report.default_rows }),
        (AlertKind::AuditUnexpectedPartition, !report.untouched.is_empty(), AlertMessage::UnexpectedPartition { names: report.untouched.clone() }),
    ];
    for (kind, open, message) in problems {
        if open {
            alerts::raise(pool, kind, "", &message).await?;
        } else {
            alerts::resolve(pool, kind, "").await?;
        }
    }
    Ok(())
}

/// `now` minus `n` calendar months (the same day and time; clamped to the month's last day).
pub fn months_before(now: OffsetDateTime, n: u32) -> OffsetDateTime {
    let now = now.to_offset(UtcOffset::UTC);
    let start = add_months(month_start(now), -(n as i32));
    let last_day = time::util::days_in_month(start.month(), start.year());
    let day = now.day().min(last_day);
    PrimitiveDateTime::new(Date::from_calendar_date(start.year(), start.month(), day).expect("clamped"), now.time()).assume_utc()
}

/// The dashboard's figures.
pub async fn state(pool: &PgPool, wanted: u32) -> Result<UpkeepState, sqlx::Error> {
    let mut tx = pool.begin().await?;
    let now: OffsetDateTime = sqlx::query_scalar!(r#"select now() as "now!""#).fetch_one(&mut *tx).await?;
    let partitions_ahead = months_ahead(&partitions(&mut tx).await?, month_start(now));
    let months_pending = sqlx::query_scalar!(r#"select count(*) as "n!" from pg_tables where schemaname = 'audit_pending'"#).fetch_one(&mut *tx).await?;
    let default_rows = sqlx::query_scalar!(r#"select count(*) as "n!" from audit_events_default"#).fetch_one(&mut *tx).await?;
    let ledger = sqlx::query!(
        r#"select count(*) filter (where status = 'verified') as "archived!", count(*) filter (where status = 'failed') as "failed!"
           from audit_partition_archives"#
    )
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(UpkeepState {
        partitions_ahead,
        partitions_wanted: wanted as i64,
        months_pending,
        default_rows,
        months_archived: ledger.archived,
        months_failed: ledger.failed,
    })
}

#[cfg(test)]
mod tests {
    use time::macros::datetime;

    use super::*;

    #[test]
    fn bounds_are_read_from_the_catalog_expression() {
        assert_eq!(
            parse_bounds("FOR VALUES FROM ('2026-11-01 00:00:00+00') TO ('2026-12-01 00:00:00+00')"),
            Some(Bounds::Range(datetime!(2026-11-01 0:00 UTC), datetime!(2026-12-01 0:00 UTC)))
        );
        assert_eq!(parse_bounds("DEFAULT"), None);
        assert_eq!(parse_bounds("FOR VALUES FROM (MINVALUE) TO ('2026-12-01 00:00:00+00')"), Some(Bounds::Other));
        assert_eq!(parse_bounds("FOR VALUES IN ('x')"), Some(Bounds::Other));
        assert_eq!(parse_bounds("FOR VALUES FROM ('2026-11-01 00:00:00+09') TO ('2026-12-01 00:00:00+09')"), Some(Bounds::Other));
    }

    #[test]
    fn months_move_across_year_ends_and_leap_februaries() {
        assert_eq!(add_months(datetime!(2026-11-01 0:00 UTC), 3), datetime!(2027-02-01 0:00 UTC));
        assert_eq!(add_months(datetime!(2026-01-01 0:00 UTC), -25), datetime!(2023-12-01 0:00 UTC));
        assert_eq!(month_start(datetime!(2028-02-29 23:59:59 UTC)), datetime!(2028-02-01 0:00 UTC));
        assert_eq!(months_before(datetime!(2028-03-31 12:00 UTC), 1), datetime!(2028-02-29 12:00 UTC));
        assert_eq!(months_before(datetime!(2026-11-30 10:00 UTC), 25), datetime!(2024-10-30 10:00 UTC));
        assert_eq!(partition_name(datetime!(2027-02-01 0:00 UTC)), "audit_events_2027_02");
        assert!(expected_name("audit_events_2027_02") && !expected_name("audit_events_2027_2") && !expected_name("audit_events_old"));
    }
}

/// The job's name (CLI, dashboard, metrics).
pub const JOB: &str = "audit_upkeep";

/// Settings of the upkeep (a domain part of the state).
#[derive(Debug, Clone, Copy)]
pub struct UpkeepSettings {
    /// Monthly partitions wanted after the current month.
    pub partitions_ahead: u32,
}

impl kernel::state::Part for UpkeepSettings {
    type Slot = kernel::state::slot::AuditUpkeep;
}

/// The weekly upkeep job.
pub fn job() -> kernel::jobs::Job {
    use kernel::jobs::{Budget, Job, Step, StepReport};
    Job::new(
        JOB,
        "Audit log upkeep",
        "Creates the audit log's monthly partitions ahead, checks them and the default partition, and detaches months older than 25 months for the archive (it never deletes).",
        "audit_upkeep_at",
        std::time::Duration::from_secs(7 * 86_400),
    )
    .budget(Budget { rows_per_step: 1_000, time: std::time::Duration::from_secs(60) })
    .traffic_budget(Budget { rows_per_step: 1_000, time: std::time::Duration::from_secs(60) })
    // The first failed run alerts (a person hears of it now, not one or two weeks later).
    .alert_on_failure(AlertKind::AuditUpkeepFailed)
    .step(
        Step::new("partitions", |ctx: kernel::jobs::StepCtx| async move {
            let ahead = ctx.state.domain::<UpkeepSettings>().partitions_ahead;
            let r = run(&ctx.state.pool, ctx.now, ahead).await?;
            let report = StepReport::rows("created", r.created.len() as u64)
                .with("detached", r.detached.len() as u64)
                .with("partitions_ahead", r.partitions_ahead as u64)
                .with("default_rows", r.default_rows as u64)
                .with("left_alone", r.untouched.len() as u64);
            if r.stopped {
                return Err(kernel::jobs::StepError::new(format!(
                    "only {} partitions ahead (wanted {ahead}){}: stopped before detaching",
                    r.partitions_ahead,
                    if r.holes.is_empty() { String::new() } else { format!("; months without a partition: {}", r.holes.join(", ")) }
                )));
            }
            Ok(report)
        })
        .labelled("monthly partitions ahead and past 25 months"),
    )
}
