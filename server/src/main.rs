//! `ebb`: serve the site, run migrations, or run maintenance now.

use clap::{Parser, Subcommand};
use server::config::{Config, LogFormat};
use tracing_subscriber::EnvFilter;

/// mimalloc: per-thread free lists suit a request-per-task server (see benches/contact-profile.sh).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "ebb", version = concat!(env!("CARGO_PKG_VERSION"), " (", env!("EBB_COMMIT"), ")"), about = "Ebb: contact form, one-time shares and a verified audit archive")]
struct Cli {
    #[command(flatten)]
    config: Config,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Apply migrations and serve (the default).
    Serve,
    /// Apply pending database migrations and exit.
    Migrate {
        /// Only list the pending migrations (and any the database has that this binary does not
        /// know); change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Check this installation: configuration, database and migrations, clocks, storage and its
    /// marker, the S3 lifecycle rule, SMTP, the public URL, open alerts and overdue retention.
    /// Prints a report; exits 1 when something needs fixing.
    Doctor {
        /// After restoring a backup: also check every live share's file and every archived
        /// month against the database, and redo the deletions recorded since the backup.
        #[arg(long)]
        after_restore: bool,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Maintenance jobs.
    Maintenance {
        #[command(subcommand)]
        command: MaintenanceCommand,
    },
    /// Object storage.
    Storage {
        #[command(subcommand)]
        command: StorageCommand,
    },
    /// Retention: what Ebb keeps and its promises.
    Retention {
        #[command(subcommand)]
        command: RetentionCommand,
    },
    /// Admin accounts.
    Admin {
        #[command(subcommand)]
        command: AdminCommand,
    },
    /// A person's data request: find, copy (JSON) or erase everything Ebb holds for an address.
    Requests {
        #[command(subcommand)]
        command: RequestsCommand,
    },
    /// The tamper-evident audit trail: verify it, rotate its signing key, write a digest now.
    Audit {
        #[command(subcommand)]
        command: AuditCommand,
    },
}

#[derive(Subcommand)]
enum AuditCommand {
    /// Verify the audit trail: the signed digests in the storage, every month's hash chain in the
    /// database and, with --archive, every archived month's object. Names the first broken place
    /// (event id, month, digest) and exits 1 when anything does not verify.
    Verify {
        /// Also read and check every archived month's object.
        #[arg(long)]
        archive: bool,
        /// Without the database: only the storage (digests and archived months) and public keys.
        #[arg(long)]
        offline: bool,
        /// A trusted public key file (`/audit/keys.json` as downloaded, or one `key-<id>.json`);
        /// repeat for several. Without it, the keys published in the storage itself are used.
        #[arg(long = "key", value_name = "FILE")]
        keys: Vec<std::path::PathBuf>,
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Make a new digest signing key; every other key is retired (its digests stay verifiable,
    /// an instance still holding it signs nothing more). Also the way out when the key was lost.
    RotateKey,
    /// Seal what is waiting and write a signed digest now.
    Digest,
    /// Watch a transparency log from outside: fetch URL/audit/checkpoint, check its signature,
    /// prove that it contains the checkpoint seen last time (kept in --state) and keep it.
    /// Exits 1 naming both sizes when the log was rolled back or forked.
    Watch {
        /// Ebb's public address (https://ebb.example.org).
        url: String,
        /// A trusted public key file (`/audit/keys.json` as downloaded once); repeat for
        /// several. Without it, the keys the server publishes now are used (which proves less).
        #[arg(long = "key", value_name = "FILE")]
        keys: Vec<std::path::PathBuf>,
        /// The file that keeps the last checkpoint seen.
        #[arg(long, value_name = "FILE", default_value = "ebb-audit-checkpoint.txt")]
        state: std::path::PathBuf,
    },
}

#[derive(Subcommand)]
enum RequestsCommand {
    /// List what Ebb holds for EMAIL, by kind (an audit event; nothing changes).
    Find { email: String },
    /// Record a copy request for EMAIL and write the copy (JSON with its cover sheet) to --out or
    /// standard output; the request is closed as answered.
    Export {
        email: String,
        /// Write the copy to this file instead of standard output.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
    /// Show what an erasure for EMAIL would remove and what stays (a dry run); with --yes, record
    /// an erasure request and erase, in the same bounded batches as the admin page.
    Erase {
        email: String,
        /// Erase (without it: the dry run only).
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Subcommand)]
enum AdminCommand {
    /// Print a one-time invite link (valid 30 minutes) with which a person becomes an admin.
    Invite {
        /// The invited person's name, suggested on the invite page.
        #[arg(long)]
        name: Option<String>,
        /// The role the new admin gets: owner (everything, manages admins and settings), admin
        /// (inbox, shares, requests, holds) or auditor (reads the audit trail and the retention
        /// report).
        #[arg(long, default_value = "owner", value_parser = parse_role)]
        role: app::auth::Role,
    },
    /// List the admins: id, role, when they joined, passkeys, sessions signed in now, name.
    List,
    /// Change an admin's role, from the host (break-glass: no session needed). Their sessions
    /// have the new role at once. Recorded in the audit log as the operator's. The last owner
    /// stays an owner.
    Role {
        /// The admin's id, or a name no other admin has (`ebb admin list`).
        admin: String,
        /// owner, admin or auditor.
        #[arg(value_parser = parse_role)]
        role: app::auth::Role,
    },
    /// Remove an admin at once, from the host (break-glass: no session needed): their sessions
    /// end, their passkeys are deleted, and a restore of an older backup cannot bring them back.
    /// Recorded in the audit log as the operator's. The last admin cannot be removed.
    Remove {
        /// The admin's id, or a name no other admin has (`ebb admin list`).
        admin: String,
    },
}

#[derive(Subcommand)]
enum RetentionCommand {
    /// Print, for each kind of data, its promise, how many items exist, the oldest one's age, how
    /// many are past their promise or on legal hold, and what the job that removes them last did.
    /// Exits 1 when items are past their promise by more than one job interval.
    Report {
        /// Print JSON (the same document as the admin page's download).
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum StorageCommand {
    /// Apply the bucket settings Ebb relies on (a lifecycle rule expiring exports/ after 7 days)
    /// where the server supports them, and report what could not be applied.
    Setup,
    /// Check the store now: write, read back (size and CRC32C) and delete a probe object.
    Check,
}

#[derive(Subcommand)]
enum MaintenanceCommand {
    /// Run jobs now (all, or the ones named), honouring their claims unless --force is given.
    Run {
        /// Jobs to run (`prune`, `share_gc`); all when none is named.
        jobs: Vec<String>,
        /// Run even if another run happened within the claim interval.
        #[arg(long)]
        force: bool,
    },
    /// Show every job's last run and when the next may start.
    Status,
}

fn init_tracing(format: LogFormat) {
    let filter = EnvFilter::try_from_env("RUST_LOG").unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn"));
    // Logs go to stderr: stdout is what a command prints (`ebb requests export … > file`,
    // `ebb doctor --json | jq`). Under systemd both reach the journal.
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    match format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.init(),
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    init_tracing(cli.config.log_format);
    // Test builds only: crash points named in FAILPOINTS (the crash tests pause the process
    // there and kill it).
    #[cfg(feature = "failpoints")]
    let _failpoints = fail::FailScenario::setup();
    match run(cli).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(msg) => {
            tracing::error!("{msg}");
            eprintln!("ebb: {msg}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> Result<(), String> {
    let config = cli.config;
    // A witness key that cannot be read stops every command, naming it.
    config.witnesses()?;
    // Storage commands need no database.
    match &cli.command {
        Some(Command::Storage { command: StorageCommand::Setup }) => return server::storage_setup(&config, &mut std::io::stdout()).await,
        Some(Command::Storage { command: StorageCommand::Check }) => {
            let store = server::open_store(&config)?;
            app::storage::self_check(&*store).await.map_err(|e| format!("storage check failed: {e}"))?;
            println!("storage: ok (a probe object was written, read back with its size and CRC32C, and deleted)");
            return Ok(());
        }
        Some(Command::Audit { command: AuditCommand::Watch { url, keys, state } }) => {
            let keys = if keys.is_empty() {
                eprintln!("ebb: no --key given: trusting the keys {url} publishes now (download /audit/keys.json once and pass it with --key)");
                server::watch::published_keys(url).await?
            } else {
                read_keys(keys)?
            };
            println!("{}", server::watch::watch(url, &keys, state).await?);
            return Ok(());
        }
        Some(Command::Audit { command: AuditCommand::Verify { offline: true, keys, json, .. } }) => {
            let store = server::open_store(&config)?;
            let keys = if keys.is_empty() { None } else { Some(read_keys(keys)?) };
            let report = app::audit::chain::verify::offline(&*store, keys).await?;
            return print_report(&report, *json);
        }
        _ => {}
    }
    if let Some(Command::Doctor { after_restore, json }) = &cli.command {
        // The doctor reports an unreachable database instead of stopping at it.
        let report = server::doctor::run(&config, *after_restore).await;
        return server::doctor::print(&report, *json, &mut std::io::stdout());
    }
    let pool = server::connect(&config).await?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Migrate { dry_run: true } => {
            let plan = server::doctor::migration_plan(&pool).await?;
            print!("{}", plan.describe());
            if plan.unknown.is_empty() {
                Ok(())
            } else {
                Err("the database has migrations this binary does not know: it belongs to a newer Ebb".into())
            }
        }
        Command::Migrate { dry_run: false } => {
            migrate(&pool).await?;
            println!("migrations applied");
            Ok(())
        }
        Command::Maintenance { command: MaintenanceCommand::Run { jobs, force } } => run_maintenance(&config, &pool, &jobs, force).await,
        Command::Maintenance { command: MaintenanceCommand::Status } => {
            migrate(&pool).await?;
            let state = server::build_state(&config, pool.clone()).await?;
            server::maintenance::status(&state, &mut std::io::stdout()).await
        }
        Command::Retention { command: RetentionCommand::Report { json } } => {
            migrate(&pool).await?;
            let state = server::build_state(&config, pool.clone()).await?;
            server::maintenance::retention_report(&state, json, &mut std::io::stdout()).await
        }
        Command::Storage { .. } | Command::Doctor { .. } => unreachable!("handled before connecting"),
        Command::Admin { command } => admin(&config, &pool, command).await,
        Command::Audit { command } => audit(&config, &pool, command).await,
        Command::Requests { command } => requests(&config, &pool, command).await,
        Command::Serve => serve(&config, &pool).await,
    }
}

/// A role named on the command line.
fn parse_role(s: &str) -> Result<app::auth::Role, String> {
    app::auth::Role::parse(s).ok_or_else(|| format!("{s:?} is not a role: owner, admin or auditor"))
}

/// `ebb admin …` with the database.
async fn admin(config: &Config, pool: &sqlx::PgPool, command: AdminCommand) -> Result<(), String> {
    migrate(pool).await?;
    match command {
        AdminCommand::Invite { name, role } => {
            let invite = server::create_invite(pool, config, name.as_deref(), role).await?;
            println!("For a new {role}.");
            println!("Invite link (works once, until {} UTC):", app::time::format_time(invite.expires_at).trim_end_matches(" UTC"));
            println!("{}", invite.url);
        }
        AdminCommand::List => {
            let admins = app::auth::db::list_admins(pool).await.map_err(|e| format!("database error: {e}"))?;
            println!("{:<36}  {:<7}  {:<10}  {:>8}  {:>8}  name", "id", "role", "joined", "passkeys", "sessions");
            for a in admins {
                let (id, role, joined) = (a.id.to_string(), a.role.to_string(), a.created_at.date().to_string());
                println!("{id:<36}  {role:<7}  {joined:<10}  {:>8}  {:>8}  {}", a.passkeys, a.sessions, a.name);
            }
        }
        AdminCommand::Role { admin, role } => {
            println!("{}", server::change_admin(&server::build_state(config, pool.clone()).await?, &admin, app::auth::db::Change::Role(role)).await?);
        }
        AdminCommand::Remove { admin } => {
            let state = server::build_state(config, pool.clone()).await?;
            // The journal entry goes to the real store only.
            server::probe_storage(&state, config).await?;
            server::check_storage_marker(&state, config).await?;
            println!("{}", server::remove_admin(&state, &admin).await?);
        }
    }
    Ok(())
}

/// `ebb audit …` with the database.
async fn audit(config: &Config, pool: &sqlx::PgPool, command: AuditCommand) -> Result<(), String> {
    migrate(pool).await?;
    let state = server::build_state(config, pool.clone()).await?;
    // Digests and key files go to the real store only.
    server::probe_storage(&state, config).await?;
    server::check_storage_marker(&state, config).await?;
    match command {
        AuditCommand::Verify { archive, keys, json, .. } => {
            if !keys.is_empty() {
                // The trusted keys must be the ones the database registered.
                let trusted = read_keys(&keys)?;
                let published = app::audit::chain::keys::published(pool).await.map_err(|e| e.to_string())?;
                if let Some(k) = published.iter().find(|p| !trusted.iter().any(|t| t.public_key == p.public_key)) {
                    return Err(format!("the database's signing key {} is not among the trusted keys given with --key", k.key_id));
                }
            }
            let report = app::audit::chain::job::run(&state, archive, &app::kernel::audit::Actor::system()).await?;
            print_report(&report, json)
        }
        AuditCommand::RotateKey => {
            let id = app::audit::chain::keys::rotate(&state).await?;
            println!("new digest signing key {id}; the old key is retired and stays published for the digests it signed");
            Ok(())
        }
        AuditCommand::Digest => {
            let settings = state.domain::<app::audit::chain::ChainSettings>();
            let sealed = app::audit::chain::seal::seal_all(
                pool,
                app::audit::chain::seal::BATCH,
                settings.late_limit,
                std::time::Instant::now() + std::time::Duration::from_secs(3600),
            )
            .await
            .map_err(|e| e.to_string())?;
            let n = app::audit::chain::digest::write(&state, app::audit::chain::digest::Reason::Asked, true).await?;
            let signed = app::audit::chain::tlog::checkpoint(&state).await?;
            println!(
                "{} events sealed; digest {} written; {}",
                sealed.sealed,
                n.unwrap_or_default(),
                signed.map_or("the log's checkpoint is current".to_string(), |size| format!("the log's checkpoint signed at {size} entries"))
            );
            Ok(())
        }
        AuditCommand::Watch { .. } => Err("`ebb audit watch` needs no database; it is run before one is opened".into()),
    }
}

/// `ebb requests …`.
async fn requests(config: &Config, pool: &sqlx::PgPool, command: RequestsCommand) -> Result<(), String> {
    migrate(pool).await?;
    // The keyring keys the addresses' hashes; the store is checked as by every command.
    let state = server::build_state(config, pool.clone()).await?;
    server::check_storage(&state, config).await?;
    use server::requests::{cli, CliAction};
    match command {
        RequestsCommand::Find { email } => cli(&state, CliAction::Find, &email, &mut std::io::stdout()).await,
        RequestsCommand::Erase { email, yes } => cli(&state, CliAction::Erase { yes }, &email, &mut std::io::stdout()).await,
        RequestsCommand::Export { email, out: None } => cli(&state, CliAction::Export, &email, &mut std::io::stdout()).await,
        RequestsCommand::Export { email, out: Some(path) } => {
            let mut file = std::fs::File::create(&path).map_err(|e| format!("cannot create {} ({e})", path.display()))?;
            cli(&state, CliAction::Export, &email, &mut file).await?;
            eprintln!("copy written to {}", path.display());
            Ok(())
        }
    }
}

/// Public keys from files: `/audit/keys.json` as served, or one key object.
fn read_keys(files: &[std::path::PathBuf]) -> Result<Vec<app::audit::chain::keys::PublicKey>, String> {
    let mut keys = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).map_err(|e| format!("cannot read key file {} ({e})", f.display()))?;
        let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{} is not a key file ({e})", f.display()))?;
        let list = v.get("keys").cloned().unwrap_or(serde_json::Value::Array(vec![v]));
        let parsed: Vec<app::audit::chain::keys::PublicKey> = serde_json::from_value(list).map_err(|e| format!("{} is not a key file ({e})", f.display()))?;
        keys.extend(parsed);
    }
    Ok(keys)
}

fn print_report(report: &app::audit::chain::verify::Report, json: bool) -> Result<(), String> {
    if json {
        println!("{}", serde_json::to_string_pretty(report).unwrap_or_default());
    } else {
        for p in &report.problems {
            println!("BROKEN  {}: {}", p.place(), p.what);
        }
        for w in &report.warnings {
            println!("WARN    {w}");
        }
        println!("{}", report.summary());
    }
    if report.ok() {
        Ok(())
    } else {
        Err(format!("the audit trail does not verify (first break at {})", report.problems[0].place()))
    }
}

async fn migrate(pool: &sqlx::PgPool) -> Result<(), String> {
    let newer = server::migrate(pool).await?;
    if !newer.is_empty() {
        tracing::warn!(
            migrations = ?newer,
            "the database was migrated by a newer Ebb; its migrations only expand the schema, so this older binary runs beside them — upgrade it when you can"
        );
    }
    Ok(())
}

/// `ebb maintenance run`: the jobs asked for, run now once the store is checked.
async fn run_maintenance(config: &Config, pool: &sqlx::PgPool, jobs: &[String], force: bool) -> Result<(), String> {
    migrate(pool).await?;
    let state = server::build_state(config, pool.clone()).await?;
    // The GC trusts the store's deletes: check the store (probe and marker) first. A
    // check that fails is a failed run of every job asked for: recorded and alerted on,
    // so an operator's scheduler is not the only one to know.
    let checked = async {
        server::probe_storage(&state, config).await?;
        server::check_storage_marker(&state, config).await
    };
    if let Err(why) = checked.await {
        server::maintenance::record_not_started(&state, jobs, &why).await;
        return Err(why);
    }
    server::maintenance::run_now(&state, jobs, force, &mut std::io::stdout()).await
}

/// `ebb serve`: checks what a start depends on (settings, store, migrations), then serves until
/// a shutdown signal.
async fn serve(config: &Config, pool: &sqlx::PgPool) -> Result<(), String> {
    // A notification setting that cannot work stops the start, with what is wrong.
    config.notify_settings()?;
    let store = server::open_store(config)?;
    // A wrong storage path must stop the server here, not make every delete "succeed".
    server::probe_store(&*store, config).await?;
    migrate(pool).await?;
    let state = server::build_state_with_store(config, pool.clone(), store).await?;
    server::check_storage_marker(&state, config).await?;
    // A database restored from a backup is refused until `ebb doctor --after-restore` ran; on
    // any other, what the deletion journal says was deleted since the last start stays deleted
    // (a deletion cut short by a crash is finished).
    let (erased, purged) = server::restore::redo_since_last_start(&state).await?;
    if erased + purged > 0 {
        tracing::info!(erased, purged, "deletions the journal records that had not committed (cut short by a crash) were finished");
    }
    // The digest signing key exists (and its public key is published) from the first start.
    app::audit::chain::keys::signer(&state).await?;
    if let Some(addr) = config.metrics_bind.0 {
        // Metrics are for operators: a taken port (a second instance on this host) must
        // not keep the site down. Said loudly, once.
        if let Err(e) = server::telemetry::serve_metrics(addr).await {
            tracing::warn!("metrics disabled: {e}");
        }
    }
    server::invite_first_admin_if_none(pool, config, &mut std::io::stderr()).await?;
    // One descriptor per connection: systemd's soft default (1,024) would cap them far below
    // EBB_MAX_CONNECTIONS.
    let fds = server::http::raise_fd_limit();
    tracing::debug!(fds, "file-descriptor limit");
    let listener = tokio::net::TcpListener::bind(config.bind)
        .await
        .map_err(|e| format!("cannot listen on {} ({e}); is another process using it? set EBB_BIND", config.bind))?;
    tracing::info!(addr = %config.bind, public_url = %config.public_url, "Ebb is listening");
    server::serve(listener, state, config.max_body_bytes as usize, Some(config.maintenance_interval()), server::shutdown_signal())
        .await
        .map_err(|e| format!("server error: {e}"))
}
