//! `ebb`: serve the site, run migrations, or run maintenance now.

use clap::{Parser, Subcommand};
use server::config::{Config, LogFormat};
use tracing_subscriber::EnvFilter;

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
enum MaintenanceCommand {
    /// Run the prune job now. It honours the hourly claim unless --force is given.
    Run {
        /// Run even if another run happened within the claim interval.
        #[arg(long)]
        force: bool,
    },
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
    let pool = server::connect(&config).await?;
    let migrate = || async {
        server::MIGRATOR.run(&pool).await.map_err(|e| format!("database migration failed: {e}"))
    };
    match cli.command.unwrap_or(Command::Serve) {
        Command::Migrate => {
            migrate().await?;
            println!("migrations applied");
            Ok(())
        }
        Command::Maintenance { command: MaintenanceCommand::Run { force } } => {
            let state = server::build_state(&config, pool.clone());
            // The GC trusts the store's deletes: check the store first.
            server::check_storage(&state, &config).await?;
            migrate().await?;
            let report = server::maintenance::run_now(&state, force).await;
            let mut failed = Vec::new();
            match report.prune {
                Ok(app::maintenance::prune::PruneOutcome::NotDue) => {
                    println!("prune: not due (it ran less than an hour ago); use --force to run it anyway")
                }
                Ok(app::maintenance::prune::PruneOutcome::Ran(steps)) => {
                    for s in steps {
                        println!("prune: {:<22} deleted {:>8} in {} batch(es){}", s.step, s.report.deleted, s.report.batches, if s.report.more { " (more left for the next run)" } else { "" });
                    }
                }
                Err(e) => failed.push(format!("prune failed: {e}")),
            }
            match report.share_gc {
                Ok(None) => println!("share GC: another run started less than a minute ago; use --force to run it anyway"),
                Ok(Some(r)) => println!("share GC: purged {} share(s), {} failed delete(s) (retried later, see the log)", r.purged, r.failed),
                Err(e) => failed.push(format!("share GC failed: {e}")),
            }
            match report.abandoned_uploads {
                Ok(n) => println!("uploads: removed {n} file(s) left by interrupted uploads"),
                Err(e) => failed.push(format!("removing interrupted uploads failed: {e}")),
            }
            if failed.is_empty() {
                Ok(())
            } else {
                Err(failed.join("; "))
            }
        }
        Command::Admin { command: AdminCommand::Invite { name } } => {
            migrate().await?;
            let invite = server::create_invite(&pool, &config, name.as_deref()).await?;
            println!("Invite link (works once, until {} UTC):", app::time::format_time(invite.expires_at).trim_end_matches(" UTC"));
            println!("{}", invite.url);
            Ok(())
        }
        Command::Serve => {
            let state = server::build_state(&config, pool.clone());
            // A wrong storage path must stop the server here, not make every delete "succeed".
            server::check_storage(&state, &config).await?;
            migrate().await?;
            server::invite_first_admin_if_none(&pool, &config).await?;
            let listener = tokio::net::TcpListener::bind(config.bind)
                .await
                .map_err(|e| format!("cannot listen on {} ({e}); is another process using it? set EBB_BIND", config.bind))?;
            tracing::info!(addr = %config.bind, public_url = %config.public_url, "Ebb is listening");
            server::serve(listener, state, config.max_body_bytes as usize, Some(config.maintenance_interval()), server::shutdown_signal())
                .await
                .map_err(|e| format!("server error: {e}"))
        }
    }
}
