//! The data requests' words, in both languages.

use common::i18n::texts;

texts! {
    pub enum RequestsT {
    Title { en: "Data requests", ja: "データ請求" }
    Intro { en: "When a person asks what Ebb keeps about them, for a copy, or for erasure (GDPR articles 15, 20 and 17), record it here: the deadline starts from the day it was received, and each step is kept in the audit log — with a keyed hash of the address, never the address.", ja: "本人から、保管しているデータの開示・コピーの提供・消去を求められたら（GDPR 第 15 条・第 20 条・第 17 条）、ここに記録してください。受付日から回答期限が始まり、各手順は監査ログに記録されます（記録されるのはアドレスの鍵付きハッシュのみで、アドレスそのものは記録されません）。" }
    RecordHeading { en: "Record a request", ja: "請求を記録する" }
    KindLabel { en: "The person asks for", ja: "請求の内容" }
    KindAccess { en: "Access: what is kept about them", ja: "開示: 保管されている内容の確認" }
    KindCopy { en: "A copy of their data", ja: "データのコピー" }
    KindErasure { en: "Erasure of their data", ja: "データの消去" }
    KindShortAccess { en: "Access", ja: "開示" }
    KindShortCopy { en: "Copy", ja: "コピー" }
    KindShortErasure { en: "Erasure", ja: "消去" }
    EmailLabel { en: "Their email address", ja: "本人のメールアドレス" }
    EmailHint { en: "The address they wrote from. It is compared as the contact form stores it, ignoring upper and lower case.", ja: "お問い合わせに使われたアドレスです。大文字・小文字を区別せず、お問い合わせフォームの保存形式で照合します。" }
    ReceivedLabel { en: "Received on", ja: "受付日" }
    ReceivedHint { en: "Empty means today. The deadline is {days} days later.", ja: "空欄の場合は本日になります。回答期限はその {days} 日後です。" }
    NoteLabel { en: "Note (optional)", ja: "メモ（任意）" }
    NoteHint { en: "How it arrived, how you checked who they are. Removed with the address.", ja: "受付方法や本人確認の方法など。アドレスと一緒に削除されます。" }
    Record { en: "Record the request", ja: "請求を記録" }
    Recording { en: "Recording…", ja: "記録しています…" }
    Recorded { en: "The request was recorded.", ja: "請求を記録しました。" }
    KindMissing { en: "Choose what the person asks for.", ja: "請求の内容を選んでください。" }
    ReceivedInvalid { en: "Enter the date as YYYY-MM-DD, or leave it empty for today.", ja: "日付は YYYY-MM-DD の形式で入力するか、本日の場合は空欄にしてください。" }
    ReceivedFuture { en: "The received date cannot be in the future.", ja: "受付日に未来の日付は指定できません。" }
    ReceivedTooOld { en: "The received date can be at most a year ago.", ja: "受付日は 1 年前までの日付にしてください。" }
    NoteTooLong { en: "A note can have at most {max} characters (this one has {n}).", ja: "メモは {max} 文字までです（現在 {n} 文字）。" }
    NoteControl { en: "The note contains characters that cannot be shown.", ja: "メモに表示できない文字が含まれています。" }
    NoteNoAddress { en: "Leave the email address out of the note: the note is kept after the request is closed and its address forgotten. The address goes in its own field.", ja: "メモにメールアドレスを含めないでください。メモは請求の完了後、アドレスが消去された後も残ります。アドレスは専用の欄に入力してください。" }
    ListHeading { en: "Requests", ja: "請求の一覧" }
    NoRequests { en: "No data requests yet.", ja: "データ請求はまだありません。" }
    ColRequest { en: "Request", ja: "請求" }
    ColAddress { en: "Address", ja: "アドレス" }
    ColReceived { en: "Received", ja: "受付日" }
    ColDeadline { en: "Deadline", ja: "回答期限" }
    ColStatus { en: "Status", ja: "状態" }
    Forgotten { en: "The address was removed after the retention period.", ja: "保管期間の経過により、アドレスは削除されました。" }
    ForgottenShort { en: "(removed)", ja: "（削除済み）" }
    DaysLeft { en: "{n} days left", ja: "残り {n} 日" }
    OneDayLeft { en: "1 day left", ja: "残り 1 日" }
    DueToday { en: "Due today", ja: "本日が期限" }
    DaysOverdue { en: "{n} days overdue", ja: "期限を {n} 日超過" }
    MetDeadline { en: "Answered on time", ja: "期限内に回答済み" }
    MissedDeadline { en: "Answered late", ja: "期限後に回答" }
    StatusOpen { en: "Open", ja: "未対応" }
    StatusErasing { en: "Erasing", ja: "消去中" }
    StatusDone { en: "Closed", ja: "完了" }
    Back { en: "All data requests", ja: "データ請求の一覧へ" }
    RequestTitle { en: "Data request #{id}", ja: "データ請求 #{id}" }
    Summary { en: "The request", ja: "請求の内容" }
    RecordedBy { en: "Recorded {at} by {name}", ja: "{at} に {name} が記録" }
    ClosedBy { en: "Closed {at} by {name}", ja: "{at} に {name} が完了" }
    Someone { en: "an admin", ja: "管理者" }
    Ebb { en: "Ebb", ja: "Ebb" }
    FoundHeading { en: "What Ebb holds for this address", ja: "このアドレスについて Ebb が保管しているもの" }
    FoundChecked { en: "Searched {at}.", ja: "{at} に検索しました。" }
    ColKind { en: "Kind of data", ja: "データの種類" }
    ColItems { en: "Items", ja: "件数" }
    ColKept { en: "Stays after erasure", ja: "消去後も残るもの" }
    ColOldest { en: "Oldest", ja: "最古" }
    ColNewest { en: "Newest", ja: "最新" }
    NothingFound { en: "Ebb holds nothing tied to this address.", ja: "このアドレスに結び付くデータは保管されていません。" }
    NotSearchableHeading { en: "What Ebb keeps that cannot be searched by address", ja: "アドレスでは検索できない保管データ" }
    CopyHeading { en: "Copy", ja: "コピー" }
    CopyIntro { en: "Everything found, for the person: one JSON file with a cover sheet (what Ebb is, each kind's retention promise, when each item is deleted anyway), or one CSV per kind for a spreadsheet. Each download is recorded in the audit log.", ja: "本人に渡すための、見つかったすべてのデータです。表紙（Ebb の説明、種類ごとの保管期間、各項目がいつ削除されるか）付きの JSON ファイル 1 つ、または表計算ソフト用に種類ごとの CSV を用意しています。ダウンロードはすべて監査ログに記録されます。" }
    CopyJson { en: "Download everything (JSON)", ja: "すべてをダウンロード（JSON）" }
    CopyCover { en: "Cover sheet (text)", ja: "表紙（テキスト）" }
    CopyCsv { en: "{label} (CSV)", ja: "{label}（CSV）" }
    EraseHeading { en: "Erasure", ja: "消去" }
    PreviewIntro { en: "First review what the erasure would remove and what it must leave in place.", ja: "まず、消去で削除されるものと、残さなければならないものを確認してください。" }
    Preview { en: "Review the erasure (dry run)", ja: "消去内容を確認（試行）" }
    DryRunHeading { en: "Dry run: nothing has been erased yet", ja: "試行結果: まだ何も消去されていません" }
    WouldErase { en: "Would erase", ja: "消去されるもの" }
    WouldStay { en: "Stays, and why", ja: "残るものとその理由" }
    NothingToErase { en: "Nothing to erase.", ja: "消去するものはありません。" }
    EraseButton { en: "Erase {n} items now", ja: "{n} 件を今すぐ消去" }
    EraseNothingButton { en: "Close the request (nothing to erase)", ja: "請求を完了する（消去対象なし）" }
    EraseConfirm { en: "Erase these items for good? This cannot be undone.", ja: "これらを完全に消去しますか？元に戻すことはできません。" }
    Erasing { en: "Erasing in batches… {n} items erased so far. This page updates by itself; the erasure goes on even if you leave.", ja: "少しずつ消去しています… これまでに {n} 件を消去しました。このページは自動で更新されます。ページを離れても消去は続きます。" }
    Erased { en: "Erased: {erased}. Stayed: {kept}.", ja: "消去したもの: {erased}。残ったもの: {kept}。" }
    ErasedNone { en: "nothing", ja: "なし" }
    EraseStarted { en: "The erasure has started.", ja: "消去を開始しました。" }
    CloseHeading { en: "Answer", ja: "回答" }
    CloseIntro { en: "Send the person what they asked for, then mark the request as answered.", ja: "本人に求められた内容を送付してから、請求を回答済みにしてください。" }
    CloseButton { en: "Mark as answered", ja: "回答済みにする" }
    ClosedNow { en: "The request is closed.", ja: "請求を完了しました。" }
    AlreadyClosed { en: "This request was already closed by {by} ({at}).", ja: "この請求は既に {by} によって完了されています（{at}）。" }
    AlreadyErasing { en: "The erasure of this request has already started; it goes on by itself.", ja: "この請求の消去は既に開始されており、自動で続行されます。" }
    WrongKind { en: "This step does not apply to this kind of request.", ja: "この種類の請求にはこの操作は使えません。" }
    DashOpen { en: "{n} open", ja: "未対応 {n} 件" }
    DashNone { en: "No open data requests.", ja: "未対応のデータ請求はありません。" }
    DashNext { en: "Next deadline: {date}", ja: "次の期限: {date}" }
    DashSoon { en: "{n} due within a week", ja: "1 週間以内に期限: {n} 件" }
    DashOverdue { en: "{n} past the deadline", ja: "期限超過: {n} 件" }
    DashOpenPage { en: "Open data requests", ja: "データ請求を開く" }
    }
}

/// The copy's cover sheet (its own module: one table of texts per module).
pub mod cover {
    use common::i18n::texts;

    texts! {
        pub enum CopyT {
        Title { en: "Your data held by Ebb", ja: "Ebb が保管しているあなたのデータ" }
        About { en: "Ebb is the software this organisation uses for its public contact form, one-time file shares and the record of what its admins did. It deletes every kind of data on a fixed schedule, listed below with what was found for your address.", ja: "Ebb は、この組織が公開お問い合わせフォーム、1 回限りのファイル共有、管理者の操作記録に使っているソフトウェアです。すべてのデータは決められた期間で削除されます。以下に、種類ごとの保管期間と、あなたのアドレスについて見つかったものを示します。" }
        RequestLine { en: "Request #{id} ({kind}), received {received}, to be answered by {due}.", ja: "請求 #{id}（{kind}）、受付日 {received}、回答期限 {due}。" }
        AddressLine { en: "Email address searched: {email}", ja: "検索したメールアドレス: {email}" }
        GeneratedLine { en: "Generated: {at}", ja: "作成日時: {at}" }
        KindLine { en: "{label}: {n} — {promise}", ja: "{label}: {n} 件 — {promise}" }
        KeptLine { en: "    kept: {why}", ja: "    保管理由: {why}" }
        EachItem { en: "Each item gives when it was made (created_at) and when Ebb deletes it anyway (deleted_by; empty while a legal hold keeps it).", ja: "各項目には作成日時（created_at）と、Ebb が自動で削除する日時（deleted_by。法的保全中は空欄）が記載されています。" }
        NotSearchableHeading { en: "What Ebb keeps that cannot be searched by address:", ja: "アドレスでは検索できない保管データ:" }
        NotSearchableClients { en: "Network addresses of visitors (for rate limits and the audit log) are stored only as keyed hashes: they cannot be turned back into an address, nor found from an email address. Rate-limit windows are deleted a day after they start.", ja: "訪問者のネットワークアドレス（レート制限と監査ログ用）は鍵付きハッシュとしてのみ保存されます。元のアドレスには戻せず、メールアドレスから検索することもできません。レート制限の集計期間は開始から 1 日後に削除されます。" }
        NotSearchableAudit { en: "The audit log records what admins and Ebb did, and is never changed: it is the proof of what happened. It holds a visitor's network address and, for data requests, the email address only as keyed hashes, never the address itself; Ebb refuses an email address in the reasons admins write into it (legal holds).", ja: "監査ログには管理者と Ebb の操作が記録され、変更されることはありません（何が起きたかの証拠です）。訪問者のネットワークアドレスと、データ請求のメールアドレスは鍵付きハッシュとしてのみ記録され、アドレスそのものは記録されません。管理者が記入する理由（法的保全）にメールアドレスを含めることはできません。" }
        NotSearchableFiles { en: "Files shared by admins and files people sent through an upload link are not searched: Ebb does not read their contents, and their names and notes are not searched by address. A shared file is deleted after the downloads its link allows (one to twenty) or when the link expires; a file received through an upload link is kept for the admins until its expiry (30 days by default), then deleted. Once a file is deleted, its name and note are forgotten too.", ja: "管理者が共有したファイルと、アップロード用リンクから送られたファイルは検索の対象外です。Ebb はファイルの内容を読まず、ファイル名やメモもアドレスでは検索しません。共有ファイルは、リンクで許可されたダウンロード回数（1〜20 回）の後、またはリンクの期限切れ時に削除されます。アップロード用リンクで受け取ったファイルは、期限（既定では 30 日）まで管理者のために保管され、その後削除されます。ファイルを削除すると、その名前とメモも消去されます。" }
        NotSearchableMail { en: "Notification emails already sent to the admins are in their mailboxes, outside Ebb: Ebb lists when they were sent but cannot erase them.", ja: "管理者に送信済みの通知メールは各管理者のメールボックス（Ebb の外部）にあります。Ebb は送信日時を記録していますが、メールそのものを消去することはできません。" }
        }
    }
}
pub use cover::CopyT;
