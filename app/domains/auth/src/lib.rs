//! Passkey-only admin sign-in: invites, ceremonies, sessions, the account page.

pub mod api;
#[cfg(feature = "hydrate")]
mod browser;
cfg_if::cfg_if! {
    // What runs on the server only.
    if #[cfg(feature = "ssr")] {
        pub mod db;
        pub mod prune;
        pub mod service;
    }
}
pub(crate) mod texts;
pub mod ui;

/// The sign-in page's client: the passkey ceremony on the server-rendered page, with no wasm
/// (nor any prefetched). The shell puts it inline in `/signin` in place of the app's hydration
/// scripts (see `ui::SignInPage`).
pub const SIGNIN_JS: &str = include_str!("signin.js");

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use common::i18n::{t, texts, tf};

/// What sign-in needs at run time (put into `AppState` by the composition root).
#[cfg(feature = "ssr")]
#[derive(Clone)]
pub struct AuthSettings {
    /// The WebAuthn relying party (id and origin from the public URL).
    pub webauthn: std::sync::Arc<webauthn_rs::Webauthn>,
    /// A session unused this long ends (tower-sessions' inactivity expiry).
    pub session_idle: std::time::Duration,
    /// A session ends this long after sign-in, however active.
    pub session_absolute: std::time::Duration,
    /// How recent a passkey check a sensitive action needs (`kernel::session::require_fresh`).
    pub step_up: std::time::Duration,
    /// Per-client limit of each authentication endpoint.
    pub limit: kernel::ratelimit::Limit,
    /// Limit of each authentication endpoint over all clients together.
    pub total_limit: kernel::ratelimit::Limit,
}

#[cfg(feature = "ssr")]
impl kernel::state::Part for AuthSettings {
    type Slot = kernel::state::slot::Auth;
}

/// Longest admin or passkey name, in characters.
pub const LABEL_MAX_CHARS: usize = 100;

/// Which name [`parse_label`] checks (its messages name it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LabelField {
    /// The new admin's own name (invite page).
    YourName,
    /// A passkey's name (invite page, account page).
    PasskeyName,
    /// The name an invite suggests for the admin it is for.
    InviteName,
}

impl LabelField {
    /// The messages (empty, too long, control characters) for this field.
    fn messages(self) -> [AuthT; 3] {
        match self {
            LabelField::YourName => [AuthT::YourNameMissing, AuthT::YourNameTooLong, AuthT::YourNameControl],
            LabelField::PasskeyName => [AuthT::PasskeyNameMissing, AuthT::PasskeyNameTooLong, AuthT::PasskeyNameControl],
            LabelField::InviteName => [AuthT::NameMissing, AuthT::NameTooLong, AuthT::NameControl],
        }
    }
}

/// Validates a short label (an admin's or a passkey's name): 1–100 characters, no control
/// characters. `what` says which name it is; the message names it, in the page's language.
pub fn parse_label(raw: &str, what: LabelField) -> Result<String, String> {
    let [missing, too_long, control] = what.messages();
    let label = raw.trim();
    let chars = label.chars().count();
    if chars == 0 {
        return Err(t(missing).into());
    }
    if chars > LABEL_MAX_CHARS {
        return Err(tf(too_long, &[("max", &LABEL_MAX_CHARS)]));
    }
    if label.chars().any(char::is_control) {
        return Err(t(control).into());
    }
    Ok(label.to_owned())
}

pub use common::admin::{page_role, AdminInfo, Role};

/// A passkey on the account page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PasskeyView {
    pub id: Uuid,
    pub name: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub last_used_at: Option<OffsetDateTime>,
}

/// An admin on the owners' list (the Account page).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdminView {
    pub id: Uuid,
    pub name: String,
    pub role: Role,
    #[serde(with = "time::serde::rfc3339")]
    pub joined: OffsetDateTime,
    pub passkeys: i64,
    /// Sessions signed in now.
    pub sessions: i64,
    /// The owner looking at the list.
    pub me: bool,
}

/// A session on the account page. `handle` is not the session id (which never leaves the cookie).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionView {
    pub handle: Uuid,
    pub browser: String,
    #[serde(with = "time::serde::rfc3339")]
    pub created_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub last_seen_at: OffsetDateTime,
    pub current: bool,
}

/// What the invite page shows before registration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InviteInfo {
    pub suggested_name: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
}

/// A freshly created invite: the link is shown once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewInvite {
    pub url: String,
    #[serde(with = "time::serde::rfc3339")]
    pub expires_at: OffsetDateTime,
}

/// A short browser description from a User-Agent header ("Chrome on Linux"), in the page's
/// language.
pub fn describe_browser(user_agent: &str) -> String {
    let ua = user_agent;
    let browser = if ua.contains("Edg/") {
        "Edge"
    } else if ua.contains("Firefox/") {
        "Firefox"
    } else if ua.contains("Chrome/") || ua.contains("Chromium/") {
        "Chrome"
    } else if ua.contains("Safari/") {
        "Safari"
    } else {
        t(AuthT::UnknownBrowser)
    };
    let os = if ua.contains("Windows") {
        Some("Windows")
    } else if ua.contains("Android") {
        Some("Android")
    } else if ua.contains("iPhone") || ua.contains("iPad") {
        Some("iOS")
    } else if ua.contains("Mac OS X") {
        Some("macOS")
    } else if ua.contains("Linux") {
        Some("Linux")
    } else {
        None
    };
    match os {
        Some(os) => tf(AuthT::BrowserOnOs, &[("browser", &browser), ("os", &os)]),
        None => browser.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_1_to_100_characters_without_control_characters() {
        assert!(parse_label("", LabelField::InviteName).is_err());
        assert!(parse_label("  ", LabelField::InviteName).is_err());
        assert_eq!(parse_label(" Laptop ", LabelField::PasskeyName).unwrap(), "Laptop");
        assert!(parse_label(&"x".repeat(100), LabelField::YourName).is_ok());
        assert!(parse_label(&"x".repeat(101), LabelField::YourName).is_err());
        assert!(parse_label("a\nb", LabelField::PasskeyName).is_err());
    }

    #[test]
    fn browsers_are_described_briefly() {
        let chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Safari/537.36";
        assert_eq!(describe_browser(chrome), "Chrome on Linux");
        assert_eq!(describe_browser("curl/8"), "Unknown browser");
    }
}

texts! {
    pub(crate) enum AuthT {
    // Roles (owners manage them)
    RoleUnknown { en: "Choose a role: owner, admin or auditor.", ja: "ロールを選んでください（オーナー、管理者、監査担当）。" }
    NotYourself { en: "You cannot remove yourself. Another owner can.", ja: "自分自身は削除できません。別のオーナーが削除できます。" }
    LastOwner { en: "This is the only owner: nobody could manage the admins afterwards. Make another admin an owner first.", ja: "唯一のオーナーです。変更すると誰も管理者を管理できなくなります。先に別の管理者をオーナーにしてください。" }
    LastAdmin { en: "This is the only admin: nobody could sign in afterwards. Invite another admin first.", ja: "唯一の管理者です。削除すると誰もサインインできなくなります。先に別の管理者を招待してください。" }
    // A name as typed (`parse_label`), one set of messages per field
    YourNameMissing { en: "Please enter your name.", ja: "お名前を入力してください。" }
    YourNameTooLong { en: "Please shorten your name to {max} characters or fewer.", ja: "お名前は {max} 文字以内にしてください。" }
    YourNameControl { en: "your name can't contain line breaks or control characters.", ja: "お名前に改行や制御文字は使えません。" }
    PasskeyNameMissing { en: "Please enter a name for this passkey.", ja: "このパスキーの名前を入力してください。" }
    PasskeyNameTooLong { en: "Please shorten a name for this passkey to {max} characters or fewer.", ja: "パスキーの名前は {max} 文字以内にしてください。" }
    PasskeyNameControl { en: "a name for this passkey can't contain line breaks or control characters.", ja: "パスキーの名前に改行や制御文字は使えません。" }
    NameMissing { en: "Please enter a name.", ja: "名前を入力してください。" }
    NameTooLong { en: "Please shorten a name to {max} characters or fewer.", ja: "名前は {max} 文字以内にしてください。" }
    NameControl { en: "a name can't contain line breaks or control characters.", ja: "名前に改行や制御文字は使えません。" }

    // Sign-in refused (api.rs, `finish_signin`)
    PasskeyNotAccepted { en: "This passkey was not accepted. Use a passkey registered for this site, or ask an admin for an invite.", ja: "このパスキーは受け付けられませんでした。このサイトに登録したパスキーを使うか、管理者に招待を依頼してください。" }
    PromptClosed { en: "The passkey prompt was closed or timed out. Please try again.", ja: "パスキーの確認画面が閉じられたか、時間切れになりました。もう一度お試しください。" }
    AlreadyRegistered { en: "This passkey is already registered for your account.", ja: "このパスキーはすでにあなたのアカウントに登録されています。" }
    WrongAddress { en: "Passkeys cannot be used on this address. Open Ebb at its configured public URL.", ja: "このアドレスではパスキーを使えません。設定された公開 URL で Ebb を開いてください。" }
    NoPasskeySupport { en: "This browser or device does not support passkeys.", ja: "このブラウザーまたはデバイスはパスキーに対応していません。" }
    PasskeyFailed { en: "The passkey operation failed. Please try again.", ja: "パスキーの操作に失敗しました。もう一度お試しください。" }
    NeedsWindow { en: "Passkeys need a browser window.", ja: "パスキーを使うにはブラウザーのウィンドウが必要です。" }
    RegisterExpired { en: "This passkey request has expired or was already used. Please try again.", ja: "このパスキーの要求は期限切れか、すでに使用されています。もう一度お試しください。" }
    RegisterNotVerified { en: "The passkey could not be verified. Please try again.", ja: "パスキーを確認できませんでした。もう一度お試しください。" }
    SignInExpired { en: "This sign-in request has expired or was already used. Please try again.", ja: "このサインイン要求は期限切れか、すでに使用されています。もう一度お試しください。" }

    // A session's browser on the account page (`describe_browser`)
    UnknownBrowser { en: "Unknown browser", ja: "不明なブラウザー" }
    BrowserOnOs { en: "{browser} on {os}", ja: "{browser}（{os}）" }
}
}
