//! Metrics, in a test binary of their own: the recorder is process-wide, so in the shared API
//! binary any other test posting the form or running a job would satisfy these assertions. Here
//! every series seen was made by this file's one test.

#[path = "../common/backend.rs"]
#[macro_use]
#[allow(unused_macros, dead_code)]
mod backend;
#[path = "../api/helpers.rs"]
#[allow(dead_code)]
mod helpers;

use helpers::*;
use sqlx::PgPool;

async fn scrape() -> String {
    let metrics = server::telemetry::metrics_router(server::telemetry::recorder());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, metrics).await.unwrap() });
    reqwest::get(format!("http://{addr}/metrics")).await.unwrap().text().await.unwrap()
}

/// Requests are counted by route template (never the raw path: it may hold a token) and by a
/// closed set of methods (anyone can send a new method string; each would be a series kept
/// forever); job runs and latencies are recorded.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn metrics_count_requests_by_route_template_and_closed_labels(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let before = scrape().await;
    assert!(!before.contains("ebb_http_requests_total{"), "this binary starts with no request counted: {before}");
    let token = "x".repeat(43);
    let res = app.client.get(app.url(&format!("/s/{token}"))).send().await.unwrap();
    assert_eq!(res.status(), 404);
    assert_eq!(app.post_contact(&VALID).await.status(), 200);
    // A bot's submission (no proof of work): quarantined, and counted as such per signal.
    assert_eq!(app.post_contact_as_bot(&VALID).await.status(), 200);
    // The home page twice: rendered, then from the page cache (answered above the session and
    // admin layers): both counted under the route's template.
    for _ in 0..2 {
        assert_eq!(app.client.get(app.url("/")).send().await.unwrap().status(), 200);
    }
    // Methods nobody should invent labels for.
    for i in 0..30 {
        let method = reqwest::Method::from_bytes(format!("ODD{i}").as_bytes()).unwrap();
        let _ = app.client.request(method, app.url("/")).send().await.unwrap();
    }
    app.state.background.settle().await;
    let text = scrape().await;
    assert!(text.contains(r#"ebb_http_requests_total{method="POST",route="/api/contact",status="200"}"#), "{text}");
    assert!(text.contains(r#"ebb_http_requests_total{method="GET",route="/",status="200"} 2"#), "a cached page is counted under its route: {text}");
    assert!(text.contains(r#"ebb_page_cache_total{result="hit"} 1"#), "{text}");
    assert!(text.contains(r#"route="/s/:token""#) || text.contains(r#"route="/s/{token}""#), "route template, never the token: {text}");
    assert!(!text.contains(&token), "no token in metrics");
    assert!(!text.contains("ODD"), "no label made of a client's method: {text}");
    assert!(text.contains(r#"method="other""#), "{text}");
    assert!(text.contains("ebb_job_runs_total{"), "{text}");
    for line in [
        r#"ebb_contact_submissions_total{outcome="accepted"} 1"#,
        r#"ebb_contact_submissions_total{outcome="quarantined"} 1"#,
        r#"ebb_contact_spam_signals_total{signal="proof_missing"} 1"#,
    ] {
        assert!(text.contains(line), "{line} missing: {text}");
    }
    assert!(text.contains("ebb_http_request_duration_seconds_bucket"), "{text}");
    // Every series scraped is in the catalogue (kernel::metrics), with its help text; the
    // catalogue itself is pinned as a whole (names, types, labels: what dashboards and alert
    // rules are written against).
    let known: std::collections::HashSet<&str> = app::kernel::metrics::CATALOGUE.iter().map(|m| m.name).collect();
    for line in text.lines().filter(|l| l.starts_with("ebb_")) {
        let name = line.split(['{', ' ']).next().unwrap();
        let base = ["_bucket", "_sum", "_count"].iter().find_map(|s| name.strip_suffix(s).filter(|b| known.contains(b))).unwrap_or(name);
        assert!(known.contains(base), "{name} is exported but not in kernel::metrics::CATALOGUE");
    }
    assert!(text.contains("# HELP ebb_contact_submissions_total Contact-form submissions"), "described at start: {text}");
    insta::assert_snapshot!("metric_catalogue", app::kernel::metrics::catalogue_text());
}
