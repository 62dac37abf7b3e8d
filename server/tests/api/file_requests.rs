//! File requests (one-time upload links), resumable one-time downloads with receipts, delivery
//! receipts and exact download limits (issue 33), over real HTTP on both storage backends.

use futures::future::join_all;
use reqwest::multipart::{Form, Part};
use sqlx::PgPool;
use std::time::Duration;

use crate::helpers::{call_form, spawn_app_on, spawn_second_instance, Backend, TestApp};
use crate::shares::{admin_cookie, body_of, form, share_via_upload, upload};

/// Creates a file request through the admin's server function; returns the link's path (`/r/…`).
async fn new_request(app: &TestApp, cookie: &str, max_mib: &str, note: &str) -> String {
    let res = call_form(app, "/api/admin/file-requests/create", Some(cookie), &[("expires_hours", "24"), ("max_mib", max_mib), ("note", note)]).await;
    assert_eq!(res.status(), 200);
    let created: serde_json::Value = res.json().await.unwrap();
    created["url"].as_str().unwrap().strip_prefix("http://localhost:3000").expect("link on the public URL").to_owned()
}

fn file_form(name: &str, data: Vec<u8>) -> Form {
    Form::new().part("file", Part::bytes(data).file_name(name.to_owned()).mime_str("application/octet-stream").unwrap())
}

async fn send_file(client: &reqwest::Client, app: &TestApp, path: &str, data: Vec<u8>) -> reqwest::Response {
    client.post(app.url(path)).header("accept", "application/json").multipart(file_form("scan.pdf", data)).send().await.unwrap()
}

/// Waits (a few seconds at most) until `query` returns true: delivery receipts are written when
/// a response's stream ends, after the response.
async fn eventually(pool: &PgPool, query: &str) {
    for _ in 0..100 {
        if sqlx::query_scalar::<_, bool>(query).fetch_one(pool).await.unwrap() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("never became true: {query}");
}

async fn fifty_concurrent_uploads_to_one_file_request_store_exactly_one(pool: PgPool, backend: Backend) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app_on(pool.clone(), backend, &["--db-max-connections", "20"], |_| {}).await;
    let path = new_request(&app, &cookie, "10", "Please send the signed contract").await;
    let token = path.strip_prefix("/r/").unwrap();
    assert_eq!(token.len(), 43, "256 bits");
    let hash: Vec<u8> = sqlx::query_scalar("select token_hash from file_requests").fetch_one(&pool).await.unwrap();
    assert_eq!(hash, app::token::hash_token(token), "only the token's hash is stored");
    assert_eq!(crate::helpers::tables_containing(&pool, token).await, Vec::<String>::new(), "the token is stored somewhere");

    // Link scanners and previews: 100 GETs and HEADs never use the link up.
    for i in 0..100 {
        let req = if i % 2 == 0 { app.client.get(app.url(&path)) } else { app.client.head(app.url(&path)) };
        let res = req.send().await.unwrap();
        assert_eq!(res.status(), 200, "look {i}");
    }
    let page = app.client.get(app.url(&path)).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("Please send the signed contract"), "the note is shown to the uploader");
    assert!(page.contains("10.0 MiB") || page.contains("10 MiB"), "the limit is shown");

    let client = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
    let results = join_all((0..50u8).map(|i| {
        let (client, app, path) = (client.clone(), &app, path.clone());
        async move {
            let data: Vec<u8> = body_of(200_000).into_iter().map(|b| b ^ i).collect();
            let res = tokio::time::timeout(Duration::from_secs(60), send_file(&client, app, &path, data.clone())).await.expect("an answer").status().as_u16();
            (res, data)
        }
    }))
    .await;
    let won: Vec<_> = results.iter().filter(|r| r.0 == 201).collect();
    let conflicts = results.iter().filter(|r| r.0 == 409).count();
    assert_eq!(won.len(), 1, "exactly one upload wins: {:?}", results.iter().map(|r| r.0).collect::<Vec<_>>());
    assert_eq!(conflicts, 49, "every other upload gets 409");

    // One stored object: the winner's, as a private item (no public link).
    let stored = app.stored_files().await;
    assert_eq!(stored.len(), 1, "no stray object: {stored:?}");
    let (key, origin, public): (String, String, bool) =
        sqlx::query_as("select blob_key, origin, token_hash is not null from shares").fetch_one(&pool).await.unwrap();
    assert_eq!((stored[0].as_str(), origin.as_str(), public), (key.as_str(), "request", false));
    assert_eq!(app.read_stored(&key).await.unwrap(), won[0].1, "the stored file is the winner's");
    let (status, used): (String, bool) = sqlx::query_as("select status, used_at is not null from file_requests").fetch_one(&pool).await.unwrap();
    assert_eq!((status.as_str(), used), ("used", true));
    let received: i64 = sqlx::query_scalar("select count(*) from audit_events where kind = 'file_request.receive'").fetch_one(&pool).await.unwrap();
    assert_eq!(received, 1);

    // The used link's page says so (409); it carries no note any more.
    let res = app.client.get(app.url(&path)).send().await.unwrap();
    assert_eq!(res.status(), 409);
    assert!(!res.text().await.unwrap().contains("signed contract"));

    // The admin downloads the received file (it stays; the download is recorded).
    let id: i64 = sqlx::query_scalar("select id from shares").fetch_one(&pool).await.unwrap();
    for _ in 0..2 {
        let res = app.client.get(app.url(&format!("/admin/shares/{id}/file"))).header("cookie", &cookie).send().await.unwrap();
        assert_eq!(res.status(), 200);
        assert!(res.headers()["content-disposition"].to_str().unwrap().contains("scan.pdf"));
        assert_eq!(res.bytes().await.unwrap().as_ref(), won[0].1.as_slice());
    }
    let without = app.client.get(app.url(&format!("/admin/shares/{id}/file"))).send().await.unwrap();
    assert!(matches!(without.status().as_u16(), 401 | 303 | 302), "{}", without.status());
    let fetched: i64 = sqlx::query_scalar("select count(*) from audit_events where kind = 'share.fetch'").fetch_one(&pool).await.unwrap();
    assert_eq!(fetched, 2);
}

async fn a_file_request_refuses_oversize_files_and_closed_links_keeping_nothing(pool: PgPool, backend: Backend) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    let path = new_request(&app, &cookie, "1", "").await;
    // Over the request's own limit (1 MiB): 413, nothing stored, the link still works.
    let res = send_file(&app.client, &app, &path, vec![7u8; 1024 * 1024 + 1]).await;
    assert_eq!(res.status(), 413);
    assert_eq!(app.stored_files().await, Vec::<String>::new());
    // No file field: a field error.
    let res = app.client.post(app.url(&path)).header("accept", "application/json").multipart(Form::new().text("note", "x")).send().await.unwrap();
    assert_eq!(res.status(), 400);
    // A plain browser form (no JavaScript) is answered with the page, not JSON.
    let res = app.client.post(app.url(&path)).multipart(file_form("a.txt", vec![1u8; 10])).send().await.unwrap();
    assert_eq!(res.status(), 303);
    assert_eq!(res.headers()["location"].to_str().unwrap(), format!("{path}?sent=1"));
    let thanks = app.client.get(app.url(&format!("{path}?sent=1"))).send().await.unwrap();
    assert_eq!(thanks.status(), 200);
    assert!(thanks.text().await.unwrap().contains("your file was received"));
    // A second upload after the first: 409 page, nothing more stored.
    let res = app.client.post(app.url(&path)).multipart(file_form("b.txt", vec![2u8; 10])).send().await.unwrap();
    assert_eq!(res.status(), 409);
    assert!(res.text().await.unwrap().contains("already sent"));
    assert_eq!(app.stored_files().await.len(), 1);

    // Revoked: 410 on the page and for an upload.
    let other = new_request(&app, &cookie, "1", "").await;
    let id: i64 = sqlx::query_scalar("select max(id) from file_requests").fetch_one(&pool).await.unwrap();
    let res = call_form(&app, "/api/admin/file-requests/revoke", Some(&cookie), &[("id", &id.to_string())]).await;
    assert_eq!(res.status(), 200);
    assert_eq!(app.client.get(app.url(&other)).send().await.unwrap().status(), 410);
    assert_eq!(send_file(&app.client, &app, &other, vec![3u8; 10]).await.status(), 410);
    assert_eq!(app.stored_files().await.len(), 1);
    // A guessed token: 404, like a malformed one.
    for guess in ["/r/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "/r/short", "/r/..%2F..%2Fetc"] {
        assert_eq!(app.client.get(app.url(guess)).send().await.unwrap().status(), 404, "{guess}");
        assert_eq!(send_file(&app.client, &app, guess, vec![1u8; 5]).await.status(), 404, "{guess}");
    }
    assert_eq!(app.stored_files().await.len(), 1);

    // The admin makes a share of the received file: a copy gets a one-time public link; the
    // received file keeps its own row, file and expiry.
    let share: i64 = sqlx::query_scalar("select id from shares").fetch_one(&pool).await.unwrap();
    let share_id = share.to_string();
    let form = [("id", share_id.as_str())];
    let publish = || call_form(&app, "/api/admin/shares/publish", Some(&cookie), &form);
    let res = publish().await;
    assert_eq!(res.status(), 200);
    let link: serde_json::Value = res.json().await.unwrap();
    let copy = link["id"].as_i64().unwrap();
    assert_ne!(copy, share, "the link belongs to a copy");
    let link = link["url"].as_str().unwrap().strip_prefix("http://localhost:3000").unwrap().to_owned();
    assert_eq!(app.stored_files().await.len(), 2, "the copy is a file of its own");
    let res = app.client.post(app.url(&link)).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.bytes().await.unwrap().as_ref(), &[1u8; 10]);
    assert_eq!(app.client.post(app.url(&link)).send().await.unwrap().status(), 410);
    // Past the link's grace the GC deletes the copy, and only the copy.
    sqlx::query("update share_deliveries set started_at = started_at - interval '1 hour'").execute(&pool).await.unwrap();
    sqlx::query("update shares set consumed_at = consumed_at - interval '1 hour', last_download_at = last_download_at - interval '1 hour' where id = $1")
        .bind(copy)
        .execute(&pool)
        .await
        .unwrap();
    let report = app::shares::gc::collect(&pool, &*app.state.blobs, 10, app::shares::gc::GcRules::default()).await.unwrap();
    assert_eq!(report.purged, 1);
    let states: Vec<(i64, String)> = sqlx::query_as("select id, status from shares order by id").fetch_all(&pool).await.unwrap();
    assert_eq!(states, vec![(share, "active".to_owned()), (copy, "purged".to_owned())]);
    assert_eq!(app.stored_files().await.len(), 1, "the received file is kept");
    let res = app.client.get(app.url(&format!("/admin/shares/{share}/file"))).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.bytes().await.unwrap().as_ref(), &[1u8; 10]);
    // It can be shared again (another copy, another link); the audit trail names both copies.
    let again: serde_json::Value = publish().await.json().await.unwrap();
    assert!(again["id"].as_i64().unwrap() > copy);
    let events: i64 = sqlx::query_scalar("select count(*) from audit_events where kind = 'share.publish'").fetch_one(&pool).await.unwrap();
    assert_eq!(events, 2);
    // Once the received file is deleted, nothing can be shared from it.
    let res = call_form(&app, "/api/admin/shares/revoke", Some(&cookie), &[("id", &share.to_string())]).await;
    assert_eq!(res.status(), 200);
    assert_eq!(publish().await.status(), 400);
}

/// The receipt cookie a download of `path` set (name=value): HttpOnly, scoped to exactly the
/// share's path, SameSite=Lax, for the delivery grace.
fn receipt_cookie(res: &reqwest::Response, path: &str) -> String {
    let set = res.headers().get("set-cookie").expect("a receipt").to_str().unwrap().to_owned();
    let attrs: Vec<&str> = set.split(';').map(str::trim).collect();
    assert!(attrs.contains(&"HttpOnly"), "{set}");
    assert!(attrs.contains(&format!("Path={path}").as_str()), "scoped to the share's own path: {set}");
    assert!(attrs.contains(&"SameSite=Lax"), "{set}");
    assert!(attrs.iter().any(|a| a.starts_with("Max-Age=")), "{set}");
    attrs[0].to_owned()
}

/// Starts a download of `path` as `agent` and breaks it after the first chunk; returns the
/// receipt, the ETag and the bytes received.
async fn broken_download(app: &TestApp, pool: &PgPool, path: &str, agent: &str, forwarded: Option<&str>) -> (String, String, bytes::Bytes) {
    let mut req = app.client.post(app.url(path)).header("user-agent", agent);
    if let Some(f) = forwarded {
        req = req.header("x-forwarded-for", f);
    }
    let mut res = req.send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["accept-ranges"], "bytes");
    let etag = res.headers()["etag"].to_str().unwrap().to_owned();
    let receipt = receipt_cookie(&res, path);
    let first = res.chunk().await.unwrap().expect("a first chunk");
    drop(res);
    eventually(pool, "select count(*) >= 1 from share_deliveries where bytes_sent > 0").await;
    (receipt, etag, first)
}

/// A resume request: `method` with the receipt, a Range from `from`, and the other headers given.
async fn resume(app: &TestApp, path: &str, method: reqwest::Method, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut req = app.client.request(method, app.url(path));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.send().await.unwrap()
}

async fn a_broken_download_resumes_with_its_receipt_only_and_only_within_the_grace(pool: PgPool, backend: Backend) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    // Larger than the loopback's socket buffers can hold, so the server cannot have handed the
    // whole file to the connection before the client goes away.
    let data = body_of(48 * 1024 * 1024 + 17);
    let path = share_via_upload(&app, &cookie, "big.bin", data.clone()).await;
    let (receipt, etag, first) = broken_download(&app, &pool, &path, "curl/8", None).await;
    let sent: i64 = sqlx::query_scalar("select bytes_sent from share_deliveries").fetch_one(&pool).await.unwrap();
    assert!(sent < data.len() as i64, "the broken download is not complete: {sent}");
    let from = format!("bytes={}-", first.len());
    let post = reqwest::Method::POST;

    // Without the receipt nobody gets a byte, and a Range never claims a download.
    let res = resume(&app, &path, post.clone(), &[("user-agent", "curl/8"), ("range", &from)]).await;
    assert_eq!(res.status(), 403);
    // Another browser with this receipt, or a receipt that is not this share's: 403.
    for (agent, receipt) in [("other/1", receipt.as_str()), ("curl/8", "ebb_receipt=forged")] {
        let res = resume(&app, &path, post.clone(), &[("user-agent", agent), ("cookie", receipt), ("range", "bytes=10-")]).await;
        assert_eq!(res.status(), 403, "{agent} {receipt}");
    }
    // What was sent is not sent again: a range from byte 0, no range, or an If-Range that does
    // not match (which would mean the whole file).
    let res = resume(&app, &path, reqwest::Method::GET, &[("user-agent", "curl/8"), ("cookie", &receipt), ("range", "bytes=0-")]).await;
    assert_eq!(res.status(), 416);
    let res = resume(&app, &path, post.clone(), &[("user-agent", "curl/8"), ("cookie", &receipt), ("range", "items=0-")]).await;
    assert_eq!(res.status(), 416);
    let res =
        resume(&app, &path, reqwest::Method::GET, &[("user-agent", "curl/8"), ("cookie", &receipt), ("range", "bytes=5-"), ("if-range", "\"old\"")]).await;
    assert_eq!(res.status(), 412);
    let past = format!("bytes={}-", data.len());
    let res = resume(&app, &path, reqwest::Method::GET, &[("user-agent", "curl/8"), ("cookie", &receipt), ("range", &past)]).await;
    assert_eq!(res.status(), 416);
    // HEAD answers the headers and records nothing.
    let res = resume(&app, &path, reqwest::Method::HEAD, &[("user-agent", "curl/8"), ("cookie", &receipt), ("range", &from)]).await;
    assert_eq!(res.status(), 206);
    let (resumes, events): (i32, i64) =
        sqlx::query_as("select (select resumes from share_deliveries), (select count(*) from audit_events where kind = 'share.resume')")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!((resumes, events), (0, 0), "refusals and HEAD record nothing");
    // A second click on Download (the receipt, no Range) claims nothing: the page says how to
    // finish the download.
    let page = resume(&app, &path, post.clone(), &[("user-agent", "curl/8"), ("cookie", &receipt)]).await;
    let page = page.text().await.unwrap();
    assert!(page.contains("data-testid=\"share-resume\""), "the share page offers the resume: {}", &page[..page.len().min(400)]);

    // The same client resumes (curl -C - sends a POST with Range; a browser a GET).
    let res = resume(&app, &path, post.clone(), &[("user-agent", "curl/8"), ("cookie", &receipt), ("range", &from), ("if-range", &etag)]).await;
    assert_eq!(res.status(), 206);
    assert_eq!(res.headers()["content-range"].to_str().unwrap(), format!("bytes {}-{}/{}", first.len(), data.len() - 1, data.len()));
    let rest = res.bytes().await.unwrap();
    let mut whole = first.to_vec();
    whole.extend_from_slice(&rest);
    assert!(whole == data, "the resumed bytes equal the original");
    eventually(&pool, "select count(*) = 1 from share_deliveries where completed_at is not null and resumes = 1").await;
    let bytes_sent: i64 = sqlx::query_scalar("select bytes_sent from share_deliveries").fetch_one(&pool).await.unwrap();
    assert_eq!(bytes_sent, data.len() as i64);

    // Complete: nothing is left to resume, whatever the range.
    let res = resume(&app, &path, reqwest::Method::GET, &[("user-agent", "curl/8"), ("cookie", &receipt), ("range", "bytes=-5")]).await;
    assert_eq!(res.status(), 410);
    // The share is downloaded once, whatever was resumed.
    let (downloads, status): (i32, String) = sqlx::query_as("select downloads, status from shares").fetch_one(&pool).await.unwrap();
    assert_eq!((downloads, status.as_str()), (1, "consumed"));
    let events: i64 = sqlx::query_scalar("select count(*) from audit_events where kind = 'share.resume'").fetch_one(&pool).await.unwrap();
    assert_eq!(events, 1);

    // After the grace: the GC deletes the file.
    sqlx::query("update share_deliveries set started_at = started_at - interval '1 hour'").execute(&pool).await.unwrap();
    sqlx::query("update shares set consumed_at = consumed_at - interval '1 hour', last_download_at = last_download_at - interval '1 hour'")
        .execute(&pool)
        .await
        .unwrap();
    let report = app::shares::gc::collect(&pool, &*app.state.blobs, 10, app::shares::gc::GcRules::default()).await.unwrap();
    assert_eq!(report.purged, 1);
    assert_eq!(app.stored_files().await, Vec::<String>::new(), "the file is gone");
}

/// A receipt resumes nothing after the admin revoked the share (the GC then deletes the file at
/// once), after its grace, or past its resume limit; a receipt is bound to the client's network
/// and browser, not its exact address.
async fn a_receipt_ends_with_a_revoke_the_grace_or_its_resume_limit_and_follows_its_network(pool: PgPool, backend: Backend) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app_on(pool.clone(), backend, &["--trusted-proxy-hops", "1"], |_| {}).await;
    let data = body_of(48 * 1024 * 1024 + 3);

    // The network: the same /24 with another address resumes; another network or browser does not.
    let path = share_via_upload(&app, &cookie, "a.bin", data.clone()).await;
    let (receipt, _, first) = broken_download(&app, &pool, &path, "Browser/1", Some("203.0.113.7")).await;
    let from = format!("bytes={}-", first.len());
    let get = reqwest::Method::GET;
    for (addr, agent, want) in [("198.51.100.7", "Browser/1", 403), ("203.0.113.7", "Browser/2", 403), ("203.0.113.200", "Browser/1", 206)] {
        let res = resume(&app, &path, get.clone(), &[("user-agent", agent), ("cookie", &receipt), ("range", &from), ("x-forwarded-for", addr)]).await;
        assert_eq!(res.status(), want, "{addr} {agent}");
        drop(res);
    }
    // The resume limit: ten resumes, then 410; an audit event for each counted resume only.
    for _ in 0..12 {
        let res =
            resume(&app, &path, get.clone(), &[("user-agent", "Browser/1"), ("cookie", &receipt), ("range", &from), ("x-forwarded-for", "203.0.113.9")]).await;
        drop(res);
    }
    let res =
        resume(&app, &path, get.clone(), &[("user-agent", "Browser/1"), ("cookie", &receipt), ("range", &from), ("x-forwarded-for", "203.0.113.9")]).await;
    assert_eq!(res.status(), 410);
    let (resumes, events): (i32, i64) =
        sqlx::query_as("select (select resumes from share_deliveries), (select count(*) from audit_events where kind = 'share.resume')")
            .fetch_one(&pool)
            .await
            .unwrap();
    assert_eq!((resumes, events), (10, 10), "at most ten resumes, each recorded once");

    // A revoke ends the resume at once, and the GC does not wait for the grace.
    sqlx::query("delete from share_deliveries").execute(&pool).await.unwrap();
    let path = share_via_upload(&app, &cookie, "b.bin", data.clone()).await;
    let (receipt, _, first) = broken_download(&app, &pool, &path, "Browser/1", Some("203.0.113.7")).await;
    let id: i64 = sqlx::query_scalar("select max(id) from shares").fetch_one(&pool).await.unwrap();
    let res = call_form(&app, "/api/admin/shares/revoke", Some(&cookie), &[("id", &id.to_string())]).await;
    assert_eq!(res.status(), 200, "a downloaded share in its grace can be revoked");
    let from = format!("bytes={}-", first.len());
    let res =
        resume(&app, &path, get.clone(), &[("user-agent", "Browser/1"), ("cookie", &receipt), ("range", &from), ("x-forwarded-for", "203.0.113.7")]).await;
    assert_eq!(res.status(), 410);
    let page = resume(&app, &path, get.clone(), &[("user-agent", "Browser/1"), ("cookie", &receipt)]).await.text().await.unwrap();
    assert!(!page.contains("share-resume"), "a revoked share's page offers no resume");
    let report = app::shares::gc::collect(&pool, &*app.state.blobs, 10, app::shares::gc::GcRules::default()).await.unwrap();
    assert!(report.purged >= 1);
    let left: i64 = sqlx::query_scalar("select count(*) from shares where id = $1 and status <> 'purged'").bind(id).fetch_one(&pool).await.unwrap();
    assert_eq!(left, 0, "the revoked share's file is deleted without waiting for the grace");

    // After the grace: refused.
    let path = share_via_upload(&app, &cookie, "c.bin", data.clone()).await;
    let (receipt, _, first) = broken_download(&app, &pool, &path, "Browser/1", Some("203.0.113.7")).await;
    sqlx::query("update share_deliveries set started_at = started_at - interval '1 hour'").execute(&pool).await.unwrap();
    let from = format!("bytes={}-", first.len());
    let res =
        resume(&app, &path, get.clone(), &[("user-agent", "Browser/1"), ("cookie", &receipt), ("range", &from), ("x-forwarded-for", "203.0.113.7")]).await;
    assert_eq!(res.status(), 410);
}

/// A Range without a receipt never spends a download of an N-download share.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_range_without_a_receipt_never_spends_a_download(pool: PgPool) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app_on(pool.clone(), Backend::Local, &[], |_| {}).await;
    let res = upload(&app, &cookie, form("two.bin", body_of(10_000), "24", "").text("max_downloads", "2")).await;
    let created: serde_json::Value = res.json().await.unwrap();
    let path = created["url"].as_str().unwrap().strip_prefix("http://localhost:3000").unwrap().to_owned();
    for _ in 0..5 {
        let res = app.client.post(app.url(&path)).header("range", "bytes=0-").send().await.unwrap();
        assert_eq!(res.status(), 403);
    }
    let downloads: i32 = sqlx::query_scalar("select downloads from shares").fetch_one(&pool).await.unwrap();
    assert_eq!(downloads, 0);
    for _ in 0..2 {
        assert_eq!(app.client.post(app.url(&path)).send().await.unwrap().status(), 200);
    }
}

/// Two instances share one storage folder (the second instance helper's setting).
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_limit_of_three_downloads_gives_exactly_three_of_fifty_on_two_instances(pool: PgPool) {
    let cookie = admin_cookie(&pool).await;
    let a = spawn_app_on(pool.clone(), Backend::Local, &["--db-max-connections", "20"], |_| {}).await;
    let b = spawn_second_instance(pool.clone(), &a, &["--db-max-connections", "20"]).await;
    let client = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
    for round in 0..20 {
        let data = body_of(16 * 1024 + round);
        let mut f = form("three.bin", data.clone(), "24", "");
        f = f.text("max_downloads", "3");
        let res = upload(&a, &cookie, f).await;
        assert_eq!(res.status(), 201);
        let created: serde_json::Value = res.json().await.unwrap();
        let path = created["url"].as_str().unwrap().strip_prefix("http://localhost:3000").unwrap().to_owned();
        let results = join_all((0..50).map(|i| {
            let client = client.clone();
            let url = if i % 2 == 0 { a.url(&path) } else { b.url(&path) };
            async move {
                let res = tokio::time::timeout(Duration::from_secs(30), client.post(url).send()).await.expect("an answer").unwrap();
                (res.status().as_u16(), res.bytes().await.unwrap())
            }
        }))
        .await;
        let ok: Vec<_> = results.iter().filter(|r| r.0 == 200).collect();
        assert_eq!(ok.len(), 3, "round {round}: exactly three downloads");
        assert!(ok.iter().all(|r| r.1.as_ref() == data.as_slice()), "round {round}: whole files");
        assert_eq!(results.iter().filter(|r| r.0 == 410).count(), 47, "round {round}");
    }
    let over: i64 = sqlx::query_scalar("select count(*) from shares where downloads <> 3 or status <> 'consumed'").fetch_one(&pool).await.unwrap();
    assert_eq!(over, 0);
    let deliveries: i64 = sqlx::query_scalar("select count(*) from share_deliveries").fetch_one(&pool).await.unwrap();
    assert_eq!(deliveries, 60);
    // More than 20 is refused with a field error.
    let res = upload(&a, &cookie, form("x.bin", vec![1], "24", "").text("max_downloads", "21")).await;
    assert_eq!(res.status(), 400);
}

async fn the_shares_list_shows_each_delivery_from_the_servers_stream(pool: PgPool, backend: Backend) {
    let cookie = admin_cookie(&pool).await;
    let app = spawn_app_on(pool.clone(), backend, &[], |_| {}).await;
    let data = body_of(100_000);
    let path = share_via_upload(&app, &cookie, "list.bin", data.clone()).await;
    let res = app.client.post(app.url(&path)).send().await.unwrap();
    assert_eq!(res.bytes().await.unwrap().len(), data.len());
    eventually(&pool, "select count(*) = 1 from share_deliveries where completed_at is not null").await;
    let res = call_form(&app, "/api/admin/shares", Some(&cookie), &[]).await;
    let list: serde_json::Value = res.json().await.unwrap();
    let item = &list["items"][0];
    assert_eq!(item["deliveries"].as_array().unwrap().len(), 1, "{item}");
    assert_eq!(item["deliveries"][0]["bytes_sent"], 100_000);
    assert!(!item["deliveries"][0]["completed_at"].is_null());
    assert_eq!(item["deliveries"][0]["resumes"], 0);
}

on_both_backends!(
    fifty_concurrent_uploads_to_one_file_request_store_exactly_one,
    a_file_request_refuses_oversize_files_and_closed_links_keeping_nothing,
    a_broken_download_resumes_with_its_receipt_only_and_only_within_the_grace,
    a_receipt_ends_with_a_revoke_the_grace_or_its_resume_limit_and_follows_its_network,
    the_shares_list_shows_each_delivery_from_the_servers_stream,
);

/// Ended requests are forgotten 30 days after they ended; open ones and younger ones stay, and
/// the received file (a share of its own) stays with them.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn ended_file_requests_are_forgotten_after_thirty_days(pool: PgPool) {
    for (n, ends) in [(1, "31 days"), (2, "29 days")] {
        sqlx::query(&format!(
            "insert into file_requests (token_hash, max_bytes, expires_at, created_at) values (sha256('{n}'::bytea), 1024, now() - interval '{ends}', now() - interval '40 days')"
        ))
        .execute(&pool)
        .await
        .unwrap();
    }
    sqlx::query("insert into file_requests (token_hash, max_bytes, expires_at) values (sha256('open'::bytea), 1024, now() + interval '1 day')")
        .execute(&pool)
        .await
        .unwrap();
    let forgotten = app::shares::requests::forget_ended(&pool, 100).await.unwrap();
    assert_eq!(forgotten, 1);
    let left: Vec<i64> = sqlx::query_scalar("select id from file_requests order by id").fetch_all(&pool).await.unwrap();
    assert_eq!(left, vec![2, 3]);
}
