use std::time::Duration;

use app::maintenance::claim::{force_claim, try_claim};
use sqlx::PgPool;
use time::{macros::datetime, OffsetDateTime};

const HOUR: Duration = Duration::from_secs(3600);
const T0: OffsetDateTime = datetime!(2026-11-30 12:00 UTC);

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn of_many_concurrent_claims_exactly_one_wins(pool: PgPool) {
    for round in 0..5 {
        let now = T0 + time::Duration::hours(2 * round);
        let claims = (0..16).map(|_| {
            let pool = pool.clone();
            tokio::spawn(async move { try_claim(&pool, "last_cleanup_at", now, HOUR).await.unwrap() })
        });
        let won = futures::future::join_all(claims).await.into_iter().filter(|r| *r.as_ref().unwrap()).count();
        assert_eq!(won, 1, "round {round}: exactly one of 16 concurrent claims wins");
    }
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_claim_inside_the_hour_loses_and_one_after_it_wins(pool: PgPool) {
    assert!(try_claim(&pool, "last_cleanup_at", T0, HOUR).await.unwrap());
    assert!(!try_claim(&pool, "last_cleanup_at", T0 + time::Duration::minutes(59), HOUR).await.unwrap());
    assert!(try_claim(&pool, "last_cleanup_at", T0 + time::Duration::minutes(60), HOUR).await.unwrap());
    assert!(!try_claim(&pool, "last_cleanup_at", T0 + time::Duration::minutes(61), HOUR).await.unwrap());
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_garbled_claim_value_does_not_block_the_job_forever(pool: PgPool) {
    sqlx::query("insert into settings (key, value) values ('last_cleanup_at', 'yesterday')").execute(&pool).await.unwrap();
    assert!(try_claim(&pool, "last_cleanup_at", T0, HOUR).await.unwrap());
    assert!(!try_claim(&pool, "last_cleanup_at", T0, HOUR).await.unwrap());
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_forced_claim_always_runs_and_restarts_the_interval(pool: PgPool) {
    assert!(try_claim(&pool, "last_cleanup_at", T0, HOUR).await.unwrap());
    force_claim(&pool, "last_cleanup_at", T0 + time::Duration::minutes(10)).await.unwrap();
    assert!(!try_claim(&pool, "last_cleanup_at", T0 + time::Duration::minutes(65), HOUR).await.unwrap(), "an hour counts from the forced run");
    assert!(try_claim(&pool, "last_cleanup_at", T0 + time::Duration::minutes(70), HOUR).await.unwrap());
}
