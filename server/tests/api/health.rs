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
