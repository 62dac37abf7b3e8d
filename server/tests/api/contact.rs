//! The contact form over HTTP: storage, validation, honeypot, rate limit, body limit, the
//! no-JavaScript flow, and prune as a best-effort task after the response.

use app::jobs::{Step, StepError, StepReport};
use sqlx::PgPool;

use crate::helpers::{inquiry_count, spam_count, spawn_app, spawn_app_with, VALID};

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_valid_submission_is_stored_as_sent(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let res = app.post_contact(&VALID).await;
    assert_eq!(res.status(), 200);
    let (name, email, message): (String, String, String) = sqlx::query_as("select name, email, message from inquiries").fetch_one(&pool).await.unwrap();
    assert_eq!((name.as_str(), email.as_str(), message.as_str()), ("Ann Example", "ann@example.org", "Hello,\nplease call me back."));
    app.shutdown().await;
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_invalid_submission_gets_400_with_field_errors_and_stores_nothing(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let res = app.post_contact(&[("name", ""), ("email", "not-an-address"), ("message", "hi")]).await;
    assert_eq!(res.status(), 400);
    let body: serde_json::Value = res.json().await.unwrap();
    let fields = &body["Invalid"];
    assert!(fields["name"].is_string() && fields["email"].is_string(), "{body}");
    assert!(fields.get("message").is_none(), "a valid field carries no error: {body}");
    assert_eq!(inquiry_count(&pool).await, 0);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_form_missing_a_field_gets_400_not_500(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let res = app.post_contact(&[("name", "Ann"), ("message", "hi")]).await;
    assert_eq!(res.status(), 400);
    let body: serde_json::Value = res.json().await.unwrap();
    assert!(body.get("BadRequest").is_some(), "{body}");
    assert_eq!(inquiry_count(&pool).await, 0);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_honeypot_quarantines_bots_silently(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let mut fields = VALID.to_vec();
    fields.push(("website", "http://spam.example"));
    let res = app.post_contact(&fields).await;
    assert_eq!(res.status(), 200, "a bot sees the same answer as a person");
    assert_eq!(inquiry_count(&pool).await, 0, "nothing from the bot reaches the inbox");
    assert_eq!(spam_count(&pool).await, 1, "it is kept as suspected spam");
    // An empty honeypot (what a person's browser sends) is fine.
    let mut fields = VALID.to_vec();
    fields.push(("website", ""));
    assert_eq!(app.post_contact(&fields).await.status(), 200);
    assert_eq!(inquiry_count(&pool).await, 1);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_sixth_submission_in_ten_minutes_gets_429_with_retry_after(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    for i in 0..5 {
        assert_eq!(app.post_contact(&VALID).await.status(), 200, "submission {}", i + 1);
    }
    let res = app.post_contact(&VALID).await;
    assert_eq!(res.status(), 429);
    let retry: u64 = res.headers()["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=600).contains(&retry), "retry-after {retry}");
    let body: serde_json::Value = res.json().await.unwrap();
    assert!(body.get("RateLimited").is_some(), "{body}");
    assert_eq!(inquiry_count(&pool).await, 5);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn two_instances_on_one_database_share_the_rate_limit(pool: PgPool) {
    let a = spawn_app(pool.clone()).await;
    let b = spawn_app(pool.clone()).await;
    for i in 0..5 {
        let app = if i % 2 == 0 { &a } else { &b };
        assert_eq!(app.post_contact(&VALID).await.status(), 200);
    }
    assert_eq!(b.post_contact(&VALID).await.status(), 429);
    assert_eq!(a.post_contact(&VALID).await.status(), 429);
    assert_eq!(inquiry_count(&pool).await, 5);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn forwarded_for_decides_the_client_only_when_a_proxy_is_trusted(pool: PgPool) {
    let untrusted = spawn_app_with(pool.clone(), &["--contact-rate-limit", "1"], |_| {}).await;
    let post = |app: &crate::helpers::TestApp, xff: &'static str| {
        app.client.post(app.url("/api/contact")).header("accept", "application/json").header("x-forwarded-for", xff).form(&VALID).send()
    };
    assert_eq!(post(&untrusted, "1.1.1.1").await.unwrap().status(), 200);
    // Without a trusted proxy a forged header does not give a fresh allowance.
    assert_eq!(post(&untrusted, "2.2.2.2").await.unwrap().status(), 429);

    let trusted = spawn_app_with(pool.clone(), &["--contact-rate-limit", "1", "--trusted-proxy-hops", "1"], |_| {}).await;
    assert_eq!(post(&trusted, "3.3.3.3").await.unwrap().status(), 200);
    assert_eq!(post(&trusted, "4.4.4.4").await.unwrap().status(), 200, "a different client behind the proxy");
    assert_eq!(post(&trusted, "3.3.3.3").await.unwrap().status(), 429);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_oversized_body_gets_413_and_stores_nothing(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let huge = "x".repeat(70 * 1024);
    let res = app.post_contact(&[("name", "Ann"), ("email", "ann@example.org"), ("message", &huge)]).await;
    assert_eq!(res.status(), 413);
    assert_eq!(inquiry_count(&pool).await, 0);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn html_in_a_message_is_stored_verbatim(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let html = "<img src=x onerror=alert(1)> & \"quotes\"";
    assert_eq!(app.post_contact(&[("name", "Ann"), ("email", "ann@example.org"), ("message", html)]).await.status(), 200);
    let stored: String = sqlx::query_scalar("select message from inquiries").fetch_one(&pool).await.unwrap();
    assert_eq!(stored, html);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn without_javascript_a_valid_post_redirects_to_the_thank_you_page(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let res = app.post_contact_plain(&VALID).await;
    assert_eq!(res.status(), 303);
    let location = res.headers()["location"].to_str().unwrap().to_owned();
    assert_eq!(location, "/?sent=1#contact");
    // Without JavaScript there is no proof of work: kept, as suspected spam (spam.rs).
    assert_eq!((inquiry_count(&pool).await, spam_count(&pool).await), (0, 1));
    let page = app.client.get(app.url("/?sent=1")).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("your message was sent"), "thank-you message rendered by the server");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn without_javascript_an_invalid_post_comes_back_with_field_errors(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let res = app.post_contact_plain(&[("name", "Ann"), ("email", "nope"), ("message", "hi")]).await;
    assert!(res.status().is_redirection(), "status {}", res.status());
    let location = res.headers()["location"].to_str().unwrap().to_owned();
    assert!(location.starts_with(&app.url("/?")), "back to the form: {location}");
    let page = app.client.get(&location).send().await.unwrap();
    assert_eq!(page.status(), 400, "the result page carries the error's status");
    let html = page.text().await.unwrap();
    assert!(html.contains("Please enter a valid email address"), "field error rendered beside the field");
    assert_eq!(inquiry_count(&pool).await, 0);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_submission_triggers_prune_after_the_response(pool: PgPool) {
    sqlx::query("insert into inquiries (name, email, message, created_at) values ('Old', 'old@example.org', 'old', now() - interval '181 days')")
        .execute(&pool)
        .await
        .unwrap();
    let app = spawn_app(pool.clone()).await;
    assert_eq!(app.post_contact(&VALID).await.status(), 200);
    app.state.background.settle().await;
    let names: Vec<String> = sqlx::query_scalar("select name from inquiries").fetch_all(&pool).await.unwrap();
    assert_eq!(names, ["Ann Example"], "the 181-day-old inquiry was pruned, the new one kept");
    let runs: i64 =
        sqlx::query_scalar("select count(*) from maintenance_runs where job = 'prune' and trigger = 'contact' and ok").fetch_one(&pool).await.unwrap();
    assert_eq!(runs, 1);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_failing_prune_step_never_changes_the_contact_response(pool: PgPool) {
    // Sabotage: the first prune step always fails; the real inquiry step follows it.
    let app = spawn_app_with(pool.clone(), &[], |state| {
        let mut jobs = state.jobs().clone();
        jobs.configure("prune", |job| {
            job.steps.insert(0, Step::new("sabotaged", |_ctx| async { Err::<StepReport, _>(StepError::new("sabotaged by the test")) }));
        });
        state.set_jobs(std::sync::Arc::new(jobs));
    })
    .await;
    let res = app.post_contact(&VALID).await;
    assert_eq!(res.status(), 200, "the visitor never sees a prune failure");
    app.state.background.settle().await;
    assert_eq!(inquiry_count(&pool).await, 1, "the inquiry is stored");
    assert_eq!(app.state.background.failures(), 1, "the failure was counted");
    let (ok, steps): (bool, serde_json::Value) = sqlx::query_as("select ok, steps from maintenance_runs where job = 'prune'").fetch_one(&pool).await.unwrap();
    assert!(!ok);
    assert_eq!(steps[0]["step"], "sabotaged");
    assert!(steps[0]["error"].as_str().unwrap().contains("sabotaged"));
    assert_eq!(steps[1]["step"], "inquiries", "later steps still ran");
    assert!(steps[1]["error"].is_null());
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn shutdown_waits_for_running_background_tasks(pool: PgPool) {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let rx = std::sync::Arc::new(tokio::sync::Mutex::new(Some(rx)));
    let finished = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let done = finished.clone();
    let app = spawn_app_with(pool.clone(), &[], move |state| {
        // A slow step that only finishes when the test says so.
        let mut jobs = state.jobs().clone();
        jobs.set_steps(
            "prune",
            vec![Step::new("slow", move |_ctx| {
                let rx = rx.clone();
                let done = done.clone();
                async move {
                    if let Some(rx) = rx.lock().await.take() {
                        let _ = rx.await;
                    }
                    done.store(true, std::sync::atomic::Ordering::SeqCst);
                    Ok(StepReport::default())
                }
            })],
        );
        state.set_jobs(std::sync::Arc::new(jobs));
    })
    .await;
    assert_eq!(app.post_contact(&VALID).await.status(), 200);
    let mut shutting_down = tokio::spawn(app.shutdown());
    // While the task is blocked, shutdown must not complete (it would if it abandoned tasks).
    let early = tokio::time::timeout(std::time::Duration::from_millis(300), &mut shutting_down).await;
    assert!(early.is_err(), "shutdown returned while a background task was still running");
    tx.send(()).unwrap();
    shutting_down.await.unwrap();
    assert!(finished.load(std::sync::atomic::Ordering::SeqCst), "the task ran to completion before shutdown returned");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn after_a_lost_claim_submissions_skip_the_claim_for_a_minute(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    // Another instance ran prune just now.
    app::jobs::claim::force_claim(&pool, "last_cleanup_at").await.unwrap();
    assert_eq!(app.post_contact(&VALID).await.status(), 200);
    app.state.background.settle().await;
    let runs = || async { sqlx::query_scalar::<_, i64>("select count(*) from maintenance_runs where job = 'prune'").fetch_one(&pool).await.unwrap() };
    assert_eq!(runs().await, 0, "the claim was lost");
    // The claim becomes winnable, but this instance does not ask again within the minute.
    sqlx::query("update settings set value = '0' where key = 'last_cleanup_at'").execute(&pool).await.unwrap();
    assert_eq!(app.post_contact(&VALID).await.status(), 200);
    app.state.background.settle().await;
    assert_eq!(runs().await, 0, "no claim attempt from traffic until the claim it lost would end");
    // The ticker and the CLI always ask the claim.
    server::maintenance::run_now(&app.state, &["prune".into()], false, &mut Vec::new()).await.unwrap();
    assert_eq!(runs().await, 1);
}

/// The contact writer's own connection is bounded like the pool's: a statement the database does
/// not finish (here: the table locked by someone else) fails after the statement timeout with a
/// 503 the visitor can act on, instead of holding the submission; once the lock goes, the next
/// submission is stored and the failed one was not.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_stuck_database_fails_a_submission_in_bounded_time_and_stores_it_once_sent_again(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let mut holder = pool.begin().await.unwrap();
    sqlx::query("lock table inquiries in access exclusive mode").execute(&mut *holder).await.unwrap();
    let res = tokio::time::timeout(std::time::Duration::from_secs(40), app.post_contact(&VALID)).await.expect("answered within the statement timeout");
    assert_eq!(res.status(), 503);
    holder.rollback().await.unwrap();
    assert_eq!(inquiry_count(&pool).await, 0, "the failed submission was not stored");
    assert_eq!(app.post_contact(&VALID).await.status(), 200);
    assert_eq!(inquiry_count(&pool).await, 1);
    app.shutdown().await;
}
