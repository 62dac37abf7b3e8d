//! Retrieval of archived months and export requests over HTTP, on both backends: a reason of
//! 10–256 characters, 404 for a month not in the ledger, a 15-minute link that downloads the
//! month by name, one recorded row and audit event per link; exports written in the background,
//! pending → running → done with their counts, links only while the file outlives them.

use std::io::Read;

use sqlx::PgPool;

use crate::archive::{pending_month, run_archive};
use crate::helpers::*;

fn month_back(back: i32) -> time::Date {
    let now = app::audit::upkeep::month_start(time::OffsetDateTime::now_utc());
    app::audit::upkeep::add_months(now, -back).date()
}

/// The signed URL as this test can reach it (Ebb-signed links name the public URL).
fn reachable(app: &TestApp, url: &str) -> String {
    url.replace("http://localhost:3000", &app.base)
}

async fn link(app: &TestApp, cookie: Option<&str>, month: &str, reason: &str) -> reqwest::Response {
    call_form(app, "/api/admin/audit/archive/link", cookie, &[("month", month), ("reason", reason)]).await
}

async fn retrievals(pool: &PgPool) -> Vec<(time::Date, String)> {
    sqlx::query_as("select period, reason from audit_archive_retrievals order by id").fetch_all(pool).await.unwrap()
}

on_both_backends!(
    an_archived_month_is_retrieved_with_a_reason_through_a_15_minute_link,
    an_export_request_is_written_in_the_background_and_linked_until_it_expires,
);

async fn an_archived_month_is_retrieved_with_a_reason_through_a_15_minute_link(pool: PgPool, backend: Backend) {
    let admin = create_admin(&pool, "Ana").await;
    let cookie = session_cookie_for(&pool, admin).await;
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    let period = month_back(27);
    pending_month(&pool, period, 300).await;
    assert_eq!(run_archive(&app).await.outcome, app::jobs::Outcome::Ok);
    let month = app::audit::archive::period_label(period);
    let reason = "Tax audit 2026, request #41";

    // Admins only.
    assert_eq!(link(&app, None, &month, reason).await.status(), 401);
    // The reason: 10 to 256 characters, said beside the field.
    for bad in ["", "too short", "         x         ", &"x".repeat(257)] {
        let res = link(&app, Some(&cookie), &month, bad).await;
        assert_eq!(res.status(), 400, "{bad:?}");
        let body: serde_json::Value = res.json().await.unwrap();
        assert!(body["Invalid"]["reason"].as_str().unwrap().contains("10 to 256"), "{body}");
    }
    // Control characters (PostgreSQL refuses NUL in text) are the client's mistake, not a 500.
    let res = link(&app, Some(&cookie), &month, "a valid reason\u{0} with NUL").await;
    assert_eq!(res.status(), 400);
    assert!(res.json::<serde_json::Value>().await.unwrap()["Invalid"]["reason"].as_str().unwrap().contains("control characters"));
    assert!(retrievals(&pool).await.is_empty(), "a refused request records nothing");
    // A month not in the ledger (or not a month) is 404.
    for missing in [app::audit::archive::period_label(month_back(40)).as_str(), "2024-13", "../x", "abc"] {
        assert_eq!(link(&app, Some(&cookie), missing, reason).await.status(), 404, "{missing}");
    }
    // A month the ledger has but not as verified (written, failed) is not retrievable either.
    for (back, status) in [(41, "written"), (42, "failed")] {
        let p = month_back(back);
        sqlx::query("insert into audit_partition_archives (period, object_key, table_name, status) values ($1, $2, 'audit_events_x', $3)")
            .bind(p)
            .bind(app::audit::archive::key_of(p))
            .bind(status)
            .execute(&pool)
            .await
            .unwrap();
        app.raw.put(&app::audit::archive::key_of(p), bytes::Bytes::from_static(b"not verified")).await.unwrap();
        assert_eq!(link(&app, Some(&cookie), &app::audit::archive::period_label(p), reason).await.status(), 404, "{status}");
    }

    // A link: 15 minutes, named YYYY-MM.csv.gz, downloading exactly the archived object.
    let res = link(&app, Some(&cookie), &month, &format!("  {reason}  ")).await;
    assert_eq!(res.status(), 200);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body["file_name"], format!("{month}.csv.gz"));
    let expires = time::OffsetDateTime::parse(body["expires_at"].as_str().unwrap(), &time::format_description::well_known::Rfc3339).unwrap();
    let minutes = (expires - time::OffsetDateTime::now_utc()).whole_seconds() as f64 / 60.0;
    assert!((14.0..=15.1).contains(&minutes), "{minutes} minutes");
    let download = app.client.get(reachable(&app, body["url"].as_str().unwrap())).send().await.unwrap();
    assert_eq!(download.status(), 200);
    let disposition = download.headers()["content-disposition"].to_str().unwrap().to_owned();
    assert!(disposition.contains(&format!("{month}.csv.gz")), "{disposition}");
    let bytes = download.bytes().await.unwrap();
    assert_eq!(Some(bytes.to_vec()), app.read_stored(&app::audit::archive::key_of(period)).await);
    let mut csv = String::new();
    flate2::read::GzDecoder::new(&bytes[..]).read_to_string(&mut csv).unwrap();
    assert_eq!(csv::Reader::from_reader(csv.as_bytes()).records().count(), 300);

    // Each issuance: one row (reason in its own column) and one audit event. No rate limit.
    assert_eq!(link(&app, Some(&cookie), &month, "Second look for the same audit").await.status(), 200);
    assert_eq!(retrievals(&pool).await, vec![(period, reason.to_string()), (period, "Second look for the same audit".to_string())]);
    let events: Vec<(Option<uuid::Uuid>, String)> =
        sqlx::query_as("select admin_id, subject_id from audit_events where kind = 'archive.retrieval' order by id").fetch_all(&pool).await.unwrap();
    assert_eq!(events, vec![(Some(admin), month.clone()), (Some(admin), month.clone())]);
    let who: Option<String> = sqlx::query_scalar("select admin_name from audit_archive_retrievals limit 1").fetch_one(&pool).await.unwrap();
    assert_eq!(who.as_deref(), Some("Ana"));

    // The page lists the ledger's months and the retrievals.
    let res = call_form(&app, "/api/admin/audit/archive", Some(&cookie), &[]).await;
    let overview: serde_json::Value = res.json().await.unwrap();
    assert_eq!(overview["months"][0]["month"], month);
    assert_eq!(overview["months"][0]["status"], "verified");
    assert_eq!(overview["months"][0]["events"], 300);
    assert_eq!(overview["retrievals"].as_array().unwrap().len(), 2);
}

async fn request(app: &TestApp, cookie: &str, from: &str, to: &str) -> reqwest::Response {
    call_form(app, "/api/admin/audit/exports/request", Some(cookie), &[("from", from), ("to", to)]).await
}

async fn requests(app: &TestApp, cookie: &str) -> Vec<serde_json::Value> {
    call_form(app, "/api/admin/audit/exports", Some(cookie), &[]).await.json::<Vec<serde_json::Value>>().await.unwrap()
}

async fn export_link(app: &TestApp, cookie: &str, id: &str) -> reqwest::Response {
    call_form(app, "/api/admin/audit/exports/link", Some(cookie), &[("id", id)]).await
}

async fn an_export_request_is_written_in_the_background_and_linked_until_it_expires(pool: PgPool, backend: Backend) {
    let admin = create_admin(&pool, "Ana").await;
    let cookie = session_cookie_for(&pool, admin).await;
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    // Events in the range, and one outside it.
    sqlx::query(
        "insert into audit_events (occurred_at, kind, subject_type, subject_id, detail)
         select now() - interval '3 days' + i * interval '1 second', 'share.create', 'share', 's' || i, '@risky ' || i from generate_series(1, 2500) i",
    )
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query("insert into audit_events (occurred_at, kind) values (now() - interval '20 days', 'share.create')").execute(&pool).await.unwrap();
    let today = time::OffsetDateTime::now_utc().date();
    let from = (today - time::Duration::days(5)).to_string();
    // Up to yesterday: the events that jobs and this test's requests write today stay out.
    let to = (today - time::Duration::days(1)).to_string();

    // Bad ranges are the client's mistake.
    let res = request(&app, &cookie, &today.to_string(), &from).await;
    assert_eq!(res.status(), 400);
    assert!(res.json::<serde_json::Value>().await.unwrap()["Invalid"]["to"].is_string());
    assert_eq!(request(&app, &cookie, "soon", "").await.status(), 400);
    assert_eq!(request(&app, &cookie, "-9999-01-01", &from).await.status(), 400, "a year out of range is the client's mistake");

    assert_eq!(request(&app, &cookie, &from, &to).await.status(), 200);
    // Written in the background: pending → running → done.
    let mut done = None;
    for _ in 0..200 {
        let list = requests(&app, &cookie).await;
        assert_eq!(list.len(), 1);
        if list[0]["status"] == "done" {
            done = Some(list[0].clone());
            break;
        }
        assert!(["pending", "running"].contains(&list[0]["status"].as_str().unwrap()), "{}", list[0]);
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let done = done.expect("the export finished");
    let events_in_range: i64 = sqlx::query_scalar("select count(*) from audit_events where occurred_at >= $1::date and occurred_at < $2::date")
        .bind(today - time::Duration::days(5))
        .bind(today)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(events_in_range, 2500);
    assert_eq!(done["events"].as_i64(), Some(events_in_range));
    assert_eq!(done["expired"], false);
    let id = done["id"].as_str().unwrap().to_owned();
    let key = format!("exports/{}.csv.gz", uuid::Uuid::parse_str(&id).unwrap().simple());
    let stored = app.read_stored(&key).await.expect("the file is in exports/");
    assert_eq!(done["bytes"].as_u64(), Some(stored.len() as u64));

    // Its link downloads the CSV by name; getting it is in the audit log.
    let res = export_link(&app, &cookie, &id).await;
    assert_eq!(res.status(), 200);
    let body: serde_json::Value = res.json().await.unwrap();
    let download = app.client.get(reachable(&app, body["url"].as_str().unwrap())).send().await.unwrap();
    assert_eq!(download.status(), 200);
    assert!(download.headers()["content-disposition"].to_str().unwrap().contains(&format!("audit-{from}_to_{to}.csv.gz")));
    let mut csv = String::new();
    flate2::read::GzDecoder::new(&download.bytes().await.unwrap()[..]).read_to_string(&mut csv).unwrap();
    assert_eq!(csv.lines().count() as i64, events_in_range + 1);
    assert!(csv.contains("'@risky 7"), "formulas are neutralised");
    let kinds: Vec<String> = sqlx::query_scalar("select kind from audit_events where kind like 'export.%' and subject_id = $1 order by id")
        .bind(&id)
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(kinds, ["export.request", "export.download"]);

    // From day 8 (less than 15 minutes of file life left counts too) the request shows, expired,
    // and gets no link.
    sqlx::query("update audit_export_requests set started_at = now() - interval '7 days' + interval '10 minutes' where id = $1::uuid")
        .bind(&id)
        .execute(&pool)
        .await
        .unwrap();
    assert_eq!(requests(&app, &cookie).await[0]["expired"], true);
    assert_eq!(export_link(&app, &cookie, &id).await.status(), 410);
    // A file gone early (S3's lifecycle) gives no link either.
    sqlx::query("update audit_export_requests set started_at = now() where id = $1::uuid").bind(&id).execute(&pool).await.unwrap();
    app.remove_stored(&key).await;
    assert_eq!(export_link(&app, &cookie, &id).await.status(), 410);
    // Unknown ids.
    assert_eq!(export_link(&app, &cookie, &uuid::Uuid::new_v4().to_string()).await.status(), 404);
    assert_eq!(export_link(&app, &cookie, "not-an-id").await.status(), 404);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn open_export_requests_are_capped(pool: PgPool) {
    let admin = create_admin(&pool, "Ana").await;
    let cookie = session_cookie_for(&pool, admin).await;
    let app = spawn_app(pool.clone()).await;
    for _ in 0..app::audit::exports::MAX_OPEN {
        sqlx::query(
            "insert into audit_export_requests (id, range_from, range_to, status) values (gen_random_uuid(), now() - interval '1 day', now(), 'running')",
        )
        .execute(&pool)
        .await
        .unwrap();
    }
    let today = time::OffsetDateTime::now_utc().date().to_string();
    let res = request(&app, &cookie, &today, &today).await;
    assert_eq!(res.status(), 409);
    assert!(res.text().await.unwrap().contains("already waiting or running"));
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn export_files_older_than_7_days_are_deleted_by_ebbs_own_gc(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    app.write_stored("exports/old1.csv.gz", b"old").await;
    app.write_stored("exports/new1.csv.gz", b"new").await;
    let old = app.storage.path().join("exports/old1.csv.gz");
    let status = std::process::Command::new("touch").arg("-d").arg("8 days ago").arg(&old).status().unwrap();
    assert!(status.success());
    let job = app.state.jobs().get(app::audit::exports::JOB).unwrap();
    let app::jobs::RunOutcome::Ran(run) = app::jobs::run_job(&app.state, job, app::jobs::Trigger::Cli, true).await.unwrap() else { panic!("ran") };
    assert_eq!(run.step("expired_files").unwrap().counts, vec![("deleted", 1)]);
    assert_eq!(app.read_stored("exports/old1.csv.gz").await, None);
    assert_eq!(app.read_stored("exports/new1.csv.gz").await.as_deref(), Some(&b"new"[..]));
}
