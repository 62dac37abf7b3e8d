use app::contact::prune::delete_old_inquiries;
use app::kernel::prune::{delete_old_rate_limit_counters, PruneCtx};
use sqlx::PgPool;
use time::OffsetDateTime;

fn ctx(now: OffsetDateTime) -> PruneCtx {
    PruneCtx { now, batch_size: 1000, max_batches: 200, session_absolute: std::time::Duration::from_secs(7 * 86400), deadline: None }
}

/// Inserts `n` inquiries created `age_days` days (plus `extra_secs` seconds) before `now`.
async fn insert_aged(pool: &PgPool, now: OffsetDateTime, n: i64, age_days: i64, extra_secs: i64, tag: &str) {
    sqlx::query(
        "insert into inquiries (name, email, message, created_at)
         select $1, 'a@example.org', 'm', $2 - make_interval(days => $3::int, secs => $4::double precision)
         from generate_series(1, $5)",
    )
    .bind(tag)
    .bind(now)
    .bind(age_days as i32)
    .bind(extra_secs as f64)
    .bind(n)
    .execute(pool)
    .await
    .unwrap();
}

async fn names(pool: &PgPool) -> Vec<String> {
    sqlx::query_scalar("select distinct name from inquiries order by name").fetch_all(pool).await.unwrap()
}

async fn set_retention(pool: &PgPool, value: &str) {
    sqlx::query("insert into settings (key, value) values ('retention_days', $1) on conflict (key) do update set value = excluded.value")
        .bind(value)
        .execute(pool)
        .await
        .unwrap();
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn only_inquiries_older_than_the_cutoff_are_deleted(pool: PgPool) {
    let now = OffsetDateTime::now_utc();
    insert_aged(&pool, now, 3, 180, 60, "older").await;
    insert_aged(&pool, now, 3, 179, 0, "younger").await;
    insert_aged(&pool, now, 3, 0, 0, "new").await;
    let report = delete_old_inquiries(&pool, ctx(now)).await.unwrap();
    assert_eq!(report.deleted, 3);
    assert_eq!(names(&pool).await, ["new", "younger"]);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn missing_or_invalid_retention_settings_mean_180_days(pool: PgPool) {
    let now = OffsetDateTime::now_utc();
    for stored in [None, Some("0"), Some("3651"), Some("abc")] {
        sqlx::query("delete from inquiries").execute(&pool).await.unwrap();
        if let Some(v) = stored {
            set_retention(&pool, v).await;
        }
        insert_aged(&pool, now, 1, 181, 0, "181 days").await;
        insert_aged(&pool, now, 1, 179, 0, "179 days").await;
        delete_old_inquiries(&pool, ctx(now)).await.unwrap();
        assert_eq!(names(&pool).await, ["179 days"], "retention setting {stored:?}");
    }
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn retention_of_1_and_3650_days_is_honoured(pool: PgPool) {
    let now = OffsetDateTime::now_utc();
    set_retention(&pool, "1").await;
    insert_aged(&pool, now, 1, 1, 60, "a day and a minute").await;
    insert_aged(&pool, now, 1, 0, 3600, "an hour").await;
    delete_old_inquiries(&pool, ctx(now)).await.unwrap();
    assert_eq!(names(&pool).await, ["an hour"]);

    set_retention(&pool, "3650").await;
    insert_aged(&pool, now, 1, 3651, 0, "3651 days").await;
    insert_aged(&pool, now, 1, 3649, 0, "3649 days").await;
    delete_old_inquiries(&pool, ctx(now)).await.unwrap();
    assert_eq!(names(&pool).await, ["3649 days", "an hour"]);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_10000_row_backlog_is_deleted_in_several_batches(pool: PgPool) {
    let now = OffsetDateTime::now_utc();
    insert_aged(&pool, now, 10_000, 200, 0, "old").await;
    insert_aged(&pool, now, 5, 1, 0, "recent").await;
    let report = delete_old_inquiries(&pool, ctx(now)).await.unwrap();
    assert_eq!(report.deleted, 10_000);
    assert_eq!(report.batches, 10, "1,000 rows per statement");
    assert!(!report.more);
    assert_eq!(names(&pool).await, ["recent"]);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_run_stops_at_its_batch_bound_and_the_next_run_finishes(pool: PgPool) {
    let now = OffsetDateTime::now_utc();
    insert_aged(&pool, now, 2_500, 200, 0, "old").await;
    let bounded = PruneCtx { max_batches: 2, ..ctx(now) };
    let first = delete_old_inquiries(&pool, bounded).await.unwrap();
    assert_eq!((first.deleted, first.batches, first.more), (2000, 2, true));
    let second = delete_old_inquiries(&pool, bounded).await.unwrap();
    assert_eq!((second.deleted, second.more), (500, false));
    assert!(names(&pool).await.is_empty());
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn prune_deletes_only_ended_rate_limit_windows(pool: PgPool) {
    let now = OffsetDateTime::now_utc();
    sqlx::query("insert into rate_limit_counters (bucket, window_start, hits) values ('old', $1, 3), ('current', $2, 1)")
        .bind(now - time::Duration::days(2))
        .bind(now - time::Duration::minutes(5))
        .execute(&pool)
        .await
        .unwrap();
    delete_old_rate_limit_counters(&pool, ctx(now)).await.unwrap();
    let left: Vec<String> = sqlx::query_scalar("select bucket from rate_limit_counters").fetch_all(&pool).await.unwrap();
    assert_eq!(left, ["current"]);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_step_whose_time_budget_is_spent_starts_no_batch_and_leaves_the_rest_for_the_next_run(pool: PgPool) {
    let now = OffsetDateTime::now_utc();
    insert_aged(&pool, now, 1_500, 200, 0, "old").await;
    let spent = PruneCtx { deadline: Some(std::time::Instant::now()), ..ctx(now) };
    let report = delete_old_inquiries(&pool, spent).await.unwrap();
    assert_eq!((report.deleted, report.more), (0, true));
    let report = delete_old_inquiries(&pool, ctx(now)).await.unwrap();
    assert_eq!((report.deleted, report.more), (1_500, false));
}
