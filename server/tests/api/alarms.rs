//! Alarms that hold in the large or unlucky case (issue 29): an alert is raised whatever its
//! details, an archive backlog drains in a bounded number of runs, the archive pages by the
//! table's key, a restored object without a stored checksum verifies by its bytes, and a run
//! stopped by a failed check says who must act.

use std::time::Duration;

use app::audit::archive;
use app::jobs::{Budget, Outcome, StepStatus};
use app::storage::BlobStore;
use sqlx::PgPool;

use crate::archive::{ledger_status, month_back, pending_month, run_archive, table_exists};
use crate::helpers::*;

async fn open_alert(pool: &PgPool, kind: &str) -> Option<(String, String)> {
    sqlx::query_as("select message, details from alerts where kind = $1 and resolved_at is null").bind(kind).fetch_optional(pool).await.unwrap()
}

on_both_backends!(twenty_failing_months_still_raise_one_alert_with_every_month_in_its_details,);

/// Twenty months fail to upload in one run: the alert is raised (banner, event), its headline
/// short and stable, and every month is in its details. (Before, one message of every failure
/// passed the column's 1,000 characters and the insert failed: no alert at all.)
async fn twenty_failing_months_still_raise_one_alert_with_every_month_in_its_details(pool: PgPool, backend: Backend) {
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    let months: Vec<_> = (27..47).map(month_back).collect();
    for m in &months {
        pending_month(&pool, *m, 3).await;
    }
    app.faults.fail(app::storage::faults::Op::Put);
    let run = run_archive(&app).await;
    assert_eq!(run.outcome, Outcome::Failed, "{:?}", run.steps);
    let (headline, details) = open_alert(&pool, "archive.failed").await.expect("the alert was raised");
    assert!(headline.chars().count() <= 600, "a short headline: {headline}");
    assert!(headline.contains("write") && headline.contains("next run retries"), "{headline}");
    for m in &months {
        assert!(details.contains(&archive::period_label(*m)), "{} missing from the details: {details}", archive::period_label(*m));
    }
    let events: i64 = sqlx::query_scalar("select count(*) from audit_events where kind = 'alert.raise' and subject_id = 'archive.failed:audit_archive'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(events, 1, "the raise is an event");
    for m in &months {
        assert!(table_exists(&pool, &format!("audit_events_{:04}_{:02}", m.year(), m.month() as u8)).await, "nothing dropped");
    }
}

/// A first roll-out (many months detached at once) with a budget far too small: every run moves
/// the backlog (at least one month, verified and dropped), a cut-off run raises `archive.behind`,
/// and the backlog is gone in a bounded number of runs, which resolves the alert.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_backlog_drains_in_a_bounded_number_of_runs_and_says_so_meanwhile(pool: PgPool) {
    let app = spawn_app_with(pool.clone(), &[], |state| {
        let mut jobs = state.jobs().clone();
        jobs.configure(archive::JOB, |job| job.budget = Budget { rows_per_step: 1_000, time: Duration::from_millis(300) });
        state.set_jobs(std::sync::Arc::new(jobs));
    })
    .await;
    let months: Vec<_> = (27..32).map(month_back).collect();
    for m in &months {
        pending_month(&pool, *m, 40_000).await;
    }
    let mut runs = 0;
    let mut saw_behind = false;
    loop {
        let run = run_archive(&app).await;
        runs += 1;
        assert_ne!(run.outcome, Outcome::Failed, "{:?}", run.steps);
        let written = run.step("write").unwrap().counts.iter().find(|(k, _)| *k == "written").map_or(0, |(_, n)| *n);
        let settled = run.step("verify").unwrap().counts.iter().chain(&run.step("drop").unwrap().counts).map(|(_, n)| *n).sum::<u64>();
        assert!(written > 0 || settled > 0 || run.outcome == Outcome::Ok, "run {runs} moved nothing: {:?}", run.steps);
        if run.outcome == Outcome::CutOff {
            saw_behind |= open_alert(&pool, "archive.behind").await.is_some();
        }
        if run.outcome == Outcome::Ok {
            break;
        }
        assert!(runs <= months.len() + 1, "the backlog did not drain in {runs} runs");
    }
    assert!(runs > 1, "the budget was meant to cut runs off");
    assert!(saw_behind, "a run cut off with months left raised archive.behind");
    for m in &months {
        assert_eq!(ledger_status(&pool, *m).await, Some(("verified".into(), true)), "{m}");
    }
    assert_eq!(open_alert(&pool, "archive.behind").await, None, "the drained backlog resolved it");
}

/// Ids are not unique in the audit log (its key is `(id, occurred_at)`): two events sharing an
/// id across a page edge (10,000 rows) are both archived, and the month verifies.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn two_events_sharing_an_id_at_a_page_edge_are_both_archived(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let period = month_back(28);
    let table = pending_month(&pool, period, archive::PAGE_ROWS).await;
    // The 10,000th event by id gets a twin a second later: the page edge falls between them.
    let edge: i64 = sqlx::query_scalar(&format!("select id from audit_pending.{table} order by id offset {} limit 1", archive::PAGE_ROWS - 1))
        .fetch_one(&pool)
        .await
        .unwrap();
    sqlx::query(&format!(
        "insert into audit_pending.{table} (id, occurred_at, kind, subject_type, subject_id)
         select id, occurred_at + interval '1 second', kind, subject_type, 'twin' from audit_pending.{table} where id = $1"
    ))
    .bind(edge)
    .execute(&pool)
    .await
    .unwrap();
    let run = run_archive(&app).await;
    assert_eq!(run.outcome, Outcome::Ok, "{:?}", run.steps);
    assert_eq!(ledger_status(&pool, period).await, Some(("verified".into(), true)));
    let rows: Option<i64> =
        sqlx::query_scalar("select table_rows from audit_partition_archives where period = $1").bind(period).fetch_one(&pool).await.unwrap();
    assert_eq!(rows, Some(archive::PAGE_ROWS + 1));
}

/// An archived object restored byte for byte by a tool that sends no CRC32C (the store keeps no
/// checksum for it) verifies by its bytes; one whose bytes differ still fails.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_restored_object_without_a_stored_checksum_is_accepted_when_its_bytes_verify(pool: PgPool) {
    let store = tempfile::tempdir().unwrap();
    let period = month_back(29);
    let key = archive::key_of(period);
    let bytes = bytes::Bytes::from_static(b"the archived month, byte for byte");
    // A store that keeps no checksum: what `aws s3 cp` leaves on S3 by default.
    let plain = NoChecksum(app::storage::LocalDirStore::new(store.path()));
    plain.put(&key, bytes.clone()).await.unwrap();
    assert_eq!(plain.head(&key).await.unwrap().unwrap().crc32c, None);
    let crc = i64::from(crc32c::crc32c(&bytes));
    assert_eq!(archive::object_problem(&plain, &key, bytes.len() as i64, crc, false).await.unwrap(), None);
    let other = archive::object_problem(&plain, &key, bytes.len() as i64, crc ^ 1, false).await.unwrap();
    assert!(other.is_some_and(|why| why.contains("reads back")), "other bytes still fail");
    plain.0.put(&key, bytes::Bytes::from_static(b"the archived month, byte for bytE")).await.unwrap();
    assert!(archive::object_problem(&plain, &key, bytes.len() as i64, crc, false).await.unwrap().is_some(), "same size, other bytes");
    let _ = pool;
}

/// A store that reports no checksum for its objects (as S3 does for objects put without one).
struct NoChecksum(app::storage::LocalDirStore);

impl BlobStore for NoChecksum {
    fn put_stream<'a>(
        &'a self,
        key: &'a str,
        body: app::storage::ByteStream<'a>,
        max_len: u64,
    ) -> futures::future::BoxFuture<'a, Result<app::storage::Stored, app::storage::BlobError>> {
        self.0.put_stream(key, body, max_len)
    }
    fn head<'a>(&'a self, key: &'a str) -> futures::future::BoxFuture<'a, Result<Option<app::storage::Head>, app::storage::BlobError>> {
        Box::pin(async move { Ok(self.0.head(key).await?.map(|h| app::storage::Head { crc32c: None, ..h })) })
    }
    fn open<'a>(&'a self, key: &'a str) -> futures::future::BoxFuture<'a, Result<Option<app::storage::Blob>, app::storage::BlobError>> {
        self.0.open(key)
    }
    fn delete<'a>(&'a self, key: &'a str) -> futures::future::BoxFuture<'a, Result<(), app::storage::BlobError>> {
        self.0.delete(key)
    }
    fn remove_abandoned_uploads(&self, age: Duration) -> futures::future::BoxFuture<'_, Result<u64, app::storage::BlobError>> {
        self.0.remove_abandoned_uploads(age)
    }
    fn list<'a>(
        &'a self,
        ns: app::storage::Namespace,
        after: Option<&'a str>,
        limit: usize,
    ) -> futures::future::BoxFuture<'a, Result<app::storage::Listing, app::storage::BlobError>> {
        self.0.list(ns, after, limit)
    }
}

/// A run stopped by a failed check names the check on every step it kept from running (not "the
/// budget was spent"), and when retrying cannot help — an archived object of a dropped month is
/// gone — the alert says a person must act instead of "the next run retries".
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_run_stopped_by_a_missing_object_says_a_person_must_act(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let gone = month_back(31);
    pending_month(&pool, gone, 10).await;
    assert_eq!(run_archive(&app).await.outcome, Outcome::Ok);
    app.remove_stored(&archive::key_of(gone)).await;
    let run = run_archive(&app).await;
    assert_eq!(run.outcome, Outcome::Failed);
    for later in ["verify", "drop", "write"] {
        let s = run.step(later).unwrap();
        assert_eq!(s.status, StepStatus::Stopped, "{later}");
        assert!(s.error.as_deref().is_some_and(|e| e.contains("objects")), "{later}: {:?}", s.error);
    }
    let (headline, details) = open_alert(&pool, "archive.failed").await.expect("alert");
    assert!(headline.contains("A person must act") && !headline.contains("next run retries"), "{headline}");
    assert!(details.contains(&archive::period_label(gone)) && details.contains("restore"), "{details}");
    // What the CLI prints says the same.
    let mut out = Vec::new();
    let _ = server::maintenance::run_now(&app.state, &[archive::JOB.to_string()], true, &mut out).await;
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("step objects stopped the run") && !out.contains("budget"), "{out}");
}

/// Existence checks are cheap: on the local folder `head` gives the size and the CRC32C recorded
/// when the object was written (as S3's HEAD does), without reading it. The bytes are re-read
/// on a rolling budget: an object changed in place passes the daily cheap check until its
/// re-read is due, and then fails the run.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn archived_objects_are_checked_cheaply_every_day_and_reread_when_due(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let period = month_back(30);
    pending_month(&pool, period, 2_000).await;
    assert_eq!(run_archive(&app).await.outcome, Outcome::Ok);
    // Bit rot in place: same size, one byte changed, the recorded checksum left as it was.
    let path = app.storage.path().join(archive::key_of(period));
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x55;
    {
        use std::io::{Seek, Write};
        let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        f.seek(std::io::SeekFrom::Start(0)).unwrap();
        f.write_all(&bytes).unwrap();
    }
    let key = archive::key_of(period);
    let head = app.raw.head(&key).await.unwrap().unwrap();
    let (size, crc) = app.raw.read_back(&key).await.unwrap().unwrap();
    assert_eq!(head.size, size);
    assert_ne!(head.crc32c, Some(crc), "head gives the recorded checksum: it did not read the file");
    // Re-read less than EBB_ARCHIVE_REREAD_DAYS ago: today's check is the cheap one.
    let run = run_archive(&app).await;
    assert_eq!(run.outcome, Outcome::Ok, "{:?}", run.steps);
    assert_eq!(run.step("objects").unwrap().counts, vec![("checked", 1), ("reread", 0)]);
    // Due: its bytes are read back, and the change is found.
    sqlx::query("update audit_partition_archives set content_checked_at = now() - interval '31 days' where period = $1")
        .bind(period)
        .execute(&pool)
        .await
        .unwrap();
    let run = run_archive(&app).await;
    assert_eq!(run.outcome, Outcome::Failed);
    let objects = run.step("objects").unwrap();
    assert!(objects.error.as_deref().is_some_and(|e| e.contains("reads back")), "{:?}", objects.error);
}

/// The retention report costs what is past each promise, not the tables' size: a large table's
/// total is the planner's estimate (said so), while what is past its promise and what is held
/// are counted exactly, through indexes.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_retention_report_counts_what_is_past_its_promise_exactly_and_estimates_large_totals(pool: PgPool) {
    let storage = tempfile::tempdir().unwrap();
    let config = test_config(&["--storage-dir", storage.path().to_str().unwrap()]);
    let state = server::build_state(&config, pool.clone()).await.unwrap();
    sqlx::query(
        "insert into inquiries (name, email, message, created_at)
         select 'V', 'v' || i || '@example.org', 'm', now() - interval '1 day' from generate_series(1, 150000) i",
    )
    .execute(&pool)
    .await
    .unwrap();
    // Past the 180-day promise: 7, of which 2 held (one by its flag, one by its sender's hold).
    sqlx::query("insert into inquiries (name, email, message, created_at, held) select 'Old', 'old' || i || '@example.org', 'm', now() - interval '400 days', i = 1 from generate_series(1, 7) i")
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("insert into legal_holds (email, reason) values ('old2@example.org', 'Case 2026-17: keep until decided')").execute(&pool).await.unwrap();
    sqlx::query("analyze inquiries").execute(&pool).await.unwrap();
    let report = app::retention::report::compute(&state).await.unwrap();
    let inquiries = report.kinds.iter().find(|k| k.kind == "inquiries").unwrap();
    assert!(inquiries.count_estimated, "a large table's total is estimated");
    assert!((140_000..=160_000).contains(&inquiries.count), "{}", inquiries.count);
    assert_eq!((inquiries.past_promise, inquiries.held), (5, 2), "past and held are exact");
    // A small table is counted exactly.
    let invites = report.kinds.iter().find(|k| k.kind == "invites").unwrap();
    assert!(!invites.count_estimated);
}

/// `ebb maintenance run` while the store is unusable (its folder gone) exits 1 as before, and
/// now also records a failed run of each job asked for and raises their alerts: an operator who
/// drives jobs from their own scheduler is told on the dashboard too.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_cli_run_that_cannot_start_is_recorded_and_alerts(pool: PgPool) {
    let gone = tempfile::tempdir().unwrap().path().join("unmounted");
    let out = crate::archive::crash::ebb(&pool, &gone, &["maintenance", "run", "prune", "audit_archive"], &[]).output().unwrap();
    assert!(!out.status.success(), "exit 1");
    let runs: Vec<(String, String, String)> = sqlx::query_as("select job, trigger, outcome from maintenance_runs order by job").fetch_all(&pool).await.unwrap();
    assert_eq!(
        runs,
        [("audit_archive".into(), "cli".into(), "failed".into()), ("prune".into(), "cli".into(), "failed".into())],
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (headline, details) = open_alert(&pool, "archive.failed").await.expect("the archive's own alert");
    assert!(headline.contains("A person must act") && details.contains("storage"), "{headline} / {details}");
    assert!(open_alert(&pool, "job.failing").await.is_some(), "prune has no alert of its own: job.failing at once");
}

/// An upload while the store's marker is missing (an unmounted folder) is refused with 503 and
/// says what is wrong — not a 500 "Internal" — and the admins are alerted.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_upload_while_the_storage_marker_is_missing_is_503_and_alerts(pool: PgPool) {
    let cookie = crate::shares::admin_cookie(&pool).await;
    let app = spawn_app(pool.clone()).await;
    std::fs::remove_file(app.storage.path().join(app::storage::MARKER_KEY)).unwrap();
    let res = crate::shares::upload(&app, &cookie, crate::shares::form("a.pdf", vec![7; 1000], "24", "")).await;
    assert_eq!(res.status(), 503);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body, serde_json::json!("StorageUnavailable"));
    assert!(open_alert(&pool, "storage.marker_missing").await.is_some());
    let shares: i64 = sqlx::query_scalar("select count(*) from shares").fetch_one(&pool).await.unwrap();
    assert_eq!(shares, 0, "nothing kept");
}

/// A share page request runs the share GC through its own trigger (after the response, on the
/// small traffic budget), and the expired share's file goes.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_share_page_request_runs_the_share_gc_through_its_trigger(pool: PgPool) {
    let app = spawn_app_with(pool.clone(), &["--after-response-jobs", "false"], |_| {}).await;
    let (id, key) = expired_share(&app).await;
    // The share page's data (what GET /s/{token} renders with) for an unknown link.
    let res = call_form(&app, "/api/share", None, &[("token", &"A".repeat(43))]).await;
    assert_eq!(res.status(), 404, "an unknown link");
    app.state.background.settle().await;
    let triggers: Vec<String> = sqlx::query_scalar("select trigger from maintenance_runs where job = 'share_gc'").fetch_all(&pool).await.unwrap();
    assert_eq!(triggers, ["shares"]);
    let status: String = sqlx::query_scalar("select status from shares where id = $1").bind(id).fetch_one(&pool).await.unwrap();
    assert_eq!(status, "purged");
    assert!(app.read_stored(&key).await.is_none(), "the file went first");
}

/// A sign-in attempt runs prune through its own trigger (seed 000: cleanup rides on traffic).
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_sign_in_attempt_runs_prune_through_its_trigger(pool: PgPool) {
    let app = spawn_app_with(pool.clone(), &["--after-response-jobs", "false"], |_| {}).await;
    sqlx::query("insert into inquiries (name, email, message, created_at) values ('Old', 'old@example.org', 'm', now() - interval '400 days')")
        .execute(&pool)
        .await
        .unwrap();
    let res = call_form(&app, "/api/auth/signin/start", None, &[]).await;
    assert_eq!(res.status(), 200, "{}", res.text().await.unwrap());
    app.state.background.settle().await;
    let triggers: Vec<String> = sqlx::query_scalar("select trigger from maintenance_runs where job = 'prune'").fetch_all(&pool).await.unwrap();
    assert_eq!(triggers, ["signin"]);
    assert_eq!(inquiry_count(&pool).await, 0, "the old inquiry was pruned");
}
