//! A fast first visit: the client's files under a content-hashed URL, precompressed and cached for
//! a year; pages and JSON compressed on the fly; downloads never compressed (their length and
//! streaming kept).

use std::io::Read;

use sqlx::PgPool;

use crate::helpers::*;

const HASH: &str = "0123456789abcdef";

/// A site folder as `scripts/build-client.sh` leaves it (small stand-in files).
fn site() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let pkg = dir.path().join("pkg");
    let hashed = pkg.join(HASH);
    std::fs::create_dir_all(&hashed).unwrap();
    std::fs::write(pkg.join("ASSETS"), format!("{HASH}\n")).unwrap();
    let js = "export default function init() {}\n".repeat(50);
    std::fs::write(hashed.join("ebb.js"), &js).unwrap();
    std::fs::write(hashed.join("ebb.js.br"), b"brotli bytes").unwrap();
    std::fs::write(hashed.join("ebb.js.gz"), b"gzip bytes").unwrap();
    std::fs::write(hashed.join("ebb.css"), "body { color: black }").unwrap();
    // The splitter's manifest: each lazily loaded module with the chunks it needs.
    let manifest = r#"{"ebb_admin": ["chunk_7", "chunk_9", "split_ebb_admin"], "ebb_share": ["chunk_9", "chunk_12", "split_ebb_share"]}"#;
    std::fs::write(hashed.join("__wasm_split_manifest.json"), manifest).unwrap();
    dir
}

async fn get(app: &TestApp, path: &str, encoding: Option<&str>) -> reqwest::Response {
    let mut req = app.client.get(app.url(path));
    if let Some(e) = encoding {
        req = req.header("accept-encoding", e);
    }
    req.send().await.unwrap()
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_clients_files_are_hashed_precompressed_and_cached_for_a_year(pool: PgPool) {
    let site = site();
    let app = spawn_app_with(pool.clone(), &["--site-root", site.path().to_str().unwrap()], |_| {}).await;
    // The page names the hashed folder: script, wasm and stylesheet.
    let page = get(&app, "/", None).await.text().await.unwrap();
    for file in ["ebb.js", "ebb_bg.wasm", "ebb.css"] {
        assert!(page.contains(&format!("/pkg/{HASH}/{file}")), "{file} in {page}");
    }
    assert!(page.contains(r#"<meta name="description""#), "a description for search engines");
    // The home page fetches its client when it is first used, so nothing hints it; the other
    // pages hydrate at once and hint the script and the wasm.
    assert!(!page.contains(r#"rel="modulepreload""#) && !page.contains(r#"rel="preload""#), "no preload on /: {page}");
    assert!(page.contains(r#"addEventListener"#), "/ starts its client on first use: {page}");
    // So does a recipient's share page (its download is a plain form).
    let share = get(&app, "/s/not-a-real-share-token", None).await.text().await.unwrap();
    assert!(!share.contains(r#"rel="modulepreload""#) && share.contains("addEventListener"), "/s/… starts its client on first use: {share}");
    let request = get(&app, "/r/not-a-real-request-token", None).await.text().await.unwrap();
    assert!(request.contains(r#"rel="modulepreload""#), "a file request's upload page hydrates at once: {request}");
    // The sign-in page loads no client and prefetches none: its script names no admin file (the
    // dashboard after it gets its client on first use).
    let signin = get(&app, "/signin", None).await.text().await.unwrap();
    assert!(!signin.contains(r#"rel="modulepreload""#) && !signin.contains(".hydrate()"), "no client on /signin: {signin}");
    assert!(signin.contains(r#"rel="stylesheet""#) && signin.contains(r#"<script type="module" nonce="#), "{signin}");
    assert!(
        !signin.contains("split_ebb_admin") && !signin.contains("chunk_") && !signin.contains("__wasm_split"),
        "nothing of the admin client on /signin: {signin}"
    );
    assert!(!signin.contains("prefetch"), "{signin}");
    let invite = get(&app, "/invite/not-a-real-invite-token", None).await.text().await.unwrap();
    assert!(invite.contains(&format!(r#"<link rel="modulepreload" href="/pkg/{HASH}/ebb.js""#)), "the invite page hydrates at once: {invite}");
    // The dashboard opened by a page load gets its client on first use too (or when something it
    // shows changes: its script follows the live stream); the other admin pages hydrate at once.
    let admin = create_admin(&pool, "Ada").await;
    let cookie = session_cookie_for(&pool, admin).await;
    let signed_in = |path: &'static str| app.client.get(app.url(path)).header("cookie", &cookie).send();
    let dashboard = signed_in("/admin").await.unwrap().text().await.unwrap();
    assert!(dashboard.contains(r#"id="dash-inbox""#), "{dashboard}");
    assert!(!dashboard.contains(r#"rel="modulepreload""#) && !dashboard.contains(r#"rel="preload""#), "no preload on /admin: {dashboard}");
    assert!(dashboard.contains("__ebbLiveHandoff") && dashboard.contains(r#"["/admin/live"]);"#), "the dashboard's own script: {dashboard}");
    let inbox = signed_in("/admin/inbox").await.unwrap().text().await.unwrap();
    assert!(inbox.contains(&format!(r#"<link rel="modulepreload" href="/pkg/{HASH}/ebb.js""#)), "the inbox hydrates at once: {inbox}");
    assert!(!inbox.contains("__ebbLiveHandoff"), "{inbox}");

    // The copy the client accepts, with the right headers.
    for (accept, encoding, body) in [(Some("br, gzip"), Some("br"), &b"brotli bytes"[..]), (Some("gzip"), Some("gzip"), &b"gzip bytes"[..])] {
        let res = get(&app, &format!("/pkg/{HASH}/ebb.js"), accept).await;
        assert_eq!(res.status(), 200);
        assert_eq!(res.headers().get("content-encoding").map(|v| v.to_str().unwrap()), encoding);
        assert_eq!(res.headers()["cache-control"], "public, max-age=31536000, immutable");
        assert!(res.headers()["content-type"].to_str().unwrap().contains("javascript"));
        assert_eq!(res.bytes().await.unwrap().as_ref(), body);
    }
    let plain = get(&app, &format!("/pkg/{HASH}/ebb.js"), None).await;
    assert_eq!(plain.headers().get("content-encoding"), None);
    assert!(plain.text().await.unwrap().starts_with("export default"));
    // Not hashed, or not there: never cached for long.
    let missing = get(&app, &format!("/pkg/{HASH}/nothing.js"), Some("br")).await;
    assert_eq!(missing.status(), 404);
    assert_ne!(missing.headers().get("cache-control").map(|v| v.to_str().unwrap()), Some("public, max-age=31536000, immutable"));
    assert_eq!(get(&app, "/pkg/ASSETS", None).await.headers()["cache-control"], "no-cache");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn pages_are_compressed_on_the_fly_and_never_cached_for_long(pool: PgPool) {
    let app = spawn_app(pool).await;
    let res = get(&app, "/", Some("br")).await;
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-encoding"], "br");
    assert!(!res.headers().get("cache-control").is_some_and(|v| v.to_str().unwrap().contains("immutable")));
    let res = get(&app, "/signin", Some("gzip")).await;
    assert_eq!(res.headers()["content-encoding"], "gzip");
    let mut html = String::new();
    flate2::read::GzDecoder::new(&res.bytes().await.unwrap()[..]).read_to_string(&mut html).unwrap();
    assert!(html.contains("<html"));
    // Without Accept-Encoding: plain.
    let res = get(&app, "/", None).await;
    assert_eq!(res.headers().get("content-encoding"), None);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn downloads_are_never_compressed_on_the_fly(pool: PgPool) {
    let admin = create_admin(&pool, "Ada").await;
    let cookie = session_cookie_for(&pool, admin).await;
    let app = spawn_app(pool.clone()).await;
    // A shared HTML file: sent as stored, with its length.
    let data = "<html>".repeat(10_000).into_bytes();
    let form = reqwest::multipart::Form::new()
        .text("expires_hours", "24")
        .text("note", "")
        .part("file", reqwest::multipart::Part::bytes(data.clone()).file_name("page.html").mime_str("text/html").unwrap());
    let res = app
        .client
        .post(app.url("/api/admin/shares/upload"))
        .header("cookie", &cookie)
        .header("accept", "application/json")
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201);
    let url = res.json::<serde_json::Value>().await.unwrap()["url"].as_str().unwrap().replace("http://localhost:3000", &app.base);
    let res = app.client.post(url).header("accept-encoding", "br, gzip").send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers().get("content-encoding"), None);
    assert_eq!(res.headers()["content-length"], data.len().to_string().as_str());
    assert_eq!(res.bytes().await.unwrap().len(), data.len());
    // CSV exports stream as they are.
    let res = app.client.get(app.url("/admin/audit/export.csv")).header("cookie", &cookie).header("accept-encoding", "gzip").send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers().get("content-encoding"), None);
}

/// Every page names the one nonce its scripts carry: an injected script (no nonce) does not run.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn pages_carry_a_content_security_policy_with_their_scripts_nonce(pool: PgPool) {
    let app = spawn_app(pool).await;
    let mut nonces = Vec::new();
    for path in ["/", "/signin", "/s/not-a-token", "/no-such-page"] {
        let res = get(&app, path, None).await;
        let csp = res.headers().get("content-security-policy").unwrap_or_else(|| panic!("{path}: no CSP")).to_str().unwrap().to_owned();
        assert!(csp.contains("object-src 'none'") && csp.contains("frame-ancestors 'none'") && csp.contains("base-uri 'none'"), "{csp}");
        assert!(!csp.contains("unsafe-inline") && !csp.contains("'unsafe-eval'"), "{csp}");
        let nonce = csp.split("'nonce-").nth(1).and_then(|r| r.split('\'').next()).unwrap().to_owned();
        let html = res.text().await.unwrap();
        let scripts = html.matches("<script").count();
        assert!(scripts > 0, "{path}: the hydration scripts");
        assert_eq!(html.matches(&format!("nonce=\"{nonce}\"")).count(), scripts, "{path}: every script carries the nonce: {html}");
        nonces.push(nonce);
    }
    nonces.sort();
    nonces.dedup();
    assert_eq!(nonces.len(), 4, "a new nonce per response");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn hsts_is_sent_only_when_ebb_is_served_over_https(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    assert!(get(&app, "/", None).await.headers().get("strict-transport-security").is_none(), "not over http");
    app.shutdown().await;
    // A second app with a fresh folder: adopted on purpose (the first may have written digests).
    sqlx::query("delete from settings where key = 'storage_marker_id'").execute(&pool).await.unwrap();
    let app = spawn_app_with(pool, &["--public-url", "https://ebb.example.org"], |_| {}).await;
    let res = get(&app, "/healthz", None).await;
    assert_eq!(res.headers()["strict-transport-security"], "max-age=31536000; includeSubDomains");
}
