//! `spawn_app`: the real router on a real socket (port 0), over a `#[sqlx::test]` database.

use std::net::SocketAddr;

use app::state::AppState;
use clap::Parser;
use server::Config;
use sqlx::PgPool;

#[derive(Parser)]
struct TestCli {
    #[command(flatten)]
    config: Config,
}

/// Configuration as an operator would give it; `DATABASE_URL` is unused (the pool is given).
pub fn test_config(extra: &[&str]) -> Config {
    let mut args = vec!["ebb", "--database-url", "postgres://unused"];
    args.extend_from_slice(extra);
    TestCli::try_parse_from(args).expect("valid test configuration").config
}

pub use crate::backend::Backend;

pub struct TestApp {
    pub base: String,
    pub state: AppState,
    pub client: reqwest::Client,
    /// The blob store's folder (a fresh temporary one per app; with S3, unused).
    pub storage: tempfile::TempDir,
    /// Faults injected into the app's store (the real backend behind them).
    pub faults: std::sync::Arc<app::storage::faults::Faults>,
    /// The same backend without faults or marker check: what is really stored.
    pub raw: Box<dyn app::storage::BlobStore>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    handle: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

impl TestApp {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// Keys of every object in the store (but its marker, the audit trail's signed digests,
    /// which the audit seal job writes beside whatever a test does, and the deletion journal;
    /// trail.rs and restore.rs check those), in order.
    pub async fn stored_files(&self) -> Vec<String> {
        use app::storage::Namespace;
        let mut keys = Vec::new();
        for ns in Namespace::ALL.into_iter().filter(|ns| !matches!(ns, Namespace::AuditDigests | Namespace::Deletions)) {
            keys.extend(self.raw.list(ns, None, 1000).await.unwrap().objects.into_iter().map(|o| o.key));
        }
        keys
    }

    /// The keys stored in one namespace, in listing order.
    pub async fn stored_keys(&self, ns: app::storage::Namespace) -> Vec<String> {
        self.raw.list(ns, None, 1000).await.unwrap().objects.into_iter().map(|o| o.key).collect()
    }

    /// An object's bytes as stored.
    pub async fn read_stored(&self, key: &str) -> Option<Vec<u8>> {
        self.raw.get(key).await.unwrap().map(|b| b.to_vec())
    }

    /// Deletes an object behind Ebb's back (a lost file).
    pub async fn remove_stored(&self, key: &str) {
        self.raw.delete(key).await.unwrap();
    }

    /// Stores an object behind Ebb's back.
    pub async fn write_stored(&self, key: &str, data: &[u8]) {
        self.raw.put(key, bytes::Bytes::copy_from_slice(data)).await.unwrap();
    }

    /// Posts the contact form as the hydrated client does (expects JSON, gets status codes), with
    /// what a person's browser adds: a solved proof of work and the page's time stamp from a
    /// minute ago (unless `fields` bring their own `altcha`).
    pub async fn post_contact(&self, fields: &[(&str, &str)]) -> reqwest::Response {
        let mut all: Vec<(String, String)> = fields.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        if !fields.iter().any(|(k, _)| *k == "altcha") {
            all.push(("altcha".into(), self.solved_proof()));
            all.push(("started".into(), self.page_stamp(60)));
        }
        self.post_contact_as_bot(&all).await
    }

    /// Posts the contact form with exactly `fields` (no proof of work unless given): a bot.
    pub async fn post_contact_as_bot<K: serde::Serialize, V: serde::Serialize>(&self, fields: &[(K, V)]) -> reqwest::Response {
        self.client.post(self.url("/api/contact")).header("accept", "application/json").form(fields).send().await.expect("request sent")
    }

    /// A proof of work for a challenge this instance issued now.
    pub fn solved_proof(&self) -> String {
        let settings = self.state.domain::<app::contact::ContactSettings>().spam;
        let c = app::contact::spam::challenge(&self.state, &settings, time::OffsetDateTime::now_utc()).unwrap();
        solve_challenge(&c)
    }

    /// The page's signed time stamp, as if the form was served `secs_ago` seconds ago.
    pub fn page_stamp(&self, secs_ago: i64) -> String {
        app::contact::spam::stamp(&self.state, time::OffsetDateTime::now_utc() - time::Duration::seconds(secs_ago))
    }

    /// Posts the contact form as a browser without JavaScript does.
    pub async fn post_contact_plain(&self, fields: &[(&str, &str)]) -> reqwest::Response {
        self.client
            .post(self.url("/api/contact"))
            .header("accept", "text/html,application/xhtml+xml,*/*;q=0.8")
            .header("referer", self.url("/"))
            .form(fields)
            .send()
            .await
            .expect("request sent")
    }

    /// Stops the server the way SIGTERM does and waits for background tasks to drain.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(h) = self.handle.take() {
            h.await.expect("server task").expect("server ran");
        }
    }
}

/// Starts Ebb on 127.0.0.1:0 with the given pool and extra flags; `customize` may change the
/// state (tests use it to sabotage a prune step).
pub async fn spawn_app_with(pool: PgPool, extra: &[&str], customize: impl FnOnce(&mut AppState)) -> TestApp {
    spawn_app_on(pool, Backend::Local, extra, customize).await
}

/// [`spawn_app_with`] on the given storage backend.
pub async fn spawn_app_on(pool: PgPool, backend: Backend, extra: &[&str], customize: impl FnOnce(&mut AppState)) -> TestApp {
    let storage = tempfile::tempdir().unwrap();
    let storage_args = crate::backend::storage_args(backend, storage.path());
    spawn_with_storage(pool, storage, storage_args, extra, customize).await
}

/// A second instance of `first`'s deployment: the same database and the same storage folder
/// (local backend), its own listener and process-local state.
pub async fn spawn_second_instance(pool: PgPool, first: &TestApp, extra: &[&str]) -> TestApp {
    let storage_args = crate::backend::storage_args(Backend::Local, first.storage.path());
    spawn_with_storage(pool, tempfile::tempdir().unwrap(), storage_args, extra, |_| {}).await
}

async fn spawn_with_storage(
    pool: PgPool,
    storage: tempfile::TempDir,
    storage_args: Vec<String>,
    extra: &[&str],
    customize: impl FnOnce(&mut AppState),
) -> TestApp {
    let mut args: Vec<&str> = storage_args.iter().map(String::as_str).collect();
    args.extend_from_slice(extra);
    // A puzzle the test's own solver (a debug build) finishes at once.
    if !extra.contains(&"--spam-pow-difficulty") {
        args.extend_from_slice(&["--spam-pow-difficulty", "1000"]);
    }
    let config = test_config(&args);
    let faults = app::storage::faults::Faults::new();
    let store = app::storage::faults::FaultyStore::new(server::open_store(&config).unwrap(), faults.clone());
    let raw = server::open_store(&config).unwrap();
    let mut state = server::build_state_with_store(&config, pool, Box::new(store)).await.expect("state");
    server::check_storage(&state, &config).await.expect("storage check");
    customize(&mut state);
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))).await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let serve_state = state.clone();
    let handle = tokio::spawn(async move {
        server::serve(listener, serve_state, config.max_body_bytes as usize, None, async {
            let _ = rx.await;
        })
        .await
    });
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    TestApp { base, state, client, storage, faults, raw, stop: Some(tx), handle: Some(handle) }
}

/// Solves a challenge (ALTCHA's reference solver) and encodes the payload as the widget does.
pub fn solve_challenge(c: &app::contact::PowChallenge) -> String {
    use base64::Engine;
    let n = altcha_lib_rs::solve_challenge(&c.challenge, &c.salt, None, Some(c.maxnumber), 0).expect("solvable");
    let json = serde_json::json!({"algorithm": c.algorithm, "challenge": c.challenge, "number": n, "salt": c.salt, "signature": c.signature});
    base64::engine::general_purpose::STANDARD.encode(json.to_string())
}

/// Suspected spam rows.
pub async fn spam_count(pool: &PgPool) -> i64 {
    sqlx::query_scalar("select count(*) from suspected_spam").fetch_one(pool).await.unwrap()
}

pub async fn spawn_app(pool: PgPool) -> TestApp {
    spawn_app_with(pool, &[], |_| {}).await
}

pub async fn inquiry_count(pool: &PgPool) -> i64 {
    sqlx::query_scalar("select count(*) from inquiries").fetch_one(pool).await.unwrap()
}

pub const VALID: [(&str, &str); 3] = [("name", "Ann Example"), ("email", "ann@example.org"), ("message", "Hello,\nplease call me back.")];

/// Creates an owner (who may do everything) with one (placeholder) passkey row and returns their
/// id. Real passkeys are registered by the Playwright tests, which have an authenticator.
pub async fn create_admin(pool: &PgPool, name: &str) -> uuid::Uuid {
    create_admin_with_role(pool, name, "owner").await
}

/// Creates an admin with `role` (`owner`, `admin` or `auditor`) and one placeholder passkey.
pub async fn create_admin_with_role(pool: &PgPool, name: &str, role: &str) -> uuid::Uuid {
    let id = uuid::Uuid::new_v4();
    sqlx::query("insert into admins (id, name, role) values ($1, $2, $3)").bind(id).bind(name).bind(role).execute(pool).await.unwrap();
    add_placeholder_passkey(pool, id, "Laptop").await;
    id
}

pub async fn add_placeholder_passkey(pool: &PgPool, admin: uuid::Uuid, name: &str) -> uuid::Uuid {
    sqlx::query_scalar("insert into passkeys (admin_id, credential_id, passkey, name) values ($1, $2, '{}', $3) returning id")
        .bind(admin)
        .bind(uuid::Uuid::new_v4().as_bytes().to_vec())
        .bind(name)
        .fetch_one(pool)
        .await
        .unwrap()
}

/// A session for `admin` exactly as sign-in leaves it (store row + our row); returns the
/// `Cookie` header value.
pub async fn session_cookie_for(pool: &PgPool, admin: uuid::Uuid) -> String {
    let cookie = tower_session_cookie(pool, admin).await;
    // Just signed in with a passkey: fresh for sensitive actions (`EBB_STEP_UP_MINUTES`).
    sqlx::query("update admin_sessions set verified_at = now() where session_id = $1")
        .bind(cookie.trim_start_matches("ebb_session="))
        .execute(pool)
        .await
        .unwrap();
    cookie
}

/// A signed-in session as any schema since the first has it (the upgrade test's previous
/// release has no passkey check time).
pub async fn tower_session_cookie(pool: &PgPool, admin: uuid::Uuid) -> String {
    use tower_sessions::session::{Id, Record};
    use tower_sessions::SessionStore;
    let store = tower_sessions_sqlx_store::PostgresStore::new(pool.clone());
    let mut record = Record {
        id: Id::default(),
        data: [("admin_id".to_string(), serde_json::json!(admin))].into_iter().collect(),
        expiry_date: time::OffsetDateTime::now_utc() + time::Duration::hours(12),
    };
    store.create(&mut record).await.unwrap();
    sqlx::query("insert into admin_sessions (session_id, admin_id, user_agent) values ($1, $2, 'test')")
        .bind(record.id.to_string())
        .bind(admin)
        .execute(pool)
        .await
        .unwrap();
    format!("ebb_session={}", record.id)
}

/// Calls a server function by path with a JSON body (as the hydrated client does).
pub async fn call(app: &TestApp, path: &str, cookie: Option<&str>, body: serde_json::Value) -> reqwest::Response {
    let mut req = app.client.post(app.url(path)).header("accept", "application/json").json(&body);
    if let Some(c) = cookie {
        req = req.header("cookie", c);
    }
    req.send().await.unwrap()
}

/// Calls a server function by path with a form body.
pub async fn call_form(app: &TestApp, path: &str, cookie: Option<&str>, form: &[(&str, &str)]) -> reqwest::Response {
    let mut req = app.client.post(app.url(path)).header("accept", "application/json").form(form);
    if let Some(c) = cookie {
        req = req.header("cookie", c);
    }
    req.send().await.unwrap()
}

/// A share row whose file exists in the app's storage, already expired (so the GC may purge it).
pub async fn expired_share(app: &TestApp) -> (i64, String) {
    let key = app::storage::new_key(app::storage::Namespace::Shares);
    app.write_stored(&key, b"file body").await;
    let id: i64 = sqlx::query_scalar(
        "insert into shares (token_hash, blob_key, file_name, size_bytes, content_type, expires_at)
         values ($1, $2, 'a.pdf', 9, 'application/pdf', now() - interval '1 minute') returning id",
    )
    .bind(uuid::Uuid::new_v4().as_bytes().to_vec())
    .bind(&key)
    .fetch_one(&app.state.pool)
    .await
    .unwrap();
    (id, key)
}

/// The tables in which `needle` appears anywhere in a row, as text or as the hex of its bytes
/// (a secret stored raw in a `bytea` column): for "only the hash is stored" checks.
pub async fn tables_containing(pool: &PgPool, needle: &str) -> Vec<String> {
    let tables: Vec<String> = sqlx::query_scalar("select format('%I.%I', schemaname, tablename) from pg_tables where schemaname = 'public' order by 1")
        .fetch_all(pool)
        .await
        .unwrap();
    let mut found = Vec::new();
    for table in tables {
        let n: i64 = sqlx::query_scalar(&format!(
            "select count(*) from {table} x where strpos(x::text, $1) > 0 or strpos(x::text, encode(convert_to($1, 'UTF8'), 'hex')) > 0"
        ))
        .bind(needle)
        .fetch_one(pool)
        .await
        .unwrap();
        if n > 0 {
            found.push(table);
        }
    }
    found
}

/// A port for an `ebb serve` child process to bind. Outside the kernel's ephemeral range
/// (32768–60999 here), so no other test's `bind(…:0)` or outgoing connection can take it between
/// this choice and the child's bind — a test that waits for the port to answer then talks to its
/// own child, never to another test's server. Each call gives a new port (a counter per process,
/// offset by the process id); a port something else holds is skipped.
pub fn child_port() -> u16 {
    use std::sync::atomic::{AtomicU16, Ordering};
    static NEXT: AtomicU16 = AtomicU16::new(0);
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let port = 20_000 + (std::process::id() as u16 % 100) * 100 + n % 100;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}
