//! The maintenance pages' texts in both languages (used by the pages and by the server functions
//! that answer them).

use common::i18n::texts;

texts! {
    pub(crate) enum SettingsT {
    // The settings page
    Heading { en: "Settings", ja: "設定" }
    RetentionHeading { en: "How long inquiries are kept", ja: "お問い合わせの保管期間" }
    KeepFor { en: "Keep inquiries for (days)", ja: "お問い合わせの保管期間（日数）" }
    Save { en: "Save", ja: "保存" }
    RetentionEffect { en: "Inquiries older than {days} days are deleted; {n} would be deleted now.", ja: "{days} 日より古いお問い合わせは削除されます。現時点での削除対象は {n} 件です。" }
    Saved { en: "Saved: inquiries are kept for {n} days.", ja: "保存しました。お問い合わせは {n} 日間保管されます。" }
    RetentionDaysInvalid { en: "Enter a whole number of days from 1 to 3,650 (ten years).", ja: "日数は 1〜3,650（10 年）の整数で入力してください。" }
    CleanupHeading { en: "Cleanup jobs", ja: "クリーンアップジョブ" }
    CleanupText { en: "Old data is deleted automatically: after requests, by a timer, or from the command line — each job at most once per its interval, on one instance at a time.", ja: "古いデータは、リクエストの後、タイマー、またはコマンドラインから自動的に削除されます。各ジョブは実行間隔ごとに最大 1 回、一度に 1 つのインスタンスでのみ実行されます。" }

    // A job
    NotRunYet { en: "Has not run yet.", ja: "まだ実行されていません。" }
    LastRun { en: "Last run: ", ja: "前回の実行: " }
    Comma { en: ", ", ja: "、" }
    Period { en: ".", ja: "。" }
    StepFailed { en: "failed (see the server log)", ja: "失敗（サーバーログを参照してください）" }
    StepStopped { en: "not run: an earlier check stopped the run (see the alert: a person must act)", ja: "未実行：前のチェックが実行を停止しました（アラートを確認してください。担当者の対応が必要です）" }
    StepRunning { en: "(running)", ja: "（実行中）" }
    StepCutOff { en: " (cut off at the run's budget; the next run goes on)", ja: "（処理枠の上限で中断。次回に続きを実行）" }
    StepSkipped { en: "not reached (budget spent; next run)", ja: "未実行（処理枠を使い切ったため次回に実行）" }
    StepMoreLeft { en: " (more left for the next run)", ja: "（残りは次回に処理）" }
    NothingToDo { en: "nothing to do", ja: "処理対象なし" }
    NextAfter { en: "Next run may start after {time}.", ja: "次回の実行は {time} 以降に開始できます。" }
    NextNow { en: "Next run may start now (with the next request, or the timer).", ja: "次回の実行はいつでも開始できます（次のリクエスト時、またはタイマーによる）。" }
    Running { en: "Running…", ja: "実行中…" }
    RunNow { en: "Run now", ja: "今すぐ実行" }
    StartedNow { en: "{job} started. It goes on in the background; its progress shows below as it runs.", ja: "「{job}」を開始しました。バックグラウンドで実行を続けます。進み具合は下に表示されます。" }
    RanNow { en: "{job} ran now. Its results are below.", ja: "「{job}」を実行しました。結果は下に表示されています。" }
    NotDue { en: "{job} ran less than its interval ago, so it did not start again. The next run may start after {time}.", ja: "「{job}」は前回の実行から実行間隔が経過していないため、再実行しませんでした。次回の実行は {time} 以降に開始できます。" }
    Busy { en: "{job} is running right now; its results will appear here.", ja: "「{job}」は現在実行中です。結果はここに表示されます。" }

    // The alert banner
    Alerts { en: "Alerts", ja: "アラート" }
    Since { en: "Since ", ja: "発生日時: " }
    RaisedTimes { en: ", raised {n} times, last at {time}", ja: "、{n} 回発生（最終: {time}）" }
    MarkResolved { en: "Mark resolved", ja: "解決済みにする" }

    // The jobs of the registry (their English is the registry's title and description)
    JobPrune { en: "Prune", ja: "定期削除" }
    JobPruneText { en: "Deletes inquiries older than the retention period, suspected spam older than its own retention, used proofs of work, ended rate-limit windows, old run records, abandoned passkey challenges, expired sessions and expired invites; after 90 days resolved alerts and the rows of purged shares, after 400 days deletion-journal entries.", ja: "保管期間を過ぎたお問い合わせ、保管期間を過ぎたスパムの疑い、使用済みのプルーフ・オブ・ワーク、終了したレート制限の集計期間、古い実行記録、使われなかったパスキーのチャレンジ、期限切れのセッションと招待を削除します。また、解決から 90 日を過ぎたアラートと削除済み共有ファイルの行、400 日を過ぎた削除ジャーナルの記録も削除します。" }
    JobShareGc { en: "Share GC", ja: "共有ファイルの GC" }
    JobShareGcText { en: "Deletes the files of downloaded (after the delivery grace) and expired shares, then marks them purged; removes stored files no share points to and leftovers of interrupted uploads; forgets file requests that ended 30 days ago.", ja: "ダウンロード済み（受け渡しの猶予期間の後）または期限切れの共有ファイルを削除し、削除済みとして記録します。どの共有ファイルからも参照されていない保存ファイルと、中断されたアップロードの残りも削除します。終了から 30 日たったファイル依頼も削除します。" }
    JobAuditUpkeep { en: "Audit log upkeep", ja: "監査ログの保守" }
    JobAuditUpkeepText { en: "Creates the audit log's monthly partitions ahead, checks them and the default partition, and detaches months older than 25 months for the archive (it never deletes).", ja: "監査ログの月次パーティションを前もって作成し、それらとデフォルトパーティションを確認して、25 か月より古い月をアーカイブ用に切り離します（削除は行いません）。" }
    JobAuditArchive { en: "Audit archive", ja: "監査ログのアーカイブ" }
    JobAuditArchiveText { en: "Writes months detached by upkeep to the archive (audit-archive/YYYY-MM.csv.gz), verifies rows, size and CRC32C, and only then drops them from the database; checks every archived object; cleans up export requests.", ja: "保守で切り離された月をアーカイブ（audit-archive/YYYY-MM.csv.gz）に書き込み、行数・サイズ・CRC32C を確認してから、データベースから削除します。アーカイブ済みのすべてのオブジェクトを確認し、エクスポート依頼を整理します。" }
    JobAuditSeal { en: "Audit seal", ja: "監査ログの封印" }
    JobAuditSealText { en: "Seals new audit events into their month's hash chain, writes a signed digest of the chains to the storage (audit-digests/) at least hourly when something changed and daily otherwise, and verifies the chains once a day.", ja: "新しい監査イベントをその月のハッシュチェーンに封印し、チェーンの署名付きダイジェストをストレージ（audit-digests/）に書き込みます（変更があれば少なくとも 1 時間ごと、なければ 1 日ごと）。チェーンの検証は 1 日 1 回行います。" }
    JobAuditExports { en: "Audit exports", ja: "監査ログのエクスポート" }
    JobAuditExportsText { en: "Writes requested CSV exports of the audit log to storage, and deletes export files after 7 days.", ja: "依頼された監査ログの CSV エクスポートをストレージに書き出し、エクスポートファイルを 7 日後に削除します。" }
    JobNotify { en: "Notifications", ja: "通知" }
    JobNotifyText { en: "Emails the admins about new inquiries (one digest per period), and, opted in, about files downloaded completely or received, when an SMTP server is configured.", ja: "SMTP サーバーが設定されている場合に、新しいお問い合わせを管理者にメールで知らせます（期間ごとに 1 通のまとめ）。設定により、最後までダウンロードされたファイルや受信したファイルも知らせます。" }

    // Their steps (the registry's labels)
    LabelOldInquiries { en: "old inquiries", ja: "古いお問い合わせ" }
    LabelRateLimitWindows { en: "ended rate-limit windows", ja: "終了したレート制限の集計期間" }
    LabelOldRunRecords { en: "old run records", ja: "古い実行記録" }
    LabelPasskeyChallenges { en: "abandoned passkey challenges", ja: "使われなかったパスキーのチャレンジ" }
    LabelExpiredSessions { en: "expired sessions", ja: "期限切れのセッション" }
    LabelExpiredInvites { en: "expired invites", ja: "期限切れの招待" }
    LabelOldSpam { en: "old suspected spam", ja: "古いスパムの疑い" }
    LabelEndedRecords { en: "resolved alerts and old deletion-journal entries", ja: "解決済みのアラートと古い削除ジャーナルの記録" }
    LabelPurgedShares { en: "rows of purged shares", ja: "削除済み共有ファイルの行" }
    LabelSpentProofs { en: "used proofs of work and old contact figures", ja: "使用済みのプルーフ・オブ・ワークと古い集計" }
    LabelRetentionCheck { en: "every kind of data checked against its promise", ja: "すべての種類のデータを約束した保管期間と照合" }
    LabelSharePurge { en: "files of used or expired shares", ja: "使用済みまたは期限切れの共有ファイル" }
    LabelShareReconcile { en: "stored files no share points to", ja: "どの共有ファイルからも参照されていない保存ファイル" }
    LabelShareUploads { en: "leftovers of interrupted uploads", ja: "中断されたアップロードの残り" }
    LabelShareRequests { en: "file requests that ended 30 days ago", ja: "終了から 30 日たったファイル依頼" }
    LabelUpkeepPartitions { en: "monthly partitions ahead and past 25 months", ja: "先の月のパーティションと、25 か月を過ぎた月" }
    LabelArchiveRequests { en: "export requests stuck or older than 90 days", ja: "止まったままの、または 90 日より古いエクスポート依頼" }
    LabelArchivePartitions { en: "partitions ahead and the default partition", ja: "先の月のパーティションとデフォルトパーティション" }
    LabelArchiveObjects { en: "archived objects still there as recorded", ja: "アーカイブ済みオブジェクトが記録どおり残っているかの確認" }
    LabelArchiveWrite { en: "pending months written, verified and dropped", ja: "処理待ちの月の書き込み・確認・削除" }
    LabelArchiveVerify { en: "written months checked (rows, size, CRC32C)", ja: "書き込んだ月の確認（行数・サイズ・CRC32C）" }
    LabelSealSeal { en: "new events sealed into their chain", ja: "新しいイベントのチェーンへの封印" }
    LabelSealDigest { en: "signed digest written when due", ja: "署名付きダイジェストの書き込み（期限が来たとき）" }
    LabelSealVerify { en: "chains verified (daily)", ja: "チェーンの検証（毎日）" }
    LabelArchiveDrop { en: "verified months dropped from the database", ja: "確認済みの月のデータベースからの削除" }
    LabelExportsRun { en: "waiting exports started", ja: "待機中のエクスポートの開始" }
    LabelExportsStuck { en: "exports cut off by a stop", ja: "停止により中断されたエクスポート" }
    LabelExportsExpired { en: "export files older than 7 days", ja: "7 日より古いエクスポートファイル" }
    LabelNotifySend { en: "new inquiries emailed", ja: "新しいお問い合わせのメール送信" }
    LabelNotifyFiles { en: "file events emailed", ja: "ファイルの通知メール送信" }
    LabelNotifyForget { en: "old entries of the list of emails sent", ja: "送信済みメール一覧の古い記録" }
    LabelForgetRequests { en: "addresses of closed data requests", ja: "完了したデータ請求のアドレス" }
    LabelRequestsErase { en: "items erased", ja: "消去した項目" }
    LabelRequestsDeadlines { en: "requests near their deadline", ja: "期限が近い請求" }
    JobRequests { en: "Data requests", ja: "データ請求" }
    JobRequestsText { en: "Erases what erasure requests cover, in batches, and warns before a request's deadline.", ja: "消去請求の対象を少しずつ消去し、請求の回答期限が近づくと警告します。" }
    CountErased { en: "erased", ja: "消去" }
    CountRequestsClosed { en: "requests closed", ja: "完了した請求" }
    CountRaised { en: "raised", ja: "警告" }
    CountForgotten { en: "forgotten", ja: "削除したアドレス" }

    // What the steps counted (the count's name with spaces)
    CountDeleted { en: "deleted", ja: "削除" }
    CountSealed { en: "sealed", ja: "封印" }
    CountRefused { en: "refused", ja: "封印を拒否" }
    CountDigests { en: "digests", ja: "ダイジェスト" }
    CountBatches { en: "batches", ja: "バッチ" }
    CountPastPromise { en: "past promise", ja: "期間超過" }
    CountOverdue { en: "overdue", ja: "大幅な期間超過" }
    CountHoldFlagsCleared { en: "hold flags cleared", ja: "保全フラグの解除" }
    CountRequestsDeleted { en: "requests deleted", ja: "削除した依頼" }
    CountStuckFailed { en: "stuck failed", ja: "停止により失敗扱い" }
    CountPartitionsAhead { en: "partitions ahead", ja: "先の月のパーティション" }
    CountDefaultRows { en: "default rows", ja: "デフォルトパーティションの行" }
    CountChecked { en: "checked", ja: "確認" }
    CountReread { en: "reread", ja: "再読み込み" }
    CountWritten { en: "written", ja: "書き込み" }
    CountEmptyLeft { en: "empty left", ja: "空のため未処理" }
    CountVerified { en: "verified", ja: "確認済み" }
    CountDropped { en: "dropped", ja: "データベースから削除" }
    CountLockedLeft { en: "locked left", ja: "ロック中のため未処理" }
    CountStarted { en: "started", ja: "開始" }
    CountCreated { en: "created", ja: "作成" }
    CountDetached { en: "detached", ja: "切り離し" }
    CountLeftAlone { en: "left alone", ja: "対象外" }
    CountPurged { en: "purged", ja: "ファイル削除" }
    CountFailed { en: "failed", ja: "失敗" }
    CountFilesChecked { en: "files checked", ja: "確認したファイル" }
    CountOrphansDeleted { en: "orphans deleted", ja: "参照のないファイルの削除" }
    CountRowsChecked { en: "rows checked", ja: "確認した行" }
    CountFilesMissing { en: "files missing", ja: "見つからないファイル" }
    CountRemoved { en: "removed", ja: "削除" }
    CountSent { en: "sent", ja: "送信" }
    CountOff { en: "off", ja: "通知オフ" }
    CountWaiting { en: "waiting", ja: "まとめ待ち" }

    // How a run started and ended (as `common::jobs::trigger_label` / `outcome_label` word them)
    TriggerContact { en: "after a contact form submission", ja: "お問い合わせフォームの送信後" }
    TriggerSignin { en: "after a sign-in attempt", ja: "サインインの試行後" }
    TriggerAdminInbox { en: "when an admin opened the inbox", ja: "管理者が受信箱を開いたとき" }
    TriggerShares { en: "after a share page, download or the shares list", ja: "共有ページ・ダウンロード・共有ファイル一覧の表示後" }
    TriggerTraffic { en: "after a request (due check)", ja: "リクエストの後（実行時期の確認）" }
    TriggerAdmin { en: "by an admin (Run now)", ja: "管理者による実行（今すぐ実行）" }
    TriggerTicker { en: "by the periodic timer", ja: "定期タイマーによる実行" }
    TriggerCli { en: "from the command line", ja: "コマンドラインからの実行" }
    TriggerOther { en: "by another trigger", ja: "その他のきっかけによる実行" }
    OutcomeOk { en: "completed", ja: "完了" }
    OutcomeFailed { en: "completed with errors", ja: "エラーありで完了" }
    OutcomeCutOff { en: "cut off by its budget (the rest runs next time)", ja: "処理枠の上限で中断（残りは次回に実行）" }
    OutcomeRunning { en: "running now", ja: "実行中" }
    OutcomeInterrupted { en: "interrupted (the process stopped; the counts are what it had recorded)", ja: "中断（プロセスが停止しました。件数は記録済みの分です）" }

    // The alerts' messages, as their callers write them (the database keeps the English; the
    // banner reads its values back and shows this text); {errors} are the steps' own error texts
    AlertDetails { en: "Details", ja: "詳細" }
}
}
