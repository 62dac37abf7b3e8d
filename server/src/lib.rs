//! Ebb's server: configuration, router, non-server-function routes, maintenance ticker, CLI
//! commands and graceful shutdown. `main.rs` is a thin wrapper; tests bind [`serve`] to port 0.
#![recursion_limit = "256"]

pub mod assets;
pub mod checks;
pub mod config;
pub mod doctor;
pub mod errors;
pub mod http;
pub mod live;
pub mod maintenance;
pub mod pace;
pub mod page_cache;
pub mod requests;
pub mod restore;
pub mod s3;
pub mod security;
pub mod signed;
pub mod telemetry;
pub mod watch;

use std::{future::Future, sync::Arc, time::Duration};

use app::kernel::http::Routes;
use app::state::{AppConfig, AppState, Background, Held, Parts};
use app::{shell, App};
use axum::{
    extract::DefaultBodyLimit,
    extract::{MatchedPath, State},
    http::{header, HeaderValue, Request, StatusCode},
    routing::get,
    Router,
};
use leptos::prelude::*;
use leptos_axum::{generate_route_list, LeptosRoutes};
use sqlx::{postgres::PgPoolOptions, PgPool};
use tower_http::{limit::RequestBodyLimitLayer, set_header::SetResponseHeaderLayer, trace::TraceLayer};

pub use config::Config;

/// The migrations, embedded in the binary.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

/// Migrations after this one follow "expand, then contract" (docs/operator.md, *Upgrade*): a new migration
/// never removes or narrows what the running older binary uses, unless its first line says
/// `-- contract:` and why.
pub const EXPAND_ONLY_AFTER: i64 = 20261203000007;

/// Whether a migration of this binary's only expands the schema (an older binary runs beside it).
pub fn expand_only(m: &sqlx::migrate::Migration) -> bool {
    m.version > EXPAND_ONLY_AFTER && !m.sql.trim_start().starts_with("-- contract:")
}

/// Applies this binary's migrations, and records which of them only expand the schema. A
/// database that a newer Ebb migrated is accepted when every migration this binary does not know
/// is recorded (by that newer Ebb) as expand-only: this older binary then runs beside the newer
/// schema — a restart in the middle of a rollout, or a step back. Otherwise it is refused, naming
/// the migrations; stepping back past them means restoring the backup taken before the upgrade.
/// Returns the unknown (newer, expand-only) migrations it runs beside.
pub async fn migrate(pool: &PgPool) -> Result<Vec<i64>, String> {
    let plan = doctor::migration_plan(pool).await?;
    if !plan.changed.is_empty() {
        return Err(format!("migration(s) {:?} were applied with other contents than this binary's: this database is not this release's", plan.changed));
    }
    if !plan.unknown.is_empty() {
        let contracting = contracting_unknown(pool, &plan.unknown).await?;
        if !contracting.is_empty() {
            return Err(format!(
                "the database was migrated by a newer Ebb, with migration(s) {contracting:?} that remove or narrow what this older binary uses: run the newer Ebb, or step back by restoring the backup taken before the upgrade (docs/operator.md, Upgrade)"
            ));
        }
    }
    let migrator = sqlx::migrate::Migrator {
        migrations: MIGRATOR.migrations.clone(),
        ignore_missing: !plan.unknown.is_empty(),
        locking: MIGRATOR.locking,
        no_tx: MIGRATOR.no_tx,
    };
    migrator.run(pool).await.map_err(|e| format!("database migration failed: {e}"))?;
    // One statement for all of them (this runs at every start).
    let (versions, expand): (Vec<i64>, Vec<bool>) = MIGRATOR.migrations.iter().map(|m| (m.version, expand_only(m))).unzip();
    sqlx::query("insert into schema_compat (version, expand_only) select * from unnest($1::bigint[], $2::boolean[]) on conflict (version) do nothing")
        .bind(&versions)
        .bind(&expand)
        .execute(pool)
        .await
        .map_err(|e| format!("database error: {e}"))?;
    Ok(plan.unknown)
}

/// Of `unknown` (applied, not this binary's), those not recorded as expand-only.
pub async fn contracting_unknown(pool: &PgPool, unknown: &[i64]) -> Result<Vec<i64>, String> {
    let recorded: Vec<i64> =
        match sqlx::query_scalar("select version from schema_compat where expand_only and version = any($1)").bind(unknown).fetch_all(pool).await {
            Ok(v) => v,
            // No such table: the newer Ebb predates the record, so nothing is known to be safe.
            Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some("42P01") => Vec::new(),
            Err(e) => return Err(format!("database error: {e}")),
        };
    Ok(unknown.iter().copied().filter(|v| !recorded.contains(v)).collect())
}

/// Connects to PostgreSQL, with a message that says what to check when it fails.
///
/// The pool keeps sqlx's check of every connection it hands out (a Sync and its answer before
/// the first query): a round trip per acquire. Without it (tried: a ping only after 10 s idle)
/// the e2e sign-in flood stalled: one pooled connection sat idle in transaction after the
/// rate-limit upsert, and every other sign-in waited on its lock of the counter row until the
/// test timed out.
pub async fn connect(config: &Config) -> Result<PgPool, String> {
    if config.database_url.0.trim().is_empty() {
        return Err("DATABASE_URL is not set: set it to your PostgreSQL URL (postgresql://user@host/db); `make run` sets it for its local cluster".into());
    }
    PgPoolOptions::new()
        .max_connections(config.db_max_connections)
        .acquire_timeout(Duration::from_secs(5))
        .connect(&config.database_url.0)
        .await
        .map_err(|e| format!("cannot connect to PostgreSQL at DATABASE_URL ({e}); is the server running and the URL right?"))
}

/// Creates a one-time admin invite and returns its link (the CLI's `admin invite`).
pub async fn create_invite(pool: &PgPool, config: &Config, name: Option<&str>, role: app::auth::Role) -> Result<app::auth::NewInvite, String> {
    if let Some(n) = name {
        app::auth::parse_label(n, app::auth::LabelField::InviteName).map_err(|e| format!("--name: {e}"))?;
    }
    let mut tx = pool.begin().await.map_err(|e| format!("database error: {e}"))?;
    let invite =
        app::auth::service::create_invite(&mut tx, &config.public_origin(), name, role, None).await.map_err(|e| format!("cannot create the invite: {e}"))?;
    tx.commit().await.map_err(|e| format!("database error: {e}"))?;
    Ok(invite)
}

/// The admin the operator names on the command line: by id, or by a name no other admin has.
async fn admin_named(pool: &PgPool, who: &str) -> Result<uuid::Uuid, String> {
    if let Ok(id) = uuid::Uuid::parse_str(who.trim()) {
        return Ok(id);
    }
    let admins = app::auth::db::list_admins(pool).await.map_err(|e| format!("database error: {e}"))?;
    let named: Vec<_> = admins.iter().filter(|a| a.name == who).collect();
    match named.as_slice() {
        [one] => Ok(one.id),
        [] => Err(format!("no admin is named {who:?}: `ebb admin list` shows every admin's id and name")),
        _ => Err(format!("{} admins are named {who:?}: name the one you mean by its id (`ebb admin list`)", named.len())),
    }
}

/// `ebb admin remove` and `ebb admin role`: the operator's break-glass changes of an admin (named
/// by id, or by a name no other admin has), from the host and without a session, recorded as the
/// operator's. A removal ends the admin's sessions and passkeys at once and is journaled (a
/// restore from before cannot bring them back). Returns what was done, for the terminal.
pub async fn change_admin(state: &app::state::AppState, who: &str, change: app::auth::db::Change) -> Result<String, String> {
    use app::auth::db::{Change, Changed};
    let id = admin_named(&state.pool, who).await?;
    let how = match change {
        Change::Remove => "by the operator on the host (ebb admin remove)",
        Change::Role(_) => "by the operator on the host (ebb admin role)",
    };
    let changed = app::auth::service::change_admin(state, &app::kernel::audit::Actor::system(), how, id, change)
        .await
        .map_err(|e| format!("nothing was changed: {e} (the server log has the cause)"))?;
    match changed {
        Changed::Removed { name, passkeys, sessions } => Ok(format!("removed admin {name} ({id}): {passkeys} passkey(s) deleted, {sessions} session(s) ended")),
        Changed::Role { name, was } => match change {
            Change::Role(role) if role == was => Ok(format!("{name} ({id}) is already {role}")),
            Change::Role(role) => Ok(format!("{name} ({id}) is now {role} (was {was}); their sessions have the new role at once")),
            Change::Remove => Err("unexpected: a role change for a removal".into()),
        },
        Changed::NotFound => Err(format!("no admin has the id {id}: `ebb admin list` shows every admin")),
        Changed::LastAdmin => Err("this is the only admin: nobody could sign in after the removal; invite another admin first (`ebb admin invite`)".into()),
        Changed::LastOwner => {
            Err("this is the only owner: nobody could manage the admins afterwards; make another admin an owner first (`ebb admin role NAME owner`)".into())
        }
    }
}

/// `ebb admin remove`: [`change_admin`] with a removal.
pub async fn remove_admin(state: &app::state::AppState, who: &str) -> Result<String, String> {
    change_admin(state, who, app::auth::db::Change::Remove).await
}

/// At start-up, when there is no admin yet, creates a one-time invite for the first one and
/// prints its link to `terminal` (the process's stderr). The link is an admin-grade secret: it
/// never goes through the logging pipeline (log files, JSON logs), which only says that it was
/// printed.
pub async fn invite_first_admin_if_none(pool: &PgPool, config: &Config, terminal: &mut impl std::io::Write) -> Result<(), String> {
    let admins = app::auth::db::admin_count(pool).await.map_err(|e| format!("database error: {e}"))?;
    if admins == 0 && !config.print_first_admin_link {
        tracing::warn!("no admin yet: run `ebb admin invite` for a one-time link for the first admin");
    } else if admins == 0 {
        // The first admin owns the installation.
        let invite = create_invite(pool, config, None, app::auth::Role::Owner).await?;
        writeln!(
            terminal,
            "No admin yet. Open this one-time link within 30 minutes to become the first admin: {}\n\
             (or run `ebb admin invite` for a new one)",
            invite.url
        )
        .map_err(|e| format!("cannot print the first admin's invite: {e}"))?;
        tracing::warn!("no admin yet: a one-time invite link for the first admin was printed to the terminal (or run `ebb admin invite`)");
    }
    Ok(())
}

fn storage_hint(config: &Config) -> impl Fn(String) -> String + '_ {
    move |e| match config.storage {
        config::StorageKind::Local => format!(
            "storage self-check failed for EBB_STORAGE_DIR={}: {e}; create the folder (writable by Ebb), mount it, or fix the path",
            config.storage_dir.display()
        ),
        config::StorageKind::S3 => format!(
            "storage self-check failed for EBB_STORAGE=s3 (bucket {:?} at {}): {e}",
            config.s3.bucket,
            if config.s3.endpoint.is_empty() { "AWS" } else { config.s3.endpoint.as_str() }
        ),
    }
}

/// The configured backend, before the marker check (S3 settings validated here).
pub fn open_store(config: &Config) -> Result<Box<dyn app::storage::BlobStore>, String> {
    Ok(match config.storage {
        config::StorageKind::Local => Box::new(app::storage::LocalDirStore::new(&config.storage_dir)),
        config::StorageKind::S3 => Box::new(s3::S3Store::new(config.s3.settings()?)),
    })
}

/// The start-up probe of the blob store the state will use (write, read back, delete), before
/// anything touches the database: a wrong path, bucket, endpoint or key stops Ebb with what to
/// do, naming the setting.
pub async fn probe_storage(state: &AppState, config: &Config) -> Result<(), String> {
    probe_store(state.blobs.inner(), config).await
}

/// [`probe_storage`] before there is a state (`ebb serve` probes the store before it migrates).
pub async fn probe_store(store: &dyn app::storage::BlobStore, config: &Config) -> Result<(), String> {
    config.check_storage_outside_site()?;
    if config.storage == config::StorageKind::Local {
        // Share files of earlier versions move into `shares/` before the migration renames
        // their keys.
        app::storage::LocalDirStore::new(&config.storage_dir).adopt_flat_layout().await.map_err(|e| storage_hint(config)(e.to_string()))?;
    }
    app::storage::self_check(store).await.map_err(storage_hint(config))
}

/// The marker that proves the store is the real one (written on first use; after migrations),
/// and the secret of Ebb-signed read URLs.
pub async fn check_storage_marker(state: &AppState, config: &Config) -> Result<(), String> {
    // Whether Ebb ever wrote objects to its store: any share (purged ones included), any month
    // the archive wrote (written, verified or failed), any export file, any signed audit digest
    // (written to the store before its row). A store without its marker then is not an empty new
    // store but the wrong one (an unmounted folder, another bucket) — it is never adopted as
    // "the" store.
    let written = sqlx::query_scalar!(
        r#"select exists (select 1 from shares)
               or exists (select 1 from audit_partition_archives)
               or exists (select 1 from audit_export_requests where object_key is not null)
               or exists (select 1 from audit_digests) as "written!""#
    )
    .fetch_one(&state.pool)
    .await
    .map_err(|e| format!("database error: {e}"))?;
    state.blobs.ensure_marker(&state.pool, written).await.map_err(storage_hint(config))?;
    state.blobs.ensure_signer(&state.pool, &state.config.public_url).await
}

/// Both checks of the store (tests and tools that start from a migrated database).
pub async fn check_storage(state: &AppState, config: &Config) -> Result<(), String> {
    probe_storage(state, config).await?;
    check_storage_marker(state, config).await
}

/// `ebb storage setup`: applies the bucket settings Ebb relies on where the server supports
/// them, writing one line per setting; fails when one could not be applied.
pub async fn storage_setup(config: &Config, out: &mut impl std::io::Write) -> Result<(), String> {
    let w = |out: &mut dyn std::io::Write, line: String| writeln!(out, "{line}").map_err(|e| e.to_string());
    match config.storage {
        config::StorageKind::Local => {
            w(out, format!("storage: local folder {} — no bucket settings to apply (Ebb's own jobs delete expired objects)", config.storage_dir.display()))
        }
        config::StorageKind::S3 => {
            let store = s3::S3Store::new(config.s3.settings()?);
            let mut failed = 0;
            for (what, result) in store.setup().await {
                match result {
                    Ok(()) => w(out, format!("applied: {what}"))?,
                    Err(e) => {
                        failed += 1;
                        w(out, format!("NOT applied: {what}: {e}"))?
                    }
                }
            }
            if failed > 0 {
                return Err(format!("{failed} bucket setting(s) could not be applied; Ebb still works, but see the lines above"));
            }
            Ok(())
        }
    }
}

/// Every lifecycle job (the one registry, `app::jobs::registry`).
pub fn jobs() -> app::jobs::Registry {
    app::jobs::registry()
}

/// Builds the application state from validated configuration on a migrated database: the
/// keyring (loaded first: a state never exists without it, and an unreadable key stops here,
/// naming its settings row), the kernel, then each domain's part (the composition root is the
/// only place that knows them all).
pub async fn build_state(config: &Config, pool: PgPool) -> Result<AppState, String> {
    build_state_with_store(config, pool, open_store(config)?).await
}

/// [`build_state`] with a given backend (tests wrap the configured one in faults).
pub async fn build_state_with_store(config: &Config, pool: PgPool, store: Box<dyn app::storage::BlobStore>) -> Result<AppState, String> {
    let keyring = app::kernel::keyring::Keyring::load(&pool).await?;
    let leptos_options = LeptosOptions::builder()
        .output_name("ebb")
        .site_root(config.site_root.to_string_lossy().to_string())
        .site_pkg_dir(assets::pkg_dir(&config.site_root))
        .site_addr(config.bind)
        .env(leptos::config::Env::PROD)
        .build();
    let app_config = AppConfig {
        trusted_proxy_hops: config.trusted_proxy_hops as usize,
        public_url: config.public_origin(),
        after_response_jobs: config.after_response_jobs,
        ipv6_prefix: config.rate_limit_ipv6_prefix,
        ..AppConfig::default()
    };
    let parts = parts(config, &pool);
    Ok(AppState::from(app::state::AppStateInner {
        leptos_options: Arc::new(leptos_options),
        pool: pool.clone(),
        background: Background::new(app_config.background_timeout),
        config: Arc::new(app_config),
        blobs: Arc::new(app::storage::MarkedStore::new(store)),
        keyring: Arc::new(keyring),
        parts,
        live: app::live::Live::new(pool),
    }))
}

/// Every part of the state: each domain's settings and handles and the kernel's (see
/// `app::state::Parts`). Every part has its own field: one forgotten here is a compile error.
fn parts(config: &Config, pool: &PgPool) -> Parts {
    let webauthn = config.webauthn().expect("public URL validated at start-up");
    let session_absolute = Duration::from_secs(config.session_absolute_days * 86_400);
    let session_idle = Duration::from_secs(config.session_idle_hours * 3600);
    Parts {
        http_limits: Held::new(config.http_limits()),
        prune: Held::new(app::kernel::prune::PruneSettings { batch_size: config.prune_batch_size, session_absolute, session_idle }),
        prune_dry_run: Held::new(app::contact::prune::dry_run()),
        jobs: Held::new(jobs()),
        admin_sessions: Held::new(app::kernel::session::AdminSessions(Arc::new(app::auth::service::Sessions))),
        file_events: Held::new(app::kernel::file_events::FileEvents(Arc::new(app::shares::file_events::Events))),
        page_renderer: Held::new(app::kernel::http::PageRenderer(Arc::new(|state, parts| Box::pin(render_page(state, parts))))),
        personal_sources: Held::new(app::personal_sources()),
        hold_owners: Held::new(app::hold_owners()),
        auth: Held::new(app::auth::AuthSettings {
            webauthn: Arc::new(webauthn),
            session_idle,
            session_absolute,
            step_up: Duration::from_secs(config.step_up_minutes * 60),
            limit: app::ratelimit::Limit { name: "auth", max: config.auth_rate_limit, window: Duration::from_secs(300) },
            total_limit: app::ratelimit::Limit { name: "auth", max: config.auth_total_rate_limit, window: Duration::from_secs(300) },
        }),
        contact: Held::new(app::contact::ContactSettings {
            limit: app::ratelimit::Limit { name: "contact", max: config.contact_rate_limit, window: Duration::from_secs(config.contact_rate_window_secs) },
            spam: app::contact::spam::SpamSettings {
                difficulty: config.spam_pow_difficulty,
                min_fill: Duration::from_secs(config.spam_min_fill_secs),
                ..Default::default()
            },
        }),
        contact_writer: Held::new(app::contact::writer::Writer::new(pool.clone())),
        inbox_export: Held::new(app::inbox::export::ExportMetrics::default()),
        notify: Held::new(config.notify_settings().unwrap_or_else(|e| {
            tracing::warn!("notifications are off: {e}");
            app::notify::NotifySettings { mailer: None }
        })),
        shares: Held::new(app::shares::ShareSettings {
            max_bytes: config.share_max_bytes,
            max_expiry_hours: config.share_max_expiry_hours,
            gc: app::shares::gc::GcRules { delivery_grace: Duration::from_secs(config.share_delivery_grace_mins * 60), ..Default::default() },
        }),
        audit_chain: Held::new(app::audit::chain::ChainSettings {
            key_file: config.audit_signing_key_file.clone(),
            digest_every: Duration::from_secs(config.audit_digest_minutes * 60),
            log_origin: app::audit::chain::tlog::origin(config.public_url.as_str()),
            witnesses: config.witnesses().expect("witness keys are checked when the settings are read"),
            ..Default::default()
        }),
        audit_archive: Held::new(app::audit::archive::ArchiveSettings { reread_days: config.archive_reread_days }),
        audit_upkeep: Held::new(app::audit::upkeep::UpkeepSettings { partitions_ahead: config.audit_partitions_ahead }),
        audit_exports: Held::new(app::audit::exports::ExportSettings { stuck_after: Duration::from_secs(config.export_stuck_mins * 60) }),
        requests: Held::new(app::requests::RequestSettings {
            deadline_days: config.request_deadline_days,
            warn_days: config.request_warn_days,
            keep_days: config.request_keep_days,
        }),
    }
}

/// The page at `parts`' URI, rendered as its GET would be (a domain's route answering with a
/// page: a refused download shows the share's page).
async fn render_page(state: AppState, parts: axum::http::request::Parts) -> axum::response::Response {
    let context_state = state.clone();
    let options = (*state.leptos_options).clone();
    let render = leptos_axum::render_app_async_with_context(move || app::kernel::state::provide(&context_state), move || shell(options.clone()));
    render(Request::from_parts(parts, axum::body::Body::empty())).await
}

/// Routes that are neither pages nor server functions with small bodies: the server's own
/// (health, live updates, signed reads) and every domain's (`app::plain_routes`).
fn small_routes() -> Routes {
    Routes::new()
        .public("/healthz", get(healthz))
        .public("/readyz", get(readyz))
        .admin(app::auth::Role::Auditor, app::live::PATH, get(live::events))
        // Reads signed by Ebb (local backend); the signature is the authorisation.
        .public(app::storage::signed::PATH, get(signed::serve))
        .merge(app::plain_routes())
}

/// The upload routes (their own body limit and minimum rate): the shares domain's.
fn upload_routes() -> Routes {
    app::shares::routes::upload_routes()
}

/// Every plain route: (path, the least role it needs; `None`: anyone) — the router's own list,
/// which the gate test walks and the metrics' route labels use.
pub fn plain_routes() -> Vec<(&'static str, Option<app::auth::Role>)> {
    small_routes().listed().iter().chain(upload_routes().listed()).copied().collect()
}

/// The plain routes as a bare router, with no layer (the gate test calls the admin ones without
/// the gate).
pub fn bare_plain_routes() -> Router<AppState> {
    small_routes().into_router().merge(upload_routes().into_router())
}

/// Leptos' route list, generated once per process. Generating it sets a process-wide flag under
/// which any resource first polled meanwhile never loads (leptos-rs/leptos#4773), so it must not
/// run while pages render: routers built later (tests build many) reuse this list.
pub fn route_list() -> Vec<leptos_axum::AxumRouteListing> {
    static ROUTES: std::sync::OnceLock<Vec<leptos_axum::AxumRouteListing>> = std::sync::OnceLock::new();
    ROUTES.get_or_init(|| generate_route_list(App)).clone()
}

/// The complete router: pages, server functions, health checks and static files.
pub fn router(state: AppState, max_body_bytes: usize) -> Router {
    let cache = page_cache::PageCache::new(state.clone());
    router_with_cache(state, max_body_bytes, cache)
}

/// [`router`] with the home page's cache given (`serve` keeps it following the settings).
pub fn router_with_cache(state: AppState, max_body_bytes: usize, cache: page_cache::PageCache) -> Router {
    let routes = route_list();
    let context_state = state.clone();
    // Shared, not copied: every route's handler holds the shell's closure, and axum clones a
    // route's handler for each request it serves (a cached page too).
    let shell_options = state.leptos_options.clone();
    let small_bodies = small_routes()
        .into_router()
        .leptos_routes_with_context(&state, routes, move || app::kernel::state::provide(&context_state), move || shell((*shell_options).clone()))
        // The client's files: precompressed (.br, .gz) by the build, chosen by Accept-Encoding.
        .nest_service(
            "/pkg",
            tower::ServiceBuilder::new().layer(axum::middleware::from_fn(assets::refuse_impossible_names)).service(assets::pkg_service(&state.leptos_options)),
        )
        .fallback(leptos_axum::file_and_error_handler::<AppState, _>(shell))
        // One layer (one boxed service per route, cloned per request), outermost first:
        .layer(
            tower::ServiceBuilder::new()
                // 413 before any handler reads a byte when Content-Length is too large; a
                // streamed body that grows past the limit fails as it is read.
                .layer(RequestBodyLimitLayer::new(max_body_bytes))
                .map_request(|req: Request<tower_http::body::Limited<axum::body::Body>>| req.map(axum::body::Body::new))
                // A small body arrives whole within a minute (one byte every 29 s never pauses
                // long enough for the idle timeout).
                .layer(axum::middleware::from_fn_with_state(state.clone(), pace::small_bodies))
                // GET /s/{token} with a Range and a receipt resumes a download instead of the page.
                .layer(axum::middleware::from_fn_with_state(state.clone(), app::shares::routes::resume_gate)),
        );
    // Uploads stream to the blob store under their own (much larger) limit.
    let upload_limit = (state.domain::<app::shares::ShareSettings>().max_bytes + app::shares::routes::FORM_OVERHEAD).min(usize::MAX as u64) as usize;
    let uploads = upload_routes()
        .into_router()
        .layer(DefaultBodyLimit::max(upload_limit))
        // An upload keeps a minimum rate (EBB_MIN_UPLOAD_BYTES_PER_SEC).
        .layer(axum::middleware::from_fn_with_state(state.clone(), pace::uploads));
    with_request_layers(small_bodies.merge(uploads), &state, cache).with_state(state)
}

/// The layers every request passes, around `router`.
fn with_request_layers(router: Router<AppState>, state: &AppState, cache: page_cache::PageCache) -> Router<AppState> {
    // Outermost first. They are one `ServiceBuilder`, added to the router as one layer: axum
    // boxes each layer added to a router around every route, and clones the route's boxes for
    // each request, so fifteen layers were fifteen boxed clones and their frees per request (`benches/ssr.sh`, cached `GET /`: 28,100 and 28,700 req/s with a
    // layer each, 49,200 and 48,600 as one, beside nginx at about 91,000).
    let stack = tower::ServiceBuilder::new()
        // Every request's id, on its log lines and in its `x-request-id` header.
        .layer(axum::middleware::from_fn_with_state(state.clone(), telemetry::request_id))
        // Spans carry the method, the route pattern and the request id only: URIs may hold
        // tokens or searches.
        .layer(TraceLayer::new_for_http().make_span_with(|req: &Request<_>| {
            let route = req.extensions().get::<MatchedPath>().map_or("unmatched", |p| p.as_str());
            let id = req.extensions().get::<telemetry::RequestId>().map_or("", |r| r.0.as_str());
            tracing::info_span!("http", method = %req.method(), route = %route, request_id = %id)
        }))
        .layer(axum::middleware::from_fn(telemetry::http_metrics))
        // After any response: start the jobs that may be due (free when none is).
        .layer(axum::middleware::from_fn_with_state(state.clone(), telemetry::after_response))
        // Served over https (by the public URL): browsers keep to https for a year.
        .layer(SetResponseHeaderLayer::if_not_present(
            header::STRICT_TRANSPORT_SECURITY,
            state.config.public_url.starts_with("https://").then(|| HeaderValue::from_static("max-age=31536000; includeSubDomains")),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")))
        .layer(SetResponseHeaderLayer::if_not_present(header::REFERRER_POLICY, HeaderValue::from_static("same-origin")))
        .layer(SetResponseHeaderLayer::if_not_present(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")))
        // Pages and JSON compressed on the fly; downloads and the client's files never (see
        // `assets::compressible`).
        .layer(tower_http::compression::CompressionLayer::new().compress_when(assets::compressible))
        .layer(axum::middleware::from_fn(assets::cache_control))
        // GET / rendered once per language and colour scheme (`page_cache`). A visitor's GET /
        // without a session cookie is what the layers below let through unchanged (no session,
        // not an admin page, not a write), so a cached answer needs none of them; a miss goes
        // through them all and its answer becomes the template.
        .layer(axum::middleware::from_fn_with_state(cache, page_cache::serve))
        .layer(axum::middleware::from_fn_with_state(state.clone(), security::same_origin_only))
        .layer(security::session_layer(state))
        .layer(axum::middleware::from_fn_with_state(state.clone(), security::admin_gate))
        .layer(axum::middleware::from_fn_with_state(state.clone(), errors::sign_error_redirects))
        .layer(axum::middleware::from_fn(errors::server_fn_status))
        // A body that stalls (a slow-body attack, a dead client) ends its request.
        .layer(tower_http::timeout::RequestBodyTimeoutLayer::new(http::BODY_IDLE_TIMEOUT));
    router.layer(stack)
}

/// Liveness: the process answers.
async fn healthz() -> &'static str {
    "ok"
}

/// Readiness: the database answers.
async fn readyz(State(pool): State<PgPool>) -> (StatusCode, &'static str) {
    match sqlx::query_scalar!("select 1 as \"one!\"").fetch_one(&pool).await {
        Ok(_) => (StatusCode::OK, "ready"),
        Err(e) => {
            tracing::warn!(error = %e, "readiness check failed");
            (StatusCode::SERVICE_UNAVAILABLE, "database unavailable")
        }
    }
}

/// Serves until `shutdown` resolves, then stops the ticker and drains best-effort tasks.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    max_body_bytes: usize,
    maintenance_interval: Option<Duration>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    // Metrics are recorded from the start, whether or not a listener serves them.
    telemetry::recorder();
    let stop = tokio_util::sync::CancellationToken::new();
    let ticker = maintenance_interval.map(|every| tokio::spawn(maintenance::ticker(state.clone(), every, stop.clone())));
    // The home page's templates are dropped when a setting changes on any instance.
    let cache = page_cache::PageCache::new(state.clone());
    tokio::spawn(cache.clone().follow_settings());
    let app = router_with_cache(state.clone(), max_body_bytes, cache);
    // Open live streams end first, so their connections can drain.
    let closing = state.live.closing.clone();
    let shutdown = async move {
        shutdown.await;
        closing.cancel();
    };
    let limits = *state.domain::<http::Limits>();
    let result = http::serve(listener, app, limits, shutdown).await;
    stop.cancel();
    if let Some(t) = ticker {
        let _ = t.await;
    }
    if !state.background.drain(Duration::from_secs(30)).await {
        tracing::warn!("best-effort tasks still running after 30 s; abandoning them");
    }
    result
}

/// Resolves on SIGINT or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = terminate => {} }
    tracing::info!("shutdown signal received; finishing requests and background tasks");
}
