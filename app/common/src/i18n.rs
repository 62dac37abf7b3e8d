//! Languages: English and Japanese. Every text is a key of [`T`] with both translations side by
//! side; the `texts!` macro does not compile an entry that lacks one, so a missing translation is
//! a build error, not a fallback. Texts with values carry named `{placeholders}`; a unit test
//! checks that both languages use the same ones.
//!
//! The language comes from the visitor's choice (the header's switch, remembered in the
//! `ebb_lang` cookie), else `Accept-Language`, else English. The server decides it once per
//! request (the shell's `<html lang>`, the page, and server functions' messages) and sends it
//! with the page, so hydration renders the same words.
//!
//! Why not `leptos_i18n`: its 0.6 line only warns about a key missing in one language (and
//! falls back to English), has no switch that works without JavaScript, and its build step
//! pulls ICU's data generator into every build; the issue asks for missing keys to fail.

use serde::{Deserialize, Serialize};

/// The cookie holding the visitor's language.
pub const LANG_COOKIE: &str = "ebb_lang";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub enum Lang {
    #[default]
    En,
    Ja,
}

impl Lang {
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Ja];

    /// The BCP 47 code (`<html lang>`, the cookie).
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Ja => "ja",
        }
    }

    /// The language's own name (for the switch).
    pub fn native_name(self) -> &'static str {
        match self {
            Lang::En => "English",
            Lang::Ja => "日本語",
        }
    }

    /// A code (`ja`, `ja-JP`, `EN`) to a supported language.
    pub fn parse(code: &str) -> Option<Lang> {
        let primary = code.trim().split(['-', '_']).next()?.to_ascii_lowercase();
        Lang::ALL.into_iter().find(|l| l.code() == primary)
    }

    /// The first supported language in an `Accept-Language` header, by the visitor's order of
    /// preference (q-values).
    pub fn from_accept_language(header: &str) -> Option<Lang> {
        accept_language::parse(header).iter().find_map(|tag| Lang::parse(tag))
    }
}

/// The value of cookie `name` in a `Cookie` header (`a=1; b=2`).
pub fn cookie_value<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header.split(';').filter_map(|pair| pair.trim().split_once('=')).find(|(k, _)| *k == name).map(|(_, v)| v.trim())
}

/// The values of cookie `name` in a request's `Cookie` headers (one per header that has it).
#[cfg(feature = "ssr")]
pub fn header_cookies<'a>(headers: &'a axum::http::HeaderMap, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    headers.get_all(axum::http::header::COOKIE).iter().filter_map(|v| v.to_str().ok()).filter_map(move |h| cookie_value(h, name))
}

/// The current page's (or request's) language. In the browser and while rendering: the one the
/// server chose (in context). In a server function: from the request. Elsewhere (unit tests, the
/// CLI): English.
pub fn lang() -> Lang {
    use leptos::prelude::use_context;
    if let Some(lang) = use_context::<Lang>() {
        return lang;
    }
    #[cfg(feature = "ssr")]
    return lang_of_request();
    #[cfg(not(feature = "ssr"))]
    if PAGE_LANG.load(std::sync::atomic::Ordering::Relaxed) == 1 {
        Lang::Ja
    } else {
        Lang::En
    }
}

/// In the browser: the page's language, for code that runs outside the components' context
/// (tasks started with `spawn_local`, event handlers). One page, one language; the server sets
/// no global (it serves many requests at once).
#[cfg(not(feature = "ssr"))]
static PAGE_LANG: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Remembers the page's language in the browser (see [`lang`]); does nothing on the server.
pub fn set_page_lang(_lang: Lang) {
    #[cfg(not(feature = "ssr"))]
    PAGE_LANG.store(if _lang == Lang::Ja { 1 } else { 0 }, std::sync::atomic::Ordering::Relaxed);
}

/// The request's language: the cookie, else `Accept-Language`, else English.
#[cfg(feature = "ssr")]
pub fn lang_of_request() -> Lang {
    if let Some(lang) = crate::request::with_parts(|parts| lang_of_headers(&parts.headers)) {
        return lang;
    }
    REQUEST_LANG.try_with(|lang| *lang).unwrap_or_default()
}

/// The language a request's headers ask for: the cookie, else `Accept-Language`, else English.
#[cfg(feature = "ssr")]
pub fn lang_of_headers(headers: &axum::http::HeaderMap) -> Lang {
    header_cookies(headers, LANG_COOKIE)
        .find_map(Lang::parse)
        .or_else(|| headers.get(axum::http::header::ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok()).and_then(Lang::from_accept_language))
        .unwrap_or_default()
}

#[cfg(feature = "ssr")]
tokio::task_local! {
    /// The current request's language, for handlers outside Leptos (uploads, downloads): set
    /// by [`with_lang`] around such a handler.
    static REQUEST_LANG: Lang;
}

/// Runs `fut` (a request's handling, outside Leptos) with its language (usually
/// [`lang_of_headers`]) known to [`lang`].
#[cfg(feature = "ssr")]
pub async fn with_lang<F: std::future::Future>(lang: Lang, fut: F) -> F::Output {
    REQUEST_LANG.scope(lang, fut).await
}

/// A table of texts: each key has an English and a Japanese text (see [`texts!`]).
pub trait Text: Copy + std::fmt::Debug + PartialEq + 'static {
    /// The key's text in `lang`.
    fn get(self, lang: Lang) -> &'static str;
    /// Every key of the table.
    fn all() -> &'static [Self];
}

/// The text `key` in the current language.
pub fn t<K: Text>(key: K) -> &'static str {
    key.get(lang())
}

/// The text `key` in the current language with its `{name}` placeholders filled.
pub fn tf<K: Text>(key: K, values: &[(&str, &dyn std::fmt::Display)]) -> String {
    fill(t(key), values)
}

/// Replaces each `{name}` in `text` by its value, in one pass: a value that itself contains
/// `{…}` (a name someone typed) is never filled again.
pub fn fill(text: &str, values: &[(&str, &dyn std::fmt::Display)]) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}').and_then(|close| values.iter().find(|(n, _)| *n == &after[..close]).map(|(_, v)| (close, v))) {
            Some((close, value)) => {
                out.push_str(&value.to_string());
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A count written the way the current language writes it: `12,345` in both English and
/// Japanese (digits grouped by three with a comma). Written here rather than with a locale
/// library: both languages use the same rule, and locale data would add tens of kilobytes to the
/// visitor's client.
pub fn num(n: impl Into<i64>) -> String {
    let n: i64 = n.into();
    let digits = n.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        out.push('-');
    }
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

/// A table of texts with both languages side by side:
///
/// ```ignore
/// texts! {
///     pub enum InboxT {
///         Title { en: "Inbox", ja: "受信箱" }
///     }
/// }
/// ```
///
/// An entry without both languages does not compile. Each table also gets a unit test (module
/// `texts_check`, so one table per module) that fails when a text is empty, the two languages use
/// different `{placeholders}`, or the Japanese text is a copy of an English sentence.
#[macro_export]
macro_rules! texts {
    ($vis:vis enum $name:ident { $( $key:ident { en: $en:literal, ja: $ja:literal $(,)? } )* }) => {
        /// Texts of the interface in both languages.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        $vis enum $name { $($key),* }

        impl $crate::i18n::Text for $name {
            fn get(self, lang: $crate::i18n::Lang) -> &'static str {
                match (self, lang) {
                    $( ($name::$key, $crate::i18n::Lang::En) => $en, ($name::$key, $crate::i18n::Lang::Ja) => $ja, )*
                }
            }

            fn all() -> &'static [Self] {
                &[$($name::$key),*]
            }
        }

        #[cfg(test)]
        mod texts_check {
            #[test]
            fn every_text_is_in_both_languages_with_the_same_placeholders() {
                $crate::i18n::check_table::<super::$name>();
            }
        }
    };
}
pub use crate::texts;

/// The checks every table's unit test runs (in the crate of the table).
pub fn check_table<K: Text>() {
    fn placeholders(text: &str) -> Vec<String> {
        let mut names: Vec<String> = text.split('{').skip(1).filter_map(|rest| rest.split_once('}').map(|(n, _)| n.to_string())).collect();
        names.sort();
        names
    }
    // An English sentence: a lowercase word of three letters or more outside the placeholders.
    fn has_words(text: &str) -> bool {
        let mut plain = String::new();
        let mut depth = 0;
        for c in text.chars() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                c if depth == 0 => plain.push(c),
                _ => {}
            }
        }
        plain.split(|c: char| !c.is_ascii_alphabetic()).any(|w| w.len() >= 3 && w.chars().all(|c| c.is_ascii_lowercase()))
    }
    assert!(!K::all().is_empty());
    for key in K::all() {
        let (en, ja) = (key.get(Lang::En), key.get(Lang::Ja));
        assert!(!en.trim().is_empty() && !ja.trim().is_empty(), "{key:?} is empty in a language");
        assert_eq!(placeholders(en), placeholders(ja), "{key:?}: the languages use different placeholders");
        assert!(!(en == ja && has_words(en)), "{key:?} is not translated: {en:?}");
    }
}

texts! {
    pub enum T {
    // The frame of every page
    MetaDescription { en: "Send a message to the team, or download a file shared with you. Messages and shared files are deleted on schedule.", ja: "チームへのメッセージの送信や、共有されたファイルのダウンロードができます。メッセージと共有ファイルは予定どおり自動的に削除されます。" }
    SkipToContent { en: "Skip to content", ja: "本文へ移動" }
    FooterDeleted { en: "Messages are kept for a limited time and then deleted automatically. ", ja: "メッセージは一定期間だけ保管され、その後自動的に削除されます。" }
    FooterRetentionLink { en: "How long we keep your data", ja: "データの保管期間について" }
    PrefsColours { en: "Colours", ja: "配色" }
    ThemeAuto { en: "Auto", ja: "自動" }
    ThemeLight { en: "Light", ja: "ライト" }
    ThemeDark { en: "Dark", ja: "ダーク" }
    PrefsLanguage { en: "Language", ja: "言語" }
    Loading { en: "Loading…", ja: "読み込み中…" }
    TitleSuffix { en: " — Ebb", ja: " — Ebb" }

    // Home and not found
    HomeTitle { en: "Contact", ja: "お問い合わせ" }
    HomeHeading { en: "Get in touch", ja: "お問い合わせ" }
    HomeLead { en: "Write to us with the form below. We answer by email, usually within two working days.", ja: "下のフォームからご連絡ください。通常 2 営業日以内にメールでお返事します。" }
    NotFoundTitle { en: "Not found", ja: "ページが見つかりません" }
    NotFoundHeading { en: "Page not found", ja: "ページが見つかりません" }
    NotFoundText { en: "There is nothing at this address. Check the link, or go to the ", ja: "このアドレスにはページがありません。リンクを確認するか、" }
    NotFoundHome { en: "home page", ja: "ホームページ" }
    NotFoundEnd { en: ".", ja: "へお戻りください。" }

    // The contact form
    ContactHeading { en: "Contact us", ja: "お問い合わせフォーム" }
    ContactName { en: "Your name", ja: "お名前" }
    ContactEmail { en: "Your email address", ja: "メールアドレス" }
    ContactMessage { en: "Message", ja: "メッセージ" }
    ContactCount { en: "{n} / {max} characters", ja: "{n} / {max} 文字" }
    ContactHoneypot { en: "Leave this field empty", ja: "この欄は空のままにしてください" }
    ContactSend { en: "Send message", ja: "送信する" }
    ContactSending { en: "Sending…", ja: "送信中…" }
    ContactRetentionLink { en: "How long we keep your message", ja: "メッセージの保管期間について" }
    ContactSent { en: "Thank you — your message was sent.", ja: "ありがとうございます。メッセージを送信しました。" }
    ContactSentReply { en: "We will reply to the email address you gave.", ja: "ご入力いただいたメールアドレスにお返事します。" }
    ContactSendAnother { en: "Send another message", ja: "別のメッセージを送る" }
    ContactFixFields { en: "Please correct the fields marked below.", ja: "エラーが表示された項目を修正してください。" }
    ContactRateLimited { en: "You have sent several messages in a short time. Please wait {n} minute(s) and try again.", ja: "短時間に複数のメッセージが送信されました。{n} 分ほど待ってから、もう一度お試しください。" }
    ContactIncomplete { en: "The form was incomplete. Please reload the page and try again.", ja: "フォームの内容が不完全でした。ページを再読み込みして、もう一度お試しください。" }
    ContactFailed { en: "Something went wrong on our side and your message was not sent. Please try again in a few minutes.", ja: "サーバーで問題が発生したため、メッセージを送信できませんでした。数分後にもう一度お試しください。" }
    NameMissing { en: "Please enter your name.", ja: "お名前を入力してください。" }
    NameTooLong { en: "Please shorten your name to {max} characters or fewer (it has {n}).", ja: "お名前は {max} 文字以内にしてください（現在 {n} 文字）。" }
    NameControl { en: "Your name cannot contain line breaks or control characters.", ja: "お名前に改行や制御文字は使えません。" }
    EmailMissing { en: "Please enter your email address so we can reply.", ja: "お返事のため、メールアドレスを入力してください。" }
    EmailTooLong { en: "An email address can have at most {max} characters (this one has {n}).", ja: "メールアドレスは {max} 文字までです（現在 {n} 文字）。" }
    EmailInvalid { en: "Please enter a valid email address, like name@example.org.", ja: "name@example.org のような正しいメールアドレスを入力してください。" }
    MessageMissing { en: "Please write a message.", ja: "メッセージを入力してください。" }
    MessageTooLong { en: "Please shorten your message to {max} characters or fewer (it has {n}).", ja: "メッセージは {max} 文字以内にしてください（現在 {n} 文字）。" }
    MessageControl { en: "Your message contains control characters; please remove them.", ja: "メッセージに制御文字が含まれています。削除してください。" }

    // Errors in words that fit any page
    ErrConflict { en: "This already exists; reload the page to see it.", ja: "これはすでに存在します。ページを再読み込みして確認してください。" }
    ErrRateLimited { en: "Too many attempts. Please wait {n} minute(s) and try again.", ja: "試行回数が多すぎます。{n} 分ほど待ってから、もう一度お試しください。" }
    ErrTooLarge { en: "The file is larger than the limit of {limit}.", ja: "ファイルが上限（{limit}）を超えています。" }
    ErrUnauthorized { en: "Your session has ended. Please sign in again.", ja: "セッションが終了しました。もう一度サインインしてください。" }
    ErrNotAllowed { en: "Your role does not allow this: it needs the {role} role. An owner can change roles on the Account page.", ja: "このロールでは実行できません（{role} のロールが必要です）。ロールはオーナーがアカウントページで変更できます。" }
    ErrStepUp { en: "This needs a fresh check that it is you: confirm with your passkey (above), then do it again.", ja: "本人確認が必要です。上に表示されたボタンからパスキーで確認してから、もう一度実行してください。" }
    ErrForbidden { en: "This request came from another site and was refused.", ja: "別のサイトからのリクエストのため、拒否されました。" }
    ErrNotFound { en: "This was not found: it may have been deleted meanwhile. Reload the page to see the current state.", ja: "見つかりませんでした。削除された可能性があります。ページを再読み込みして現在の状態を確認してください。" }
    ErrGone { en: "This is no longer available. Reload the page to see the current state.", ja: "この項目はもう利用できません。ページを再読み込みして現在の状態を確認してください。" }
    ErrUnavailable { en: "Ebb could not save this right now (its database did not answer in time), so nothing was kept. Please send it again in a minute.", ja: "現在保存できませんでした（データベースが時間内に応答しませんでした）。何も保存されていません。1 分ほどしてからもう一度送信してください。" }
    ErrStorageFull { en: "The server's storage is full, so this file was not kept. The admins have been alerted; try again later, or send a smaller file.", ja: "サーバーの保存領域がいっぱいのため、このファイルは保存されませんでした。管理者に通知済みです。時間をおいて再度お試しいただくか、より小さいファイルを送信してください。" }
    ErrStorageUnavailable { en: "The file storage is unavailable right now (its marker is missing: an unmounted folder or a wrong bucket), so nothing was kept. The admins have been alerted; try again once it is back.", ja: "現在ファイルの保存先を利用できません（マーカーが見つかりません。フォルダーがマウントされていないか、バケットが誤っています）。何も保存されていません。管理者に通知済みです。復旧後にもう一度お試しください。" }
    ErrInternal { en: "Something went wrong on our side. Please try again in a moment.", ja: "サーバーで問題が発生しました。しばらくしてからもう一度お試しください。" }

    // Sign in and invites
    SignInTitle { en: "Sign in", ja: "サインイン" }
    SignInIntro { en: "Ebb admins sign in with a passkey: your device checks your fingerprint, face or PIN. There is no password.", ja: "Ebb の管理者はパスキーでサインインします。端末が指紋・顔・PIN で本人を確認します。パスワードは不要です。" }
    SignInAutofill { en: "Or choose your passkey here", ja: "またはここでパスキーを選択" }
    SignInAutofillHint { en: "Your saved passkeys appear as suggestions", ja: "保存済みのパスキーが候補に表示されます" }
    SignInButton { en: "Sign in with a passkey", ja: "パスキーでサインイン" }
    WaitingForPasskey { en: "Waiting for your passkey…", ja: "パスキーを待っています…" }
    SignInNoPasskey { en: "No passkey yet? Ask an admin for an invite link.", ja: "パスキーをお持ちでない場合は、管理者に招待リンクを依頼してください。" }
    NeedsJavascript { en: "Passkeys need JavaScript. Please enable it for this site.", ja: "パスキーには JavaScript が必要です。このサイトで有効にしてください。" }
    InviteTitle { en: "Join as an admin", ja: "管理者として参加" }
    InviteHeading { en: "Join Ebb as an admin", ja: "Ebb に管理者として参加" }
    InviteChecking { en: "Checking your invite…", ja: "招待を確認しています…" }
    InviteInvalid { en: "This link is not valid: it was already used, has expired, or was mistyped. Ask an admin for a new invite.", ja: "このリンクは無効です。使用済み・期限切れ・入力ミスのいずれかです。管理者に新しい招待を依頼してください。" }
    InviteIntro { en: "Create a passkey to finish. This link works once and expires at {time}.", ja: "パスキーを作成して完了してください。このリンクは 1 回だけ有効で、{time} に期限切れになります。" }
    InviteYourName { en: "Your name", ja: "お名前" }
    InvitePasskeyName { en: "Name for this passkey", ja: "このパスキーの名前" }
    InvitePasskeyNameHint { en: "So you can tell your passkeys apart later, e.g. “Work laptop”.", ja: "後でパスキーを見分けるための名前です（例:「仕事用ノート PC」）。" }
    InviteDefaultPasskey { en: "This device", ja: "この端末" }
    InviteButton { en: "Create passkey and join", ja: "パスキーを作成して参加" }

    RequestTooSlow { en: "Your request arrived too slowly and was stopped. Check your connection and send it again.", ja: "リクエストの到着が遅すぎたため中止しました。接続を確認して、もう一度送信してください。" }
    // The recipient's share page
    ShareReceiptInvalid { en: "This download can be resumed only by the browser that started it. Ask the sender for a new link if you need the file again.", ja: "このダウンロードは、開始したブラウザーからのみ再開できます。もう一度ファイルが必要な場合は、送信者に新しいリンクを依頼してください。" }
    ShareResumeOver { en: "The time to resume this download has ended and the file was deleted. Ask the sender for a new link.", ja: "このダウンロードを再開できる期間は終了し、ファイルは削除されました。送信者に新しいリンクを依頼してください。" }
    ShareResumeRevoked { en: "The sender withdrew this file: it can no longer be downloaded or resumed.", ja: "送信者がこのファイルの共有を取り消しました。ダウンロードも再開もできません。" }
    ShareResumeDone { en: "This download already finished: the whole file was sent. If your copy is incomplete, ask the sender for a new link.", ja: "このダウンロードは完了しています（ファイル全体を送信済みです）。手元のファイルが不完全な場合は、送信者に新しいリンクを依頼してください。" }
    ShareResumeTooMany { en: "This download was resumed too many times. Ask the sender for a new link.", ja: "このダウンロードは再開の回数が上限に達しました。送信者に新しいリンクを依頼してください。" }
    ShareResumeFromStart { en: "A download that started can only be continued from where it stopped, not started again. Use your browser's Resume button in its downloads list, or `curl -C -`.", ja: "開始したダウンロードは、中断した位置から続けることだけができ、最初からやり直すことはできません。ブラウザーのダウンロード一覧の「再開」ボタン、または `curl -C -` をお使いください。" }
    ShareResumeTitle { en: "Your download can still be finished", ja: "ダウンロードはまだ完了できます" }
    ShareResumeBrowser { en: "This browser started downloading the file and did not get all of it. Open your browser's downloads list (Ctrl+J, or ⌘+Option+L in Safari) and press Resume (or Retry) on this file: it continues where it stopped. Pressing Download again does not start a new download.", ja: "このブラウザーはファイルのダウンロードを開始しましたが、すべてを受け取っていません。ブラウザーのダウンロード一覧（Ctrl+J、Safari では ⌘+Option+L）を開き、このファイルの「再開」（または「再試行」）を押してください。中断した位置から続きます。もう一度「ダウンロード」を押しても新しいダウンロードは始まりません。" }
    ShareResumeUntil { en: "It can be resumed until", ja: "再開できる期限:" }
    ShareResumeCommand { en: "Downloaded from the command line? Save the response headers when you start (curl -D receipt.txt), then continue with:", ja: "コマンドラインでダウンロードした場合は、開始時に応答ヘッダーを保存し（curl -D receipt.txt）、次のコマンドで続けてください:" }
    ShareResumeLinkPlaceholder { en: "THIS-PAGE-ADDRESS", ja: "このページのアドレス" }
    ShareRangeBad { en: "The requested part of the file does not exist. Restart the download from the beginning.", ja: "要求されたファイルの範囲は存在しません。最初からダウンロードし直してください。" }
    ShareUnavailable { en: "The file cannot be delivered right now. Your link still works: try again in a few minutes, or ask the sender.", ja: "現在ファイルをお届けできません。リンクは引き続き有効です。数分後にもう一度お試しいただくか、送信者にお問い合わせください。" }
    ShareTitle { en: "Download a file", ja: "ファイルのダウンロード" }
    ShareHeading { en: "A file was shared with you", ja: "ファイルが共有されました" }
    ShareFile { en: "File", ja: "ファイル" }
    ShareSize { en: "Size", ja: "サイズ" }
    ShareExpires { en: "Link expires", ja: "リンクの有効期限" }
    ShareDownload { en: "Download", ja: "ダウンロード" }
    ShareStarted { en: "Your download has started. This link no longer starts a new download; if the download breaks, press Resume in your browser's downloads list (or come back to this page) soon.", ja: "ダウンロードを開始しました。このリンクで新しいダウンロードはできません。ダウンロードが中断した場合は、早めにブラウザーのダウンロード一覧で「再開」を押してください（またはこのページに戻ってください）。" }
    ShareOnce { en: "This link works for one download: once the download starts, it stops working.", ja: "このリンクでダウンロードできるのは 1 回だけです。ダウンロードを開始すると使えなくなります。" }
    ShareWhenDeleted { en: "When this file is deleted", ja: "このファイルが削除される時期" }
    ShareDownloadedTitle { en: "This file was already downloaded", ja: "このファイルはすでにダウンロードされています" }
    ShareDownloadedText { en: "The link worked for one download, and that download has happened. If you did not get the file, ask the sender for a new link.", ja: "このリンクは 1 回限りで、すでにダウンロードされました。ファイルを受け取っていない場合は、送信者に新しいリンクを依頼してください。" }
    ShareExpiredTitle { en: "This link has expired", ja: "このリンクは期限切れです" }
    ShareExpiredText { en: "The link was valid until a set time (or the sender withdrew it), and the file has been or will be deleted. Ask the sender for a new link.", ja: "このリンクの有効期限が過ぎた（または送信者が取り消した）ため、ファイルは削除済みか削除予定です。送信者に新しいリンクを依頼してください。" }
    ShareNotFoundTitle { en: "Link not found", ja: "リンクが見つかりません" }
    ShareNotFoundHeading { en: "This link is not valid", ja: "このリンクは無効です" }
    ShareNotFoundText { en: "Check that you copied the whole link. If it is right, ask the sender for a new one.", ja: "リンク全体をコピーしたか確認してください。正しい場合は、送信者に新しいリンクを依頼してください。" }

    // The public retention page
    RetentionPublicTitle { en: "How long we keep your data", ja: "データの保管期間" }
    RetentionPublicDescription { en: "How long messages sent with the contact form and shared files are kept, and when they are deleted.", ja: "お問い合わせフォームのメッセージと共有ファイルの保管期間、および削除の時期について。" }
    RetentionMessagesHeading { en: "Messages you send", ja: "送信されたメッセージ" }
    RetentionMessages { en: "A message sent with the contact form (your name, email address and message) is kept for {days} and then deleted automatically.", ja: "お問い合わせフォームで送信されたメッセージ（お名前・メールアドレス・本文）は {days}保管され、その後自動的に削除されます。" }
    RetentionFilesHeading { en: "Files shared with you", ja: "共有されたファイル" }
    RetentionFiles { en: "A shared file can be downloaded once. It is deleted {grace} after that download, or when its link expires unused (a link lives at most {longest}).", ja: "共有ファイルのダウンロードは 1 回限りです。ダウンロードの {grace}後、またはリンクが未使用のまま期限切れになった時点で削除されます（リンクの有効期間は最長 {longest}）。" }
    RetentionNothingLongerHeading { en: "Nothing is kept longer", ja: "それ以上は保管しません" }
    RetentionNothingLonger { en: "Deletion runs on its own, every hour, and is checked: nothing is kept longer than stated here. The one exception is an item we are required by law to keep (a legal hold); it is deleted as soon as that requirement ends.", ja: "削除は 1 時間ごとに自動で実行され、確認されています。ここに記載された期間を超えて保管されるものはありません。唯一の例外は、法律により保管が義務付けられたもの（法的保全）で、その義務が終わり次第削除されます。" }
    RetentionAdmins { en: "Sign-in records of the site's administrators and the audit log of their actions are kept separately and contain none of your messages.", ja: "サイト管理者のサインイン記録と操作の監査ログは別に保管され、あなたのメッセージは含まれません。" }
    RetentionBack { en: "Back to the contact form", ja: "お問い合わせフォームに戻る" }
    Days { en: "{n} days", ja: "{n} 日間" }
    OneDay { en: "1 day", ja: "1 日間" }
    Hours { en: "{n} hours", ja: "{n} 時間" }
    OneHour { en: "1 hour", ja: "1 時間" }
    Minutes { en: "{n} minutes", ja: "{n} 分" }
    OneMinute { en: "1 minute", ja: "1 分" }
}
}

/// "3 days", "1 day" — a period in the current language.
pub fn days(n: i64) -> String {
    if n == 1 {
        t(T::OneDay).into()
    } else {
        tf(T::Days, &[("n", &n)])
    }
}

/// A number of hours in words: whole days when it is at least two days.
pub fn hours(h: i64) -> String {
    if h >= 48 && h % 24 == 0 {
        days(h / 24)
    } else if h == 1 {
        t(T::OneHour).into()
    } else {
        tf(T::Hours, &[("n", &h)])
    }
}

/// "15 minutes", "1 minute".
pub fn minutes(n: i64) -> String {
    if n == 1 {
        t(T::OneMinute).into()
    } else {
        tf(T::Minutes, &[("n", &n)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_language_is_negotiated_from_accept_language_in_the_visitors_order() {
        assert_eq!(Lang::from_accept_language("ja-JP,ja;q=0.9,en;q=0.8"), Some(Lang::Ja));
        assert_eq!(Lang::from_accept_language("fr-FR, en;q=0.5, ja;q=0.4"), Some(Lang::En));
        assert_eq!(Lang::from_accept_language("en-GB;q=0.3, ja;q=0.9"), Some(Lang::Ja));
        assert_eq!(Lang::from_accept_language("de, fr"), None);
        assert_eq!(Lang::from_accept_language(""), None);
        assert_eq!(Lang::parse("JA"), Some(Lang::Ja));
        assert_eq!(Lang::parse("<script>"), None);
    }

    #[test]
    fn counts_are_grouped_by_three() {
        assert_eq!(num(0), "0");
        assert_eq!(num(999), "999");
        assert_eq!(num(1000), "1,000");
        assert_eq!(num(1234567), "1,234,567");
        assert_eq!(num(-12345), "-12,345");
        assert_eq!(num(i64::MIN), "-9,223,372,036,854,775,808");
    }

    #[test]
    fn placeholders_are_filled() {
        assert_eq!(fill("{n} / {max} characters", &[("n", &3), ("max", &5000)]), "3 / 5000 characters");
        assert_eq!(T::ContactCount.get(Lang::Ja), "{n} / {max} 文字");
        // A value is never filled again, whatever it contains.
        assert_eq!(fill("{who} named it {name}", &[("who", &"{name}"), ("name", &"Laptop")]), "{name} named it Laptop");
        assert_eq!(fill("{unknown} and {", &[("n", &1)]), "{unknown} and {");
    }
}
