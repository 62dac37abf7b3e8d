//! The admin inbox over HTTP: the streamed CSV export, deletes, retention settings, cleanup.

use std::sync::atomic::Ordering;

use sqlx::PgPool;

use crate::helpers::{call, call_form, create_admin, session_cookie_for, spawn_app, TestApp};

async fn signed_in(pool: &PgPool) -> (TestApp, String) {
    let admin = create_admin(pool, "Ada").await;
    let cookie = session_cookie_for(pool, admin).await;
    (spawn_app(pool.clone()).await, cookie)
}

async fn insert(pool: &PgPool, name: &str, email: &str, message: &str, age_days: i32) {
    sqlx::query("insert into inquiries (name, email, message, created_at) values ($1, $2, $3, now() - make_interval(days => $4))")
        .bind(name)
        .bind(email)
        .bind(message)
        .bind(age_days)
        .execute(pool)
        .await
        .unwrap();
}

async fn export(app: &TestApp, cookie: &str, query: &str) -> reqwest::Response {
    app.client.get(app.url(&format!("/admin/inbox/export.csv{query}"))).header("cookie", cookie).send().await.unwrap()
}

/// `n` inquiries of 2 KB each (N1 the newest, N`n` the oldest): more than the sockets' buffers
/// hold once `n` is in the tens of thousands.
async fn insert_large(pool: &PgPool, n: i32) {
    sqlx::query(
        "insert into inquiries (name, email, message, created_at)
         select 'N' || g, 'n@example.org', repeat('x', 2000), now() - make_interval(secs => g) from generate_series(1, $1) g",
    )
    .bind(n)
    .execute(pool)
    .await
    .unwrap();
}

fn parse(body: &[u8]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_reader(body);
    let header = reader.headers().unwrap().iter().map(str::to_owned).collect();
    let rows = reader.records().map(|r| r.unwrap().iter().map(str::to_owned).collect()).collect();
    (header, rows)
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_hostile_message_round_trips_through_a_csv_parser_and_formulas_are_neutralised(pool: PgPool) {
    let (app, cookie) = signed_in(&pool).await;
    let message = "=HYPERLINK(\"http://evil.example\",\"click\"), said \"Bob\"\nsecond line 🙂\r\nthird";
    insert(&pool, "@Ann, \"the\" admin", "+ann@example.org", message, 0).await;
    let res = export(&app, &cookie, "").await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "text/csv; charset=utf-8");
    let disposition = res.headers()["content-disposition"].to_str().unwrap().to_owned();
    let today = time::OffsetDateTime::now_utc().date();
    assert_eq!(disposition, format!("attachment; filename=\"inquiries-{today}.csv\""));
    let body = res.bytes().await.unwrap();
    assert!(body.ends_with(b"\r\n"), "RFC 4180 line ends");
    let (header, rows) = parse(&body);
    assert_eq!(header, ["id", "received_at", "name", "email", "message"]);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][2], "'@Ann, \"the\" admin");
    assert_eq!(rows[0][3], "'+ann@example.org");
    assert_eq!(rows[0][4], format!("'{message}"), "quotes, commas, newlines and emoji survive; the formula is neutralised");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn exporting_1001_rows_writes_1001_rows_with_6_queries(pool: PgPool) {
    let (app, cookie) = signed_in(&pool).await;
    sqlx::query(
        "insert into inquiries (name, email, message, created_at)
         select 'N' || g, 'n' || g || '@example.org', 'm' || g, now() - make_interval(secs => g) from generate_series(1, 1001) g",
    )
    .execute(&pool)
    .await
    .unwrap();
    let before = app.state.domain::<app::inbox::export::ExportMetrics>().page_queries.load(Ordering::SeqCst);
    let body = export(&app, &cookie, "").await.bytes().await.unwrap();
    let queries = app.state.domain::<app::inbox::export::ExportMetrics>().page_queries.load(Ordering::SeqCst) - before;
    let (_, rows) = parse(&body);
    assert_eq!(rows.len(), 1001);
    assert_eq!(queries, 6, "5 full pages of 200 and one of 1");
    let mut ids: Vec<&String> = rows.iter().map(|r| &r[0]).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 1001, "no row repeated");
    assert_eq!(rows[0][2], "N1001", "oldest first");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn exporting_no_rows_gives_the_header_only_and_bom_is_optional(pool: PgPool) {
    let (app, cookie) = signed_in(&pool).await;
    let body = export(&app, &cookie, "").await.bytes().await.unwrap();
    assert_eq!(&body[..], b"id,received_at,name,email,message\r\n");
    let with_bom = export(&app, &cookie, "?bom=1").await.bytes().await.unwrap();
    assert_eq!(&with_bom[..3], "\u{feff}".as_bytes());
    assert_eq!(&with_bom[3..], &body[..]);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_export_can_be_limited_to_a_search(pool: PgPool) {
    let (app, cookie) = signed_in(&pool).await;
    insert(&pool, "Ann", "ann@example.org", "about invoices", 1).await;
    insert(&pool, "Bob", "bob@example.org", "about 100% cotton_shirts", 1).await;
    let (_, rows) = parse(&export(&app, &cookie, "?q=INVOICE").await.bytes().await.unwrap());
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][2], "Ann");
    // LIKE wildcards in the search are taken literally.
    let (_, rows) = parse(&export(&app, &cookie, "?q=100%25%20cotton_").await.bytes().await.unwrap());
    assert_eq!(rows.len(), 1);
    let (_, rows) = parse(&export(&app, &cookie, "?q=%25").await.bytes().await.unwrap());
    assert_eq!(rows.len(), 1, "'%' matches only a literal percent sign");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_signed_out_export_is_refused(pool: PgPool) {
    insert(&pool, "Ann", "ann@example.org", "secret", 1).await;
    let app = spawn_app(pool).await;
    let res = app.client.get(app.url("/admin/inbox/export.csv")).send().await.unwrap();
    assert_eq!(res.status(), 303);
    assert!(!res.text().await.unwrap().contains("secret"));
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_export_whose_audit_record_cannot_be_written_does_not_run(pool: PgPool) {
    insert(&pool, "Ann", "ann@example.org", "secret", 1).await;
    let (app, cookie) = signed_in(&pool).await;
    // The audit log refuses this one kind of event (as a full disk or a lost connection would).
    sqlx::query(
        "create function refuse_export_event() returns trigger language plpgsql as $$
         begin if new.kind = 'inquiry.export' then raise exception 'audit log unavailable'; end if; return new; end $$",
    )
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query("create trigger refuse_export before insert on audit_events for each row execute function refuse_export_event()").execute(&pool).await.unwrap();
    let res = export(&app, &cookie, "").await;
    assert_eq!(res.status(), 500);
    assert!(res.headers().get("content-disposition").is_none());
    let body = res.text().await.unwrap();
    assert!(!body.contains("secret") && !body.contains("email"), "no data left Ebb: {body}");
    let metrics = app.state.shared::<app::inbox::export::ExportMetrics>();
    assert_eq!(metrics.page_queries.load(Ordering::Relaxed), 0, "the export never queried");
    // With the audit log back, the export runs and is recorded.
    sqlx::query("drop trigger refuse_export on audit_events").execute(&pool).await.unwrap();
    let res = export(&app, &cookie, "").await;
    assert_eq!(res.status(), 200);
    assert!(res.text().await.unwrap().contains("secret"));
    let recorded: i64 = sqlx::query_scalar("select count(*) from audit_events where kind = 'inquiry.export'").fetch_one(&pool).await.unwrap();
    assert_eq!(recorded, 1);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn html_in_a_message_is_shown_literally_in_the_inbox(pool: PgPool) {
    let (app, cookie) = signed_in(&pool).await;
    insert(&pool, "<b>Ann</b>", "ann@example.org", "<script>alert(1)</script><img src=x onerror=alert(2)>", 0).await;
    let html = app.client.get(app.url("/admin/inbox")).header("cookie", &cookie).send().await.unwrap().text().await.unwrap();
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;"), "escaped text in the page");
    assert!(!html.contains("<script>alert(1)"));
    assert!(!html.contains("<img src=x"));
    assert!(html.contains("&lt;b&gt;Ann&lt;/b&gt;"));
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn deleting_many_inquiries_records_each_and_updates_the_counts(pool: PgPool) {
    let (app, cookie) = signed_in(&pool).await;
    for n in 0..3 {
        insert(&pool, &format!("P{n}"), "p@example.org", "m", n * 4).await;
    }
    let counts: serde_json::Value = call_form(&app, "/api/admin/inbox/counts", Some(&cookie), &[]).await.json().await.unwrap();
    assert_eq!((counts["total"].as_i64(), counts["last_24h"].as_i64(), counts["last_7d"].as_i64()), (Some(3), Some(1), Some(2)));
    let ids: Vec<uuid::Uuid> = sqlx::query_scalar("select id from inquiries where name in ('P0', 'P1')").fetch_all(&pool).await.unwrap();
    let res = call(&app, "/api/admin/inbox/delete", Some(&cookie), serde_json::json!({ "ids": ids })).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.json::<u64>().await.unwrap(), 2);
    let counts: serde_json::Value = call_form(&app, "/api/admin/inbox/counts", Some(&cookie), &[]).await.json().await.unwrap();
    assert_eq!(counts["total"], 1);
    let recorded: i64 = sqlx::query_scalar("select count(*) from audit_events where kind = 'inquiry.delete'").fetch_one(&pool).await.unwrap();
    assert_eq!(recorded, 2);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn opening_the_inbox_triggers_prune_in_the_background(pool: PgPool) {
    let (app, cookie) = signed_in(&pool).await;
    insert(&pool, "Old", "o@example.org", "m", 200).await;
    insert(&pool, "New", "n@example.org", "m", 0).await;
    let page: serde_json::Value = call_form(&app, "/api/admin/inbox", Some(&cookie), &[]).await.json().await.unwrap();
    assert_eq!(page["items"].as_array().unwrap().len(), 2, "the page answered before prune ran");
    app.state.background.settle().await;
    let left: Vec<String> = sqlx::query_scalar("select name from inquiries").fetch_all(&pool).await.unwrap();
    assert_eq!(left, ["New"]);
    let trigger: String = sqlx::query_scalar("select trigger from maintenance_runs where job = 'prune'").fetch_one(&pool).await.unwrap();
    assert_eq!(trigger, "admin_inbox");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn retention_outside_1_to_3650_days_is_refused_with_a_clear_message(pool: PgPool) {
    let (app, cookie) = signed_in(&pool).await;
    for bad in ["0", "3651", "-3"] {
        let res = call_form(&app, "/api/admin/retention/save", Some(&cookie), &[("days", bad)]).await;
        assert_eq!(res.status(), 400, "{bad}");
        let body: serde_json::Value = res.json().await.unwrap();
        assert!(body["Invalid"]["retention_days"].as_str().unwrap().contains("1 to 3,650"), "{body}");
    }
    let stored: Option<String> = sqlx::query_scalar("select value from settings where key = 'retention_days'").fetch_optional(&pool).await.unwrap();
    assert_eq!(stored, None, "nothing saved");
    assert_eq!(call_form(&app, "/api/admin/retention/save", Some(&cookie), &[("days", "30")]).await.status(), 200);
    let stored: String = sqlx::query_scalar("select value from settings where key = 'retention_days'").fetch_one(&pool).await.unwrap();
    assert_eq!(stored, "30");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_dry_run_count_equals_what_the_next_prune_deletes(pool: PgPool) {
    let (app, cookie) = signed_in(&pool).await;
    for (n, age) in [(3, 40), (2, 31), (4, 29), (1, 0)] {
        for _ in 0..n {
            insert(&pool, "X", "x@example.org", "m", age).await;
        }
    }
    let preview: serde_json::Value = call_form(&app, "/api/admin/retention/preview", Some(&cookie), &[("days", "30")]).await.json().await.unwrap();
    // The preview's after-response check ran prune with the current 180 days (deleting none).
    app.state.background.settle().await;
    assert_eq!(preview["current_days"], 180);
    assert_eq!(preview["would_delete"], 5);
    call_form(&app, "/api/admin/retention/save", Some(&cookie), &[("days", "30")]).await;
    // Whatever triggered it first (the after-response check may have), one prune run deletes them.
    sqlx::query("delete from settings where key = 'last_cleanup_at'").execute(&pool).await.unwrap();
    let status: serde_json::Value = call_form(&app, "/api/admin/jobs/run", Some(&cookie), &[("job", "prune")]).await.json().await.unwrap();
    assert_eq!(status["ran"], true, "{status}");
    let step = status["job"]["last_run"]["steps"].as_array().unwrap().iter().find(|s| s["step"] == "inquiries").unwrap().clone();
    assert_eq!(step["counts"][0], serde_json::json!(["deleted", 5]), "{step}");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn run_cleanup_now_honours_the_claim_and_says_when_the_next_may_start(pool: PgPool) {
    let (app, cookie) = signed_in(&pool).await;
    let first: serde_json::Value = call_form(&app, "/api/admin/jobs/run", Some(&cookie), &[("job", "prune")]).await.json().await.unwrap();
    app.state.background.settle().await;
    let runs_after_first: i64 = sqlx::query_scalar("select count(*) from maintenance_runs where job = 'prune'").fetch_one(&pool).await.unwrap();
    let second: serde_json::Value = call_form(&app, "/api/admin/jobs/run", Some(&cookie), &[("job", "prune")]).await.json().await.unwrap();
    assert_eq!(second["ran"], false, "{first} {second}");
    assert!(second["job"]["next_possible_at"].is_string(), "{second}");
    let runs: i64 = sqlx::query_scalar("select count(*) from maintenance_runs where job = 'prune'").fetch_one(&pool).await.unwrap();
    assert_eq!(runs, 1, "one run in the hour, whoever triggered it");
    assert_eq!(runs_after_first, 1);
}

/// A client that stops reading keeps no database connection: the export's page reader gives
/// its connection back to the pool while the client stalls, and the export goes on, whole and
/// in order, when the client reads again.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_stalled_export_holds_no_database_connection_and_resumes_whole(pool: PgPool) {
    let (app, cookie) = signed_in(&pool).await;
    // 40 MB: more than the sockets' buffers hold, so the server waits on this client.
    insert_large(&pool, 20000).await;
    let metrics = app.state.shared::<app::inbox::export::ExportMetrics>();
    let mut res = export(&app, &cookie, "").await;
    let mut body = res.chunk().await.unwrap().expect("the header arrives").to_vec();
    // The client stalls: every connection of the pool is soon idle, with the export still open.
    let start = std::time::Instant::now();
    loop {
        let (size, idle) = (app.state.pool.size() as usize, app.state.pool.num_idle());
        if idle == size && metrics.page_queries.load(Ordering::SeqCst) > 0 {
            break;
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(20), "a stalled export kept a connection ({} of {size} in use)", size - idle);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(metrics.open.load(Ordering::SeqCst), 1, "the export waits for its client");
    let read_while_stalled = metrics.page_queries.load(Ordering::SeqCst);
    assert!(read_while_stalled < 100, "the reader waited for the client ({read_while_stalled} of 100 pages read)");
    while let Some(chunk) = res.chunk().await.unwrap() {
        body.extend_from_slice(&chunk);
    }
    let (_, rows) = parse(&body);
    assert_eq!(rows.len(), 20000, "the whole table once the client reads again");
    assert_eq!(rows[0][2], "N20000", "oldest first");
    assert_eq!(rows[19999][2], "N1");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_client_that_disconnects_stops_the_export_queries(pool: PgPool) {
    let (app, cookie) = signed_in(&pool).await;
    insert_large(&pool, 40000).await;
    let mut res = export(&app, &cookie, "").await;
    let first = res.chunk().await.unwrap().expect("the header arrives");
    assert!(first.starts_with(b"id,"));
    drop(res); // the client goes away after the first chunk
               // Wait until the server dropped the export's stream — not until the queries seem to pause
               // (a slow page query would look like a stop, and the test would pass with the export still
               // running). A stream that is never dropped fails here.
    let metrics = app.state.shared::<app::inbox::export::ExportMetrics>();
    let start = std::time::Instant::now();
    while metrics.open.load(Ordering::SeqCst) > 0 {
        assert!(start.elapsed() < std::time::Duration::from_secs(30), "the export went on after its client left");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let last = metrics.page_queries.load(Ordering::SeqCst);
    println!("export: {last} page queries before the export stopped (200 needed for the whole table)");
    assert!(last < 200, "a 200-page export stopped after {last} page queries once its client left");
}
