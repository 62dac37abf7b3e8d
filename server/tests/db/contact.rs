//! The contact submission's one statement: the rate limit's count and the insert together, exact
//! under concurrency.

use app::contact::db::{submit, Submitted};
use app::contact::{parse_inquiry, ContactForm};
use app::ratelimit::Limit;
use sqlx::PgPool;

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn concurrent_submissions_store_exactly_the_limit_and_nothing_more(pool: PgPool) {
    let limit = Limit { name: "contact", max: 5, window: std::time::Duration::from_secs(600) };
    let inquiry = parse_inquiry(&ContactForm { name: "Ann".into(), email: "ann@example.org".into(), message: "Hello".into() }).unwrap();
    let results = futures::future::join_all((0..40).map(|_| submit(&pool, &limit, "203.0.113.7", &inquiry))).await;
    let stored = results.iter().filter(|r| matches!(r, Ok(Submitted::Stored(_)))).count();
    let limited = results.iter().filter(|r| matches!(r, Ok(Submitted::Limited { retry_after_secs }) if *retry_after_secs >= 1)).count();
    assert_eq!((stored, limited), (5, 35));
    let rows: i64 = sqlx::query_scalar("select count(*) from inquiries").fetch_one(&pool).await.unwrap();
    assert_eq!(rows, 5, "every accepted submission is stored, and no other");
    // Another client has its own budget.
    assert!(matches!(submit(&pool, &limit, "203.0.113.8", &inquiry).await.unwrap(), Submitted::Stored(_)));
}
