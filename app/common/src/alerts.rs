//! Alerts: the one way any code raises one. An alert is an ERROR log line with a stable
//! `alert.kind`, a counter (`ebb_alerts_raised_total`), and a row in `alerts` shown as a banner
//! on every admin page until it is resolved — automatically when the condition clears, or by an
//! admin. Kernel: it imports no domain; the kinds are listed here so they stay stable.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::i18n::{fill, num, texts, Lang, Text};
use crate::retention::{kind_label, Promise};

/// Every kind of alert Ebb raises (stable names: dashboards and log searches use them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AlertKind {
    /// A share's file could not be deleted 3 times; subject: the share id.
    ShareDeleteFailing,
    /// The blob store's marker object is missing or foreign: the store in use may not be the real
    /// one, so no delete counts as done; subject: empty.
    StorageMarkerMissing,
    /// A job failed twice in a row; subject: the job name.
    JobFailing,
    /// A live share's stored file is missing (its download would fail); subject: the share id.
    ShareFileMissing,
    /// The audit log has fewer monthly partitions ahead than wanted, or a hole: critical.
    AuditPartitionsMissing,
    /// Audit events landed in the default partition.
    AuditDefaultRows,
    /// An audit partition with an unexpected name or bounds was left alone.
    AuditUnexpectedPartition,
    /// A run of the audit archive failed (critical: months wait in the database, or an archived
    /// object is missing or changed); subject: the job name.
    ArchiveFailed,
    /// A job's runs end at their budget with work left (the archive's backlog of months);
    /// subject: the job name. Resolved by a run that finishes everything.
    ArchiveBehind,
    /// Audit upkeep failed (a partition could not be created or detached); subject: empty.
    /// Raised on the first failed run, resolved by a run that succeeds.
    AuditUpkeepFailed,
    /// Items of one kind are past their retention promise by more than one interval of the job
    /// that removes them; subject: the kind (`inquiries`, `share_files`…).
    RetentionOverdue,
    /// A check of the audit trail (its hash chains, archived months or signed digests) found a
    /// break: critical; subject: empty. Resolved by a check that passes.
    AuditChainBroken,
    /// An open data request is near its deadline, or past it; subject: the request's id.
    /// Resolved when the request is closed.
    DataRequestDue,
    /// Emails about files (or inquiries) were not sent within a day of their event (the SMTP
    /// server refused them all that time) and are given up; subject: empty. Resolved by an admin.
    NotifyUnsent,
    /// An upload found the store full (a full disk); subject: empty. Resolved by an admin.
    StorageFull,
}

impl AlertKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AlertKind::ShareDeleteFailing => "share.delete_failing",
            AlertKind::StorageMarkerMissing => "storage.marker_missing",
            AlertKind::JobFailing => "job.failing",
            AlertKind::ShareFileMissing => "share.file_missing",
            AlertKind::AuditPartitionsMissing => "audit.partitions_missing",
            AlertKind::AuditDefaultRows => "audit.default_rows",
            AlertKind::AuditUnexpectedPartition => "audit.unexpected_partition",
            AlertKind::ArchiveFailed => "archive.failed",
            AlertKind::RetentionOverdue => "retention.overdue",
            AlertKind::ArchiveBehind => "archive.behind",
            AlertKind::AuditUpkeepFailed => "audit.upkeep_failed",
            AlertKind::AuditChainBroken => "audit.chain_broken",
            AlertKind::DataRequestDue => "data_request.due",
            AlertKind::NotifyUnsent => "notify.unsent",
            AlertKind::StorageFull => "storage.full",
        }
    }
}

/// An open alert, as the banner shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlertView {
    pub id: i64,
    pub kind: String,
    pub subject: String,
    /// The headline in English, as it was raised (the server log has the same words).
    pub message: String,
    /// The headline as data, written in the reader's language ([`AlertMessage::text`]). Absent on
    /// alerts raised before messages were kept as data: their English `message` is shown.
    pub params: Option<AlertMessage>,
    /// Everything behind the headline (each failing month, each step's error); may be long.
    pub details: String,
    #[serde(with = "time::serde::rfc3339")]
    pub raised_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub last_raised_at: OffsetDateTime,
    pub times: i32,
}

/// What an alert says, as data: its kind of message and the values it names. Stored with the
/// alert (`alerts.params`) and written in each reader's language when shown, so rewording a
/// sentence never loses its translation (nothing is parsed back from text).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "message", rename_all = "snake_case")]
pub enum AlertMessage {
    /// A job failed twice in a row.
    JobFailing { job: String, title: String },
    /// A critical job failed at `steps`; the next run retries.
    JobFailed { job: String, title: String, steps: Vec<String> },
    /// A critical job stopped at `steps` where retrying cannot help: a person must act.
    JobNeedsPerson { job: String, title: String, steps: Vec<String> },
    /// A job's run ended at its budget with work left in `steps`.
    JobBehind { job: String, title: String, steps: Vec<String> },
    /// An archived month's object is missing from the storage.
    ArchiveMissing { month: String, key: String },
    /// A share's file could not be deleted `n` times.
    ShareDeleteFailing { share: String, n: i64 },
    /// A live share's stored file is missing.
    ShareFileMissing { share: String },
    /// The storage marker is missing.
    StorageMarker,
    /// Fewer audit partitions ahead than wanted (and, when `months` is not empty, holes).
    PartitionsMissing { n: i64, wanted: i64, months: Vec<String> },
    /// Audit events in the default partition.
    DefaultRows { n: i64 },
    /// Partitions upkeep left alone.
    UnexpectedPartition { names: Vec<String> },
    /// Items of a kind of data past their promise by more than one run of their job.
    Overdue { kind: String, label: String, n: i64, job: Option<String>, job_title: Option<String>, promise: Option<Promise> },
    /// The audit trail's check found its first break at `place` (an event, a month or a digest).
    ChainBroken { place: String },
    /// Data request `id` is due on `due` (`days_left` from today; negative: past it).
    RequestDue { id: i64, due: String, days_left: i64 },
    /// `n` file notifications were given up a day after their event, unsent.
    NotifyUnsent { n: i64 },
    /// An upload found the store full.
    StorageFull,
}

impl AlertMessage {
    /// The message in `lang`. `job_title(name, english)` puts a job's title in `lang` (the
    /// dashboard's table of job texts); the English text passes the title through.
    pub fn text(&self, lang: Lang, job_title: &dyn Fn(&str, &str) -> String) -> String {
        use AlertT as A;
        let list = |items: &[String]| items.join(", ");
        let job_named = |job: &str, title: &str| job_title(job, title);
        match self {
            AlertMessage::JobFailing { job, title } => fill(A::JobFailing.get(lang), &[("job", &job_named(job, title))]),
            AlertMessage::JobFailed { job, title, steps } => fill(A::JobFailed.get(lang), &[("job", &job_named(job, title)), ("steps", &list(steps))]),
            AlertMessage::JobNeedsPerson { job, title, steps } => {
                fill(A::JobNeedsPerson.get(lang), &[("job", &job_named(job, title)), ("steps", &list(steps))])
            }
            AlertMessage::JobBehind { job, title, steps } => fill(A::JobBehind.get(lang), &[("job", &job_named(job, title)), ("steps", &list(steps))]),
            AlertMessage::ArchiveMissing { month, key } => fill(A::ArchiveMissing.get(lang), &[("month", month), ("key", key)]),
            AlertMessage::ShareDeleteFailing { share, n } => fill(A::ShareDeleteFailing.get(lang), &[("share", share), ("n", &num(*n))]),
            AlertMessage::ShareFileMissing { share } => fill(A::ShareFileMissing.get(lang), &[("share", share)]),
            AlertMessage::StorageMarker => A::StorageMarker.get(lang).to_string(),
            AlertMessage::PartitionsMissing { n, wanted, months } if months.is_empty() => {
                fill(A::PartitionsMissing.get(lang), &[("n", &num(*n)), ("wanted", &num(*wanted))])
            }
            AlertMessage::PartitionsMissing { n, wanted, months } => {
                fill(A::PartitionsHoles.get(lang), &[("n", &num(*n)), ("wanted", &num(*wanted)), ("months", &list(months))])
            }
            AlertMessage::ChainBroken { place } => fill(A::ChainBroken.get(lang), &[("place", place)]),
            AlertMessage::RequestDue { id, due, days_left } => {
                let template = match *days_left {
                    d if d < 0 => A::RequestOverdue,
                    0 => A::RequestDueToday,
                    _ => A::RequestDueSoon,
                };
                fill(template.get(lang), &[("id", &id.to_string()), ("due", due), ("n", &num(days_left.abs()))])
            }
            AlertMessage::StorageFull => A::StorageFull.get(lang).to_string(),
            AlertMessage::NotifyUnsent { n } => fill(A::NotifyUnsent.get(lang), &[("n", &num(*n))]),
            AlertMessage::DefaultRows { n } => fill(A::DefaultRows.get(lang), &[("n", &num(*n))]),
            AlertMessage::UnexpectedPartition { names } => fill(A::UnexpectedPartition.get(lang), &[("names", &list(names))]),
            AlertMessage::Overdue { kind, label, n, job, job_title: title, promise } => {
                let label = kind_label(kind).filter(|k| k.get(Lang::En) == label).map_or_else(|| label.clone(), |k| k.get(lang).to_string());
                let job = match (job, title) {
                    (Some(job), Some(title)) => job_named(job, title),
                    _ => A::TheirJob.get(lang).to_string(),
                };
                let promise = promise.map_or_else(String::new, |p| p.text(lang).trim_end_matches(['.', '。']).to_string());
                let template = if *n == 1 { A::OverdueOne } else { A::OverdueMany };
                fill(template.get(lang), &[("label", &label), ("n", &num(*n)), ("job", &job), ("promise", &promise)])
            }
        }
    }

    /// The message in English (the stored headline and the server log's words).
    pub fn english(&self) -> String {
        self.text(Lang::En, &|_, title| title.to_string())
    }
}

texts! {
    pub enum AlertT {
    RequestDueSoon { en: "Data request #{id} must be answered by {due} ({n} days left). Open Data requests to finish it.", ja: "データ請求 #{id} の回答期限は {due} です（残り {n} 日）。「データ請求」を開いて対応してください。" }
    RequestDueToday { en: "Data request #{id} must be answered today ({due}). Open Data requests to finish it.", ja: "データ請求 #{id} の回答期限は本日（{due}）です。「データ請求」を開いて対応してください。" }
    RequestOverdue { en: "Data request #{id} is past its deadline ({due}, {n} days ago). Answer it now: Open Data requests.", ja: "データ請求 #{id} は回答期限（{due}、{n} 日前）を過ぎています。「データ請求」を開いて直ちに対応してください。" }
    JobFailing { en: "The job “{job}” failed in its last two runs. The server log has the cause of each failed step.", ja: "ジョブ「{job}」が 2 回続けて失敗しました。失敗した各ステップの原因はサーバーログに記録されています。" }
    JobFailed { en: "The job “{job}” failed at: {steps}. Nothing unverified was deleted; the next run retries. The details and the dashboard have each step's result.", ja: "ジョブ「{job}」が次のステップで失敗しました: {steps}。確認の済んでいないものは何も削除されていません。次回の実行で再試行します。各ステップの結果は詳細とダッシュボードで確認できます。" }
    JobNeedsPerson { en: "The job “{job}” stopped at: {steps}. A person must act — retrying will not fix it; the details say what. Nothing unverified was deleted.", ja: "ジョブ「{job}」が次のステップで停止しました: {steps}。再試行では解決しないため、担当者の対応が必要です。内容は詳細を確認してください。確認の済んでいないものは何も削除されていません。" }
    JobBehind { en: "The job “{job}” has a backlog: its last run ended at its budget with work left ({steps}). Runs go on with it; this clears when a run finishes everything.", ja: "ジョブ「{job}」に未処理の作業が残っています。前回の実行は処理枠の上限で終了しました（{steps}）。以降の実行で続きを処理し、すべて終わるとこのアラートは解消されます。" }
    ArchiveMissing { en: "Archived month {month} is in the ledger but {key} is not in the storage. Restore it from a backup.", ja: "アーカイブ済みの月 {month} は台帳に記録されていますが、ストレージに {key} がありません。バックアップから復元してください。" }
    ShareDeleteFailing { en: "The file of share {share} could not be deleted {n} times; it is retried with growing delays. The server log has the cause.", ja: "共有ファイル {share} のファイルを {n} 回削除できませんでした。間隔を広げながら再試行します。原因はサーバーログに記録されています。" }
    ShareFileMissing { en: "The stored file of share {share} is missing: its link cannot be delivered. Check the storage; revoke the share if the file is lost.", ja: "共有ファイル {share} の保存されたファイルが見つかりません。リンクからダウンロードできない状態です。ストレージを確認し、ファイルが失われている場合は共有を取り消してください。" }
    StorageMarker { en: "The storage marker is missing: the storage folder (or bucket) in use may not be the real one — an unmounted disk or a wrong path. No share is marked deleted until it is back. Check EBB_STORAGE_DIR and the mount (or the EBB_S3_* settings).", ja: "ストレージのマーカーが見つかりません。使用中のストレージフォルダー（またはバケット）が本来のものではない可能性があります（ディスクがマウントされていない、パスが誤っているなど）。マーカーが戻るまで、共有ファイルは削除済みになりません。EBB_STORAGE_DIR とマウント（または EBB_S3_* の設定）を確認してください。" }
    PartitionsMissing { en: "The audit log has {n} monthly partitions ahead (wanted {wanted}). Upkeep stopped before detaching anything; a person must fix the partitions (see the auditor guide, docs/auditor.md, on audit upkeep).", ja: "監査ログの先の月のパーティションは {n} 個です（必要数 {wanted} 個）。保守は何も切り離さずに停止しました。パーティションを手作業で修正する必要があります（監査ガイド docs/auditor.md の audit upkeep を参照してください）。" }
    PartitionsHoles { en: "The audit log has {n} monthly partitions ahead (wanted {wanted}), and these months have none: {months}. Upkeep stopped before detaching anything; a person must fix the partitions (see the auditor guide, docs/auditor.md, on audit upkeep).", ja: "監査ログの先の月のパーティションは {n} 個で（必要数 {wanted} 個）、次の月にはパーティションがありません: {months}。保守は何も切り離さずに停止しました。パーティションを手作業で修正する必要があります（監査ガイド docs/auditor.md の audit upkeep を参照してください）。" }
    DefaultRows { en: "{n} audit events are in the default partition (a month without its partition). Create the month's partition and move them.", ja: "{n} 件の監査イベントがデフォルトパーティションに入っています（パーティションのない月のイベントです）。その月のパーティションを作成し、イベントを移動してください。" }
    UnexpectedPartition { en: "Audit upkeep left these partitions alone (unexpected name or bounds): {names}.", ja: "監査ログの保守は、次のパーティションを処理対象外としました（想定外の名前または範囲）: {names}。" }
    OverdueOne { en: "{label}: 1 item is past their promise by more than one run of {job} ({promise}). Check that job's last runs on the dashboard, and the Retention page.", ja: "{label}: 1 件が、約束した保管期間を{job}の実行間隔 1 回分以上超えています（{promise}）。ダッシュボードでこのジョブの最近の実行と、保管期間ページを確認してください。" }
    OverdueMany { en: "{label}: {n} items are past their promise by more than one run of {job} ({promise}). Check that job's last runs on the dashboard, and the Retention page.", ja: "{label}: {n} 件が、約束した保管期間を{job}の実行間隔 1 回分以上超えています（{promise}）。ダッシュボードでこのジョブの最近の実行と、保管期間ページを確認してください。" }
    StorageFull { en: "An upload found the storage full and was refused (507). Free space on the store's disk (or move the store); `ebb doctor` shows the free space.", ja: "保存領域がいっぱいのため、アップロードが拒否されました（507）。ストレージのディスクの空き容量を確保するか、保存先を移してください。空き容量は `ebb doctor` で確認できます。" }
    NotifyUnsent { en: "{n} emails about files were not sent within a day of their event and were given up (the SMTP server did not take them; the server log has why). Check the SMTP settings; the shares page shows what happened.", ja: "ファイルに関する {n} 件のメールが、発生から 1 日以内に送信できなかったため破棄されました（SMTP サーバーが受け付けませんでした。原因はサーバーログにあります）。SMTP の設定を確認してください。経緯は共有ファイルのページで確認できます。" }
    TheirJob { en: "their job", ja: "削除ジョブ" }
    ChainBroken { en: "The audit trail does not verify: the first break is at {place}. Someone may have changed the audit log or its archive. Keep the database and the storage as they are, and run `ebb audit verify --archive` for the full report.", ja: "監査証跡の検証に失敗しました。最初の不整合は {place} です。監査ログまたはそのアーカイブが改ざんされた可能性があります。データベースとストレージをそのまま保全し、`ebb audit verify --archive` で詳細を確認してください。" }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Japanese reader gets every message in Japanese, with the values it names; the English
    /// is what the server logs. Nothing is read back from the English text, so rewording one
    /// (the job-failing message was reworded when messages became data) keeps its translation.
    #[test]
    fn every_message_is_written_in_both_languages_from_its_values() {
        let title = |_: &str, english: &str| if english == "Prune" { "定期削除".to_string() } else { english.to_string() };
        let m = AlertMessage::JobFailing { job: "prune".into(), title: "Prune".into() };
        assert_eq!(m.text(Lang::Ja, &title), "ジョブ「定期削除」が 2 回続けて失敗しました。失敗した各ステップの原因はサーバーログに記録されています。");
        assert!(m.english().starts_with("The job “Prune” failed in its last two runs."), "{}", m.english());
        let m = AlertMessage::DefaultRows { n: 1234 };
        assert!(m.text(Lang::Ja, &title).starts_with("1,234 件の監査イベント"));
        let m = AlertMessage::PartitionsMissing { n: 1, wanted: 3, months: vec!["2025-01".into(), "2025-02".into()] };
        let ja = m.text(Lang::Ja, &title);
        assert!(ja.starts_with("監査ログの先の月のパーティションは 1 個で（必要数 3 個）") && ja.contains("2025-01, 2025-02"), "{ja}");
        let m = AlertMessage::Overdue {
            kind: "inquiries".into(),
            label: "Inquiries".into(),
            n: 3,
            job: Some("prune".into()),
            job_title: Some("Prune".into()),
            promise: Some(Promise::Inquiries { days: 180 }),
        };
        let ja = m.text(Lang::Ja, &title);
        assert!(ja.starts_with("お問い合わせ: 3 件が、約束した保管期間を定期削除の実行間隔"), "{ja}");
        assert!(ja.contains(Promise::Inquiries { days: 180 }.text(Lang::Ja).trim_end_matches('。')), "{ja}");
        assert!(m.english().contains("(Deleted 180 days after they arrive (retention setting))"), "{}", m.english());
        // Stored as data, read back as the same message.
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(serde_json::from_str::<AlertMessage>(&json).unwrap(), m);
    }
}
