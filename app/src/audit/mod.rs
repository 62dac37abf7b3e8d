//! The audit log: who did what, when, from where. Events are written in the same transaction as
//! the change they record ([`db::record`]); the table is partitioned by month and kept queryable
//! for 24 months by the weekly upkeep job ([`upkeep`]); admins read it at `/admin/audit`.

pub mod api;
#[cfg(feature = "ssr")]
pub mod archive;
#[cfg(feature = "ssr")]
pub mod db;
#[cfg(feature = "ssr")]
pub mod export;
#[cfg(feature = "ssr")]
pub mod exports;
pub mod ui;
#[cfg(feature = "ssr")]
pub mod upkeep;

use serde::{Deserialize, Serialize};

/// Months every event stays queryable in the admin UI (the promise).
pub const PROMISE_MONTHS: u32 = 24;
/// Months after which a whole partition is detached for the archive (one month of slack: the
/// weekly run never touches a promised month).
pub const DETACH_AFTER_MONTHS: u32 = 25;

macro_rules! kinds {
    ($($variant:ident = $name:literal, $label:literal;)+) => {
        /// What happened. The stored names are stable (searches, CSV and the archive read them);
        /// the column's check constraint lists the same names.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum AuditKind { $($variant),+ }

        impl AuditKind {
            pub const ALL: &'static [AuditKind] = &[$(AuditKind::$variant),+];

            /// The stored, stable name (`share.create`…).
            pub fn as_str(self) -> &'static str {
                match self { $(AuditKind::$variant => $name),+ }
            }

            /// A short label for people (filters).
            pub fn label(self) -> &'static str {
                match self { $(AuditKind::$variant => $label),+ }
            }

            /// What the subject id names (`share`, `passkey`…): the kind's prefix.
            pub fn subject_type(self) -> &'static str {
                match self {
                    AuditKind::AdminCreate | AuditKind::InviteCreate | AuditKind::InviteRedeem => "invite",
                    AuditKind::MaintenanceRun => "job",
                    AuditKind::RetentionChange => "days",
                    AuditKind::PartitionCreate
                    | AuditKind::PartitionDetach
                    | AuditKind::ArchiveMonth
                    | AuditKind::ArchiveDrop
                    | AuditKind::ArchiveFailure
                    | AuditKind::ArchiveRetrieval => "month",
                    AuditKind::ExportRequest | AuditKind::ExportDownload => "export",
                    AuditKind::RetentionReport => "report",
                    other => other.as_str().split('.').next().unwrap_or("other"),
                }
            }

            pub fn parse(s: &str) -> Option<AuditKind> {
                match s { $($name => Some(AuditKind::$variant),)+ _ => None }
            }
        }
    };
}

kinds! {
    SignIn = "auth.signin", "Signed in";
    SignInRefused = "auth.signin_refused", "Sign-in refused";
    SignOut = "auth.signout", "Signed out";
    AdminCreate = "admin.create", "Admin created";
    PasskeyAdd = "passkey.add", "Passkey added";
    PasskeyRename = "passkey.rename", "Passkey renamed";
    PasskeyRemove = "passkey.remove", "Passkey removed";
    InviteCreate = "invite.create", "Invite created";
    InviteRedeem = "invite.redeem", "Invite redeemed";
    SessionRevoke = "session.revoke", "Session revoked";
    InquiryDelete = "inquiry.delete", "Inquiry deleted";
    InquiryExport = "inquiry.export", "Inquiries exported";
    RetentionChange = "settings.retention_days", "Retention changed";
    ShareCreate = "share.create", "Share created";
    ShareDownload = "share.download", "Share downloaded";
    ShareRevoke = "share.revoke", "Share revoked";
    SharePurge = "share.purge", "Share file deleted";
    MaintenanceRun = "maintenance.run", "Job run";
    PartitionCreate = "upkeep.partition_create", "Audit month created";
    PartitionDetach = "upkeep.partition_detach", "Audit month detached";
    UpkeepCheck = "upkeep.check", "Audit upkeep check";
    AlertRaise = "alert.raise", "Alert raised";
    AlertResolve = "alert.resolve", "Alert resolved";
    ArchiveMonth = "archive.month", "Month archived";
    ArchiveDrop = "archive.drop", "Archived month removed from the database";
    ArchiveFailure = "archive.failure", "Archiving a month failed";
    ArchiveRetrieval = "archive.retrieval", "Archive retrieved";
    ExportRequest = "export.request", "Export requested";
    ExportDownload = "export.download", "Export downloaded";
    HoldPlace = "hold.place", "Legal hold placed";
    HoldLift = "hold.lift", "Legal hold lifted";
    RetentionReport = "retention.report", "Retention report downloaded";
}

/// One event as the viewer shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::FromRow))]
pub struct AuditRow {
    pub id: i64,
    #[serde(with = "time::serde::rfc3339")]
    pub occurred_at: time::OffsetDateTime,
    pub kind: String,
    pub admin_id: Option<uuid::Uuid>,
    pub admin_name: Option<String>,
    pub subject_type: Option<String>,
    pub subject_id: Option<String>,
    pub detail: Option<String>,
    pub client_hash: Option<String>,
}

impl AuditRow {
    /// The event as a sentence ("Ana removed passkey 'Phone'").
    pub fn sentence(&self) -> String {
        let who = match (&self.admin_name, self.admin_id) {
            (Some(n), _) => n.clone(),
            (None, Some(_)) => "A removed admin".into(),
            (None, None) => "Ebb".into(),
        };
        let subject = self.subject_id.as_deref().unwrap_or("?");
        let named = |what: &str| match self.detail.as_deref() {
            Some(d) if !d.is_empty() => format!("{what} '{d}'"),
            _ => format!("{what} {subject}"),
        };
        let detail = self.detail.as_deref().unwrap_or("");
        match AuditKind::parse(&self.kind) {
            Some(AuditKind::SignIn) => format!("{who} signed in"),
            Some(AuditKind::SignInRefused) => format!("A sign-in was refused ({})", if detail.is_empty() { "unknown passkey" } else { detail }),
            Some(AuditKind::SignOut) => format!("{who} signed out"),
            Some(AuditKind::AdminCreate) => format!("{who} joined as an admin"),
            Some(AuditKind::PasskeyAdd) => format!("{who} added {}", named("passkey")),
            Some(AuditKind::PasskeyRename) => format!("{who} renamed a passkey to '{detail}'"),
            Some(AuditKind::PasskeyRemove) => format!("{who} removed {}", named("passkey")),
            Some(AuditKind::InviteCreate) => format!("{who} created invite {subject}"),
            Some(AuditKind::InviteRedeem) => format!("{who} joined with invite {subject}"),
            Some(AuditKind::SessionRevoke) => format!("{who} signed out a session"),
            Some(AuditKind::InquiryDelete) => format!("{who} deleted inquiry {subject}"),
            Some(AuditKind::InquiryExport) => format!("{who} exported inquiries"),
            Some(AuditKind::RetentionChange) => format!("{who} set inquiry retention to {subject} days"),
            Some(AuditKind::ShareCreate) => format!("{who} created share {subject}"),
            Some(AuditKind::ShareDownload) => format!("Share {subject} was downloaded"),
            Some(AuditKind::ShareRevoke) => format!("{who} revoked share {subject}"),
            Some(AuditKind::SharePurge) => format!("The file of share {subject} was deleted"),
            Some(AuditKind::MaintenanceRun) => format!("{who} ran job {subject}{}", if detail.is_empty() { String::new() } else { format!(": {detail}") }),
            Some(AuditKind::PartitionCreate) => format!("Audit month {subject} was created"),
            Some(AuditKind::PartitionDetach) => format!("Audit month {subject} was detached for the archive"),
            Some(AuditKind::UpkeepCheck) => format!("Audit upkeep: {detail}"),
            Some(AuditKind::AlertRaise) => format!("Alert {subject} was raised"),
            Some(AuditKind::AlertResolve) => format!("{who} resolved alert {subject}"),
            Some(AuditKind::ArchiveMonth) => {
                format!("Month {subject} was archived and verified{}", if detail.is_empty() { String::new() } else { format!(" ({detail})") })
            }
            Some(AuditKind::ArchiveDrop) => format!("Archived month {subject} was removed from the database"),
            Some(AuditKind::ArchiveFailure) => {
                format!("Archiving month {subject} failed{}", if detail.is_empty() { String::new() } else { format!(": {detail}") })
            }
            Some(AuditKind::ArchiveRetrieval) => format!("{who} got a download link for archived month {subject}"),
            Some(AuditKind::ExportRequest) => format!("{who} requested an export{}", if detail.is_empty() { String::new() } else { format!(" of {detail}") }),
            Some(AuditKind::ExportDownload) => format!("{who} got a download link for export {subject}"),
            Some(AuditKind::HoldPlace) => {
                format!("{who} placed legal hold {subject}{}", if detail.is_empty() { String::new() } else { format!(" on {detail}") })
            }
            Some(AuditKind::HoldLift) => {
                format!("{who} lifted legal hold {subject}{}", if detail.is_empty() { String::new() } else { format!(" from {detail}") })
            }
            Some(AuditKind::RetentionReport) => format!("{who} downloaded the retention report"),
            None => format!("{who}: {} {subject}", self.kind),
        }
    }
}

/// The viewer's filters (all optional; dates are UTC days, inclusive).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditFilter {
    pub kind: Option<String>,
    pub admin: Option<uuid::Uuid>,
    pub subject: Option<String>,
    pub from: Option<time::Date>,
    pub to: Option<time::Date>,
}

impl AuditFilter {
    /// Parses the viewer's form fields (as typed; empty = no filter). Errors are per field.
    pub fn parse(kind: &str, admin: &str, subject: &str, from: &str, to: &str) -> Result<AuditFilter, std::collections::BTreeMap<String, String>> {
        let mut errors = std::collections::BTreeMap::new();
        let date = |field: &str, raw: &str, errors: &mut std::collections::BTreeMap<String, String>| {
            let raw = raw.trim();
            if raw.is_empty() {
                return None;
            }
            let fmt = time::macros::format_description!("[year]-[month]-[day]");
            match time::Date::parse(raw, &fmt) {
                Ok(d) => Some(d),
                Err(_) => {
                    errors.insert(field.to_string(), "Use a date like 2026-11-30.".to_string());
                    None
                }
            }
        };
        let kind = match kind.trim() {
            "" => None,
            k if AuditKind::parse(k).is_some() => Some(k.to_string()),
            _ => {
                errors.insert("kind".into(), "Choose a kind from the list.".into());
                None
            }
        };
        let admin = match admin.trim() {
            "" => None,
            a => match uuid::Uuid::parse_str(a) {
                Ok(id) => Some(id),
                Err(_) => {
                    errors.insert("admin".into(), "Choose an admin from the list.".into());
                    None
                }
            },
        };
        let subject = subject.trim();
        if subject.chars().count() > 200 {
            errors.insert("subject".into(), "A subject id has at most 200 characters.".into());
        } else if subject.chars().any(char::is_control) {
            errors.insert("subject".into(), "A subject id is plain text, without control characters.".into());
        }
        let from = date("from", from, &mut errors);
        let to = date("to", to, &mut errors);
        if let (Some(f), Some(t)) = (from, to) {
            if f > t {
                errors.insert("to".into(), "The end date must not be before the start date.".into());
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(AuditFilter { kind, admin, subject: (!subject.is_empty()).then(|| subject.to_string()), from, to })
    }

    /// The filter as a query string for the CSV link (`kind=…&admin=…`).
    pub fn query(&self) -> String {
        let enc = crate::ui::url_encode;
        format!(
            "kind={}&admin={}&subject={}&from={}&to={}",
            enc(self.kind.as_deref().unwrap_or("")),
            self.admin.map(|a| a.to_string()).unwrap_or_default(),
            enc(self.subject.as_deref().unwrap_or("")),
            self.from.map(|d| d.to_string()).unwrap_or_default(),
            self.to.map(|d| d.to_string()).unwrap_or_default(),
        )
    }
}

/// One page of the viewer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditPage {
    pub rows: Vec<AuditRow>,
    /// The cursor of the next (older) page, when there is one.
    pub next: Option<String>,
}

/// An admin the filter can choose (everyone who is or was an admin with events).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditAdmin {
    pub id: uuid::Uuid,
    pub name: String,
}

/// The upkeep's state for the dashboard.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UpkeepState {
    /// Monthly partitions wholly after the current month.
    pub partitions_ahead: i64,
    /// The setting they are checked against.
    pub partitions_wanted: i64,
    /// Months detached and waiting in `audit_pending` for the archive.
    pub months_pending: i64,
    /// Rows in the default partition (should be 0).
    pub default_rows: i64,
    /// Months archived and verified (the ledger).
    pub months_archived: i64,
    /// Months whose last archive attempt failed (retried at the next run).
    pub months_failed: i64,
}

/// A month in the archive's ledger, as the archive page lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchivedMonth {
    /// `YYYY-MM`.
    pub month: String,
    /// `verified` (a link can be had), `written` (being checked) or `failed` (retried next run).
    pub status: String,
    pub events: Option<i64>,
    pub bytes: Option<i64>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub verified_at: Option<time::OffsetDateTime>,
    /// The month has left the database: the archive is where it is.
    pub dropped: bool,
}

/// One download link given out for an archived month.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetrievalView {
    pub month: String,
    pub admin_name: Option<String>,
    pub reason: String,
    #[serde(with = "time::serde::rfc3339")]
    pub issued_at: time::OffsetDateTime,
}

/// The archive page's data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArchiveOverview {
    pub months: Vec<ArchivedMonth>,
    pub retrievals: Vec<RetrievalView>,
}

/// A request for a CSV export of a range of audit events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportView {
    pub id: uuid::Uuid,
    /// First and last day of the range (UTC, inclusive).
    pub from: time::Date,
    pub to: time::Date,
    /// `pending`, `running`, `done` or `failed`.
    pub status: String,
    pub admin_name: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub requested_at: time::OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub finished_at: Option<time::OffsetDateTime>,
    pub events: Option<i64>,
    pub bytes: Option<i64>,
    /// Done, but its file is gone (kept 7 days): no link is given.
    pub expired: bool,
}

/// A short-lived download link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DownloadLink {
    pub url: String,
    pub file_name: String,
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: time::OffsetDateTime,
}

/// Minutes a download link (archive or export) works.
pub const LINK_MINUTES: i64 = 15;
/// Days an export's file is kept.
pub const EXPORT_KEEP_DAYS: i64 = 7;

/// A retrieval reason as typed: 10–256 characters once trimmed.
pub fn check_reason(reason: &str) -> Result<String, String> {
    let reason = reason.trim();
    if reason.chars().any(|c| c.is_control() && c != '\n') {
        return Err("The reason cannot contain control characters; write it as plain text.".into());
    }
    match reason.chars().count() {
        10..=256 => Ok(reason.to_string()),
        n => Err(format!("Give a reason of 10 to 256 characters ({n} now); it is kept with the link.")),
    }
}

/// A keyset cursor: `<unix micros>.<id>`.
pub fn encode_cursor(at: time::OffsetDateTime, id: i64) -> String {
    format!("{}.{id}", at.unix_timestamp_nanos() / 1000)
}

/// `None` for anything [`encode_cursor`] cannot have produced (an overflowing number, a time no
/// stored event can have).
pub fn decode_cursor(s: &str) -> Option<(time::OffsetDateTime, i64)> {
    let (micros, id) = s.split_once('.')?;
    let at = time::OffsetDateTime::from_unix_timestamp_nanos(i128::from(micros.parse::<i64>().ok()?).checked_mul(1000)?).ok()?;
    (1900..=9999).contains(&at.year()).then_some(())?;
    Some((at, id.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_and_are_unique() {
        let mut names: Vec<_> = AuditKind::ALL.iter().map(|k| k.as_str()).collect();
        for k in AuditKind::ALL {
            assert_eq!(AuditKind::parse(k.as_str()), Some(*k));
        }
        names.sort();
        names.dedup();
        assert_eq!(names.len(), AuditKind::ALL.len());
        assert_eq!(AuditKind::parse("share.create; drop table x"), None);
    }

    #[test]
    fn every_kind_is_allowed_by_the_migration_check_and_nothing_else() {
        // The latest migration that sets the check.
        let sql = include_str!("../../../migrations/20261130000008_legal_holds.sql");
        let check = sql.split("add constraint audit_events_kind_check check (kind in (").nth(1).unwrap().split("))").next().unwrap();
        let mut allowed: Vec<&str> = check.split(',').map(|s| s.trim().trim_matches('\'')).filter(|s| !s.is_empty()).collect();
        let mut ours: Vec<&str> = AuditKind::ALL.iter().map(|k| k.as_str()).collect();
        allowed.sort();
        ours.sort();
        assert_eq!(allowed, ours);
    }

    #[test]
    fn sentences_name_who_and_what() {
        let row = AuditRow {
            id: 1,
            occurred_at: time::OffsetDateTime::UNIX_EPOCH,
            kind: "passkey.remove".into(),
            admin_id: Some(uuid::Uuid::nil()),
            admin_name: Some("Ana".into()),
            subject_type: Some("passkey".into()),
            subject_id: Some("42".into()),
            detail: Some("Phone".into()),
            client_hash: None,
        };
        assert_eq!(row.sentence(), "Ana removed passkey 'Phone'");
        let system = AuditRow { kind: "share.purge".into(), admin_id: None, admin_name: None, subject_id: Some("7".into()), detail: None, ..row };
        assert_eq!(system.sentence(), "The file of share 7 was deleted");
    }

    #[test]
    fn filters_parse_with_clear_errors() {
        let f = AuditFilter::parse("share.create", "", " 42 ", "2026-01-01", "2026-01-31").unwrap();
        assert_eq!(f.kind.as_deref(), Some("share.create"));
        assert_eq!(f.subject.as_deref(), Some("42"));
        assert_eq!(f.query(), "kind=share.create&admin=&subject=42&from=2026-01-01&to=2026-01-31");
        let e = AuditFilter::parse("drop table", "nobody", "", "yesterday", "").unwrap_err();
        assert_eq!(e.keys().collect::<Vec<_>>(), ["admin", "from", "kind"]);
        assert!(AuditFilter::parse("", "", "", "2026-02-01", "2026-01-01").unwrap_err().contains_key("to"));
        assert_eq!(AuditFilter::parse("", "", "", "", "").unwrap(), AuditFilter::default());
    }

    #[test]
    fn cursors_round_trip() {
        let at = time::macros::datetime!(2026-11-30 12:34:56.789012 UTC);
        assert_eq!(decode_cursor(&encode_cursor(at, 99)), Some((at, 99)));
        assert_eq!(decode_cursor("garbage"), None);
        for hostile in [format!("{}.1", i128::MAX), format!("{}.1", i64::MAX), format!("-{}.1", i64::MAX)] {
            assert_eq!(decode_cursor(&hostile), None, "{hostile}");
        }
    }
}
