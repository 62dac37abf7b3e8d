//! A person's data, as a data request (the requests domain) sees it across every domain: what was
//! found for one email address, by kind of data. The kernel's `personal::PersonalData` is what a
//! domain implements to be searched; these are the figures both sides show.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use crate::i18n::{texts, Lang, Text};

/// What one kind of data holds for an address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Found {
    /// Stable identifier (`inquiries`, `legal_holds`, `notify_digests`, `data_requests`).
    pub kind: String,
    /// Items tied to the address.
    pub count: i64,
    /// Of those, items an erasure leaves in place (on legal hold, or kept as a record), with why.
    pub kept: i64,
    /// Why the kept items stay (one line per reason, e.g. each hold's reason).
    pub kept_why: Vec<String>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub oldest: Option<OffsetDateTime>,
    #[serde(with = "time::serde::rfc3339::option")]
    pub newest: Option<OffsetDateTime>,
}

impl Found {
    /// Items an erasure removes.
    pub fn erasable(&self) -> i64 {
        (self.count - self.kept).max(0)
    }
}

/// A kind's label by its stable id, in `lang` (an unknown kind: its id; `server`'s tests check
/// every registered kind has a label).
pub fn kind_label(kind: &str, lang: Lang) -> String {
    use PersonalT as P;
    let label = match kind {
        "inquiries" => P::KindInquiries,
        "legal_holds" => P::KindHolds,
        "notify_digests" => P::KindDigests,
        "data_requests" => P::KindRequests,
        "suspected_spam" => P::KindSpam,
        other => return other.to_string(),
    };
    label.get(lang).to_string()
}

texts! {
    pub enum PersonalT {
    KindInquiries { en: "Inquiries", ja: "お問い合わせ" }
    KindHolds { en: "Legal holds", ja: "法的保全" }
    KindDigests { en: "Notification emails sent", ja: "送信済みの通知メール" }
    KindRequests { en: "Other data requests", ja: "他のデータ請求" }
    KindSpam { en: "Messages held as suspected spam", ja: "スパムの疑いで保留中のメッセージ" }
    }
}
