//! The audit log: who did what, when, from where. Events are written in the same transaction as
//! the change they record ([`db::record`]); the table is partitioned by month and kept queryable
//! for 24 months by the weekly upkeep job ([`upkeep`]); admins read it at `/admin/audit`.

pub mod api;
cfg_if::cfg_if! {
    // What runs on the server only.
    if #[cfg(feature = "ssr")] {
        pub mod archive;
        pub mod chain;
        pub mod db;
        pub mod export;
        pub mod exports;
        pub mod retention;
        pub mod routes;
        pub mod upkeep;
    }
}
pub(crate) mod texts;
pub mod ui;

use serde::{Deserialize, Serialize};

pub use common::audit_kind::AuditKind;
use common::i18n::{t, texts, tf};

/// Months every event stays queryable in the admin UI (the promise).
pub const PROMISE_MONTHS: u32 = 24;
/// Months after which a whole partition is detached for the archive (one month of slack: the
/// weekly run never touches a promised month).
pub const DETACH_AFTER_MONTHS: u32 = 25;

/// Where an archived month is in its ledger (`audit_partition_archives.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(sqlx::Type))]
#[cfg_attr(feature = "ssr", sqlx(type_name = "text", rename_all = "lowercase"))]
#[serde(rename_all = "lowercase")]
pub enum MonthStatus {
    /// Uploaded, not yet read back.
    Written,
    /// Read back and matched: a link can be had, and the month may leave the database.
    Verified,
    /// The last attempt failed; the next run writes it again.
    Failed,
}

impl MonthStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            MonthStatus::Written => "written",
            MonthStatus::Verified => "verified",
            MonthStatus::Failed => "failed",
        }
    }
}

/// Where an export request is (`audit_export_requests.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExportStatus {
    /// Waiting for the exports job.
    Pending,
    /// Being written now.
    Running,
    /// Written: a link can be had while its file is kept.
    Done,
    /// The job could not write it.
    Failed,
}

impl ExportStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ExportStatus::Pending => "pending",
            ExportStatus::Running => "running",
            ExportStatus::Done => "done",
            ExportStatus::Failed => "failed",
        }
    }

    /// A stored status read back (the column's check constraint allows only these).
    pub fn parse(s: &str) -> ExportStatus {
        [ExportStatus::Pending, ExportStatus::Running, ExportStatus::Done].into_iter().find(|k| k.as_str() == s).unwrap_or(ExportStatus::Failed)
    }
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

/// The two reasons the sign-in records (auth/api.rs), in words; any other as stored.
fn refusal_in_words(detail: &str) -> &str {
    use AuditTextT as A;
    match detail {
        "" | "unknown passkey" => t(A::RefusedUnknownPasskey),
        "the passkey's answer did not verify" => t(A::RefusedNotVerified),
        other => other,
    }
}

impl AuditRow {
    /// The event as a sentence in the page's language ("Ana removed passkey 'Phone'"), for the
    /// viewer only: CSV and the archive carry the stored fields, never this sentence. Names, ids
    /// and details are shown as stored.
    pub fn sentence(&self) -> String {
        use AuditTextT as A;
        let who = match (&self.admin_name, self.admin_id) {
            (Some(n), _) => n.clone(),
            (None, Some(_)) => t(A::RemovedAdmin).into(),
            (None, None) => "Ebb".into(),
        };
        let subject = self.subject_id.as_deref().unwrap_or("?");
        let detail = self.detail.as_deref().unwrap_or("");
        let say = |key: AuditTextT| tf(key, &[("who", &who), ("subject", &subject), ("detail", &detail)]);
        // With the detail when there is one.
        let say_detail = |plain: AuditTextT, with: AuditTextT| if detail.is_empty() { say(plain) } else { say(with) };
        // "passkey 'Phone'" when named, else "passkey 42".
        let passkey = |named: AuditTextT, by_id: AuditTextT| if detail.is_empty() { say(by_id) } else { tf(named, &[("who", &who), ("name", &detail)]) };
        match AuditKind::parse(&self.kind) {
            Some(AuditKind::SignIn) => say(A::SaySignIn),
            Some(AuditKind::SignInRefused) => tf(A::SaySignInRefused, &[("why", &refusal_in_words(detail))]),
            Some(AuditKind::SignOut) => say(A::SaySignOut),
            Some(AuditKind::StepUp) => say(A::SayStepUp),
            Some(AuditKind::AdminCreate) => say(A::SayAdminCreate),
            Some(AuditKind::AdminRemove) => say_detail(A::SayAdminRemove, A::SayAdminRemoveDetail),
            Some(AuditKind::AdminRole) => say_detail(A::SayAdminRole, A::SayAdminRoleDetail),
            Some(AuditKind::PasskeyAdd) => passkey(A::SayPasskeyAddNamed, A::SayPasskeyAddId),
            Some(AuditKind::PasskeyRename) => tf(A::SayPasskeyRename, &[("who", &who), ("name", &detail)]),
            Some(AuditKind::PasskeyRemove) => passkey(A::SayPasskeyRemoveNamed, A::SayPasskeyRemoveId),
            Some(AuditKind::InviteCreate) => say(A::SayInviteCreate),
            Some(AuditKind::InviteRedeem) => say(A::SayInviteRedeem),
            Some(AuditKind::SessionRevoke) => say(A::SaySessionRevoke),
            Some(AuditKind::InquiryDelete) => say(A::SayInquiryDelete),
            Some(AuditKind::InquiryExport) => say(A::SayInquiryExport),
            Some(AuditKind::RetentionChange) => say(A::SayRetentionChange),
            Some(AuditKind::ShareCreate) => say(A::SayShareCreate),
            Some(AuditKind::ShareDownload) => say(A::SayShareDownload),
            Some(AuditKind::ShareRevoke) => say(A::SayShareRevoke),
            Some(AuditKind::SharePurge) => say(A::SaySharePurge),
            Some(AuditKind::MaintenanceRun) => say_detail(A::SayMaintenanceRun, A::SayMaintenanceRunDetail),
            Some(AuditKind::PartitionCreate) => say(A::SayPartitionCreate),
            Some(AuditKind::PartitionDetach) => say(A::SayPartitionDetach),
            Some(AuditKind::UpkeepCheck) => say(A::SayUpkeepCheck),
            Some(AuditKind::AlertRaise) => say(A::SayAlertRaise),
            Some(AuditKind::AlertResolve) => say(A::SayAlertResolve),
            Some(AuditKind::ArchiveMonth) => say_detail(A::SayArchiveMonth, A::SayArchiveMonthDetail),
            Some(AuditKind::ArchiveDrop) => say(A::SayArchiveDrop),
            Some(AuditKind::ArchiveFailure) => say_detail(A::SayArchiveFailure, A::SayArchiveFailureDetail),
            Some(AuditKind::ArchiveRetrieval) => say(A::SayArchiveRetrieval),
            Some(AuditKind::ExportRequest) => {
                // The detail is the range as exports.rs records it: "<from> to <to>".
                let range = match detail.split_once(" to ") {
                    Some((from, to)) => tf(A::ExportRange, &[("from", &from), ("to", &to)]),
                    None => detail.to_string(),
                };
                if detail.is_empty() {
                    say(A::SayExportRequest)
                } else {
                    tf(A::SayExportRequestDetail, &[("who", &who), ("detail", &range)])
                }
            }
            Some(AuditKind::ExportDownload) => say(A::SayExportDownload),
            Some(AuditKind::HoldPlace) => say_detail(A::SayHoldPlace, A::SayHoldPlaceDetail),
            Some(AuditKind::HoldLift) => say_detail(A::SayHoldLift, A::SayHoldLiftDetail),
            Some(AuditKind::RetentionReport) => say(A::SayRetentionReport),
            Some(AuditKind::AuditExport) => say(A::SayAuditExport),
            Some(AuditKind::AuditVerify) => say_detail(A::SayAuditVerify, A::SayAuditVerifyDetail),
            Some(
                k @ (AuditKind::RequestRecord
                | AuditKind::RequestFind
                | AuditKind::RequestExport
                | AuditKind::RequestErasePreview
                | AuditKind::RequestErase
                | AuditKind::RequestErased
                | AuditKind::RequestClose),
            ) => tf(A::SayRequest, &[("who", &who), ("what", &k.label()), ("subject", &subject), ("detail", &detail)]),
            Some(AuditKind::AuditKeyRotate) => say(A::SayAuditKeyRotate),
            Some(AuditKind::AuditRestore) => say_detail(A::SayAuditRestore, A::SayAuditRestoreDetail),
            Some(
                k @ (AuditKind::FileRequestCreate
                | AuditKind::FileRequestRevoke
                | AuditKind::FileRequestReceive
                | AuditKind::ShareFetch
                | AuditKind::SharePublish
                | AuditKind::ShareResume
                | AuditKind::InquiryRelease
                | AuditKind::SpamDelete
                | AuditKind::SpamRetentionChange),
            ) => tf(A::SayFileEvent, &[("who", &who), ("what", &k.label()), ("subject", &subject)]),
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
    /// Parses the viewer's form fields (as typed; empty = no filter). Errors are per field, in the
    /// page's language (English where there is none, as for the CSV link).
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
                    errors.insert(field.to_string(), t(AuditTextT::UseDate).to_string());
                    None
                }
            }
        };
        let kind = match kind.trim() {
            "" => None,
            k if AuditKind::parse(k).is_some() => Some(k.to_string()),
            _ => {
                errors.insert("kind".into(), t(AuditTextT::ChooseKind).into());
                None
            }
        };
        let admin = match admin.trim() {
            "" => None,
            a => match uuid::Uuid::parse_str(a) {
                Ok(id) => Some(id),
                Err(_) => {
                    errors.insert("admin".into(), t(AuditTextT::ChooseAdmin).into());
                    None
                }
            },
        };
        let subject = subject.trim();
        if subject.chars().count() > 200 {
            errors.insert("subject".into(), t(AuditTextT::SubjectTooLong).into());
        } else if subject.chars().any(char::is_control) {
            errors.insert("subject".into(), t(AuditTextT::SubjectControl).into());
        }
        let from = date("from", from, &mut errors);
        let to = date("to", to, &mut errors);
        if let (Some(start), Some(end)) = (from, to) {
            if start > end {
                errors.insert("to".into(), t(AuditTextT::EndBeforeStart).into());
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(AuditFilter { kind, admin, subject: (!subject.is_empty()).then(|| subject.to_string()), from, to })
    }

    /// The filter as a query string for the CSV link (`kind=…&admin=…`).
    pub fn query(&self) -> String {
        let enc = common::ui::url_encode;
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
    pub status: MonthStatus,
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

/// A signed digest of the audit trail, as the audit page lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DigestView {
    pub number: i64,
    pub object_key: String,
    pub key_id: String,
    pub reason: String,
    /// Events in the chains it lists.
    pub events: i64,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: time::OffsetDateTime,
}

/// A public key that signs (or signed) digests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SigningKeyView {
    pub key_id: String,
    /// Hex of the 32-byte Ed25519 key.
    pub public_key: String,
    pub retired: bool,
}

/// The tamper-evidence part of the audit page: keys, latest digests, sealing state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrailOverview {
    pub keys: Vec<SigningKeyView>,
    pub digests: Vec<DigestView>,
    pub sealed: i64,
    pub pending: i64,
}

/// The result of "Verify now".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyOutcome {
    pub ok: bool,
    pub events: u64,
    pub archived: u64,
    pub digests: u64,
    /// The first break: where, and what.
    pub first: Option<(String, String)>,
    /// Not breaks: digests superseded by a signed restore statement.
    pub warnings: Vec<String>,
}

/// A request for a CSV export of a range of audit events.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportView {
    pub id: uuid::Uuid,
    /// First and last day of the range (UTC, inclusive).
    pub from: time::Date,
    pub to: time::Date,
    pub status: ExportStatus,
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
        return Err(t(AuditTextT::ReasonControl).into());
    }
    match reason.chars().count() {
        10..=256 => Ok(reason.to_string()),
        n => Err(tf(AuditTextT::ReasonLength, &[("n", &n)])),
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

texts! {
    pub(crate) enum AuditTextT {

    // The viewer's "What happened" column (`AuditRow::sentence`): {who} is an admin's name,
    // {subject} the subject id and {detail} the detail, as stored
    RemovedAdmin { en: "A removed admin", ja: "削除された管理者" }
    SaySignIn { en: "{who} signed in", ja: "{who} がサインインしました" }
    SaySignInRefused { en: "A sign-in was refused ({why})", ja: "サインインが拒否されました（{why}）" }
    RefusedUnknownPasskey { en: "unknown passkey", ja: "不明なパスキー" }
    RefusedNotVerified { en: "the passkey's answer did not verify", ja: "パスキーの応答を検証できませんでした" }
    SaySignOut { en: "{who} signed out", ja: "{who} がサインアウトしました" }
    SayAdminCreate { en: "{who} joined as an admin", ja: "{who} が管理者として参加しました" }
    SayAdminRemove { en: "{who} removed admin {subject}", ja: "{who} が管理者 {subject} を削除しました" }
    SayStepUp { en: "{who} confirmed with a passkey (for a sensitive action)", ja: "{who} がパスキーで本人確認しました（重要な操作のため）" }
    SayAdminRole { en: "{who} changed the role of admin {subject}", ja: "{who} が管理者 {subject} のロールを変更しました" }
    SayAdminRoleDetail { en: "{who} changed the role of admin {subject}: {detail}", ja: "{who} が管理者 {subject} のロールを変更しました：{detail}" }
    SayAdminRemoveDetail { en: "{who} removed admin {subject}: {detail}", ja: "{who} が管理者 {subject} を削除しました：{detail}" }
    SayPasskeyAddNamed { en: "{who} added passkey '{name}'", ja: "{who} がパスキー「{name}」を追加しました" }
    SayPasskeyAddId { en: "{who} added passkey {subject}", ja: "{who} がパスキー {subject} を追加しました" }
    SayPasskeyRename { en: "{who} renamed a passkey to '{name}'", ja: "{who} がパスキーの名前を「{name}」に変更しました" }
    SayPasskeyRemoveNamed { en: "{who} removed passkey '{name}'", ja: "{who} がパスキー「{name}」を削除しました" }
    SayPasskeyRemoveId { en: "{who} removed passkey {subject}", ja: "{who} がパスキー {subject} を削除しました" }
    SayInviteCreate { en: "{who} created invite {subject}", ja: "{who} が招待 {subject} を作成しました" }
    SayInviteRedeem { en: "{who} joined with invite {subject}", ja: "{who} が招待 {subject} で参加しました" }
    SaySessionRevoke { en: "{who} signed out a session", ja: "{who} がセッションを終了しました" }
    SayInquiryDelete { en: "{who} deleted inquiry {subject}", ja: "{who} がお問い合わせ {subject} を削除しました" }
    SayInquiryExport { en: "{who} exported inquiries", ja: "{who} がお問い合わせをエクスポートしました" }
    SayRetentionChange { en: "{who} set inquiry retention to {subject} days", ja: "{who} がお問い合わせの保管期間を {subject} 日に設定しました" }
    SayShareCreate { en: "{who} created share {subject}", ja: "{who} が共有ファイル {subject} を作成しました" }
    SayShareDownload { en: "Share {subject} was downloaded", ja: "共有ファイル {subject} がダウンロードされました" }
    SayShareRevoke { en: "{who} revoked share {subject}", ja: "{who} が共有ファイル {subject} を取り消しました" }
    SaySharePurge { en: "The file of share {subject} was deleted", ja: "共有ファイル {subject} のファイルが削除されました" }
    SayMaintenanceRun { en: "{who} ran job {subject}", ja: "{who} がジョブ {subject} を実行しました" }
    SayMaintenanceRunDetail { en: "{who} ran job {subject}: {detail}", ja: "{who} がジョブ {subject} を実行しました: {detail}" }
    SayPartitionCreate { en: "Audit month {subject} was created", ja: "監査ログの月 {subject} が作成されました" }
    SayPartitionDetach { en: "Audit month {subject} was detached for the archive", ja: "監査ログの月 {subject} がアーカイブのために切り離されました" }
    SayUpkeepCheck { en: "Audit upkeep: {detail}", ja: "監査ログの保守: {detail}" }
    SayAlertRaise { en: "Alert {subject} was raised", ja: "アラート {subject} が発生しました" }
    SayAlertResolve { en: "{who} resolved alert {subject}", ja: "{who} がアラート {subject} を解決しました" }
    SayArchiveMonth { en: "Month {subject} was archived and verified", ja: "月 {subject} がアーカイブされ、確認されました" }
    SayArchiveMonthDetail { en: "Month {subject} was archived and verified ({detail})", ja: "月 {subject} がアーカイブされ、確認されました（{detail}）" }
    SayArchiveDrop { en: "Archived month {subject} was removed from the database", ja: "アーカイブ済みの月 {subject} がデータベースから削除されました" }
    SayArchiveFailure { en: "Archiving month {subject} failed", ja: "月 {subject} のアーカイブに失敗しました" }
    SayArchiveFailureDetail { en: "Archiving month {subject} failed: {detail}", ja: "月 {subject} のアーカイブに失敗しました: {detail}" }
    SayArchiveRetrieval { en: "{who} got a download link for archived month {subject}", ja: "{who} がアーカイブ済みの月 {subject} のダウンロードリンクを取得しました" }
    SayExportRequest { en: "{who} requested an export", ja: "{who} がエクスポートを依頼しました" }
    SayExportRequestDetail { en: "{who} requested an export of {detail}", ja: "{who} が {detail} のエクスポートを依頼しました" }
    ExportRange { en: "{from} to {to}", ja: "{from}〜{to}" }
    SayExportDownload { en: "{who} got a download link for export {subject}", ja: "{who} がエクスポート {subject} のダウンロードリンクを取得しました" }
    SayHoldPlace { en: "{who} placed legal hold {subject}", ja: "{who} が法的保全 {subject} を設定しました" }
    SayHoldPlaceDetail { en: "{who} placed legal hold {subject} on {detail}", ja: "{who} が法的保全 {subject} を設定しました（対象: {detail}）" }
    SayHoldLift { en: "{who} lifted legal hold {subject}", ja: "{who} が法的保全 {subject} を解除しました" }
    SayHoldLiftDetail { en: "{who} lifted legal hold {subject} from {detail}", ja: "{who} が法的保全 {subject} を解除しました（対象: {detail}）" }
    SayAuditExport { en: "{who} exported the audit log", ja: "{who} が監査ログをエクスポートしました" }
    SayRetentionReport { en: "{who} downloaded the retention report", ja: "{who} が保管期間レポートをダウンロードしました" }
    SayAuditVerify { en: "{who} verified the audit trail", ja: "{who} が監査証跡を検証しました" }
    SayAuditVerifyDetail { en: "{who} verified the audit trail: {detail}", ja: "{who} が監査証跡を検証しました: {detail}" }
    SayFileEvent { en: "{who} — {what} ({subject})", ja: "{who} — {what}（{subject}）" }
    SayRequest { en: "{who} — {what}, request #{subject}: {detail}", ja: "{who} — {what}（請求 #{subject}）: {detail}" }
    SayAuditRestore { en: "{who} restored Ebb from a backup", ja: "{who} が Ebb をバックアップから復元しました" }
    SayAuditRestoreDetail { en: "{who} restored Ebb from a backup: {detail}", ja: "{who} が Ebb をバックアップから復元しました: {detail}" }
    SayAuditKeyRotate { en: "{who} rotated the digest signing key (new key {subject})", ja: "{who} がダイジェストの署名鍵を更新しました（新しい鍵 {subject}）" }

    // The viewer's filter errors (`AuditFilter::parse`) and the export range's (exports.rs)
    UseDate { en: "Use a date like 2026-11-30.", ja: "2026-11-30 のような形式で日付を入力してください。" }
    ChooseKind { en: "Choose a kind from the list.", ja: "一覧から種別を選んでください。" }
    ChooseAdmin { en: "Choose an admin from the list.", ja: "一覧から管理者を選んでください。" }
    SubjectTooLong { en: "A subject id has at most 200 characters.", ja: "対象 ID は 200 文字以内で入力してください。" }
    SubjectControl { en: "A subject id is plain text, without control characters.", ja: "対象 ID は制御文字を含まないテキストで入力してください。" }
    EndBeforeStart { en: "The end date must not be before the start date.", ja: "終了日を開始日より前にすることはできません。" }
    RangeTooOld { en: "The log keeps {months} months; older events are in the archive. Start the range on {first} or later, and get older months from the archive below.", ja: "監査ログに残るのは {months} か月分です。それより前のイベントはアーカイブにあります。期間の開始日は {first} 以降にし、それより前の月は下のアーカイブから取得してください。" }
    RangeStartsLater { en: "The range must start today or earlier.", ja: "期間の開始日は今日以前にしてください。" }

    // An archive retrieval's reason (`check_reason`)
    ReasonControl { en: "The reason cannot contain control characters; write it as plain text.", ja: "理由に制御文字は使えません。テキストのみで入力してください。" }
    ReasonLength { en: "Give a reason of 10 to 256 characters ({n} now); it is kept with the link.", ja: "理由を 10〜256 文字で入力してください（現在 {n} 文字）。理由はリンクとともに記録されます。" }
}
}
