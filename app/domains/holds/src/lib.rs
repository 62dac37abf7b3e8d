//! Legal holds (issue 16): an admin stops the retention clock for chosen items — one inquiry,
//! every inquiry from one sender's address, or an active share — with a reason. Held inquiries
//! are skipped by prune (and cannot be deleted); a held share's link still works once and expires
//! as usual, but the share GC keeps its file until the hold is lifted. Lifting makes the item
//! eligible again at once. Placing and lifting are audit events.

pub mod api;
#[cfg(feature = "ssr")]
pub mod db;
#[cfg(feature = "ssr")]
pub mod personal;
pub(crate) mod texts;
pub mod ui;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;
use uuid::Uuid;

use common::i18n::{t, texts, tf};

/// A hold's reason: 10–256 characters, as the design's retrieval reasons.
pub const REASON_CHARS: std::ops::RangeInclusive<usize> = 10..=256;

/// Validates a reason as typed (browser and server): trimmed, 10–256 characters, one line of
/// text (no control characters). The message is in the page's language.
pub fn parse_reason(raw: &str) -> Result<String, String> {
    let reason = raw.trim();
    if !REASON_CHARS.contains(&reason.chars().count()) || reason.chars().any(char::is_control) {
        return Err(t(HoldTextT::ReasonMessage).to_string());
    }
    // The reason goes into the audit log, which never changes: no person's address in it.
    if common::email::contains_address(reason) {
        return Err(t(HoldTextT::ReasonNoAddress).to_string());
    }
    Ok(reason.to_string())
}

pub use common::holds::HoldTarget;

/// What an existing hold covers, for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum HeldItem {
    Inquiry { id: Uuid, from: Option<String> },
    Email { email: String },
    Share { id: i64, file_name: Option<String> },
}

impl HeldItem {
    /// The target in a sentence, in the page's language ("the inquiry from Ana", "every inquiry
    /// from a@b.example").
    pub fn describe(&self) -> String {
        match self {
            HeldItem::Inquiry { from: Some(name), .. } => tf(HoldTextT::InquiryFrom, &[("name", name)]),
            HeldItem::Inquiry { id, from: None } => tf(HoldTextT::InquiryDeleted, &[("id", id)]),
            HeldItem::Email { email } => tf(HoldTextT::EveryInquiryFrom, &[("email", email)]),
            HeldItem::Share { id, file_name: Some(f) } => tf(HoldTextT::ShareNamed, &[("id", id), ("file", f)]),
            HeldItem::Share { id, file_name: None } => tf(HoldTextT::Share, &[("id", id)]),
        }
    }
}

/// One hold, as the holds list shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HoldView {
    pub id: i64,
    pub item: HeldItem,
    pub reason: String,
    pub placed_by: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub placed_at: OffsetDateTime,
    /// Items the hold keeps right now (inquiries from the address; 1 for one item).
    pub covers: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_is_10_to_256_characters_of_one_line() {
        assert_eq!(parse_reason("  Case 2026-17 (court order)  "), Ok("Case 2026-17 (court order)".into()));
        assert_eq!(parse_reason(&"é".repeat(256)).map(|r| r.chars().count()), Ok(256));
        for bad in ["", "too short", &"x".repeat(257), "ten chars\nbut two lines", "tab\tinside the reason"] {
            assert_eq!(parse_reason(bad), Err(t(HoldTextT::ReasonMessage).to_string()), "{bad:?}");
        }
    }
}

texts! {
    pub(crate) enum HoldTextT {
    // A hold's reason (`parse_reason`): the form and the server say it
    ReasonNoAddress { en: "Leave the email address out of the reason: it is kept in the audit log, which never changes. Name the case or request instead.", ja: "理由にメールアドレスを含めないでください。理由は変更できない監査ログに残ります。代わりに案件や依頼を記載してください。" }
    ReasonMessage { en: "Give a reason of 10 to 256 characters (for example the case or request it is for).", ja: "理由を 10〜256 文字で入力してください（例: 対象となる案件や依頼）。" }

    // What a hold keeps (`HeldItem::describe`), inside the holds list's sentences
    InquiryFrom { en: "the inquiry from {name}", ja: "{name} さんからのお問い合わせ" }
    InquiryDeleted { en: "inquiry {id} (deleted)", ja: "お問い合わせ {id}（削除済み）" }
    EveryInquiryFrom { en: "every inquiry from {email}", ja: "{email} からのすべてのお問い合わせ" }
    ShareNamed { en: "share {id} ({file})", ja: "共有ファイル {id}（{file}）" }
    Share { en: "share {id}", ja: "共有ファイル {id}" }
}
}
