//! Spam defence without a third party (server side): the proof of work (the ALTCHA scheme, through
//! `altcha-lib-rs`: an HMAC-signed challenge, a SHA-256 puzzle, an expiry, single use), the page's
//! signed time stamp (minimum fill time) and the message's own signals. Each signal is named and
//! weighted in [`common::spam`]; together they decide whether a submission goes to the inbox or
//! to quarantine. Nothing here refuses a submission: the visitor sees the same thank-you.
//!
//! A challenge's salt carries its difficulty and expiry (`<random>.<difficulty>?expires=…&`); the
//! salt is part of what the signature covers, so neither can be changed by the client. Single use is enforced by
//! the submission statement itself ([`crate::db::submit_batch`]: `spam_proofs_spent`), so a
//! replay is caught on any instance.

use std::time::Duration;

use base64::Engine;
use common::spam::Signal;
use kernel::state::AppState;
use time::OffsetDateTime;

use crate::PowChallenge;

/// The spam defence's settings (part of [`crate::ContactSettings`]).
#[derive(Debug, Clone, Copy)]
pub struct SpamSettings {
    /// The puzzle's search space (ALTCHA's `maxnumber`): a client tries half of it on average.
    pub difficulty: u64,
    /// A submission sent sooner than this after the page was served is [`Signal::TooFast`].
    pub min_fill: Duration,
    /// How long a challenge can be solved and used.
    pub challenge_ttl: Duration,
}

impl Default for SpamSettings {
    fn default() -> Self {
        SpamSettings { difficulty: DEFAULT_DIFFICULTY, min_fill: Duration::from_secs(3), challenge_ttl: Duration::from_secs(3600) }
    }
}

/// The default difficulty: a median solve of about a third of a second in headless Chromium on a
/// 2-core machine (`make bench`), while the visitor types; a bot pays it for every submission.
pub const DEFAULT_DIFFICULTY: u64 = 500_000;

/// A proof that verified: the challenge it solved (its single-use key) and until when it counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proof {
    pub challenge: String,
    pub expires_at: OffsetDateTime,
}

/// The HMAC key of challenges: derived from the installation's shared secret, so every instance
/// verifies what any other issued.
fn hmac_key(state: &AppState) -> String {
    state.keyring.mac(kernel::keyring::Purpose::Altcha, "challenge-hmac-key")
}

/// A new challenge for the contact form.
pub fn challenge(state: &AppState, settings: &SpamSettings, now: OffsetDateTime) -> Result<PowChallenge, String> {
    challenge_with_key(&hmac_key(state), settings, now)
}

fn challenge_with_key(key: &str, settings: &SpamSettings, now: OffsetDateTime) -> Result<PowChallenge, String> {
    let expires = now.unix_timestamp() + settings.challenge_ttl.as_secs() as i64;
    // One parameter only: the library rebuilds the salt's parameters from a hash map when it
    // verifies, so two would come back in either order. The difficulty is in the salt itself.
    let params = [("expires".to_string(), expires.to_string())].into_iter().collect();
    let salt = format!("{}.{}", uuid::Uuid::new_v4().simple(), settings.difficulty);
    let c = altcha_lib_rs::create_challenge(altcha_lib_rs::ChallengeOptions {
        algorithm: Some(altcha_lib_rs::algorithm::AltchaAlgorithm::Sha256),
        max_number: Some(settings.difficulty),
        hmac_key: key,
        salt: Some(salt),
        params: Some(params),
        ..Default::default()
    })
    .map_err(|e| e.to_string())?;
    Ok(PowChallenge { algorithm: "SHA-256".into(), challenge: c.challenge, maxnumber: c.maxnumber, salt: c.salt, signature: c.signature })
}

/// The parameters a salt carries (`salt?k=v&k=v&`); what is not a pair is ignored.
fn salt_param<'a>(salt: &'a str, name: &str) -> Option<&'a str> {
    let (_, query) = salt.split_once('?')?;
    query.split('&').filter_map(|p| p.split_once('=')).find(|(k, _)| *k == name).map(|(_, v)| v)
}

/// The difficulty a salt was issued at (`<random>.<difficulty>?expires=…`).
fn salt_difficulty(salt: &str) -> Option<u64> {
    let base = salt.split_once('?').map_or(salt, |(b, _)| b);
    base.rsplit_once('.')?.1.parse().ok()
}

/// Checks a submitted proof (ALTCHA's payload: base64 of the JSON `{algorithm, challenge, number,
/// salt, signature}`). Whether it was used before is the submission statement's to decide.
pub fn verify(state: &AppState, settings: &SpamSettings, payload: Option<&str>, now: OffsetDateTime) -> Result<Proof, Signal> {
    verify_with_key(&hmac_key(state), settings, payload, now)
}

fn verify_with_key(key: &str, settings: &SpamSettings, payload: Option<&str>, now: OffsetDateTime) -> Result<Proof, Signal> {
    let raw = payload.map(str::trim).filter(|p| !p.is_empty()).ok_or(Signal::ProofMissing)?;
    if raw.len() > 4096 {
        return Err(Signal::ProofInvalid);
    }
    let json = base64::engine::general_purpose::STANDARD.decode(raw).map_err(|_| Signal::ProofInvalid)?;
    let p: altcha_lib_rs::Payload = serde_json::from_slice(&json).map_err(|_| Signal::ProofInvalid)?;
    // Only the algorithm this server issues, at the difficulty it asked for.
    if !matches!(p.algorithm, altcha_lib_rs::algorithm::AltchaAlgorithm::Sha256) {
        return Err(Signal::ProofInvalid);
    }
    let difficulty = salt_difficulty(&p.salt).ok_or(Signal::ProofInvalid)?;
    if difficulty != settings.difficulty || p.number > difficulty {
        return Err(Signal::ProofInvalid);
    }
    let expires: i64 = salt_param(&p.salt, "expires").and_then(|e| e.parse().ok()).ok_or(Signal::ProofInvalid)?;
    // The signature and the puzzle (the library recomputes both from salt and number).
    altcha_lib_rs::verify_solution(&p, key, false).map_err(|_| Signal::ProofInvalid)?;
    let expires_at = OffsetDateTime::from_unix_timestamp(expires).map_err(|_| Signal::ProofInvalid)?;
    if expires_at <= now {
        return Err(Signal::ProofExpired);
    }
    Ok(Proof { challenge: p.challenge.to_ascii_lowercase(), expires_at })
}

/// The page's time stamp: when the form was served, signed so it cannot be made older.
pub fn stamp(state: &AppState, now: OffsetDateTime) -> String {
    let secs = now.unix_timestamp();
    format!("{secs}.{}", stamp_mac(state, secs))
}

fn stamp_mac(state: &AppState, secs: i64) -> String {
    state.keyring.mac(kernel::keyring::Purpose::ContactStamp, &secs.to_string())
}

/// The stamp's signal, if any: missing, forged or from the future ([`Signal::StampInvalid`]),
/// or sent sooner than a person fills the form in ([`Signal::TooFast`]).
pub fn check_stamp(state: &AppState, settings: &SpamSettings, raw: Option<&str>, now: OffsetDateTime) -> Option<Signal> {
    let Some((secs, mac)) = raw.and_then(|r| r.trim().split_once('.')) else { return Some(Signal::StampInvalid) };
    let Ok(secs) = secs.parse::<i64>() else { return Some(Signal::StampInvalid) };
    if !constant_time_eq(mac.as_bytes(), stamp_mac(state, secs).as_bytes()) || secs > now.unix_timestamp() + 60 {
        return Some(Signal::StampInvalid);
    }
    (now.unix_timestamp() - secs < settings.min_fill.as_secs() as i64).then_some(Signal::TooFast)
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// The message's own signals (see [`common::spam::Signal`] for each one's meaning and weight).
pub fn content_signals(message: &str) -> Vec<Signal> {
    let mut signals = Vec::new();
    if link_count(message) >= 3 {
        signals.push(Signal::Links);
    }
    if has_markup(message) {
        signals.push(Signal::Markup);
    }
    if script_mismatch(message) {
        signals.push(Signal::ScriptMismatch);
    }
    if mixed_script_word(message) {
        signals.push(Signal::MixedScript);
    }
    signals
}

/// Links: `http://`, `https://` and `www.` occurrences (case-insensitive).
fn link_count(message: &str) -> usize {
    let lower = message.to_lowercase();
    let www = lower.matches("www.").count() - lower.matches("://www.").count();
    lower.matches("http://").count() + lower.matches("https://").count() + www
}

/// An HTML tag (`<a`, `</b>`, `<script …`) or BBCode (`[url`, `[link`, `[img`).
fn has_markup(message: &str) -> bool {
    let lower = message.to_lowercase();
    if ["[url", "[/url]", "[link", "[img", "javascript:"].iter().any(|m| lower.contains(m)) {
        return true;
    }
    let bytes = lower.as_bytes();
    bytes.iter().enumerate().filter(|(_, &b)| b == b'<').any(|(i, _)| {
        let rest = &bytes[i + 1..];
        let rest = rest.strip_prefix(b"/").unwrap_or(rest);
        let letters = rest.iter().take_while(|b| b.is_ascii_alphabetic()).count();
        letters > 0 && rest.get(letters).is_some_and(|&b| b == b'>' || b.is_ascii_whitespace() || b == b'/')
    })
}

/// The scripts the site's languages are written in: Latin (English) and Japanese (kana, kanji,
/// full-width forms).
fn site_script(c: char) -> bool {
    matches!(c as u32,
        0x41..=0x5A | 0x61..=0x7A | 0xC0..=0x24F | 0x1E00..=0x1EFF
        | 0x3040..=0x30FF | 0x31F0..=0x31FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0xFF21..=0xFF5A | 0xFF66..=0xFF9F)
}

/// Mostly (more than half of at least 20 letters) in a script neither language uses.
fn script_mismatch(message: &str) -> bool {
    let (letters, ours) = message.chars().filter(|c| c.is_alphabetic()).fold((0usize, 0usize), |(n, o), c| (n + 1, o + usize::from(site_script(c))));
    letters >= 20 && ours * 2 < letters
}

/// A word with both Latin letters and Cyrillic or Greek ones (look-alike letters that dodge
/// word filters: "pаypal" with a Cyrillic "а").
fn mixed_script_word(message: &str) -> bool {
    let latin = |c: char| c.is_ascii_alphabetic();
    // Greek (U+0370–03FF) and Cyrillic (U+0400–04FF).
    let lookalike = |c: char| matches!(c as u32, 0x370..=0x4FF);
    message.split(|c: char| !c.is_alphanumeric()).any(|w| w.chars().any(latin) && w.chars().any(lookalike))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "test-key";

    fn settings() -> SpamSettings {
        SpamSettings { difficulty: 2_000, ..SpamSettings::default() }
    }

    fn now() -> OffsetDateTime {
        OffsetDateTime::now_utc()
    }

    /// Solves like the browser does and encodes the payload like ALTCHA's widget.
    fn solve(c: &PowChallenge) -> String {
        let n = altcha_lib_rs::solve_challenge(&c.challenge, &c.salt, None, Some(c.maxnumber), 0).expect("solvable");
        payload(c, n)
    }

    fn payload(c: &PowChallenge, number: u64) -> String {
        let json = serde_json::json!({"algorithm": c.algorithm, "challenge": c.challenge, "number": number, "salt": c.salt, "signature": c.signature});
        base64::engine::general_purpose::STANDARD.encode(json.to_string())
    }

    #[test]
    fn the_published_test_vector_verifies_with_the_library() {
        // altcha-lib-rs' own vector (ALTCHA v1 payload, key "super-secret").
        let data = r#"{"algorithm":"SHA-256","challenge":"aa9c8ec8057413dd8220e21e15ab54b095fb3c840601d44c39bece8d9df34529","number":971813,"salt":"3065d108b2314f5ecc7e1207","signature":"d6c436288f1979f298f6532cea31db9e84e6338f4f58a9e00cb4105abbd11397","took":9417}"#;
        let p: altcha_lib_rs::Payload = serde_json::from_str(data).unwrap();
        assert!(altcha_lib_rs::verify_solution(&p, "super-secret", true).is_ok());
        assert!(altcha_lib_rs::verify_solution(&p, "another-secret", true).is_err());
    }

    #[test]
    fn a_solved_challenge_verifies_and_names_its_challenge() {
        for _ in 0..20 {
            let c = challenge_with_key(KEY, &settings(), now()).unwrap();
            assert!(verify_with_key(KEY, &settings(), Some(&solve(&c)), now()).is_ok(), "every challenge verifies: {}", c.salt);
        }
        let c = challenge_with_key(KEY, &settings(), now()).unwrap();
        assert!(c.salt.contains(".2000?expires="), "{}", c.salt);
        let proof = verify_with_key(KEY, &settings(), Some(&solve(&c)), now()).expect("verifies");
        assert_eq!(proof.challenge, c.challenge);
    }

    #[test]
    fn missing_forged_wrong_difficulty_and_expired_proofs_are_signals() {
        let s = settings();
        assert_eq!(verify_with_key(KEY, &s, None, now()), Err(Signal::ProofMissing));
        assert_eq!(verify_with_key(KEY, &s, Some("  "), now()), Err(Signal::ProofMissing));
        assert_eq!(verify_with_key(KEY, &s, Some("not base64!"), now()), Err(Signal::ProofInvalid));
        assert_eq!(verify_with_key(KEY, &s, Some("e30="), now()), Err(Signal::ProofInvalid));
        // Signed with another key: forged.
        let forged = challenge_with_key("other", &s, now()).unwrap();
        assert_eq!(verify_with_key(KEY, &s, Some(&solve(&forged)), now()), Err(Signal::ProofInvalid));
        // A wrong number.
        let c = challenge_with_key(KEY, &s, now()).unwrap();
        let right = altcha_lib_rs::solve_challenge(&c.challenge, &c.salt, None, Some(c.maxnumber), 0).unwrap();
        assert_eq!(verify_with_key(KEY, &s, Some(&payload(&c, (right + 1) % 2000)), now()), Err(Signal::ProofInvalid));
        // Issued at an easier difficulty than this server asks for.
        let easy = challenge_with_key(KEY, &SpamSettings { difficulty: 10, ..s }, now()).unwrap();
        assert_eq!(verify_with_key(KEY, &s, Some(&solve(&easy)), now()), Err(Signal::ProofInvalid));
        // Expired.
        let old = challenge_with_key(KEY, &s, now() - time::Duration::hours(2)).unwrap();
        assert_eq!(verify_with_key(KEY, &s, Some(&solve(&old)), now()), Err(Signal::ProofExpired));
    }

    #[test]
    fn messages_with_links_markup_or_other_scripts_fire_their_signals() {
        assert_eq!(content_signals("Hello, could you call me back tomorrow? Thanks."), vec![]);
        assert_eq!(content_signals("See https://example.org and www.example.org"), vec![]);
        assert_eq!(content_signals("a http://a.example b https://b.example c www.c.example"), vec![Signal::Links]);
        assert_eq!(content_signals("https://www.a.example https://www.b.example"), vec![]);
        assert_eq!(content_signals("buy <a href=x>now</a>"), vec![Signal::Markup]);
        assert_eq!(content_signals("[url=http://x.example]cheap[/url]"), vec![Signal::Markup]);
        assert_eq!(content_signals("<script>alert(1)</script>"), vec![Signal::Markup]);
        assert_eq!(content_signals("if a < b and c > d"), vec![]);
        assert_eq!(content_signals("お問い合わせです。明日お電話いただけますか。よろしくお願いします。"), vec![]);
        assert_eq!(content_signals("Купите наши лучшие товары по самой низкой цене сегодня"), vec![Signal::ScriptMismatch]);
        assert_eq!(content_signals("Log in to your pаypal account"), vec![Signal::MixedScript]);
    }
}
