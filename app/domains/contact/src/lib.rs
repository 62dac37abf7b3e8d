//! Inquiries from the public contact form: the shared parse function (browser and server use the
//! same one), the server function, the form and, server-side, the queries.

pub mod api;
cfg_if::cfg_if! {
    // What runs on the server only.
    if #[cfg(feature = "ssr")] {
        pub mod db;
        mod file_events;
        pub mod held;
        pub mod inquiries_personal;
        mod mailer;
        pub mod notify;
        pub mod personal;
        pub mod prune;
        pub mod routes;
        pub mod spam;
        pub mod writer;
    }
}
pub mod inbox;
#[cfg(feature = "hydrate")]
mod pow;
pub mod ui;

use serde::{Deserialize, Serialize};

use common::error::FieldErrors;
use common::i18n::{t, tf, T};

/// What the contact domain needs at run time (put into `AppState` by the composition root).
#[cfg(feature = "ssr")]
#[derive(Debug, Clone)]
pub struct ContactSettings {
    /// Submissions allowed per client per window.
    pub limit: kernel::ratelimit::Limit,
    /// The proof of work's difficulty and the minimum fill time.
    pub spam: spam::SpamSettings,
}

#[cfg(feature = "ssr")]
impl kernel::state::Part for ContactSettings {
    type Slot = kernel::state::slot::Contact;
}

/// A proof-of-work challenge as ALTCHA's widget receives it (`GET /api/contact/challenge`): find
/// the `number` ≤ `maxnumber` with SHA-256(`salt` ‖ `number`) = `challenge`, then send the
/// base64 of `{algorithm, challenge, number, salt, signature}` in the form's `altcha` field.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PowChallenge {
    pub algorithm: String,
    pub challenge: String,
    pub maxnumber: u64,
    pub salt: String,
    pub signature: String,
}

/// Longest name accepted, in characters.
pub const NAME_MAX_CHARS: usize = 100;
pub use common::email::EMAIL_MAX_CHARS;
/// Longest message accepted, in characters.
pub const MESSAGE_MAX_CHARS: usize = 5000;

/// What a visitor typed, untrusted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContactForm {
    pub name: String,
    pub email: String,
    pub message: String,
}

/// An inquiry that passed [`parse_inquiry`]; the only way to build one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidInquiry {
    name: String,
    email: String,
    message: String,
}

impl ValidInquiry {
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn email(&self) -> &str {
        &self.email
    }
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// Validates a name: 1–100 characters after trimming, no control characters.
pub fn parse_name(raw: &str) -> Result<String, String> {
    let name = raw.trim();
    let chars = name.chars().count();
    if chars == 0 {
        return Err(t(T::NameMissing).into());
    }
    if chars > NAME_MAX_CHARS {
        return Err(tf(T::NameTooLong, &[("max", &NAME_MAX_CHARS), ("n", &chars)]));
    }
    if name.chars().any(char::is_control) {
        return Err(t(T::NameControl).into());
    }
    Ok(name.to_owned())
}

pub use common::ui::mailto_href;

/// The address rules are shared with the data requests that look addresses up.
pub use common::email::parse_email;

/// Validates a message: 1–5,000 characters, not only whitespace. Line breaks are kept.
pub fn parse_message(raw: &str) -> Result<String, String> {
    if raw.trim().is_empty() {
        return Err(t(T::MessageMissing).into());
    }
    // Browsers submit line breaks as CRLF; store them as LF so lengths match what was typed.
    let message = raw.replace("\r\n", "\n");
    let chars = message.chars().count();
    if chars > MESSAGE_MAX_CHARS {
        return Err(tf(T::MessageTooLong, &[("max", &MESSAGE_MAX_CHARS), ("n", &chars)]));
    }
    if message.chars().any(|c| c.is_control() && c != '\n' && c != '\t') {
        return Err(t(T::MessageControl).into());
    }
    Ok(message)
}

/// The one parse function for the contact form, used in the browser (instant feedback) and on the
/// server (authoritative). Returns every field's error at once.
pub fn parse_inquiry(form: &ContactForm) -> Result<ValidInquiry, FieldErrors> {
    let mut errors = FieldErrors::new();
    let name = parse_name(&form.name).map_err(|e| errors.insert("name".into(), e)).ok();
    let email = parse_email(&form.email).map_err(|e| errors.insert("email".into(), e)).ok();
    let message = parse_message(&form.message).map_err(|e| errors.insert("message".into(), e)).ok();
    match (name, email, message) {
        (Some(name), Some(email), Some(message)) => Ok(ValidInquiry { name, email, message }),
        _ => Err(errors),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(name: &str, email: &str, message: &str) -> ContactForm {
        ContactForm { name: name.into(), email: email.into(), message: message.into() }
    }

    fn errors_of(f: &ContactForm) -> FieldErrors {
        parse_inquiry(f).expect_err("expected a validation error")
    }

    #[test]
    fn a_complete_form_parses_and_is_trimmed() {
        let v = parse_inquiry(&form("  Ann  ", " ann@example.org ", "Hello\r\nthere")).unwrap();
        assert_eq!(v.name(), "Ann");
        assert_eq!(v.email(), "ann@example.org");
        assert_eq!(v.message(), "Hello\nthere");
    }

    #[test]
    fn name_bounds_are_1_to_100_characters() {
        assert!(errors_of(&form("", "a@example.org", "hi")).contains_key("name"));
        assert!(errors_of(&form("   ", "a@example.org", "hi")).contains_key("name"));
        assert!(parse_inquiry(&form("A", "a@example.org", "hi")).is_ok());
        // 100 multi-byte characters are 100 characters, not 200 bytes.
        assert!(parse_inquiry(&form(&"é".repeat(100), "a@example.org", "hi")).is_ok());
        assert!(errors_of(&form(&"é".repeat(101), "a@example.org", "hi")).contains_key("name"));
    }

    #[test]
    fn name_with_a_line_break_is_refused() {
        assert!(errors_of(&form("Ann\r\nBcc: x", "a@example.org", "hi")).contains_key("name"));
    }

    #[test]
    fn email_must_be_valid_and_at_most_254_characters() {
        for bad in [
            "",
            "plain",
            "a@",
            "@example.org",
            "a b@example.org",
            "a@localhost",
            "Ann <a@example.org>",
            "victim%40corp.example?bcc=attacker%40evil.example&x=@example.org",
            "a?cc=b@example.org",
            "a#b@example.org",
            "a/b@example.org",
        ] {
            assert!(errors_of(&form("Ann", bad, "hi")).contains_key("email"), "{bad:?} should be refused");
        }
        // 64-character local part (the RFC maximum) + "@" + a 189-character domain = 254.
        let address = |last_label: usize| format!("{}@{}.{}.{}.org", "l".repeat(64), "a".repeat(63), "b".repeat(63), "c".repeat(last_label));
        let at_limit = address(57);
        assert_eq!(at_limit.chars().count(), 254);
        assert!(parse_email(&at_limit).is_ok(), "a 254-character address should parse");
        let too_long = address(58);
        assert_eq!(too_long.chars().count(), 255);
        assert!(errors_of(&form("Ann", &too_long, "hi"))["email"].contains("254"));
    }

    #[test]
    fn a_mailto_link_carries_the_address_and_nothing_else() {
        assert_eq!(mailto_href("ann.lee+x@example.org"), "mailto:ann.lee+x@example.org");
        // An address stored before the stricter check: every URL-significant byte is escaped.
        let href = mailto_href("victim%40corp.example?bcc=attacker%40evil.example&x=@example.org");
        assert_eq!(href, "mailto:victim%2540corp%2Eexample%3Fbcc%3Dattacker%2540evil%2Eexample%26x%3D@example.org".replace("%2E", "."));
        assert!(!href[7..].contains(['?', '&', '=', '#']), "{href}");
    }

    #[test]
    fn message_bounds_are_1_to_5000_characters() {
        assert!(errors_of(&form("Ann", "a@example.org", "")).contains_key("message"));
        assert!(errors_of(&form("Ann", "a@example.org", " \n\t ")).contains_key("message"));
        assert!(parse_inquiry(&form("Ann", "a@example.org", "x")).is_ok());
        assert!(parse_inquiry(&form("Ann", "a@example.org", &"🙂".repeat(5000))).is_ok());
        assert!(errors_of(&form("Ann", "a@example.org", &"🙂".repeat(5001))).contains_key("message"));
        // CRLF counts as one character, as the visitor typed one line break.
        let crlf = format!("{}\r\n", "x".repeat(4999));
        assert!(parse_inquiry(&form("Ann", "a@example.org", &crlf)).is_ok());
    }

    #[test]
    fn every_invalid_field_is_reported_at_once() {
        let errors = errors_of(&form("", "nope", ""));
        assert_eq!(errors.keys().collect::<Vec<_>>(), ["email", "message", "name"]);
    }

    #[test]
    fn html_in_a_message_is_accepted_as_text() {
        let v = parse_inquiry(&form("Ann", "a@example.org", "<script>alert(1)</script>")).unwrap();
        assert_eq!(v.message(), "<script>alert(1)</script>");
    }
}
