//! Passkey-only admin sign-in: invites, ceremonies, sessions, the account page.

pub mod api;
#[cfg(feature = "hydrate")]
mod browser;
#[cfg(feature = "ssr")]
pub mod db;
#[cfg(feature = "ssr")]
pub mod service;
pub mod ui;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

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
    /// Per-client limit of each authentication endpoint.
    pub limit: crate::ratelimit::Limit,
    /// Limit of each authentication endpoint over all clients together.
    pub total_limit: crate::ratelimit::Limit,
}

/// Longest admin or passkey name, in characters.
pub const LABEL_MAX_CHARS: usize = 100;

/// Validates a short label (an admin's or a passkey's name): 1–100 characters, no control
/// characters. `what` names the field in the message.
pub fn parse_label(raw: &str, what: &str) -> Result<String, String> {
    let label = raw.trim();
    let chars = label.chars().count();
    if chars == 0 {
        return Err(format!("Please enter {what}."));
    }
    if chars > LABEL_MAX_CHARS {
        return Err(format!("Please shorten {what} to {LABEL_MAX_CHARS} characters or fewer."));
    }
    if label.chars().any(char::is_control) {
        return Err(format!("{what} cannot contain line breaks or control characters.").replace("cannot", "can't"));
    }
    Ok(label.to_owned())
}

/// The signed-in admin, as the browser sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdminInfo {
    pub id: Uuid,
    pub name: String,
}

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

/// A short browser description from a User-Agent header ("Chrome on Linux").
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
        "Unknown browser"
    };
    let os = if ua.contains("Windows") {
        " on Windows"
    } else if ua.contains("Android") {
        " on Android"
    } else if ua.contains("iPhone") || ua.contains("iPad") {
        " on iOS"
    } else if ua.contains("Mac OS X") {
        " on macOS"
    } else if ua.contains("Linux") {
        " on Linux"
    } else {
        ""
    };
    format!("{browser}{os}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_1_to_100_characters_without_control_characters() {
        assert!(parse_label("", "a name").is_err());
        assert!(parse_label("  ", "a name").is_err());
        assert_eq!(parse_label(" Laptop ", "a name").unwrap(), "Laptop");
        assert!(parse_label(&"x".repeat(100), "a name").is_ok());
        assert!(parse_label(&"x".repeat(101), "a name").is_err());
        assert!(parse_label("a\nb", "a name").is_err());
    }

    #[test]
    fn browsers_are_described_briefly() {
        let chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0 Safari/537.36";
        assert_eq!(describe_browser(chrome), "Chrome on Linux");
        assert_eq!(describe_browser("curl/8"), "Unknown browser");
    }
}
