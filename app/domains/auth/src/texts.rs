//! The auth pages' texts in both languages (used by the pages and by the server functions
//! that answer them).

use common::i18n::texts;

texts! {
    pub(crate) enum AccountT {
    // The admin shell
    NavLabel { en: "Admin", ja: "管理メニュー" }
    NavDashboard { en: "Dashboard", ja: "ダッシュボード" }
    NavInbox { en: "Inbox", ja: "受信箱" }
    NavShares { en: "Shares", ja: "共有ファイル" }
    NavAudit { en: "Audit", ja: "監査ログ" }
    NavRetention { en: "Retention", ja: "保管期間" }
    NavRequests { en: "Data requests", ja: "データ請求" }
    NavSettings { en: "Settings", ja: "設定" }
    NavAccount { en: "Account", ja: "アカウント" }
    SignOut { en: "Sign out", ja: "サインアウト" }
    ComingSoon { en: "Coming soon.", ja: "準備中です。" }

    // The account page
    Title { en: "Account", ja: "アカウント" }
    AccountGone { en: "This passkey or session no longer exists; it may have been removed in another browser. Reload the page.", ja: "このパスキーまたはセッションはもう存在しません。別のブラウザーで削除された可能性があります。ページを再読み込みしてください。" }
    PasskeysHeading { en: "Your passkeys", ja: "登録済みのパスキー" }
    Name { en: "Name", ja: "名前" }
    Created { en: "Created", ja: "作成日時" }
    LastUsed { en: "Last used", ja: "最終使用日時" }
    Actions { en: "Actions", ja: "操作" }
    OnlyPasskeyHint { en: "Your only passkey cannot be removed. Add another one first.", ja: "パスキーが 1 つしかないため削除できません。先に別のパスキーを追加してください。" }
    NewPasskeyName { en: "Name for a new passkey", ja: "新しいパスキーの名前" }
    NewPasskeyPlaceholder { en: "e.g. Phone", ja: "例: スマートフォン" }
    AddPasskey { en: "Add a passkey", ja: "パスキーを追加" }
    PasskeyAdded { en: "Passkey added.", ja: "パスキーを追加しました。" }
    SessionsHeading { en: "Your sessions", ja: "サインイン中のセッション" }
    Browser { en: "Browser", ja: "ブラウザー" }
    SignedIn { en: "Signed in", ja: "サインイン日時" }
    LastSeen { en: "Last seen", ja: "最終アクセス日時" }
    InviteHeading { en: "Invite another admin", ja: "別の管理者を招待" }
    InviteExplain { en: "An invite link works once and expires after 30 minutes. It is shown only now: copy it and send it to the person.", ja: "招待リンクは 1 回だけ有効で、30 分後に期限切れになります。表示されるのは今だけです。コピーして相手に送ってください。" }
    InviteFor { en: "Their name (optional)", ja: "相手の名前（任意）" }
    InviteRole { en: "Their role", ja: "ロール" }
    StepUpHeading { en: "Confirm it is you", ja: "本人確認" }
    StepUpText { en: "This action needs a passkey check from the last few minutes. Confirm with your passkey; the check then counts for a few minutes.", ja: "この操作には、数分以内のパスキーによる確認が必要です。パスキーで確認してください。確認は数分間有効です。" }
    StepUpConfirm { en: "Confirm with passkey", ja: "パスキーで確認" }
    StepUpCancel { en: "Not now", ja: "今はしない" }
    StepUpDone { en: "Confirmed. Do it again now: it will go through.", ja: "確認しました。もう一度実行してください。" }
    StepUpDoneDownload { en: "Confirmed. The download starts.", ja: "確認しました。ダウンロードを開始します。" }
    AdminsHeading { en: "Admins and their roles", ja: "管理者とロール" }
    AdminsExplain { en: "Owners manage admins and settings; admins work with the inbox, shares, file requests, data requests and legal holds; auditors read the audit trail and the retention report. A change applies at once, to every session.", ja: "オーナーは管理者と設定を管理し、管理者は受信箱・共有ファイル・ファイル依頼・データ請求・リーガルホールドを扱い、監査担当は監査証跡と保存期間レポートを閲覧します。変更はすべてのセッションに即時に反映されます。" }
    ColAdmin { en: "Admin", ja: "管理者" }
    ColRole { en: "Role", ja: "ロール" }
    ColJoined { en: "Joined", ja: "参加日時" }
    ColPasskeys { en: "Passkeys", ja: "パスキー" }
    You { en: "you", ja: "あなた" }
    RoleOf { en: "Role of {name}", ja: "{name} のロール" }
    ChangeRole { en: "Change", ja: "変更" }
    RemoveAdmin { en: "Remove", ja: "削除" }
    RemoveAdminLabel { en: "Remove {name}", ja: "{name} を削除" }
    ConfirmRemoveAdmin { en: "Remove this admin? Their sessions end and their passkeys are deleted at once.", ja: "この管理者を削除しますか？セッションは終了し、パスキーはすぐに削除されます。" }
    RoleChanged { en: "Role changed.", ja: "ロールを変更しました。" }
    AdminRemoved { en: "Admin removed.", ja: "管理者を削除しました。" }
    CreateInvite { en: "Create invite link", ja: "招待リンクを作成" }
    InviteLinkBefore { en: "Invite link (valid until ", ja: "招待リンク（有効期限: " }
    InviteLinkAfter { en: ")", ja: "）" }
    Copy { en: "Copy", ja: "コピー" }

    // A passkey's row
    PasskeyRenamed { en: "Passkey renamed.", ja: "パスキーの名前を変更しました。" }
    ConfirmRemove { en: "Remove this passkey? You will no longer be able to sign in with it.", ja: "このパスキーを削除しますか？削除すると、このパスキーではサインインできなくなります。" }
    PasskeyRemoved { en: "Passkey removed.", ja: "パスキーを削除しました。" }
    NewName { en: "New name", ja: "新しい名前" }
    Save { en: "Save", ja: "保存" }
    Never { en: "never", ja: "未使用" }
    Rename { en: "Rename", ja: "名前を変更" }
    Remove { en: "Remove", ja: "削除" }
    OnlyPasskeyTitle { en: "Your only passkey cannot be removed", ja: "唯一のパスキーは削除できません" }
    RemoveTitle { en: "Remove this passkey", ja: "このパスキーを削除" }
    // The server's refusal (auth/api.rs)
    LastPasskey { en: "Your last passkey cannot be removed: add another one first.", ja: "最後のパスキーは削除できません。先に別のパスキーを追加してください。" }

    // A session's row
    SessionEnded { en: "Session ended.", ja: "セッションを終了しました。" }
    ThisBrowser { en: "this browser", ja: "このブラウザー" }
    SignOutHere { en: "Sign out here", ja: "ここでサインアウト" }
    Revoke { en: "Revoke", ja: "終了" }
}
}
