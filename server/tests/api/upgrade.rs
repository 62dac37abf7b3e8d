//! An upgrade from the previous release: its binary (built from the commit in
//! `scripts/PREVIOUS_RELEASE` by `scripts/previous-release.sh`; `make test` passes its path in
//! `EBB_PREVIOUS_BIN`) creates and fills a database through its own HTTP API; this version then
//! migrates it, runs every job, and finds every item intact.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use sqlx::PgPool;

use crate::archive::crash::database_url;
use crate::helpers::{solve_challenge, tower_session_cookie as session_cookie_for};

fn previous_bin() -> String {
    std::env::var("EBB_PREVIOUS_BIN").unwrap_or_else(|_| {
        panic!("EBB_PREVIOUS_BIN must name the previous release's ebb: `bash scripts/previous-release.sh` builds it and prints its path (make test does this)")
    })
}

struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    crate::helpers::child_port()
}

/// `bin serve` on `db` and `storage`, waiting until it answers.
async fn serve(bin: &str, db: &str, storage: &std::path::Path) -> Server {
    let port = free_port();
    let base = format!("http://localhost:{port}");
    let child = Command::new(bin)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("DATABASE_URL", database_url(db))
        .env("EBB_STORAGE_DIR", storage)
        .env("LEPTOS_SITE_ROOT", std::env::var("LEPTOS_SITE_ROOT").unwrap_or_else(|_| "target/site".into()))
        .env("EBB_BIND", format!("127.0.0.1:{port}"))
        .env("EBB_PUBLIC_URL", &base)
        .env("EBB_METRICS_BIND", "")
        .env("EBB_SPAM_POW_DIFFICULTY", "1000")
        .env("EBB_SPAM_MIN_FILL_SECS", "0")
        .args(["serve"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Dropped (killed and waited for) on every path, a failed start included.
    let server = Server { child, base };
    let client = reqwest::Client::new();
    for _ in 0..300 {
        if client.get(format!("{}/readyz", server.base)).send().await.is_ok_and(|r| r.status() == 200) {
            return server;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{bin} did not start");
}

/// A person's message through the running server's own form: the page's stamp, a solved
/// challenge, the post.
async fn submit(client: &reqwest::Client, base: &str, name: &str, message: &str) {
    let page = client.get(format!("{base}/")).send().await.unwrap().text().await.unwrap();
    let at = page.find(r#"name="started""#).expect("the form's stamp");
    let input = &page[page[..at].rfind('<').unwrap()..at + page[at..].find('>').unwrap()];
    let value = input.split(r#"value=""#).nth(1).and_then(|v| v.split('"').next()).expect("the stamp's value").replace("&amp;", "&");
    let challenge: app::contact::PowChallenge = client.get(format!("{base}/api/contact/challenge")).send().await.unwrap().json().await.unwrap();
    let form = [("name", name), ("email", "person@example.org"), ("message", message), ("started", &value), ("altcha", &solve_challenge(&challenge))];
    let res = client.post(format!("{base}/api/contact")).header("accept", "application/json").form(&form).send().await.unwrap();
    assert!(res.status().is_success(), "{}", res.text().await.unwrap());
}

fn ebb(db: &str, storage: &std::path::Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ebb"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("DATABASE_URL", database_url(db))
        .env("EBB_STORAGE_DIR", storage)
        .args(args)
        .output()
        .unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[sqlx::test(migrations = false)]
async fn a_database_of_the_previous_release_upgrades_with_every_item_intact(pool: PgPool) {
    let db = pool.connect_options().get_database().unwrap().to_owned();
    let storage = tempfile::tempdir().unwrap();
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();

    // The previous release migrates the empty database and is used as people use it.
    let old = serve(&previous_bin(), &db, storage.path()).await;
    let messages: Vec<String> = (0..3).map(|i| format!("Message {i} written before the upgrade")).collect();
    for (i, m) in messages.iter().enumerate() {
        submit(&client, &old.base, &format!("Person {i}"), m).await;
    }
    // An admin and a session as the previous release's schema has them (no role, no passkey
    // check time): after the upgrade she is an owner, and her session must confirm with a
    // passkey before an export.
    let admin = uuid::Uuid::new_v4();
    sqlx::query("insert into admins (id, name) values ($1, 'Olga')").bind(admin).execute(&pool).await.unwrap();
    let cookie = session_cookie_for(&pool, admin).await;
    let body = b"a file shared before the upgrade".to_vec();
    // The admin upload as the shares tests send it (their form), to the old server.
    let form = crate::shares::form("before.txt", body.clone(), "24", "");
    let res = client
        .post(format!("{}{}", old.base, app::shares::routes::UPLOAD_PATH))
        .header("cookie", &cookie)
        .header("accept", "application/json")
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 201, "{}", res.text().await.unwrap_or_default());
    let link: serde_json::Value = res.json().await.unwrap();
    let path = link["url"].as_str().unwrap().split_once("/s/").map(|(_, t)| format!("/s/{t}")).unwrap();
    let old_version: i64 = sqlx::query_scalar("select max(version) from _sqlx_migrations").fetch_one(&pool).await.unwrap();
    drop(old);

    // This version: what it would apply, then the upgrade itself.
    let (ok, plan) = ebb(&db, storage.path(), &["migrate", "--dry-run"]);
    assert!(ok, "{plan}");
    let pending = server::MIGRATOR.iter().filter(|m| m.version > old_version).count();
    assert!(plan.contains(&format!("; {pending} pending")), "{plan}");
    let (ok, out) = ebb(&db, storage.path(), &["migrate"]);
    assert!(ok, "{out}");
    // Every job runs on the upgraded data.
    let (ok, out) = ebb(&db, storage.path(), &["maintenance", "run", "--force"]);
    assert!(ok, "{out}");
    assert!(!out.contains("FAILED") && !out.contains("with errors"), "every step of every job completed: {out}");

    // Every item is intact, read through the new version's own pages and routes.
    let new = serve(env!("CARGO_BIN_EXE_ebb"), &db, storage.path()).await;
    let role: String = sqlx::query_scalar("select role from admins where id = $1").bind(admin).fetch_one(&pool).await.unwrap();
    assert_eq!(role, "owner", "the admins from before roles could do everything");
    let csv = client.get(format!("{}/admin/inbox/export.csv", new.base)).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(csv.status(), 403, "a session from before the upgrade has no recent passkey check");
    // As the step-up ceremony would (Playwright runs it with a virtual authenticator).
    sqlx::query("update admin_sessions set verified_at = now() where admin_id = $1").bind(admin).execute(&pool).await.unwrap();
    let csv = client.get(format!("{}/admin/inbox/export.csv", new.base)).header("cookie", &cookie).send().await.unwrap();
    assert_eq!(csv.status(), 200);
    let csv = csv.text().await.unwrap();
    for m in &messages {
        assert!(csv.contains(m.as_str()), "{m} is missing from the export: {csv}");
    }
    let got = client.post(format!("{}{path}", new.base)).send().await.unwrap();
    assert_eq!(got.status(), 200);
    assert_eq!(got.bytes().await.unwrap().as_ref(), body.as_slice());
    drop(new);
    let (ok, out) = ebb(&db, storage.path(), &["audit", "verify"]);
    assert!(ok, "the audit trail verifies across the upgrade: {out}");
    let (ok, out) = ebb(&db, storage.path(), &["doctor"]);
    assert!(ok, "{out}");
}

/// A step back: this binary starts on a database that a newer Ebb migrated further when the newer
/// Ebb recorded each of its migrations as expand-only (a restart mid-rollout, or a rollback), and
/// refuses — naming the migration and the way back — when one of them contracts the schema or
/// was never recorded. (The previous release predates the record: stepping back to it means
/// restoring the backup, as the README's *Upgrade* says.)
#[sqlx::test(migrations = false)]
async fn an_older_binary_runs_beside_a_newer_expand_only_schema_and_refuses_a_contracted_one(pool: PgPool) {
    let db = pool.connect_options().get_database().unwrap().to_owned();
    let storage = tempfile::tempdir().unwrap();
    let (ok, out) = ebb(&db, storage.path(), &["migrate"]);
    assert!(ok, "{out}");
    let recorded: i64 = sqlx::query_scalar("select count(*) from schema_compat").fetch_one(&pool).await.unwrap();
    assert_eq!(recorded as usize, server::MIGRATOR.iter().count(), "every migration of this binary is recorded");
    let contract: Vec<i64> = sqlx::query_scalar("select version from schema_compat where not expand_only and version > $1")
        .bind(server::EXPAND_ONLY_AFTER)
        .fetch_all(&pool)
        .await
        .unwrap();
    let marked: Vec<i64> =
        server::MIGRATOR.iter().filter(|m| m.version > server::EXPAND_ONLY_AFTER && m.sql.starts_with("-- contract:")).map(|m| m.version).collect();
    assert_eq!(contract, marked, "the contracting ones as such");

    // A newer Ebb applied one more migration, expand-only, and recorded it so.
    let newer: i64 = 29_991_231_000_001;
    sqlx::query(
        "insert into _sqlx_migrations (version, description, success, checksum, execution_time) values ($1, 'a newer release''s column', true, '\\x00'::bytea, 1)",
    )
    .bind(newer)
    .execute(&pool)
    .await
    .unwrap();
    sqlx::query("alter table inquiries add column newer_release_column text").execute(&pool).await.unwrap();
    sqlx::query("insert into schema_compat (version, expand_only) values ($1, true)").bind(newer).execute(&pool).await.unwrap();
    let (ok, out) = ebb(&db, storage.path(), &["migrate"]);
    assert!(ok, "an older binary runs beside an expand-only newer schema: {out}");
    let server = serve(env!("CARGO_BIN_EXE_ebb"), &db, storage.path()).await;
    submit(&reqwest::Client::new(), &server.base, "Ann", "Sent while the older binary runs").await;
    drop(server);
    let sent: i64 = sqlx::query_scalar("select count(*) from inquiries").fetch_one(&pool).await.unwrap();
    assert_eq!(sent, 1);
    // The doctor says the same: a warning naming them, not a failure.
    let (_, out) = ebb(&db, storage.path(), &["doctor"]);
    let line = out.lines().find(|l| l.contains("migrations")).unwrap_or_default().to_owned();
    assert!(line.starts_with("WARN") && line.contains(&newer.to_string()) && line.contains("newer Ebb"), "{out}");

    // A contracting one: refused, naming it and the way back.
    sqlx::query("update schema_compat set expand_only = false where version = $1").bind(newer).execute(&pool).await.unwrap();
    let (ok, out) = ebb(&db, storage.path(), &["migrate"]);
    assert!(!ok && out.contains(&newer.to_string()) && out.contains("restoring the backup"), "{out}");
    // Never recorded (a newer Ebb from before the record): refused too.
    sqlx::query("delete from schema_compat where version = $1").bind(newer).execute(&pool).await.unwrap();
    let (ok, out) = ebb(&db, storage.path(), &["migrate"]);
    assert!(!ok && out.contains(&newer.to_string()), "{out}");
}
