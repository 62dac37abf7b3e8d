//! The audit pages' texts in both languages (used by the pages and by the server functions
//! that answer them).

use common::i18n::texts;

texts! {
    pub(crate) enum AuditT {
    // The audit log viewer
    AuditLog { en: "Audit log", ja: "監査ログ" }
    IntroBefore { en: "Who did what, and when, over the last 24 months. Older months are in the ", ja: "過去 24 か月間に、誰が・いつ・何をしたかの記録です。それより古い月は" }
    IntroArchive { en: "archive", ja: "アーカイブ" }
    IntroAfter { en: ", where you can also export a range.", ja: "にあり、そこで期間を指定してエクスポートすることもできます。" }
    What { en: "What", ja: "操作" }
    Everything { en: "Everything", ja: "すべて" }
    Who { en: "Who", ja: "実行者" }
    Anyone { en: "Anyone", ja: "指定なし" }
    SubjectId { en: "Subject id", ja: "対象 ID" }
    SubjectPlaceholder { en: "e.g. a share or inquiry id", ja: "例: 共有ファイルまたはお問い合わせの ID" }
    From { en: "From", ja: "開始日" }
    To { en: "To", ja: "終了日" }
    Filter { en: "Filter", ja: "絞り込み" }
    ExportCsv { en: "Export CSV", ja: "CSV をエクスポート" }
    CheckFilters { en: "Check the filters above.", ja: "上の絞り込み条件を確認してください。" }
    WhenUtc { en: "When", ja: "日時" }
    WhatHappened { en: "What happened", ja: "操作内容" }
    Details { en: "Details", ja: "詳細" }
    NoEvent { en: "No event matches these filters.", ja: "この条件に一致するイベントはありません。" }
    Event { en: "Event", ja: "イベント" }
    Kind { en: "Kind", ja: "種別" }
    Admin { en: "Admin", ja: "管理者" }
    Subject { en: "Subject", ja: "対象" }
    Detail { en: "Detail", ja: "詳細情報" }
    ClientHashed { en: "Client (hashed)", ja: "クライアント（ハッシュ化）" }

    // The dashboard's upkeep card
    MonthsAhead { en: "Months ready ahead", ja: "先行して用意済みの月数" }
    AheadOfWanted { en: "{ahead} of {wanted}", ja: "{ahead} / {wanted}" }
    MonthsPending { en: "Months waiting for the archive", ja: "アーカイブ待ちの月数" }
    DefaultRows { en: "Events outside a month", ja: "どの月にも属さないイベント数" }
    MonthsArchived { en: "Months in the archive", ja: "アーカイブ済みの月数" }
    MonthsFailed { en: "Months failing to archive", ja: "アーカイブに失敗している月数" }
    OpenAuditLog { en: "Open the audit log", ja: "監査ログを開く" }
    ArchiveAndExports { en: "Archive and exports", ja: "アーカイブとエクスポート" }

    // The archive page
    MonthNotArchived { en: "This month is not in the archive. Choose one from the list.", ja: "この月はアーカイブにありません。一覧から選んでください。" }
    ArchiveIntro { en: "Months that ended more than 25 months ago leave the database for the archive, and only after the archived file has been checked (rows, size and checksum). ", ja: "終了から 25 か月を超えた月は、データベースからアーカイブに移されます。データベースから消えるのは、アーカイブしたファイルの確認（行数・サイズ・チェックサム）が済んだ後だけです。" }
    BackToAuditLog { en: "Back to the audit log", ja: "監査ログに戻る" }
    ArchivedMonths { en: "Archived months", ja: "アーカイブ済みの月" }
    ArchiveEmpty { en: "No month has been archived yet. A month is archived when it ended more than 25 months ago.", ja: "アーカイブされた月はまだありません。終了から 25 か月を超えた月がアーカイブされます。" }
    Month { en: "Month", ja: "月" }
    Events { en: "Events", ja: "イベント数" }
    Size { en: "Size", ja: "サイズ" }
    VerifiedUtc { en: "Verified (UTC)", ja: "確認日時（UTC）" }
    State { en: "State", ja: "状態" }
    MonthDropped { en: "Archived and verified; no longer in the database", ja: "アーカイブ済み・確認済み。データベースにはもうありません" }
    MonthVerified { en: "Verified; leaves the database at the next run", ja: "確認済み。次回の実行でデータベースから削除されます" }
    MonthWritten { en: "Written; being verified", ja: "書き出し済み。確認中です" }
    MonthFailed { en: "Failed; retried at the next run (the month stays in the database)", ja: "失敗。次回の実行で再試行します（この月はデータベースに残ります）" }
    DownloadMonth { en: "Download an archived month", ja: "アーカイブ済みの月をダウンロード" }
    WhyNeeded { en: "Why do you need it?", ja: "必要な理由" }
    ReasonHint { en: "10 to 256 characters. Kept with the link, with your name and the time.", ja: "10〜256 文字。リンクの記録として、あなたの名前と日時とともに保存されます。" }
    GetMonthLink { en: "Get a 15-minute link", ja: "15 分間有効なリンクを取得" }
    LinkReadyBefore { en: "Link ready, valid until ", ja: "リンクを用意しました（" }
    LinkReadyAfter { en: ": ", ja: " まで有効）: " }
    DownloadFile { en: "Download {file}", ja: "{file} をダウンロード" }
    RecentDownloads { en: "Recent downloads of archived months", ja: "アーカイブ済みの月の最近のダウンロード" }
    NoneYet { en: "None yet.", ja: "まだありません。" }
    Reason { en: "Reason", ja: "理由" }
    RemovedAdmin { en: "A removed admin", ja: "削除された管理者" }

    // Exports
    ExportHeading { en: "Export a range of the audit log", ja: "監査ログの期間を指定してエクスポート" }
    ExportIntro { en: "The export is written in the background as a compressed CSV file, kept for 7 days. It covers the months still in the database (the last 24 months at least); older months are in the archive above.", ja: "エクスポートはバックグラウンドで圧縮 CSV ファイルとして作成され、7 日間保管されます。対象はデータベースに残っている月（少なくとも過去 24 か月）です。それより古い月は上のアーカイブにあります。" }
    RequestExport { en: "Request export", ja: "エクスポートを依頼" }
    ExportRequested { en: "Export requested. It appears below when it is ready.", ja: "エクスポートを依頼しました。準備ができると下に表示されます。" }
    NoExports { en: "No export requested in the last 90 days.", ja: "過去 90 日間に依頼されたエクスポートはありません。" }
    RequestedUtc { en: "Requested", ja: "依頼日時" }
    Range { en: "Range", ja: "期間" }
    By { en: "By", ja: "依頼者" }
    Download { en: "Download", ja: "ダウンロード" }
    ExportExpiredState { en: "Expired (files are kept 7 days)", ja: "期限切れ（ファイルの保管期間は 7 日間）" }
    ExportReady { en: "Ready", ja: "準備完了" }
    ExportWaiting { en: "Waiting", ja: "待機中" }
    ExportRunning { en: "Being written…", ja: "作成中…" }
    ExportFailed { en: "Failed; request it again", ja: "失敗。もう一度依頼してください" }
    RangeFromTo { en: "{from} to {to}", ja: "{from}〜{to}" }
    Expired { en: "Expired", ja: "期限切れ" }
    GetLink { en: "Get link", ja: "リンクを取得" }

    // Tamper evidence (the audit page)
    TrailHeading { en: "Tamper evidence", ja: "改ざん検知" }
    TrailIntro { en: "Every event is sealed into its month's hash chain within a minute; signed digests of the chains are written to the storage (audit-digests/) at least daily and whenever a month is archived. Anyone with the public key can check the trail offline; the auditor guide (docs/auditor.md) says how.", ja: "すべてのイベントは 1 分以内にその月のハッシュチェーンに封印されます。チェーンの署名付きダイジェストは、少なくとも 1 日 1 回と月のアーカイブ時に、ストレージ（audit-digests/）に書き込まれます。公開鍵があれば誰でもオフラインで証跡を検証できます。手順は監査ガイド（docs/auditor.md）にあります。" }
    SealedEvents { en: "Sealed events", ja: "封印済みのイベント" }
    WaitingSeal { en: "Waiting to be sealed", ja: "封印待ちのイベント" }
    PublicKeys { en: "Signing keys (Ed25519)", ja: "署名鍵（Ed25519）" }
    KeyCurrent { en: "signs new digests", ja: "新しいダイジェストに署名中" }
    KeyRetired { en: "retired; still verifies the digests it signed", ja: "廃止済み。署名済みのダイジェストの検証には引き続き使えます" }
    KeysDownload { en: "Download the public keys (keys.json)", ja: "公開鍵をダウンロード（keys.json）" }
    NoKeyYet { en: "No key yet: it is made when Ebb starts.", ja: "鍵はまだありません。Ebb の起動時に作成されます。" }
    LatestDigests { en: "Latest digests", ja: "最新のダイジェスト" }
    NoDigestYet { en: "No digest yet: the first one is written within a minute of the first sealed events.", ja: "ダイジェストはまだありません。最初のイベントが封印されてから 1 分以内に書き込まれます。" }
    DigestNumber { en: "Digest", ja: "ダイジェスト" }
    WrittenUtc { en: "Written", ja: "作成日時" }
    Why { en: "Why", ja: "理由" }
    Key { en: "Key", ja: "鍵" }
    VerifyNow { en: "Verify now", ja: "今すぐ検証" }
    Verifying { en: "Verifying… (every event, every archived month and every digest is read)", ja: "検証中…（すべてのイベント・アーカイブ済みの月・ダイジェストを読み込んでいます）" }
    VerifyOk { en: "The audit trail verifies. Checked — events: {events}, archived months: {archived}, signed digests: {digests}.", ja: "監査証跡の検証に成功しました。イベント {events} 件、アーカイブ済みの月 {archived} 件、ダイジェスト {digests} 件を確認しました。" }
    VerifyWarnings { en: "Warnings (not breaks — read them): digests set aside by a signed restore statement, whose events after the backup were lost.", ja: "警告（不整合ではありませんが確認してください）: 署名付きの復元記録により無効とされたダイジェストです。バックアップ以降のイベントは失われています。" }
    VerifyBroken { en: "The audit trail does NOT verify. First break at {place}: {what} An alert was raised.", ja: "監査証跡の検証に失敗しました。最初の不整合は {place} です: {what} アラートを発報しました。" }

    // Messages of the server functions (api.rs)
    InvalidCursor { en: "invalid page cursor", ja: "ページの位置指定が無効です。" }
    ArchiveFileMissing { en: "This month's archived file is missing from the storage. An alert was raised; restore the file from a backup.", ja: "この月のアーカイブファイルがストレージにありません。アラートを発報しました。バックアップからファイルを復元してください。" }
    TooManyExports { en: "{n} exports are already waiting or running; request this one when they are done", ja: "{n} 件のエクスポートがすでに待機中または実行中です。それらが完了してから依頼してください" }
    ExportNotReady { en: "This export is not ready yet.", ja: "このエクスポートはまだ準備ができていません。" }
}
}
