//! Data requests (issue 32): a person who wrote through the form asks what Ebb keeps about them
//! (access), for a copy of it, or for its erasure — GDPR articles 15, 17 and 20, one month to
//! answer. One guided flow with proof: an admin records the request (its deadline starts), *finds*
//! everything tied to the address in every kind of data that can hold one
//! (`kernel::personal::PersonalData`), downloads the *copy* (streamed JSON with a cover sheet, CSV
//! per kind), previews and runs the *erasure* (bounded batches on the lifecycle engine: claimed,
//! leased, resumable), and the request is done only when a new search finds nothing erasable.
//! Each step is an audit event carrying the request's id and a keyed hash of the address, never
//! the address; the request keeps the address until it has been closed for a retention period.

pub mod api;
cfg_if::cfg_if! {
    // What runs on the server only.
    if #[cfg(feature = "ssr")] {
        pub mod copy;
        pub mod db;
        pub mod erase;
        pub mod personal;
        pub mod retention;
        pub mod routes;
    }
}
pub mod texts;
pub mod ui;

use common::personal::Found;
use serde::{Deserialize, Serialize};
use time::{Date, OffsetDateTime};

use texts::RequestsT;

/// What the person asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestKind {
    /// What is kept about me? (article 15)
    Access,
    /// Give me a copy of it. (article 20)
    Copy,
    /// Erase it. (article 17)
    Erasure,
}

impl RequestKind {
    pub const ALL: [RequestKind; 3] = [RequestKind::Access, RequestKind::Copy, RequestKind::Erasure];

    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            RequestKind::Access => "access",
            RequestKind::Copy => "copy",
            RequestKind::Erasure => "erasure",
        }
    }

    pub fn parse(s: &str) -> Option<RequestKind> {
        RequestKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The label in the page's language.
    pub fn label(self) -> &'static str {
        common::i18n::t(match self {
            RequestKind::Access => RequestsT::KindAccess,
            RequestKind::Copy => RequestsT::KindCopy,
            RequestKind::Erasure => RequestsT::KindErasure,
        })
    }
}

/// Where a request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RequestStatus {
    Open,
    /// The erasure has started and goes on in bounded batches until nothing erasable is left.
    Erasing,
    /// Answered (closed).
    Done,
}

impl RequestStatus {
    pub fn parse(s: &str) -> RequestStatus {
        match s {
            "erasing" => RequestStatus::Erasing,
            "done" => RequestStatus::Done,
            _ => RequestStatus::Open,
        }
    }
}

/// One request, as the pages show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestView {
    pub id: i64,
    pub kind: RequestKind,
    /// `None` once the request has been closed for its retention period (prune removed it).
    pub email: Option<String>,
    pub received_on: Date,
    pub due_on: Date,
    pub note: String,
    pub status: RequestStatus,
    pub recorded_by: Option<String>,
    #[serde(with = "time::serde::rfc3339")]
    pub recorded_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339::option")]
    pub closed_at: Option<OffsetDateTime>,
    pub closed_by: Option<String>,
    /// Items erased so far, per kind.
    pub erased: Vec<(String, i64)>,
    /// Items left in place when the request was closed, per kind.
    pub kept: Vec<(String, i64)>,
    /// Days until the deadline on the database's today (negative: past it).
    pub days_left: i64,
}

impl RequestView {
    /// Answered on time (closed on or before its deadline).
    pub fn met_deadline(&self) -> Option<bool> {
        self.closed_at.map(|c| c.date() <= self.due_on)
    }
}

/// A request and what Ebb holds for its address now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Findings {
    pub request: RequestView,
    /// One entry per kind of data that can hold an address (empty once the address is forgotten).
    pub found: Vec<Found>,
    #[serde(with = "time::serde::rfc3339")]
    pub checked_at: OffsetDateTime,
}

impl Findings {
    pub fn erasable(&self) -> i64 {
        self.found.iter().map(Found::erasable).sum()
    }
    pub fn total(&self) -> i64 {
        self.found.iter().map(|f| f.count).sum()
    }
}

/// Open requests at a glance (the dashboard).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overview {
    pub open: i64,
    /// Open and due within [`RequestSettings::warn_days`].
    pub due_soon: i64,
    pub overdue: i64,
    pub next_due: Option<Date>,
}

/// The domain's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestSettings {
    /// Days to answer a request (GDPR: one month).
    pub deadline_days: i64,
    /// An open request this many days before its deadline (or past it) raises an alert.
    pub warn_days: i64,
    /// Days a closed request keeps the person's address (then prune removes it).
    pub keep_days: i64,
}

#[cfg(feature = "ssr")]
impl kernel::state::Part for RequestSettings {
    type Slot = kernel::state::slot::Requests;
}

impl Default for RequestSettings {
    fn default() -> Self {
        RequestSettings { deadline_days: 30, warn_days: 7, keep_days: 90 }
    }
}

/// Longest note, in characters.
pub const NOTE_MAX_CHARS: usize = 1000;

/// A new request as typed, untrusted.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewRequestForm {
    pub kind: String,
    pub email: String,
    /// `YYYY-MM-DD`; empty means today.
    pub received: String,
    pub note: String,
}

/// A request that passed [`parse_new`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRequest {
    pub kind: RequestKind,
    /// Normalised as inquiries are compared (trimmed, lower-case).
    pub email: String,
    pub received_on: Option<Date>,
    pub note: String,
}

/// Validates a new request; every field's problem at once (field → message).
pub fn parse_new(form: &NewRequestForm, today: Date) -> Result<NewRequest, std::collections::BTreeMap<String, String>> {
    use common::i18n::{t, tf};
    let mut errors = std::collections::BTreeMap::new();
    let kind = RequestKind::parse(form.kind.trim());
    if kind.is_none() {
        errors.insert("kind".into(), t(RequestsT::KindMissing).into());
    }
    let email = common::email::normalise(&form.email).map_err(|e| errors.insert("email".into(), e)).ok();
    let received_on = match form.received.trim() {
        "" => None,
        raw => match Date::parse(raw, time::macros::format_description!("[year]-[month]-[day]")) {
            Ok(d) if d > today => {
                errors.insert("received".into(), t(RequestsT::ReceivedFuture).into());
                None
            }
            Ok(d) if (today - d).whole_days() > 366 => {
                errors.insert("received".into(), t(RequestsT::ReceivedTooOld).into());
                None
            }
            Ok(d) => Some(d),
            Err(_) => {
                errors.insert("received".into(), t(RequestsT::ReceivedInvalid).into());
                None
            }
        },
    };
    let note = form.note.trim();
    let chars = note.chars().count();
    if chars > NOTE_MAX_CHARS {
        errors.insert("note".into(), tf(RequestsT::NoteTooLong, &[("max", &NOTE_MAX_CHARS), ("n", &chars)]));
    } else if note.chars().any(|c| c.is_control() && c != '\n' && c != '\r' && c != '\t') {
        errors.insert("note".into(), t(RequestsT::NoteControl).into());
    } else if common::email::contains_address(note) {
        // The note outlives the request's address (forgotten when it closes): no address in it.
        errors.insert("note".into(), t(RequestsT::NoteNoAddress).into());
    }
    match (kind, email) {
        (Some(kind), Some(email)) if errors.is_empty() => Ok(NewRequest { kind, email, received_on, note: note.to_owned() }),
        _ => Err(errors),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn today() -> Date {
        time::macros::date!(2026 - 12 - 03)
    }

    fn form(kind: &str, email: &str, received: &str, note: &str) -> NewRequestForm {
        NewRequestForm { kind: kind.into(), email: email.into(), received: received.into(), note: note.into() }
    }

    #[test]
    fn a_request_is_normalised_as_inquiries_are_compared() {
        let r = parse_new(&form("erasure", "  Ann@Example.ORG ", "2026-12-01", " by post "), today()).unwrap();
        assert_eq!(r.kind, RequestKind::Erasure);
        assert_eq!(r.email, "ann@example.org");
        assert_eq!(r.received_on, Some(time::macros::date!(2026 - 12 - 01)));
        assert_eq!(r.note, "by post");
    }

    #[test]
    fn every_bad_field_is_named() {
        let long = format!("{}@example.org", "a".repeat(10_000));
        let errors = parse_new(&form("delete-all", &long, "2027-01-01", &"x".repeat(1001)), today()).unwrap_err();
        assert_eq!(errors.keys().collect::<Vec<_>>(), ["email", "kind", "note", "received"]);
        assert!(errors["email"].contains("254"), "{}", errors["email"]);
        for bad in ["not an address", "", "a@b", "ann@example.org?bcc=x@y.z"] {
            assert!(parse_new(&form("access", bad, "", ""), today()).unwrap_err().contains_key("email"), "{bad:?}");
        }
        assert!(parse_new(&form("access", "a@b.org", "03/12/2026", ""), today()).unwrap_err().contains_key("received"));
        assert!(parse_new(&form("access", "a@b.org", "2025-11-01", ""), today()).unwrap_err().contains_key("received"));
    }
}
