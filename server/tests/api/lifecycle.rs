//! The lifecycle engine from outside: two instances, a swapped storage folder, reconciliation,
//! the after-response check, run records, alerts, metrics and the status of errors.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use app::jobs::{run_job, Budget, Job, Registry, RunOutcome, Step, StepError, StepReport, Trigger};
use app::storage::BlobStore;
use sqlx::PgPool;

use crate::helpers::*;

async fn status_of(pool: &PgPool, id: i64) -> String {
    sqlx::query_scalar("select status from shares where id = $1").bind(id).fetch_one(pool).await.unwrap()
}

async fn open_alerts(pool: &PgPool, kind: &str) -> i64 {
    sqlx::query_scalar("select count(*) from alerts where kind = $1 and resolved_at is null").bind(kind).fetch_one(pool).await.unwrap()
}

async fn run_gc(app: &TestApp) -> String {
    let mut out = Vec::new();
    let _ = server::maintenance::run_now(&app.state, &["share_gc".into()], true, &mut out).await;
    String::from_utf8(out).unwrap()
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_storage_folder_swapped_for_an_empty_one_purges_nothing_and_raises_an_alert_until_restored(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let mut shares = Vec::new();
    for _ in 0..10 {
        shares.push(expired_share(&app).await);
    }
    // The operator's bad day: the folder is renamed away and an empty one takes its place (as an
    // unmounted mount point looks).
    let real = app.storage.path().with_extension("real");
    std::fs::rename(app.storage.path(), &real).unwrap();
    std::fs::create_dir(app.storage.path()).unwrap();
    let out = run_gc(&app).await;
    for (id, _) in &shares {
        assert_eq!(status_of(&pool, *id).await, "active", "nothing counts as deleted: {out}");
    }
    assert_eq!(open_alerts(&pool, "storage.marker_missing").await, 1);
    let attempts: i64 = sqlx::query_scalar("select coalesce(sum(purge_attempts), 0) from shares").fetch_one(&pool).await.unwrap();
    assert_eq!(attempts, 0, "no share is blamed for the missing store");
    // Uploads are refused too (they would be lost).
    assert!(app.state.blobs.verify_marker().await.is_err());

    // Restored: the next run purges them, deletes the files and resolves the alert.
    std::fs::remove_dir(app.storage.path()).unwrap();
    std::fs::rename(&real, app.storage.path()).unwrap();
    run_gc(&app).await;
    for (id, key) in &shares {
        assert_eq!(status_of(&pool, *id).await, "purged");
        assert!(!app.storage.path().join(key).exists());
    }
    assert_eq!(open_alerts(&pool, "storage.marker_missing").await, 0, "resolved when the condition cleared");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_instance_started_on_an_empty_folder_while_shares_exist_refuses_to_start(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    for _ in 0..3 {
        expired_share(&app).await;
    }
    let empty = tempfile::tempdir().unwrap();
    let config = test_config(&["--storage-dir", empty.path().to_str().unwrap()]);
    let state = server::build_state(&config, pool.clone()).await.unwrap();
    let err = server::check_storage(&state, &config).await.unwrap_err();
    assert!(err.contains("EBB_STORAGE_DIR") && err.contains("marker"), "{err}");
    // And a folder that holds another installation's marker is refused as well.
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join(app::storage::MARKER_KEY), "another-installation").unwrap();
    let config = test_config(&["--storage-dir", other.path().to_str().unwrap()]);
    let err = server::check_storage(&server::build_state(&config, pool.clone()).await.unwrap(), &config).await.unwrap_err();
    assert!(err.contains("another Ebb installation"), "{err}");
}

/// A store that was written to once is never re-adopted empty, even when no live share or
/// verified month points at it now (every share purged, a month only written, an export file):
/// an unmounted folder must not become "the" store.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_empty_folder_is_refused_once_objects_were_ever_written(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    expired_share(&app).await;
    sqlx::query("update shares set status = 'purged', purged_at = now()").execute(&pool).await.unwrap();
    assert_eq!(app::shares::db::live_count(&pool).await.unwrap(), 0, "nothing live points at the store");
    let empty = tempfile::tempdir().unwrap();
    let config = test_config(&["--storage-dir", empty.path().to_str().unwrap()]);
    let err = server::check_storage(&server::build_state(&config, pool.clone()).await.unwrap(), &config).await.unwrap_err();
    assert!(err.contains("marker is missing") && err.contains("storage_marker_id"), "{err}");
    assert!(!empty.path().join(app::storage::MARKER_KEY).exists(), "the empty folder was not adopted");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn reconciliation_deletes_old_files_no_share_points_to_and_reports_missing_files(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let dir = app.storage.path().to_owned();
    std::fs::create_dir_all(dir.join("shares")).unwrap();
    // A file left by a crash between storing an upload and committing its row, two days ago.
    let orphan = app::storage::new_key(app::storage::Namespace::Shares);
    std::fs::write(dir.join(&orphan), b"orphan").unwrap();
    let two_days_ago = std::time::SystemTime::now() - Duration::from_secs(2 * 86_400);
    std::fs::File::options().write(true).open(dir.join(&orphan)).unwrap().set_modified(two_days_ago).unwrap();
    // One that may still be an upload in progress (young), and a live share's file (old).
    let young = app::storage::new_key(app::storage::Namespace::Shares);
    std::fs::write(dir.join(&young), b"young").unwrap();
    let key = app::storage::new_key(app::storage::Namespace::Shares);
    std::fs::write(dir.join(&key), b"live").unwrap();
    std::fs::File::options().write(true).open(dir.join(&key)).unwrap().set_modified(two_days_ago).unwrap();
    sqlx::query(
        "insert into shares (token_hash, blob_key, file_name, size_bytes, content_type, expires_at)
         values ($1, $2, 'live.pdf', 4, 'application/pdf', now() + interval '1 day')",
    )
    .bind(vec![1u8; 32])
    .bind(&key)
    .execute(&pool)
    .await
    .unwrap();
    // A live share whose file is gone.
    sqlx::query(
        "insert into shares (token_hash, blob_key, file_name, size_bytes, content_type, expires_at)
         values ($1, $2, 'gone.pdf', 4, 'application/pdf', now() + interval '1 day')",
    )
    .bind(vec![2u8; 32])
    .bind(app::storage::new_key(app::storage::Namespace::Shares))
    .execute(&pool)
    .await
    .unwrap();

    let out = run_gc(&app).await;
    assert!(!dir.join(&orphan).exists(), "the old orphan is deleted: {out}");
    assert!(dir.join(&young).exists(), "a young file may be an upload in progress");
    assert!(dir.join(&key).exists(), "a live share's file stays");
    assert!(dir.join(app::storage::MARKER_KEY).exists(), "the marker is never reconciled");
    let steps: serde_json::Value =
        sqlx::query_scalar("select steps from maintenance_runs where job = 'share_gc' and trigger = 'cli'").fetch_one(&pool).await.unwrap();
    let reconcile = steps.as_array().unwrap().iter().find(|s| s["step"] == "reconcile").unwrap();
    let counts: std::collections::HashMap<String, u64> =
        reconcile["counts"].as_array().unwrap().iter().map(|p| (p[0].as_str().unwrap().to_owned(), p[1].as_u64().unwrap())).collect();
    assert_eq!(counts["orphans_deleted"], 1, "{reconcile}");
    assert_eq!(counts["files_missing"], 1, "{reconcile}");
    assert_eq!(open_alerts(&pool, "share.file_missing").await, 1, "the missing file is an alert");
}

/// A job that records how many of its runs overlap, and runs longer than its interval.
fn slow_job(active: Arc<AtomicU64>, max_active: Arc<AtomicU64>, runs: Arc<AtomicU64>) -> Job {
    Job::new("slow", "Slow", "slower than its interval", "slow_job_at", Duration::from_millis(10))
        .budget(Budget { rows_per_step: 1, time: Duration::from_secs(10) })
        .step(Step::new("sleep", move |_ctx| {
            let (active, max_active, runs) = (active.clone(), max_active.clone(), runs.clone());
            async move {
                let now = active.fetch_add(1, Ordering::SeqCst) + 1;
                max_active.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(300)).await;
                active.fetch_sub(1, Ordering::SeqCst);
                runs.fetch_add(1, Ordering::SeqCst);
                Ok(StepReport::rows("slept", 1))
            }
        }))
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn two_instances_run_a_job_slower_than_its_interval_one_at_a_time(pool: PgPool) {
    let (active, max_active, runs) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let instance = |pool: PgPool| {
        let config = test_config(&[]);
        let job = slow_job(active.clone(), max_active.clone(), runs.clone());
        async move {
            let mut state = server::build_state(&config, pool).await.unwrap();
            state.set_jobs(Arc::new(Registry::new(vec![job])));
            state
        }
    };
    let (a, b) = (instance(pool.clone()).await, instance(pool.clone()).await);
    let mut tasks = Vec::new();
    for i in 0..40 {
        let state = if i % 2 == 0 { a.clone() } else { b.clone() };
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(i * 40)).await;
            let job = state.jobs().get("slow").unwrap().clone();
            matches!(run_job(&state, &job, Trigger::Ticker, false).await.unwrap(), RunOutcome::Ran(_))
        }));
    }
    let ran = futures::future::join_all(tasks).await.into_iter().filter(|r| *r.as_ref().unwrap()).count() as u64;
    assert_eq!(max_active.load(Ordering::SeqCst), 1, "never two runs at once");
    assert!(ran >= 3, "the job ran again after each run ended ({ran} runs)");
    assert_eq!(ran, runs.load(Ordering::SeqCst));
    let recorded: i64 = sqlx::query_scalar("select count(*) from maintenance_runs where job = 'slow'").fetch_one(&pool).await.unwrap();
    assert_eq!(recorded as u64, ran, "every run is recorded");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_run_cut_off_by_its_time_budget_records_which_steps_it_finished(pool: PgPool) {
    let config = test_config(&[]);
    let mut state = server::build_state(&config, pool.clone()).await.unwrap();
    let job = Job::new("budgeted", "Budgeted", "", "budgeted_at", Duration::from_secs(3600))
        .budget(Budget { rows_per_step: 10, time: Duration::from_millis(100) })
        .step(Step::new("first", |_ctx| async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            Ok(StepReport::rows("done", 1))
        }))
        .step(Step::new("second", |_ctx| async { Ok(StepReport::rows("done", 1)) }));
    state.set_jobs(Arc::new(Registry::new(vec![job])));
    let job = state.jobs().get("budgeted").unwrap().clone();
    let RunOutcome::Ran(run) = run_job(&state, &job, Trigger::Cli, false).await.unwrap() else { panic!("must run") };
    assert_eq!(run.outcome, app::jobs::Outcome::CutOff);
    assert_eq!(run.step("first").unwrap().status, app::jobs::StepStatus::Done);
    assert_eq!(run.step("second").unwrap().status, app::jobs::StepStatus::Skipped);
    let (outcome, steps): (String, serde_json::Value) =
        sqlx::query_as("select outcome, steps from maintenance_runs where job = 'budgeted'").fetch_one(&pool).await.unwrap();
    assert_eq!(outcome, "cut_off");
    assert_eq!(steps[1]["status"], "skipped");
}

/// A traffic-triggered run whose step hangs is cut off by the engine and recorded, before the
/// background task's own timeout could drop it unrecorded.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_hanging_step_of_a_traffic_run_is_cut_off_and_the_run_recorded(pool: PgPool) {
    let config = test_config(&[]);
    let mut state = server::build_state(&config, pool.clone()).await.unwrap();
    state.background = app::state::Background::new(Duration::from_millis(10));
    let job = Job::new("hangs", "Hangs", "", "hangs_at", Duration::from_secs(3600))
        .traffic_budget(Budget { rows_per_step: 10, time: Duration::from_millis(100) })
        .step_grace(Duration::from_millis(200))
        .step(Step::new("forever", |_ctx| async {
            // 39 rows deleted and committed, then a stall (a lock wait, an I/O stall).
            app::jobs::tally("deleted", 39);
            std::future::pending::<()>().await;
            Ok(StepReport::rows("done", 1))
        }))
        .step(Step::new("after", |_ctx| async { Ok(StepReport::rows("done", 1)) }));
    state.set_jobs(Arc::new(Registry::new(vec![job])));
    let job = state.jobs().get("hangs").unwrap().clone();
    app::jobs::spawn_run(&state, &job, Trigger::Contact);
    state.background.settle().await;
    let (outcome, steps): (String, serde_json::Value) =
        sqlx::query_as("select outcome, steps from maintenance_runs where job = 'hangs'").fetch_one(&pool).await.expect("the run was recorded");
    assert_eq!(outcome, "cut_off", "a run stopped at its budget is cut off, not failed");
    assert_eq!(steps[0]["status"], "cut_off");
    assert_eq!(steps[0]["counts"], serde_json::json!([["deleted", 39]]), "the work it did is kept");
    assert!(steps[0]["error"].as_str().unwrap_or_default().contains("cut off at the run's time budget"));
    assert_eq!(steps[1]["status"], "skipped");
    let alerts: i64 = sqlx::query_scalar("select count(*) from alerts").fetch_one(&pool).await.unwrap();
    assert_eq!(alerts, 0, "a cut-off run is not a failing job");
}

/// A run stopped by its row budget with work left is `cut_off` (the next run goes on), not `ok`.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_run_stopped_by_its_row_budget_is_cut_off(pool: PgPool) {
    let config = test_config(&[]);
    let mut state = server::build_state(&config, pool.clone()).await.unwrap();
    let job = Job::new("rows", "Rows", "", "rows_at", Duration::from_secs(3600)).step(Step::new("bounded", |ctx: app::jobs::StepCtx| async move {
        Ok(StepReport { counts: vec![("deleted", ctx.rows)], rows: ctx.rows, more: true })
    }));
    state.set_jobs(Arc::new(Registry::new(vec![job])));
    let job = state.jobs().get("rows").unwrap().clone();
    let RunOutcome::Ran(run) = run_job(&state, &job, Trigger::Cli, false).await.unwrap() else { panic!("must run") };
    assert_eq!(run.outcome, app::jobs::Outcome::CutOff);
    let outcome: String = sqlx::query_scalar("select outcome from maintenance_runs where job = 'rows'").fetch_one(&pool).await.unwrap();
    assert_eq!(outcome, "cut_off");
}

/// A run is recorded as it goes: killed half-way (its task dropped, its connections gone — as
/// with SIGKILL), its row still shows what it had done, and the next run closes it as
/// `interrupted` with an audit event of those counts.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_run_killed_half_way_keeps_its_counts_and_the_next_run_closes_it(pool: PgPool) {
    let config = test_config(&[]);
    let mut state = server::build_state(&config, pool.clone()).await.unwrap();
    let slow = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let s = slow.clone();
    let job = Job::new("long", "Long", "", "long_at", Duration::from_secs(3600)).step(Step::new("batches", move |_ctx| {
        let s = s.clone();
        async move {
            app::jobs::tally("deleted", 55_000);
            if s.load(Ordering::SeqCst) {
                std::future::pending::<()>().await;
            }
            Ok(StepReport::rows("deleted", 0))
        }
    }));
    state.set_jobs(Arc::new(Registry::new(vec![job])));
    let job = state.jobs().get("long").unwrap().clone();
    let (st, jb) = (state.clone(), job.clone());
    let task = tokio::spawn(async move { run_job(&st, &jb, Trigger::Ticker, false).await });
    // One heartbeat writes the progress.
    tokio::time::sleep(app::jobs::HEARTBEAT + Duration::from_millis(1500)).await;
    let (outcome, steps): (String, serde_json::Value) =
        sqlx::query_as("select outcome, steps from maintenance_runs where job = 'long'").fetch_one(&pool).await.unwrap();
    assert_eq!(outcome, "running");
    assert_eq!(steps[0]["counts"], serde_json::json!([["deleted", 55000]]), "progress is in the record while it runs");
    task.abort();
    let _ = task.await;
    slow.store(false, Ordering::SeqCst);
    // The next run (its lease free once the dead run's connection closed) closes the record.
    let mut next = None;
    for _ in 0..100 {
        match run_job(&state, &job, Trigger::Cli, true).await.unwrap() {
            RunOutcome::Ran(r) => {
                next = Some(r);
                break;
            }
            _ => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    assert!(next.is_some(), "the lease was freed");
    let outcomes: Vec<String> = sqlx::query_scalar("select outcome from maintenance_runs where job = 'long' order by id").fetch_all(&pool).await.unwrap();
    assert_eq!(outcomes, ["interrupted", "ok"]);
    let detail: String =
        sqlx::query_scalar("select detail from audit_events where kind = 'maintenance.run' and detail like 'interrupted%'").fetch_one(&pool).await.unwrap();
    assert!(detail.contains("batches.deleted=55000"), "{detail}");
}

/// A lease is held only while its holder shows it is alive: a holder that stops beating (frozen
/// by SIGSTOP, a stuck VM) loses it after the idle limit, and another caller takes it; the old
/// holder finds out at its next beat.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_frozen_lease_holder_loses_its_lease(pool: PgPool) {
    let mut frozen = app::jobs::claim::try_lease_for(&pool, "frozen", Duration::from_millis(800)).await.unwrap().expect("first holder");
    assert!(app::jobs::claim::try_lease(&pool, "frozen").await.unwrap().is_none(), "held while alive");
    frozen.beat().await.unwrap();
    tokio::time::sleep(Duration::from_millis(2000)).await;
    let taken = app::jobs::claim::try_lease(&pool, "frozen").await.unwrap();
    assert!(taken.is_some(), "a holder silent past the limit lost its lease");
    assert!(frozen.beat().await.is_err(), "the frozen holder learns its lease is gone");
    taken.unwrap().release().await;
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_job_failing_twice_in_a_row_raises_one_alert_and_a_good_run_resolves_it(pool: PgPool) {
    let config = test_config(&[]);
    let mut state = server::build_state(&config, pool.clone()).await.unwrap();
    let fail = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let f = fail.clone();
    let job = Job::new("flaky", "Flaky", "", "flaky_at", Duration::from_secs(3600)).step(Step::new("step", move |_ctx| {
        let f = f.clone();
        async move {
            if f.load(Ordering::SeqCst) {
                Err(StepError::new("injected"))
            } else {
                Ok(StepReport::rows("done", 1))
            }
        }
    }));
    state.set_jobs(Arc::new(Registry::new(vec![job])));
    let job = state.jobs().get("flaky").unwrap().clone();
    run_job(&state, &job, Trigger::Cli, true).await.unwrap();
    assert_eq!(open_alerts(&pool, "job.failing").await, 0, "one failure is not yet an alert");
    run_job(&state, &job, Trigger::Cli, true).await.unwrap();
    run_job(&state, &job, Trigger::Cli, true).await.unwrap();
    assert_eq!(open_alerts(&pool, "job.failing").await, 1, "failing twice raises it (once, refreshed)");
    let times: i32 = sqlx::query_scalar("select times from alerts where kind = 'job.failing'").fetch_one(&pool).await.unwrap();
    assert_eq!(times, 2);
    fail.store(false, Ordering::SeqCst);
    run_job(&state, &job, Trigger::Cli, true).await.unwrap();
    assert_eq!(open_alerts(&pool, "job.failing").await, 0, "resolved automatically");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn any_response_starts_a_due_job_and_a_claim_two_days_ahead_does_not_stop_it(pool: PgPool) {
    sqlx::query("insert into inquiries (name, email, message, created_at) values ('Old', 'old@example.org', 'm', now() - interval '200 days')")
        .execute(&pool)
        .await
        .unwrap();
    // One instance's clock was two days ahead when it claimed prune.
    sqlx::query("insert into settings (key, value) values ('last_cleanup_at', ((extract(epoch from clock_timestamp()) + 172800) * 1000)::bigint::text)")
        .execute(&pool)
        .await
        .unwrap();
    let app = spawn_app(pool.clone()).await;
    assert_eq!(app.client.get(app.url("/healthz")).send().await.unwrap().status(), 200);
    app.state.background.settle().await;
    assert_eq!(inquiry_count(&pool).await, 0, "the 200-day-old inquiry was pruned");
    let trigger: String = sqlx::query_scalar("select trigger from maintenance_runs where job = 'prune'").fetch_one(&pool).await.unwrap();
    assert_eq!(trigger, "traffic");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn without_the_after_response_check_a_plain_request_starts_nothing(pool: PgPool) {
    let app = spawn_app_with(pool.clone(), &["--after-response-jobs", "false"], |_| {}).await;
    assert_eq!(app.client.get(app.url("/healthz")).send().await.unwrap().status(), 200);
    app.state.background.settle().await;
    let runs: i64 = sqlx::query_scalar("select count(*) from maintenance_runs").fetch_one(&pool).await.unwrap();
    assert_eq!(runs, 0);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn malformed_or_empty_json_bodies_are_400_not_500(pool: PgPool) {
    let app = spawn_app(pool).await;
    for path in ["/api/auth/invite/start", "/api/auth/invite/finish", "/api/auth/signin/finish"] {
        for body in ["", "{", "not json", "[1,2", "{\"credential\": 5}"] {
            let res =
                app.client.post(app.url(path)).header("content-type", "application/json").header("accept", "application/json").body(body).send().await.unwrap();
            assert_eq!(res.status(), 400, "{path} with {body:?}");
            let err: app::error::AppError = res.json().await.unwrap();
            assert!(matches!(err, app::error::AppError::BadRequest(_)), "{err:?}");
        }
    }
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn error_statuses_come_from_the_error_not_from_each_handler(pool: PgPool) {
    let admin = create_admin(&pool, "Ada").await;
    let cookie = session_cookie_for(&pool, admin).await;
    let app = spawn_app(pool.clone()).await;
    // Unknown job: NotFound → 404.
    assert_eq!(call_form(&app, "/api/admin/jobs/run", Some(&cookie), &[("job", "nope")]).await.status(), 404);
    // An alert that is not open: Gone → 410.
    assert_eq!(call_form(&app, "/api/admin/alerts/resolve", Some(&cookie), &[("id", "12345")]).await.status(), 410);
    // Invalid → 400 with field messages.
    assert_eq!(call_form(&app, "/api/admin/retention/save", Some(&cookie), &[("days", "0")]).await.status(), 400);
    // No session → 401.
    assert_eq!(call_form(&app, "/api/admin/jobs", None, &[]).await.status(), 401);
    // An admin resolves an alert that is open: 200, and it is recorded as resolved by them.
    // (Not a registered job: a prune run finishing meanwhile would resolve its own alert.)
    app::alerts::raise(
        &pool,
        app::alerts::AlertKind::JobFailing,
        "not-a-job",
        &app::alerts::AlertMessage::JobFailing { job: "not-a-job".into(), title: "Not a job".into() },
    )
    .await
    .unwrap();
    let id: i64 = sqlx::query_scalar("select id from alerts").fetch_one(&pool).await.unwrap();
    assert_eq!(call_form(&app, "/api/admin/alerts/resolve", Some(&cookie), &[("id", &id.to_string())]).await.status(), 200);
    let by: String = sqlx::query_scalar("select resolved_by from alerts where id = $1").bind(id).fetch_one(&pool).await.unwrap();
    assert_eq!(by, admin.to_string());
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_dashboard_lists_every_job_of_the_registry(pool: PgPool) {
    let admin = create_admin(&pool, "Ada").await;
    let cookie = session_cookie_for(&pool, admin).await;
    let app = spawn_app(pool.clone()).await;
    let jobs: serde_json::Value = call_form(&app, "/api/admin/jobs", Some(&cookie), &[]).await.json().await.unwrap();
    let names: Vec<&str> = jobs.as_array().unwrap().iter().map(|j| j["name"].as_str().unwrap()).collect();
    assert_eq!(names, app.state.jobs().names());
    let run: serde_json::Value = call_form(&app, "/api/admin/jobs/run", Some(&cookie), &[("job", "share_gc")]).await.json().await.unwrap();
    app.state.background.settle().await;
    assert!(run["job"]["last_run"]["steps"].as_array().is_some_and(|s| s.len() == 4), "{run}");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_ticker_runs_each_job_in_its_own_task_so_a_slow_job_delays_no_other(pool: PgPool) {
    let config = test_config(&[]);
    let mut state = server::build_state(&config, pool.clone()).await.unwrap();
    let release = Arc::new(tokio::sync::Notify::new());
    let slow_running = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let fast_runs = Arc::new(AtomicU64::new(0));
    let (r, s, f) = (release.clone(), slow_running.clone(), fast_runs.clone());
    let slow = Job::new("slow", "Slow", "", "slow_at", Duration::from_secs(3600)).step(Step::new("wait", move |_ctx| {
        let (r, s) = (r.clone(), s.clone());
        async move {
            s.store(true, Ordering::SeqCst);
            r.notified().await;
            s.store(false, Ordering::SeqCst);
            Ok(StepReport::default())
        }
    }));
    let fast = Job::new("fast", "Fast", "", "fast_at", Duration::from_millis(10)).step(Step::new("count", move |_ctx| {
        let f = f.clone();
        async move {
            f.fetch_add(1, Ordering::SeqCst);
            Ok(StepReport::rows("counted", 1))
        }
    }));
    // The slow job comes first: a loop that awaited each job would never reach the fast one.
    state.set_jobs(Arc::new(Registry::new(vec![slow, fast])));
    let stop = tokio_util::sync::CancellationToken::new();
    let ticker = tokio::spawn(server::maintenance::ticker(state.clone(), Duration::from_millis(50), stop.clone()));
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while fast_runs.load(Ordering::SeqCst) < 3 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(fast_runs.load(Ordering::SeqCst) >= 3, "the fast job kept running");
    assert!(slow_running.load(Ordering::SeqCst), "while the slow one was still running");
    stop.cancel();
    ticker.await.unwrap();
    release.notify_waiters();
    state.background.settle().await;
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn form_bodies_that_are_not_utf8_are_400_not_500(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    for path in ["/api/contact", "/api/share", "/api/auth/invite", "/api/auth/signin/start", "/api/auth/me"] {
        let res = app
            .client
            .post(app.url(path))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(vec![b'n', b'a', b'm', b'e', b'=', 0xff, 0xfe, 0xfd])
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 400, "{path}");
    }
    assert_eq!(inquiry_count(&pool).await, 0, "nothing stored");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_error_in_the_home_page_url_is_shown_only_when_this_server_signed_it(pool: PgPool) {
    use base64::Engine;
    let app = spawn_app(pool).await;
    // Garbled, and well-formed but written by someone else: the page ignores both.
    let forged = base64::engine::general_purpose::URL_SAFE.encode(r#"{"Invalid":{"email":"Your account is locked: call +1 555 0100"}}"#);
    for query in
        ["__path=/api/contact&__err=x".to_owned(), format!("__path=/api/contact&__err={forged}"), format!("__path=/api/contact&__err={forged}&__sig=1.00")]
    {
        let res = app.client.get(app.url(&format!("/?{query}"))).send().await.unwrap();
        assert_eq!(res.status(), 200, "{query}");
        let html = res.text().await.unwrap();
        assert!(html.contains("<form"), "the form is still there");
        assert!(!html.contains("account is locked"), "{query}: forged text shown");
    }
    // A real failed post's redirect is signed; changing its error breaks the signature.
    let res = app.post_contact_plain(&[("name", "Ann"), ("email", "nope"), ("message", "hi")]).await;
    let location = res.headers()["location"].to_str().unwrap().to_owned();
    assert!(location.contains("__sig="), "{location}");
    assert_eq!(app.client.get(&location).send().await.unwrap().status(), 400, "the genuine error is shown");
    let url = reqwest::Url::parse(&location).unwrap();
    let tampered: Vec<(String, String)> =
        url.query_pairs().map(|(k, v)| if k == "__err" { (k.into_owned(), forged.clone()) } else { (k.into_owned(), v.into_owned()) }).collect();
    let mut url2 = url.clone();
    url2.query_pairs_mut().clear().extend_pairs(&tampered);
    let res = app.client.get(url2.as_str()).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(!res.text().await.unwrap().contains("account is locked"));
}

/// A run is closed once: when another instance closed it as `interrupted` (its holder froze and
/// lost the lease), the holder waking up records nothing more — no second outcome, no second
/// audit event adding its rows again.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_run_closed_by_another_instance_is_not_closed_again(pool: PgPool) {
    let config = test_config(&[]);
    let mut state = server::build_state(&config, pool.clone()).await.unwrap();
    let go = Arc::new(tokio::sync::Notify::new());
    let g = go.clone();
    let job = Job::new("twice", "Twice", "", "twice_at", Duration::from_secs(3600)).step(Step::new("batches", move |_ctx| {
        let g = g.clone();
        async move {
            app::jobs::tally("deleted", 300);
            g.notified().await;
            Ok(StepReport::rows("deleted", 300))
        }
    }));
    state.set_jobs(Arc::new(Registry::new(vec![job])));
    let job = state.jobs().get("twice").unwrap().clone();
    let (st, jb) = (state.clone(), job.clone());
    let task = tokio::spawn(async move { run_job(&st, &jb, Trigger::Cli, false).await });
    let mut running = false;
    for _ in 0..100 {
        let n: i64 = sqlx::query_scalar("select count(*) from maintenance_runs where job = 'twice' and outcome = 'running'").fetch_one(&pool).await.unwrap();
        if n == 1 {
            running = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(running);
    // Another instance's takeover closes the record meanwhile.
    sqlx::query("update maintenance_runs set outcome = 'interrupted', ok = false, finished_at = clock_timestamp() where job = 'twice'")
        .execute(&pool)
        .await
        .unwrap();
    go.notify_one();
    let _ = task.await.unwrap();
    let outcomes: Vec<String> = sqlx::query_scalar("select outcome from maintenance_runs where job = 'twice'").fetch_all(&pool).await.unwrap();
    assert_eq!(outcomes, ["interrupted"], "the waking holder did not close it again");
    let events: i64 = sqlx::query_scalar("select count(*) from audit_events where kind = 'maintenance.run'").fetch_one(&pool).await.unwrap();
    assert_eq!(events, 0, "no second audit event for the same run");
}
