//! Issue 53: the audit trail against the side door. Someone with write access to the database
//! (and, where said, the store) tries to silence verification: superseded digests set by SQL, a
//! month deleted with its chain record, a made-up "archived and dropped" ledger row, an event
//! with a transaction id from nowhere, every digest deleted, the public key swapped. Each is
//! reported, naming the month and, where there is one, the event. And the signing key: never
//! re-made in silence, never readable by others, retired only by `rotate-key`.

use std::time::Duration;

use app::audit::chain::{digest, keys, verify};
use app::audit::AuditKind;
use app::kernel::audit::{record, Actor};
use app::storage::BlobStore as _;
use sqlx::PgPool;

use crate::helpers::*;
use crate::trail::seal_now;

async fn events(pool: &PgPool, n: usize) -> Vec<i64> {
    let mut ids = Vec::new();
    for i in 0..n {
        let mut tx = pool.begin().await.unwrap();
        record(&mut tx, &Actor::system(), AuditKind::ShareCreate, Some(("share", &format!("s{i}"))), None).await.unwrap();
        ids.push(sqlx::query_scalar::<_, i64>("select max(id) from audit_events").fetch_one(&mut *tx).await.unwrap());
        tx.commit().await.unwrap();
    }
    ids
}

async fn check(app: &TestApp) -> verify::Report {
    verify::in_database(&app.state.pool, &*app.state.blobs, false).await.unwrap()
}

/// `n` sealed events and a digest that covers them; the trail verifies.
async fn trail(app: &TestApp, n: usize) -> Vec<i64> {
    let ids = events(&app.state.pool, n).await;
    seal_now(&app.state.pool).await;
    digest::write(&app.state, digest::Reason::Asked, true).await.unwrap().expect("a digest");
    let report = check(app).await;
    assert!(report.ok(), "{report:?}");
    ids
}

fn month_now() -> String {
    let now = time::OffsetDateTime::now_utc();
    format!("{:04}-{:02}", now.year(), now.month() as u8)
}

fn reported<'a>(report: &'a verify::Report, what: &str) -> &'a verify::Problem {
    report.problems.iter().find(|p| p.what.contains(what)).unwrap_or_else(|| panic!("not reported ({what}): {report:#?}"))
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn digests_superseded_by_sql_supersede_nothing(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let ids = trail(&app, 6).await;
    // The newest events removed, and the digests that record them marked superseded by hand.
    sqlx::query("delete from audit_events where id >= $1").bind(ids[3]).execute(&pool).await.unwrap();
    sqlx::query("update audit_chains set seq = 3, digested_seq = 3, head = (select hash from audit_events where id = $1)")
        .bind(ids[2])
        .execute(&pool)
        .await
        .unwrap();
    sqlx::query("update audit_digests set superseded_at = now()").execute(&pool).await.unwrap();
    let report = check(&app).await;
    let p = reported(&report, "marked superseded in the database");
    assert_eq!(p.digest, Some(1), "{p:?}");
    // The truncation is still found: the digest's record of the month is compared.
    let t = reported(&report, "the newest were removed");
    assert_eq!(t.month.as_deref(), Some(month_now().as_str()), "{t:?}");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_month_deleted_with_its_chain_record_is_named_by_the_digest_that_recorded_it(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    trail(&app, 5).await;
    sqlx::query("delete from audit_events").execute(&pool).await.unwrap();
    sqlx::query("delete from audit_chains").execute(&pool).await.unwrap();
    let report = check(&app).await;
    let p = reported(&report, "neither the database nor the archive holds them");
    assert_eq!((p.month.as_deref(), p.digest), (Some(month_now().as_str()), Some(1)), "{p:?}");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_chain_record_deleted_then_an_event_edited_is_named_at_the_event(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let ids = trail(&app, 6).await;
    sqlx::query("delete from audit_chains").execute(&pool).await.unwrap();
    sqlx::query("update audit_events set detail = 'nothing happened' where id = $1").bind(ids[2]).execute(&pool).await.unwrap();
    let report = check(&app).await;
    let p = reported(&report, "does not match its hash");
    assert_eq!((p.event, p.month.as_deref()), (Some(ids[2]), Some(month_now().as_str())), "{p:?}");
    reported(&report, "no chain record");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_made_up_archived_and_dropped_ledger_row_hides_no_month(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let ids = trail(&app, 6).await;
    let period = time::OffsetDateTime::now_utc().date().replace_day(1).unwrap();
    sqlx::query(
        "insert into audit_partition_archives (period, object_key, table_name, status, rows_written, table_rows, bytes, crc32c, verified_at, dropped_at)
         values ($1, 'audit-archive/x.csv.gz', 'audit_events_x', 'verified', 6, 6, 100, 1, now(), now())",
    )
    .bind(period)
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query("update audit_events set admin_name = 'Mallory' where id = $1").bind(ids[4]).execute(&pool).await.unwrap();
    let report = check(&app).await;
    let p = reported(&report, "does not match its hash");
    assert_eq!(p.event, Some(ids[4]), "{p:?}");
    reported(&report, "no signed digest records its archived object");
    reported(&report, "its events are still in the database");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn an_event_with_a_transaction_id_from_nowhere_is_named(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    trail(&app, 3).await;
    let forged: i64 = sqlx::query_scalar(
        "insert into audit_events (kind, detail, tx, occurred_at) values ('share.create', 'forged', 1000000000000, now() - interval '3 days') returning id",
    )
    .fetch_one(&pool)
    .await
    .unwrap();
    seal_now_or_give_up(&pool).await;
    let place: Option<i64> = sqlx::query_scalar("select seq from audit_events where id = $1").bind(forged).fetch_one(&pool).await.unwrap();
    assert_eq!(place, None, "it can never be sealed");
    let report = check(&app).await;
    let p = reported(&report, "which no transaction has had yet");
    assert_eq!(p.event, Some(forged), "{p:?}");
    assert_eq!(report.pending, 0, "not counted as waiting: {report:?}");
}

/// Seals what can be sealed (one pass; the forged event would make `seal_now` wait for ever).
async fn seal_now_or_give_up(pool: &PgPool) {
    app::audit::chain::seal::seal_all(pool, 1000, Duration::from_secs(3600), std::time::Instant::now() + Duration::from_secs(5)).await.unwrap();
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn every_digest_deleted_is_a_failure_not_zero_digests_checked(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    trail(&app, 4).await;
    // A day on: the key was registered and the events sealed over a day ago.
    sqlx::query("update audit_signing_keys set created_at = created_at - interval '2 days'").execute(&pool).await.unwrap();
    sqlx::query("update audit_chains set sealed_at = sealed_at - interval '2 days'").execute(&pool).await.unwrap();
    sqlx::query("delete from audit_digests").execute(&pool).await.unwrap();
    app.remove_stored("audit-digests/000000000001.json").await;
    let report = check(&app).await;
    assert_eq!(report.digests, 0);
    let p = reported(&report, "no digest is in the store, but digests were written");
    assert!(p.what.contains("signing key registered over a day ago") && p.what.contains("sealed over a day ago"), "{p:?}");
    // Offline: the store's published key, over a day old, says digests were due.
    let key_file = std::fs::read_dir(app.storage.path().join("audit-digests"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with("key-"));
    let key_file = key_file.expect("the public key is published");
    std::fs::File::options().write(true).open(&key_file).unwrap().set_modified(std::time::SystemTime::now() - Duration::from_secs(3 * 86_400)).unwrap();
    let offline = verify::offline(&*app.raw, None).await.unwrap();
    reported(&offline, "no digest is in the store, but digests were written");
    assert!(!crate::trail::python_verdict(&app).0, "the independent verifier agrees");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_public_key_swapped_for_an_attackers_verifies_nothing(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    trail(&app, 3).await;
    let mallory = ed25519_dalek::SigningKey::from_bytes(&[7u8; 32]).verifying_key();
    // The same id, another key: it is not the key the id names, so it is trusted for nothing.
    sqlx::query("update audit_signing_keys set public_key = $1").bind(mallory.as_bytes().to_vec()).execute(&pool).await.unwrap();
    let p = check(&app).await.problems.first().cloned().expect("reported");
    assert_eq!(p.digest, Some(1), "{p:?}");
    assert!(p.what.contains("not among the trusted public keys"), "{p:?}");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_digest_overwritten_at_the_store_is_refused_by_the_store(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    trail(&app, 2).await;
    let key = app::storage::digest_key(1);
    let before = app.read_stored(&key).await.unwrap();
    let again = app.state.blobs.put_new(&key, bytes::Bytes::from_static(b"{}")).await;
    assert!(matches!(again, Err(app::storage::BlobError::Exists)), "{again:?}");
    assert_eq!(app.read_stored(&key).await.unwrap(), before);
    // A second writer that got there first (its digest 2 in the store, not in this database):
    // adopted after its checks, never replaced.
    events(&pool, 1).await;
    seal_now(&pool).await;
    assert_eq!(digest::write(&app.state, digest::Reason::Asked, true).await.unwrap(), Some(2));
    let two = app.read_stored(&app::storage::digest_key(2)).await.unwrap();
    sqlx::query("delete from audit_digests where number = 2").execute(&pool).await.unwrap();
    assert_eq!(digest::write(&app.state, digest::Reason::Asked, true).await.unwrap(), Some(2));
    assert_eq!(app.read_stored(&app::storage::digest_key(2)).await.unwrap(), two);
    assert!(check(&app).await.ok());
}

/// A digest in the store from another timeline (the database restored from an older backup,
/// `ebb doctor --after-restore` not run) is not adopted as this database's.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_digest_from_another_timeline_is_not_adopted(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let ids = trail(&app, 3).await;
    events(&pool, 3).await;
    seal_now(&pool).await;
    digest::write(&app.state, digest::Reason::Asked, true).await.unwrap();
    // "Restore": digest 2 and the events it covers are gone from the database; others take
    // their places.
    sqlx::query("delete from audit_digests where number = 2").execute(&pool).await.unwrap();
    sqlx::query("delete from audit_events where id > $1").bind(ids[2]).execute(&pool).await.unwrap();
    let head: Vec<u8> = sqlx::query_scalar("select hash from audit_events where id = $1").bind(ids[2]).fetch_one(&pool).await.unwrap();
    sqlx::query("update audit_chains set seq = 3, head = $1, digested_seq = 3").bind(head).execute(&pool).await.unwrap();
    sqlx::query("update audit_seal_cursor set tx = (select tx from audit_events where id = $1), id = $1").bind(ids[2]).execute(&pool).await.unwrap();
    events(&pool, 3).await;
    seal_now(&pool).await;
    let err = digest::write(&app.state, digest::Reason::Asked, true).await.unwrap_err();
    assert!(err.contains("another timeline") && err.contains("--after-restore"), "{err}");
    let rows: i64 = sqlx::query_scalar("select count(*) from audit_digests").fetch_one(&pool).await.unwrap();
    assert_eq!(rows, 1, "nothing adopted");
}

/// A restore statement made up, or signed by a key nobody trusts, supersedes nothing: every
/// verifier reports it.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_restore_statement_not_signed_by_a_trusted_key_is_reported(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    trail(&app, 2).await;
    let mallory = keys::Signer { key: ed25519_dalek::SigningKey::from_bytes(&[9u8; 32]), key_id: String::new() };
    let mallory = keys::Signer { key_id: keys::key_id(&mallory.key.verifying_key()), ..mallory };
    let st = app::audit::chain::restore::Statement {
        format: app::audit::chain::restore::FORMAT.into(),
        created_at: "2026-12-01T00:00:00Z".into(),
        key_id: mallory.key_id.clone(),
        first: 1,
        last: 1,
        previous: None,
        chains: vec![],
        reason: "made up".into(),
    };
    let bytes = digest::seal_envelope(&mallory, serde_json::to_string(&st).unwrap());
    app.raw.put(&app::storage::restore_statement_key(1), bytes.into()).await.unwrap();
    reported(&check(&app).await, "cannot be trusted");
    reported(&verify::offline(&*app.raw, None).await.unwrap(), "cannot be trusted");
    assert!(!crate::trail::python_verdict(&app).0, "the independent verifier agrees");
}

fn key_args(path: &std::path::Path) -> Vec<String> {
    vec!["--audit-signing-key-file".into(), path.display().to_string()]
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_signing_key_file_is_never_remade_in_silence_nor_readable_by_others(pool: PgPool) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit-signing-key");
    let args = key_args(&path);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let app = spawn_app_with(pool.clone(), &args, |_| {}).await;
    // First start: made, owner-only.
    trail(&app, 2).await;
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    // Readable by the group: refused, by name, with the fix.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let err = keys::signer(&app.state).await.err().expect("refused");
    assert!(err.contains("chmod 600") && err.contains(&path.display().to_string()), "{err}");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    // Missing once digests exist: refused, and no new file appears.
    let saved = std::fs::read(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let err = keys::signer(&app.state).await.err().expect("refused");
    assert!(err.contains("is missing, but digests were signed before"), "{err}");
    assert!(!path.exists(), "no key was made in its place");
    let keys_known: i64 = sqlx::query_scalar("select count(*) from audit_signing_keys").fetch_one(&pool).await.unwrap();
    assert_eq!(keys_known, 1);
    std::fs::write(&path, &saved).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(keys::signer(&app.state).await.is_ok());
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn instances_with_their_own_keys_stay_valid_and_a_rotated_out_key_signs_nothing(pool: PgPool) {
    let (da, db) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (pa, pb) = (da.path().join("key"), db.path().join("key"));
    let (aa, ab) = (key_args(&pa), key_args(&pb));
    let a = spawn_app_with(pool.clone(), &aa.iter().map(String::as_str).collect::<Vec<_>>(), |_| {}).await;
    let b = spawn_second_instance(pool.clone(), &a, &ab.iter().map(String::as_str).collect::<Vec<_>>()).await;
    let ka = keys::signer(&a.state).await.unwrap().key_id;
    // B's key is not made in silence once A's signs: its operator gives it one.
    assert!(keys::signer(&b.state).await.err().is_some_and(|e| e.contains("is missing")));
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&pb).unwrap();
        std::io::Write::write_all(&mut f, hex::encode([5u8; 32]).as_bytes()).unwrap();
    }
    let kb = keys::signer(&b.state).await.unwrap().key_id;
    assert_ne!(ka, kb);
    // Taking turns: nobody retires anybody.
    for _ in 0..2 {
        keys::signer(&a.state).await.unwrap();
        keys::signer(&b.state).await.unwrap();
    }
    let live: i64 = sqlx::query_scalar("select count(*) from audit_signing_keys where retired_at is null").fetch_one(&pool).await.unwrap();
    assert_eq!(live, 2);
    trail(&a, 2).await;
    events(&pool, 1).await;
    seal_now(&pool).await;
    digest::write(&b.state, digest::Reason::Asked, true).await.unwrap();
    assert!(check(&a).await.ok());
    // `rotate-key` on A: every other key retired, recorded; B refuses to sign with its old key.
    let new = keys::rotate(&a.state).await.unwrap();
    let err = digest::write(&b.state, digest::Reason::Asked, true).await.unwrap_err();
    assert!(err.contains("was retired"), "{err}");
    let (live, rotations): (i64, i64) = sqlx::query_as(
        "select (select count(*) from audit_signing_keys where retired_at is null), (select count(*) from audit_events where kind = 'audit.key_rotate' and subject_id = $1)",
    )
    .bind(&new)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!((live, rotations), (1, 1));
    // B's refusals did not bring its key back.
    let _ = keys::signer(&b.state).await;
    let live: i64 = sqlx::query_scalar("select count(*) from audit_signing_keys where retired_at is null").fetch_one(&pool).await.unwrap();
    assert_eq!(live, 1);
    assert!(check(&a).await.ok());
}

/// A transaction that ran a while before it recorded its event is dated when it records it:
/// sealing does not take it for an insertion into the past.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_long_transaction_is_dated_when_it_records_and_seals_in_place(pool: PgPool) {
    let mut long = pool.begin().await.unwrap();
    sqlx::query("select pg_sleep(1.5)").execute(&mut *long).await.unwrap();
    events(&pool, 1).await;
    record(&mut long, &Actor::system(), AuditKind::ShareCreate, Some(("share", "long")), None).await.unwrap();
    long.commit().await.unwrap();
    let late = Duration::from_millis(500);
    let done = app::audit::chain::seal::seal_all(&pool, 1000, late, std::time::Instant::now() + Duration::from_secs(10)).await.unwrap();
    assert_eq!((done.sealed, done.refused), (2, 0), "{done:?}");
}

/// The transparency log the database holds is checked against its newest signed checkpoint: an
/// entry rewritten, or entries deleted, is reported (the checkpoint's signature cannot be
/// forged without the key).
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn the_log_in_the_database_is_checked_against_its_signed_checkpoint(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    trail(&app, 5).await;
    app::audit::chain::tlog::checkpoint(&app.state).await.unwrap();
    assert!(check(&app).await.ok());
    let before: String = sqlx::query_scalar("select entry from audit_tlog_entries where index = 2").fetch_one(&pool).await.unwrap();
    sqlx::query("update audit_tlog_entries set entry = replace(entry, ' ', '  ') where index = 2").execute(&pool).await.unwrap();
    let p = reported(&check(&app).await, "they were rewritten").clone();
    assert_eq!(p.source, "log", "{p:?}");
    sqlx::query("update audit_tlog_entries set entry = $1 where index = 2").bind(&before).execute(&pool).await.unwrap();
    assert!(check(&app).await.ok());
    sqlx::query("delete from audit_tlog_entries where index = 4").execute(&pool).await.unwrap();
    reported(&check(&app).await, "entries were deleted");
}
