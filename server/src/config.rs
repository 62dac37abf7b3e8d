//! Configuration: every setting comes from an environment variable (or the matching flag), is
//! validated once at start-up, and an invalid value stops the process with a clear message.
//! `.env.example` and docs/operator.md list them all.

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use clap::{Args, ValueEnum};
use url::Url;

/// Settings shared by every subcommand.
#[derive(Debug, Clone, Args)]
pub struct Config {
    /// PostgreSQL connection URL. `make run` starts a project-local cluster when unset. A secret
    /// (it may hold a password): never shown by `Debug`. Commands that need no database
    /// (`ebb audit watch`, `ebb storage …`) run without it.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true, default_value = "")]
    pub database_url: Secret,

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

    /// Where objects (shared files, archived months, exports) are stored: `local` (a folder,
    /// EBB_STORAGE_DIR) or `s3` (the EBB_S3_* settings).
    #[arg(long, env = "EBB_STORAGE", value_enum, default_value_t = StorageKind::Local)]
    pub storage: StorageKind,

    /// Folder where objects are stored with EBB_STORAGE=local (outside any served folder). It
    /// must exist: Ebb does not create it, so a mistyped path fails the start-up self-check
    /// instead of silently starting empty.
    #[arg(long, env = "EBB_STORAGE_DIR", default_value = "data/blobs")]
    pub storage_dir: PathBuf,

    #[command(flatten)]
    pub s3: S3Config,

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

    /// Rate limits count an IPv6 client by this many leading bits of its address (one /64 is
    /// usually one subscriber); IPv4 clients by their address.
    #[arg(long, env = "EBB_RATE_LIMIT_IPV6_PREFIX", default_value_t = 64, value_parser = clap::value_parser!(u8).range(48..=128))]
    pub rate_limit_ipv6_prefix: u8,

    /// Contact submissions allowed per client per window.
    #[arg(long, env = "EBB_CONTACT_RATE_LIMIT", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub contact_rate_limit: u32,

    /// Length of the contact rate-limit window, in seconds.
    #[arg(long, env = "EBB_CONTACT_RATE_WINDOW_SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub contact_rate_window_secs: u64,

    /// The contact form's proof of work: how many numbers a browser may have to try (ALTCHA's
    /// `maxnumber`; half on average). Higher costs bots more and slow phones too.
    #[arg(long, env = "EBB_SPAM_POW_DIFFICULTY", default_value_t = app::contact::spam::DEFAULT_DIFFICULTY, value_parser = clap::value_parser!(u64).range(1_000..=50_000_000))]
    pub spam_pow_difficulty: u64,

    /// A contact submission sent sooner than this many seconds after the page was served counts
    /// as a spam signal ("too_fast").
    #[arg(long, env = "EBB_SPAM_MIN_FILL_SECS", default_value_t = 3, value_parser = clap::value_parser!(u64).range(0..=600))]
    pub spam_min_fill_secs: u64,

    /// Most connections open at once (lowered to what the file-descriptor limit allows); beyond
    /// it a new connection is closed at once.
    #[arg(long, env = "EBB_MAX_CONNECTIONS", default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(16..=1_000_000))]
    pub max_connections: u64,

    /// Most connections open at once from one client network (an IPv4 address, an IPv6 prefix
    /// of EBB_RATE_LIMIT_IPV6_PREFIX bits). Connections from the machine itself (a local proxy)
    /// count only against EBB_MAX_CONNECTIONS. Behind a proxy on another machine, raise it.
    #[arg(long, env = "EBB_MAX_CONNECTIONS_PER_CLIENT", default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections_per_client: u64,

    /// Slowest upload accepted (shares, file requests), in bytes per second averaged over 30 s;
    /// a slower one ends with 408.
    #[arg(long, env = "EBB_MIN_UPLOAD_BYTES_PER_SEC", default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..=1_073_741_824))]
    pub min_upload_bytes_per_sec: u64,

    /// Print a one-time link for the first admin to stderr at start when there is no admin yet.
    /// The packaged service sets `false` (its stderr is the journal, which keeps the link):
    /// there the operator runs `ebb admin invite`.
    #[arg(long, env = "EBB_PRINT_FIRST_ADMIN_LINK", default_value_t = true, action = clap::ArgAction::Set)]
    pub print_first_admin_link: bool,

    /// Seconds a small request body (the contact form, a server function: all but uploads) may
    /// take to arrive whole, from the request's start; a slower one ends with 408.
    #[arg(long, env = "EBB_SMALL_BODY_DEADLINE_SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub small_body_deadline_secs: u64,

    /// Seconds over which an upload's minimum rate (EBB_MIN_UPLOAD_BYTES_PER_SEC) is measured.
    #[arg(long, env = "EBB_UPLOAD_RATE_WINDOW_SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=600))]
    pub upload_rate_window_secs: u64,

    /// Largest request body accepted, in bytes; larger requests get 413.
    #[arg(long, env = "EBB_MAX_BODY_BYTES", default_value_t = 65_536, value_parser = clap::value_parser!(u64).range(1024..=16_777_216))]
    pub max_body_bytes: u64,

    /// Rows deleted per statement by prune.
    #[arg(long, env = "EBB_PRUNE_BATCH_SIZE", default_value_t = 1000, value_parser = clap::value_parser!(i64).range(1..=100_000))]
    pub prune_batch_size: i64,

    /// Monthly audit log partitions kept ready after the current month (the weekly upkeep creates
    /// them; fewer raises a critical alert).
    #[arg(long, env = "EBB_AUDIT_PARTITIONS_AHEAD", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=24))]
    pub audit_partitions_ahead: u32,

    /// Days between two read-backs of each archived month's object (the daily archive run
    /// checks size and stored checksum every day, and re-reads the bytes of the ones due).
    #[arg(long, env = "EBB_ARCHIVE_REREAD_DAYS", default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=3650))]
    pub archive_reread_days: u32,

    /// The file holding the audit digest signing key (Ed25519; created with mode 0600 on first
    /// use). Unset: the key is kept in the database's `settings` table. A file kept apart from
    /// the database means someone with only database access cannot sign a forged digest.
    #[arg(long, env = "EBB_AUDIT_SIGNING_KEY_FILE")]
    pub audit_signing_key_file: Option<std::path::PathBuf>,

    /// Witnesses whose cosignatures (C2SP tlog-cosignature v1, Ed25519) on the transparency log's
    /// checkpoints Ebb keeps and serves: their verifier keys, separated by commas or spaces.
    #[arg(long, env = "EBB_AUDIT_WITNESSES", default_value = "")]
    pub audit_witnesses: String,

    /// Minutes between two signed digests of the audit trail while events are sealed (daily
    /// when nothing happened; also whenever a month is archived).
    #[arg(long, env = "EBB_AUDIT_DIGEST_MINUTES", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=1440))]
    pub audit_digest_minutes: u64,

    /// Minutes after which an audit export still `running` is taken for cut off (its process
    /// stopped) and marked failed.
    #[arg(long, env = "EBB_EXPORT_STUCK_MINS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=10_080))]
    pub export_stuck_mins: u64,

    /// Days to answer a data request (access, copy or erasure) from the day it was received
    /// (GDPR: one month).
    #[arg(long, env = "EBB_REQUEST_DEADLINE_DAYS", default_value_t = 30, value_parser = clap::value_parser!(i64).range(1..=90))]
    pub request_deadline_days: i64,

    /// Days before its deadline when an open data request raises an alert.
    #[arg(long, env = "EBB_REQUEST_WARN_DAYS", default_value_t = 7, value_parser = clap::value_parser!(i64).range(0..=60))]
    pub request_warn_days: i64,

    /// Days a closed data request keeps the person's address (and its note); then prune removes
    /// them, and the record keeps only a keyed hash of the address.
    #[arg(long, env = "EBB_REQUEST_KEEP_DAYS", default_value_t = 90, value_parser = clap::value_parser!(i64).range(1..=3650))]
    pub request_keep_days: i64,

    /// Hours a signed-in session may stay unused before it ends.
    #[arg(long, env = "EBB_SESSION_IDLE_HOURS", default_value_t = 12, value_parser = clap::value_parser!(u64).range(1..=720))]
    pub session_idle_hours: u64,

    /// Days after sign-in when a session ends, however active.
    #[arg(long, env = "EBB_SESSION_ABSOLUTE_DAYS", default_value_t = 7, value_parser = clap::value_parser!(u64).range(1..=90))]
    pub session_absolute_days: u64,

    /// Minutes after a passkey check (the sign-in, or a confirmation since) during which the
    /// session may do sensitive things: exports and copies, erasure, lifting a hold, deleting in
    /// bulk, lowering a retention period, adding a passkey or an admin, changing a role.
    #[arg(long, env = "EBB_STEP_UP_MINUTES", default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=60))]
    pub step_up_minutes: u64,

    /// Attempts per client per 5 minutes on each authentication endpoint.
    #[arg(long, env = "EBB_AUTH_RATE_LIMIT", default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub auth_rate_limit: u32,

    /// Refused authentication attempts (unknown or failed passkeys, used challenges, unknown
    /// invites) from all clients together per 5 minutes; beyond it refusals answer 429. A valid
    /// sign-in is never counted nor refused by it.
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

    /// SMTP server for emailing admins about new inquiries: `smtp://host:25` (plain, local relay),
    /// `smtp://user:pass@host:587?tls=required` (STARTTLS) or `smtps://user:pass@host` (TLS).
    /// Empty (the default): no email is sent.
    #[arg(long, env = "EBB_SMTP_URL", hide_env_values = true, default_value = "")]
    pub smtp_url: Secret,

    /// Who gets the notifications: comma-separated addresses (needed with EBB_SMTP_URL).
    #[arg(long, env = "EBB_NOTIFY_TO", default_value = "")]
    pub notify_to: String,

    /// The notifications' sender; default `Ebb <ebb@HOST>` with the public URL's host.
    #[arg(long, env = "EBB_NOTIFY_FROM", default_value = "")]
    pub notify_from: String,

    /// What a notification says: `count` ("you have N new inquiries", no personal data) or
    /// `full` (each inquiry's name, address and message).
    #[arg(long, env = "EBB_NOTIFY_CONTENT", value_enum, default_value_t = NotifyContentArg::Count)]
    pub notify_content: NotifyContentArg,

    /// At most one notification per this many minutes; inquiries meanwhile go in one digest.
    #[arg(long, env = "EBB_NOTIFY_DIGEST_MINS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1440))]
    pub notify_digest_mins: u64,

    /// The notifications' language: `en` or `ja`.
    #[arg(long, env = "EBB_NOTIFY_LANG", value_enum, default_value_t = NotifyLangArg::En)]
    pub notify_lang: NotifyLangArg,

    /// Also email the admins when a share was downloaded completely or a file was received
    /// through a file request (needs the SMTP settings above).
    #[arg(long, env = "EBB_NOTIFY_FILES", default_value_t = false, action = clap::ArgAction::Set)]
    pub notify_files: bool,
}

/// See `Config::notify_lang`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NotifyLangArg {
    En,
    Ja,
}

/// See `Config::notify_content`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NotifyContentArg {
    Count,
    Full,
}

impl Config {
    /// The connection and body limits (`EBB_MAX_CONNECTIONS` and the rest).
    pub fn http_limits(&self) -> crate::http::Limits {
        crate::http::Limits {
            max_connections: self.max_connections as usize,
            per_client: self.max_connections_per_client as usize,
            ipv6_prefix: self.rate_limit_ipv6_prefix,
            min_upload_rate: self.min_upload_bytes_per_sec,
            rate_window: Duration::from_secs(self.upload_rate_window_secs),
            small_body_deadline: Duration::from_secs(self.small_body_deadline_secs),
        }
    }

    /// The notification mailer from the settings (none without EBB_SMTP_URL), or what is wrong.
    /// The witnesses of `EBB_AUDIT_WITNESSES`, each key checked.
    pub fn witnesses(&self) -> Result<Vec<app::audit::chain::cosign::Witness>, String> {
        self.audit_witnesses
            .split([',', ' ', '\n'])
            .filter(|s| !s.trim().is_empty())
            .map(|v| app::audit::chain::cosign::Witness::parse(v).map_err(|e| format!("EBB_AUDIT_WITNESSES: {e}")))
            .collect()
    }

    pub fn notify_settings(&self) -> Result<app::notify::NotifySettings, String> {
        use lettre::message::Mailbox;
        let url = self.smtp_url.0.trim();
        if url.is_empty() {
            return Ok(app::notify::NotifySettings { mailer: None });
        }
        let transport = lettre::AsyncSmtpTransport::<lettre::Tokio1Executor>::from_url(url)
            .map_err(|_| "EBB_SMTP_URL is not a valid SMTP URL (smtp://host:port, smtps://user:pass@host)".to_string())?
            .timeout(Some(Duration::from_secs(20)))
            .build();
        let to = self
            .notify_to
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| s.parse::<Mailbox>().map_err(|_| format!("EBB_NOTIFY_TO: {s:?} is not an email address")))
            .collect::<Result<Vec<_>, _>>()?;
        if to.is_empty() {
            return Err("EBB_SMTP_URL is set but EBB_NOTIFY_TO names no recipient".into());
        }
        let from = if self.notify_from.trim().is_empty() {
            format!("Ebb <ebb@{}>", self.public_url.host_str().unwrap_or("localhost"))
        } else {
            self.notify_from.trim().to_owned()
        };
        let from = from.parse::<Mailbox>().map_err(|_| format!("EBB_NOTIFY_FROM: {from:?} is not an email address"))?;
        Ok(app::notify::NotifySettings {
            mailer: Some(std::sync::Arc::new(app::notify::Mailer {
                transport,
                from,
                to,
                content: match self.notify_content {
                    NotifyContentArg::Count => app::notify::NotifyContent::Count,
                    NotifyContentArg::Full => app::notify::NotifyContent::Full,
                },
                digest: Duration::from_secs(self.notify_digest_mins * 60),
                public_url: self.public_origin(),
                lang: match self.notify_lang {
                    NotifyLangArg::En => app::i18n::Lang::En,
                    NotifyLangArg::Ja => app::i18n::Lang::Ja,
                },
                files: self.notify_files,
            })),
        })
    }
}

/// Where objects live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StorageKind {
    Local,
    S3,
}

/// A secret setting: never shown by `Debug` (configuration may be logged), never in errors.
#[derive(Clone, Default)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_empty() { "\"\"" } else { "\"***\"" })
    }
}

impl std::str::FromStr for Secret {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Secret(s.to_owned()))
    }
}

/// The S3 backend's settings (used with EBB_STORAGE=s3).
#[derive(Debug, Clone, Args)]
pub struct S3Config {
    /// S3 endpoint URL (e.g. http://127.0.0.1:3900 for garage); empty = AWS for the region.
    #[arg(long = "s3-endpoint", env = "EBB_S3_ENDPOINT", default_value = "")]
    pub endpoint: String,

    /// Region the requests are signed for.
    #[arg(long = "s3-region", env = "EBB_S3_REGION", default_value = "us-east-1")]
    pub region: String,

    /// Bucket holding Ebb's objects (it must exist).
    #[arg(long = "s3-bucket", env = "EBB_S3_BUCKET", default_value = "")]
    pub bucket: String,

    /// Address buckets as `endpoint/bucket` (garage, MinIO) instead of `bucket.endpoint` (AWS).
    #[arg(long = "s3-path-style", env = "EBB_S3_PATH_STYLE", default_value_t = false, action = clap::ArgAction::Set)]
    pub path_style: bool,

    /// Access key id.
    #[arg(long = "s3-access-key-id", env = "EBB_S3_ACCESS_KEY_ID", default_value = "")]
    pub access_key_id: String,

    /// Secret access key (never logged or shown).
    #[arg(long = "s3-secret-access-key", env = "EBB_S3_SECRET_ACCESS_KEY", hide_env_values = true, default_value = "")]
    pub secret_access_key: Secret,

    /// Prefix of every key in the bucket (several installations in one bucket), e.g. `ebb/`.
    #[arg(long = "s3-prefix", env = "EBB_S3_PREFIX", default_value = "", value_parser = parse_prefix)]
    pub prefix: String,

    /// Storage class of archived audit months (e.g. GLACIER_IR on AWS); empty = the server's default.
    #[arg(long = "s3-archive-storage-class", env = "EBB_S3_ARCHIVE_STORAGE_CLASS", default_value = "")]
    pub archive_storage_class: String,

    /// Storage class of exports (temporary files: STANDARD, so that deleting them after 7 days
    /// costs no minimum storage duration); empty = the server's default.
    #[arg(long = "s3-exports-storage-class", env = "EBB_S3_EXPORTS_STORAGE_CLASS", default_value = "STANDARD")]
    pub exports_storage_class: String,
}

fn parse_prefix(raw: &str) -> Result<String, String> {
    let ok = raw.is_empty()
        || (raw.ends_with('/')
            && !raw.starts_with('/')
            && raw.len() <= 200
            && raw.split('/').all(|p| p != ".." && p != ".")
            && raw.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_./".contains(&b)));
    ok.then(|| raw.to_owned()).ok_or_else(|| "must be empty or like `ebb/` (letters, digits, - _ . /; ending in /)".into())
}

/// The archive's storage class: any class that reads like any other object. GLACIER and
/// DEEP_ARCHIVE need a restore before a read, and Ebb has no restore step: a retrieval link to
/// such an object would not download.
fn instant_read_class(class: &str) -> Result<String, String> {
    match class.to_ascii_uppercase().as_str() {
        "GLACIER" | "DEEP_ARCHIVE" => Err(format!(
            "EBB_S3_ARCHIVE_STORAGE_CLASS={class} needs a restore before each read, and archive links must download at once; use a class read in milliseconds (e.g. GLACIER_IR, STANDARD_IA) or leave it empty"
        )),
        _ => Ok(class.to_owned()),
    }
}

impl S3Config {
    /// The backend's settings, or what is missing (naming the setting).
    pub fn settings(&self) -> Result<crate::s3::S3Settings, String> {
        let need = |v: &str, name: &str| if v.trim().is_empty() { Err(format!("EBB_STORAGE=s3 needs {name}")) } else { Ok(v.trim().to_owned()) };
        let endpoint = match self.endpoint.trim() {
            "" => None,
            e => {
                let url = Url::parse(e).map_err(|err| format!("EBB_S3_ENDPOINT is not a URL ({err}); use e.g. http://127.0.0.1:3900"))?;
                if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
                    return Err("EBB_S3_ENDPOINT must be an http(s) URL such as http://127.0.0.1:3900".into());
                }
                Some(e.trim_end_matches('/').to_owned())
            }
        };
        Ok(crate::s3::S3Settings {
            endpoint,
            region: need(&self.region, "EBB_S3_REGION")?,
            bucket: need(&self.bucket, "EBB_S3_BUCKET")?,
            path_style: self.path_style,
            access_key_id: need(&self.access_key_id, "EBB_S3_ACCESS_KEY_ID")?,
            secret_access_key: need(&self.secret_access_key.0, "EBB_S3_SECRET_ACCESS_KEY")?,
            prefix: self.prefix.clone(),
            archive_class: instant_read_class(self.archive_storage_class.trim())?,
            exports_class: self.exports_storage_class.trim().to_owned(),
        })
    }
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
    /// A local storage folder inside the served site folder would publish every stored file
    /// (its path under `/pkg` or the site root): refused, naming both settings. Symlinks and
    /// `..` are resolved where the folders exist.
    pub fn check_storage_outside_site(&self) -> Result<(), String> {
        if self.storage != StorageKind::Local {
            return Ok(());
        }
        let resolve = |p: &std::path::Path| {
            let abs = std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
            abs.canonicalize().unwrap_or_else(|_| abs.components().collect())
        };
        let (storage, site) = (resolve(&self.storage_dir), resolve(&self.site_root));
        if storage.starts_with(&site) {
            return Err(format!(
                "EBB_STORAGE_DIR={} is inside the served site folder LEPTOS_SITE_ROOT={}: stored files could be downloaded by anyone; \
                 move the storage folder outside it",
                self.storage_dir.display(),
                self.site_root.display()
            ));
        }
        Ok(())
    }

    pub fn maintenance_interval(&self) -> Duration {
        Duration::from_secs(self.maintenance_interval_secs)
    }

    /// The public origin without a trailing slash (`http://localhost:3000`).
    /// The S3 settings are complete when S3 is the store (`ebb doctor`).
    pub fn s3_settings_if_used(&self) -> Result<(), String> {
        match self.storage {
            StorageKind::S3 => self.s3.settings().map(|_| ()),
            StorageKind::Local => Ok(()),
        }
    }

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
    fn s3_settings_name_what_is_missing_and_hide_the_secret() {
        let parse = |args: &[&str]| {
            #[derive(clap::Parser)]
            struct T {
                #[command(flatten)]
                s3: S3Config,
            }
            <T as clap::Parser>::try_parse_from(std::iter::once("t").chain(args.iter().copied())).map(|t| t.s3)
        };
        let c = parse(&["--s3-bucket", "b", "--s3-access-key-id", "k"]).unwrap();
        assert_eq!(c.settings().unwrap_err(), "EBB_STORAGE=s3 needs EBB_S3_SECRET_ACCESS_KEY");
        let c = parse(&["--s3-bucket", "b", "--s3-access-key-id", "k", "--s3-secret-access-key", "hush", "--s3-endpoint", "nonsense"]).unwrap();
        assert!(c.settings().unwrap_err().contains("EBB_S3_ENDPOINT"));
        let c = parse(&["--s3-bucket", "b", "--s3-access-key-id", "k", "--s3-secret-access-key", "hush", "--s3-endpoint", "http://127.0.0.1:3900/"]).unwrap();
        assert_eq!(c.settings().unwrap().endpoint.as_deref(), Some("http://127.0.0.1:3900"));
        assert!(!format!("{c:?}").contains("hush") && !format!("{:?}", c.settings().unwrap()).contains("hush"));
        assert!(parse(&["--s3-prefix", "../x/"]).is_err());
        assert!(parse(&["--s3-prefix", "ebb"]).is_err());
        assert!(parse(&["--s3-prefix", "team/ebb/"]).is_ok());
    }

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
