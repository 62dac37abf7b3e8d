//! The holds pages' texts in both languages (used by the pages and by the server functions
//! that answer them).

use common::i18n::texts;

texts! {
    pub(crate) enum HoldsT {
    NoLongerExists { en: "It no longer exists (it may have been deleted meanwhile); reload the page.", ja: "対象はもう存在しません（削除された可能性があります）。ページを再読み込みしてください。" }
    Placed { en: "Placed on legal hold. It is kept until the hold is lifted (Retention page).", ja: "法的保全を設定しました。保全が解除されるまで保管されます（保管期間ページ）。" }
    ReasonLabel { en: "Legal hold reason", ja: "法的保全の理由" }
    ReasonPlaceholder { en: "e.g. Case 2026-17: keep until the court decides", ja: "例: 案件 2026-17、裁判所の判断が出るまで保管" }
    LiftQuestion { en: "Lift the hold on {what}? What it kept may be deleted by the next cleanup.", ja: "{what} の法的保全を解除しますか？保全されていたものは、次回のクリーンアップで削除される場合があります。" }
    Lifted { en: "Hold lifted from {what}.", ja: "{what} の法的保全を解除しました。" }
    NoHolds { en: "No legal holds. Everything leaves on schedule.", ja: "法的保全はありません。すべて予定どおりに削除されます。" }
    Keeps { en: "Keeps", ja: "保全対象" }
    Reason { en: "Reason", ja: "理由" }
    PlacedAt { en: "Placed", ja: "設定日時" }
    Actions { en: "Actions", ja: "操作" }
    PlacedBy { en: " by {name}", ja: "（設定者: {name}）" }
    LiftLabel { en: "Lift the hold on {what}", ja: "{what} の法的保全を解除" }
    OneItemKept { en: "1 item kept", ja: "1 件を保管中" }
    ItemsKept { en: "{n} items kept", ja: "{n} 件を保管中" }
    Lift { en: "Lift", ja: "解除" }

    // Messages of the server functions (api.rs)
    AlreadyHeld { en: "This is already on legal hold.", ja: "これはすでに法的保全の対象です。" }
    ShareNotActive { en: "Only an active share can be put on hold; this one was downloaded, revoked or has expired.", ja: "法的保全を設定できるのは有効な共有ファイルだけです。この共有ファイルはダウンロード済み、取り消し済み、または期限切れです。" }
}
}
