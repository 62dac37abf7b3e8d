//! Two Ebb instances on one database and one store, as a deployment behind a load balancer runs
//! them: claims won once in total, sessions and rate limits shared, a share downloaded once
//! across both, prune once per interval in total over a simulated day.

use std::time::Duration;

use app::jobs::{run_job, RunOutcome, Trigger};
use futures::future::join_all;
use sqlx::PgPool;

use crate::helpers::*;
use crate::shares::{admin_cookie, body_of, share_via_upload};

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_share_is_downloaded_once_across_both_instances(pool: PgPool) {
    let cookie = admin_cookie(&pool).await;
    let a = spawn_app(pool.clone()).await;
    let b = spawn_second_instance(pool.clone(), &a, &[]).await;
    let data = body_of(200_000);
    let path = share_via_upload(&a, &cookie, "both.pdf", data.clone()).await;
    let tries = (0..20).map(|i| {
        let app = if i % 2 == 0 { &a } else { &b };
        let url = app.url(&path);
        let client = app.client.clone();
        async move {
            let res = client.post(url).send().await.unwrap();
            let status = res.status().as_u16();
            (status, res.bytes().await.unwrap().to_vec())
        }
    });
    let results = join_all(tries).await;
    let delivered: Vec<_> = results.iter().filter(|(s, _)| *s == 200).collect();
    assert_eq!(delivered.len(), 1, "exactly one download over both instances: {:?}", results.iter().map(|r| r.0).collect::<Vec<_>>());
    assert_eq!(delivered[0].1, data, "the whole file");
    assert!(results.iter().all(|(s, _)| *s == 200 || *s == 410));
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn sessions_and_sign_in_limits_are_shared_by_both_instances(pool: PgPool) {
    let admin = create_admin(&pool, "Ada").await;
    let cookie = session_cookie_for(&pool, admin).await;
    let a = spawn_app_with(pool.clone(), &["--auth-rate-limit", "4"], |_| {}).await;
    let b = spawn_second_instance(pool.clone(), &a, &["--auth-rate-limit", "4"]).await;
    // A session from one instance works on the other; signed out on one, it is refused by both.
    for app in [&a, &b] {
        let me: serde_json::Value = call_form(app, "/api/auth/me", Some(&cookie), &[]).await.json().await.unwrap();
        assert_eq!(me["name"], "Ada");
    }
    assert_eq!(call_form(&a, "/api/admin/signout", Some(&cookie), &[]).await.status(), 200);
    for app in [&a, &b] {
        let me: serde_json::Value = call_form(app, "/api/auth/me", Some(&cookie), &[]).await.json().await.unwrap();
        assert!(me.is_null(), "signed out everywhere: {me}");
    }
    // One client's sign-in attempts count once, whichever instance answers.
    for i in 0..4 {
        let app = if i % 2 == 0 { &a } else { &b };
        assert_eq!(call_form(app, "/api/auth/signin/start", None, &[]).await.status(), 200);
    }
    assert_eq!(call_form(&a, "/api/auth/signin/start", None, &[]).await.status(), 429);
    assert_eq!(call_form(&b, "/api/auth/signin/start", None, &[]).await.status(), 429);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_claim_is_won_once_in_total_when_both_instances_race_for_it(pool: PgPool) {
    let a = spawn_app(pool.clone()).await;
    let b = spawn_second_instance(pool.clone(), &a, &[]).await;
    let tries = (0..20).map(|i| {
        let state = if i % 2 == 0 { a.state.clone() } else { b.state.clone() };
        async move {
            let job = state.jobs().get("prune").unwrap().clone();
            matches!(run_job(&state, &job, Trigger::Ticker, false).await.unwrap(), RunOutcome::Ran(_))
        }
    });
    let ran = join_all(tries).await.into_iter().filter(|r| *r).count();
    assert_eq!(ran, 1, "one run in total");
}

/// A simulated day: every 5 minutes both instances' tickers ask to prune; between ticks the
/// stored claim is moved 5 minutes into the past (the database's clock is not ours to move).
/// Prune's interval is one hour: 24 runs in total, never two within an hour.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn prune_runs_once_per_interval_in_total_over_a_simulated_day(pool: PgPool) {
    let a = spawn_app(pool.clone()).await;
    let b = spawn_second_instance(pool.clone(), &a, &[]).await;
    let key = app::kernel::prune::CLAIM_KEY;
    let mut runs_at = Vec::new();
    for tick in 0..(24 * 12) {
        let tries = [a.state.clone(), b.state.clone()].map(|state| async move {
            let job = state.jobs().get("prune").unwrap().clone();
            matches!(run_job(&state, &job, Trigger::Ticker, false).await.unwrap(), RunOutcome::Ran(_))
        });
        let ran = join_all(tries).await.into_iter().filter(|r| *r).count();
        assert!(ran <= 1, "tick {tick}: both instances ran");
        if ran == 1 {
            runs_at.push(tick);
        }
        sqlx::query("update settings set value = (value::bigint - 300000)::text where key = $1").bind(key).execute(&pool).await.unwrap();
        // Run records are dated by the database; they are only counted here.
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    assert_eq!(runs_at.len(), 24, "once per hour over 24 hours: {runs_at:?}");
    assert!(runs_at.windows(2).all(|w| w[1] - w[0] == 12), "an hour apart: {runs_at:?}");
    let recorded: i64 = sqlx::query_scalar("select count(*) from maintenance_runs where job = 'prune'").fetch_one(&pool).await.unwrap();
    assert_eq!(recorded, 24);
}

/// A run recorded as running whose holder is gone (nobody holds the job's lease) shows as
/// interrupted at once, not as "running now" until the next run; while a holder has the lease it
/// shows as running.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_run_whose_holder_is_gone_shows_as_interrupted_not_running(pool: PgPool) {
    sqlx::query("insert into maintenance_runs (job, trigger, started_at, ok, steps, outcome) values ('prune', 'ticker', now(), true, '[]', 'running')")
        .execute(&pool)
        .await
        .unwrap();
    let outcome = |pool: PgPool| async move { app::jobs::last_run(&pool, "prune").await.unwrap().unwrap().outcome };
    assert_eq!(outcome(pool.clone()).await, app::common::jobs::RunState::Interrupted);
    let lease = app::jobs::claim::try_lease(&pool, "prune").await.unwrap().expect("the lease is free");
    assert_eq!(outcome(pool.clone()).await, app::common::jobs::RunState::Running);
    // Another job's lease, or the same job's in another database, says nothing about this one.
    assert_eq!(app::jobs::last_run(&pool, "share_gc").await.unwrap(), None);
    drop(lease);
    for _ in 0..50 {
        if outcome(pool.clone()).await == app::common::jobs::RunState::Interrupted {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("still shown as running after its holder let go");
}
