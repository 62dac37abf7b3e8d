//! The inbox pages' texts in both languages (used by the pages and by the server functions
//! that answer them).

use common::i18n::texts;

texts! {
    pub(crate) enum InboxT {
    // The page
    Heading { en: "Inbox", ja: "受信箱" }
    CountTotal { en: "Inquiries", ja: "お問い合わせ" }
    CountLast24h { en: "Last 24 hours", ja: "過去 24 時間" }
    CountLast7d { en: "Last 7 days", ja: "過去 7 日間" }
    SearchLabel { en: "Search name, email and message", ja: "名前・メールアドレス・メッセージを検索" }
    SearchPlaceholder { en: "Search name, email, message", ja: "名前、メールアドレス、メッセージで検索" }
    Search { en: "Search", ja: "検索" }
    Bom { en: " UTF-8 BOM (for Excel)", ja: " UTF-8 BOM（Excel 用）" }
    ExportCsv { en: "Export CSV", ja: "CSV をエクスポート" }
    ExportResults { en: "Export results as CSV", ja: "検索結果を CSV でエクスポート" }
    DeleteSelected { en: "Delete selected ({n})", ja: "選択した {n} 件を削除" }
    ColSelect { en: "Select", ja: "選択" }
    ColReceived { en: "Received", ja: "受信日時" }
    ColFrom { en: "From", ja: "送信者" }
    ColMessage { en: "Message", ja: "メッセージ" }
    ColActions { en: "Actions", ja: "操作" }
    Empty { en: "No inquiries yet.", ja: "お問い合わせはまだありません。" }
    NoMatch { en: "No inquiry matches this search.", ja: "この検索に一致するお問い合わせはありません。" }

    // A row and the detail
    SelectRow { en: "Select the inquiry from {name}", ja: "{name} さんからのお問い合わせを選択" }
    OnHold { en: "On legal hold", ja: "法的保全中" }
    Open { en: "Open", ja: "開く" }
    Delete { en: "Delete", ja: "削除" }
    InquiryFrom { en: "Inquiry from {name}", ja: "{name} さんからのお問い合わせ" }
    HeldNoticeBefore { en: "On legal hold: kept past the retention period and cannot be deleted until the hold is lifted on the ", ja: "法的保全中のため、保管期間を過ぎても保管されます。" }
    HeldNoticeLink { en: "Retention page", ja: "保管期間ページ" }
    HeldNoticeAfter { en: ".", ja: "で保全が解除されるまで削除できません。" }
    Close { en: "Close", ja: "閉じる" }
    LegalHold { en: "Legal hold…", ja: "法的保全…" }
    HoldThis { en: "Hold this inquiry", ja: "このお問い合わせを保全" }
    HoldSender { en: "Hold every inquiry from this address", ja: "このアドレスからのお問い合わせをすべて保全" }

    // Confirmations and outcomes
    ConfirmDeleteOne { en: "Delete this inquiry? This cannot be undone.", ja: "このお問い合わせを削除しますか？この操作は取り消せません。" }
    ConfirmDeleteMany { en: "Delete {n} inquiries? This cannot be undone.", ja: "{n} 件のお問い合わせを削除しますか？この操作は取り消せません。" }
    DeletedOne { en: "1 inquiry deleted.", ja: "お問い合わせを 1 件削除しました。" }
    DeletedMany { en: "{n} inquiries deleted.", ja: "お問い合わせを {n} 件削除しました。" }
    Held { en: "Placed on legal hold: kept past the retention period until the hold is lifted (Retention page).", ja: "法的保全を設定しました。保全が解除されるまで、保管期間を過ぎても保管されます（保管期間ページ）。" }
    NotFound { en: "This inquiry no longer exists; it may have been deleted.", ja: "このお問い合わせはもう存在しません。削除された可能性があります。" }

    // Messages of the server functions (api.rs)
    InvalidCursor { en: "invalid page cursor", ja: "ページの位置指定が無効です。" }
    SelectionSize { en: "select between 1 and 1,000 inquiries", ja: "お問い合わせは 1〜1,000 件の範囲で選択してください" }
    HeldOne { en: "This inquiry is on legal hold and cannot be deleted. Lift the hold first (Retention page).", ja: "このお問い合わせは法的保全中のため削除できません。先に保全を解除してください（保管期間ページ）。" }
    HeldSome { en: "{n} of the selected inquiries are on legal hold and cannot be deleted; nothing was deleted. Unselect them, or lift the hold first (Retention page).", ja: "選択したお問い合わせのうち {n} 件は法的保全中のため削除できません。何も削除していません。それらの選択を外すか、先に保全を解除してください（保管期間ページ）。" }


    // The Spam tab (spam_ui.rs) and the dashboard's figures
    TabInbox { en: "Inbox", ja: "受信箱" }
    TabSpam { en: "Spam", ja: "スパム" }
    TabsLabel { en: "Inbox or suspected spam", ja: "受信箱またはスパムの疑い" }
    SpamIntro { en: "{n} suspected spam: submissions the spam signals flagged. They are not emailed and not counted in the inbox, and are deleted {days} days after they arrive. \"Not spam\" moves one to the inbox.", ja: "スパムの疑い {n} 件：スパムの兆候が検出された送信です。メール通知されず、受信箱の件数にも含まれません。受信から {days} 日後に削除されます。「スパムではない」で受信箱へ移動できます。" }
    SpamEmpty { en: "No suspected spam.", ja: "スパムの疑いはありません。" }
    ColSignals { en: "Signals", ja: "兆候" }
    NotSpam { en: "Not spam", ja: "スパムではない" }
    SpamReleased { en: "Moved to the inbox.", ja: "受信箱へ移動しました。" }
    SpamDeleted { en: "Suspected spam deleted.", ja: "スパムの疑いを削除しました。" }
    SpamGone { en: "This submission is no longer in quarantine: it was moved to the inbox or deleted.", ja: "この送信はもう隔離されていません。受信箱へ移動されたか、削除されました。" }
    SpamRetentionLabel { en: "Delete suspected spam after (days)", ja: "スパムの疑いを削除するまでの日数" }
    SpamRetentionSaved { en: "Suspected spam is now deleted {days} days after it arrives.", ja: "スパムの疑いは受信から {days} 日後に削除されるようになりました。" }
    SpamRetentionInvalid { en: "Enter a whole number of days from 1 to 365.", ja: "1〜365 の整数で日数を入力してください。" }
    Save { en: "Save", ja: "保存" }
    FiguresHeading { en: "Contact form, per day", ja: "お問い合わせフォーム（日別）" }
    FiguresDay { en: "Day (UTC)", ja: "日付（UTC）" }
    FiguresAccepted { en: "Accepted", ja: "受付" }
    FiguresQuarantined { en: "Quarantined", ja: "隔離" }
    FiguresRefused { en: "Refused (rate limit)", ja: "拒否（レート制限）" }
    FiguresSignals { en: "Signals that fired", ja: "検出された兆候" }
    OpenSpam { en: "Open suspected spam", ja: "スパムの疑いを開く" }
}
}
