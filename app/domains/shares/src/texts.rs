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
    ShowOlder { en: "Show older", ja: "さらに古いものを表示" }

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
}
}
