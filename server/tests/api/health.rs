use crate::helpers::spawn_app;

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn healthz_and_readyz_answer_when_the_database_is_up(pool: sqlx::PgPool) {
    let app = spawn_app(pool.clone()).await;
    let live = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(live.status(), 200);
    let ready = app.client.get(app.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 200);
    app.shutdown().await;
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn readyz_says_unavailable_when_the_database_is_gone(pool: sqlx::PgPool) {
    let app = spawn_app(pool.clone()).await;
    // Sabotage: close the pool the app uses, as if the database went away.
    app.state.pool.close().await;
    let ready = app.client.get(app.url("/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 503);
    let live = app.client.get(app.url("/healthz")).send().await.unwrap();
    assert_eq!(live.status(), 200, "liveness does not depend on the database");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn responses_carry_security_headers_and_unknown_pages_are_404(pool: sqlx::PgPool) {
    let app = spawn_app(pool).await;
    let res = app.client.get(app.url("/no-such-page")).send().await.unwrap();
    assert_eq!(res.status(), 404);
    assert_eq!(res.headers()["x-content-type-options"], "nosniff");
    assert_eq!(res.headers()["x-frame-options"], "DENY");
    assert!(res.text().await.unwrap().contains("Page not found"));
    app.shutdown().await;
}

/// Every answer carries its request id (the one on its log lines): a new one per request; a
/// client's own `x-request-id` is not believed unless proxy hops are trusted, and then only a
/// plain token.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn every_answer_names_its_request_id_and_only_a_trusted_proxy_can_set_it(pool: sqlx::PgPool) {
    let app = crate::helpers::spawn_app(pool.clone()).await;
    let id_of = |res: &reqwest::Response| res.headers().get("x-request-id").map(|v| v.to_str().unwrap().to_owned()).expect("an x-request-id header");
    let a = id_of(&app.client.get(app.url("/")).send().await.unwrap());
    let b = id_of(&app.client.get(app.url("/no/such/page")).send().await.unwrap());
    assert!(a.len() == 32 && a.bytes().all(|c| c.is_ascii_hexdigit()), "{a}");
    assert_ne!(a, b, "one id per request");
    let mine = id_of(&app.client.get(app.url("/")).header("x-request-id", "chosen-by-the-client").send().await.unwrap());
    assert_ne!(mine, "chosen-by-the-client", "not believed without a trusted proxy");
    app.shutdown().await;

    // A second app with a fresh folder: adopted on purpose (the first wrote digests to its own).
    sqlx::query("delete from settings where key = 'storage_marker_id'").execute(&pool).await.unwrap();
    let app = crate::helpers::spawn_app_with(pool, &["--trusted-proxy-hops", "1"], |_| {}).await;
    let given = id_of(&app.client.get(app.url("/")).header("x-request-id", "proxy-4bf92f35").send().await.unwrap());
    assert_eq!(given, "proxy-4bf92f35", "the trusted proxy's id is kept");
    let odd = id_of(&app.client.get(app.url("/")).header("x-request-id", "a;b=c").send().await.unwrap());
    assert_ne!(odd, "a;b=c", "only a plain token");
}
