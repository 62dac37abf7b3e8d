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

fn inquiry(name: &str) -> app::contact::ValidInquiry {
    parse_inquiry(&ContactForm { name: name.into(), email: "ann@example.org".into(), message: "Hello".into() }).unwrap()
}

async fn stored_names(pool: &PgPool) -> Vec<String> {
    sqlx::query_scalar("select name from inquiries order by name").fetch_all(pool).await.unwrap()
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn one_batch_counts_each_clients_hits_in_order_and_stores_only_those_within_the_limit(pool: PgPool) {
    use app::contact::db::{submit_batch, Submission};
    let limit = Limit { name: "contact", max: 3, window: std::time::Duration::from_secs(600) };
    // A client already used one of its three.
    assert!(matches!(submit(&pool, &limit, "a", &inquiry("a0")).await.unwrap(), Submitted::Stored(_)));
    let batch: Vec<Submission> = ["a1", "b1", "a2", "a3", "b2", "a4", "c1"].iter().map(|n| Submission::new(&limit, &n[..1], inquiry(n))).collect();
    let mut conn = pool.acquire().await.unwrap();
    let results = submit_batch(&mut conn, &batch).await.unwrap();
    let outcome: Vec<bool> = results.iter().map(|r| matches!(r, Submitted::Stored(_))).collect();
    assert_eq!(outcome, [true, true, true, false, true, false, true], "a1 a2 are a's 2nd and 3rd, a3 a4 are over; b and c are within");
    assert!(results.iter().all(|r| match r {
        Submitted::Limited { retry_after_secs } => (1..=600).contains(retry_after_secs),
        Submitted::Stored(_) => true,
        Submitted::Quarantined(_) => false,
    }));
    assert_eq!(stored_names(&pool).await, ["a0", "a1", "a2", "b1", "b2", "c1"]);
    // The ids answered are the rows stored.
    for (r, name) in results.iter().zip(["a1", "b1", "a2", "a3", "b2", "a4", "c1"]) {
        if let Submitted::Stored(id) = r {
            let got: String = sqlx::query_scalar("select name from inquiries where id = $1").bind(id).fetch_one(&pool).await.unwrap();
            assert_eq!(got, name);
        }
    }
    // The counters hold every hit, refused ones too (a: 1 + 4, b: 2, c: 1).
    let hits: Vec<i32> = sqlx::query_scalar("select hits from rate_limit_counters order by hits").fetch_all(&pool).await.unwrap();
    assert_eq!(hits, [1, 2, 5]);
}

/// Two window lengths (long, short) whose windows at `now` start at different seconds and both
/// have at least 60 s left.
fn windows_apart(now: i64) -> (u64, u64) {
    let fits = |w: i64| now % w < w - 60;
    let long = (600..700).find(|w| fits(*w)).expect("a long window with a minute left");
    let short = (500..600).find(|w| fits(*w) && now - now % w != now - now % long).expect("a short window apart from the long one");
    (long as u64, short as u64)
}

#[test]
fn windows_apart_never_share_a_start_or_end_within_a_minute() {
    // Across the ten minutes where 600 s and 599 s windows start together, and a day around it.
    let coincide = 1_796_640_600; // 2026-12-07 10:50:00 UTC, a multiple of both 600 and 599
    for now in (coincide - 86_400..coincide + 86_400).step_by(7) {
        let (long, short) = windows_apart(now);
        let (long, short) = (long as i64, short as i64);
        assert_ne!(now - now % long, now - now % short, "at {now}");
        assert!(now % long < long - 60 && now % short < short - 60, "at {now}");
    }
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_batch_filled_across_a_change_of_the_limits_window_counts_each_window_and_repeated_proofs_are_replays(pool: PgPool) {
    use app::contact::db::{submit_batch, Submission};
    use app::contact::spam::Proof;
    // Two windows whose current starts differ (a shared start would share the client's counter
    // row) and that both last at least another minute, chosen for the moment the test runs: fixed
    // lengths coincide now and then (600 s and 599 s did for ten minutes every 4.2 days).
    let (long_secs, short_secs) = windows_apart(time::OffsetDateTime::now_utc().unix_timestamp());
    let long = Limit { name: "contact", max: 2, window: std::time::Duration::from_secs(long_secs) };
    let short = Limit { name: "contact", max: 2, window: std::time::Duration::from_secs(short_secs) };
    let proof = |c: &str| Some(Proof { challenge: c.into(), expires_at: time::OffsetDateTime::now_utc() + time::Duration::hours(1) });
    // One client; the setting changed while the batch filled. "p" comes three times, twice in
    // the first window's run.
    let batch: Vec<Submission> = [(&long, "l1", "p"), (&long, "l2", "p"), (&short, "s1", "p"), (&short, "s2", "q"), (&long, "l3", "r")]
        .iter()
        .map(|(limit, name, p)| Submission::new(limit, "a", inquiry(name)).judged(Vec::new(), proof(p)))
        .collect();
    let mut conn = pool.acquire().await.unwrap();
    let results = submit_batch(&mut conn, &batch).await.unwrap();
    let kind: Vec<&str> = results
        .iter()
        .map(|r| match r {
            Submitted::Stored(_) => "stored",
            Submitted::Quarantined(_) => "spam",
            Submitted::Limited { .. } => "limited",
        })
        .collect();
    // Each window counts its own hits (two allowed in each); "p" reaches the inbox once, and its
    // reuse within the same statement is a replay like its reuse in a later one.
    assert_eq!(kind, ["stored", "spam", "spam", "stored", "limited"]);
    assert_eq!(stored_names(&pool).await, ["l1", "s2"]);
    let spam: Vec<String> = sqlx::query_scalar("select name from suspected_spam order by name").fetch_all(&pool).await.unwrap();
    assert_eq!(spam, ["l2", "s1"]);
    let hits: i64 = sqlx::query_scalar("select sum(hits)::int8 from rate_limit_counters").fetch_one(&pool).await.unwrap();
    assert_eq!(hits, 5, "every hit is counted, the refused one too");
    let replays: i64 =
        sqlx::query_scalar("select coalesce(sum(n), 0)::int8 from contact_daily where figure = 'signal:proof_replayed'").fetch_one(&pool).await.unwrap();
    assert_eq!(replays, 2);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_writer_under_concurrency_stores_every_accepted_submission_once_and_keeps_each_limit_exact(pool: PgPool) {
    use app::contact::db::Submission;
    use app::contact::writer::Writer;
    let limit = Limit { name: "contact", max: 5, window: std::time::Duration::from_secs(600) };
    // Two writers: their statements run at the same time, as two instances' do.
    let writer = std::sync::Arc::new(Writer::with_writers(pool.clone(), 2));
    // 12 clients × 20 submissions at once, interleaved, from many tasks.
    let tasks: Vec<_> = (0..240)
        .map(|i| {
            let writer = writer.clone();
            tokio::spawn(async move { (i % 12, writer.submit(Submission::new(&limit, &format!("client-{}", i % 12), inquiry(&format!("n{i}")))).await) })
        })
        .collect();
    let mut accepted = std::collections::HashMap::<usize, Vec<uuid::Uuid>>::new();
    for t in tasks {
        let (client, result) = t.await.unwrap();
        if let Submitted::Stored(id) = result.unwrap() {
            accepted.entry(client).or_default().push(id);
        }
    }
    assert_eq!(accepted.len(), 12);
    assert!(accepted.values().all(|ids| ids.len() == 5), "each client got exactly its limit: {:?}", accepted.values().map(Vec::len).collect::<Vec<_>>());
    let mut rows: Vec<uuid::Uuid> = sqlx::query_scalar("select id from inquiries").fetch_all(&pool).await.unwrap();
    let mut answered: Vec<uuid::Uuid> = accepted.into_values().flatten().collect();
    answered.sort();
    rows.sort();
    assert_eq!(rows, answered, "every accepted submission is stored once, and nothing else");
    // Group commit: submissions that wait together share a statement.
    assert!(writer.statements() <= 60, "240 concurrent submissions took {} statements", writer.statements());
}

async fn writer_connections(watch: &mut sqlx::PgConnection) -> i64 {
    sqlx::query_scalar("select count(*) from pg_stat_activity where datname = current_database() and application_name = $1")
        .bind(app::contact::writer::APPLICATION_NAME)
        .fetch_one(watch)
        .await
        .unwrap()
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_writers_own_connection_is_replaced_when_the_database_dropped_it_and_closed_with_the_pool(pool: PgPool) {
    use app::contact::db::Submission;
    use app::contact::writer::{Writer, APPLICATION_NAME};
    use sqlx::Connection as _;
    let limit = Limit { name: "contact", max: 5, window: std::time::Duration::from_secs(600) };
    let writer = Writer::new(pool.clone());
    let submit = |name: &str| writer.submit(Submission::new(&limit, "a", inquiry(name)));
    assert!(matches!(submit("one").await.unwrap(), Submitted::Stored(_)));
    // Watched from outside the pool, which closes below.
    let mut watch = sqlx::PgConnection::connect_with(&pool.connect_options()).await.unwrap();
    assert_eq!(writer_connections(&mut watch).await, 1, "the writer keeps one connection of its own");

    // The database drops it (a restart, an operator): after a pause the writer checks its
    // connection before writing, and the next submission is stored on a new one.
    sqlx::query("select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and application_name = $1")
        .bind(APPLICATION_NAME)
        .execute(&mut watch)
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    assert!(matches!(submit("two").await.unwrap(), Submitted::Stored(_)), "stored on a new connection");
    assert_eq!(stored_names(&pool).await, ["one", "two"]);

    // Closing the pool (the server stopping, a test ending) closes the writer's connection too.
    pool.close().await;
    let mut left = writer_connections(&mut watch).await;
    for _ in 0..50 {
        if left == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        left = writer_connections(&mut watch).await;
    }
    assert_eq!(left, 0, "the writer's connection closed with the pool");
    watch.close().await.unwrap();
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_submission_the_database_refuses_fails_alone_and_its_batch_is_still_stored(pool: PgPool) {
    use app::contact::db::{submit_batch, Submission};
    use app::contact::writer::Writer;
    let limit = Limit { name: "contact", max: 5, window: std::time::Duration::from_secs(600) };
    // A zero window divides by zero in the statement: the database refuses the whole batch.
    let mut bad = Submission::new(&limit, "bad", inquiry("bad"));
    bad.window_secs = 0;
    let good: Vec<Submission> = (0..3).map(|i| Submission::new(&limit, &format!("c{i}"), inquiry(&format!("good{i}")))).collect();
    let mut conn = pool.acquire().await.unwrap();
    let mut all = good.clone();
    all.insert(1, bad.clone());
    assert!(matches!(submit_batch(&mut conn, &all).await, Err(sqlx::Error::Database(_))), "the statement is refused as a whole");
    assert!(stored_names(&pool).await.is_empty(), "a refused statement stores nothing");
    drop(conn);

    // Through the writer the others are stored and only the bad one fails, in whatever batches
    // they happen to land.
    let writer = std::sync::Arc::new(Writer::new(pool.clone()));
    let results = futures::future::join_all(all.into_iter().map(|s| {
        let writer = writer.clone();
        async move { writer.submit(s).await }
    }))
    .await;
    assert!(results[1].is_err());
    assert!([0, 2, 3].iter().all(|&i| matches!(results[i], Ok(Submitted::Stored(_)))));
    assert_eq!(stored_names(&pool).await, ["good0", "good1", "good2"]);
}
