//! The contact form's spam signals: each named, weighted and documented (docs/admin.md, "Spam defence").
//! The contact domain computes them for a submission; the inbox shows them on suspected spam and
//! in the daily figures. A submission whose signals weigh [`THRESHOLD`] or more is kept as
//! *suspected spam* (quarantine), never refused: the visitor sees the same thank-you either way.

use serde::{Deserialize, Serialize};

use crate::i18n::{t, texts};

/// Total weight at which a submission is quarantined.
pub const THRESHOLD: u32 = 5;

/// The `settings` key of suspected spam's retention, in days.
pub const RETENTION_KEY: &str = "spam_retention_days";
/// Suspected spam is deleted this many days after it arrived unless set otherwise.
pub const DEFAULT_RETENTION_DAYS: u32 = 14;
/// The retention an admin may set.
pub const RETENTION_DAYS_RANGE: std::ops::RangeInclusive<u32> = 1..=365;

/// The stored retention, or the default when missing or out of range.
pub fn retention_days_or_default(stored: Option<&str>) -> u32 {
    stored.and_then(|s| s.trim().parse::<u32>().ok()).filter(|d| RETENTION_DAYS_RANGE.contains(d)).unwrap_or(DEFAULT_RETENTION_DAYS)
}

/// One day of the contact form's figures (UTC days).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DayFigures {
    /// `YYYY-MM-DD`.
    pub day: String,
    pub accepted: i64,
    pub quarantined: i64,
    /// Refused by the rate limit.
    pub refused: i64,
    /// Moved from quarantine to the inbox ("Not spam") that day.
    pub released: i64,
    /// The signals that fired, by name, most frequent first.
    pub signals: Vec<(String, i64)>,
}

/// One reason to suspect a submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Signal {
    /// The hidden field people never see was filled in.
    Honeypot,
    /// No proof of work came with the submission (no JavaScript, or a client that skipped it).
    ProofMissing,
    /// The proof does not verify: forged, malformed, another algorithm or difficulty.
    ProofInvalid,
    /// The proof's challenge had expired.
    ProofExpired,
    /// The proof was already used by an earlier submission (on any instance).
    ProofReplayed,
    /// Sent sooner after the page was served than a person can fill the form in.
    TooFast,
    /// The page's signed time stamp is missing or was not signed by this server.
    StampInvalid,
    /// Three links or more in the message.
    Links,
    /// HTML or BBCode markup (tags, `<script>`, `[url=…]`) in the message.
    Markup,
    /// The message is written mostly in a script neither of the site's languages uses.
    ScriptMismatch,
    /// A word mixes Latin letters with Cyrillic or Greek look-alikes.
    MixedScript,
}

impl Signal {
    pub const ALL: [Signal; 11] = [
        Signal::Honeypot,
        Signal::ProofMissing,
        Signal::ProofInvalid,
        Signal::ProofExpired,
        Signal::ProofReplayed,
        Signal::TooFast,
        Signal::StampInvalid,
        Signal::Links,
        Signal::Markup,
        Signal::ScriptMismatch,
        Signal::MixedScript,
    ];

    /// The name stored with suspected spam and used as the metric label.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Honeypot => "honeypot",
            Signal::ProofMissing => "proof_missing",
            Signal::ProofInvalid => "proof_invalid",
            Signal::ProofExpired => "proof_expired",
            Signal::ProofReplayed => "proof_replayed",
            Signal::TooFast => "too_fast",
            Signal::StampInvalid => "stamp_invalid",
            Signal::Links => "links",
            Signal::Markup => "markup",
            Signal::ScriptMismatch => "script_mismatch",
            Signal::MixedScript => "mixed_script",
        }
    }

    pub fn from_name(name: &str) -> Option<Signal> {
        Signal::ALL.into_iter().find(|s| s.name() == name)
    }

    /// How much the signal counts towards [`THRESHOLD`]. The proof, the honeypot and a message
    /// full of links decide alone; the others only together.
    pub fn weight(self) -> u32 {
        match self {
            Signal::Honeypot | Signal::ProofMissing | Signal::ProofInvalid | Signal::ProofExpired | Signal::ProofReplayed => 10,
            Signal::Links => 5,
            Signal::MixedScript | Signal::StampInvalid => 3,
            // Each alone is a person as often as a bot: a fast fill (autofill, a test suite), a
            // pasted snippet of HTML, a message in another script. Two of them are still not
            // enough; with a forged stamp or look-alike letters they are.
            Signal::TooFast | Signal::Markup | Signal::ScriptMismatch => 2,
        }
    }

    /// What the signal means, for the admin.
    pub fn label(self) -> &'static str {
        t(match self {
            Signal::Honeypot => SpamT::Honeypot,
            Signal::ProofMissing => SpamT::ProofMissing,
            Signal::ProofInvalid => SpamT::ProofInvalid,
            Signal::ProofExpired => SpamT::ProofExpired,
            Signal::ProofReplayed => SpamT::ProofReplayed,
            Signal::TooFast => SpamT::TooFast,
            Signal::StampInvalid => SpamT::StampInvalid,
            Signal::Links => SpamT::Links,
            Signal::Markup => SpamT::Markup,
            Signal::ScriptMismatch => SpamT::ScriptMismatch,
            Signal::MixedScript => SpamT::MixedScript,
        })
    }
}

/// The total weight of `signals`.
pub fn score(signals: &[Signal]) -> u32 {
    signals.iter().map(|s| s.weight()).sum()
}

/// Whether `signals` put a submission in quarantine.
pub fn is_suspect(signals: &[Signal]) -> bool {
    score(signals) >= THRESHOLD
}

/// A label for a stored signal name (an unknown one, from a newer version, as it is).
pub fn label_of(name: &str) -> String {
    Signal::from_name(name).map(|s| s.label().to_string()).unwrap_or_else(|| name.to_string())
}

texts! {
    pub enum SpamT {
    Honeypot { en: "Filled in the hidden field", ja: "隠しフィールドが入力された" }
    ProofMissing { en: "No proof of work (no JavaScript)", ja: "プルーフ・オブ・ワークなし（JavaScript なし）" }
    ProofInvalid { en: "Proof of work does not verify", ja: "プルーフ・オブ・ワークが検証できない" }
    ProofExpired { en: "Proof of work expired", ja: "プルーフ・オブ・ワークの期限切れ" }
    ProofReplayed { en: "Proof of work used before", ja: "使用済みのプルーフ・オブ・ワーク" }
    TooFast { en: "Sent too fast after opening the page", ja: "ページを開いてから送信までが速すぎる" }
    StampInvalid { en: "Page time stamp missing or forged", ja: "ページのタイムスタンプがない、または偽造" }
    Links { en: "Three links or more", ja: "リンクが 3 件以上" }
    Markup { en: "HTML or BBCode markup", ja: "HTML または BBCode のマークアップ" }
    ScriptMismatch { en: "Written in a script the site does not use", ja: "サイトで使わない文字体系で書かれている" }
    MixedScript { en: "Words mixing look-alike letters", ja: "紛らわしい文字が混在する単語" }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut names: Vec<&str> = Signal::ALL.iter().map(|s| s.name()).collect();
        for s in Signal::ALL {
            assert_eq!(Signal::from_name(s.name()), Some(s));
        }
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Signal::ALL.len());
    }

    #[test]
    fn the_proof_the_honeypot_and_links_decide_alone_the_others_only_together() {
        for s in [Signal::Honeypot, Signal::ProofMissing, Signal::ProofInvalid, Signal::ProofExpired, Signal::ProofReplayed, Signal::Links] {
            assert!(is_suspect(&[s]), "{s:?}");
        }
        assert!(is_suspect(&[Signal::TooFast, Signal::StampInvalid]));
        assert!(is_suspect(&[Signal::Markup, Signal::MixedScript]));
        // A person pasting HTML quickly (or a test suite doing so) stays in the inbox.
        assert!(!is_suspect(&[Signal::TooFast, Signal::Markup]));
        for s in [Signal::Markup, Signal::MixedScript, Signal::TooFast, Signal::StampInvalid, Signal::ScriptMismatch] {
            assert!(!is_suspect(&[s]), "{s:?}");
        }
        assert!(is_suspect(&[Signal::Markup, Signal::TooFast, Signal::ScriptMismatch]));
        assert!(!is_suspect(&[]));
    }
}
