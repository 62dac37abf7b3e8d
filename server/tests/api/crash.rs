//! Crash points: a real `ebb` killed with SIGKILL at chosen points of an upload, a download, the
//! share GC and prune (fault points compiled only into test builds: the `failpoints` feature).
//! After the restart nothing is lost, nothing is delivered twice, and every orphan is cleaned by
//! the next runs.
#![cfg(feature = "failpoints")]

use std::future::Future;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant, SystemTime};

use app::jobs::{run_job, RunOutcome, Trigger};
use sqlx::PgPool;

use crate::archive::crash;
use crate::helpers::*;
use crate::shares::{admin_cookie, body_of, form, only_share_id, share_via_upload, status_of};

/// A real `ebb` that pauses (for two minutes) when it reaches the fault point `point`.
struct Paused {
    child: Child,
    base: String,
    origin: String,
}

impl Paused {
    /// `ebb serve` on a free port, on the test's database and storage folder.
    async fn serve(pool: &PgPool, app: &TestApp, point: &str) -> Paused {
        let port = crate::helpers::child_port();
        let (bind, origin) = (format!("127.0.0.1:{port}"), format!("http://localhost:{port}"));
        let failpoints = format!("{point}=sleep(120000)");
        let child = crash::ebb(
            pool,
            app.storage.path(),
            &["serve"],
            &[("EBB_BIND", &bind), ("EBB_PUBLIC_URL", &origin), ("EBB_METRICS_BIND", ""), ("FAILPOINTS", &failpoints)],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
        let mut paused = Paused { child, base: format!("http://127.0.0.1:{port}"), origin };
        let client = reqwest::Client::new();
        let health = paused.url("/healthz");
        paused.wait_for("the server to start", || async { client.get(&health).send().await.is_ok_and(|r| r.status() == 200) }).await;
        paused
    }

    /// `ebb ARGS` (a CLI run), paused at `point` (or as a full fail-rs spec `point=…` says).
    fn run(pool: &PgPool, app: &TestApp, args: &[&str], point: &str, env: &[(&str, &str)]) -> Paused {
        let failpoints = if point.contains('=') { point.to_owned() } else { format!("{point}=sleep(120000)") };
        let mut all = vec![("FAILPOINTS", failpoints.as_str())];
        all.extend_from_slice(env);
        let child = crash::ebb(pool, app.storage.path(), args, &all).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        Paused { child, base: String::new(), origin: String::new() }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// Waits (up to a minute) until `reached` holds, the process still running.
    async fn wait_for<F, Fut>(&mut self, what: &str, reached: F)
    where
        F: Fn() -> Fut,
        Fut: Future<Output = bool>,
    {
        let start = Instant::now();
        while !reached().await {
            assert!(start.elapsed() < Duration::from_secs(60), "never reached: {what}");
            assert!(self.child.try_wait().unwrap().is_none(), "the process ended before {what}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Checks that the process stays at the point (paused there, not passing through), then
    /// kills it with SIGKILL.
    async fn kill_while<F, Fut>(mut self, still: F)
    where
        F: Fn() -> Fut,
        Fut: Future<Output = bool>,
    {
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(self.child.try_wait().unwrap().is_none() && still().await, "the process did not stay at its fault point");
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

async fn share_rows(pool: &PgPool) -> i64 {
    sqlx::query_scalar("select count(*) from shares").fetch_one(pool).await.unwrap()
}

/// The record of `job`'s run closed as interrupted: (its steps, the audit event's detail).
async fn interrupted_run(pool: &PgPool, job: &str) -> (serde_json::Value, String) {
    sqlx::query_as(
        "select r.steps, e.detail from maintenance_runs r, audit_events e
         where r.job = $1 and r.outcome = 'interrupted' and e.kind = 'maintenance.run' and e.detail like 'interrupted%'",
    )
    .bind(job)
    .fetch_one(pool)
    .await
    .unwrap()
}

/// A run record's count `name` of step `step` (panics when the step is not in the record).
fn step_count(steps: &serde_json::Value, step: &str, name: &str) -> Option<i64> {
    let step = steps.as_array().unwrap().iter().find(|s| s["step"] == step).expect("the step is in the record");
    step["counts"].as_array().unwrap().iter().find(|c| c[0] == name).and_then(|c| c[1].as_i64())
}

/// Runs `job` now in the test's (restarted) instance, waiting while the killed process's lease
/// lasts (until PostgreSQL notices its connection is gone).
async fn run_now(app: &TestApp, job: &str) -> app::jobs::RunRecord {
    let job = app.state.jobs().get(job).unwrap().clone();
    let start = Instant::now();
    loop {
        match run_job(&app.state, &job, Trigger::Cli, true).await.unwrap() {
            RunOutcome::Ran(run) => return run,
            RunOutcome::Busy if start.elapsed() < Duration::from_secs(30) => tokio::time::sleep(Duration::from_millis(100)).await,
            other => panic!("{} did not run: {other:?}", job.name),
        }
    }
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn killed_between_storing_an_upload_and_saving_its_row(pool: PgPool) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app(pool.clone()).await;
    let paused = Paused::serve(&pool, &app, "share-upload-after-store").await;
    let upload = app
        .client
        .post(paused.url("/api/admin/shares/upload"))
        .header("cookie", &cookie)
        .header("origin", &paused.origin)
        .header("accept", "application/json")
        .multipart(form("crash.pdf", body_of(100_000), "24", ""))
        .send();
    let upload = tokio::spawn(upload);
    let mut paused = paused;
    paused.wait_for("the file stored", || async { app.stored_files().await.len() == 1 }).await;
    paused.kill_while(|| async { share_rows(&pool).await == 0 }).await;
    let answer = upload.await.unwrap();
    assert!(answer.map(|r| !r.status().is_success()).unwrap_or(true), "the admin never got a link for it");
    assert_eq!(share_rows(&pool).await, 0, "no share without its commit");

    // Restarted: the orphan is kept while an upload could still be committing, and deleted by
    // the GC once it is older than that (24 hours).
    let orphan = app.stored_files().await.remove(0);
    assert_eq!(run_now(&app, "share_gc").await.outcome, app::jobs::Outcome::Ok);
    assert_eq!(app.stored_files().await, vec![orphan.clone()], "a young orphan is left alone");
    let file = std::fs::File::options().write(true).open(app.storage.path().join(&orphan)).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(25 * 3600)).unwrap();
    sqlx::query("delete from settings where key like 'share_gc_reconcile%'").execute(&pool).await.unwrap();
    assert_eq!(run_now(&app, "share_gc").await.outcome, app::jobs::Outcome::Ok);
    assert!(app.stored_files().await.is_empty(), "the orphan is cleaned");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn killed_after_claiming_a_download_delivers_nothing_twice(pool: PgPool) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app(pool.clone()).await;
    let path = share_via_upload(&app, &cookie, "once.pdf", body_of(50_000)).await;
    let id = only_share_id(&pool).await;
    let mut paused = Paused::serve(&pool, &app, "share-download-after-claim").await;
    let download = tokio::spawn(app.client.post(paused.url(&path)).send());
    paused.wait_for("the claim", || async { status_of(&pool, id).await == "consumed" }).await;
    paused.kill_while(|| async { status_of(&pool, id).await == "consumed" }).await;
    assert!(download.await.unwrap().map(|r| r.status() != 200).unwrap_or(true), "nothing was delivered by the killed process");

    // Restarted: the link is used up (one delivery at most, ever) and the file goes after the
    // delivery grace.
    let again = app.client.post(app.url(&path)).send().await.unwrap();
    assert_eq!(again.status(), 410);
    assert_eq!(app.stored_files().await.len(), 1, "kept during the delivery grace");
    sqlx::query("update shares set consumed_at = now() - interval '16 minutes'").execute(&pool).await.unwrap();
    assert_eq!(run_now(&app, "share_gc").await.outcome, app::jobs::Outcome::Ok);
    assert_eq!(status_of(&pool, id).await, "purged");
    assert!(app.stored_files().await.is_empty());
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn killed_between_deleting_a_file_and_marking_its_share_purged(pool: PgPool) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app(pool.clone()).await;
    share_via_upload(&app, &cookie, "late.pdf", body_of(1_000)).await;
    let id = only_share_id(&pool).await;
    app.state.background.settle().await;
    sqlx::query("update shares set expires_at = now() - interval '1 minute'").execute(&pool).await.unwrap();
    let mut paused = Paused::run(&pool, &app, &["maintenance", "run", "share_gc", "--force"], "share-gc-after-delete", &[]);
    paused.wait_for("the file deleted", || async { app.stored_files().await.is_empty() }).await;
    paused.kill_while(|| async { status_of(&pool, id).await == "active" }).await;

    // Restarted: the next run finds the file already gone and marks the share purged, with no
    // failure and no alert.
    let run = run_now(&app, "share_gc").await;
    assert_eq!(run.outcome, app::jobs::Outcome::Ok, "{:?}", run.steps);
    assert_eq!(status_of(&pool, id).await, "purged");
    let alerts: i64 = sqlx::query_scalar("select count(*) from alerts where resolved_at is null").fetch_one(&pool).await.unwrap();
    assert_eq!(alerts, 0);
}

/// A share GC run killed after it purged one share of two: its record (closed as interrupted)
/// counts the purge it committed — the count is saved with the purge, not by the heartbeat.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_killed_share_gc_run_counts_what_it_purged(pool: PgPool) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app(pool.clone()).await;
    share_via_upload(&app, &cookie, "one.pdf", body_of(1_000)).await;
    share_via_upload(&app, &cookie, "two.pdf", body_of(1_000)).await;
    app.state.background.settle().await;
    sqlx::query("update shares set expires_at = now() - interval '1 minute'").execute(&pool).await.unwrap();
    let purged = || async { sqlx::query_scalar::<_, i64>("select count(*) from shares where status = 'purged'").fetch_one(&pool).await.unwrap() };
    // The first share passes the fault point; the run pauses after deleting the second's file.
    let mut paused = Paused::run(&pool, &app, &["maintenance", "run", "share_gc", "--force"], "share-gc-after-delete=1*off->sleep(120000)", &[]);
    paused.wait_for("one share purged", || async { purged().await == 1 }).await;
    paused.kill_while(|| async { purged().await == 1 }).await;

    let run = run_now(&app, "share_gc").await;
    assert_eq!(run.outcome, app::jobs::Outcome::Ok, "{:?}", run.steps);
    assert_eq!(purged().await, 2);
    let (steps, detail) = interrupted_run(&pool, "share_gc").await;
    assert_eq!(step_count(&steps, "purge", "purged"), Some(1), "{steps}");
    assert!(detail.contains("purge.purged=1"), "{detail}");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn killed_in_the_middle_of_a_prune(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    sqlx::query(
        "insert into inquiries (name, email, message, created_at)
         select 'Old', 'old@example.org', 'old', now() - interval '200 days' - make_interval(secs => g) from generate_series(1, 1000) g",
    )
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query("insert into inquiries (name, email, message) values ('New', 'new@example.org', 'new')").execute(&pool).await.unwrap();
    let old = || async { sqlx::query_scalar::<_, i64>("select count(*) from inquiries where name = 'Old'").fetch_one(&pool).await.unwrap() };
    let mut paused = Paused::run(&pool, &app, &["maintenance", "run", "prune", "--force"], "prune-after-batch", &[("EBB_PRUNE_BATCH_SIZE", "100")]);
    paused.wait_for("the first batch", || async { old().await == 900 }).await;
    paused.kill_while(|| async { old().await == 900 }).await;

    // Restarted: the next run deletes the rest and keeps the new one; the killed run left no
    // half-deleted batch (each batch is one statement).
    let run = run_now(&app, "prune").await;
    assert_eq!(run.outcome, app::jobs::Outcome::Ok, "{:?}", run.steps);
    assert_eq!(old().await, 0);
    let names: Vec<String> = sqlx::query_scalar("select name from inquiries").fetch_all(&pool).await.unwrap();
    assert_eq!(names, ["New"]);
    // The killed run's record (closed as interrupted) says exactly what it deleted — the batch
    // committed before the kill — though no heartbeat wrote it: the batch saved its count.
    let (steps, detail) = interrupted_run(&pool, "prune").await;
    assert_eq!((step_count(&steps, "inquiries", "deleted"), step_count(&steps, "inquiries", "batches")), (Some(100), Some(1)), "{steps}");
    assert!(detail.contains("inquiries.deleted=100"), "{detail}");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn killed_during_an_upload_through_a_file_request(pool: PgPool) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app(pool.clone()).await;
    let res = call_form(&app, "/api/admin/file-requests/create", Some(&cookie), &[("expires_hours", "24"), ("max_mib", "10"), ("note", "")]).await;
    let created: serde_json::Value = res.json().await.unwrap();
    let path = created["url"].as_str().unwrap().strip_prefix("http://localhost:3000").unwrap().to_owned();
    let paused = Paused::serve(&pool, &app, "request-upload-after-store").await;
    let part = reqwest::multipart::Part::bytes(body_of(100_000)).file_name("crash.pdf");
    let upload = tokio::spawn(
        app.client.post(paused.url(&path)).header("accept", "application/json").multipart(reqwest::multipart::Form::new().part("file", part)).send(),
    );
    let mut paused = paused;
    paused.wait_for("the file stored", || async { app.stored_files().await.len() == 1 }).await;
    paused.kill_while(|| async { share_rows(&pool).await == 0 }).await;
    assert!(upload.await.unwrap().map(|r| !r.status().is_success()).unwrap_or(true), "the uploader was not told it worked");
    assert_eq!(share_rows(&pool).await, 0, "no received file without its commit");

    // Restarted: the link was not used up (nothing was received). The killed upload's lease holds
    // it until it runs out (a minute: nobody renews it), then the sender can try again; the
    // orphan of the killed upload is removed by reconciliation once it is old.
    let busy = app
        .client
        .post(app.url(&path))
        .header("accept", "application/json")
        .multipart(crate::shares::form("early.pdf", body_of(10), "24", ""))
        .send()
        .await
        .unwrap();
    assert_eq!(busy.status(), 409, "the dead upload's lease has not run out yet");
    sqlx::query("update file_requests set upload_lease_until = now() - interval '1 second'").execute(&pool).await.unwrap();
    let again = app
        .client
        .post(app.url(&path))
        .header("accept", "application/json")
        .multipart(crate::shares::form("again.pdf", body_of(10), "24", ""))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 201);
    assert_eq!(share_rows(&pool).await, 1);
    let live: String = sqlx::query_scalar("select blob_key from shares").fetch_one(&pool).await.unwrap();
    let orphan = app.stored_files().await.into_iter().find(|k| *k != live).expect("the orphan");
    let file = std::fs::File::options().write(true).open(app.storage.path().join(&orphan)).unwrap();
    file.set_modified(SystemTime::now() - Duration::from_secs(25 * 3600)).unwrap();
    sqlx::query("delete from settings where key like 'share_gc_reconcile%'").execute(&pool).await.unwrap();
    assert_eq!(run_now(&app, "share_gc").await.outcome, app::jobs::Outcome::Ok);
    assert_eq!(app.stored_files().await, vec![live], "the orphan is cleaned, the received file kept");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn killed_during_a_resumed_download_delivers_nothing_more_than_allowed(pool: PgPool) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app(pool.clone()).await;
    // Larger than the loopback's buffers: the first download cannot complete before it is
    // dropped (a complete delivery has nothing left to resume).
    let data = body_of(48 * 1024 * 1024);
    let path = share_via_upload(&app, &cookie, "resume.pdf", data.clone()).await;
    let first = app.client.post(app.url(&path)).header("user-agent", "curl/8").send().await.unwrap();
    let set = first.headers()["set-cookie"].to_str().unwrap().to_owned();
    let receipt = set.split(';').next().unwrap().to_owned();
    drop(first);
    let mut paused = Paused::serve(&pool, &app, "share-resume-before-send").await;
    let resume =
        tokio::spawn(app.client.post(paused.url(&path)).header("user-agent", "curl/8").header("cookie", receipt.clone()).header("range", "bytes=100-").send());
    paused
        .wait_for("the resume recorded", || async { sqlx::query_scalar::<_, i32>("select resumes from share_deliveries").fetch_one(&pool).await.unwrap() == 1 })
        .await;
    paused.kill_while(|| async { true }).await;
    assert!(resume.await.unwrap().map(|r| r.status() != 206).unwrap_or(true));

    // Restarted: the same client resumes again and gets the rest; the share counts one download.
    let res = app.client.post(app.url(&path)).header("user-agent", "curl/8").header("cookie", &receipt).header("range", "bytes=100-").send().await.unwrap();
    assert_eq!(res.status(), 206);
    assert!(res.bytes().await.unwrap().as_ref() == &data[100..]);
    let downloads: i32 = sqlx::query_scalar("select downloads from shares").fetch_one(&pool).await.unwrap();
    assert_eq!(downloads, 1);
    assert_eq!(app.client.post(app.url(&path)).send().await.unwrap().status(), 410, "nobody else gets it");
}
