//! `ebb doctor` and `ebb migrate --dry-run` as the operator runs them (the real binary), and the
//! backup → changes → restore → `ebb doctor --after-restore` cycle: nothing deleted since the
//! backup comes back, nothing live is lost.

use std::process::Command;

use sqlx::PgPool;

use crate::archive::crash::{database_url, ebb};
use crate::helpers::{spawn_app, TestApp};
use crate::shares::{admin_cookie, share_via_upload};

/// `(success, stdout)` of `ebb ARGS` on `db` and `app`'s storage folder.
fn doctor_on(db_pool: &PgPool, app: &TestApp, args: &[&str], env: &[(&str, &str)]) -> (bool, String) {
    let out = ebb(db_pool, app.storage.path(), args, env).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

fn line<'a>(text: &'a str, check: &str) -> &'a str {
    // `STATUS NAME(18) detail`: the name column, exactly.
    text.lines().find(|l| l.get(6..24).map(str::trim) == Some(check)).unwrap_or_else(|| panic!("no line for {check:?} in:\n{text}"))
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_healthy_installation_passes_and_each_problem_is_named(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let (ok, text) = doctor_on(&pool, &app, &["doctor"], &[]);
    assert!(ok, "{text}");
    for check in ["configuration", "database", "migrations", "clock", "storage", "storage marker", "S3 lifecycle", "SMTP", "alerts", "retention"] {
        assert!(line(&text, check).starts_with("ok "), "{check}: {text}");
    }
    // http on localhost works on this machine only: a warning, not a failure.
    assert!(line(&text, "public URL").starts_with("WARN"), "{text}");
    // --json writes only JSON to stdout, even at debug level (logs go to stderr): `| jq` works.
    let out = ebb(&pool, app.storage.path(), &["doctor", "--json"], &[("RUST_LOG", "debug")]).output().unwrap();
    let parsed: Result<serde_json::Value, _> = serde_json::from_slice(&out.stdout);
    assert!(parsed.is_ok(), "stdout is not JSON: {}", String::from_utf8_lossy(&out.stdout));

    // The audit signing key: kept in the database (as these tests do), a warning; in a file of
    // its own, ok; readable by others, a failure naming the fix; inside the storage, a warning.
    assert!(line(&text, "audit signing key").starts_with("WARN") && text.contains("whoever can write the database"), "{text}");
    let write_key = |path: &std::path::Path, mode: u32| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(path, format!("{}\n", "3c".repeat(32))).unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    let keys_dir = tempfile::tempdir().unwrap();
    let key_file = keys_dir.path().join("audit-signing-key");
    write_key(&key_file, 0o600);
    let (ok, text) = doctor_on(&pool, &app, &["doctor"], &[("EBB_AUDIT_SIGNING_KEY_FILE", key_file.to_str().unwrap())]);
    assert!(ok && line(&text, "audit signing key").starts_with("ok "), "{text}");
    write_key(&key_file, 0o644);
    let (ok, text) = doctor_on(&pool, &app, &["doctor"], &[("EBB_AUDIT_SIGNING_KEY_FILE", key_file.to_str().unwrap())]);
    assert!(!ok && line(&text, "audit signing key").starts_with("FAIL") && text.contains("chmod 600"), "{text}");
    let inside = app.storage.path().join("audit-signing-key");
    write_key(&inside, 0o600);
    let (ok, text) = doctor_on(&pool, &app, &["doctor"], &[("EBB_AUDIT_SIGNING_KEY_FILE", inside.to_str().unwrap())]);
    assert!(ok && line(&text, "audit signing key").starts_with("WARN") && text.contains("inside the storage folder"), "{text}");
    std::fs::remove_file(&inside).unwrap();

    // The secrets in `settings`: readable, or a failure naming the row.
    assert!(line(&text, "secrets").starts_with("ok "), "{text}");
    let kept: String = sqlx::query_scalar("select value from settings where key = 'blob_url_secret'").fetch_one(&pool).await.unwrap();
    sqlx::query("update settings set value = 'not hex' where key = 'blob_url_secret'").execute(&pool).await.unwrap();
    let (ok, text) = doctor_on(&pool, &app, &["doctor"], &[]);
    assert!(!ok && line(&text, "secrets").starts_with("FAIL") && text.contains("'blob_url_secret'"), "{text}");
    sqlx::query("update settings set value = $1 where key = 'blob_url_secret'").bind(&kept).execute(&pool).await.unwrap();
    // Free space on the store's disk: less than one largest share fails.
    assert!(line(&text, "free space").starts_with("ok "), "{text}");
    let (ok, text) = doctor_on(&pool, &app, &["doctor"], &[("EBB_SHARE_MAX_BYTES", "1099511627776")]);
    assert!(!ok && line(&text, "free space").starts_with("FAIL") && text.contains("uploads will fail"), "{text}");

    // The public URL people use must be https with a host name.
    let (ok, text) = doctor_on(&pool, &app, &["doctor"], &[("EBB_PUBLIC_URL", "http://ebb.example.org")]);
    assert!(!ok && line(&text, "public URL").starts_with("FAIL") && text.contains("not https"), "{text}");
    let (ok, text) = doctor_on(&pool, &app, &["doctor"], &[("EBB_PUBLIC_URL", "https://192.0.2.7")]);
    assert!(!ok && text.contains("not an IP address"), "refused when the settings are read: {text}");

    // An open alert is a problem.
    app::alerts::raise(&pool, app::common::alerts::AlertKind::StorageMarkerMissing, "", &app::common::alerts::AlertMessage::StorageMarker).await.unwrap();
    let (ok, text) = doctor_on(&pool, &app, &["doctor"], &[]);
    assert!(!ok && line(&text, "alerts").starts_with("FAIL"), "{text}");
    sqlx::query("update alerts set resolved_at = now()").execute(&pool).await.unwrap();

    // The wrong storage folder (a share was stored in the real one): the marker says so.
    let cookie = admin_cookie(&pool).await;
    share_via_upload(&app, &cookie, "a.txt", b"hello".to_vec()).await;
    let other = tempfile::tempdir().unwrap();
    let out = ebb(&pool, other.path(), &["doctor"], &[]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(!out.status.success() && line(&text, "storage marker").starts_with("FAIL") && text.contains("marker is missing"), "{text}");
    // Nothing was adopted: the folder holds no marker afterwards.
    assert!(!other.path().join(app::storage::MARKER_KEY).exists());

    // No database: said, and the rest that needs it skipped; the storage is still checked.
    let out = ebb(&pool, app.storage.path(), &["doctor"], &[("DATABASE_URL", "postgres://postgres@127.0.0.1:1/nothing")]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(!out.status.success(), "{text}");
    assert!(line(&text, "database").starts_with("FAIL") && line(&text, "migrations").starts_with("skip") && line(&text, "storage").starts_with("ok"), "{text}");
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn migrate_dry_run_lists_pending_migrations_and_changes_nothing(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let known = server::MIGRATOR.iter().count();
    let (ok, text) = doctor_on(&pool, &app, &["migrate", "--dry-run"], &[]);
    assert!(ok, "{text}");
    assert!(text.starts_with(&format!("{known} migrations applied; 0 pending")), "{text}");

    // An empty database: everything pending, listed by version, and still nothing applied.
    // (Test databases' names are already as long as PostgreSQL allows: a short name of its own.)
    let empty = format!("ebb_empty_{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    sqlx::query(&format!("create database {empty}")).execute(&pool).await.unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ebb")).env_clear().env("DATABASE_URL", database_url(&empty)).args(["migrate", "--dry-run"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{text}");
    assert!(text.starts_with(&format!("0 migrations applied; {known} pending")), "{text}");
    assert!(text.contains("pending  20261130000001 inquiries and settings"), "{text}");
    let empty_pool = PgPool::connect(&database_url(&empty)).await.unwrap();
    let tables: i64 = sqlx::query_scalar("select count(*) from pg_tables where schemaname = 'public'").fetch_one(&empty_pool).await.unwrap();
    assert_eq!(tables, 0, "a dry run creates nothing");
    // The doctor says migrations are pending and skips what needs them.
    let out = Command::new(env!("CARGO_BIN_EXE_ebb"))
        .env_clear()
        .env("DATABASE_URL", database_url(&empty))
        .env("EBB_STORAGE_DIR", app.storage.path())
        .arg("doctor")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(line(&text, "migrations").starts_with("WARN") && line(&text, "alerts").starts_with("skip"), "{text}");
    empty_pool.close().await;
    sqlx::query(&format!("drop database {empty} with (force)")).execute(&pool).await.unwrap();

    // A database a newer Ebb migrated: refused by name.
    sqlx::query(
        "insert into _sqlx_migrations (version, description, success, checksum, execution_time) values (29991231000000, 'from the future', true, '\\x00', 0)",
    )
    .execute(&pool)
    .await
    .unwrap();
    let (ok, text) = doctor_on(&pool, &app, &["migrate", "--dry-run"], &[]);
    assert!(!ok && text.contains("UNKNOWN  29991231000000"), "{text}");
    let (ok, text) = doctor_on(&pool, &app, &["doctor"], &[]);
    assert!(!ok && line(&text, "migrations").contains("newer Ebb"), "{text}");
}

const ERASED: &str = "leaving@example.org";
const KEPT: &str = "staying@example.org";

async fn count(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.unwrap()
}

async fn insert_inquiry(pool: &PgPool, email: &str) {
    sqlx::query("insert into inquiries (name, email, message) values ('A Person', $1, 'hello')").bind(email).execute(pool).await.unwrap();
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[sqlx::test(migrator = "server::MIGRATOR")]
async fn after_a_restore_nothing_deleted_comes_back_and_nothing_live_is_lost(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let cookie = admin_cookie(&pool).await;
    let db = pool.connect_options().get_database().unwrap().to_owned();
    // Before the backup: two inquiries of a person who will be erased, one of someone who stays;
    // a share that stays and one that will be downloaded and purged.
    insert_inquiry(&pool, ERASED).await;
    insert_inquiry(&pool, ERASED).await;
    insert_inquiry(&pool, KEPT).await;
    share_via_upload(&app, &cookie, "stays.txt", b"staying file".to_vec()).await;
    let goes = share_via_upload(&app, &cookie, "goes.txt", b"going file".to_vec()).await;
    let (kept_key, gone_key): (String, String) = (
        sqlx::query_scalar("select blob_key from shares where file_name = 'stays.txt'").fetch_one(&pool).await.unwrap(),
        sqlx::query_scalar("select blob_key from shares where file_name = 'goes.txt'").fetch_one(&pool).await.unwrap(),
    );

    // The signing key exists from the first start (`ebb serve` makes it), so the backup has it.
    app::audit::chain::keys::signer(&app.state).await.unwrap();
    // The backup, as the README says: pg_dump's custom format.
    let backup = tempfile::tempdir().unwrap();
    let dump = backup.path().join("ebb.dump");
    run(Command::new("pg_dump").args(["--format=custom", "--file", dump.to_str().unwrap(), &database_url(&db)]));

    // After the backup: the share is downloaded and purged, the person is erased. The purge is
    // this test's own GC run: the one a download nudges after its response must not race it
    // (its journal entry and its count would then be another's).
    app.state.jobs().get(app::shares::gc::JOB).unwrap().wait(std::time::Duration::from_secs(3600));
    app.state.background.settle().await;
    let res = app.client.post(app.url(&goes)).send().await.unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.bytes().await.unwrap().as_ref(), b"going file");
    sqlx::query("update shares set consumed_at = now() - interval '1 day', last_download_at = now() - interval '1 day' where file_name = 'goes.txt'")
        .execute(&pool)
        .await
        .unwrap();
    let gc = app::shares::gc::collect(&pool, &*app.state.blobs, 10, app::shares::gc::GcRules::default()).await.unwrap();
    assert_eq!(gc.purged, 1);
    assert!(app.read_stored(&gone_key).await.is_none());
    server::requests::cli(&app.state, server::requests::CliAction::Erase { yes: true }, ERASED, &mut Vec::new()).await.unwrap();
    assert_eq!(count(&pool, &format!("select count(*) from inquiries where email = '{ERASED}'")).await, 0);
    // A signed digest covers the events since (as the audit job writes one every hour).
    let sealed =
        app::audit::chain::seal::seal_all(&pool, 1000, std::time::Duration::from_secs(300), std::time::Instant::now() + std::time::Duration::from_secs(60))
            .await
            .unwrap();
    assert!(sealed.sealed > 0);
    app::audit::chain::digest::write(&app.state, app::audit::chain::digest::Reason::Asked, true).await.unwrap();
    // The journal holds ids, never the address.
    let (entries, _) = app::storage::journal::read_all(&*app.raw).await.unwrap();
    assert_eq!(entries.len(), 2, "{entries:?}");
    for e in &entries {
        assert!(!serde_json::to_string(e).unwrap().contains("leaving"), "{e:?}");
    }

    // Disaster: the database is restored from the backup (into a new database, as pg_restore
    // does on a new server); the storage is the live one.
    let restored_name = format!("ebb_restored_{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    sqlx::query(&format!("create database {restored_name}")).execute(&pool).await.unwrap();
    run(Command::new("pg_restore").args(["--no-owner", "--dbname", &database_url(&restored_name), dump.to_str().unwrap()]));
    let restored = PgPool::connect(&database_url(&restored_name)).await.unwrap();
    // Without the doctor, the deleted would be back.
    assert_eq!(count(&restored, &format!("select count(*) from inquiries where email = '{ERASED}'")).await, 2);
    assert_eq!(count(&restored, "select count(*) from shares where file_name = 'goes.txt' and status = 'active'").await, 1);

    // The store holds signed digests written after the backup (the audit job wrote them).
    let db_digests = count(&restored, "select count(*) from audit_digests").await;
    let (ok, text) = doctor_on(&restored, &app, &["doctor", "--after-restore"], &[]);
    assert!(ok, "{text}");
    assert!(line(&text, "deletions redone").contains("2 erased or ended row(s) and 1 purged share(s) were back"), "{text}");
    // Those digests are kept as superseded, the restore is an audit event, and the trail
    // verifies (with every archived month) and grows on.
    assert!(count(&restored, "select count(*) from audit_digests where superseded_at is not null").await >= 1, "{text}");
    assert!(line(&text, "audit digests").starts_with("WARN") && line(&text, "audit digests").contains("superseded"), "{text}");
    assert_eq!(count(&restored, "select count(*) from audit_events where kind = 'audit.restore'").await, 1);
    assert!(count(&restored, "select count(*) from audit_digests").await > db_digests, "the digests written since the backup are known");
    let (ok, out) = doctor_on(&restored, &app, &["audit", "verify", "--archive"], &[]);
    assert!(ok, "{out}");
    // Superseded by a signed restore statement, which every verifier reads and names.
    assert!(out.contains("WARN") && out.contains("superseded"), "{out}");
    assert!(app.read_stored(&format!("audit-digests/restore-{:012}.json", db_digests + 1)).await.is_some(), "the signed restore statement");
    let (ok, out) = doctor_on(&restored, &app, &["audit", "verify", "--offline"], &[]);
    assert!(ok && out.contains("WARN") && out.contains("superseded"), "{out}");
    assert!(crate::trail::python_verdict(&app).0, "the independent verifier reads the statement");
    for check in ["jobs re-run", "live shares", "archived months"] {
        assert!(line(&text, check).starts_with("ok "), "{check}: {text}");
    }
    // The erasure's request was recorded after the backup: recorded again, closed, with what it
    // erased and no address (the journal never had it).
    let (status, email, erased): (String, Option<String>, serde_json::Value) =
        sqlx::query_as("select status, email, erased from data_requests where kind = 'erasure'").fetch_one(&restored).await.unwrap();
    assert_eq!((status.as_str(), email, erased), ("done", None, serde_json::json!({"inquiries": 2})));
    assert_eq!(count(&restored, "select count(*) from audit_events where kind = 'request.record' and detail like '%recorded again after a restore%'").await, 1);
    // Nothing deleted came back; nothing live was lost.
    assert_eq!(count(&restored, &format!("select count(*) from inquiries where email = '{ERASED}'")).await, 0);
    assert_eq!(count(&restored, &format!("select count(*) from inquiries where email = '{KEPT}'")).await, 1);
    assert_eq!(count(&restored, "select count(*) from shares where file_name = 'goes.txt'").await, 0, "its name is forgotten again");
    assert_eq!(count(&restored, "select count(*) from shares where file_name = '-' and note is null and status = 'purged'").await, 1);
    assert_eq!(count(&restored, "select count(*) from shares where file_name = 'stays.txt' and status = 'active'").await, 1);
    assert_eq!(app.read_stored(&kept_key).await.as_deref(), Some(&b"staying file"[..]));

    // Again: idempotent, nothing more to redo.
    let (ok, text) = doctor_on(&restored, &app, &["doctor", "--after-restore"], &[]);
    assert!(ok && line(&text, "deletions redone").contains("0 erased or ended row(s) and 0 purged share(s)"), "{text}");
    assert!(line(&text, "audit digests").starts_with("ok "), "{text}");

    // A live share whose file the storage lost is named, and the doctor fails.
    app.remove_stored(&kept_key).await;
    let (ok, text) = doctor_on(&restored, &app, &["doctor", "--after-restore"], &[]);
    assert!(!ok && line(&text, "live shares").starts_with("FAIL") && line(&text, "live shares").contains("1 of 1"), "{text}");

    restored.close().await;
    sqlx::query(&format!("drop database {restored_name} with (force)")).execute(&pool).await.unwrap();
}

/// Starts `ebb serve` on `db` with `app`'s store: `Ok(log)` once it listened (then stopped),
/// `Err(log)` when it exited first.
fn serve_until_ready(db: &PgPool, app: &TestApp) -> Result<String, String> {
    let port = crate::helpers::child_port();
    let mut child = ebb(db, app.storage.path(), &["serve"], &[("EBB_BIND", &format!("127.0.0.1:{port}")), ("RUST_LOG", "warn"), ("EBB_METRICS_BIND", "")])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..300 {
        if child.try_wait().unwrap().is_some() {
            let out = child.wait_with_output().unwrap();
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    Ok(String::from_utf8_lossy(&out.stderr).into_owned())
}

/// A copy of `db` as `pg_dump` makes it, restored by `pg_restore` into a new database.
struct Backup {
    dump: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

fn back_up(pool: &PgPool) -> Backup {
    let db = pool.connect_options().get_database().unwrap().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("ebb.dump");
    run(Command::new("pg_dump").args(["--format=custom", "--file", dump.to_str().unwrap(), &database_url(&db)]));
    Backup { dump, _dir: dir }
}

async fn restore(pool: &PgPool, backup: &Backup) -> (String, PgPool) {
    let name = format!("ebb_restored_{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    sqlx::query(&format!("create database {name}")).execute(pool).await.unwrap();
    run(Command::new("pg_restore").args(["--no-owner", "--dbname", &database_url(&name), backup.dump.to_str().unwrap()]));
    let restored = PgPool::connect(&database_url(&name)).await.unwrap();
    (name, restored)
}

/// `ebb serve` on a restored database whose operator skipped `ebb doctor --after-restore`: the
/// restore is detected (the store's deletion journal is numbered past the database) and serve
/// refuses, changing nothing, so the person erased, the share revoked, the session signed out and
/// the invite redeemed after the backup are never served; `ebb doctor` names it; after `--after-restore` serve starts
/// and they are gone again.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn serve_refuses_a_restored_database_until_the_doctor_has_redone_the_journal(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let cookie = admin_cookie(&pool).await;
    insert_inquiry(&pool, ERASED).await;
    insert_inquiry(&pool, KEPT).await;
    share_via_upload(&app, &cookie, "revoked.txt", b"revoked file".to_vec()).await;
    let share: i64 = sqlx::query_scalar("select id from shares").fetch_one(&pool).await.unwrap();
    let invite: uuid::Uuid =
        sqlx::query_scalar("insert into admin_invites (token_hash, expires_at) values (sha256('an invite link'), now() + interval '1 day') returning id")
            .fetch_one(&pool)
            .await
            .unwrap();
    let leaver = crate::helpers::create_admin(&pool, "Leaver").await;
    app::audit::chain::keys::signer(&app.state).await.unwrap();
    let backup = back_up(&pool);
    server::remove_admin(&app.state, "Leaver").await.unwrap();
    let passkey = serde_json::json!({});
    let newcomer = app::auth::db::NewAdmin { id: uuid::Uuid::new_v4(), name: "Newcomer", credential_id: &[9, 9, 9], passkey: &passkey, passkey_name: "Key" };
    assert!(app::auth::db::create_admin_from_invite(&pool, &*app.state.blobs, invite, newcomer).await.unwrap(), "the invite redeemed after the backup");
    server::requests::cli(&app.state, server::requests::CliAction::Erase { yes: true }, ERASED, &mut Vec::new()).await.unwrap();
    assert_eq!(crate::helpers::call_form(&app, "/api/admin/shares/revoke", Some(&cookie), &[("id", &share.to_string())]).await.status(), 200);
    assert_eq!(crate::helpers::call_form(&app, "/api/admin/signout", Some(&cookie), &[]).await.status(), 200);
    let (_, restored) = restore(&pool, &backup).await;
    assert_eq!(count(&restored, &format!("select count(*) from inquiries where email = '{ERASED}'")).await, 1, "the restore brought the person back");
    assert_eq!(count(&restored, "select count(*) from shares where revoked_at is null").await, 1, "and the link");
    assert_eq!(count(&restored, "select count(*) from tower_sessions.session").await, 1, "and the session");
    let open_invites = "select count(*) from admin_invites where redeemed_at is null and expires_at > now()";
    assert_eq!(count(&restored, open_invites).await, 1, "and the invite's link");
    let leaver_back = format!("select count(*) from passkeys where admin_id = '{leaver}'");
    assert_eq!(count(&restored, &leaver_back).await, 1, "and the removed admin's passkey");

    let log = serve_until_ready(&restored, &app).expect_err("serve refuses a restored database");
    assert!(log.contains("restored from a backup") && log.contains("ebb doctor --after-restore"), "the operator is told what to do: {log}");
    assert!(log.contains("the store's deletion journal goes up to entry") && log.contains("the database has seen 0"), "found by the journal's numbers: {log}");
    assert!(!log.contains(ERASED), "no address in the log: {log}");
    assert_eq!(count(&restored, &format!("select count(*) from inquiries where email = '{ERASED}'")).await, 1, "serve changed nothing");
    // The doctor sees what serve refuses.
    let (ok, text) = doctor_on(&restored, &app, &["doctor"], &[]);
    assert!(!ok && line(&text, "restored backup").starts_with("FAIL") && line(&text, "restored backup").contains("--after-restore"), "{text}");

    let (ok, text) = doctor_on(&restored, &app, &["doctor", "--after-restore"], &[]);
    assert!(ok, "{text}");
    let log = serve_until_ready(&restored, &app).expect("serve starts once the doctor has run");
    assert_eq!(count(&restored, &format!("select count(*) from inquiries where email = '{ERASED}'")).await, 0, "erased again: {log}");
    assert_eq!(count(&restored, &format!("select count(*) from inquiries where email = '{KEPT}'")).await, 1);
    assert_eq!(count(&restored, "select count(*) from shares where revoked_at is null").await, 0, "the link stays revoked");
    assert_eq!(count(&restored, "select count(*) from tower_sessions.session").await, 0, "the session stays ended");
    assert_eq!(count(&restored, open_invites).await, 0, "the invite's link works once, not again after the restore");
    assert_eq!(count(&restored, &leaver_back).await, 0, "the removed admin stays removed: no passkey of theirs signs in");
    assert_eq!(count(&restored, &format!("select count(*) from admins where id = '{leaver}'")).await, 0);
    // Each redo is in the audit log, as the first time was.
    for (kind, detail) in [
        ("request.erased", "erased again after a restore"),
        ("share.revoke", "ended again after a restore"),
        ("session.revoke", "ended again after a restore"),
        ("invite.redeem", "ended again after a restore"),
        ("admin.remove", "ended again after a restore"),
    ] {
        let n = count(&restored, &format!("select count(*) from audit_events where kind = '{kind}' and detail like '{detail}%'")).await;
        assert_eq!(n, 1, "{kind}");
    }
    // The erasure's request, recorded after the backup, is recorded again (closed, no address).
    assert_eq!(count(&restored, "select count(*) from data_requests where kind = 'erasure' and status = 'done' and email is null").await, 1);
    let (ok, text) = doctor_on(&restored, &app, &["doctor"], &[]);
    assert!(line(&text, "restored backup").starts_with("ok "), "{ok} {text}");
    serve_until_ready(&restored, &app).expect("and again");
    restored.close().await;
}

/// A deletion journaled and then cut short (its transaction never committed) is no restore:
/// serve starts and finishes it.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_deletion_cut_short_is_not_a_restore_and_the_next_start_finishes_it(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    let cookie = admin_cookie(&pool).await;
    share_via_upload(&app, &cookie, "cut.txt", b"cut short".to_vec()).await;
    let share: i64 = sqlx::query_scalar("select id from shares").fetch_one(&pool).await.unwrap();
    app::audit::chain::keys::signer(&app.state).await.unwrap();
    // The revocation's journal entry is written, then its transaction is lost (a crash).
    app::storage::journal::record(&pool, &*app.state.blobs, app::storage::journal::Deletion::ShareRevoke { ids: vec![share] }).await.unwrap();
    let log = serve_until_ready(&pool, &app).expect("a cut-short deletion is not a restore");
    assert_eq!(count(&pool, "select count(*) from shares where revoked_at is null").await, 0, "finished: {log}");
}

/// A signed digest written after the backup, with no deletion at all, is a restore: serve
/// refuses until the doctor has set it aside.
#[sqlx::test(migrator = "server::MIGRATOR")]
async fn a_digest_past_the_restored_database_is_refused_until_the_doctor_sets_it_aside(pool: PgPool) {
    let app = spawn_app(pool.clone()).await;
    app::audit::chain::keys::signer(&app.state).await.unwrap();
    let backup = back_up(&pool);
    // An event after the backup, sealed and signed: the restored chains lack it.
    let mut tx = pool.begin().await.unwrap();
    app::kernel::audit::record(&mut tx, &app::kernel::audit::Actor::system(), app::kernel::audit::AuditKind::AuditVerify, None, Some("after the backup"))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    app::audit::chain::seal::seal_all(&pool, 1000, std::time::Duration::from_secs(300), std::time::Instant::now() + std::time::Duration::from_secs(60))
        .await
        .unwrap();
    let number = app::audit::chain::digest::write(&app.state, app::audit::chain::digest::Reason::Asked, true).await.unwrap();
    assert!(number.is_some());
    let (_, restored) = restore(&pool, &backup).await;
    let log = serve_until_ready(&restored, &app).expect_err("a digest of another timeline is refused");
    assert!(log.contains("another timeline") && log.contains("ebb doctor --after-restore"), "{log}");
    let (ok, text) = doctor_on(&restored, &app, &["doctor"], &[]);
    assert!(!ok && line(&text, "restored backup").starts_with("FAIL") && line(&text, "restored backup").contains("another timeline"), "{text}");
    let (ok, text) = doctor_on(&restored, &app, &["doctor", "--after-restore"], &[]);
    assert!(ok, "{text}");
    serve_until_ready(&restored, &app).expect("serve starts once the doctor has set the digest aside");
    restored.close().await;
}
