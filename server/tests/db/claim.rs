//! Claims and leases on the database clock.

use std::time::Duration;

use app::jobs::claim::{force_claim, next_possible_at, try_claim, try_lease};
use sqlx::PgPool;

const HOUR: Duration = Duration::from_secs(3600);

/// Stores a claim value `offset_secs` from the database's now (negative: in the past).
async fn stored_at(pool: &PgPool, key: &str, offset_secs: i64) {
    sqlx::query(
        "insert into settings (key, value) values ($1, ((extract(epoch from clock_timestamp()) + $2) * 1000)::bigint::text)
         on conflict (key) do update set value = excluded.value",
    )
    .bind(key)
    .bind(offset_secs as f64)
    .execute(pool)
    .await
    .unwrap();
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn of_many_concurrent_claims_exactly_one_wins(pool: PgPool) {
    for round in 0..5 {
        stored_at(&pool, "last_cleanup_at", -7200).await;
        let claims = (0..16).map(|_| {
            let pool = pool.clone();
            tokio::spawn(async move { try_claim(&pool, "last_cleanup_at", HOUR).await.unwrap().is_some() })
        });
        let won = futures::future::join_all(claims).await.into_iter().filter(|r| *r.as_ref().unwrap()).count();
        assert_eq!(won, 1, "round {round}: exactly one of 16 concurrent claims wins");
    }
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_claim_inside_the_interval_loses_and_one_after_it_wins(pool: PgPool) {
    assert!(try_claim(&pool, "last_cleanup_at", HOUR).await.unwrap().is_some(), "no stored value: wins");
    assert!(try_claim(&pool, "last_cleanup_at", HOUR).await.unwrap().is_none(), "just claimed: loses");
    stored_at(&pool, "last_cleanup_at", -59 * 60).await;
    assert!(try_claim(&pool, "last_cleanup_at", HOUR).await.unwrap().is_none(), "59 minutes ago: loses");
    stored_at(&pool, "last_cleanup_at", -61 * 60).await;
    assert!(try_claim(&pool, "last_cleanup_at", HOUR).await.unwrap().is_some(), "61 minutes ago: wins");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_claim_time_is_the_databases_clock_not_the_instances(pool: PgPool) {
    let won = try_claim(&pool, "k", HOUR).await.unwrap().unwrap();
    let (db_now, stored): (time::OffsetDateTime, String) =
        sqlx::query_as("select clock_timestamp(), value from settings where key = 'k'").fetch_one(&pool).await.unwrap();
    let stored_ms: i64 = stored.parse().unwrap();
    let db_ms = (db_now.unix_timestamp_nanos() / 1_000_000) as i64;
    assert!((db_ms - stored_ms).abs() < 5_000, "stored {stored_ms}, database now {db_ms}");
    assert!((db_now - won).whole_seconds().abs() < 5);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_claim_two_days_ahead_is_stale_and_does_not_stop_cleanup(pool: PgPool) {
    // An instance whose clock was two days ahead wrote this.
    stored_at(&pool, "last_cleanup_at", 2 * 86_400).await;
    assert_eq!(next_possible_at(&pool, "last_cleanup_at", HOUR).await.unwrap(), None, "shown as due now");
    assert!(try_claim(&pool, "last_cleanup_at", HOUR).await.unwrap().is_some(), "the next claim wins");
    assert!(try_claim(&pool, "last_cleanup_at", HOUR).await.unwrap().is_none(), "and the interval holds again");
    // The year 2100 too.
    stored_at(&pool, "share_gc_sweep_at", 75 * 365 * 86_400).await;
    assert!(try_claim(&pool, "share_gc_sweep_at", Duration::from_secs(60)).await.unwrap().is_some());
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_claim_ahead_by_less_than_one_interval_still_holds(pool: PgPool) {
    stored_at(&pool, "last_cleanup_at", 30 * 60).await;
    assert!(try_claim(&pool, "last_cleanup_at", HOUR).await.unwrap().is_none());
    assert!(next_possible_at(&pool, "last_cleanup_at", HOUR).await.unwrap().is_some());
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_garbled_claim_value_does_not_block_the_job_forever(pool: PgPool) {
    sqlx::query("insert into settings (key, value) values ('last_cleanup_at', 'yesterday')").execute(&pool).await.unwrap();
    assert!(try_claim(&pool, "last_cleanup_at", HOUR).await.unwrap().is_some());
    assert!(try_claim(&pool, "last_cleanup_at", HOUR).await.unwrap().is_none());
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_forced_claim_always_runs_and_restarts_the_interval(pool: PgPool) {
    assert!(try_claim(&pool, "last_cleanup_at", HOUR).await.unwrap().is_some());
    force_claim(&pool, "last_cleanup_at").await.unwrap();
    assert!(try_claim(&pool, "last_cleanup_at", HOUR).await.unwrap().is_none(), "an hour counts from the forced run");
    assert!(next_possible_at(&pool, "last_cleanup_at", HOUR).await.unwrap().is_some());
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_lease_has_one_holder_and_ends_with_its_holder(pool: PgPool) {
    let first = try_lease(&pool, "prune").await.unwrap().expect("free lease");
    assert!(try_lease(&pool, "prune").await.unwrap().is_none(), "held");
    assert!(try_lease(&pool, "share_gc").await.unwrap().is_some(), "other jobs have their own lease");
    // A crashed holder: its connection goes away, and so does the lease.
    drop(first);
    let mut again = None;
    for _ in 0..50 {
        again = try_lease(&pool, "prune").await.unwrap();
        if again.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let again = again.expect("a dropped holder's lease ends by itself");
    again.release().await;
    assert!(try_lease(&pool, "prune").await.unwrap().is_some(), "a released lease is free");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_unique_violation_becomes_a_409_conflict_with_a_clear_message(pool: PgPool) {
    sqlx::query("insert into settings (key, value) values ('dup', '1')").execute(&pool).await.unwrap();
    let e = sqlx::query("insert into settings (key, value) values ('dup', '2')").execute(&pool).await.unwrap_err();
    let err = app::error::AppError::db("test insert")(e);
    assert_eq!(err.status(), 409);
    assert!(matches!(&err, app::error::AppError::Conflict(m) if m.contains("already exists")), "{err:?}");
    // Anything else stays opaque.
    let e = sqlx::query("select * from no_such_table").execute(&pool).await.unwrap_err();
    assert_eq!(app::error::AppError::db("test")(e), app::error::AppError::Internal);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn rate_limit_windows_are_cut_from_the_database_clock(pool: PgPool) {
    use app::ratelimit::{hit, Decision, Limit};
    let limit = Limit { name: "test", max: 2, window: Duration::from_secs(600) };
    assert_eq!(hit(&pool, &limit, "client").await.unwrap(), Decision::Allowed);
    assert_eq!(hit(&pool, &limit, "client").await.unwrap(), Decision::Allowed);
    let Decision::Limited { retry_after_secs } = hit(&pool, &limit, "client").await.unwrap() else { panic!("third hit is over the limit") };
    assert!((1..=600).contains(&retry_after_secs), "{retry_after_secs}");
    let (start, now): (time::OffsetDateTime, time::OffsetDateTime) =
        sqlx::query_as("select window_start, clock_timestamp() from rate_limit_counters").fetch_one(&pool).await.unwrap();
    assert_eq!(start.unix_timestamp() % 600, 0, "a whole window");
    assert!(start <= now && (now - start).whole_seconds() < 600, "the window holding the database's now");
}
