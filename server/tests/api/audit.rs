//! The audit viewer and its CSV over HTTP: 24 months, newest first, keyset pages, filters, the
//! export of the filtered view, and events written with (and only with) their change.

use sqlx::PgPool;

use crate::helpers::*;

async fn event(pool: &PgPool, at: &str, kind: &str, admin: Option<uuid::Uuid>, subject: &str, detail: Option<&str>) {
    sqlx::query(
        "insert into audit_events (occurred_at, kind, admin_id, admin_name, subject_type, subject_id, detail)
         values (now() - $1::interval, $2, $3, (select name from admins where id = $3), 'share', $4, $5)",
    )
    .bind(at)
    .bind(kind)
    .bind(admin)
    .bind(subject)
    .bind(detail)
    .execute(pool)
    .await
    .unwrap();
}

async fn page(app: &TestApp, cookie: &str, fields: &[(&str, &str)]) -> reqwest::Response {
    let mut form: Vec<(&str, &str)> = vec![("kind", ""), ("admin", ""), ("subject", ""), ("from", ""), ("to", "")];
    for (k, v) in fields {
        form.retain(|(f, _)| f != k);
        form.push((k, v));
    }
    call_form(app, "/api/admin/audit", Some(cookie), &form).await
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_viewer_pages_24_months_newest_first_and_filters(pool: PgPool) {
    let ana = create_admin(&pool, "Ana").await;
    let bo = create_admin(&pool, "Bo").await;
    let cookie = session_cookie_for(&pool, ana).await;
    let app = spawn_app(pool.clone()).await;
    for i in 0..120 {
        event(
            &pool,
            &format!("{i} minutes"),
            if i % 2 == 0 { "share.create" } else { "share.revoke" },
            Some(if i % 3 == 0 { bo } else { ana }),
            &format!("{i}"),
            None,
        )
        .await;
    }
    // Older than the promise: not shown (it waits for the archive).
    event(&pool, "25 months", "share.create", Some(ana), "old", None).await;

    let (mut seen, mut before) = (Vec::new(), String::new());
    loop {
        let res = page(&app, &cookie, &[("before", &before)]).await;
        assert_eq!(res.status(), 200);
        let body: serde_json::Value = res.json().await.unwrap();
        let rows = body["rows"].as_array().unwrap().clone();
        assert!(rows.len() <= 50);
        // (Jobs started after the responses may add their own events; this test's are shares'.)
        seen.extend(rows.iter().filter(|r| r["kind"].as_str().unwrap().starts_with("share.")).map(|r| r["subject_id"].as_str().unwrap().to_owned()));
        match body["next"].as_str() {
            Some(n) => before = n.to_owned(),
            None => break,
        }
    }
    // Every event once, newest first.
    let expected: Vec<String> = (0..120).map(|i| i.to_string()).collect();
    assert_eq!(seen, expected);

    let res = page(&app, &cookie, &[("kind", "share.revoke"), ("admin", &bo.to_string())]).await;
    let body: serde_json::Value = res.json().await.unwrap();
    let subjects: Vec<i64> = body["rows"].as_array().unwrap().iter().map(|r| r["subject_id"].as_str().unwrap().parse().unwrap()).collect();
    assert_eq!(subjects, (0..120).filter(|i| i % 2 == 1 && i % 3 == 0).collect::<Vec<_>>());
    let res = page(&app, &cookie, &[("subject", "7")]).await;
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body["rows"].as_array().unwrap().len(), 1);
    assert_eq!(body["rows"][0]["admin_name"], "Ana");
    let today = time::OffsetDateTime::now_utc().date().to_string();
    let res = page(&app, &cookie, &[("from", &today), ("to", &today)]).await;
    assert_eq!(res.status(), 200);

    // Bad filters: field errors, not a 500.
    let res = page(&app, &cookie, &[("kind", "<script>"), ("from", "yesterday")]).await;
    assert_eq!(res.status(), 400);
    let err: serde_json::Value = res.json().await.unwrap();
    assert!(err["Invalid"]["kind"].is_string() && err["Invalid"]["from"].is_string(), "{err}");
    // No session: 401.
    assert_eq!(call_form(&app, "/api/admin/audit", None, &[("kind", "")]).await.status(), 401);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_csv_export_is_the_filtered_view_with_formulas_neutralised(pool: PgPool) {
    let ana = create_admin(&pool, "Ana").await;
    let cookie = session_cookie_for(&pool, ana).await;
    let app = spawn_app(pool.clone()).await;
    event(&pool, "1 minute", "passkey.add", Some(ana), "p1", Some("=HYPERLINK(\"http://evil\")")).await;
    event(&pool, "2 minutes", "share.create", Some(ana), "s1", None).await;
    for i in 0..450 {
        event(&pool, &format!("{} minutes", 10 + i), "share.revoke", Some(ana), &format!("r{i}"), None).await;
    }
    let res = app.client.get(app.url("/admin/audit/export.csv?kind=passkey.add&admin=&subject=&from=&to=")).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert!(res.headers()["content-disposition"].to_str().unwrap().starts_with("attachment; filename=\"audit-"));
    let text = res.text().await.unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    assert_eq!(reader.headers().unwrap().iter().collect::<Vec<_>>(), app::audit::export::HEADER);
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(&rows[0][2], "passkey.add");
    assert_eq!(&rows[0][7], "'=HYPERLINK(\"http://evil\")", "a formula is shown, not run");
    // All 452 in pages of 200, newest first.
    let all = app.client.get(app.url("/admin/audit/export.csv")).header("cookie", &cookie).send().await.unwrap().text().await.unwrap();
    // (Jobs started after the responses may add their own events, e.g. the daily archive's
    // record of its checks; this test's are passkeys' and shares'.)
    let subjects: Vec<String> = csv::Reader::from_reader(all.as_bytes())
        .records()
        .map(Result::unwrap)
        .filter(|r| r[2].starts_with("share.") || r[2].starts_with("passkey."))
        .map(|r| r[6].to_owned())
        .collect();
    assert_eq!(subjects.len(), 452);
    assert_eq!(&subjects[..3], ["p1", "s1", "r0"]);
    assert_eq!(subjects.last().unwrap(), "r449");
    let bad = app.client.get(app.url("/admin/audit/export.csv?from=31-12-2026")).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(bad.status(), 400);
    let anonymous = app.client.get(app.url("/admin/audit/export.csv")).send().await.unwrap();
    assert_eq!(anonymous.status(), 303, "no session: sent to sign in");
    assert!(anonymous.headers()["location"].to_str().unwrap().starts_with("/signin"));
    // Each export that ran is in the log (the filtered one says by what), as every export is.
    let recorded: Vec<Option<String>> = sqlx::query_scalar("select detail from audit_events where kind = 'audit.export' and admin_id = $1 order by id")
        .bind(ana)
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(recorded, vec![Some("filtered by kind".to_string()), None], "the malformed and anonymous requests exported nothing");
}

/// Downloads that write an audit row are GETs: a link or image on another site must not make a
/// signed-in admin's browser write them. Ebb's own links (and a typed address) still work.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn recorded_downloads_refuse_requests_from_other_sites(pool: PgPool) {
    let ana = create_admin(&pool, "Ana").await;
    let cookie = session_cookie_for(&pool, ana).await;
    let app = spawn_app(pool.clone()).await;
    let events = || async { sqlx::query_scalar::<_, i64>("select count(*) from audit_events where admin_id = $1").bind(ana).fetch_one(&pool).await.unwrap() };
    for path in server::security::WRITING_GETS {
        let before = events().await;
        for site in ["cross-site", "same-site"] {
            let res = app.client.get(app.url(path)).header("cookie", &cookie).header("sec-fetch-site", site).send().await.unwrap();
            assert_eq!(res.status(), 403, "{path} from {site}");
        }
        assert_eq!(events().await, before, "{path}: nothing recorded for another site's request");
        for site in ["same-origin", "none"] {
            let res = app.client.get(app.url(path)).header("cookie", &cookie).header("sec-fetch-site", site).send().await.unwrap();
            assert_eq!(res.status(), 200, "{path} from {site}");
            let _ = res.bytes().await;
        }
        assert_eq!(events().await, before + 2, "{path}: both downloads recorded");
    }
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_admin_action_and_its_event_commit_together_or_not_at_all(pool: PgPool) {
    let ana = create_admin(&pool, "Ana").await;
    let cookie = session_cookie_for(&pool, ana).await;
    let app = spawn_app(pool.clone()).await;
    let share = |token: u8| {
        sqlx::query_scalar::<_, i64>(
            "insert into shares (token_hash, blob_key, file_name, size_bytes, content_type, expires_at)
             values ($1, 'shares/k' || $2, 'a.pdf', 1, 'application/pdf', now() + interval '1 day') returning id",
        )
        .bind(vec![token; 32])
        .bind(token as i32)
        .fetch_one(&pool)
    };
    // With the event: the revoke and its event, with who, what and a hashed client.
    let id = share(1).await.unwrap();
    assert_eq!(call_form(&app, "/api/admin/shares/revoke", Some(&cookie), &[("id", &id.to_string())]).await.status(), 200);
    let (admin_name, subject, client): (String, String, Option<String>) =
        sqlx::query_as("select admin_name, subject_id, client_hash from audit_events where kind = 'share.revoke'").fetch_one(&pool).await.unwrap();
    assert_eq!((admin_name.as_str(), subject), ("Ana", id.to_string()));
    let client = client.expect("the client is recorded, hashed");
    assert_eq!(client.len(), 32);
    assert!(!client.contains("127.0.0.1"));

    // When the event cannot be written, the change does not happen either.
    sqlx::query(
        "create function refuse_revoke_events() returns trigger language plpgsql as $$
         begin if new.kind = 'share.revoke' then raise exception 'audit write refused (test)'; end if; return new; end $$;
         ",
    )
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query("create trigger refuse before insert on audit_events for each row execute function refuse_revoke_events()").execute(&pool).await.unwrap();
    let id = share(2).await.unwrap();
    let res = call_form(&app, "/api/admin/shares/revoke", Some(&cookie), &[("id", &id.to_string())]).await;
    assert_eq!(res.status(), 500);
    let status: String = sqlx::query_scalar("select status from shares where id = $1").bind(id).fetch_one(&pool).await.unwrap();
    let expires_later: bool = sqlx::query_scalar("select expires_at > now() from shares where id = $1").bind(id).fetch_one(&pool).await.unwrap();
    assert_eq!((status.as_str(), expires_later), ("active", true), "no change without its event");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn downloads_purges_and_job_runs_are_events_without_visitor_data(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    sqlx::query(
        "insert into shares (token_hash, blob_key, file_name, size_bytes, content_type, expires_at)
         values ($1, 'shares/gone', 'a.pdf', 1, 'application/pdf', now() - interval '1 minute')",
    )
    .bind(vec![9u8; 32])
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query("insert into inquiries (name, email, message) values ('Vera Visitor', 'vera@example.org', 'hello')").execute(&pool).await.unwrap();
    let mut out = Vec::new();
    server::maintenance::run_now(&app.state, &["share_gc".into()], true, &mut out).await.unwrap();
    let kinds: Vec<String> = sqlx::query_scalar("select kind from audit_events order by id").fetch_all(&pool).await.unwrap();
    assert!(kinds.contains(&"share.purge".to_string()) && kinds.contains(&"maintenance.run".to_string()), "{kinds:?}");
    let leaked: i64 = sqlx::query_scalar("select count(*) from audit_events where concat_ws(' ', admin_name, subject_id, detail) ~* 'vera|example.org'")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(leaked, 0);
}
