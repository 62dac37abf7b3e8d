use app::auth::db::{create_admin_from_invite, take_challenge, NewAdmin};
use app::auth::prune::{delete_expired_challenges, delete_expired_invites, delete_expired_sessions};
use app::kernel::prune::PruneCtx;
use app::token::hash_token;
use sqlx::PgPool;
use time::OffsetDateTime;
use uuid::Uuid;

fn ctx() -> PruneCtx {
    PruneCtx { now: OffsetDateTime::now_utc(), batch_size: 1000, max_batches: 200, session_absolute: std::time::Duration::from_secs(7 * 86400), deadline: None }
}

async fn invite(pool: &PgPool, token: &str, expires_in_secs: i64) -> Uuid {
    sqlx::query_scalar("insert into admin_invites (token_hash, expires_at) values ($1, now() + make_interval(secs => $2)) returning id")
        .bind(hash_token(token))
        .bind(expires_in_secs as f64)
        .fetch_one(pool)
        .await
        .unwrap()
}

async fn redeem(pool: PgPool, store: std::sync::Arc<app::storage::LocalDirStore>, invite: Uuid, n: u8) -> bool {
    let passkey = serde_json::json!({});
    let admin = NewAdmin { id: Uuid::new_v4(), name: "Racer", credential_id: &[n, 1, 2, 3], passkey: &passkey, passkey_name: "Key" };
    create_admin_from_invite(&pool, &*store, invite, admin).await.unwrap()
}

/// A folder store for the redemption's journal entry.
fn store() -> (tempfile::TempDir, std::sync::Arc<app::storage::LocalDirStore>) {
    let dir = tempfile::tempdir().unwrap();
    let store = std::sync::Arc::new(app::storage::LocalDirStore::new(dir.path()));
    (dir, store)
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn one_invite_redeemed_concurrently_makes_exactly_one_admin(pool: PgPool) {
    let id = invite(&pool, "t", 1800).await;
    let (_dir, store) = store();
    let racers = (0..12u8).map(|n| tokio::spawn(redeem(pool.clone(), store.clone(), id, n)));
    let won = futures::future::join_all(racers).await.into_iter().filter(|r| *r.as_ref().unwrap()).count();
    assert_eq!(won, 1);
    // The one redemption is journaled (a restore from before it ends the invite again).
    let (entries, _) = app::storage::journal::read_all(&*store).await.unwrap();
    let redeemed: Vec<_> = entries.iter().filter(|e| e.deletion == app::storage::journal::Deletion::InviteRedeem { ids: vec![id] }).collect();
    assert_eq!(redeemed.len(), 1, "{entries:?}");
    let admins: i64 = sqlx::query_scalar("select count(*) from admins").fetch_one(&pool).await.unwrap();
    let passkeys: i64 = sqlx::query_scalar("select count(*) from passkeys").fetch_one(&pool).await.unwrap();
    assert_eq!((admins, passkeys), (1, 1), "the losers created nothing");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_expired_invite_cannot_be_redeemed(pool: PgPool) {
    let id = invite(&pool, "t", -1).await;
    let (_dir, store) = store();
    assert!(!redeem(pool.clone(), store, id, 1).await);
    let admins: i64 = sqlx::query_scalar("select count(*) from admins").fetch_one(&pool).await.unwrap();
    assert_eq!(admins, 0);
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_challenge_can_be_taken_once(pool: PgPool) {
    let id = Uuid::new_v4();
    sqlx::query("insert into passkey_challenges (id, kind, state, expires_at) values ($1, 'signin', '{}', now() + interval '5 minutes')")
        .bind(id)
        .execute(&pool)
        .await
        .unwrap();
    assert!(take_challenge(&pool, id, "register").await.unwrap().is_none(), "the kind must match");
    assert!(!take_challenge(&pool, id, "signin").await.unwrap().expect("taken once").expired);
    assert!(take_challenge(&pool, id, "signin").await.unwrap().is_none());
}

/// Expiries are read on the database clock, the one every instance shares: a challenge that the
/// database says expired a second ago is expired, whatever this process's clock says.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_challenge_expires_by_the_database_clock(pool: PgPool) {
    let id = Uuid::new_v4();
    sqlx::query("insert into passkey_challenges (id, kind, state, expires_at) values ($1, 'signin', '{}', clock_timestamp() - interval '1 second')")
        .bind(id)
        .execute(&pool)
        .await
        .unwrap();
    assert!(take_challenge(&pool, id, "signin").await.unwrap().expect("taken").expired);
    // A new one gets its expiry from the database too.
    let fresh = Uuid::new_v4();
    app::auth::db::insert_challenge(&pool, fresh, "signin", &serde_json::json!({}), None, None, time::Duration::minutes(5)).await.unwrap();
    let ahead: f64 = sqlx::query_scalar("select extract(epoch from expires_at - clock_timestamp())::float8 from passkey_challenges where id = $1")
        .bind(fresh)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert!((290.0..=300.0).contains(&ahead), "{ahead}");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn prune_deletes_only_expired_challenges_sessions_and_invites(pool: PgPool) {
    // Challenges: one abandoned, one live.
    sqlx::query(
        "insert into passkey_challenges (id, kind, state, expires_at) values
         (gen_random_uuid(), 'signin', '{\"n\":\"old\"}', now() - interval '1 minute'),
         (gen_random_uuid(), 'signin', '{\"n\":\"live\"}', now() + interval '4 minutes')",
    )
    .execute(&pool)
    .await
    .unwrap();
    // Sessions: idle-expired, past the absolute lifetime, and live.
    let admin = Uuid::new_v4();
    sqlx::query("insert into admins (id, name) values ($1, 'Ada')").bind(admin).execute(&pool).await.unwrap();
    sqlx::query(
        "insert into tower_sessions.session (id, data, expiry_date) values
         ('idle', '', now() - interval '1 minute'), ('too-old', '', now() + interval '1 hour'), ('live', '', now() + interval '1 hour')",
    )
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query(
        "insert into admin_sessions (session_id, admin_id, user_agent, created_at) values
         ('idle', $1, 'ua', now() - interval '1 day'), ('too-old', $1, 'ua', now() - interval '8 days'), ('live', $1, 'ua', now() - interval '1 day')",
    )
    .bind(admin)
    .execute(&pool)
    .await
    .unwrap();
    // Invites: expired unredeemed, expired but redeemed (kept as a record), live.
    invite(&pool, "expired", -60).await;
    invite(&pool, "live", 600).await;
    let redeemed = invite(&pool, "redeemed", -60).await;
    sqlx::query("update admin_invites set redeemed_at = now() - interval '1 hour', redeemed_by = $2 where id = $1")
        .bind(redeemed)
        .bind(admin)
        .execute(&pool)
        .await
        .unwrap();

    assert_eq!(delete_expired_challenges(&pool, ctx()).await.unwrap().deleted, 1);
    assert_eq!(delete_expired_sessions(&pool, ctx()).await.unwrap().deleted, 2);
    assert_eq!(delete_expired_invites(&pool, ctx()).await.unwrap().deleted, 1);

    let challenges: Vec<serde_json::Value> = sqlx::query_scalar("select state from passkey_challenges").fetch_all(&pool).await.unwrap();
    assert_eq!(challenges, [serde_json::json!({"n": "live"})]);
    let sessions: Vec<String> = sqlx::query_scalar("select session_id from admin_sessions").fetch_all(&pool).await.unwrap();
    assert_eq!(sessions, ["live"], "our rows went with the store rows");
    let invites: Vec<Vec<u8>> = sqlx::query_scalar("select token_hash from admin_invites order by created_at").fetch_all(&pool).await.unwrap();
    assert_eq!(invites.len(), 2);
    assert!(!invites.contains(&hash_token("expired")));
}
