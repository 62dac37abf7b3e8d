//! The verified archive (seed 004, part 2): months that upkeep detached into `audit_pending` are
//! written to object storage as `audit-archive/YYYY-MM.csv.gz`, checked twice, recorded in the
//! ledger (`audit_partition_archives`) and only then dropped. "Once deleted, nothing brings it
//! back": [`drop_verified`] is the only code that drops a pending table, and it does so only in
//! the transaction that finds the month's verified ledger row, recounts the table and reads the
//! object back from the store.
//!
//! The daily job's steps, each tried on its own (a failing one is recorded, the next still runs;
//! a failed run raises one alert listing every failure):
//!
//! 1. `requests`: export requests stuck in `running` become `failed`; request rows older than 90
//!    days are deleted.
//! 2. `partitions`: future partitions counted by their bounds (too few → the run stops, critical
//!    alert); the default partition's rows counted exactly and logged.
//! 3. `objects`: every ledgered object still exists with its size and CRC32C (a missing or
//!    changed one stops the run; a month not yet dropped is marked failed so it is written again;
//!    a dropped month's object needs a person, and the alert says so). An object the store keeps
//!    no CRC32C for is read back and its bytes checked.
//! 4. `verify`: months an earlier run left `written` (cut off, or killed after the upload):
//!    rows written = `count(*)`, and size and CRC32C read back from the store = what was written
//!    → `verified`; otherwise `failed` (the table stays; a later run writes it again).
//! 5. `drop`: tables whose month is verified, with a short lock timeout.
//! 6. `write`: every table in `audit_pending` (being there is the signal) that is not written
//!    yet is streamed as gzip'd CSV to its month's key, counting rows as they are written; each
//!    month is then verified and dropped at once. At least one month per run, then until the
//!    budget: a backlog of any size drains, and a run cut off with months left raises
//!    `archive.behind` (resolved by a run that finishes).
//!
//! Steps 4–6 start even when the budget is spent: what is half done is finished first.

use std::sync::{
    atomic::{AtomicU64, Ordering},
    Arc,
};
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use sqlx::{PgConnection, PgPool};
use time::{Date, OffsetDateTime};

use super::upkeep::{add_months, month_start, BOUNDS_CONSTRAINT};
use super::{AuditKind, MonthStatus};
use crate::chain::ChainRow;
use kernel::audit::{record, Actor};
use kernel::csv_export::Pages;
use kernel::jobs::{StepCtx, StepError, StepReport};
use kernel::storage::{archive_key, BlobError, BlobStore, MarkedStore};
use sha2::Digest as _;

/// The job's name (CLI, dashboard, metrics).
pub const JOB: &str = "audit_archive";
/// Rows per page read from a pending table.
pub const PAGE_ROWS: i64 = 10_000;
/// How long the drop waits for its table's lock before leaving it for the next run.
pub const DROP_LOCK_TIMEOUT: &str = "2s";
/// Export request rows are kept this long.
pub const REQUEST_KEEP_DAYS: i64 = 90;
/// Archived months are written with no size limit of their own; this bounds a runaway stream.
const MAX_ARCHIVE_BYTES: u64 = 1 << 40;

/// The fewest partitions ahead the archive accepts, of the `wanted` that upkeep keeps: one fewer
/// (between a month's start and the next weekly upkeep, one less is normal), at least one.
pub fn min_partitions_ahead(wanted: u32) -> i64 {
    wanted.saturating_sub(1).max(1) as i64
}

/// A table waiting in `audit_pending`, with its period read from its bounds constraint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingTable {
    pub name: String,
    /// The first day of the table's month, or why it cannot be told.
    pub period: Result<Date, String>,
}

/// The period of a CHECK constraint as upkeep writes it (printed with the session time zone UTC):
/// `CHECK (((occurred_at >= '2024-09-01 00:00:00+00'::timestamp with time zone) AND (occurred_at
/// < '2024-10-01 00:00:00+00'::timestamp with time zone)))`. Only whole months are periods.
pub fn parse_check_period(def: &str) -> Result<Date, String> {
    let parts: Vec<&str> = def.split('\'').collect();
    let shape = parts.len() == 5 && parts[0].trim_end().ends_with("occurred_at >=") && parts[2].contains("AND (occurred_at <");
    if !shape {
        return Err("its bounds constraint is not a range of occurred_at".into());
    }
    let ts = |s: &str| super::upkeep::parse_bounds(&format!("FOR VALUES FROM ('{s}') TO ('{s}')"));
    match (ts(parts[1]), ts(parts[3])) {
        (Some(super::upkeep::Bounds::Range(from, _)), Some(super::upkeep::Bounds::Range(to, _))) if month_start(from) == from && add_months(from, 1) == to => {
            Ok(from.date())
        }
        _ => Err("its bounds are not one whole month in UTC".into()),
    }
}

pub use crate::chain::{month_label as period_label, parse_period};

/// The object key of a period.
pub fn key_of(p: Date) -> String {
    archive_key(p.year(), p.month() as u8)
}

/// Every table in `audit_pending`, with its period. Names are not parsed to decide anything: a
/// table whose name is not `audit_events_YYYY_MM` of its own period is refused (left alone).
pub async fn pending(conn: &mut PgConnection) -> Result<Vec<PendingTable>, sqlx::Error> {
    let mut tx = super::upkeep::utc_read(conn).await?;
    let rows = sqlx::query!(
        r#"select c.relname::text as "name!",
                  (select pg_get_constraintdef(k.oid) from pg_constraint k
                    where k.conrelid = c.oid and k.conname = $1 and k.contype = 'c' and k.convalidated) as def
           from pg_class c join pg_namespace n on n.oid = c.relnamespace
           where n.nspname = 'audit_pending' and c.relkind in ('r', 'p')
           order by 1"#,
        BOUNDS_CONSTRAINT
    )
    .fetch_all(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let period = match r.def {
                None => Err(format!("it has no validated {BOUNDS_CONSTRAINT} constraint, so its period is unknown")),
                Some(def) => parse_check_period(&def),
            }
            .and_then(|p| {
                // Names only refuse: the name upkeep gives the table of this period, or nothing.
                if r.name == super::upkeep::partition_name(p.midnight().assume_utc()) {
                    Ok(p)
                } else {
                    Err(format!("its name does not match its bounds ({}); unexpected tables are left alone", period_label(p)))
                }
            });
            PendingTable { name: r.name, period }
        })
        .collect())
}

fn pending_table(name: &str) -> String {
    format!("audit_pending.\"{}\"", name.replace('"', "\"\""))
}

/// A ledger row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerRow {
    pub period: Date,
    pub object_key: String,
    pub table_name: String,
    pub status: MonthStatus,
    pub rows_written: Option<i64>,
    pub table_rows: Option<i64>,
    pub bytes: Option<i64>,
    pub crc32c: Option<i64>,
    pub attempts: i32,
    pub archived_at: OffsetDateTime,
    pub verified_at: Option<OffsetDateTime>,
    pub failure: Option<String>,
    pub dropped_at: Option<OffsetDateTime>,
    /// When the object's bytes were last read back and matched.
    pub content_checked_at: Option<OffsetDateTime>,
}

/// The whole ledger, oldest month first.
pub async fn ledger(pool: &PgPool) -> Result<Vec<LedgerRow>, sqlx::Error> {
    sqlx::query_as!(
        LedgerRow,
        r#"select period, object_key, table_name, status as "status: MonthStatus", rows_written, table_rows, bytes, crc32c, attempts, archived_at, verified_at, failure, dropped_at,
                content_checked_at
         from audit_partition_archives order by period"#
    )
    .fetch_all(pool)
    .await
}

/// Records a failed attempt at `period` (the table stays; the next run writes it again).
async fn record_failure(pool: &PgPool, period: Date, table: &str, why: &str) -> Result<(), sqlx::Error> {
    let mut tx = pool.begin().await?;
    sqlx::query!(
        "insert into audit_partition_archives (period, object_key, table_name, status, failure)
         values ($1, $2, $3, 'failed', $4)
         on conflict (period) do update set status = 'failed', failure = $4, table_name = $3, verified_at = null,
             attempts = audit_partition_archives.attempts + 1, archived_at = now()
         where audit_partition_archives.dropped_at is null",
        period,
        key_of(period),
        table,
        why
    )
    .execute(&mut *tx)
    .await?;
    record(&mut tx, &Actor::system(), AuditKind::ArchiveFailure, Some(("month", &period_label(period))), Some(why)).await?;
    tx.commit().await
}

/// The archive's columns: the export's, then the event's place in its month's chain, the
/// month's first `prev_hash` (on the first row only) and the event's hash.
pub const ARCHIVE_HEADER: [&str; 12] =
    ["id", "occurred_at", "kind", "admin_id", "admin_name", "subject_type", "subject_id", "detail", "client_hash", "seq", "prev_hash", "hash"];

/// An event of a pending table, with its transaction id (the chain's order).
#[derive(sqlx::FromRow)]
pub struct ArchiveRow {
    #[sqlx(flatten)]
    pub row: ChainRow,
    pub tx: i64,
}

/// The rows of a pending table in chain order, as CSV pages; counts rows as they are written.
struct PendingRows {
    table: String,
    rows: Arc<AtomicU64>,
}

impl Pages for PendingRows {
    type Row = ArchiveRow;
    /// `(tx, id, occurred_at)`: the chain's order (a month's events are sealed in it), with the
    /// time as a last key: two events may share an id (a restored or moved one), and paging by
    /// `(tx, id)` alone would drop one of them at a page edge.
    type Cursor = (i64, i64, OffsetDateTime);
    const PAGE_ROWS: i64 = PAGE_ROWS;

    fn header(&self) -> &'static [&'static str] {
        &ARCHIVE_HEADER
    }

    async fn page(&self, conn: &mut sqlx::PgConnection, after: Option<(i64, i64, OffsetDateTime)>) -> Result<Vec<ArchiveRow>, sqlx::Error> {
        // Plain columns only, by name: the archive must not depend on any other table.
        let sql = format!(
            "select id, occurred_at, kind, admin_id, admin_name, subject_type, subject_id, detail, client_hash, seq, hash, tx
             from {} where (tx, id, occurred_at) > ($1, $2, $3) order by tx, id, occurred_at limit $4",
            pending_table(&self.table)
        );
        let (tx, id, at) = after.unwrap_or((i64::MIN, i64::MIN, OffsetDateTime::UNIX_EPOCH - time::Duration::days(365 * 1000)));
        sqlx::query_as::<_, ArchiveRow>(&sql).bind(tx).bind(id).bind(at).bind(PAGE_ROWS).fetch_all(conn).await
    }

    fn cursor(r: &ArchiveRow) -> (i64, i64, OffsetDateTime) {
        (r.tx, r.row.event.id, r.row.event.occurred_at)
    }

    fn write_row(_: &ArchiveRow, _: &mut kernel::csv_export::RowWriter<'_>) -> kernel::csv_export::Written {
        unreachable!("the archive encodes its own lines")
    }

    /// The archive is the record, not a spreadsheet: values are written exactly as stored, in
    /// PostgreSQL's CSV form, so `COPY … FROM … (FORMAT csv, HEADER)` reads them back unchanged.
    fn encode(rows: &[ArchiveRow]) -> Result<bytes::Bytes, std::io::Error> {
        let mut out = Vec::with_capacity(rows.len() * 260);
        let mut scratch = String::new();
        for r in rows {
            archive_line(&mut out, &r.row, &mut scratch);
        }
        Ok(out.into())
    }

    fn on_page(&self, rows: usize) {
        self.rows.fetch_add(rows as u64, Ordering::Relaxed);
    }

    fn name(&self) -> &'static str {
        "audit archive"
    }
}

/// One event as a line of PostgreSQL's CSV format (RFC 4180 quoting, CRLF): NULL is an empty,
/// unquoted field; any text — the empty text included — is quoted, inner quotes doubled. The
/// `csv` crate cannot tell NULL from empty text (its quoting is per writer, not per field), and
/// an archive that cannot must not replace the database's copy. No formula is neutralised here.
/// `occurred_at` is written as the chain's encoding has it (UTC, six decimals); the month's first
/// event (place 1) carries the chain's start as its `prev_hash`.
pub fn archive_line(out: &mut Vec<u8>, r: &ChainRow, scratch: &mut String) {
    fn text(out: &mut Vec<u8>, v: Option<&str>) {
        out.push(b',');
        if let Some(v) = v {
            out.push(b'"');
            for b in v.bytes() {
                if b == b'"' {
                    out.push(b'"');
                }
                out.push(b);
            }
            out.push(b'"');
        }
    }
    out.extend_from_slice(r.event.id.to_string().as_bytes());
    out.push(b',');
    scratch.clear();
    crate::chain::encode::timestamp(r.event.occurred_at, scratch);
    out.extend_from_slice(scratch.as_bytes());
    text(out, Some(&r.event.kind));
    out.push(b',');
    if let Some(a) = r.event.admin_id {
        out.extend_from_slice(a.to_string().as_bytes());
    }
    text(out, r.event.admin_name.as_deref());
    text(out, r.event.subject_type.as_deref());
    text(out, r.event.subject_id.as_deref());
    text(out, r.event.detail.as_deref());
    text(out, r.event.client_hash.as_deref());
    out.push(b',');
    if let Some(seq) = r.seq {
        out.extend_from_slice(seq.to_string().as_bytes());
    }
    out.push(b',');
    if r.seq == Some(1) {
        out.extend_from_slice(hex::encode(crate::chain::GENESIS).as_bytes());
    }
    out.push(b',');
    if let Some(h) = &r.hash {
        out.extend_from_slice(hex::encode(h).as_bytes());
    }
    out.extend_from_slice(b"\r\n");
}

/// What writing one month produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub rows: u64,
    pub bytes: u64,
    pub crc32c: u32,
    /// SHA-256 of the stored bytes (recorded in the digest of the archive).
    pub sha256: [u8; 32],
}

/// Streams pending table `table` to `key`: CSV in pages, gzip'd as it goes, size and CRC32C
/// computed while streaming. Memory stays flat whatever the table's size.
pub async fn write_table(pool: &PgPool, store: &dyn BlobStore, table: &str, key: &str) -> Result<Written, BlobError> {
    let rows = Arc::new(AtomicU64::new(0));
    let csv = kernel::csv_export::stream(pool.clone(), PendingRows { table: table.to_owned(), rows: rows.clone() }, false);
    let sha = Arc::new(std::sync::Mutex::new(sha2::Sha256::new()));
    let hashing = sha.clone();
    let body = kernel::csv_export::gzip(csv)
        .map_err(|e| BlobError::Source(e.to_string()))
        .inspect_ok(move |chunk| sha2::Digest::update(&mut *hashing.lock().expect("not poisoned"), chunk))
        .boxed();
    let stored = store.put_stream(key, body, MAX_ARCHIVE_BYTES).await?;
    let sha256 = std::mem::take(&mut *sha.lock().expect("not poisoned")).finalize().into();
    Ok(Written { rows: rows.load(Ordering::Relaxed), bytes: stored.size, crc32c: stored.crc32c, sha256 })
}

/// Settings of the archive.
#[derive(Debug, Clone, Copy)]
pub struct ArchiveSettings {
    /// Every archived object's bytes are read back at least this often (the daily `objects`
    /// step re-reads the ones due, oldest check first, within its budget); the other days it
    /// checks size and the store's checksum only.
    pub reread_days: u32,
}

impl kernel::state::Part for ArchiveSettings {
    type Slot = kernel::state::slot::AuditArchive;
}

/// Whether the object at `key` holds what the ledger recorded: `None` when it does, else why not.
/// With `read`, the object's bytes are read back whole and their size and CRC32C compared (the
/// verification after writing, and the rolling re-read). Without, the store's size and stored
/// CRC32C are compared (cheap: a `stat` or a HEAD); an object the store keeps no CRC32C for (one
/// restored from a backup by a tool that does not send one, as common S3 tools do by default) is
/// then read back: the bytes are what must match, not the header.
pub async fn object_problem(store: &dyn BlobStore, key: &str, bytes: i64, crc: i64, read: bool) -> Result<Option<String>, BlobError> {
    if read {
        return Ok(match store.read_back(key).await? {
            None => Some("the object is missing".to_string()),
            Some((size, c)) if size as i64 == bytes && i64::from(c) == crc => None,
            Some((size, c)) => Some(format!("the object reads back as {size} bytes with CRC32C {c:08x}; the ledger has {bytes} bytes, {crc:08x}")),
        });
    }
    let head = store.head(key).await?;
    Ok(match head {
        None => Some("the object is missing".to_string()),
        Some(h) if h.size as i64 != bytes => Some(format!("the object is {} bytes; the ledger has {bytes}", h.size)),
        Some(h) => match h.crc32c {
            Some(c) if i64::from(c) == crc => None,
            Some(c) => Some(format!("the object's CRC32C is {c:08x}; the ledger has {crc:08x}")),
            None => match store.read_back(key).await? {
                None => Some("the object is missing".to_string()),
                Some((size, c)) if size as i64 == bytes && i64::from(c) == crc => None,
                Some((size, c)) => Some(format!("the object reads back as {size} bytes with CRC32C {c:08x}; the ledger has {bytes} bytes, {crc:08x}")),
            },
        },
    })
}

/// Why [`drop_verified`] left a table.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DropRefused {
    /// The month has no ledger row saying `verified` (or was dropped already).
    #[error("month {0} has no verified ledger row; nothing is dropped without one")]
    NotVerified(String),
    /// Someone else holds the table; the next run tries again.
    #[error("the table is locked by another session; left for the next run")]
    Locked,
    /// The table's period cannot be read from its bounds.
    #[error("its period cannot be told: {0}")]
    NoPeriod(String),
    /// The table or the stored object no longer matches the ledger; the month is marked failed.
    #[error("{0}")]
    Changed(String),
    #[error("database: {0}")]
    Database(String),
    #[error("storage: {0}")]
    Storage(String),
}

impl From<sqlx::Error> for DropRefused {
    fn from(e: sqlx::Error) -> Self {
        match &e {
            // lock_not_available
            sqlx::Error::Database(d) if d.code().as_deref() == Some("55P03") => DropRefused::Locked,
            _ => DropRefused::Database(e.to_string()),
        }
    }
}

/// Drops pending table `table` — the only code that drops one. In one transaction, holding the
/// table's lock (waited for at most [`DROP_LOCK_TIMEOUT`]): reads its period from its bounds,
/// finds the month's ledger row and requires `verified`, recounts the table against the ledger,
/// and reads the object back from the store (size and CRC32C as recorded); then drops the table
/// and marks the month dropped. Anything else leaves the table where it is.
pub async fn drop_verified(pool: &PgPool, store: &MarkedStore, table: &str) -> Result<Date, DropRefused> {
    // Crash tests stop here: the month is verified, its table not dropped.
    fail::fail_point!("archive-before-drop");
    let mut tx = pool.begin().await?;
    sqlx::query(&format!("set local lock_timeout = '{DROP_LOCK_TIMEOUT}'")).execute(&mut *tx).await?;
    sqlx::query(&format!("lock table {} in access exclusive mode", pending_table(table))).execute(&mut *tx).await?;
    let found =
        pending(&mut tx).await?.into_iter().find(|t| t.name == table).ok_or_else(|| DropRefused::NoPeriod("the table is not in audit_pending".into()))?;
    let period = found.period.map_err(DropRefused::NoPeriod)?;
    let label = period_label(period);
    let row = sqlx::query!(
        "select object_key, table_rows, bytes, crc32c from audit_partition_archives
         where period = $1 and status = 'verified' and dropped_at is null for update",
        period
    )
    .fetch_optional(&mut *tx)
    .await?
    .ok_or_else(|| DropRefused::NotVerified(label.clone()))?;
    let (Some(rows), Some(bytes), Some(crc)) = (row.table_rows, row.bytes, row.crc32c) else {
        return Err(DropRefused::NotVerified(label));
    };
    let count: i64 = sqlx::query_scalar(&format!("select count(*) from {}", pending_table(table))).fetch_one(&mut *tx).await?;
    let problem = if count != rows {
        Some(format!("the table has {count} rows, the archive {rows}"))
    } else {
        // Size and stored checksum (cheap, under the lock): the bytes were read back when the
        // month was verified.
        object_problem(store, &row.object_key, bytes, crc, false)
            .await
            .map_err(|e| DropRefused::Storage(e.to_string()))?
            .map(|why| format!("archived object: {why}"))
    };
    if let Some(why) = problem {
        tx.rollback().await?;
        record_failure(pool, period, table, &format!("before dropping: {why}")).await?;
        return Err(DropRefused::Changed(format!("{label}: {why}; marked failed, it is written again next run")));
    }
    sqlx::query(&format!("drop table {}", pending_table(table))).execute(&mut *tx).await?;
    sqlx::query!("update audit_partition_archives set dropped_at = now() where period = $1", period).execute(&mut *tx).await?;
    kernel::jobs::count(&mut tx, "dropped", 1).await?;
    record(&mut tx, &Actor::system(), AuditKind::ArchiveDrop, Some(("month", &label)), Some(&format!("{rows} events; archived as {}", row.object_key))).await?;
    fail::fail_point!("archive-drop");
    tx.commit().await?;
    tracing::info!(month = %label, rows, "audit archive: dropped an archived and verified month from the database");
    Ok(period)
}

/// Step `requests`: fails export requests stuck in `running`; deletes request rows older than 90
/// days.
async fn requests_step(ctx: StepCtx) -> Result<StepReport, StepError> {
    let stuck_after = ctx.state.domain::<super::exports::ExportSettings>().stuck_after;
    let failed = super::exports::fail_stuck(&ctx.state.pool, stuck_after).await?;
    let deleted =
        sqlx::query!("delete from audit_export_requests where requested_at < $1::timestamptz - make_interval(days => $2)", ctx.now, REQUEST_KEEP_DAYS as i32)
            .execute(&ctx.state.pool)
            .await?
            .rows_affected();
    Ok(StepReport::rows("requests_deleted", deleted).with("stuck_failed", failed))
}

/// Step `partitions`: partitions ahead by bounds (too few stops the run); default rows counted.
/// Any failure stops the run: the later steps rely on this check.
async fn partitions_step(ctx: StepCtx) -> Result<StepReport, StepError> {
    check_partitions(ctx).await.map_err(|e| StepError { stop: true, ..e })
}

async fn check_partitions(ctx: StepCtx) -> Result<StepReport, StepError> {
    let wanted = ctx.state.domain::<super::upkeep::UpkeepSettings>().partitions_ahead;
    let mut tx = ctx.state.pool.begin().await?;
    let parts = super::upkeep::partitions(&mut tx).await?;
    let ahead = super::upkeep::months_ahead(&parts, month_start(ctx.now));
    let default_rows: i64 = sqlx::query_scalar!(r#"select count(*) as "n!" from audit_events_default"#).fetch_one(&mut *tx).await?;
    tx.commit().await?;
    tracing::info!(default_rows, partitions_ahead = ahead, "audit archive: partitions ahead and default partition rows counted");
    let min = min_partitions_ahead(wanted);
    if ahead < min {
        return Err(StepError::stop(format!(
            "only {ahead} monthly partitions ahead (at least {min} needed): audit upkeep is not working; the archive stopped until a person fixes it"
        ))
        .for_a_person());
    }
    Ok(StepReport::rows("partitions_ahead", ahead as u64).with("default_rows", default_rows as u64))
}

/// Step `objects`: every ledgered object is still there as recorded. Any failure (a store that
/// cannot be read included) stops the run.
async fn objects_step(ctx: StepCtx) -> Result<StepReport, StepError> {
    check_objects(ctx).await.map_err(|e| StepError { stop: true, ..e })
}

async fn check_objects(ctx: StepCtx) -> Result<StepReport, StepError> {
    let pool = &ctx.state.pool;
    let mut problems = Vec::new();
    let (mut checked, mut reread) = (0u64, 0u64);
    let mut needs_person = false;
    let reread_days = ctx.state.domain::<ArchiveSettings>().reread_days;
    let due_before = ctx.now - time::Duration::days(i64::from(reread_days));
    let mut verified: Vec<LedgerRow> = ledger(pool).await?.into_iter().filter(|r| r.status == MonthStatus::Verified).collect();
    // The longest unread first: a run cut short by its budget re-reads those next time.
    verified.sort_by_key(|r| r.content_checked_at);
    for row in verified {
        checked += 1;
        let label = period_label(row.period);
        // Existence, size and stored checksum every day; the bytes themselves when due, within
        // the run's budget (the work stays bounded however many months are archived).
        let due = row.content_checked_at.is_none_or(|at| at <= due_before) && !ctx.out_of_time();
        let why = object_problem(&*ctx.state.blobs, &row.object_key, row.bytes.unwrap_or(-1), row.crc32c.unwrap_or(-1), due).await?;
        if due && why.is_none() {
            sqlx::query!("update audit_partition_archives set content_checked_at = now() where period = $1", row.period).execute(pool).await?;
            reread += 1;
        }
        let Some(why) = why else { continue };
        if row.dropped_at.is_none() {
            // The table is still here: write it again (next run; this one stops).
            record_failure(pool, row.period, &row.table_name, &format!("after verification: {why}")).await?;
            problems.push(format!("{label}: {why} (the month is still in the database and is written again next run)"));
        } else {
            needs_person = true;
            problems.push(format!(
                "{label}: {why} (the month was dropped from the database: the archive is its only copy; restore {} from a backup — see the auditor guide, docs/auditor.md, restoring an archived month)",
                row.object_key
            ));
        }
    }
    if problems.is_empty() {
        Ok(StepReport::rows("checked", checked).with("reread", reread))
    } else {
        let e = StepError::stop(format!("archived objects changed behind Ebb's back: {}", problems.join("; ")));
        Err(if needs_person { e.for_a_person() } else { e })
    }
}

/// The `write` step's counts and errors, as its months go.
#[derive(Default)]
struct WriteCounts {
    written: u64,
    verified: u64,
    dropped: u64,
    empty: u64,
    errors: Vec<String>,
}

/// Step `write`: every pending table that is not verified yet, written to its month's key.
async fn write_step(ctx: StepCtx) -> Result<StepReport, StepError> {
    let pool = &ctx.state.pool;
    let mut conn = pool.begin().await?;
    let tables = pending(&mut conn).await?;
    conn.commit().await?;
    let states: std::collections::HashMap<Date, LedgerRow> = ledger(pool).await?.into_iter().map(|r| (r.period, r)).collect();
    let mut counts = WriteCounts::default();
    let mut more = false;
    for t in tables {
        // At least one month per run, however long the steps before took: a backlog of any size
        // moves every run.
        if ctx.out_of_time() && (counts.written > 0 || !counts.errors.is_empty()) {
            more = true;
            break;
        }
        let Some(period) = month_to_write(pool, &t, &states, &mut counts).await? else { continue };
        write_month(&ctx, &t.name, period, &mut counts).await?;
    }
    let WriteCounts { written, verified, dropped, empty, errors } = counts;
    if !errors.is_empty() {
        return Err(StepError::new(errors.join("; ")));
    }
    Ok(StepReport { counts: vec![("written", written), ("verified", verified), ("dropped", dropped), ("empty_left", empty)], rows: written, more })
}

/// The month pending table `t` is to be written as, or `None` when it is left alone this run
/// (counted or reported in `counts`).
async fn month_to_write(
    pool: &PgPool,
    t: &PendingTable,
    states: &std::collections::HashMap<Date, LedgerRow>,
    counts: &mut WriteCounts,
) -> Result<Option<Date>, StepError> {
    let period = match &t.period {
        Ok(p) => *p,
        Err(why) => {
            tracing::error!(table = %t.name, "audit archive: left a pending table alone: {why}");
            counts.errors.push(format!("{}: left alone: {why}", t.name));
            return Ok(None);
        }
    };
    let label = period_label(period);
    match states.get(&period) {
        Some(r) if r.dropped_at.is_some() => {
            let why = format!(
                "month {label} was archived and dropped already; this table holds other rows of the same month and is left alone for a person to compare"
            );
            tracing::error!(table = %t.name, "audit archive: {why}");
            counts.errors.push(format!("{}: {why}", t.name));
            return Ok(None);
        }
        // Verified: waiting for the drop. Written: the verify step checks it (a later run
        // when this one is cut off); an upload is never redone while it may be good.
        Some(r) if r.status == MonthStatus::Verified || r.status == MonthStatus::Written => return Ok(None),
        _ => {}
    }
    let has_rows: bool = sqlx::query_scalar(&format!("select exists (select 1 from {})", pending_table(&t.name))).fetch_one(pool).await?;
    if !has_rows {
        // Its period cannot be proven by its rows: no ledger row, nothing dropped.
        tracing::warn!(table = %t.name, month = %label, "audit archive: a pending table has no rows; left alone for a person to look at");
        counts.empty += 1;
        return Ok(None);
    }
    Ok(Some(period))
}

/// Uploads `table` as month `period` and records it in the ledger as `written`, then verifies
/// and drops it. A failed upload marks the month failed; every problem goes to `counts.errors`.
async fn write_month(ctx: &StepCtx, table: &str, period: Date, counts: &mut WriteCounts) -> Result<(), StepError> {
    let pool = &ctx.state.pool;
    let label = period_label(period);
    let key = key_of(period);
    // A month leaves the database only with a chain that verifies: what is archived is what was
    // sealed.
    let (chain_count, chain_head) = match chain_of(pool, table, period).await? {
        Ok(chain) => chain,
        Err(why) => {
            record_failure(pool, period, table, &why).await?;
            let msg = common::alerts::AlertMessage::ChainBroken { place: format!("month {label} (archive)") };
            kernel::alerts::raise_detailed(pool, common::alerts::AlertKind::AuditChainBroken, "", &msg, &why).await?;
            counts.errors.push(format!("{label}: {why}"));
            return Ok(());
        }
    };
    match write_table(pool, &*ctx.state.blobs, table, &key).await {
        Ok(w) => {
            fail::fail_point!("archive-after-upload");
            let mut tx = pool.begin().await?;
            sqlx::query!(
                "insert into audit_partition_archives (period, object_key, table_name, status, rows_written, bytes, crc32c, sha256, chain_count, chain_head)
                     values ($1, $2, $3, 'written', $4, $5, $6, $7, $8, $9)
                     on conflict (period) do update set status = 'written', object_key = $2, table_name = $3, rows_written = $4,
                         bytes = $5, crc32c = $6, sha256 = $7, chain_count = $8, chain_head = $9, digest_number = null,
                         table_rows = null, verified_at = null, failure = null,
                         attempts = audit_partition_archives.attempts + 1, archived_at = now()
                     where audit_partition_archives.dropped_at is null",
                period,
                key,
                table,
                w.rows as i64,
                w.bytes as i64,
                w.crc32c as i64,
                w.sha256.as_slice(),
                chain_count,
                chain_head.as_slice(),
            )
            .execute(&mut *tx)
            .await?;
            // Counted with the ledger row it counts (a run killed after this still says so).
            kernel::jobs::count(&mut tx, "written", 1).await?;
            tx.commit().await?;
            tracing::info!(month = %label, rows = w.rows, bytes = w.bytes, "audit archive: month written");
            counts.written += 1;
            // Verified and dropped at once, so a run cut off later leaves finished months
            // behind it, not a pile of uploads to check again.
            let month = WrittenMonth { period, table, key: &key, rows: w.rows as i64, bytes: w.bytes as i64, crc: w.crc32c as i64 };
            verify_and_drop(ctx, &month, counts).await?;
        }
        Err(e) => {
            let why = format!("writing {key} failed: {e}");
            record_failure(pool, period, table, &why).await?;
            counts.errors.push(format!("{label}: {why}"));
        }
    }
    Ok(())
}

/// The chain of pending table `table` (month `period`), checked event by event against the head
/// recorded at sealing: `(events, head)`, or why it does not verify. A month from before the chain
/// (no event sealed) is archived as it is, with an empty chain.
async fn chain_of(pool: &PgPool, table: &str, period: Date) -> Result<Result<(i64, Vec<u8>), String>, sqlx::Error> {
    let label = period_label(period);
    let chain = sqlx::query!("select seq, head from audit_chains where period = $1", period).fetch_optional(pool).await?;
    let unsealed: Option<i64> = sqlx::query_scalar(&format!("select min(id) from {} where seq is null", pending_table(table))).fetch_one(pool).await?;
    let sealed: bool = sqlx::query_scalar(&format!("select exists (select 1 from {} where seq is not null)", pending_table(table))).fetch_one(pool).await?;
    let chain = match chain {
        // Nothing sealed and an empty chain (an earlier attempt recorded it): still a month from
        // before the chain.
        Some(c) if c.seq == 0 && !sealed => None,
        other => other,
    };
    let Some(chain) = chain else {
        if sealed {
            return Ok(Err(format!("month {label} has sealed events but no chain head")));
        }
        // Before the chain: recorded with an empty chain so its digest carries the object.
        sqlx::query!(
            "insert into audit_chains (period, seq, head) values ($1, 0, $2) on conflict (period) do nothing",
            period,
            crate::chain::GENESIS.as_slice()
        )
        .execute(pool)
        .await?;
        return Ok(Ok((0, crate::chain::GENESIS.to_vec())));
    };
    if let Some(id) = unsealed {
        return Ok(Err(format!("event {id} of month {label} is not in the month's chain; the month is not archived until a person looks")));
    }
    let rec = crate::chain::verify::MonthRecord::default();
    let (_, problem) = crate::chain::verify::walk_table(pool, &pending_table(table), period, &label, &rec, chain.seq, &chain.head).await?;
    Ok(match problem {
        Some(p) => Err(format!("the chain does not verify at {}: {}", p.place(), p.what)),
        None => Ok((chain.seq, chain.head)),
    })
}

/// Verifies a month just written and, verified, drops its table; a table someone holds a lock
/// on is dropped by a later run.
async fn verify_and_drop(ctx: &StepCtx, month: &WrittenMonth<'_>, counts: &mut WriteCounts) -> Result<(), StepError> {
    match verify_month(ctx, month).await? {
        Ok(()) => {
            counts.verified += 1;
            // The signed record of what was archived (the digest step writes it when this fails).
            if let Err(e) = crate::chain::digest::write(&ctx.state, crate::chain::digest::Reason::Archived(month.period), true).await {
                counts.errors.push(format!("{}: the digest of the archive was not written ({e}); the next digest records it", period_label(month.period)));
            }
            match drop_verified(&ctx.state.pool, &ctx.state.blobs, month.table).await {
                Ok(_) => {
                    counts.dropped += 1;
                }
                Err(DropRefused::Locked) => {
                    tracing::info!(table = %month.table, "audit archive: a verified month's table is locked; it is dropped next run")
                }
                Err(e) => counts.errors.push(format!("{}: {e}", month.table)),
            }
        }
        Err(why) => counts.errors.push(why),
    }
    Ok(())
}

/// A month the ledger has as `written`: what was uploaded, from which table.
struct WrittenMonth<'a> {
    period: Date,
    table: &'a str,
    key: &'a str,
    rows: i64,
    bytes: i64,
    crc: i64,
}

/// Checks written month `m` against its table and the store: rows written = `count(*)`, and the
/// stored object read back has the size and CRC32C that were written. Verified → the ledger
/// says so (with an event); otherwise the month is marked failed (the table stays; a later run
/// writes it again). `Err(why)` when it was not verified.
async fn verify_month(ctx: &StepCtx, m: &WrittenMonth<'_>) -> Result<Result<(), String>, StepError> {
    let pool = &ctx.state.pool;
    let label = period_label(m.period);
    let count: i64 = sqlx::query_scalar(&format!("select count(*) from {}", pending_table(m.table))).fetch_one(pool).await?;
    let why = if m.rows != count {
        Some(format!("{} rows were written but the table has {count}", m.rows))
    } else {
        // Read back whole: the proof that the copy is the month.
        object_problem(&*ctx.state.blobs, m.key, m.bytes, m.crc, true).await?
    };
    if let Some(why) = why {
        record_failure(pool, m.period, m.table, &format!("verification: {why}")).await?;
        return Ok(Err(format!("{label}: {why}; left in the database, written again by a later run")));
    }
    let mut tx = pool.begin().await?;
    let updated = sqlx::query!(
        "update audit_partition_archives set status = 'verified', table_rows = $2, verified_at = now(), content_checked_at = now(), failure = null
         where period = $1 and status = 'written'",
        m.period,
        count
    )
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if updated != 1 {
        return Ok(Err(format!("{label}: the ledger no longer has it as written; left for the next run")));
    }
    let (bytes, crc) = (m.bytes, m.crc);
    record(&mut tx, &Actor::system(), AuditKind::ArchiveMonth, Some(("month", &label)), Some(&format!("{count} events, {bytes} bytes, CRC32C {crc:08x}")))
        .await?;
    kernel::jobs::count(&mut tx, "verified", 1).await?;
    tx.commit().await?;
    tracing::info!(month = %label, rows = count, bytes, "audit archive: month verified");
    Ok(Ok(()))
}

/// Step `verify`: months left `written` (by a run cut off or killed after the upload) are
/// checked before anything new is written: a backlog resumes, it is not written again.
async fn verify_step(ctx: StepCtx) -> Result<StepReport, StepError> {
    let pool = &ctx.state.pool;
    let mut conn = pool.begin().await?;
    let tables = pending(&mut conn).await?;
    conn.commit().await?;
    let (mut verified, mut errors) = (0u64, Vec::new());
    for row in ledger(pool).await?.into_iter().filter(|r| r.status == MonthStatus::Written) {
        let Some(table) = tables.iter().find(|t| t.period.as_ref().ok() == Some(&row.period)) else {
            let why = "its table is no longer in audit_pending".to_string();
            record_failure(pool, row.period, &row.table_name, &why).await?;
            errors.push(format!("{}: {why}", period_label(row.period)));
            continue;
        };
        let month = WrittenMonth {
            period: row.period,
            table: &table.name,
            key: &row.object_key,
            rows: row.rows_written.unwrap_or(-1),
            bytes: row.bytes.unwrap_or(-1),
            crc: row.crc32c.unwrap_or(-1),
        };
        match verify_month(&ctx, &month).await? {
            Ok(()) => verified += 1,
            Err(why) => errors.push(why),
        }
    }
    if !errors.is_empty() {
        return Err(StepError::new(errors.join("; ")));
    }
    Ok(StepReport::rows("verified", verified))
}

/// Step `drop`: verified months leave the database.
async fn drop_step(ctx: StepCtx) -> Result<StepReport, StepError> {
    let pool = &ctx.state.pool;
    let mut conn = pool.begin().await?;
    let tables = pending(&mut conn).await?;
    conn.commit().await?;
    let verified: Vec<Date> =
        ledger(pool).await?.into_iter().filter(|r| r.status == MonthStatus::Verified && r.dropped_at.is_none()).map(|r| r.period).collect();
    let (mut dropped, mut locked, mut errors) = (0u64, 0u64, Vec::new());
    for t in tables.iter().filter(|t| t.period.as_ref().is_ok_and(|p| verified.contains(p))) {
        match drop_verified(pool, &ctx.state.blobs, &t.name).await {
            Ok(_) => dropped += 1,
            Err(DropRefused::Locked) => {
                tracing::info!(table = %t.name, "audit archive: a verified month's table is locked; it is dropped next run");
                locked += 1;
            }
            Err(e) => errors.push(format!("{}: {e}", t.name)),
        }
    }
    if !errors.is_empty() {
        return Err(StepError::new(errors.join("; ")));
    }
    Ok(StepReport { counts: vec![("dropped", dropped), ("locked_left", locked)], rows: dropped, more: locked > 0 })
}

/// The archive page's data: the ledger's months and the latest retrievals.
pub async fn overview(pool: &PgPool) -> Result<super::ArchiveOverview, sqlx::Error> {
    let months = ledger(pool)
        .await?
        .into_iter()
        .rev()
        .map(|r| super::ArchivedMonth {
            month: period_label(r.period),
            events: if r.status == MonthStatus::Verified { r.table_rows } else { r.rows_written },
            bytes: r.bytes,
            verified_at: r.verified_at,
            dropped: r.dropped_at.is_some(),
            status: r.status,
        })
        .collect();
    let retrievals = sqlx::query!("select period, admin_name, reason, issued_at from audit_archive_retrievals order by issued_at desc, id desc limit 20")
        .fetch_all(pool)
        .await?
        .into_iter()
        .map(|r| super::RetrievalView { month: period_label(r.period), admin_name: r.admin_name, reason: r.reason, issued_at: r.issued_at })
        .collect();
    Ok(super::ArchiveOverview { months, retrievals })
}

/// Why no link was given for an archived month.
#[derive(Debug, thiserror::Error)]
pub enum RetrievalError {
    /// Not a month the ledger has as verified.
    #[error("no such archived month")]
    NotFound,
    /// The ledger has it, the store does not (an alert is raised).
    #[error("the archived object is missing")]
    Missing,
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    #[error("storage: {0}")]
    Storage(#[from] BlobError),
}

/// A 15-minute link to archived month `period`, downloaded as `YYYY-MM.csv.gz`. Each one is
/// recorded with who asked, for which month and why (`reason`: checked by the caller), and in the
/// audit log. No restore step: the archive's storage class reads like any other.
pub async fn retrieval_link(state: &kernel::state::AppState, actor: &Actor, period: Date, reason: &str) -> Result<super::DownloadLink, RetrievalError> {
    let pool = &state.pool;
    let key = sqlx::query_scalar!("select object_key from audit_partition_archives where period = $1 and status = 'verified'", period)
        .fetch_optional(pool)
        .await?
        .ok_or(RetrievalError::NotFound)?;
    let label = period_label(period);
    // Existence only (cheap): an admin's request never reads an object through.
    if !state.blobs.exists(&key).await? {
        kernel::alerts::raise(
            pool,
            common::alerts::AlertKind::ArchiveFailed,
            JOB,
            &common::alerts::AlertMessage::ArchiveMissing { month: label.to_string(), key: key.to_string() },
        )
        .await?;
        return Err(RetrievalError::Missing);
    }
    let minutes = super::LINK_MINUTES;
    let mut tx = pool.begin().await?;
    let expires_at = sqlx::query_scalar!(
        r#"insert into audit_archive_retrievals (period, admin_id, admin_name, reason, expires_at)
           values ($1, $2, (select name from admin_names where id = $2), $3, now() + make_interval(mins => $4))
           returning expires_at"#,
        period,
        actor.admin,
        reason,
        minutes as i32
    )
    .fetch_one(&mut *tx)
    .await?;
    record(&mut tx, actor, AuditKind::ArchiveRetrieval, Some(("month", &label)), None).await?;
    let file_name = format!("{label}.csv.gz");
    let url = state.blobs.signed_url(&key, Duration::from_secs(minutes as u64 * 60), &file_name, expires_at - time::Duration::minutes(minutes)).await?;
    tx.commit().await?;
    Ok(super::DownloadLink { url, file_name, expires_at })
}

/// The daily archive job.
pub fn job() -> kernel::jobs::Job {
    use kernel::jobs::{Budget, Job, Step};
    let budget = Budget { rows_per_step: 1_000, time: Duration::from_secs(30 * 60) };
    Job::new(
        JOB,
        "Audit archive",
        "Writes months detached by upkeep to the archive (audit-archive/YYYY-MM.csv.gz), verifies rows, size and CRC32C, and only then drops them from the database; checks every archived object; cleans up export requests.",
        "audit_archive_at",
        Duration::from_secs(86_400),
    )
    .budget(budget)
    .traffic_budget(budget)
    .alert_on_failure(common::alerts::AlertKind::ArchiveFailed)
    .alert_when_behind(common::alerts::AlertKind::ArchiveBehind)
    .step(Step::new("requests", requests_step).labelled("export requests stuck or older than 90 days"))
    .step(Step::new("partitions", partitions_step).labelled("partitions ahead and the default partition"))
    .step(Step::new("objects", objects_step).labelled("archived objects still there as recorded"))
    // What earlier runs left half-done is finished before anything new is written.
    .step(Step::new("verify", verify_step).labelled("written months checked (rows, size, CRC32C)").past_budget())
    .step(Step::new("drop", drop_step).labelled("verified months dropped from the database").past_budget())
    .step(Step::new("write", write_step).labelled("pending months written, verified and dropped").past_budget())
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::date;

    #[test]
    fn periods_come_from_whole_month_bounds() {
        let def = "CHECK (((occurred_at >= '2024-09-01 00:00:00+00'::timestamp with time zone) AND (occurred_at < '2024-10-01 00:00:00+00'::timestamp with time zone)))";
        assert_eq!(parse_check_period(def), Ok(date!(2024 - 09 - 01)));
        let two = "CHECK (((occurred_at >= '2024-09-01 00:00:00+00'::timestamp with time zone) AND (occurred_at < '2024-11-01 00:00:00+00'::timestamp with time zone)))";
        assert!(parse_check_period(two).is_err());
        let shifted = "CHECK (((occurred_at >= '2024-09-01 00:00:00+09'::timestamp with time zone) AND (occurred_at < '2024-10-01 00:00:00+09'::timestamp with time zone)))";
        assert!(parse_check_period(shifted).is_err());
        assert!(parse_check_period("CHECK ((id > 0))").is_err());
        assert_eq!(parse_period("2024-09"), Some(date!(2024 - 09 - 01)));
        for bad in ["2024-13", "2024-9", "24-09", "2024/09", "2024-09-01", ""] {
            assert_eq!(parse_period(bad), None, "{bad}");
        }
        assert_eq!(key_of(date!(2024 - 09 - 01)), "audit-archive/2024-09.csv.gz");
        assert_eq!(min_partitions_ahead(3), 2);
        assert_eq!(min_partitions_ahead(1), 1);
        assert_eq!(min_partitions_ahead(0), 1);
    }

    #[test]
    fn archive_lines_keep_null_apart_from_empty_text_and_change_nothing() {
        let mut row = ChainRow {
            event: crate::AuditRow {
                id: 7,
                occurred_at: time::macros::datetime!(2024-05-01 00:01:02.5 UTC),
                kind: "share.create".into(),
                admin_id: None,
                admin_name: Some(String::new()),
                subject_type: None,
                subject_id: Some("=1+1".into()),
                detail: Some("say \"hi\",\r\nthen -3 days".into()),
                client_hash: None,
            },
            seq: Some(1),
            hash: Some(vec![0xab; 32]),
        };
        let mut out = Vec::new();
        archive_line(&mut out, &row, &mut String::new());
        let (zero, ab) = ("0".repeat(64), "ab".repeat(32));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("7,2024-05-01T00:01:02.500000Z,\"share.create\",,\"\",,\"=1+1\",\"say \"\"hi\"\",\r\nthen -3 days\",,1,{zero},{ab}\r\n")
        );
        // Later places carry no prev_hash; an unsealed event (archived before the chain) no place.
        row.seq = Some(2);
        let mut out = Vec::new();
        archive_line(&mut out, &row, &mut String::new());
        assert!(String::from_utf8(out).unwrap().ends_with(&format!(",2,,{ab}\r\n")));
        (row.seq, row.hash) = (None, None);
        let mut out = Vec::new();
        archive_line(&mut out, &row, &mut String::new());
        assert!(String::from_utf8(out).unwrap().ends_with(",,,\r\n"));
    }
}

/// The archive as verification reads it (here, not in `chain::verify`, which `archive` uses).
#[cfg(test)]
mod read_back {
    use std::io::Write;

    use super::{archive_line, ARCHIVE_HEADER};
    use crate::chain::encode::{Linker, GENESIS};
    use crate::chain::verify::{ArchiveParser, Problem, BLOCK_BYTES, ZEROS};
    use crate::chain::ChainRow;

    /// A month of `n` events as the archive writes it (details with quotes, commas and line
    /// ends in every seventh), and its chain's head.
    fn month(n: i64) -> (Vec<u8>, [u8; 32]) {
        let mut out = ARCHIVE_HEADER.join(",").into_bytes();
        out.extend_from_slice(b"\r\n");
        let (mut prev, mut linker, mut scratch) = (GENESIS, Linker::default(), String::new());
        for seq in 1..=n {
            let mut row = ChainRow {
                event: crate::AuditRow {
                    id: 1000 + seq,
                    occurred_at: time::macros::datetime!(2024-05-01 00:00 UTC) + time::Duration::seconds(seq),
                    kind: "share.download".into(),
                    admin_id: None,
                    admin_name: Some("Ann".into()),
                    subject_type: Some("share".into()),
                    subject_id: Some(format!("s{seq}")),
                    detail: (seq % 7 == 0).then(|| format!("said \"{seq}\",\r\nthen, 12,345 bytes")),
                    client_hash: Some(String::new()),
                },
                seq: None,
                hash: None,
            };
            prev = linker.link(&prev, &row, seq);
            (row.seq, row.hash) = (Some(seq), Some(prev.to_vec()));
            archive_line(&mut out, &row, &mut scratch);
        }
        (out, prev)
    }

    /// Reads `bytes` in uneven chunks, as inflating hands them over.
    fn parse(bytes: &[u8]) -> (u64, (i64, [u8; 32]), Option<Problem>, Option<String>) {
        let checkpoints = Vec::new();
        let mut parser = ArchiveParser::new("2024-05", &checkpoints);
        for chunk in bytes.chunks(32_771) {
            parser.write_all(chunk).unwrap();
        }
        parser.finish();
        let rows = parser.rows;
        let head = rows.walker.head();
        let (events, problem) = rows.walker.finish(&[]);
        (events, head, problem, rows.error)
    }

    /// Several blocks' worth of rows read by the workers come out as one walk: every event, the
    /// head the chain has; a change in a later block is named at its event.
    #[test]
    fn a_month_read_in_blocks_is_walked_in_order_and_a_change_is_named() {
        let n = 30_000;
        let (bytes, head) = month(n);
        assert!(bytes.len() > 3 * BLOCK_BYTES, "several blocks: {}", bytes.len());
        let (events, (count, got), problem, error) = parse(&bytes);
        assert_eq!((events, count, got, problem.map(|p| p.what), error), (n as u64, n, head, None, None));

        // One byte of one subject in the last block: that event, and nothing after it counts.
        let text = String::from_utf8(bytes.clone()).unwrap();
        let changed = text.replace("\"s29001\"", "\"s29002\"");
        let (events, _, problem, _) = parse(changed.as_bytes());
        let problem = problem.expect("the change is found");
        assert_eq!((problem.event, events), (Some(1000 + 29_001), 29_000));
        assert!(problem.what.contains("does not match its hash"), "{}", problem.what);

        // A row moved out (the first of a block, wherever it falls, is linked by the walker).
        let line = |seq: i64| {
            let at = |seq: i64| text.find(&format!("\r\n{},", 1000 + seq)).unwrap() + 2;
            at(seq)..at(seq + 1)
        };
        let mut removed = text.clone();
        removed.replace_range(line(12_345), "");
        let (_, _, problem, _) = parse(removed.as_bytes());
        assert!(problem.unwrap().what.contains("event(s) of the chain are missing"));
        // The first row must start the chain.
        let restarted = text.replacen(&format!(",1,{}", ZEROS), &format!(",1,{}", "1".repeat(64)), 1);
        assert_eq!(parse(restarted.as_bytes()).3.as_deref(), Some("the month's first prev_hash is not the chain's start"));
    }
}
