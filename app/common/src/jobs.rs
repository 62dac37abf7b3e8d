//! The lifecycle engine: one registry of claimed, best-effort, idempotent and bounded jobs
//! (design.md, "The one rule of lifecycle work"). The ticker, the CLI, the after-response layer,
//! the dashboard, the metrics and the run records all read the registry, so adding a job means
//! adding one entry (and its code) in the composition root.
//!
//! Here: what a run record looks like to people (both sides); the engine is `kernel::jobs`.

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// How a step ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Done,
    Failed,
    /// Not started: the run's time budget was spent (the next run goes on).
    Skipped,
    /// Not started: an earlier step's failed check stopped the run (its error says who must act).
    Stopped,
    /// Stopped at the run's time budget in the middle of its work: its counts so far are kept,
    /// the next run goes on.
    CutOff,
    /// Started in this run, not finished yet (the record is written as the run goes).
    Running,
}

impl StepStatus {
    /// The stable name stored in the run record.
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::Done => "done",
            StepStatus::Failed => "failed",
            StepStatus::Skipped => "skipped",
            StepStatus::Stopped => "stopped",
            StepStatus::CutOff => "cut_off",
            StepStatus::Running => "running",
        }
    }

    /// A stored name read back; a record without one says whether it failed by its error.
    pub fn parse(s: &str) -> Option<StepStatus> {
        [StepStatus::Done, StepStatus::Failed, StepStatus::Skipped, StepStatus::Stopped, StepStatus::CutOff, StepStatus::Running]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

impl std::fmt::Display for StepStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

/// How a recorded run ended (or that it has not yet): `maintenance_runs.outcome`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunState {
    Ok,
    /// At least one step failed; the others still ran.
    Failed,
    /// The budget ended the run before all its work was done; the next run goes on.
    CutOff,
    /// Going on now (the record is written as the run goes).
    Running,
    /// The process stopped during the run; the counts are what it had recorded.
    Interrupted,
}

impl RunState {
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Ok => "ok",
            RunState::Failed => "failed",
            RunState::CutOff => "cut_off",
            RunState::Running => "running",
            RunState::Interrupted => "interrupted",
        }
    }

    /// A stored name read back (the database's check constraint allows only these).
    pub fn parse(s: &str) -> Option<RunState> {
        [RunState::Ok, RunState::Failed, RunState::CutOff, RunState::Running, RunState::Interrupted].into_iter().find(|k| k.as_str() == s)
    }
}

/// What one step of a recorded run did, as the dashboard shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepView {
    pub step: String,
    /// What the step removes, for people.
    pub label: String,
    pub status: StepStatus,
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
    pub outcome: RunState,
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
pub fn outcome_label(outcome: RunState) -> &'static str {
    match outcome {
        RunState::Ok => "completed",
        RunState::Failed => "completed with errors",
        RunState::CutOff => "cut off by its budget (the rest runs next time)",
        RunState::Running => "running now",
        RunState::Interrupted => "interrupted (the process stopped; the counts are what it had recorded)",
    }
}
