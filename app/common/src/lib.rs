//! What both sides of every page share — the server rendering it and the browser hydrating it:
//! errors on the wire, the two languages and their machinery, small components, the visitor's
//! preferences, and the vocabulary every domain speaks (jobs' run records, alerts, audit kinds,
//! live-update topics, who is signed in). No database, no state: that is the kernel's.
#![recursion_limit = "256"]

pub mod admin;
pub mod alerts;
pub mod audit_kind;
pub mod email;
pub mod error;
pub mod holds;
pub mod i18n;
pub mod id;
pub mod jobs;
pub mod live;
pub mod personal;
pub mod prefs;
#[cfg(feature = "ssr")]
pub mod request;
pub mod retention;
pub mod spam;
pub mod time;
pub mod ui;
