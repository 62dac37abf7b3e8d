//! Email addresses as Ebb accepts them: the contact form stores what passes [`parse_email`], and
//! data requests look a person up by the same rules ([`normalise`]: as holds and searches
//! compare addresses).

use crate::i18n::{t, tf, T};

/// Longest email address accepted, in characters (RFC 5321's path limit).
pub const EMAIL_MAX_CHARS: usize = 254;

/// Characters refused in an email address (they mean something in a URL).
const URL_SIGNIFICANT: &str = "%?&=#/\\\"";

/// Validates an email address: a syntactically valid address of at most 254 characters.
pub fn parse_email(raw: &str) -> Result<String, String> {
    let email = raw.trim();
    if email.is_empty() {
        return Err(t(T::EmailMissing).into());
    }
    let chars = email.chars().count();
    if chars > EMAIL_MAX_CHARS {
        return Err(tf(T::EmailTooLong, &[("max", &EMAIL_MAX_CHARS), ("n", &chars)]));
    }
    // email_address follows RFC 5322; we additionally want a domain with a dot, as every
    // deliverable public address has one, and no display-name form ("Ann <a@b.c>").
    let valid = email_address::EmailAddress::parse_with_options(email, email_address::Options::default().with_required_tld().without_display_text()).is_ok();
    // RFC 5322 allows `%`, `?`, `&`, `=`, `#`, `/` and quotes in the local part, but no real
    // mailbox needs them and in a `mailto:` link they add headers (`?bcc=…`).
    if !valid || email.chars().any(|c| c.is_control() || c.is_whitespace() || URL_SIGNIFICANT.contains(c)) {
        return Err(t(T::EmailInvalid).into());
    }
    Ok(email.to_owned())
}

/// A valid address as Ebb compares it: [`parse_email`], then lower-case (holds, searches and
/// data requests compare `lower(email collate ucs_basic)`).
pub fn normalise(raw: &str) -> Result<String, String> {
    parse_email(raw).map(|e| e.to_ascii_lowercase())
}

/// Whether free text (a hold's reason, a note that reaches the audit log) holds something that
/// looks like an email address: such text would carry a person's address where erasure cannot
/// reach (the audit log never changes), so it is refused.
pub fn contains_address(text: &str) -> bool {
    text.split(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '(' | ')' | '<' | '>' | '[' | ']' | '"' | '\'' | '`' | '「' | '」' | '、' | '。'))
        .map(|w| w.trim_matches(|c: char| matches!(c, '.' | ':' | '!' | '?')))
        .any(|w| w.contains('@') && parse_email(w).is_ok())
}

#[cfg(test)]
mod address_tests {
    use super::contains_address;

    #[test]
    fn free_text_with_an_address_is_found() {
        for text in ["Court order for ann@example.org", "case (İNCİ@Example.ORG).", "依頼「ann@example.jp」の件", "mailto ann@example.org, thanks"] {
            assert!(contains_address(text), "{text}");
        }
        for text in ["Case 2026-17 (court order)", "@team please keep", "ask legal@ about it", "a@b"] {
            assert!(!contains_address(text), "{text}");
        }
    }
}
