//! The retention report (issue 16): its figures match the database for data of every kind and
//! age, items past their promise by more than a job interval raise an alert, the download is
//! recorded, the CLI fails when something is overdue, holds work through the API, and visitors
//! read the live promises.

use app::jobs::{run_job, RunOutcome, Trigger};
use app::retention::{KindReport, RetentionReport};
use serde_json::json;
use sqlx::PgPool;

use crate::helpers::*;

const NO_AFTER_RESPONSE: &[&str] = &["--after-response-jobs", "false"];

async fn exec(pool: &PgPool, sql: &str) {
    sqlx::query(sql).execute(pool).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
}

async fn scalar(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap_or_else(|e| panic!("{sql}: {e}"))
}

async fn report(app: &TestApp, cookie: &str) -> RetentionReport {
    let res = call(app, "/api/admin/retention", Some(cookie), json!({})).await;
    assert_eq!(res.status(), 200);
    res.json().await.unwrap()
}

fn kind<'a>(r: &'a RetentionReport, name: &str) -> &'a KindReport {
    r.kinds.iter().find(|k| k.kind == name).unwrap_or_else(|| panic!("no kind {name}"))
}

/// (items, past promise, overdue, held)
fn figures(k: &KindReport) -> (i64, i64, i64, i64) {
    (k.count, k.past_promise, k.overdue, k.held)
}

async fn run(app: &TestApp, name: &str) {
    let job = app.state.jobs().get(name).unwrap();
    assert!(matches!(run_job(&app.state, job, Trigger::Cli, true).await.unwrap(), RunOutcome::Ran(_)), "{name} did not run");
}

/// A share row with a stored file; `sql_state` sets its status and times.
async fn share(app: &TestApp, sql_state: &str) -> (i64, String) {
    let key = app::storage::new_key(app::storage::Namespace::Shares);
    app.write_stored(&key, b"file body").await;
    let id: i64 = sqlx::query_scalar(&format!(
        "insert into shares (token_hash, blob_key, file_name, size_bytes, content_type, status, expires_at, consumed_at, purged_at)
         select $1, $2, 'a.pdf', 9, 'application/pdf', {sql_state} returning id"
    ))
    .bind(uuid::Uuid::new_v4().as_bytes().to_vec())
    .bind(&key)
    .fetch_one(&app.state.pool)
    .await
    .unwrap();
    (id, key)
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_report_matches_the_database_for_data_of_every_kind_and_age(pool: PgPool) {
    let app = spawn_app_with(pool.clone(), NO_AFTER_RESPONSE, |_| {}).await;
    let admin = create_admin(&pool, "Ana").await;
    let cookie = session_cookie_for(&pool, admin).await;

    // Inquiries (180 days): 2 new, 3 past their promise by far, 1 as old but held.
    exec(&pool, "insert into inquiries (name, email, message) select 'new', 'n@example.org', 'm' from generate_series(1, 2)").await;
    exec(
        &pool,
        "insert into inquiries (name, email, message, created_at) select 'old', 'o@example.org', 'm', now() - interval '400 days' from generate_series(1, 3)",
    )
    .await;
    let held: uuid::Uuid = sqlx::query_scalar(
        "insert into inquiries (name, email, message, created_at) values ('held', 'h@example.org', 'm', now() - interval '400 days') returning id",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    let actor = app::kernel::audit::Actor { admin: Some(admin), client_hash: None };
    app::holds::db::place(&pool, &app::hold_owners(), &actor, app::holds::HoldTarget::Inquiry(held), "Case 17: keep for the court").await.unwrap();

    // Shares (grace 15 min, GC each minute).
    share(&app, "'active', now() + interval '1 hour', null, null").await; // on time
    share(&app, "'active', now() - interval '30 seconds', null, null").await; // past, within a GC interval
    share(&app, "'active', now() - interval '10 minutes', null, null").await; // overdue
    share(&app, "'consumed', now() + interval '1 hour', now() - interval '2 hours', null").await; // overdue
    share(&app, "'consumed', now() + interval '1 hour', now() - interval '5 minutes', null").await; // in its grace
    share(&app, "'purged', now() - interval '1 day', now() - interval '1 day', now() - interval '1 day'").await; // gone: not counted
    let (kept, _) = share(&app, "'active', now() + interval '1 hour', null, null").await;
    app::holds::db::place(&pool, &app::hold_owners(), &actor, app::holds::HoldTarget::Share(kept), "Case 17: keep the evidence").await.unwrap();
    exec(&pool, &format!("update shares set expires_at = now() - interval '1 day' where id = {kept}")).await; // held past its expiry

    // Sessions: ours, one expired two hours ago (overdue), one ten minutes ago (past).
    exec(&pool, "insert into tower_sessions.session (id, data, expiry_date) values ('s-old', '\\x00', now() - interval '2 hours'), ('s-recent', '\\x00', now() - interval '10 minutes')").await;
    // Passkey challenges: one abandoned two hours ago, one live.
    exec(
        &pool,
        "insert into passkey_challenges (id, kind, state, expires_at) values
         (gen_random_uuid(), 'signin', '{}', now() - interval '2 hours'), (gen_random_uuid(), 'signin', '{}', now() + interval '5 minutes')",
    )
    .await;
    // Invites: redeemed long ago (kept as the record), unused and expired, unused and live.
    exec(
        &pool,
        "insert into admin_invites (token_hash, created_at, expires_at, redeemed_at) values
         ('\\x01', now() - interval '30 days', now() - interval '29 days', now() - interval '29 days'),
         ('\\x02', now() - interval '3 hours', now() - interval '2 hours', null),
         ('\\x03', now(), now() + interval '30 minutes', null)",
    )
    .await;
    // Rate-limit windows: two ended days ago, one current.
    exec(
        &pool,
        "insert into rate_limit_counters (bucket, window_start, hits) values
         ('a', now() - interval '3 days', 1), ('b', now() - interval '2 days', 1), ('c', now(), 1)",
    )
    .await;
    // Audit events from 27 months ago (past the 25-month detach threshold by far).
    exec(&pool, "insert into audit_events (occurred_at, kind) select now() - interval '27 months', 'auth.signin' from generate_series(1, 5)").await;
    // An export file, and export requests: one 100 days old.
    app.write_stored(&app::storage::new_key(app::storage::Namespace::Exports), b"csv").await;
    exec(
        &pool,
        "insert into audit_export_requests (id, range_from, range_to, requested_at) values
         (gen_random_uuid(), now() - interval '2 days', now() - interval '1 day', now() - interval '100 days'),
         (gen_random_uuid(), now() - interval '2 days', now() - interval '1 day', now())",
    )
    .await;
    // Run records: one 100 days old.
    exec(&pool, "insert into maintenance_runs (job, trigger, started_at, finished_at, ok, steps) values ('prune', 'cli', now() - interval '100 days', now() - interval '100 days', true, '[]')").await;

    let r = report(&app, &cookie).await;
    assert_eq!(figures(kind(&r, "inquiries")), (6, 3, 3, 1));
    assert_eq!(figures(kind(&r, "share_files")), (6, 3, 2, 1));
    assert_eq!(figures(kind(&r, "sessions")), (3, 2, 1, 0));
    assert_eq!(figures(kind(&r, "passkey_challenges")), (2, 1, 1, 0));
    assert_eq!(figures(kind(&r, "invites")), (3, 1, 1, 0));
    assert_eq!(figures(kind(&r, "rate_limit_windows")), (3, 2, 2, 0));
    assert_eq!(figures(kind(&r, "export_files")), (1, 0, 0, 0));
    assert_eq!(figures(kind(&r, "export_requests")), (2, 1, 1, 0));
    assert_eq!(figures(kind(&r, "run_records")), (1, 1, 1, 0));
    assert_eq!(figures(kind(&r, "archived_months")), (0, 0, 0, 0));
    let audit = kind(&r, "audit_events");
    assert_eq!((audit.past_promise, audit.overdue), (5, 5));
    assert_eq!(audit.count, scalar(&pool, "select count(*) from audit_events").await);
    assert_eq!(r.holds, 2);
    // The oldest inquiry is the database's oldest.
    let oldest: time::OffsetDateTime = sqlx::query_scalar("select min(created_at) from inquiries").fetch_one(&pool).await.unwrap();
    assert_eq!(kind(&r, "inquiries").oldest_at, Some(oldest));
    // Promises come from the settings in force.
    assert!(kind(&r, "inquiries").promise.contains("180 days"), "{}", kind(&r, "inquiries").promise);
    exec(&pool, "insert into settings (key, value) values ('retention_days', '500') on conflict (key) do update set value = excluded.value").await;
    let r = report(&app, &cookie).await;
    assert!(kind(&r, "inquiries").promise.contains("500 days"));
    assert_eq!(figures(kind(&r, "inquiries")), (6, 0, 0, 1), "nothing is 500 days old");

    // After the jobs run, nothing is past its promise but what is held.
    exec(&pool, "delete from settings where key = 'retention_days'").await;
    for job in ["prune", "share_gc", "audit_archive"] {
        run(&app, job).await;
    }
    let r = report(&app, &cookie).await;
    for k in &r.kinds {
        let left = if k.kind == "audit_events" { 5 } else { 0 }; // waits for upkeep to detach its month
        assert_eq!(k.overdue, left, "{}: {k:?}", k.kind);
    }
    assert_eq!(kind(&r, "inquiries").held, 1);
    assert_eq!(kind(&r, "share_files").held, 1);
    let prune = kind(&r, "inquiries").last_run.as_ref().expect("prune ran");
    assert!(prune.did.contains("deleted 3"), "{}", prune.did);
    app.shutdown().await;
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn items_past_their_promise_by_more_than_a_job_interval_raise_an_alert_until_they_are_gone(pool: PgPool) {
    let app = spawn_app_with(pool.clone(), NO_AFTER_RESPONSE, |_| {}).await;
    let open = "select count(*) from alerts where kind = 'retention.overdue' and subject = 'share_files' and resolved_at is null";
    // Expired 30 seconds ago: past, but within one GC interval: no alert.
    share(&app, "'active', now() - interval '30 seconds', null, null").await;
    run(&app, "prune").await;
    assert_eq!(scalar(&pool, open).await, 0);
    // Expired ten minutes ago and still stored: the GC is late.
    share(&app, "'active', now() - interval '10 minutes', null, null").await;
    run(&app, "prune").await;
    assert_eq!(scalar(&pool, open).await, 1);
    let message: String = sqlx::query_scalar("select message from alerts where kind = 'retention.overdue'").fetch_one(&pool).await.unwrap();
    assert!(message.contains("Shared files") && message.contains("Share GC"), "{message}");
    run(&app, "share_gc").await;
    run(&app, "prune").await;
    assert_eq!(scalar(&pool, open).await, 0, "resolved once the files are gone");
    app.shutdown().await;
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_report_download_is_timestamped_and_recorded(pool: PgPool) {
    let app = spawn_app_with(pool.clone(), NO_AFTER_RESPONSE, |_| {}).await;
    let admin = create_admin(&pool, "Ana").await;
    let cookie = session_cookie_for(&pool, admin).await;
    let res = app.client.get(app.url("/admin/retention/report.json")).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let disposition = res.headers()["content-disposition"].to_str().unwrap().to_string();
    assert!(disposition.starts_with("attachment; filename=\"ebb-retention-") && disposition.ends_with("Z.json\""), "{disposition}");
    let body: RetentionReport = res.json().await.unwrap();
    assert_eq!(body.kinds.len(), 16);
    let recorded = scalar(&pool, &format!("select count(*) from audit_events where kind = 'retention.report' and admin_id = '{admin}'")).await;
    assert_eq!(recorded, 1);
    // Without a session: no report, nothing recorded.
    let res = app.client.get(app.url("/admin/retention/report.json")).send().await.unwrap();
    assert!(res.status() == 401 || res.status().is_redirection(), "{}", res.status());
    assert_eq!(scalar(&pool, "select count(*) from audit_events where kind = 'retention.report'").await, 1);
    app.shutdown().await;
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_cli_report_prints_json_and_fails_when_items_are_overdue(pool: PgPool) {
    let app = spawn_app_with(pool.clone(), NO_AFTER_RESPONSE, |_| {}).await;
    let mut out = Vec::new();
    server::maintenance::retention_report(&app.state, true, &mut out).await.unwrap();
    let r: RetentionReport = serde_json::from_slice(&out).unwrap();
    assert_eq!(r.overdue(), 0);
    let mut text = Vec::new();
    server::maintenance::retention_report(&app.state, false, &mut text).await.unwrap();
    assert!(String::from_utf8(text).unwrap().contains("Inquiries"));

    exec(&pool, "insert into inquiries (name, email, message, created_at) values ('old', 'o@example.org', 'm', now() - interval '400 days')").await;
    let mut out = Vec::new();
    let err = server::maintenance::retention_report(&app.state, true, &mut out).await.unwrap_err();
    assert!(err.contains("1 items are past their promise"), "{err}");
    let r: RetentionReport = serde_json::from_slice(&out).unwrap();
    assert_eq!(figures(kind(&r, "inquiries")), (1, 1, 1, 0));
    app.shutdown().await;
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn hold_prune_lift_prune_through_the_admin_api(pool: PgPool) {
    let app = spawn_app_with(pool.clone(), NO_AFTER_RESPONSE, |_| {}).await;
    let admin = create_admin(&pool, "Ana").await;
    let cookie = session_cookie_for(&pool, admin).await;
    let id: uuid::Uuid = sqlx::query_scalar(
        "insert into inquiries (name, email, message, created_at) values ('V', 'v@example.org', 'm', now() - interval '400 days') returning id",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    let place = |reason: &str| json!({ "target": { "Inquiry": id }, "reason": reason });
    // A reason is required (10–256 characters), and holds are for admins only.
    assert_eq!(call(&app, "/api/admin/holds/place", Some(&cookie), place("short")).await.status(), 400);
    assert_eq!(call(&app, "/api/admin/holds/place", None, place("Case 17: keep for the court")).await.status(), 401);
    let res = call(&app, "/api/admin/holds/place", Some(&cookie), place("Case 17: keep for the court")).await;
    assert_eq!(res.status(), 200);
    let hold: i64 = res.json().await.unwrap();
    assert_eq!(call(&app, "/api/admin/holds/place", Some(&cookie), place("Case 17: keep for the court")).await.status(), 409);

    // Held: the inbox says so, refuses to delete it, and prune keeps it.
    let page: serde_json::Value = call_form(&app, "/api/admin/inbox", Some(&cookie), &[]).await.json().await.unwrap();
    assert_eq!(page["items"][0]["held"], json!(true));
    assert_eq!(call(&app, "/api/admin/inbox/delete", Some(&cookie), json!({ "ids": [id] })).await.status(), 409);
    run(&app, "prune").await;
    assert_eq!(scalar(&pool, "select count(*) from inquiries").await, 1);
    let holds: serde_json::Value = call_form(&app, "/api/admin/holds", Some(&cookie), &[]).await.json().await.unwrap();
    assert_eq!(holds.as_array().unwrap().len(), 1);
    assert_eq!(holds[0]["reason"], json!("Case 17: keep for the court"));

    let res = call_form(&app, "/api/admin/holds/lift", Some(&cookie), &[("id", &hold.to_string())]).await;
    assert_eq!(res.status(), 200);
    assert_eq!(call_form(&app, "/api/admin/holds/lift", Some(&cookie), &[("id", &hold.to_string())]).await.status(), 404);
    run(&app, "prune").await;
    assert_eq!(scalar(&pool, "select count(*) from inquiries").await, 0);
    let story: Vec<String> =
        sqlx::query_scalar("select kind from audit_events where kind like 'hold.%' order by occurred_at, id").fetch_all(&pool).await.unwrap();
    assert_eq!(story, ["hold.place", "hold.lift"]);
    app.shutdown().await;
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn visitors_read_the_live_promises_linked_from_the_form_and_the_share_page(pool: PgPool) {
    let app = spawn_app_with(pool.clone(), NO_AFTER_RESPONSE, |_| {}).await;
    exec(&pool, "insert into settings (key, value) values ('retention_days', '42')").await;
    let page = app.client.get(app.url("/retention")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    assert!(html.contains("42 days"), "the page states the retention setting");
    assert!(html.contains("15 minutes"), "and the delivery grace");
    assert!(html.contains("Nothing is kept longer"));
    let home = app.client.get(app.url("/")).send().await.unwrap().text().await.unwrap();
    assert!(home.contains("href=\"/retention\""));
    app.shutdown().await;
}

/// What has ended does not grow for ever: prune deletes alerts resolved and shares purged more
/// than 90 days ago (a share a hold names stays), and deletion-journal entries older than 400
/// days; anything younger stays.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn prune_forgets_ended_records_after_their_keeping(pool: PgPool) {
    let app = spawn_app_with(pool.clone(), NO_AFTER_RESPONSE, |_| {}).await;
    exec(&pool, "insert into alerts (kind, message, resolved_at, resolved_by) values ('a.old', 'x', now() - interval '91 days', 'auto'), ('a.recent', 'x', now() - interval '89 days', 'auto')").await;
    exec(&pool, "insert into alerts (kind, message, raised_at) values ('a.open', 'x', now() - interval '400 days')").await;
    let (old, _) = share(&app, "'purged', now(), null, now() - interval '91 days'").await;
    let (recent, _) = share(&app, "'purged', now(), null, now() - interval '89 days'").await;
    let (held, _) = share(&app, "'purged', now(), null, now() - interval '91 days'").await;
    let (active, _) = share(&app, "'active', now() + interval '1 day', null, null").await;
    exec(&pool, &format!("insert into legal_holds (share_id, reason) values ({held}, 'case 12, kept for the court')")).await;
    let stamp = |days: i64| {
        (time::OffsetDateTime::now_utc() - time::Duration::days(days))
            .format(&time::macros::format_description!("[year][month][day][hour][minute][second]"))
            .unwrap()
    };
    let (old_entry, new_entry) = (format!("deletions/{}-{}.json", stamp(401), "a".repeat(32)), format!("deletions/{}-{}.json", stamp(399), "b".repeat(32)));
    for key in [&old_entry, &new_entry] {
        app.write_stored(key, br#"{"at":"2025-01-01T00:00:00Z","kind":"share_purge","ids":[],"keys":[]}"#).await;
    }

    run(&app, app::kernel::prune::JOB).await;

    let alerts: Vec<String> = sqlx::query_scalar("select kind from alerts order by kind").fetch_all(&pool).await.unwrap();
    assert_eq!(alerts, ["a.open", "a.recent"]);
    let shares: Vec<i64> = sqlx::query_scalar("select id from shares order by id").fetch_all(&pool).await.unwrap();
    assert_eq!(shares, [recent, held, active], "{old} was purged 91 days ago");
    let journal: Vec<String> = app.stored_keys(app::storage::Namespace::Deletions).await;
    assert_eq!(journal, [new_entry]);
}
