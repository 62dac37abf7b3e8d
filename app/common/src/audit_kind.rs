//! What can happen in the audit log: every kind of event, with its stable stored name and its
//! label for people. One list: the writer (`kernel::audit`), the viewer's filter, CSV, the
//! archive and the database's list of kinds (synchronised at start-up) all read it.

use serde::{Deserialize, Serialize};

use crate::i18n::{t, texts};

macro_rules! kinds {
    ($($variant:ident = $name:literal, $label:ident;)+) => {
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

            /// A short label for people (filters), in the page's language. Not for CSV or the
            /// archive: they use [`AuditKind::as_str`].
            pub fn label(self) -> &'static str {
                match self { $(AuditKind::$variant => t(AuditKindT::$label)),+ }
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
                    AuditKind::AuditVerify => "chain",
                    AuditKind::AuditKeyRotate => "key",
                    AuditKind::AuditRestore => "digests",
                    AuditKind::RequestRecord
                    | AuditKind::RequestFind
                    | AuditKind::RequestExport
                    | AuditKind::RequestErasePreview
                    | AuditKind::RequestErase
                    | AuditKind::RequestErased
                    | AuditKind::RequestClose => "data_request",
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
    SignIn = "auth.signin", KindSignIn;
    SignInRefused = "auth.signin_refused", KindSignInRefused;
    SignOut = "auth.signout", KindSignOut;
    StepUp = "auth.step_up", KindStepUp;
    AdminCreate = "admin.create", KindAdminCreate;
    AdminRemove = "admin.remove", KindAdminRemove;
    AdminRole = "admin.role", KindAdminRole;
    PasskeyAdd = "passkey.add", KindPasskeyAdd;
    PasskeyRename = "passkey.rename", KindPasskeyRename;
    PasskeyRemove = "passkey.remove", KindPasskeyRemove;
    InviteCreate = "invite.create", KindInviteCreate;
    InviteRedeem = "invite.redeem", KindInviteRedeem;
    SessionRevoke = "session.revoke", KindSessionRevoke;
    InquiryDelete = "inquiry.delete", KindInquiryDelete;
    InquiryExport = "inquiry.export", KindInquiryExport;
    RetentionChange = "settings.retention_days", KindRetentionChange;
    ShareCreate = "share.create", KindShareCreate;
    ShareDownload = "share.download", KindShareDownload;
    ShareRevoke = "share.revoke", KindShareRevoke;
    SharePurge = "share.purge", KindSharePurge;
    MaintenanceRun = "maintenance.run", KindMaintenanceRun;
    PartitionCreate = "upkeep.partition_create", KindPartitionCreate;
    PartitionDetach = "upkeep.partition_detach", KindPartitionDetach;
    UpkeepCheck = "upkeep.check", KindUpkeepCheck;
    AlertRaise = "alert.raise", KindAlertRaise;
    AlertResolve = "alert.resolve", KindAlertResolve;
    ArchiveMonth = "archive.month", KindArchiveMonth;
    ArchiveDrop = "archive.drop", KindArchiveDrop;
    ArchiveFailure = "archive.failure", KindArchiveFailure;
    ArchiveRetrieval = "archive.retrieval", KindArchiveRetrieval;
    ExportRequest = "export.request", KindExportRequest;
    ExportDownload = "export.download", KindExportDownload;
    HoldPlace = "hold.place", KindHoldPlace;
    HoldLift = "hold.lift", KindHoldLift;
    RetentionReport = "retention.report", KindRetentionReport;
    AuditExport = "audit.export", KindAuditExport;
    AuditVerify = "audit.verify", KindAuditVerify;
    AuditKeyRotate = "audit.key_rotate", KindAuditKeyRotate;
    AuditRestore = "audit.restore", KindAuditRestore;
    RequestRecord = "request.record", KindRequestRecord;
    RequestFind = "request.find", KindRequestFind;
    RequestExport = "request.export", KindRequestExport;
    RequestErasePreview = "request.erase_preview", KindRequestErasePreview;
    RequestErase = "request.erase", KindRequestErase;
    RequestErased = "request.erased", KindRequestErased;
    RequestClose = "request.close", KindRequestClose;
    FileRequestCreate = "file_request.create", KindFileRequestCreate;
    FileRequestRevoke = "file_request.revoke", KindFileRequestRevoke;
    FileRequestReceive = "file_request.receive", KindFileRequestReceive;
    ShareFetch = "share.fetch", KindShareFetch;
    SharePublish = "share.publish", KindSharePublish;
    ShareResume = "share.resume", KindShareResume;
    InquiryRelease = "inquiry.release", KindInquiryRelease;
    SpamDelete = "spam.delete", KindSpamDelete;
    SpamRetentionChange = "settings.spam_retention_days", KindSpamRetentionChange;
}

texts! {
    pub enum AuditKindT {
    KindSignIn { en: "Signed in", ja: "サインイン" }
    KindSignInRefused { en: "Sign-in refused", ja: "サインイン拒否" }
    KindSignOut { en: "Signed out", ja: "サインアウト" }
    KindStepUp { en: "Confirmed with a passkey", ja: "パスキーで本人確認" }
    KindAdminCreate { en: "Admin created", ja: "管理者の作成" }
    KindAdminRemove { en: "Admin removed", ja: "管理者の削除" }
    KindAdminRole { en: "Admin's role changed", ja: "管理者のロール変更" }
    KindPasskeyAdd { en: "Passkey added", ja: "パスキーの追加" }
    KindPasskeyRename { en: "Passkey renamed", ja: "パスキーの名前変更" }
    KindPasskeyRemove { en: "Passkey removed", ja: "パスキーの削除" }
    KindInviteCreate { en: "Invite created", ja: "招待の作成" }
    KindInviteRedeem { en: "Invite redeemed", ja: "招待による参加" }
    KindSessionRevoke { en: "Session revoked", ja: "セッションの終了" }
    KindInquiryDelete { en: "Inquiry deleted", ja: "お問い合わせの削除" }
    KindInquiryExport { en: "Inquiries exported", ja: "お問い合わせのエクスポート" }
    KindRetentionChange { en: "Retention changed", ja: "保管期間の変更" }
    KindShareCreate { en: "Share created", ja: "共有ファイルの作成" }
    KindShareDownload { en: "Share downloaded", ja: "共有ファイルのダウンロード" }
    KindShareRevoke { en: "Share revoked", ja: "共有ファイルの取り消し" }
    KindSharePurge { en: "Share file deleted", ja: "共有ファイルの実体の削除" }
    KindMaintenanceRun { en: "Job run", ja: "ジョブの実行" }
    KindPartitionCreate { en: "Audit month created", ja: "監査ログの月の作成" }
    KindPartitionDetach { en: "Audit month detached", ja: "監査ログの月の切り離し" }
    KindUpkeepCheck { en: "Audit upkeep check", ja: "監査ログの保守チェック" }
    KindAlertRaise { en: "Alert raised", ja: "アラートの発生" }
    KindAlertResolve { en: "Alert resolved", ja: "アラートの解決" }
    KindArchiveMonth { en: "Month archived", ja: "月のアーカイブ" }
    KindArchiveDrop { en: "Archived month removed from the database", ja: "アーカイブ済みの月のデータベースからの削除" }
    KindArchiveFailure { en: "Archiving a month failed", ja: "月のアーカイブの失敗" }
    KindArchiveRetrieval { en: "Archive retrieved", ja: "アーカイブの取得" }
    KindExportRequest { en: "Export requested", ja: "エクスポートの依頼" }
    KindExportDownload { en: "Export downloaded", ja: "エクスポートのダウンロード" }
    KindHoldPlace { en: "Legal hold placed", ja: "法的保全の設定" }
    KindHoldLift { en: "Legal hold lifted", ja: "法的保全の解除" }
    KindAuditExport { en: "Audit log exported", ja: "監査ログのエクスポート" }
    KindRetentionReport { en: "Retention report downloaded", ja: "保管期間レポートのダウンロード" }
    KindAuditVerify { en: "Audit trail verified", ja: "監査証跡の検証" }
    KindAuditKeyRotate { en: "Signing key rotated", ja: "署名鍵の更新" }
    KindAuditRestore { en: "Restored from a backup", ja: "バックアップからの復元" }
    KindRequestRecord { en: "Data request recorded", ja: "データ請求の記録" }
    KindRequestFind { en: "Data request: search", ja: "データ請求: 検索" }
    KindRequestExport { en: "Data request: copy downloaded", ja: "データ請求: コピーのダウンロード" }
    KindRequestErasePreview { en: "Data request: erasure previewed", ja: "データ請求: 消去の事前確認" }
    KindRequestErase { en: "Data request: erasure started", ja: "データ請求: 消去の開始" }
    KindRequestErased { en: "Data request: erasure finished", ja: "データ請求: 消去の完了" }
    KindRequestClose { en: "Data request closed", ja: "データ請求の完了" }
    KindFileRequestCreate { en: "File request created", ja: "ファイル依頼の作成" }
    KindFileRequestRevoke { en: "File request revoked", ja: "ファイル依頼の取り消し" }
    KindFileRequestReceive { en: "File received", ja: "ファイルの受信" }
    KindShareFetch { en: "Received file downloaded by an admin", ja: "受信ファイルの管理者ダウンロード" }
    KindSharePublish { en: "Received file shared", ja: "受信ファイルの共有" }
    KindShareResume { en: "Download resumed", ja: "ダウンロードの再開" }
    KindInquiryRelease { en: "Suspected spam released to the inbox", ja: "スパムの疑いを受信箱へ移動" }
    KindSpamDelete { en: "Suspected spam deleted", ja: "スパムの疑いの削除" }
    KindSpamRetentionChange { en: "Spam retention changed", ja: "スパムの保管期間の変更" }
    }
}
