//! The tamper-evident audit trail (issue 31): every event is sealed into its month's hash chain
//! ([`seal`]), signed digests of the chains are written to the blob store ([`digest`]), and
//! [`verify`] checks the database, the archived months and the digests against each other —
//! with only the store and the public key when it must.
//!
//! Order. Events are inserted by many transactions that commit out of id order, on several
//! instances. Each event stores its transaction's id (`tx`, `pg_current_xact_id()`); the sealer
//! takes a snapshot and hashes, in `(tx, id)` order, only events whose `tx` is below the
//! snapshot's `xmin`: every transaction below it has ended, so no event can still appear before
//! them. The chain's order is therefore total (by `(tx, id)`) and final once sealed. Each month
//! (of `occurred_at`, UTC) has its own chain, so an archived month verifies on its own.

pub mod cosign;
pub mod digest;
pub mod encode;
pub mod job;
pub mod keys;
pub mod restore;
pub mod seal;
pub mod statement;
pub mod tlog;
pub mod verify;

use std::path::PathBuf;
use std::time::Duration;

pub use encode::{ChainRow, Linker, GENESIS};

/// The chain's settings (from the server's configuration).
#[derive(Debug, Clone)]
pub struct ChainSettings {
    /// The file holding the digest signing key (hex seed, created on first use); `None`: the key
    /// is kept in the `settings` table (row `audit_signing_key`).
    pub key_file: Option<PathBuf>,
    /// A digest is written at least this often (and whenever a month is archived).
    pub digest_every: Duration,
    /// An event dated this long before events sealed ahead of it in chain order is not sealed
    /// (inserted by hand into the past); it is reported by every verification instead.
    pub late_limit: Duration,
    /// The transparency log's origin (its checkpoints' first line and key name):
    /// `<public host>/audit`.
    pub log_origin: String,
    /// The witnesses whose cosignatures on the log's checkpoints are kept and served.
    pub witnesses: Vec<cosign::Witness>,
}

impl kernel::state::Part for ChainSettings {
    type Slot = kernel::state::slot::AuditChain;
}

impl Default for ChainSettings {
    fn default() -> Self {
        ChainSettings {
            key_file: None,
            digest_every: Duration::from_secs(3600),
            late_limit: Duration::from_secs(3600),
            log_origin: "localhost/audit".into(),
            witnesses: Vec::new(),
        }
    }
}

/// `YYYY-MM` of a month's first day.
pub fn month_label(period: time::Date) -> String {
    format!("{:04}-{:02}", period.year(), period.month() as u8)
}

/// Parses `YYYY-MM` into a month's first day (`None` for anything else).
pub fn parse_period(s: &str) -> Option<time::Date> {
    let b = s.as_bytes();
    if b.len() != 7 || b[4] != b'-' || !b[..4].iter().chain(&b[5..]).all(u8::is_ascii_digit) {
        return None;
    }
    let month = time::Month::try_from(s[5..].parse::<u8>().ok()?).ok()?;
    time::Date::from_calendar_date(s[..4].parse().ok()?, month, 1).ok()
}

/// The first day of `at`'s month (UTC).
pub fn period_of(at: time::OffsetDateTime) -> time::Date {
    let d = at.to_offset(time::UtcOffset::UTC).date();
    d.replace_day(1).expect("day 1 exists")
}
