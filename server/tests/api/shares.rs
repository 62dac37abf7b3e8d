//! One-time shares over real HTTP: upload (streamed, limited), the recipient's page, the
//! download claim under concurrency, hostile names, revoke and the GC triggers.

use futures::future::join_all;
use reqwest::multipart::{Form, Part};
use sqlx::PgPool;

use crate::helpers::{call_form, create_admin, session_cookie_for, spawn_app, spawn_app_on, Backend, TestApp};

/// Deterministic bytes that are not all the same (a wrong offset would show).
pub(crate) fn body_of(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 251) as u8).collect()
}

pub(crate) fn form(file_name: &str, data: Vec<u8>, expires: &str, note: &str) -> Form {
    Form::new()
        .text("expires_hours", expires.to_owned())
        .text("note", note.to_owned())
        .part("file", Part::bytes(data).file_name(file_name.to_owned()).mime_str("application/pdf").unwrap())
}

pub(crate) async fn upload(app: &TestApp, cookie: &str, form: Form) -> reqwest::Response {
    app.client.post(app.url("/api/admin/shares/upload")).header("cookie", cookie).header("accept", "application/json").multipart(form).send().await.unwrap()
}

/// Uploads through the API and returns the link's path (`/s/…`).
pub(crate) async fn share_via_upload(app: &TestApp, cookie: &str, name: &str, data: Vec<u8>) -> String {
    let res = upload(app, cookie, form(name, data, "24", "")).await;
    assert_eq!(res.status(), 201);
    let body: serde_json::Value = res.json().await.unwrap();
    body["url"].as_str().unwrap().strip_prefix("http://localhost:3000").expect("link on the public URL").to_owned()
}

pub(crate) async fn admin_cookie(pool: &PgPool) -> String {
    let admin = create_admin(pool, "Ada").await;
    session_cookie_for(pool, admin).await
}

pub(crate) async fn status_of(pool: &PgPool, id: i64) -> String {
    sqlx::query_scalar("select status from shares where id = $1").bind(id).fetch_one(pool).await.unwrap()
}

pub(crate) async fn only_share_id(pool: &PgPool) -> i64 {
    sqlx::query_scalar("select id from shares").fetch_one(pool).await.unwrap()
}

async fn an_upload_is_stored_and_its_link_is_returned_once_with_only_a_hash_kept(pool: PgPool, backend: Backend) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    let data = body_of(300_000);
    let res = upload(&app, &cookie, form("Q3 report.pdf", data.clone(), "24", "For Ann")).await;
    assert_eq!(res.status(), 201);
    let created: serde_json::Value = res.json().await.unwrap();
    let url = created["url"].as_str().unwrap();
    let token = url.strip_prefix("http://localhost:3000/s/").unwrap();
    assert_eq!(token.len(), 43);
    assert_eq!(created["file_name"], "Q3 report.pdf");
    assert_eq!(created["size_bytes"], 300_000);
    // The link as a QR code, an SVG with nothing that could run or be styled inline (CSP).
    let qr = created["qr_svg"].as_str().unwrap();
    assert!(qr.starts_with("<svg") && qr.ends_with("</svg>"), "{qr}");
    assert!(!qr.contains("<script") && !qr.contains("style=") && !qr.contains("<?xml"), "{qr}");

    let row: (Vec<u8>, String, i64, String, Option<String>, bool) = sqlx::query_as(
        "select token_hash, blob_key, size_bytes, status, note, expires_at between now() + interval '23 hours 59 minutes' and now() + interval '24 hours' from shares",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(row.0, app::token::hash_token(token), "only the token's hash is stored");
    // The token itself is in no table (any column, as text or as raw bytes) and in no stored key.
    assert_eq!(crate::helpers::tables_containing(&pool, token).await, Vec::<String>::new(), "the token is stored somewhere");
    assert!(app.stored_files().await.iter().all(|k| !k.contains(token)));
    assert_eq!((row.2, row.3.as_str(), row.4.as_deref(), row.5), (300_000, "active", Some("For Ann"), true));
    assert!(row.1.starts_with("shares/"), "{}", row.1);
    assert_eq!(app.read_stored(&row.1).await.unwrap(), data, "the stored file is the uploaded one");
    assert_eq!(app.stored_files().await, vec![row.1.clone()], "no partial file left");
    let recorded: i64 = sqlx::query_scalar("select count(*) from audit_events where kind = 'share.create'").fetch_one(&pool).await.unwrap();
    assert_eq!(recorded, 1);
}

async fn an_upload_over_the_limit_gets_413_and_leaves_no_file_behind(pool: PgPool, backend: Backend) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app_on(pool.clone(), backend, &["--share-max-bytes", "10000"], |_| {}).await;
    // Over the limit while streaming (the form's declared length is within the overhead).
    let res = upload(&app, &cookie, form("big.bin", body_of(10_001), "24", "")).await;
    assert_eq!(res.status(), 413);
    let err: serde_json::Value = res.json().await.unwrap();
    assert_eq!(err, serde_json::json!({ "TooLarge": { "limit_bytes": 10000 } }));
    // Declared too large: refused before the body is read.
    let res = upload(&app, &cookie, form("bigger.bin", body_of(200_000), "24", "")).await;
    assert_eq!(res.status(), 413);
    // Chunked (no Content-Length): counted as it streams.
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = (0..20).map(|_| Ok(body_of(1000))).collect();
    let part = Part::stream(reqwest::Body::wrap_stream(futures::stream::iter(chunks))).file_name("stream.bin");
    let res = upload(&app, &cookie, Form::new().text("expires_hours", "24").part("file", part)).await;
    assert_eq!(res.status(), 413);
    // Exactly at the limit is fine.
    let res = upload(&app, &cookie, form("fits.bin", body_of(10_000), "24", "")).await;
    assert_eq!(res.status(), 201);

    app.state.background.settle().await;
    let rows: i64 = sqlx::query_scalar("select count(*) from shares").fetch_one(&pool).await.unwrap();
    assert_eq!(rows, 1, "only the upload within the limit created a share");
    assert_eq!(app.stored_files().await.len(), 1, "refused uploads left no file: {:?}", app.stored_files().await);
}

async fn bad_uploads_get_field_errors_and_leave_nothing(pool: PgPool, backend: Backend) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app_on(pool.clone(), backend, &["--share-max-expiry-hours", "72"], |_| {}).await;
    let cases: Vec<(Form, &str)> = vec![
        (form("a.pdf", body_of(10), "168", ""), "expires_hours"), // above the configured cap
        (form("a.pdf", body_of(10), "0", ""), "expires_hours"),
        (form("a.pdf", body_of(10), "abc", ""), "expires_hours"),
        (form("a.pdf", body_of(10), "24", &"x".repeat(501)), "note"),
        (Form::new().text("expires_hours", "24"), "file"),
        // The expiry arriving after the file is still checked (and the file removed).
        (Form::new().part("file", Part::bytes(body_of(10)).file_name("a.pdf")).text("expires_hours", "9999"), "expires_hours"),
    ];
    for (form, field) in cases {
        let res = upload(&app, &cookie, form).await;
        assert_eq!(res.status(), 400, "{field}");
        let err: serde_json::Value = res.json().await.unwrap();
        assert!(err["Invalid"][field].is_string(), "{field}: {err}");
    }
    // The messages are in the admin's language (the switch's cookie, else Accept-Language).
    let expect = [
        ("", "Choose an expiry between 1 hour and 3 days.", "Choose a file to share."),
        ("ebb_lang=ja", "有効期間は 1 時間〜3 日間の範囲で選択してください。", "共有するファイルを選択してください。"),
    ];
    for (lang_cookie, expiry, file) in expect {
        let send = |form: Form| {
            let cookie = format!("{cookie}; {lang_cookie}");
            app.client.post(app.url("/api/admin/shares/upload")).header("cookie", cookie).header("accept", "application/json").multipart(form).send()
        };
        let err: serde_json::Value = send(form("a.pdf", body_of(10), "168", "")).await.unwrap().json().await.unwrap();
        assert_eq!(err["Invalid"]["expires_hours"], expiry);
        let err: serde_json::Value = send(Form::new().text("expires_hours", "24")).await.unwrap().json().await.unwrap();
        assert_eq!(err["Invalid"]["file"], file);
    }
    let res = app
        .client
        .post(app.url("/api/admin/shares/upload"))
        .header("cookie", &cookie)
        .header("accept-language", "ja-JP,ja;q=0.9")
        .header("accept", "application/json")
        .multipart(form("a.pdf", body_of(10), "24", &"x".repeat(501)))
        .send()
        .await
        .unwrap();
    let err: serde_json::Value = res.json().await.unwrap();
    assert_eq!(err["Invalid"]["note"], "メモは 500 文字以内にしてください。");
    // Not multipart at all.
    let res = app.client.post(app.url("/api/admin/shares/upload")).header("cookie", &cookie).body("hello").send().await.unwrap();
    assert_eq!(res.status(), 400);
    app.state.background.settle().await;
    let rows: i64 = sqlx::query_scalar("select count(*) from shares").fetch_one(&pool).await.unwrap();
    assert_eq!(rows, 0);
    assert!(app.stored_files().await.is_empty(), "{:?}", app.stored_files().await);
}

async fn an_upload_without_a_session_is_refused_and_stores_nothing(pool: PgPool, backend: Backend) {
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    let res = app.client.post(app.url("/api/admin/shares/upload")).multipart(form("a.pdf", body_of(1000), "24", "")).send().await.unwrap();
    assert_eq!(res.status(), 401);
    let res = upload(&app, "ebb_session=forged", form("a.pdf", body_of(1000), "24", "")).await;
    assert_eq!(res.status(), 401);
    assert!(app.stored_files().await.is_empty());
}

async fn the_share_page_shows_the_file_and_never_consumes_it(pool: PgPool, backend: Backend) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    let path = share_via_upload(&app, &cookie, "plan <b>v2 & more.pdf", body_of(2048)).await;
    for _ in 0..3 {
        let res = app.client.get(app.url(&path)).send().await.unwrap();
        assert_eq!(res.status(), 200);
        let html = res.text().await.unwrap();
        assert!(html.contains("plan &lt;b&gt;v2 &amp; more.pdf"), "name shown, escaped: {html}");
        assert!(html.contains("2.0 KiB"));
        assert!(html.contains(">Download<"));
    }
    // The page's data function, as link previewers or the hydrated page would call it.
    let token = path.strip_prefix("/s/").unwrap();
    let res = call_form(&app, "/api/share", None, &[("token", token)]).await;
    assert_eq!(res.status(), 200);
    assert_eq!(status_of(&pool, only_share_id(&pool).await).await, "active");
}

async fn a_download_streams_the_whole_file_once_then_says_already_downloaded(pool: PgPool, backend: Backend) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    let data = body_of(1_500_000);
    let path = share_via_upload(&app, &cookie, "data.pdf", data.clone()).await;

    let res = app.client.post(app.url(&path)).send().await.unwrap();
    assert_eq!(res.status(), 200);
    let h = res.headers().clone();
    assert_eq!(h["content-length"], "1500000");
    assert_eq!(h["content-type"], "application/pdf");
    assert_eq!(h["content-disposition"], "attachment; filename=\"data.pdf\"; filename*=UTF-8''data.pdf");
    assert_eq!(h["cache-control"], "no-store");
    assert_eq!(h["x-content-type-options"], "nosniff");
    assert_eq!(res.bytes().await.unwrap().as_ref(), data.as_slice());
    assert_eq!(status_of(&pool, only_share_id(&pool).await).await, "consumed");

    let again = app.client.post(app.url(&path)).send().await.unwrap();
    assert_eq!(again.status(), 410);
    assert!(again.headers().get("content-disposition").is_none());
    assert!(again.text().await.unwrap().contains("This file was already downloaded"));
    let page = app.client.get(app.url(&path)).send().await.unwrap();
    assert_eq!(page.status(), 410);
    assert!(page.text().await.unwrap().contains("already downloaded"));
}

async fn an_expired_share_is_410_expired_and_serves_nothing(pool: PgPool, backend: Backend) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    let path = share_via_upload(&app, &cookie, "late.pdf", body_of(100)).await;
    sqlx::query("update shares set expires_at = now() - interval '1 second'").execute(&pool).await.unwrap();
    for res in [app.client.post(app.url(&path)).send().await.unwrap(), app.client.get(app.url(&path)).send().await.unwrap()] {
        assert_eq!(res.status(), 410);
        assert!(res.headers().get("content-disposition").is_none());
        assert!(res.text().await.unwrap().contains("This link has expired"));
    }
    let consumed: Option<time::OffsetDateTime> = sqlx::query_scalar("select consumed_at from shares").fetch_one(&pool).await.unwrap();
    assert_eq!(consumed, None, "an expired share is never consumed (the GC may have purged it since)");
}

async fn a_wrong_token_is_404_and_reveals_nothing(pool: PgPool, backend: Backend) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    let path = share_via_upload(&app, &cookie, "secret-name.pdf", body_of(100)).await;
    let token = path.strip_prefix("/s/").unwrap();
    // One character changed, a malformed token, a guessed token of the right shape, and a token
    // that is the stored hash itself.
    let flipped = format!("{}{}", &token[..42], if token.ends_with('A') { 'B' } else { 'A' });
    let hash_hex: String = app::token::hash_token(token).iter().map(|b| format!("{b:02x}")).collect();
    let mut bodies = Vec::new();
    for wrong in [flipped.as_str(), "short", &"A".repeat(43), &hash_hex, "..%2F..%2Fetc%2Fpasswd"] {
        for res in
            [app.client.get(app.url(&format!("/s/{wrong}"))).send().await.unwrap(), app.client.post(app.url(&format!("/s/{wrong}"))).send().await.unwrap()]
        {
            assert_eq!(res.status(), 404, "{wrong}");
            assert!(res.headers().get("content-disposition").is_none());
            let body = res.text().await.unwrap();
            assert!(!body.contains("secret-name"), "{wrong}");
            assert!(body.contains("This link is not valid"));
            // Each page has its own script nonce; everything else must be the same.
            let nonce = body.split("nonce=\"").nth(1).and_then(|r| r.split('"').next()).unwrap_or("").to_owned();
            bodies.push(body.replace(&nonce, "NONCE").replace(wrong, "TOKEN"));
        }
    }
    bodies.dedup();
    assert_eq!(bodies.len(), 1, "every wrong token gets the same page: {bodies:#?}");
    assert_eq!(status_of(&pool, only_share_id(&pool).await).await, "active");
}

async fn fifty_simultaneous_downloads_deliver_the_file_exactly_once(pool: PgPool, backend: Backend) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app_on(pool.clone(), backend, &["--db-max-connections", "20"], |_| {}).await;
    let client = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
    for round in 0..20 {
        let data = body_of(64 * 1024 + round);
        let path = share_via_upload(&app, &cookie, "race.bin", data.clone()).await;
        let url = app.url(&path);
        let results = join_all((0..50).map(|_| {
            let (client, url) = (client.clone(), url.clone());
            async move {
                // A stalled response fails the test instead of hanging it.
                let res = tokio::time::timeout(std::time::Duration::from_secs(30), client.post(url).send()).await.expect("an answer within 30 s").unwrap();
                let status = res.status().as_u16();
                let disposition = res.headers().contains_key("content-disposition");
                (status, disposition, res.bytes().await.unwrap())
            }
        }))
        .await;
        let ok: Vec<_> = results.iter().filter(|r| r.0 == 200).collect();
        let gone = results.iter().filter(|r| r.0 == 410 && !r.1).count();
        assert_eq!(ok.len(), 1, "round {round}: exactly one delivery");
        assert_eq!(ok[0].2.as_ref(), data.as_slice(), "round {round}: the whole file");
        assert_eq!(gone, 49, "round {round}: every other request is 410 without a file");
    }
}

async fn hostile_stored_names_download_safely(pool: PgPool, backend: Backend) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    let long = format!("{}.txt", "ü".repeat(296));
    let names = ["../../etc/passwd", "a\"; filename=\"evil.exe", "x\r\nSet-Cookie: evil=1\r\n.txt", "報告 2026 ✓.pdf", long.as_str(), "\u{202E}fdp.exe"];
    for name in names {
        let path = share_via_upload(&app, &cookie, "placeholder.bin", body_of(10)).await;
        // Store the hostile name as-is (bypassing the upload's own cleaning), cut to the column's 255 characters.
        let stored: String = name.chars().take(255).collect();
        sqlx::query("update shares set file_name = $1 where id = (select max(id) from shares)").bind(&stored).execute(&pool).await.unwrap();

        let page = app.client.get(app.url(&path)).send().await.unwrap();
        assert_eq!(page.status(), 200, "{name:?}");
        let res = app.client.post(app.url(&path)).send().await.unwrap();
        assert_eq!(res.status(), 200, "{name:?}");
        // The only cookie is the download's receipt: the name cannot add one.
        let cookies: Vec<_> = res.headers().get_all("set-cookie").iter().map(|v| v.to_str().unwrap().to_owned()).collect();
        assert!(cookies.len() == 1 && cookies[0].starts_with("ebb_receipt="), "{name:?}: {cookies:?}");
        let dispositions: Vec<_> = res.headers().get_all("content-disposition").iter().collect();
        assert_eq!(dispositions.len(), 1);
        let value = dispositions[0].to_str().expect("printable ASCII");
        assert!(value.starts_with("attachment; filename=\""), "{value}");
        let encoded = value.split("filename*=UTF-8''").nth(1).expect("filename* present");
        let decoded = percent_encoding::percent_decode_str(encoded).decode_utf8().unwrap();
        assert_eq!(decoded, app::shares::clean_file_name(&stored), "{name:?}");
        assert!(!decoded.contains('/') && !decoded.contains('\\') && !decoded.chars().any(char::is_control), "{decoded:?}");
        assert_eq!(res.bytes().await.unwrap().as_ref(), body_of(10).as_slice());
    }
    // Uploaded with a 300-character (892-byte) name: stored within 255 bytes, cut between
    // characters, extension kept — a name a file system can save.
    let long_upload = format!("{}.pdf", "名".repeat(296));
    share_via_upload(&app, &cookie, &long_upload, body_of(10)).await;
    let stored: String = sqlx::query_scalar("select file_name from shares order by id desc limit 1").fetch_one(&pool).await.unwrap();
    assert!(stored.len() <= 255 && stored.len() > 240, "{} bytes", stored.len());
    assert!(stored.ends_with(".pdf") && stored.trim_end_matches(".pdf").chars().all(|c| c == '名'), "{stored}");
}

async fn a_missing_file_does_not_use_the_share_up(pool: PgPool, backend: Backend) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    let path = share_via_upload(&app, &cookie, "gone.pdf", body_of(100)).await;
    for f in app.stored_files().await {
        app.remove_stored(&f).await;
    }
    let res = app.client.post(app.url(&path)).send().await.unwrap();
    assert_eq!(res.status(), 503);
    assert!(res.text().await.unwrap().contains("Your link still works"));
    assert_eq!(status_of(&pool, only_share_id(&pool).await).await, "active");
}

async fn revoking_expires_a_share_now_and_the_gc_deletes_its_file(pool: PgPool, backend: Backend) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    let path = share_via_upload(&app, &cookie, "oops.pdf", body_of(100)).await;
    let id = only_share_id(&pool).await;
    let id_text = id.to_string();
    // The upload's own after-response GC run holds the job's claim for a minute: let it finish and
    // clear the claim, so what runs next is the run the revoke triggers.
    app.state.background.settle().await;
    sqlx::query("delete from settings where key = 'share_gc_sweep_at'").execute(&pool).await.unwrap();
    app.state.jobs().get("share_gc").unwrap().reset_hint();
    let res = call_form(&app, "/api/admin/shares/revoke", Some(&cookie), &[("id", &id_text)]).await;
    assert_eq!(res.status(), 200);
    let again = call_form(&app, "/api/admin/shares/revoke", Some(&cookie), &[("id", &id_text)]).await;
    assert_eq!(again.status(), 400, "only an active share can be revoked");
    let res = app.client.post(app.url(&path)).send().await.unwrap();
    assert_eq!(res.status(), 410);
    // The refusing page carries nothing of what it refuses: not in its HTML, not in the data
    // serialised for hydration, not from the data function.
    let page = app.client.get(app.url(&path)).send().await.unwrap();
    assert_eq!(page.status(), 410);
    let html = page.text().await.unwrap();
    assert!(html.contains("This link has expired"));
    assert!(!html.contains("oops"), "the file name is gone from the page: {html}");
    assert!(!html.contains("size_bytes") && !html.contains("expires_at"), "no facts in the hydration data: {html}");
    let token = path.strip_prefix("/s/").unwrap();
    let data = call_form(&app, "/api/share", None, &[("token", token)]).await.text().await.unwrap();
    assert!(!data.contains("oops"), "{data}");
    // Revoke triggered the GC in the background: the file is deleted, the share purged.
    app.state.background.settle().await;
    assert_eq!(status_of(&pool, id).await, "purged");
    assert!(app.stored_files().await.is_empty());
    let recorded: i64 = sqlx::query_scalar("select count(*) from audit_events where kind = 'share.revoke'").fetch_one(&pool).await.unwrap();
    assert_eq!(recorded, 1);
}

async fn the_share_page_download_and_admin_list_each_trigger_the_gc(pool: PgPool, backend: Backend) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    let live = share_via_upload(&app, &cookie, "live.pdf", body_of(10)).await;
    let expire_all_but_live = "update shares set expires_at = now() - interval '1 second' where id <> (select min(id) from shares) and status = 'active'";
    for (i, trigger) in ["share page", "admin list", "download"].iter().enumerate() {
        share_via_upload(&app, &cookie, "stale.pdf", body_of(10)).await;
        // The upload's own after-response check may still be running: let it finish first.
        app.state.background.settle().await;
        sqlx::query(expire_all_but_live).execute(&pool).await.unwrap();
        // Each trigger's claim is separate in time: clear it so this trigger may run.
        sqlx::query("delete from settings where key = 'share_gc_sweep_at'").execute(&pool).await.unwrap();
        app.state.jobs().get("share_gc").unwrap().reset_hint();
        let request = match i {
            0 => app.client.get(app.url(&live)),
            1 => app.client.post(app.url("/api/admin/shares")).header("cookie", &cookie).header("accept", "application/json").form(&[("before", "")][..0]),
            _ => app.client.post(app.url(&live)),
        };
        let res = request.send().await.unwrap();
        assert!(res.status().is_success(), "{trigger}: {}", res.status());
        app.state.background.settle().await;
        let unpurged_stale: i64 =
            sqlx::query_scalar("select count(*) from shares where file_name = 'stale.pdf' and status <> 'purged'").fetch_one(&pool).await.unwrap();
        assert_eq!(unpurged_stale, 0, "{trigger} ran the GC");
    }
    assert_eq!(app.stored_files().await.len(), 1, "only the downloaded share's file remains (delivery grace)");
}

async fn the_dashboard_overview_lists_shares_with_three_failed_deletes(pool: PgPool, backend: Backend) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    for name in ["ok.pdf", "stuck.pdf", "twice.pdf"] {
        share_via_upload(&app, &cookie, name, body_of(10)).await;
    }
    sqlx::query("update shares set purge_attempts = 3, next_purge_attempt_at = now() + interval '4 hours', expires_at = now() - interval '1 hour' where file_name = 'stuck.pdf'").execute(&pool).await.unwrap();
    sqlx::query("update shares set purge_attempts = 2 where file_name = 'twice.pdf'").execute(&pool).await.unwrap();
    let res = call_form(&app, "/api/admin/shares/overview", Some(&cookie), &[]).await;
    assert_eq!(res.status(), 200);
    let o: serde_json::Value = res.json().await.unwrap();
    assert_eq!(o["active"], 2);
    assert_eq!(o["awaiting_deletion"], 1);
    let problems = o["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0]["file_name"], "stuck.pdf");
    let page = app.client.get(app.url("/admin")).header("cookie", &cookie).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("stuck.pdf") && page.contains("could not be deleted"), "the dashboard shows it");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn maintenance_run_collects_expired_shares_and_leftovers_of_interrupted_uploads(pool: PgPool) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app(pool.clone()).await;
    share_via_upload(&app, &cookie, "old.pdf", body_of(100)).await;
    let id = only_share_id(&pool).await;
    sqlx::query("update shares set expires_at = now() - interval '1 minute'").execute(&pool).await.unwrap();
    // A crash mid-upload two days ago left a partial file; one from a running upload is fresh.
    let stale = app.storage.path().join("shares").join("0123abcd.1.part");
    std::fs::write(&stale, b"half").unwrap();
    std::fs::File::options().write(true).open(&stale).unwrap().set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(48 * 3600)).unwrap();
    std::fs::write(app.storage.path().join("shares").join("4567ef.2.part"), b"in progress").unwrap();

    // Whatever else ran first (the upload's after-response check), the CLI run leaves this state.
    let mut out = Vec::new();
    server::maintenance::run_now(&app.state, &["share_gc".into()], true, &mut out).await.unwrap();
    let out = String::from_utf8(out).unwrap();
    assert!(out.contains("share_gc: completed") && out.contains("abandoned_uploads"), "{out}");
    assert_eq!(status_of(&pool, id).await, "purged");
    assert!(app.stored_files().await.is_empty());
    let left: Vec<_> = std::fs::read_dir(app.storage.path().join("shares")).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    assert_eq!(left, vec!["4567ef.2.part".to_string()], "the fresh partial file is kept");
}

async fn the_admin_list_pages_newest_first_without_gaps_or_repeats(pool: PgPool, backend: Backend) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    sqlx::query(
        "insert into shares (token_hash, blob_key, file_name, size_bytes, content_type, expires_at)
         select sha256(int8send(g)), 'k' || g, 'f' || g || '.bin', g, 'application/octet-stream', now() + interval '1 day'
         from generate_series(1, 120) g",
    )
    .execute(&pool)
    .await
    .unwrap();
    let mut seen = Vec::new();
    let mut before: Option<i64> = None;
    loop {
        let form: Vec<(&str, String)> = before.map(|b| vec![("before", b.to_string())]).unwrap_or_default();
        let res =
            app.client.post(app.url("/api/admin/shares")).header("cookie", &cookie).header("accept", "application/json").form(&form).send().await.unwrap();
        assert_eq!(res.status(), 200);
        let page: serde_json::Value = res.json().await.unwrap();
        let ids: Vec<i64> = page["items"].as_array().unwrap().iter().map(|i| i["id"].as_i64().unwrap()).collect();
        assert!(ids.len() <= 50);
        seen.extend(ids);
        assert_eq!(page["limits"]["max_bytes"], 1u64 << 30);
        match page["next"].as_i64() {
            Some(n) => before = Some(n),
            None => break,
        }
    }
    let mut expected: Vec<i64> = sqlx::query_scalar("select id from shares").fetch_all(&pool).await.unwrap();
    expected.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(seen, expected, "every share once, newest first");
}

on_both_backends!(
    an_upload_is_stored_and_its_link_is_returned_once_with_only_a_hash_kept,
    an_upload_over_the_limit_gets_413_and_leaves_no_file_behind,
    bad_uploads_get_field_errors_and_leave_nothing,
    an_upload_without_a_session_is_refused_and_stores_nothing,
    the_share_page_shows_the_file_and_never_consumes_it,
    a_download_streams_the_whole_file_once_then_says_already_downloaded,
    an_expired_share_is_410_expired_and_serves_nothing,
    a_wrong_token_is_404_and_reveals_nothing,
    fifty_simultaneous_downloads_deliver_the_file_exactly_once,
    hostile_stored_names_download_safely,
    a_missing_file_does_not_use_the_share_up,
    revoking_expires_a_share_now_and_the_gc_deletes_its_file,
    the_share_page_download_and_admin_list_each_trigger_the_gc,
    the_dashboard_overview_lists_shares_with_three_failed_deletes,
    the_admin_list_pages_newest_first_without_gaps_or_repeats,
);

/// A full disk is the server's problem, said plainly: 507 with what to do, nothing kept, an
/// alert for the admins — never a 500. The next upload, with room again, works.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_full_disk_answers_507_keeps_nothing_and_alerts(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let cookie = admin_cookie(&pool).await;
    app.faults.disk_full_after(64 * 1024);
    let res = upload(&app, &cookie, form("big.bin", body_of(1024 * 1024), "24", "")).await;
    assert_eq!(res.status(), 507);
    let body: serde_json::Value = res.json().await.unwrap();
    assert!(body.get("StorageFull").is_some() || body == serde_json::json!("StorageFull"), "{body}");
    assert_eq!(app.stored_files().await, Vec::<String>::new(), "nothing kept");
    let shares: i64 = sqlx::query_scalar("select count(*) from shares").fetch_one(&pool).await.unwrap();
    assert_eq!(shares, 0);
    let alerts: i64 = sqlx::query_scalar("select count(*) from alerts where kind = 'storage.full' and resolved_at is null").fetch_one(&pool).await.unwrap();
    assert_eq!(alerts, 1);
    app.faults.heal();
    assert_eq!(upload(&app, &cookie, form("big.bin", body_of(1024 * 1024), "24", "")).await.status(), 201);
}
