//! Legal holds against the real PostgreSQL: held items survive prune and the share GC, lifting
//! makes them eligible at once, and concurrent admins end in a consistent state (the GC query's
//! index with holds present is checked in shares.rs).

use app::contact::prune::delete_old_inquiries;
use app::holds::db::HoldError;
use app::holds::HoldTarget;
use app::kernel::audit::Actor;
use app::kernel::prune::PruneCtx;
use app::shares::gc::{collect, GcRules};
use app::shares::lifecycle::mark_consumed;
use app::storage::{BlobStore, Namespace};
use bytes::Bytes;
use sqlx::PgPool;
use time::OffsetDateTime;
use uuid::Uuid;

fn ctx(now: OffsetDateTime) -> PruneCtx {
    PruneCtx { now, batch_size: 1000, max_batches: 200, session_absolute: std::time::Duration::from_secs(7 * 86400), deadline: None }
}

/// Places a hold through the owners the server composes.
async fn place(pool: &PgPool, actor: &Actor, target: HoldTarget, reason: &str) -> Result<i64, HoldError> {
    app::holds::db::place(pool, &app::hold_owners(), actor, target, reason).await
}

/// Lifts a hold through the owners the server composes.
async fn lift(pool: &PgPool, actor: &Actor, id: i64) -> Result<(), HoldError> {
    app::holds::db::lift(pool, &app::hold_owners(), actor, id).await
}

const REASON: &str = "Case 2026-17: keep until the court decides";

async fn admin(pool: &PgPool) -> Actor {
    let id: Uuid = sqlx::query_scalar("insert into admins (id, name) values (gen_random_uuid(), 'Ana') returning id").fetch_one(pool).await.unwrap();
    Actor { admin: Some(id), client_hash: None }
}

/// An inquiry from `email` created `age_days` ago.
async fn inquiry(pool: &PgPool, email: &str, age_days: i32) -> Uuid {
    sqlx::query_scalar("insert into inquiries (name, email, message, created_at) values ('V', $1, 'm', now() - make_interval(days => $2)) returning id")
        .bind(email)
        .bind(age_days)
        .fetch_one(pool)
        .await
        .unwrap()
}

async fn exists(pool: &PgPool, id: Uuid) -> bool {
    sqlx::query_scalar("select exists (select 1 from inquiries where id = $1)").bind(id).fetch_one(pool).await.unwrap()
}

async fn prune(pool: &PgPool) -> u64 {
    delete_old_inquiries(pool, ctx(OffsetDateTime::now_utc())).await.unwrap().deleted
}

async fn events(pool: &PgPool, kind: &str) -> i64 {
    sqlx::query_scalar("select count(*) from audit_events where kind = $1").bind(kind).fetch_one(pool).await.unwrap()
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_held_inquiry_older_than_retention_survives_prune_and_goes_with_the_first_run_after_the_lift(pool: PgPool) {
    let actor = admin(&pool).await;
    let held = inquiry(&pool, "held@example.org", 400).await;
    let other = inquiry(&pool, "other@example.org", 400).await;
    let hold = place(&pool, &actor, HoldTarget::Inquiry(held), REASON).await.unwrap();
    assert_eq!(prune(&pool).await, 1);
    assert!(exists(&pool, held).await, "the held inquiry was pruned");
    assert!(!exists(&pool, other).await);
    // Pruning again changes nothing while the hold lasts.
    assert_eq!(prune(&pool).await, 0);
    lift(&pool, &actor, hold).await.unwrap();
    assert_eq!(prune(&pool).await, 1);
    assert!(!exists(&pool, held).await, "the first prune after the lift keeps it");
    assert_eq!((events(&pool, "hold.place").await, events(&pool, "hold.lift").await), (1, 1));
    let detail: String = sqlx::query_scalar("select detail from audit_events where kind = 'hold.place'").fetch_one(&pool).await.unwrap();
    assert!(detail.contains(REASON) && detail.contains(&held.to_string()), "{detail}");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_hold_on_an_address_keeps_every_inquiry_from_it_also_those_that_arrive_later(pool: PgPool) {
    let actor = admin(&pool).await;
    let first = inquiry(&pool, "Sender@Example.org", 400).await;
    let second = inquiry(&pool, "sender@example.org", 300).await;
    let stranger = inquiry(&pool, "stranger@example.org", 400).await;
    let hold = place(&pool, &actor, HoldTarget::Sender(first), REASON).await.unwrap();
    // A later submission from the address (the contact form's own statement) is held at once.
    let limit = app::ratelimit::Limit { name: "contact", max: 100, window: std::time::Duration::from_secs(60) };
    let form =
        app::contact::parse_inquiry(&app::contact::ContactForm { name: "V".into(), email: "SENDER@example.org".into(), message: "A later message".into() })
            .unwrap();
    let app::contact::db::Submitted::Stored(later) = app::contact::db::submit(&pool, &limit, "client", &form).await.unwrap() else { panic!("stored") };
    let held: bool = sqlx::query_scalar("select held from inquiries where id = $1").bind(later).fetch_one(&pool).await.unwrap();
    assert!(held, "a new inquiry from a held address is held");
    sqlx::query("update inquiries set created_at = now() - interval '500 days' where id = $1").bind(later).execute(&pool).await.unwrap();

    assert_eq!(prune(&pool).await, 1);
    for id in [first, second, later] {
        assert!(exists(&pool, id).await);
    }
    assert!(!exists(&pool, stranger).await);
    assert!(matches!(place(&pool, &actor, HoldTarget::Sender(second), REASON).await, Err(HoldError::AlreadyHeld)));

    lift(&pool, &actor, hold).await.unwrap();
    assert_eq!(prune(&pool).await, 3);
}

/// A suspected spam message from `email`, created `age_days` ago, with its `held` flag.
async fn spam(pool: &PgPool, email: &str, age_days: i32, held: bool) -> Uuid {
    sqlx::query_scalar(
        "insert into suspected_spam (id, name, email, message, signals, score, held, created_at)
         values (gen_random_uuid(), 'S', $1, 'buy now', array['fast'], 9, $3, now() - make_interval(days => $2)) returning id",
    )
    .bind(email)
    .bind(age_days)
    .bind(held)
    .fetch_one(pool)
    .await
    .unwrap()
}

async fn flags(pool: &PgPool, table: &str) -> Vec<bool> {
    sqlx::query_scalar(&format!("select held from {table} order by created_at, id")).fetch_all(pool).await.unwrap()
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_lifted_address_hold_releases_the_senders_quarantined_spam_too(pool: PgPool) {
    let actor = admin(&pool).await;
    let first = inquiry(&pool, "sender@example.org", 1).await;
    // One message quarantined before the hold, one while it lasted (flagged by the form).
    spam(&pool, "Sender@example.org", 30, false).await;
    let hold = place(&pool, &actor, HoldTarget::Sender(first), REASON).await.unwrap();
    spam(&pool, "sender@example.org", 20, true).await;
    assert_eq!(flags(&pool, "suspected_spam").await, [true, true], "the hold flags what it keeps");
    let old_spam = |pool: PgPool| async move { app::contact::prune::delete_old_spam(&pool, ctx(OffsetDateTime::now_utc())).await.unwrap().deleted };
    assert_eq!(old_spam(pool.clone()).await, 0, "held spam stays");
    lift(&pool, &actor, hold).await.unwrap();
    assert_eq!(flags(&pool, "suspected_spam").await, [false, false], "the lift releases every message from the address");
    assert_eq!(old_spam(pool.clone()).await, 2, "the first prune after the lift deletes them");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn flags_no_hold_backs_are_cleared_and_backed_ones_kept(pool: PgPool) {
    let actor = admin(&pool).await;
    let kept = inquiry(&pool, "kept@example.org", 1).await;
    place(&pool, &actor, HoldTarget::Inquiry(kept), REASON).await.unwrap();
    let stale = inquiry(&pool, "stale@example.org", 2).await;
    sqlx::query("update inquiries set held = true where id = $1").bind(stale).execute(&pool).await.unwrap();
    spam(&pool, "stale@example.org", 3, true).await;
    let dir = tempfile::tempdir().unwrap();
    let store = crate::backend::open_store(crate::backend::Backend::Local, dir.path());
    let (orphan, _) = share(&pool, &*store, 60).await;
    sqlx::query("update shares set held = true where id = $1").bind(orphan).execute(&pool).await.unwrap();

    let fixed = app::holds::db::clear_stale_flags(&pool, &app::hold_owners()).await.unwrap();
    assert_eq!(fixed, 3, "the stale inquiry, spam message and share");
    assert_eq!(flags(&pool, "inquiries").await, [false, true], "the stale flag (older) is cleared, the held inquiry keeps its own");
    assert_eq!(flags(&pool, "suspected_spam").await, [false]);
    assert_eq!(flags(&pool, "shares").await, [false]);
    assert_eq!(app::holds::db::clear_stale_flags(&pool, &app::hold_owners()).await.unwrap(), 0, "nothing left to fix");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_list_describes_each_hold_through_the_owner_of_what_it_keeps(pool: PgPool) {
    use app::holds::HeldItem;
    let actor = admin(&pool).await;
    let one = inquiry(&pool, "one@example.org", 1).await;
    inquiry(&pool, "ONE@example.org", 2).await;
    let dir = tempfile::tempdir().unwrap();
    let store = crate::backend::open_store(crate::backend::Backend::Local, dir.path());
    let (file, _) = share(&pool, &*store, 60).await;
    place(&pool, &actor, HoldTarget::Inquiry(one), REASON).await.unwrap();
    place(&pool, &actor, HoldTarget::Sender(one), REASON).await.unwrap();
    place(&pool, &actor, HoldTarget::Share(file), REASON).await.unwrap();
    let list = app::holds::db::list(&pool, &app::hold_owners()).await.unwrap();
    let items: Vec<(String, i64)> = list
        .iter()
        .map(|h| {
            let what = match &h.item {
                HeldItem::Inquiry { from, .. } => format!("inquiry from {}", from.as_deref().unwrap_or("?")),
                HeldItem::Email { email } => format!("address {email}"),
                HeldItem::Share { file_name, .. } => format!("share {}", file_name.as_deref().unwrap_or("?")),
            };
            (what, h.covers)
        })
        .collect();
    let mut items = items;
    items.sort();
    assert_eq!(items, [("address one@example.org".to_string(), 2), ("inquiry from V".to_string(), 1), ("share evidence.pdf".to_string(), 1)], "{list:?}");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_inquiry_held_twice_stays_held_until_both_holds_are_lifted(pool: PgPool) {
    let actor = admin(&pool).await;
    let id = inquiry(&pool, "twice@example.org", 400).await;
    let own = place(&pool, &actor, HoldTarget::Inquiry(id), REASON).await.unwrap();
    let sender = place(&pool, &actor, HoldTarget::Sender(id), REASON).await.unwrap();
    lift(&pool, &actor, own).await.unwrap();
    assert_eq!(prune(&pool).await, 0, "the sender's hold still keeps it");
    lift(&pool, &actor, sender).await.unwrap();
    assert_eq!(prune(&pool).await, 1);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_held_inquiry_cannot_be_deleted_by_an_admin_or_by_any_statement(pool: PgPool) {
    let actor = admin(&pool).await;
    let id = inquiry(&pool, "keep@example.org", 1).await;
    place(&pool, &actor, HoldTarget::Inquiry(id), REASON).await.unwrap();
    let mut conn = pool.acquire().await.unwrap();
    assert_eq!(app::inbox::db::delete(&mut conn, app::inbox::db::Listed::Inquiries, &[id]).await.unwrap(), Vec::<Uuid>::new());
    // Even a statement that forgets the flag fails: the hold references the row.
    let err = sqlx::query("delete from inquiries where id = $1").bind(id).execute(&pool).await.unwrap_err();
    assert!(err.to_string().contains("legal_holds"), "{err}");
    assert!(exists(&pool, id).await);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn holds_refuse_what_is_gone_or_already_held(pool: PgPool) {
    let actor = admin(&pool).await;
    assert!(matches!(place(&pool, &actor, HoldTarget::Inquiry(Uuid::new_v4()), REASON).await, Err(HoldError::NotFound)));
    assert!(matches!(place(&pool, &actor, HoldTarget::Sender(Uuid::new_v4()), REASON).await, Err(HoldError::NotFound)));
    assert!(matches!(place(&pool, &actor, HoldTarget::Share(123_456), REASON).await, Err(HoldError::NotFound)));
    assert!(matches!(lift(&pool, &actor, 987_654).await, Err(HoldError::NotFound)));
    let id = inquiry(&pool, "x@example.org", 1).await;
    place(&pool, &actor, HoldTarget::Inquiry(id), REASON).await.unwrap();
    assert!(matches!(place(&pool, &actor, HoldTarget::Inquiry(id), REASON).await, Err(HoldError::AlreadyHeld)));
    assert_eq!(events(&pool, "hold.place").await, 1, "refused holds are not recorded");
}

async fn share(pool: &PgPool, store: &dyn BlobStore, ttl_mins: i32) -> (i64, String) {
    let key = app::storage::new_key(Namespace::Shares);
    store.put(&key, Bytes::from_static(b"file body")).await.unwrap();
    let id = sqlx::query_scalar(
        "insert into shares (token_hash, blob_key, file_name, size_bytes, content_type, expires_at)
         values ($1, $2, 'evidence.pdf', 9, 'application/pdf', now() + make_interval(mins => $3)) returning id",
    )
    .bind(Uuid::new_v4().as_bytes().to_vec())
    .bind(&key)
    .bind(ttl_mins)
    .fetch_one(pool)
    .await
    .unwrap();
    (id, key)
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_held_consumed_share_keeps_its_file_past_the_grace_until_the_hold_is_lifted(pool: PgPool) {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::backend::open_store(crate::backend::Backend::Local, dir.path());
    let actor = admin(&pool).await;
    let (held, held_key) = share(&pool, &*store, 60).await;
    let (free, free_key) = share(&pool, &*store, 60).await;
    let hold = place(&pool, &actor, HoldTarget::Share(held), REASON).await.unwrap();
    // The link still works once.
    assert!(mark_consumed(&pool, held).await.unwrap());
    assert!(!mark_consumed(&pool, held).await.unwrap());
    assert!(mark_consumed(&pool, free).await.unwrap());
    sqlx::query("update shares set consumed_at = now() - interval '2 hours'").execute(&pool).await.unwrap();

    let report = collect(&pool, &*store, 100, GcRules::default()).await.unwrap();
    assert_eq!(report.purged, 1);
    assert!(store.get(&held_key).await.unwrap().is_some(), "the held share's file was deleted");
    assert!(store.get(&free_key).await.unwrap().is_none());
    // Even marking it purged directly is refused while held.
    assert!(!app::shares::lifecycle::mark_purged(&pool, held).await.unwrap());

    lift(&pool, &actor, hold).await.unwrap();
    let report = collect(&pool, &*store, 100, GcRules::default()).await.unwrap();
    assert_eq!(report.purged, 1, "eligible at once after the lift");
    assert!(store.get(&held_key).await.unwrap().is_none());
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn only_an_active_unexpired_share_can_be_held(pool: PgPool) {
    let dir = tempfile::tempdir().unwrap();
    let store = crate::backend::open_store(crate::backend::Backend::Local, dir.path());
    let actor = admin(&pool).await;
    let (expired, _) = share(&pool, &*store, -1).await;
    let (downloaded, _) = share(&pool, &*store, 60).await;
    assert!(mark_consumed(&pool, downloaded).await.unwrap());
    for id in [expired, downloaded] {
        assert!(matches!(place(&pool, &actor, HoldTarget::Share(id), REASON).await, Err(HoldError::ShareNotActive)), "share {id}");
    }
    let held: i64 = sqlx::query_scalar("select count(*) from shares where held").fetch_one(&pool).await.unwrap();
    assert_eq!(held, 0);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn two_admins_holding_and_lifting_concurrently_end_in_a_consistent_state(pool: PgPool) {
    let ana = admin(&pool).await;
    let ben = admin(&pool).await;
    let mut ids = Vec::new();
    for i in 0..6 {
        ids.push(inquiry(&pool, &format!("p{}@example.org", i % 3), 400).await);
    }
    let mut tasks = Vec::new();
    for (n, actor) in [ana, ben].into_iter().enumerate() {
        let pool = pool.clone();
        let ids = ids.clone();
        tasks.push(tokio::spawn(async move {
            for round in 0..40usize {
                let id = ids[(round * 7 + n * 3) % ids.len()];
                let target = if (round + n) % 2 == 0 { HoldTarget::Inquiry(id) } else { HoldTarget::Sender(id) };
                let _ = place(&pool, &actor, target, REASON).await;
                if round % 3 == n {
                    let any: Option<i64> = sqlx::query_scalar("select id from legal_holds order by random() limit 1").fetch_optional(&pool).await.unwrap();
                    if let Some(h) = any {
                        let _ = lift(&pool, &actor, h).await;
                    }
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    // Every flag says exactly what the holds say.
    let wrong: i64 = sqlx::query_scalar(
        "select count(*) from inquiries i
         where held <> (exists (select 1 from legal_holds h where h.inquiry_id = i.id)
                        or exists (select 1 from legal_holds h where h.email = lower(i.email)))",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(wrong, 0, "held flags disagree with the holds");
    // Every hold in force was placed and not lifted: the audit log tells the same story.
    let holds: i64 = sqlx::query_scalar("select count(*) from legal_holds").fetch_one(&pool).await.unwrap();
    assert_eq!(events(&pool, "hold.place").await - events(&pool, "hold.lift").await, holds);
    // Prune deletes exactly the unheld ones.
    let unheld: i64 = sqlx::query_scalar("select count(*) from inquiries where not held").fetch_one(&pool).await.unwrap();
    assert_eq!(prune(&pool).await as i64, unheld);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_prune_running_while_a_hold_is_being_placed_skips_the_row(pool: PgPool) {
    let actor = admin(&pool).await;
    let id = inquiry(&pool, "race@example.org", 400).await;
    let other = inquiry(&pool, "other@example.org", 400).await;
    // The real placement, its transaction not committed yet.
    let mut tx = pool.begin().await.unwrap();
    app::holds::db::place_in(&mut tx, &app::hold_owners(), &actor, HoldTarget::Inquiry(id), REASON).await.unwrap();
    // Prune neither waits for it nor deletes the row being held (SKIP LOCKED); the rest goes.
    assert_eq!(tokio::time::timeout(std::time::Duration::from_secs(10), prune(&pool)).await.unwrap(), 1);
    assert!(!exists(&pool, other).await);
    tx.commit().await.unwrap();
    assert_eq!(prune(&pool).await, 0);
    assert!(exists(&pool, id).await, "the held inquiry survived the race");
    // The same race on the sender's address.
    let by_sender = inquiry(&pool, "sender@example.org", 400).await;
    let mut tx = pool.begin().await.unwrap();
    app::holds::db::place_in(&mut tx, &app::hold_owners(), &actor, HoldTarget::Sender(by_sender), REASON).await.unwrap();
    assert_eq!(tokio::time::timeout(std::time::Duration::from_secs(10), prune(&pool)).await.unwrap(), 0);
    tx.commit().await.unwrap();
    assert_eq!(prune(&pool).await, 0);
    assert!(exists(&pool, by_sender).await);
}

/// A submission racing a hold on its sender's address can be stored without the flag (its
/// insert read the holds before the hold committed). The admin's delete checks the holds
/// themselves, as prune does: that inquiry cannot be deleted while the hold lasts.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_inquiry_that_missed_its_senders_hold_flag_cannot_be_deleted_by_an_admin(pool: PgPool) {
    let actor = admin(&pool).await;
    let first = inquiry(&pool, "Racer@Example.org", 1).await;
    place(&pool, &actor, HoldTarget::Sender(first), REASON).await.unwrap();
    // As if its insert ran before the hold committed: the flag is not set.
    let raced = inquiry(&pool, "racer@example.org", 1).await;
    sqlx::query("update inquiries set held = false where id = $1").bind(raced).execute(&pool).await.unwrap();
    let free = inquiry(&pool, "free@example.org", 1).await;
    let mut conn = pool.acquire().await.unwrap();
    let held = app::inbox::db::held_among(&mut conn, app::inbox::db::Listed::Inquiries, &[raced, free]).await.unwrap();
    assert_eq!(held, vec![raced], "the hold on the address counts, not only the flag");
    let deleted = app::inbox::db::delete(&mut conn, app::inbox::db::Listed::Inquiries, &[raced, free]).await.unwrap();
    assert_eq!(deleted, vec![free]);
    assert!(exists(&pool, raced).await, "the inquiry under its sender's hold was deleted");
}
