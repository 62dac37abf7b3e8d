//! The vocabulary of retention, as both sides say it: each kind of data's label and its promise
//! (typed, so that each language writes it from the same figures).

use serde::{Deserialize, Serialize};

use crate::i18n::{fill, texts, Lang, Text};

/// A kind's promise, from the settings in force, as data: the report's JSON, the CLI and alerts
/// keep its English ([`Promise::text`] in English), and the admin page writes it in its language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "promise", rename_all = "snake_case")]
pub enum Promise {
    Inquiries {
        days: i64,
    },
    ShareFiles {
        grace_mins: i64,
    },
    Sessions {
        idle_hours: i64,
        absolute_days: i64,
    },
    PasskeyChallenges,
    Invites,
    RateLimitWindows,
    AuditEvents {
        promise_months: i64,
        detach_months: i64,
    },
    ArchivedMonths,
    ExportFiles {
        days: i64,
    },
    ExportRequests {
        days: i64,
    },
    RunRecords {
        days: i64,
    },
    /// The record of a data request: its address is removed `days` after it is closed.
    DataRequests {
        days: i64,
    },
    /// The list of notification emails sent (when, to how many, whose inquiries as keyed hashes).
    NotifyDigests {
        days: i64,
    },
    /// File requests (one-time upload links): forgotten `days` after they ended.
    FileRequests {
        days: i64,
    },
    /// Legal holds: kept until an admin lifts them.
    LegalHolds,
    /// Suspected spam (the contact form's quarantine): deleted `days` after it arrived.
    SuspectedSpam {
        days: i64,
    },
    /// Proofs of work already used: deleted when their challenge expires.
    SpentProofs,
}

impl Promise {
    /// The days after which an item of a kind kept for a number of days goes (counted from its
    /// time, or from when it was closed or ended); `None` for the other promises.
    pub fn days(self) -> Option<i64> {
        match self {
            Promise::Inquiries { days }
            | Promise::ExportFiles { days }
            | Promise::ExportRequests { days }
            | Promise::RunRecords { days }
            | Promise::DataRequests { days }
            | Promise::NotifyDigests { days }
            | Promise::FileRequests { days }
            | Promise::SuspectedSpam { days } => Some(days),
            _ => None,
        }
    }

    /// The promise in `lang`.
    pub fn text(self, lang: Lang) -> String {
        use PromiseT as R;
        let unit = |n: i64, one: R, many: R| if n == 1 { one.get(lang).to_string() } else { fill(many.get(lang), &[("n", &n)]) };
        match self {
            Promise::Inquiries { days } => fill(R::PromiseInquiries.get(lang), &[("days", &unit(days, R::UnitDay, R::UnitDays))]),
            Promise::ShareFiles { grace_mins } => fill(R::PromiseShareFiles.get(lang), &[("grace", &unit(grace_mins, R::UnitMinute, R::UnitMinutes))]),
            Promise::Sessions { idle_hours, absolute_days } => fill(
                R::PromiseSessions.get(lang),
                &[("idle", &unit(idle_hours, R::UnitHour, R::UnitHours)), ("absolute", &unit(absolute_days, R::UnitDay, R::UnitDays))],
            ),
            Promise::PasskeyChallenges => R::PromiseChallenges.get(lang).into(),
            Promise::Invites => R::PromiseInvites.get(lang).into(),
            Promise::RateLimitWindows => R::PromiseRateLimits.get(lang).into(),
            Promise::AuditEvents { promise_months, detach_months } => {
                fill(R::PromiseAuditEvents.get(lang), &[("promise", &promise_months), ("detach", &detach_months)])
            }
            Promise::ArchivedMonths => R::PromiseArchivedMonths.get(lang).into(),
            Promise::ExportFiles { days } => fill(R::PromiseExportFiles.get(lang), &[("days", &days)]),
            Promise::ExportRequests { days } => fill(R::PromiseExportRequests.get(lang), &[("days", &days)]),
            Promise::RunRecords { days } => fill(R::PromiseRunRecords.get(lang), &[("days", &days)]),
            Promise::DataRequests { days } => fill(R::PromiseDataRequests.get(lang), &[("days", &unit(days, R::UnitDay, R::UnitDays))]),
            Promise::NotifyDigests { days } => fill(R::PromiseNotifyDigests.get(lang), &[("days", &unit(days, R::UnitDay, R::UnitDays))]),
            Promise::FileRequests { days } => fill(R::PromiseFileRequests.get(lang), &[("days", &unit(days, R::UnitDay, R::UnitDays))]),
            Promise::LegalHolds => R::PromiseLegalHolds.get(lang).into(),
            Promise::SuspectedSpam { days } => fill(R::PromiseSuspectedSpam.get(lang), &[("days", &unit(days, R::UnitDay, R::UnitDays))]),
            Promise::SpentProofs => R::PromiseSpentProofs.get(lang).into(),
        }
    }
}

/// A kind's label by its stable id (the report's `kind`).
pub fn kind_label(kind: &str) -> Option<PromiseT> {
    use PromiseT as R;
    Some(match kind {
        "inquiries" => R::KindInquiries,
        "share_files" => R::KindShareFiles,
        "sessions" => R::KindSessions,
        "passkey_challenges" => R::KindPasskeyChallenges,
        "invites" => R::KindInvites,
        "rate_limit_windows" => R::KindRateLimitWindows,
        "audit_events" => R::KindAuditEvents,
        "archived_months" => R::KindArchivedMonths,
        "export_files" => R::KindExportFiles,
        "export_requests" => R::KindExportRequests,
        "run_records" => R::KindRunRecords,
        "data_requests" => R::KindDataRequests,
        "notify_digests" => R::KindNotifyDigests,
        "file_requests" => R::KindFileRequests,
        "suspected_spam" => R::KindSuspectedSpam,
        "spent_proofs" => R::KindSpentProofs,
        _ => return None,
    })
}

texts! {
    pub enum PromiseT {
    KindInquiries { en: "Inquiries", ja: "お問い合わせ" }
    KindShareFiles { en: "Shared files", ja: "共有ファイル" }
    KindSessions { en: "Admin sessions", ja: "管理者のセッション" }
    KindPasskeyChallenges { en: "Passkey challenges", ja: "パスキーのチャレンジ" }
    KindInvites { en: "Admin invites", ja: "管理者の招待" }
    KindRateLimitWindows { en: "Rate-limit windows", ja: "レート制限の集計期間" }
    KindAuditEvents { en: "Audit events in the database", ja: "データベース内の監査ログ" }
    KindArchivedMonths { en: "Archived audit months", ja: "アーカイブ済みの監査ログ（月単位）" }
    KindExportFiles { en: "Audit export files", ja: "監査ログのエクスポートファイル" }
    KindExportRequests { en: "Audit export requests", ja: "監査ログのエクスポート依頼" }
    KindRunRecords { en: "Job run records", ja: "ジョブの実行記録" }
    KindDataRequests { en: "Data requests", ja: "データ請求" }
    KindNotifyDigests { en: "Notification email log", ja: "通知メールの送信記録" }
    KindFileRequests { en: "File requests (upload links)", ja: "ファイル依頼（アップロード用リンク）" }
    KindSuspectedSpam { en: "Suspected spam", ja: "スパムの疑い" }
    KindSpentProofs { en: "Used proofs of work", ja: "使用済みのプルーフ・オブ・ワーク" }
    UnitDay { en: "1 day", ja: "1 日" }
    UnitDays { en: "{n} days", ja: "{n} 日" }
    UnitHour { en: "1 hour", ja: "1 時間" }
    UnitHours { en: "{n} hours", ja: "{n} 時間" }
    UnitMinute { en: "1 minute", ja: "1 分" }
    UnitMinutes { en: "{n} minutes", ja: "{n} 分" }
    PromiseInquiries { en: "Deleted {days} after they arrive (retention setting).", ja: "受信から {days}後に削除されます（保管期間の設定）。" }
    PromiseShareFiles { en: "Deleted {grace} after the one download, or when the link expires unused.", ja: "1 回限りのダウンロードから {grace}後、またはリンクが未使用のまま期限切れになった時点で削除されます。" }
    PromiseSessions { en: "Ended after {idle} unused, and {absolute} after sign-in at the latest.", ja: "{idle}使われないと終了し、遅くともサインインから {absolute}後には終了します。" }
    PromiseChallenges { en: "Deleted when used; abandoned ones when they expire (minutes).", ja: "使用時に削除されます。使われなかったものは期限切れ時（数分後）に削除されます。" }
    PromiseInvites { en: "Unused invites are deleted when they expire; used ones are kept as the record of who joined.", ja: "未使用の招待は期限切れ時に削除されます。使用済みの招待は、誰が参加したかの記録として保管されます。" }
    PromiseRateLimits { en: "Deleted a day after their window starts (they hold keyed hashes of addresses, never addresses).", ja: "集計期間の開始から 1 日後に削除されます（保存されるのはアドレスの鍵付きハッシュのみで、アドレスそのものは保存されません）。" }
    PromiseAuditEvents { en: "Queryable for {promise} months; a month is detached after {detach} months, archived, verified, then removed from the database.", ja: "{promise} か月間検索できます。各月は {detach} か月後に切り離され、アーカイブと確認を経てデータベースから削除されます。" }
    PromiseArchivedMonths { en: "Kept in archive storage; each object's size and checksum are checked daily.", ja: "アーカイブ用ストレージに保管されます。各オブジェクトのサイズとチェックサムは毎日確認されます。" }
    PromiseExportFiles { en: "Deleted {days} days after they are written.", ja: "作成から {days} 日後に削除されます。" }
    PromiseExportRequests { en: "Deleted {days} days after they are made.", ja: "依頼から {days} 日後に削除されます。" }
    PromiseRunRecords { en: "Deleted {days} days after the run.", ja: "実行から {days} 日後に削除されます。" }
    PromiseDataRequests { en: "The person's address is removed {days} after the request is closed; the record keeps only a keyed hash of it.", ja: "請求の完了から {days}後に本人のアドレスが削除されます。記録にはアドレスの鍵付きハッシュのみが残ります。" }
    PromiseFileRequests { en: "Forgotten {days} after the link was used, expired or was revoked (a received file is kept as a share of its own).", ja: "リンクの使用・期限切れ・取り消しから {days}後に削除されます（受信したファイルは共有ファイルとして別に管理されます）。" }
    PromiseNotifyDigests { en: "Deleted {days} after the email was sent (it holds keyed hashes of senders' addresses, never addresses).", ja: "メールの送信から {days}後に削除されます（保存されるのは送信者アドレスの鍵付きハッシュのみで、アドレスそのものは保存されません）。" }
    PromiseSuspectedSpam { en: "Deleted {days} after they arrive (spam retention setting on the inbox's Spam tab); never emailed.", ja: "受信から {days}後に削除されます（受信箱の「スパム」タブの保管期間設定）。メール通知はされません。" }
    PromiseSpentProofs { en: "Deleted when their challenge expires (an hour); they hold no personal data.", ja: "チャレンジの期限切れ時（1 時間後）に削除されます。個人データは含みません。" }
    PromiseLegalHolds { en: "Kept until an admin lifts the hold.", ja: "管理者が保全を解除するまで保管されます。" }
    }
}

/// The settings row holding the inquiries' retention period.
pub const RETENTION_KEY: &str = "retention_days";

/// Retention when the setting is missing or invalid.
pub const DEFAULT_RETENTION_DAYS: u32 = 180;
/// Allowed retention range, in days.
pub const RETENTION_DAYS_RANGE: std::ops::RangeInclusive<u32> = 1..=3650;

/// What the settings page says when a retention value is out of range.
pub const RETENTION_DAYS_MESSAGE: &str = "Enter a whole number of days from 1 to 3,650 (ten years).";

/// Validates retention typed by an admin (browser and server): 1–3,650 whole days.
pub fn parse_retention_input(raw: &str) -> Result<u32, String> {
    raw.trim().parse::<u32>().ok().filter(|d| RETENTION_DAYS_RANGE.contains(d)).ok_or_else(|| RETENTION_DAYS_MESSAGE.to_string())
}

/// Reads the `retention_days` setting: 1–3,650, and 180 when missing or invalid.
pub fn retention_days_or_default(stored: Option<&str>) -> u32 {
    stored.and_then(|s| s.trim().parse::<u32>().ok()).filter(|d| RETENTION_DAYS_RANGE.contains(d)).unwrap_or(DEFAULT_RETENTION_DAYS)
}

#[cfg(test)]
mod retention_setting_tests {
    use super::*;
    #[test]
    fn missing_zero_too_large_or_garbage_retention_means_180_days() {
        for stored in [None, Some("0"), Some("3651"), Some("abc"), Some("-5"), Some(""), Some("1.5")] {
            assert_eq!(retention_days_or_default(stored), 180, "{stored:?}");
        }
    }

    #[test]
    fn retention_typed_by_an_admin_must_be_1_to_3650_whole_days() {
        assert_eq!(parse_retention_input("1"), Ok(1));
        assert_eq!(parse_retention_input(" 3650 "), Ok(3650));
        for bad in ["0", "3651", "-1", "1.5", "", "ten"] {
            assert_eq!(parse_retention_input(bad), Err(RETENTION_DAYS_MESSAGE.to_string()), "{bad:?}");
        }
    }

    #[test]
    fn retention_bounds_1_and_3650_are_honoured() {
        assert_eq!(retention_days_or_default(Some("1")), 1);
        assert_eq!(retention_days_or_default(Some("3650")), 3650);
        assert_eq!(retention_days_or_default(Some(" 30 ")), 30);
    }
}
