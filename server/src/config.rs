//! Configuration: every setting comes from an environment variable (or the matching flag), is
//! validated once at start-up, and an invalid value stops the process with a clear message.
//! `.env.example` and the README list them all.

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use clap::{Args, ValueEnum};
use url::Url;

/// Settings shared by every subcommand.
#[derive(Debug, Clone, Args)]
pub struct Config {
    /// PostgreSQL connection URL. `make run` starts a project-local cluster when unset.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub database_url: String,

    /// Most connections in the pool.
    #[arg(long, env = "EBB_DB_MAX_CONNECTIONS", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=500))]
    pub db_max_connections: u32,

    /// The public URL people use to reach Ebb (origin of links; the WebAuthn relying party).
    #[arg(long, env = "EBB_PUBLIC_URL", default_value = "http://localhost:3000", value_parser = parse_public_url)]
    pub public_url: Url,

    /// Address and port to listen on.
    #[arg(long, env = "EBB_BIND", default_value = "127.0.0.1:3000")]
    pub bind: SocketAddr,

    /// Folder holding the built client (`pkg/ebb.js`, `pkg/ebb_bg.wasm`, `pkg/ebb.css`).
    #[arg(long, env = "LEPTOS_SITE_ROOT", default_value = "target/site")]
    pub site_root: PathBuf,

    /// Folder where shared files are stored (outside any served folder). It must exist: Ebb does
    /// not create it, so a mistyped path fails the start-up self-check instead of silently
    /// starting empty.
    #[arg(long, env = "EBB_STORAGE_DIR", default_value = "data/blobs")]
    pub storage_dir: PathBuf,

    /// Largest file an admin may share, in bytes (default 1 GiB).
    #[arg(long, env = "EBB_SHARE_MAX_BYTES", default_value_t = 1 << 30, value_parser = clap::value_parser!(u64).range(1..=1_099_511_627_776))]
    pub share_max_bytes: u64,

    /// Longest expiry an admin may choose for a share, in hours (1 to 720 = 30 days).
    #[arg(long, env = "EBB_SHARE_MAX_EXPIRY_HOURS", default_value_t = 720, value_parser = clap::value_parser!(u32).range(1..=720))]
    pub share_max_expiry_hours: u32,

    /// Minutes a downloaded share's file is kept before the GC deletes it. Must be longer than
    /// any download takes: a download in progress reads the file.
    #[arg(long, env = "EBB_SHARE_DELIVERY_GRACE_MINS", default_value_t = 15, value_parser = clap::value_parser!(u64).range(1..=10_080))]
    pub share_delivery_grace_mins: u64,

    /// Seconds between runs of the in-process maintenance ticker (each run still honours the
    /// jobs' claims, so several instances do not multiply the work).
    #[arg(long, env = "EBB_MAINTENANCE_INTERVAL_SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(5..=86_400))]
    pub maintenance_interval_secs: u64,

    /// Number of reverse proxies in front of Ebb that append to X-Forwarded-For. 0 (the default)
    /// ignores the header: only trust it when a proxy you control sets it.
    #[arg(long, env = "EBB_TRUSTED_PROXY_HOPS", default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=10))]
    pub trusted_proxy_hops: u64,

    /// Contact submissions allowed per client per window.
    #[arg(long, env = "EBB_CONTACT_RATE_LIMIT", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub contact_rate_limit: u32,

    /// Length of the contact rate-limit window, in seconds.
    #[arg(long, env = "EBB_CONTACT_RATE_WINDOW_SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub contact_rate_window_secs: u64,

    /// Largest request body accepted, in bytes; larger requests get 413.
    #[arg(long, env = "EBB_MAX_BODY_BYTES", default_value_t = 65_536, value_parser = clap::value_parser!(u64).range(1024..=16_777_216))]
    pub max_body_bytes: u64,

    /// Rows deleted per statement by prune.
    #[arg(long, env = "EBB_PRUNE_BATCH_SIZE", default_value_t = 1000, value_parser = clap::value_parser!(i64).range(1..=100_000))]
    pub prune_batch_size: i64,

    /// Hours a signed-in session may stay unused before it ends.
    #[arg(long, env = "EBB_SESSION_IDLE_HOURS", default_value_t = 12, value_parser = clap::value_parser!(u64).range(1..=720))]
    pub session_idle_hours: u64,

    /// Days after sign-in when a session ends, however active.
    #[arg(long, env = "EBB_SESSION_ABSOLUTE_DAYS", default_value_t = 7, value_parser = clap::value_parser!(u64).range(1..=90))]
    pub session_absolute_days: u64,

    /// Attempts per client per 5 minutes on each authentication endpoint.
    #[arg(long, env = "EBB_AUTH_RATE_LIMIT", default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub auth_rate_limit: u32,

    /// Attempts from all clients together per 5 minutes on each authentication endpoint.
    #[arg(long, env = "EBB_AUTH_TOTAL_RATE_LIMIT", default_value_t = 300, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub auth_total_rate_limit: u32,

    /// Start due jobs after any response (the design card's best-effort pruning after each
    /// response; free when nothing is due). `false` only to measure what it costs.
    #[arg(long, env = "EBB_AFTER_RESPONSE_JOBS", default_value_t = true, action = clap::ArgAction::Set)]
    pub after_response_jobs: bool,

    /// Where Prometheus metrics are served (`GET /metrics`), on their own listener so they are
    /// never public by accident; empty disables them.
    #[arg(long, env = "EBB_METRICS_BIND", default_value = "127.0.0.1:9464", value_parser = parse_optional_addr)]
    pub metrics_bind: OptionalAddr,

    /// Log format.
    #[arg(long, env = "EBB_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// A listen address, or none (the setting was empty).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionalAddr(pub Option<SocketAddr>);

fn parse_optional_addr(raw: &str) -> Result<OptionalAddr, String> {
    if raw.trim().is_empty() {
        return Ok(OptionalAddr(None));
    }
    raw.trim().parse().map(|a| OptionalAddr(Some(a))).map_err(|e| format!("not an address and port such as 127.0.0.1:9464 ({e}); empty disables metrics"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

impl Config {
    pub fn maintenance_interval(&self) -> Duration {
        Duration::from_secs(self.maintenance_interval_secs)
    }

    /// The public origin without a trailing slash (`http://localhost:3000`).
    pub fn public_origin(&self) -> String {
        self.public_url.origin().ascii_serialization()
    }

    /// The WebAuthn relying party: id = the public URL's host, origin = the public origin.
    pub fn webauthn(&self) -> Result<webauthn_rs::Webauthn, String> {
        let rp_id = self.public_url.host_str().ok_or("EBB_PUBLIC_URL has no host")?;
        webauthn_rs::WebauthnBuilder::new(rp_id, &self.public_url)
            .and_then(|b| b.rp_name("Ebb").build())
            .map_err(|e| format!("EBB_PUBLIC_URL cannot be used for passkeys: {e}"))
    }
}

/// Accepts an http(s) origin whose host is a domain name: WebAuthn refuses an IP address as
/// relying party id, so Ebb refuses it here, at start-up, rather than at the first sign-in.
fn parse_public_url(raw: &str) -> Result<Url, String> {
    let url = Url::parse(raw).map_err(|e| format!("not a URL ({e}); use e.g. https://ebb.example.org"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err("must start with http:// or https://".into());
    }
    match url.host() {
        Some(url::Host::Domain(_)) => {}
        Some(_) => {
            return Err(
                "must use a host name, not an IP address: passkeys (WebAuthn) cannot use an IP address as relying party id; use http://localhost:3000 locally"
                    .into(),
            )
        }
        None => return Err("must include a host name".into()),
    }
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() {
        return Err("must be an origin only (scheme, host and optional port), without a path".into());
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_metrics_address_disables_metrics() {
        assert_eq!(parse_optional_addr("").unwrap(), OptionalAddr(None));
        assert_eq!(parse_optional_addr("127.0.0.1:9464").unwrap(), OptionalAddr(Some("127.0.0.1:9464".parse().unwrap())));
        assert!(parse_optional_addr("localhost").unwrap_err().contains("empty disables"));
    }

    #[test]
    fn public_url_accepts_origins_with_host_names() {
        assert!(parse_public_url("http://localhost:3000").is_ok());
        assert!(parse_public_url("https://ebb.example.org").is_ok());
    }

    #[test]
    fn public_url_refuses_ip_addresses_paths_and_other_schemes() {
        assert!(parse_public_url("http://127.0.0.1:3000").unwrap_err().contains("IP address"));
        assert!(parse_public_url("http://[::1]:3000").unwrap_err().contains("IP address"));
        assert!(parse_public_url("https://example.org/ebb").is_err());
        assert!(parse_public_url("ftp://example.org").is_err());
        assert!(parse_public_url("example.org").is_err());
    }
}
