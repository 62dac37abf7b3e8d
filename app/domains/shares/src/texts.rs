//! The shares pages' texts in both languages (used by the pages and by the server functions
//! that answer them).

use common::i18n::texts;

texts! {
    pub enum SharesT {
    // The admin's page
    Heading { en: "Shares", ja: "共有ファイル" }
    Lead { en: "Share a file through a link that works for one download. Files are deleted automatically after the download or when the link expires.", ja: "1 回だけダウンロードできるリンクでファイルを共有します。ファイルはダウンロード後、またはリンクの期限が切れたときに自動的に削除されます。" }
    NewHeading { en: "Share a file", ja: "ファイルを共有" }
    AllShares { en: "All shares", ja: "すべての共有ファイル" }
    Empty { en: "No shares yet.", ja: "共有ファイルはまだありません。" }
    File { en: "File", ja: "ファイル" }
    ColStatus { en: "Status", ja: "状態" }
    ColExpires { en: "Expires", ja: "有効期限" }
    ColFailedDeletes { en: "Failed deletes", ja: "削除失敗回数" }
    ColCreated { en: "Created", ja: "作成日時" }
    ColActions { en: "Actions", ja: "操作" }

    // A row
    StateActive { en: "Active", ja: "有効" }
    StateDownloaded { en: "Downloaded", ja: "ダウンロード済み" }
    StateExpired { en: "Expired", ja: "期限切れ" }
    StateDownloadedDeleted { en: "Downloaded · file deleted", ja: "ダウンロード済み · ファイル削除済み" }
    StateExpiredDeleted { en: "Expired · file deleted", ja: "期限切れ · ファイル削除済み" }
    FileDeletedAt { en: "file deleted {time}", ja: "{time} にファイル削除" }
    DownloadedAt { en: "downloaded {time}", ja: "{time} にダウンロード" }
    AttemptsNextTry { en: "{n} (next try {time})", ja: "{n}（次回の再試行 {time}）" }
    OnHold { en: "On legal hold", ja: "法的保全中" }
    Revoke { en: "Revoke", ja: "取り消し" }
    LegalHold { en: "Legal hold…", ja: "法的保全…" }
    HoldFile { en: "Hold this share's file", ja: "この共有ファイルを保全" }

    // Confirmations and outcomes
    ConfirmRevoke { en: "Revoke the link to “{name}”? It stops working now and the file is deleted.", ja: "「{name}」へのリンクを取り消しますか？リンクはすぐに使えなくなり、ファイルは削除されます。" }
    Revoked { en: "The link to “{name}” was revoked.", ja: "「{name}」へのリンクを取り消しました。" }
    Held { en: "Placed on legal hold: the file is kept after its download or expiry until the hold is lifted (Retention page).", ja: "法的保全を設定しました。保全が解除されるまで、ダウンロード後や期限切れ後もファイルは保管されます（保管期間ページ）。" }
    NotFound { en: "This share no longer exists. Reload the page to see the current list.", ja: "この共有ファイルはもう存在しません。ページを再読み込みして最新の一覧を確認してください。" }
    TooLarge { en: "The file is larger than the limit of {limit}. Share a smaller file.", ja: "ファイルが上限（{limit}）を超えています。より小さいファイルを共有してください。" }

    // The upload form
    UpTo { en: "Up to {size}.", ja: "最大 {size}。" }
    ExpiresAfter { en: "Link expires after", ja: "リンクの有効期間" }
    Note { en: "Note for yourself ", ja: "自分用のメモ " }
    NoteHint { en: "(optional, not shown to the recipient)", ja: "（任意。受信者には表示されません）" }
    Upload { en: "Upload and create link", ja: "アップロードしてリンクを作成" }
    CancelUpload { en: "Cancel upload", ja: "アップロードを中止" }
    UploadProgress { en: "Upload progress", ja: "アップロードの進行状況" }
    ProgressText { en: "{pct} % · {sent} of {total}", ja: "{pct} % · {sent} / {total}" }
    ChooseFile { en: "Choose a file to share.", ja: "共有するファイルを選択してください。" }
    OneFileAtATime { en: "Share one file at a time.", ja: "共有できるファイルは 1 回に 1 つです。" }
    FileOverLimit { en: "This file is {size}; the limit is {limit}.", ja: "このファイルは {size} です。上限は {limit} です。" }
    ExpiryRange { en: "Choose an expiry between 1 hour and {max}.", ja: "有効期間は 1 時間〜{max}の範囲で選択してください。" }
    NoteTooLong { en: "Keep the note under {max} characters.", ja: "メモは {max} 文字以内にしてください。" }
    NoteControl { en: "The note contains characters that cannot be shown.", ja: "メモに表示できない文字が含まれています。" }
    NoteNoAddress { en: "Leave email addresses out of the note: notes are not covered by data requests. Name the person or case another way.", ja: "メモにメールアドレスを含めないでください。メモはデータ請求の対象外です。別の方法で相手や案件を記載してください。" }

    // The new link
    ReadySize { en: " ({size}) is ready. ", ja: "（{size}）の準備ができました。" }
    WorksUntilBefore { en: "The link works for one download until ", ja: "このリンクは " }
    WorksUntilAfter { en: ".", ja: " まで、1 回だけダウンロードに使えます。" }
    CopyNow { en: "Copy the link now: it is shown only this once (Ebb keeps only a fingerprint of it).", ja: "今すぐリンクをコピーしてください。リンクが表示されるのはこの 1 回だけです（Ebb が保持するのはリンクのフィンガープリントのみです）。" }
    CopyLink { en: "Copy link", ja: "リンクをコピー" }
    QrLabel { en: "QR code of the link", ja: "リンクの QR コード" }
    QrCaption { en: "Or scan this code with a phone to open the link.", ja: "または、スマートフォンでこのコードを読み取ってリンクを開いてください。" }

    // The dashboard's card
    ActiveLinks { en: "Active links", ja: "有効なリンク" }
    AwaitingDeletion { en: "Files awaiting deletion", ja: "削除待ちのファイル" }
    NoProblems { en: "No failed file deletions.", ja: "ファイル削除の失敗はありません。" }
    ProblemsHeading { en: "These files could not be deleted {n} times or more.", ja: "次のファイルは {n} 回以上削除に失敗しています。" }
    ProblemsText { en: " Ebb keeps retrying with growing pauses; check the storage folder's permissions and the server log (it names the share id).", ja: " Ebb は間隔を広げながら再試行を続けます。保存先フォルダーのアクセス権とサーバーログ（共有 ID が記録されています）を確認してください。" }
    ProblemAttempts { en: " (share {id}): {n} failed attempts", ja: "（共有 ID {id}）: {n} 回失敗" }
    ProblemNextTry { en: ", next try {time}", ja: "、次回の再試行 {time}" }

    // The upload's own failures (upload.rs)
    UploadNotStarted { en: "The upload could not start ({cause}). Reload the page and try again.", ja: "アップロードを開始できませんでした（{cause}）。ページを再読み込みして、もう一度お試しください。" }
    BrowserError { en: "browser error", ja: "ブラウザーのエラー" }
    UploadConnection { en: "The upload failed: the connection was lost or refused. Check the file size and your network, then try again.", ja: "アップロードに失敗しました。接続が切れたか拒否されました。ファイルサイズとネットワークを確認して、もう一度お試しください。" }
    UploadCancelled { en: "The upload was cancelled; nothing was shared.", ja: "アップロードを中止しました。何も共有されていません。" }
    UploadUnreadable { en: "The server's answer could not be read. Reload the page to see whether the share was created.", ja: "サーバーの応答を読み取れませんでした。ページを再読み込みして、共有ファイルが作成されたか確認してください。" }
    UploadHttp { en: "The upload failed (HTTP {status}). Try again in a moment.", ja: "アップロードに失敗しました（HTTP {status}）。しばらくしてからもう一度お試しください。" }

    // Server functions (api.rs)
    NoLongerActive { en: "This share is no longer active: it was downloaded, has expired or was revoked already.", ja: "この共有ファイルはもう有効ではありません。ダウンロード済み、期限切れ、または取り消し済みです。" }

    // Download limits and delivery receipts
    DownloadsRange { en: "Choose between 1 and {max} downloads.", ja: "ダウンロード回数は 1〜{max} 回の範囲で選んでください。" }
    DownloadsAllowed { en: "Downloads allowed", ja: "ダウンロード可能な回数" }
    DownloadsHint { en: "1 to {max}. Exactly this many downloads get the file.", ja: "1〜{max} 回。この回数だけファイルをダウンロードできます。" }
    DownloadsOf { en: "{n} of {max} downloads", ja: "{max} 回中 {n} 回ダウンロード" }
    DeliveryStarted { en: "Download started {time}", ja: "{time} にダウンロード開始" }
    BytesSent { en: "{sent} of {size} sent", ja: "{size} 中 {sent} 送信" }
    DeliveryComplete { en: "complete {time}", ja: "{time} に完了" }
    DeliveryCompleteResumed { en: "complete {time} after resuming {n}×", ja: "{n} 回の再開後、{time} に完了" }
    NameForgotten { en: "(file deleted; its name and note are forgotten)", ja: "（ファイル削除済み。名前とメモは消去されました）" }
    DeliveryIncompleteOver { en: "not complete (it can no longer be resumed)", ja: "未完了（再開はできなくなりました）" }
    DeliveryIncomplete { en: "not complete (the recipient can resume within the grace period)", ja: "未完了（受信者は猶予期間内に再開できます）" }
    ReceivedBadge { en: "Received", ja: "受信" }
    DownloadReceived { en: "Download", ja: "ダウンロード" }
    Publish { en: "Share it…", ja: "共有リンクを作成" }
    DeleteNow { en: "Delete", ja: "削除" }
    CannotPublish { en: "This file can no longer be shared (it expired or was deleted). Reload the page.", ja: "このファイルは共有できません（期限切れまたは削除済みです）。ページを再読み込みしてください。" }
    ConfirmPublish { en: "Make a one-time public link to a copy of “{name}”? Whoever opens the link first can download it once; the copy is then deleted. The received file stays here until {time}.", ja: "「{name}」のコピーに一回限りの公開リンクを作成しますか？ リンクを最初に開いた人が一度だけダウンロードでき、その後コピーは削除されます。受け取ったファイルは {time} までここに残ります。" }

    // File requests (admin)
    RequestHeading { en: "Request a file", ja: "ファイルを依頼" }
    RequestLead { en: "Make a link someone can use once to send you a file. Opening the link does not use it up; only a completed upload does. The file then appears in the list below, for you only.", ja: "相手が 1 回だけファイルを送れるリンクを作成します。リンクを開いただけでは使用済みになりません。アップロードが完了したときだけ使用済みになります。受信したファイルは下の一覧に、あなただけが見られる形で表示されます。" }
    RequestExpiresAfter { en: "Link works for", ja: "リンクの有効期間" }
    RequestSizeLimit { en: "Largest file", ja: "最大ファイルサイズ" }
    RequestNote { en: "Note for the sender ", ja: "送信者へのメモ " }
    RequestNoteHint { en: "(optional, shown on the upload page)", ja: "（任意。アップロードページに表示されます）" }
    RequestCreate { en: "Create upload link", ja: "アップロード用リンクを作成" }
    RequestsList { en: "File requests", ja: "ファイル依頼" }
    RequestsEmpty { en: "No file requests yet.", ja: "ファイル依頼はまだありません。" }
    RequestColNote { en: "Note", ja: "メモ" }
    RequestOpen { en: "Waiting for a file", ja: "ファイル待ち" }
    RequestUsed { en: "File received", ja: "受信済み" }
    RequestExpired { en: "Expired", ja: "期限切れ" }
    ReceivedAt { en: "received {time}", ja: "{time} に受信" }
    RequestShareRow { en: "file #{id} in the list below", ja: "下の一覧のファイル #{id}" }
    RequestReady { en: "The upload link is ready: one file of up to {size}.", ja: "アップロード用リンクを作成しました。{size} までのファイルを 1 つ受け取れます。" }
    RequestNoLongerOpen { en: "This file request is no longer open. Reload the page to see the current list.", ja: "このファイル依頼はすでに終了しています。ページを再読み込みして最新の一覧を確認してください。" }
    SizeLimitRange { en: "Choose a limit between 1 MiB and {max}.", ja: "上限は 1 MiB〜{max} の範囲で選んでください。" }

    // The uploader's page
    UploaderTitle { en: "Send a file", ja: "ファイルを送信" }
    UploaderHeading { en: "Send a file", ja: "ファイルを送信" }
    UploaderChoose { en: "File to send", ja: "送信するファイル" }
    UploaderSend { en: "Send file", ja: "ファイルを送信" }
    UploaderOnce { en: "This link takes one file. Only the person who sent you the link can download it.", ja: "このリンクで送れるファイルは 1 つです。ダウンロードできるのはリンクを送った人だけです。" }
    UploadTooLargeHere { en: "The file is larger than this link accepts. Send a smaller file, or ask for a link with a higher limit.", ja: "ファイルがこのリンクの上限を超えています。より小さいファイルを送るか、上限の大きいリンクを依頼してください。" }
    UploadBusy { en: "A file is being sent to this link right now: one upload at a time. If that upload fails, try again in a minute.", ja: "現在このリンクにファイルが送信されています（同時に送信できるのは 1 件です）。その送信が失敗した場合は、1 分後にもう一度お試しください。" }
    UploadUnavailable { en: "The file could not be stored right now. The link still works: try again in a few minutes.", ja: "現在ファイルを保存できません。リンクは引き続き有効です。数分後にもう一度お試しください。" }
    UploadInterrupted { en: "The upload was interrupted. The link still works: try again.", ja: "アップロードが中断されました。リンクは引き続き有効です。もう一度お試しください。" }
    ThanksTitle { en: "Thank you — your file was received", ja: "ありがとうございます。ファイルを受け取りました" }
    ThanksText { en: "The link is now used up. You can close this page.", ja: "このリンクは使用済みになりました。このページを閉じてかまいません。" }
    ThanksFile { en: "“{name}” ({size}) was received. The link is now used up.", ja: "「{name}」（{size}）を受け取りました。このリンクは使用済みになりました。" }
    RequestUsedTitle { en: "A file was already sent through this link", ja: "このリンクではすでにファイルが送信されています" }
    RequestUsedText { en: "This link takes one file, and one was already received. Nothing of your upload was kept. Ask the person who sent you the link for a new one.", ja: "このリンクで送れるファイルは 1 つで、すでに受信済みです。今回のアップロードは保存されていません。リンクを送った人に新しいリンクを依頼してください。" }
    RequestExpiredTitle { en: "This upload link has expired", ja: "このアップロード用リンクは期限切れです" }
    RequestExpiredText { en: "The link no longer accepts files. Ask the person who sent it for a new one.", ja: "このリンクではファイルを受け付けていません。リンクを送った人に新しいリンクを依頼してください。" }
    RequestNotFoundTitle { en: "Upload link not found", ja: "アップロード用リンクが見つかりません" }
    RequestNotFoundText { en: "Check that the link was copied completely, or ask the person who sent it.", ja: "リンクが最後まで正しくコピーされているか確認するか、リンクを送った人に問い合わせてください。" }
}
}
