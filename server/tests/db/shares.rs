//! Seed 002's fourteen lifecycle behaviours, against PostgreSQL and the real local blob store,
//! with a fault-injecting wrapper where a delete must fail.

use app::shares::gc::{collect, GcRules, ACCESS_TIME_BATCH};
use app::shares::lifecycle::{mark_consumed, mark_purge_failed, mark_purged};
use app::storage::faults::{Faults, FaultyStore, Op};
use app::storage::{BlobStore, LocalDirStore, Namespace};
use bytes::Bytes;
use sqlx::PgPool;
use std::sync::Arc;

use crate::backend::Backend;

/// The real store of a backend, with faults injected where a delete must fail (as a read-only
/// mount or an S3 outage would).
struct Fixture {
    pool: PgPool,
    store: FaultyStore<Box<dyn BlobStore>>,
    faults: Arc<Faults>,
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new(pool: PgPool, backend: Backend) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let faults = Faults::new();
        let store = FaultyStore::new(crate::backend::open_store(backend, dir.path()), faults.clone());
        Fixture { pool, store, faults, dir }
    }

    /// A share whose file exists, expiring in `ttl_mins` minutes.
    async fn share(&self, ttl_mins: i32) -> (i64, String) {
        let key = app::storage::new_key(Namespace::Shares);
        self.store.put(&key, Bytes::from_static(b"file body")).await.unwrap();
        let id: i64 = sqlx::query_scalar(
            "insert into shares (token_hash, blob_key, file_name, size_bytes, content_type, expires_at)
             values ($1, $2, 'report.pdf', 9, 'application/pdf', now() + make_interval(mins => $3)) returning id",
        )
        .bind(uuid::Uuid::new_v4().as_bytes().to_vec())
        .bind(&key)
        .bind(ttl_mins)
        .fetch_one(&self.pool)
        .await
        .unwrap();
        (id, key)
    }

    async fn exec(&self, sql: &str, id: i64) {
        sqlx::query(sql).bind(id).execute(&self.pool).await.unwrap();
    }

    async fn status(&self, id: i64) -> String {
        sqlx::query_scalar("select status from shares where id = $1").bind(id).fetch_one(&self.pool).await.unwrap()
    }

    async fn attempts(&self, id: i64) -> i32 {
        sqlx::query_scalar("select purge_attempts from shares where id = $1").bind(id).fetch_one(&self.pool).await.unwrap()
    }

    async fn file_exists(&self, key: &str) -> bool {
        self.store.get(key).await.unwrap().is_some()
    }

    async fn gc(&self, limit: i64) -> app::shares::gc::GcReport {
        collect(&self.pool, &self.store, limit, GcRules::default()).await.unwrap()
    }
}

const EXPIRE: &str = "update shares set expires_at = now() - interval '1 minute' where id = $1";
const PAST_GRACE: &str = "update shares set consumed_at = now() - interval '16 minutes' where id = $1";
const RETRY_DUE: &str = "update shares set next_purge_attempt_at = now() - interval '1 minute' where id = $1";

async fn first_download_is_claimed_and_second_is_refused(pool: PgPool, backend: Backend) {
    let f = Fixture::new(pool, backend);
    let (id, _) = f.share(60).await;
    assert!(mark_consumed(&f.pool, id).await.unwrap());
    assert!(!mark_consumed(&f.pool, id).await.unwrap());
    assert_eq!(f.status(id).await, "consumed");
}

async fn an_expired_share_cannot_be_claimed(pool: PgPool, backend: Backend) {
    let f = Fixture::new(pool, backend);
    let (id, _) = f.share(60).await;
    f.exec(EXPIRE, id).await;
    assert!(!mark_consumed(&f.pool, id).await.unwrap());
    assert_eq!(f.status(id).await, "active");
}

async fn gc_purges_a_consumed_share_after_the_grace(pool: PgPool, backend: Backend) {
    let f = Fixture::new(pool, backend);
    let (id, key) = f.share(60).await;
    mark_consumed(&f.pool, id).await.unwrap();
    f.exec(PAST_GRACE, id).await;
    assert_eq!(f.gc(10).await.purged, 1);
    assert_eq!(f.status(id).await, "purged");
    assert!(!f.file_exists(&key).await);
}

async fn gc_purges_an_expired_share_that_was_never_downloaded(pool: PgPool, backend: Backend) {
    let f = Fixture::new(pool, backend);
    let (id, key) = f.share(60).await;
    f.exec(EXPIRE, id).await;
    assert_eq!(f.gc(10).await.purged, 1);
    assert_eq!(f.status(id).await, "purged");
    assert!(!f.file_exists(&key).await);
}

async fn gc_leaves_an_active_unexpired_share_untouched(pool: PgPool, backend: Backend) {
    let f = Fixture::new(pool, backend);
    let (id, key) = f.share(60).await;
    assert_eq!(f.gc(10).await.purged, 0);
    assert_eq!(f.status(id).await, "active");
    assert!(f.file_exists(&key).await);
}

async fn a_consumed_share_is_protected_during_the_delivery_grace(pool: PgPool, backend: Backend) {
    let f = Fixture::new(pool, backend);
    let (id, key) = f.share(60).await;
    mark_consumed(&f.pool, id).await.unwrap();
    assert_eq!(f.gc(10).await.purged, 0);
    assert_eq!(f.status(id).await, "consumed");
    assert!(f.file_exists(&key).await, "the file is still being delivered");
}

async fn a_share_consumed_just_before_expiry_is_not_purged_by_the_expiry_branch_during_grace(pool: PgPool, backend: Backend) {
    let f = Fixture::new(pool, backend);
    let (id, key) = f.share(1).await;
    mark_consumed(&f.pool, id).await.unwrap();
    f.exec(EXPIRE, id).await; // the download is still running when the expiry passes
    assert_eq!(f.gc(10).await.purged, 0);
    assert!(f.file_exists(&key).await);
}

async fn gc_heals_itself_when_a_delete_fails(pool: PgPool, backend: Backend) {
    let f = Fixture::new(pool, backend);
    let (id, key) = f.share(60).await;
    f.exec(EXPIRE, id).await;
    f.faults.fail_key(Op::Delete, &key);
    let report = f.gc(10).await;
    assert_eq!((report.purged, report.failed), (0, 1));
    assert_eq!(f.status(id).await, "active", "not purged while the file remains");
    assert_eq!(f.attempts(id).await, 1);
    assert!(f.file_exists(&key).await);
    f.faults.heal();
    f.exec(RETRY_DUE, id).await;
    assert_eq!(f.gc(10).await.purged, 1);
    assert_eq!(f.status(id).await, "purged");
    assert!(!f.file_exists(&key).await);
}

async fn a_failing_row_does_not_block_the_rows_behind_it(pool: PgPool, backend: Backend) {
    let f = Fixture::new(pool, backend);
    let mut failing = Vec::new();
    for _ in 0..5 {
        let (id, key) = f.share(60).await;
        f.exec(EXPIRE, id).await;
        f.faults.fail_key(Op::Delete, &key);
        failing.push(id);
    }
    let mut healthy = Vec::new();
    for _ in 0..3 {
        let (id, _) = f.share(60).await;
        f.exec(EXPIRE, id).await;
        healthy.push(id);
    }
    assert_eq!(f.gc(5).await, app::shares::gc::GcReport { purged: 0, failed: 5 });
    assert_eq!(f.gc(5).await.purged, 3, "the backed-off rows are skipped, the healthy ones collected");
    for id in healthy {
        assert_eq!(f.status(id).await, "purged");
    }
    for id in failing {
        assert_eq!(f.status(id).await, "active");
    }
}

async fn a_failed_purge_is_retried_once_the_backoff_has_passed(pool: PgPool, backend: Backend) {
    let f = Fixture::new(pool, backend);
    let (id, key) = f.share(60).await;
    f.exec(EXPIRE, id).await;
    f.faults.fail_key(Op::Delete, &key);
    f.gc(10).await;
    assert_eq!(f.gc(10).await, app::shares::gc::GcReport::default(), "not retried before its time");
    f.exec(RETRY_DUE, id).await;
    assert_eq!(f.gc(10).await.failed, 1, "retried once due");
    assert_eq!(f.attempts(id).await, 2);
    // The delay doubles per attempt, capped at 64 × base.
    let secs: f64 = sqlx::query_scalar("select extract(epoch from next_purge_attempt_at - now())::float8 from shares where id = $1")
        .bind(id)
        .fetch_one(&f.pool)
        .await
        .unwrap();
    assert!((7000.0..=7200.0).contains(&secs), "second failure waits 2 × 60 min, got {secs} s");
    for _ in 0..10 {
        mark_purge_failed(&f.pool, id, std::time::Duration::from_secs(3600)).await.unwrap();
    }
    let secs: f64 = sqlx::query_scalar("select extract(epoch from next_purge_attempt_at - now())::float8 from shares where id = $1")
        .bind(id)
        .fetch_one(&f.pool)
        .await
        .unwrap();
    assert!((64.0 * 3600.0 - 100.0..=64.0 * 3600.0).contains(&secs), "capped at 64 hours, got {secs} s");
}

async fn gc_advances_when_the_file_was_already_absent(pool: PgPool, backend: Backend) {
    let f = Fixture::new(pool, backend);
    let (id, key) = f.share(60).await;
    f.exec(EXPIRE, id).await;
    // A crash after the delete, before the update: the file is gone, the row says otherwise.
    f.store.delete(&key).await.unwrap();
    assert_eq!(f.gc(10).await.purged, 1);
    assert_eq!(f.status(id).await, "purged");
}

async fn an_active_share_cannot_be_purged_directly(pool: PgPool, backend: Backend) {
    let f = Fixture::new(pool, backend);
    let (id, _) = f.share(60).await;
    assert!(!mark_purged(&f.pool, id).await.unwrap());
    assert_eq!(f.status(id).await, "active");
}

async fn a_purged_share_only_moves_forward(pool: PgPool, backend: Backend) {
    let f = Fixture::new(pool, backend);
    let (id, _) = f.share(60).await;
    f.exec(EXPIRE, id).await;
    f.gc(10).await;
    assert_eq!(f.status(id).await, "purged");
    assert!(!mark_consumed(&f.pool, id).await.unwrap());
    assert!(!mark_purged(&f.pool, id).await.unwrap());
    mark_purge_failed(&f.pool, id, std::time::Duration::from_secs(3600)).await.unwrap();
    assert_eq!(f.status(id).await, "purged");
    assert_eq!(f.attempts(id).await, 0, "a purged row is not touched");
    let bad = sqlx::query("update shares set status = 'deleted' where id = $1").bind(id).execute(&f.pool).await;
    assert!(bad.is_err(), "the CHECK constraint refuses unknown states");
}

async fn a_request_time_gc_run_is_bounded(pool: PgPool, backend: Backend) {
    let f = Fixture::new(pool, backend);
    for _ in 0..12 {
        let (id, _) = f.share(60).await;
        f.exec(EXPIRE, id).await;
    }
    assert_eq!(f.gc(ACCESS_TIME_BATCH).await.purged, 5);
    let left: i64 = sqlx::query_scalar("select count(*) from shares where status <> 'purged'").fetch_one(&f.pool).await.unwrap();
    assert_eq!(left, 7, "the rest waits for the next request");
}

/// Revoke vs download: a download whose transaction started before the revoke (and waited for
/// it) must not win once the revoke has answered "revoked".
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_download_that_began_before_a_revoke_loses_to_it(pool: PgPool) {
    let f = Fixture::new(pool, Backend::Local);
    let (id, _) = f.share(60).await;
    let mut download = f.pool.begin().await.unwrap();
    // The download's transaction has started (its `now()` is fixed from here on).
    sqlx::query("select now()").execute(&mut *download).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let mut revoke = f.pool.begin().await.unwrap();
    assert!(app::shares::db::revoke(&mut revoke, id).await.unwrap());
    revoke.commit().await.unwrap();
    assert!(!app::shares::lifecycle::claim(&mut download, id).await.unwrap(), "the revoked share was claimed");
    download.commit().await.unwrap();
    assert_eq!(f.status(id).await, "active");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_storage_self_check_passes_on_a_writable_folder_and_fails_on_a_missing_one(pool: PgPool) {
    let f = Fixture::new(pool, Backend::Local);
    assert!(app::storage::self_check(f.store.inner()).await.is_ok());
    let missing = LocalDirStore::new(f.dir.path().join("does-not-exist"));
    let err = app::storage::self_check(&missing).await.unwrap_err();
    assert!(err.contains("cannot write"), "{err}");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_gc_query_uses_the_partial_index_among_200000_purged_rows_and_2000_held_ones(pool: PgPool) {
    sqlx::query(
        "insert into shares (token_hash, blob_key, file_name, size_bytes, content_type, status, expires_at, purged_at)
         select decode(md5(g::text), 'hex'), 'k' || g, 'f', 1, 'text/plain', 'purged', now() - interval '1 day', now()
         from generate_series(1, 200000) g",
    )
    .execute(&pool)
    .await
    .unwrap();
    // Legal holds: shares consumed long ago, past the grace, kept by their hold.
    sqlx::query(
        "insert into shares (token_hash, blob_key, file_name, size_bytes, content_type, status, expires_at, consumed_at, held)
         select decode(md5('h' || g), 'hex'), 'h' || g, 'f', 1, 'text/plain', 'consumed', now() + interval '1 day', now() - interval '1 day', true
         from generate_series(1, 2000) g",
    )
    .execute(&pool)
    .await
    .unwrap();
    let f = Fixture::new(pool, Backend::Local);
    for _ in 0..5 {
        f.share(60).await;
    }
    sqlx::query("analyze shares").execute(&f.pool).await.unwrap();
    // The GC's own statement, exactly as select_purgeable sends it: run it on a pool of one
    // connection, find it among that connection's prepared statements, and explain its generic
    // plan (the one a prepared statement ends up with). Editing the query in lifecycle.rs
    // changes what is explained here.
    let one = sqlx::postgres::PgPoolOptions::new().max_connections(1).connect_with((*f.pool.connect_options()).clone()).await.unwrap();
    app::shares::lifecycle::select_purgeable(&one, 5, std::time::Duration::from_secs(900)).await.unwrap();
    let mut conn = one.acquire().await.unwrap();
    let name: String = sqlx::query_scalar("select name from pg_prepared_statements where statement like '%from shares%next_purge_attempt_at nulls first%' and statement not like '%pg_prepared_statements%'")
        .fetch_one(&mut *conn)
        .await
        .expect("the GC's statement was prepared on this connection");
    sqlx::query("set plan_cache_mode = force_generic_plan").execute(&mut *conn).await.unwrap();
    let plan: Vec<String> = sqlx::query_scalar(&format!("explain execute \"{name}\"(5, 900::float8)")).fetch_all(&mut *conn).await.unwrap();
    let plan = plan.join("\n");
    assert!(plan.contains("shares_purgeable_idx"), "{plan}");
    assert!(!plan.contains("Seq Scan"), "{plan}");
    // And the GC skips all 2,000 held rows (the five new shares are active and unexpired).
    let due = app::shares::lifecycle::select_purgeable(&f.pool, 100, std::time::Duration::from_secs(900)).await.unwrap();
    assert_eq!(due, vec![]);
}

async fn crash_heal_a_downloaded_share_whose_file_was_deleted_but_not_marked_is_purged_next_time(pool: PgPool, backend: Backend) {
    let f = Fixture::new(pool, backend);
    let (id, key) = f.share(60).await;
    assert!(mark_consumed(&f.pool, id).await.unwrap());
    f.exec(PAST_GRACE, id).await;
    // The GC deleted the file and the process died before `mark_purged`.
    f.store.delete(&key).await.unwrap();
    assert_eq!(f.status(id).await, "consumed");
    let report = f.gc(10).await;
    assert_eq!((report.purged, report.failed), (1, 0));
    assert_eq!(f.status(id).await, "purged");
    assert!(!f.file_exists(&key).await);
}

async fn revoking_changes_only_an_active_unexpired_share(pool: PgPool, backend: Backend) {
    let f = Fixture::new(pool, backend);
    let (active, _) = f.share(60).await;
    let (consumed, _) = f.share(60).await;
    assert!(mark_consumed(&f.pool, consumed).await.unwrap());
    let mut tx = f.pool.begin().await.unwrap();
    assert!(app::shares::db::revoke(&mut tx, active).await.unwrap());
    assert!(!app::shares::db::revoke(&mut tx, active).await.unwrap(), "already revoked");
    tx.commit().await.unwrap();
    assert!(!mark_consumed(&f.pool, active).await.unwrap(), "a revoked link cannot be used");
    // Revoked = unconsumed and expired: the GC purges it at once; the downloaded one waits for
    // its delivery grace.
    assert_eq!(f.gc(10).await.purged, 1);
    assert_eq!(f.status(active).await, "purged");
    assert_eq!(f.status(consumed).await, "consumed");
    // A downloaded share in its grace can be revoked too (its receipt's resumes end): it stays
    // downloaded, and the GC deletes its file without waiting for the grace.
    let mut tx = f.pool.begin().await.unwrap();
    assert!(app::shares::db::revoke(&mut tx, consumed).await.unwrap());
    tx.commit().await.unwrap();
    assert_eq!(f.status(consumed).await, "consumed");
    assert_eq!(f.gc(10).await.purged, 1);
    assert_eq!(f.status(consumed).await, "purged");
    let mut tx = f.pool.begin().await.unwrap();
    assert!(!app::shares::db::revoke(&mut tx, consumed).await.unwrap(), "a purged share cannot be revoked");
    tx.commit().await.unwrap();
}

async fn a_file_that_cannot_be_deleted_three_times_raises_an_alert_resolved_once_it_is_purged(pool: PgPool, backend: Backend) {
    let f = Fixture::new(pool, backend);
    let (id, key) = f.share(60).await;
    f.exec(EXPIRE, id).await;
    f.faults.fail_key(Op::Delete, &key);
    let open = || async {
        sqlx::query_scalar::<_, i64>("select count(*) from alerts where kind = 'share.delete_failing' and subject = $1 and resolved_at is null")
            .bind(id.to_string())
            .fetch_one(&f.pool)
            .await
            .unwrap()
    };
    for attempt in 1..=3 {
        f.exec(RETRY_DUE, id).await;
        assert_eq!(f.gc(10).await.failed, 1);
        assert_eq!(open().await, if attempt < 3 { 0 } else { 1 }, "attempt {attempt}");
    }
    f.faults.heal();
    f.exec(RETRY_DUE, id).await;
    assert_eq!(f.gc(10).await.purged, 1);
    assert_eq!(open().await, 0, "resolved when the share was purged");
}

on_both_backends!(
    first_download_is_claimed_and_second_is_refused,
    an_expired_share_cannot_be_claimed,
    gc_purges_a_consumed_share_after_the_grace,
    gc_purges_an_expired_share_that_was_never_downloaded,
    gc_leaves_an_active_unexpired_share_untouched,
    a_consumed_share_is_protected_during_the_delivery_grace,
    a_share_consumed_just_before_expiry_is_not_purged_by_the_expiry_branch_during_grace,
    gc_heals_itself_when_a_delete_fails,
    a_failing_row_does_not_block_the_rows_behind_it,
    a_failed_purge_is_retried_once_the_backoff_has_passed,
    gc_advances_when_the_file_was_already_absent,
    an_active_share_cannot_be_purged_directly,
    a_purged_share_only_moves_forward,
    a_request_time_gc_run_is_bounded,
    crash_heal_a_downloaded_share_whose_file_was_deleted_but_not_marked_is_purged_next_time,
    revoking_changes_only_an_active_unexpired_share,
    a_file_that_cannot_be_deleted_three_times_raises_an_alert_resolved_once_it_is_purged,
);
