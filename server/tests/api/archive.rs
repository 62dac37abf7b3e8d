//! The verified archive on both backends (a local folder; S3 on a real garage): months detached
//! by upkeep are written, verified twice, ledgered and only then dropped; every failure leaves the
//! month in the database; the drop refuses without a verified ledger row; the run's failures
//! raise one alert. Crash tests kill a real `ebb` process at chosen points (SIGKILL).

use std::io::Read;

use app::audit::archive::{self, DropRefused};
use app::jobs::{run_job, Outcome, RunOutcome, RunRecord, StepStatus, Trigger};
use app::storage::BlobStore;
use sqlx::PgPool;
use time::{Date, OffsetDateTime};

use crate::helpers::*;

/// The first day of the month `back` months before this one.
pub fn month_back(back: i32) -> Date {
    let now = app::audit::upkeep::month_start(OffsetDateTime::now_utc());
    app::audit::upkeep::add_months(now, -back).date()
}

/// Creates month `period`'s partition with `rows` events, then lets upkeep detach it (with
/// every other month past 25 months) into `audit_pending`, as in production. Returns the table.
pub async fn pending_month(pool: &PgPool, period: Date, rows: i64) -> String {
    let name = format!("audit_events_{:04}_{:02}", period.year(), period.month() as u8);
    let next = app::audit::upkeep::add_months(period.midnight().assume_utc(), 1);
    sqlx::query(&format!("create table {name} partition of audit_events for values from ('{} 00:00:00+00') to ('{}')", period, next.date()))
        .execute(pool)
        .await
        .unwrap();
    // NULLs beside empty texts, formulas, quotes and line breaks: the archive must keep them all.
    sqlx::query(
        "insert into audit_events (occurred_at, kind, admin_id, admin_name, subject_type, subject_id, detail, client_hash)
         select $1::timestamptz + (i * interval '1 second') + (i % 1000) * interval '1 microsecond', 'share.create',
                case when i % 3 = 0 then gen_random_uuid() end,
                case i % 5 when 0 then null when 1 then '' else 'Ann' end, 'share', 's' || i,
                case i % 7 when 0 then '=HYPERLINK(\"x\")' when 1 then '-3 days' when 2 then null when 3 then ''
                           else 'detail, with \"quotes\" ' || i || E'\r\nline 2' end,
                case when i % 2 = 0 then md5(i::text) end
         from generate_series(1, $2) i",
    )
    .bind(period.midnight().assume_utc())
    .bind(rows)
    .execute(pool)
    .await
    .unwrap();
    let report = app::audit::upkeep::run(pool, OffsetDateTime::now_utc(), 3).await.unwrap();
    assert!(report.detached.contains(&name), "{report:?}");
    name
}

pub async fn table_exists(pool: &PgPool, name: &str) -> bool {
    sqlx::query_scalar("select exists (select 1 from pg_tables where schemaname = 'audit_pending' and tablename = $1)")
        .bind(name)
        .fetch_one(pool)
        .await
        .unwrap()
}

pub async fn ledger_status(pool: &PgPool, period: Date) -> Option<(String, bool)> {
    sqlx::query_as::<_, (String, bool)>("select status, dropped_at is not null from audit_partition_archives where period = $1")
        .bind(period)
        .fetch_optional(pool)
        .await
        .unwrap()
}

/// An open alert's headline and details.
async fn open_alert(pool: &PgPool, kind: &str) -> Option<String> {
    sqlx::query_scalar("select message || E'\n' || details from alerts where kind = $1 and resolved_at is null").bind(kind).fetch_optional(pool).await.unwrap()
}

/// Runs the archive now (waiting while another run — a killed process's, until PostgreSQL sees
/// its session end — holds the lease).
pub async fn run_archive(app: &TestApp) -> RunRecord {
    let job = app.state.jobs().get(archive::JOB).unwrap();
    for _ in 0..200 {
        match run_job(&app.state, job, Trigger::Cli, true).await.unwrap() {
            RunOutcome::Ran(r) => return r,
            RunOutcome::Busy => tokio::time::sleep(std::time::Duration::from_millis(50)).await,
            other => panic!("the archive did not run: {other:?}"),
        }
    }
    panic!("the archive's lease stayed taken")
}

fn step(run: &RunRecord, name: &str) -> (StepStatus, Option<String>) {
    let s = run.step(name).unwrap();
    (s.status, s.error.clone())
}

/// The rows of `table` (the archive's columns), as one hash: equal hashes, equal rows.
async fn fingerprint(pool: &PgPool, table: &str) -> String {
    sqlx::query_scalar(&format!(
        "select md5(string_agg(row(id, occurred_at, kind, admin_id, admin_name, subject_type, subject_id, detail, client_hash)::text, '|' order by id)) from {table}"
    ))
    .fetch_one(pool)
    .await
    .unwrap()
}

/// Loads archived month `period` into a new table with PostgreSQL's own CSV reader.
async fn restore(app: &TestApp, pool: &PgPool, period: Date) -> String {
    let packed = app.read_stored(&archive::key_of(period)).await.expect("the archived object exists");
    let mut csv = Vec::new();
    flate2::read::GzDecoder::new(&packed[..]).read_to_end(&mut csv).unwrap();
    let table = format!("restored_{}", uuid::Uuid::new_v4().simple());
    sqlx::query(&format!(
        "create table {table} (id bigint, occurred_at timestamptz, kind text, admin_id uuid, admin_name text, subject_type text, subject_id text, detail text, client_hash text, seq bigint, prev_hash text, hash text)"
    ))
    .execute(pool)
    .await
    .unwrap();
    let mut conn = pool.acquire().await.unwrap();
    let mut copy = conn.copy_in_raw(&format!("copy {table} from stdin with (format csv, header)")).await.unwrap();
    copy.send(csv).await.unwrap();
    copy.finish().await.unwrap();
    table
}

/// The archived object, unpacked: its CSV records (header first).
async fn archived_csv(app: &TestApp, period: Date) -> Vec<csv::StringRecord> {
    let packed = app.read_stored(&archive::key_of(period)).await.expect("the archived object exists");
    let mut text = String::new();
    flate2::read::GzDecoder::new(&packed[..]).read_to_string(&mut text).unwrap();
    csv::ReaderBuilder::new().has_headers(false).from_reader(text.as_bytes()).records().map(Result::unwrap).collect()
}

on_both_backends!(
    pending_months_are_written_verified_recorded_and_only_then_dropped,
    an_upload_cut_in_the_middle_keeps_the_month_and_the_next_run_finishes,
    a_corrupted_object_is_not_dropped_and_the_next_run_writes_it_again,
    a_ledgered_object_deleted_behind_ebbs_back_fails_the_run_and_alerts,
);

async fn pending_months_are_written_verified_recorded_and_only_then_dropped(pool: PgPool, backend: Backend) {
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    let (old, older) = (month_back(27), month_back(30));
    // More than one page of rows (10,000 per query) in one month.
    let t1 = pending_month(&pool, old, 12_345).await;
    let t2 = pending_month(&pool, older, 3).await;
    let before = fingerprint(&pool, &format!("audit_pending.{t1}")).await;
    let run = run_archive(&app).await;
    assert_eq!(run.outcome, Outcome::Ok, "{:?}", run.steps);
    // Each month written, then verified and dropped at once; the verify and drop steps before
    // it had nothing left over from an earlier run.
    let write = run.step("write").unwrap();
    assert_eq!(write.counts, vec![("written", 2), ("verified", 2), ("dropped", 2), ("empty_left", 0)]);
    assert_eq!(run.step("verify").unwrap().counts, vec![("verified", 0)]);
    assert_eq!(run.step("drop").unwrap().counts, vec![("dropped", 0), ("locked_left", 0)]);
    assert!(!table_exists(&pool, &t1).await && !table_exists(&pool, &t2).await);

    // The ledger has what the store has.
    let rows = archive::ledger(&pool).await.unwrap();
    assert_eq!(rows.len(), 2);
    for r in &rows {
        assert_eq!((r.status.as_str(), r.dropped_at.is_some()), ("verified", true));
        let head = app.raw.head(&r.object_key).await.unwrap().unwrap();
        assert_eq!((Some(head.size as i64), head.crc32c.map(i64::from)), (r.bytes, r.crc32c));
        assert_eq!(r.rows_written, r.table_rows);
    }
    assert_eq!(rows.iter().find(|r| r.period == old).unwrap().table_rows, Some(12_345));

    // The object is the month: gzip'd CSV, header and every row, plain columns, values unchanged.
    let records = archived_csv(&app, old).await;
    assert_eq!(&records[0], &csv::StringRecord::from(archive::ARCHIVE_HEADER.to_vec()));
    assert_eq!(records.len(), 12_346);
    let ids: std::collections::BTreeSet<i64> = records[1..].iter().map(|r| r[0].parse().unwrap()).collect();
    assert_eq!(ids.len(), 12_345, "every id once");
    assert!(records[1..].iter().all(|r| r[2] == *"share.create" && r[1].starts_with(&old.to_string()[..7])));
    // Loaded back into PostgreSQL, it is the dropped table, value for value (NULL is not '').
    let restored = restore(&app, &pool, old).await;
    assert_eq!(fingerprint(&pool, &restored).await, before);

    // Each month is in the audit log: archived (with its figures) and dropped.
    let events: Vec<(String, String)> =
        sqlx::query_as("select kind, subject_id from audit_events where kind in ('archive.month', 'archive.drop') order by id").fetch_all(&pool).await.unwrap();
    assert_eq!(events.len(), 4, "{events:?}");

    // A second run has nothing to do and checks the two objects.
    let again = run_archive(&app).await;
    assert_eq!(again.outcome, Outcome::Ok);
    assert_eq!(again.step("objects").unwrap().counts, vec![("checked", 2), ("reread", 0)]);
    assert_eq!(again.step("write").unwrap().counts, vec![("written", 0), ("verified", 0), ("dropped", 0), ("empty_left", 0)]);
}

async fn an_upload_cut_in_the_middle_keeps_the_month_and_the_next_run_finishes(pool: PgPool, backend: Backend) {
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    let period = month_back(28);
    // Enough rows for several megabytes of gzip (more than one S3 part).
    let table = pending_month(&pool, period, 120_000).await;
    app.faults.cut_puts_after(64 * 1024);
    let run = run_archive(&app).await;
    assert_eq!(run.outcome, Outcome::Failed);
    let (status, error) = step(&run, "write");
    assert_eq!(status, StepStatus::Failed);
    assert!(error.unwrap().contains("went away"));
    // Not verified, not dropped: the ledger says failed, the table stays, nothing half-written.
    assert_eq!(ledger_status(&pool, period).await, Some(("failed".into(), false)));
    assert!(table_exists(&pool, &table).await);
    assert_eq!(app.raw.head(&archive::key_of(period)).await.unwrap(), None);
    assert_eq!(run.step("drop").unwrap().counts, vec![("dropped", 0), ("locked_left", 0)]);
    // One alert for the run, naming the failure.
    let alert = open_alert(&pool, "archive.failed").await.expect("the failed run raised the archive alert");
    assert!(alert.contains("write"), "{alert}");

    app.faults.heal();
    let run = run_archive(&app).await;
    assert_eq!(run.outcome, Outcome::Ok, "{:?}", run.steps);
    assert_eq!(ledger_status(&pool, period).await, Some(("verified".into(), true)));
    assert!(!table_exists(&pool, &table).await);
    assert_eq!(archived_csv(&app, period).await.len(), 120_001);
    assert_eq!(open_alert(&pool, "archive.failed").await, None, "a good run resolves the alert");
    let attempts: i32 = sqlx::query_scalar("select attempts from audit_partition_archives where period = $1").bind(period).fetch_one(&pool).await.unwrap();
    assert_eq!(attempts, 2);
}

async fn a_corrupted_object_is_not_dropped_and_the_next_run_writes_it_again(pool: PgPool, backend: Backend) {
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    let period = month_back(29);
    let table = pending_month(&pool, period, 2_000).await;
    app.faults.corrupt_puts();
    let run = run_archive(&app).await;
    assert_eq!(run.outcome, Outcome::Failed);
    // The upload itself succeeded; its verification, right after it, failed.
    let (status, error) = step(&run, "write");
    assert_eq!(status, StepStatus::Failed);
    assert!(error.unwrap().contains("CRC32C"), "same size, other bytes: the checksum finds it");
    assert_eq!(ledger_status(&pool, period).await, Some(("failed".into(), false)));
    assert!(table_exists(&pool, &table).await, "not dropped");
    assert!(open_alert(&pool, "archive.failed").await.is_some());

    app.faults.heal();
    let run = run_archive(&app).await;
    assert_eq!(run.outcome, Outcome::Ok, "{:?}", run.steps);
    assert_eq!(ledger_status(&pool, period).await, Some(("verified".into(), true)));
    assert!(!table_exists(&pool, &table).await);
    assert_eq!(archived_csv(&app, period).await.len(), 2_001, "the retry overwrote the same key");
}

async fn a_ledgered_object_deleted_behind_ebbs_back_fails_the_run_and_alerts(pool: PgPool, backend: Backend) {
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    let (gone, waiting) = (month_back(31), month_back(30));
    pending_month(&pool, gone, 10).await;
    assert_eq!(run_archive(&app).await.outcome, Outcome::Ok);
    app.remove_stored(&archive::key_of(gone)).await;
    let table = pending_month(&pool, waiting, 10).await;

    let run = run_archive(&app).await;
    assert_eq!(run.outcome, Outcome::Failed);
    let (status, error) = step(&run, "objects");
    assert_eq!(status, StepStatus::Failed);
    assert!(error.unwrap().contains("missing"));
    // The run stops there: nothing else is written or dropped while the store loses objects.
    for later in ["verify", "drop", "write"] {
        assert_eq!(run.step(later).unwrap().status, StepStatus::Stopped, "{later}");
    }
    assert!(table_exists(&pool, &table).await);
    let alert = open_alert(&pool, "archive.failed").await.expect("alert");
    assert!(alert.contains(&archive::period_label(gone)), "{alert}");
    // It stays failed (and alerting) until a person restores the object.
    assert_eq!(run_archive(&app).await.outcome, Outcome::Failed);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_drop_refuses_every_table_without_a_verified_ledger_row(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let period = month_back(27);
    let table = pending_month(&pool, period, 50).await;
    // No ledger row at all.
    assert_eq!(archive::drop_verified(&pool, &app.state.blobs, &table).await, Err(DropRefused::NotVerified(archive::period_label(period))));
    // A ledger row that is not `verified`.
    for status in ["written", "failed"] {
        sqlx::query("insert into audit_partition_archives (period, object_key, table_name, status, rows_written, bytes, crc32c) values ($1, $2, $3, $4, 50, 1, 1) on conflict (period) do update set status = $4")
            .bind(period)
            .bind(archive::key_of(period))
            .bind(&table)
            .bind(status)
            .execute(&pool)
            .await
            .unwrap();
        assert!(matches!(archive::drop_verified(&pool, &app.state.blobs, &table).await, Err(DropRefused::NotVerified(_))), "{status}");
        assert!(table_exists(&pool, &table).await);
    }
    // Verified, but the table changed since: refused, and marked failed to be written again.
    let stored = app.state.blobs.put(&archive::key_of(period), bytes::Bytes::from_static(b"x")).await.unwrap();
    sqlx::query("update audit_partition_archives set status = 'verified', verified_at = now(), rows_written = 49, table_rows = 49, bytes = $2, crc32c = $3 where period = $1")
        .bind(period)
        .bind(stored.size as i64)
        .bind(stored.crc32c as i64)
        .execute(&pool)
        .await
        .unwrap();
    assert!(matches!(archive::drop_verified(&pool, &app.state.blobs, &table).await, Err(DropRefused::Changed(_))));
    assert!(table_exists(&pool, &table).await);
    assert_eq!(ledger_status(&pool, period).await, Some(("failed".into(), false)));
    // A table that someone else holds is left for the next run (the lock wait is short).
    sqlx::query(
        "update audit_partition_archives set status = 'verified', failure = null, verified_at = now(), rows_written = 50, table_rows = 50 where period = $1",
    )
    .bind(period)
    .execute(&pool)
    .await
    .unwrap();
    let mut holder = pool.begin().await.unwrap();
    sqlx::query(&format!("lock table audit_pending.{table} in access share mode")).execute(&mut *holder).await.unwrap();
    let started = std::time::Instant::now();
    assert_eq!(archive::drop_verified(&pool, &app.state.blobs, &table).await, Err(DropRefused::Locked));
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    holder.rollback().await.unwrap();
    assert!(table_exists(&pool, &table).await);
    // With everything in order, it drops.
    assert_eq!(archive::drop_verified(&pool, &app.state.blobs, &table).await, Ok(period));
    assert!(!table_exists(&pool, &table).await);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_empty_pending_month_is_left_with_a_warning_and_no_ledger_row(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let period = month_back(27);
    let table = pending_month(&pool, period, 0).await;
    let run = run_archive(&app).await;
    assert_eq!(run.outcome, Outcome::Ok);
    assert_eq!(run.step("write").unwrap().counts, vec![("written", 0), ("verified", 0), ("dropped", 0), ("empty_left", 1)]);
    assert!(table_exists(&pool, &table).await);
    assert_eq!(ledger_status(&pool, period).await, None);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn unexpected_tables_in_pending_are_left_alone_and_reported(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    // No bounds constraint; and a name that does not match its bounds.
    sqlx::query("create table audit_pending.leftover (id bigint)").execute(&pool).await.unwrap();
    sqlx::query("insert into audit_pending.leftover values (1)").execute(&pool).await.unwrap();
    let real = pending_month(&pool, month_back(27), 5).await;
    sqlx::query(&format!("alter table audit_pending.{real} rename to audit_events_1999_01")).execute(&pool).await.unwrap();
    let run = run_archive(&app).await;
    assert_eq!(run.outcome, Outcome::Failed);
    let (_, error) = step(&run, "write");
    let error = error.unwrap();
    assert!(error.contains("leftover") && error.contains("audit_events_1999_01"), "{error}");
    assert!(table_exists(&pool, "leftover").await && table_exists(&pool, "audit_events_1999_01").await);
    let ledger: i64 = sqlx::query_scalar("select count(*) from audit_partition_archives").fetch_one(&pool).await.unwrap();
    assert_eq!(ledger, 0);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn too_few_partitions_ahead_stops_the_run_before_anything_is_archived(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let period = month_back(27);
    let table = pending_month(&pool, period, 5).await;
    // Upkeep is broken: the months ahead are gone.
    let ahead: Vec<String> = sqlx::query_scalar(
        "select c.relname::text from pg_inherits i join pg_class c on c.oid = i.inhrelid
         where i.inhparent = 'public.audit_events'::regclass and c.relname <> 'audit_events_default'
           and pg_get_expr(c.relpartbound, c.oid) > format('FOR VALUES FROM (''%s', to_char(date_trunc('month', now()) + interval '1 month', 'YYYY-MM-DD'))",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert!(ahead.len() >= 2, "{ahead:?}");
    for t in &ahead {
        sqlx::query(&format!("drop table {t}")).execute(&pool).await.unwrap();
    }
    let run = run_archive(&app).await;
    assert_eq!(run.outcome, Outcome::Failed);
    let (status, error) = step(&run, "partitions");
    assert_eq!(status, StepStatus::Failed);
    assert!(error.unwrap().contains("partitions ahead"));
    for later in ["objects", "write", "verify", "drop"] {
        assert_eq!(run.step(later).unwrap().status, StepStatus::Stopped, "{later}");
    }
    assert!(table_exists(&pool, &table).await);
    assert_eq!(ledger_status(&pool, period).await, None);
    assert!(open_alert(&pool, "archive.failed").await.unwrap().contains("partitions ahead"));
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn stuck_and_old_export_requests_are_cleaned_up(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let insert = |status: &'static str, requested: &'static str, started: Option<&'static str>| {
        let pool = pool.clone();
        async move {
            sqlx::query_scalar::<_, uuid::Uuid>(
                "insert into audit_export_requests (id, range_from, range_to, status, requested_at, started_at)
                 values (gen_random_uuid(), now() - interval '2 days', now(), $1, now() - $2::interval, now() - $3::interval) returning id",
            )
            .bind(status)
            .bind(requested)
            .bind(started)
            .fetch_one(&pool)
            .await
            .unwrap()
        }
    };
    let stuck = insert("running", "3 hours", Some("3 hours")).await;
    let running = insert("running", "1 minute", Some("1 minute")).await;
    let old = insert("failed", "91 days", None).await;
    let recent = insert("failed", "89 days", None).await;
    let run = run_archive(&app).await;
    assert_eq!(run.step("requests").unwrap().counts, vec![("requests_deleted", 1), ("stuck_failed", 1)]);
    let status = |id: uuid::Uuid| {
        let pool = pool.clone();
        async move { sqlx::query_scalar::<_, String>("select status from audit_export_requests where id = $1").bind(id).fetch_optional(&pool).await.unwrap() }
    };
    assert_eq!(status(stuck).await.as_deref(), Some("failed"));
    assert_eq!(status(running).await.as_deref(), Some("running"));
    assert_eq!(status(old).await, None);
    assert_eq!(status(recent).await.as_deref(), Some("failed"));
}

/// `ebb maintenance run audit_archive` with nothing pending, as an operator runs it: ok, no
/// warning or error in its log, and the default partition's count in it.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_empty_run_passes_end_to_end_with_no_warnings_and_the_default_count_logged(pool: PgPool) {
    let dir = tempfile::tempdir().unwrap();
    let out = crash::ebb(&pool, dir.path(), &["maintenance", "run", "audit_archive", "--force"], &[]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("audit_archive: completed"), "{stdout}");
    let lines: Vec<serde_json::Value> = stderr.lines().chain(stdout.lines()).filter_map(|l| serde_json::from_str(l).ok()).collect();
    assert!(!lines.is_empty(), "JSON log lines: {stderr}");
    let bad: Vec<&serde_json::Value> = lines.iter().filter(|l| matches!(l["level"].as_str(), Some("WARN" | "ERROR"))).collect();
    assert!(bad.is_empty(), "warnings or errors: {bad:?}");
    assert!(
        lines.iter().any(|l| l["fields"]["default_rows"].as_u64() == Some(0) && l["fields"]["message"].as_str().is_some_and(|m| m.contains("audit archive"))),
        "the default partition's count is in the log: {stderr}"
    );
}

/// Running the real binary against a test's database, and killing it.
pub mod crash {
    use std::process::{Command, Stdio};

    use sqlx::PgPool;

    /// The test database's URL (the server's `DATABASE_URL` with this test's database).
    pub fn database_url(db: &str) -> String {
        let base = std::env::var("DATABASE_URL").expect("DATABASE_URL is set for the tests");
        let mut url = url::Url::parse(&base).unwrap();
        url.set_path(db);
        url.to_string()
    }

    /// `ebb ARGS` on the test's database and folder, JSON logs, `env` added.
    pub fn ebb(pool: &PgPool, dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Command {
        let db = pool.connect_options().get_database().expect("a test database").to_owned();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ebb"));
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("DATABASE_URL", database_url(&db))
            .env("EBB_STORAGE_DIR", dir)
            .env("EBB_LOG_FORMAT", "json")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd
    }
}

#[cfg(feature = "failpoints")]
mod killed {
    //! SIGKILL at three points of a run; the next run completes with nothing lost and nothing
    //! dropped unverified.

    use std::time::{Duration, Instant};

    use super::*;

    #[derive(Clone, Copy, Debug)]
    enum Point {
        /// The object is uploaded; the ledger knows nothing yet.
        AfterUpload,
        /// The month is verified in the ledger; its table is not dropped.
        BeforeDrop,
        /// Inside the drop's transaction, after `drop table`, before the commit.
        InDrop,
    }

    impl Point {
        fn name(self) -> &'static str {
            match self {
                Point::AfterUpload => "archive-after-upload",
                Point::BeforeDrop => "archive-before-drop",
                Point::InDrop => "archive-drop",
            }
        }

        async fn reached(self, app: &TestApp, period: Date) -> bool {
            let pool = &app.state.pool;
            match self {
                Point::AfterUpload => app.raw.head(&archive::key_of(period)).await.unwrap().is_some() && ledger_status(pool, period).await.is_none(),
                Point::BeforeDrop => ledger_status(pool, period).await == Some(("verified".into(), false)),
                Point::InDrop => sqlx::query_scalar::<_, bool>(
                    "select exists (select 1 from pg_stat_activity where state = 'idle in transaction' and query like '%insert into audit_events%')
                     and exists (select 1 from pg_locks l join pg_class c on c.oid = l.relation where c.relname = 'audit_partition_archives' and l.mode = 'RowExclusiveLock' and l.pid <> pg_backend_pid())",
                )
                .fetch_one(pool)
                .await
                .unwrap(),
            }
        }
    }

    /// Starts `ebb maintenance run audit_archive` paused at `point`, kills it there with SIGKILL,
    /// then checks that the next run archives and drops the month, with nothing lost.
    async fn kill_at(pool: PgPool, point: Point) {
        let app = spawn_app(pool.clone()).await;
        let period = month_back(28);
        let table = pending_month(&pool, period, 5_000).await;
        let failpoints = format!("{}=sleep(120000)", point.name());
        let mut child = crash::ebb(&pool, app.storage.path(), &["maintenance", "run", "audit_archive", "--force"], &[("FAILPOINTS", &failpoints)])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while !point.reached(&app, period).await {
            assert!(start.elapsed() < Duration::from_secs(60), "the run never reached {point:?}");
            assert!(child.try_wait().unwrap().is_none(), "the run ended before {point:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // Paused there (the point holds it), not merely passing through.
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(child.try_wait().unwrap().is_none() && point.reached(&app, period).await, "the run did not stay at {point:?}");
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        // Nothing dropped: the table is there, whatever the ledger says.
        assert!(table_exists(&pool, &table).await, "killed at {point:?}: the month must still be in the database");
        assert_ne!(ledger_status(&pool, period).await.map(|(_, dropped)| dropped), Some(true));

        let run = run_archive(&app).await;
        assert_eq!(run.outcome, Outcome::Ok, "{:?}", run.steps);
        assert_eq!(ledger_status(&pool, period).await, Some(("verified".into(), true)));
        assert!(!table_exists(&pool, &table).await);
        assert_eq!(archived_csv(&app, period).await.len(), 5_001, "nothing lost");

        // The killed run's record counts what it committed, each count saved with its work:
        // nothing before the ledger row; the month written and verified once it was; no drop.
        let steps: serde_json::Value =
            sqlx::query_scalar("select steps from maintenance_runs where job = 'audit_archive' and outcome = 'interrupted'").fetch_one(&pool).await.unwrap();
        let count = |name: &str| {
            steps
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["step"] == "write")
                .and_then(|s| s["counts"].as_array().unwrap().iter().find(|c| c[0] == name))
                .and_then(|c| c[1].as_i64())
        };
        let committed = if matches!(point, Point::AfterUpload) { None } else { Some(1) };
        assert_eq!((count("written"), count("verified"), count("dropped").filter(|n| *n > 0)), (committed, committed, None), "killed at {point:?}: {steps}");
    }

    #[sqlx::test(migrator = "server::MIGRATOR")]
    async fn killed_between_upload_and_verify(pool: PgPool) {
        kill_at(pool, Point::AfterUpload).await;
    }

    #[sqlx::test(migrator = "server::MIGRATOR")]
    async fn killed_between_verify_and_drop(pool: PgPool) {
        kill_at(pool, Point::BeforeDrop).await;
    }

    #[sqlx::test(migrator = "server::MIGRATOR")]
    async fn killed_during_the_drop(pool: PgPool) {
        kill_at(pool, Point::InDrop).await;
    }
}
