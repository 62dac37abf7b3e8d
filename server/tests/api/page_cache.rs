//! The home page's cache (issue 36): a cached answer is the page a render gives at that moment,
//! byte for byte but the CSP nonce; a setting changed on another instance drops it.

use std::net::SocketAddr;
use std::time::Duration;

use server::page_cache::PageCache;

use crate::helpers::{call_form, create_admin, session_cookie_for, spawn_app, spawn_second_instance, TestApp};

/// A router of `app`'s deployment with a cache the test can look at, on its own socket.
async fn cached_router(app: &TestApp, cache: &PageCache) -> String {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let router = server::router_with_cache(app.state.clone(), 1 << 20, cache.clone());
    tokio::spawn(server::http::serve(listener, router, server::http::Limits::default(), std::future::pending()));
    base
}

struct Page {
    csp: String,
    /// Every other header but the date and the framing (a render streams, a cached page has a
    /// length), sorted.
    headers: Vec<(String, String)>,
    html: String,
}

async fn get(client: &reqwest::Client, url: &str, headers: &[(&str, &str)]) -> Page {
    let mut req = client.get(url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let res = req.send().await.unwrap();
    assert_eq!(res.status(), 200);
    let csp = res.headers()["content-security-policy"].to_str().unwrap().to_owned();
    let mut headers: Vec<(String, String)> = res
        .headers()
        .iter()
        .filter(|(name, _)| !["content-security-policy", "date", "content-length", "transfer-encoding", "x-request-id"].contains(&name.as_str()))
        .map(|(name, value)| (name.as_str().to_owned(), value.to_str().unwrap().to_owned()))
        .collect();
    headers.sort();
    Page { csp, headers, html: res.text().await.unwrap() }
}

impl Page {
    fn nonce(&self) -> String {
        let start = self.csp.find("'nonce-").unwrap() + 7;
        self.csp[start..start + self.csp[start..].find('\'').unwrap()].to_owned()
    }

    /// The form's stamp (`secs.mac`), from its hidden field.
    fn stamp(&self) -> String {
        let field = "name=\"started\" value=\"";
        let start = self.html.find(field).unwrap() + field.len();
        self.html[start..start + self.html[start..].find('"').unwrap()].to_owned()
    }

    /// The page with its nonce (everywhere) and its stamp (everywhere) written as placeholders.
    fn normalised(&self) -> (String, String, Vec<(String, String)>) {
        let (nonce, stamp) = (self.nonce(), self.stamp());
        assert_eq!(self.html.matches(&nonce).count(), self.html.matches("nonce=\"").count(), "every script carries the header's nonce");
        assert_eq!(self.html.matches(&stamp).count(), 2, "the stamp is in the field and in the hydration data");
        (self.html.replace(&nonce, "NONCE").replace(&stamp, "STAMP"), self.csp.replace(&nonce, "NONCE"), self.headers.clone())
    }
}

/// Sleeps into the next second (the stamp's unit).
async fn next_second() {
    let now = time::OffsetDateTime::now_utc();
    tokio::time::sleep(Duration::from_nanos(1_000_000_000 - u64::from(now.nanosecond())) + Duration::from_millis(20)).await;
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn cached_home_page_is_the_rendered_page(pool: sqlx::PgPool) {
    let app = spawn_app(pool.clone()).await;
    let cache = PageCache::new(app.state.clone());
    let base = cached_router(&app, &cache).await;
    let client = reqwest::Client::new();
    let variants: [&[(&str, &str)]; 4] = [
        &[],
        &[("accept-language", "ja,en;q=0.5")],
        &[("cookie", "ebb_theme=dark; ebb_lang=ja")],
        &[("cookie", "ebb_theme=light"), ("accept-language", "en-GB")],
    ];
    for (i, headers) in variants.into_iter().enumerate() {
        // The first request renders; its template is kept.
        let rendered = get(&client, &format!("{base}/"), headers).await;
        assert_eq!(cache.len(), i + 1, "variant {i} is kept");
        // A second later, from the template: a new nonce and this second's stamp...
        next_second().await;
        let before = time::OffsetDateTime::now_utc().unix_timestamp();
        let cached = get(&client, &format!("{base}/"), headers).await;
        let after = time::OffsetDateTime::now_utc().unix_timestamp();
        assert_eq!(cache.len(), i + 1, "served from the template, not rendered again");
        assert_ne!(cached.nonce(), rendered.nonce(), "a fresh nonce per answer");
        let stamp = cached.stamp();
        let secs: i64 = stamp.split_once('.').unwrap().0.parse().unwrap();
        assert!((before..=after).contains(&secs), "the stamp is of the answer's own second: {secs} not in {before}..={after}");
        assert_eq!(stamp, app::contact::spam::stamp(&app.state, time::OffsetDateTime::from_unix_timestamp(secs).unwrap()), "and signed");
        // ...and otherwise the very page a render gives now (the app's own instance renders
        // each variant once: this is its first request for it).
        let fresh = get(&client, &app.url("/"), headers).await;
        assert_eq!(cached.normalised(), fresh.normalised(), "variant {i}: cached and rendered pages differ");
    }
    // The variants are different pages.
    let home = format!("{base}/");
    let pages: Vec<String> = futures::future::join_all(variants.iter().map(|h| get(&client, &home, h))).await.into_iter().map(|p| p.normalised().0).collect();
    for (i, a) in pages.iter().enumerate() {
        for b in &pages[i + 1..] {
            assert_ne!(a, b);
        }
    }

    // Not from the cache: a query (a form's result page), another cookie, another path.
    get(&client, &format!("{base}/?sent=1"), &[]).await;
    get(&client, &format!("{base}/"), &[("cookie", "ebb_session=abc")]).await;
    get(&client, &format!("{base}/retention"), &[]).await;
    assert_eq!(cache.len(), variants.len());
    app.shutdown().await;
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_setting_changed_on_another_instance_drops_the_cached_pages(pool: sqlx::PgPool) {
    let first = spawn_app(pool.clone()).await;
    let second = spawn_second_instance(pool.clone(), &first, &[]).await;
    let cache = PageCache::new(first.state.clone());
    tokio::spawn(cache.clone().follow_settings());
    assert!(first.state.live.wait_listening(Duration::from_secs(10)).await, "the first instance listens");
    let base = cached_router(&first, &cache).await;
    let client = reqwest::Client::new();
    // Kept (after the listener's start, which drops everything once).
    tokio::time::sleep(Duration::from_millis(200)).await;
    get(&client, &format!("{base}/"), &[]).await;
    assert_eq!(cache.len(), 1);

    // Another instance's admin changes the retention period: the first instance hears it.
    let admin = create_admin(&pool, "ada").await;
    let cookie = session_cookie_for(&pool, admin).await;
    assert_eq!(call_form(&second, "/api/admin/retention/save", Some(&cookie), &[("days", "45")]).await.status(), 200);
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !cache.is_empty() {
        assert!(std::time::Instant::now() < deadline, "the cached page was not dropped after the setting changed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // And the next request renders and keeps it again.
    get(&client, &format!("{base}/"), &[]).await;
    assert_eq!(cache.len(), 1);
    second.shutdown().await;
    first.shutdown().await;
}
