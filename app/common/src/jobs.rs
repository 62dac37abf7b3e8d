//! The lifecycle engine: one registry of claimed, best-effort, idempotent and bounded jobs
//! (design.md, "The one rule of lifecycle work"). The ticker, the CLI, the after-response layer,
//! the dashboard, the metrics and the run records all read the registry, so adding a job means
//! adding one entry (and its code) in the composition root.
//!
//! Here: what a run record looks like to people (both sides); the engine is `kernel::jobs`.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// What one step of a recorded run did, as the dashboard shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepView {
    pub step: String,
    /// What the step removes, for people.
    pub label: String,
    /// `done`, `failed`, `skipped` (the run's budget ended before it), `stopped` (an earlier
    /// check stopped the run), `cut_off` (stopped at the budget, counts kept) or `running`.
    pub status: String,
    /// Named counts (`deleted`, `purged`, `orphans_deleted`…), in the order the step reported them.
    pub counts: Vec<(String, u64)>,
    /// The step stopped at its bound with work left for the next run.
    pub more: bool,
}

/// One recorded run of a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunView {
    #[serde(with = "time::serde::rfc3339")]
    pub started_at: OffsetDateTime,
    #[serde(with = "time::serde::rfc3339")]
    pub finished_at: OffsetDateTime,
    pub trigger: String,
    /// `ok`, `failed`, `cut_off`, `running` or `interrupted`.
    pub outcome: String,
    pub steps: Vec<StepView>,
}

/// A job at a glance: what it is, its last run, and when the next may start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobView {
    pub name: String,
    pub title: String,
    pub description: String,
    pub interval_secs: u64,
    pub last_run: Option<RunView>,
    /// When the claim allows the next run; `None` when it may start now.
    #[serde(with = "time::serde::rfc3339::option")]
    pub next_possible_at: Option<OffsetDateTime>,
}

/// The answer to "Run now".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunNowView {
    /// Whether this request ran the job (false: its claim or lease was held).
    pub ran: bool,
    /// The run was started and was still going when the answer was sent (its progress shows
    /// on the dashboard as it goes).
    pub started: bool,
    pub job: JobView,
}

/// How a trigger is described to a person (shared by the dashboard and the CLI).
pub fn trigger_label(trigger: &str) -> &'static str {
    match trigger {
        "contact" => "after a contact form submission",
        "signin" => "after a sign-in attempt",
        "admin_inbox" => "when an admin opened the inbox",
        "shares" => "after a share page, download or the shares list",
        "traffic" => "after a request (due check)",
        "admin" => "by an admin (Run now)",
        "ticker" => "by the periodic timer",
        "cli" => "from the command line",
        _ => "by another trigger",
    }
}

/// How an outcome is described to a person.
pub fn outcome_label(outcome: &str) -> &'static str {
    match outcome {
        "ok" => "completed",
        "failed" => "completed with errors",
        "cut_off" => "cut off by its budget (the rest runs next time)",
        "running" => "running now",
        "interrupted" => "interrupted (the process stopped; the counts are what it had recorded)",
        _ => "unknown",
    }
}
