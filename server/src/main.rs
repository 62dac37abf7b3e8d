//! `ebb`: serve the site, run migrations, or run maintenance now.

use clap::{Parser, Subcommand};
use server::config::{Config, LogFormat};
use tracing_subscriber::EnvFilter;

/// mimalloc: per-thread free lists suit a request-per-task server (see benches/contact-profile.sh).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "ebb", version, about = "Ebb: contact form, one-time shares and a verified audit archive")]
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
    Migrate,
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
}

#[derive(Subcommand)]
enum AdminCommand {
    /// Print a one-time invite link (valid 30 minutes) with which a person becomes an admin.
    Invite {
        /// The invited person's name, suggested on the invite page.
        #[arg(long)]
        name: Option<String>,
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
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
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
    // Storage commands need no database.
    match &cli.command {
        Some(Command::Storage { command: StorageCommand::Setup }) => return server::storage_setup(&config, &mut std::io::stdout()).await,
        Some(Command::Storage { command: StorageCommand::Check }) => {
            let store = server::open_store(&config)?;
            app::storage::self_check(&*store).await.map_err(|e| format!("storage check failed: {e}"))?;
            println!("storage: ok (a probe object was written, read back with its size and CRC32C, and deleted)");
            return Ok(());
        }
        _ => {}
    }
    let pool = server::connect(&config).await?;
    match cli.command.unwrap_or(Command::Serve) {
        Command::Migrate => {
            migrate(&pool).await?;
            println!("migrations applied");
            Ok(())
        }
        Command::Maintenance { command: MaintenanceCommand::Run { jobs, force } } => run_maintenance(&config, &pool, &jobs, force).await,
        Command::Maintenance { command: MaintenanceCommand::Status } => {
            let state = server::build_state_with_store(&config, pool.clone(), server::open_store(&config)?);
            migrate(&pool).await?;
            server::maintenance::status(&state, &mut std::io::stdout()).await
        }
        Command::Retention { command: RetentionCommand::Report { json } } => {
            let state = server::build_state_with_store(&config, pool.clone(), server::open_store(&config)?);
            migrate(&pool).await?;
            server::maintenance::retention_report(&state, json, &mut std::io::stdout()).await
        }
        Command::Storage { .. } => unreachable!("handled before connecting"),
        Command::Admin { command: AdminCommand::Invite { name } } => {
            migrate(&pool).await?;
            let invite = server::create_invite(&pool, &config, name.as_deref()).await?;
            println!("Invite link (works once, until {} UTC):", app::time::format_time(invite.expires_at).trim_end_matches(" UTC"));
            println!("{}", invite.url);
            Ok(())
        }
        Command::Serve => serve(&config, &pool).await,
    }
}

async fn migrate(pool: &sqlx::PgPool) -> Result<(), String> {
    server::MIGRATOR.run(pool).await.map_err(|e| format!("database migration failed: {e}"))
}

/// `ebb maintenance run`: the jobs asked for, run now once the store is checked.
async fn run_maintenance(config: &Config, pool: &sqlx::PgPool, jobs: &[String], force: bool) -> Result<(), String> {
    let state = server::build_state_with_store(config, pool.clone(), server::open_store(config)?);
    migrate(pool).await?;
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
    let state = server::build_state_with_store(config, pool.clone(), server::open_store(config)?);
    // A wrong storage path must stop the server here, not make every delete "succeed".
    server::probe_storage(&state, config).await?;
    migrate(pool).await?;
    server::check_storage_marker(&state, config).await?;
    if let Some(addr) = config.metrics_bind.0 {
        // Metrics are for operators: a taken port (a second instance on this host) must
        // not keep the site down. Said loudly, once.
        if let Err(e) = server::telemetry::serve_metrics(addr).await {
            tracing::warn!("metrics disabled: {e}");
        }
    }
    server::invite_first_admin_if_none(pool, config, &mut std::io::stderr()).await?;
    let listener = tokio::net::TcpListener::bind(config.bind)
        .await
        .map_err(|e| format!("cannot listen on {} ({e}); is another process using it? set EBB_BIND", config.bind))?;
    tracing::info!(addr = %config.bind, public_url = %config.public_url, "Ebb is listening");
    server::serve(listener, state, config.max_body_bytes as usize, Some(config.maintenance_interval()), server::shutdown_signal())
        .await
        .map_err(|e| format!("server error: {e}"))
}
