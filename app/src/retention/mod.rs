//! Proof of retention (issue 16): for each kind of data Ebb keeps, the promise in force, how many
//! items exist, the oldest one's age, how many are past their promise now, how many are on legal
//! hold, and what the job that removes them last did — derived from the live data and the job
//! registry at the moment it is asked for, never from counters kept on the side. Admins read it
//! at `/admin/retention` (and download it, an audit event); operators run `ebb retention report`;
//! visitors read the promises at `/retention`.

pub mod api;
#[cfg(feature = "ssr")]
pub mod report;
#[cfg(feature = "ssr")]
pub mod routes;
pub mod ui;

use common::i18n::{fill, Lang, Text};
use common::retention::Promise;
use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

/// What the removing job's last run did (for one kind: its step).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastRun {
    #[serde(with = "time::serde::rfc3339")]
    pub started_at: OffsetDateTime,
    /// `ok`, `failed` or `cut_off`.
    pub outcome: String,
    pub trigger: String,
    /// The step's counts in words ("deleted 3, batches 1"), or what the run did (English).
    pub did: String,
    /// The same as data: the admin page writes it in its language.
    #[serde(default)]
    pub step: Option<Did>,
}

/// One kind of data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KindReport {
    /// Stable identifier (`inquiries`, `share_files`…): programs read it.
    pub kind: String,
    pub label: String,
    /// The promise, from the settings in force (English).
    pub promise: String,
    /// The same as data: the admin page writes it in its language.
    #[serde(default)]
    pub terms: Option<Promise>,
    pub count: i64,
    /// `count` is PostgreSQL's estimate of a large table (counting every row would make the
    /// hourly check cost the table's size); the other figures are exact.
    #[serde(default)]
    pub count_estimated: bool,
    /// When the oldest item was created (or its period began).
    #[serde(with = "time::serde::rfc3339::option")]
    pub oldest_at: Option<OffsetDateTime>,
    /// Items past their promise now (not counting held ones): 0, or the few a pending run takes.
    pub past_promise: i64,
    /// Of those, the items past their promise by more than one interval of their job: an alert.
    pub overdue: i64,
    /// Items kept past their promise on purpose (legal hold), counted apart.
    pub held: i64,
    /// The job that removes them (registry name), its title and claim interval.
    pub job: Option<String>,
    pub job_title: Option<String>,
    pub job_interval_secs: Option<u64>,
    pub last_run: Option<LastRun>,
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetentionReport {
    /// The database's clock when the figures were read.
    #[serde(with = "time::serde::rfc3339")]
    pub generated_at: OffsetDateTime,
    pub kinds: Vec<KindReport>,
    /// Legal holds in force.
    pub holds: i64,
}

impl RetentionReport {
    /// Items past their promise, over all kinds.
    pub fn past_promise(&self) -> i64 {
        self.kinds.iter().map(|k| k.past_promise).sum()
    }
    pub fn overdue(&self) -> i64 {
        self.kinds.iter().map(|k| k.overdue).sum()
    }
    pub fn held(&self) -> i64 {
        self.kinds.iter().map(|k| k.held).sum()
    }
}

/// What a job's step did, as the report says it (typed: each language writes it from the same data).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "did", rename_all = "snake_case")]
pub enum Did {
    /// The step ran: its counts (names with spaces, `requests deleted`), and how it ended.
    Ran { counts: Vec<(String, u64)>, failed: bool, more: bool },
    /// The run's budget ended before this step.
    Skipped,
    /// An earlier step's failed check stopped the run before this step (a person must act).
    Stopped,
    /// The run did not reach this step.
    NotReached,
}

impl Did {
    /// In `lang`: "deleted 3, batches 1", "done (failed)", "did not reach this step"…
    pub fn text(&self, lang: Lang) -> String {
        use ui::RetentionT as R;
        match self {
            Did::Skipped => R::DidSkipped.get(lang).into(),
            Did::Stopped => R::DidStopped.get(lang).into(),
            Did::NotReached => R::DidNotReached.get(lang).into(),
            Did::Ran { counts, failed, more } => {
                let counts = if counts.is_empty() {
                    R::DidDone.get(lang).to_string()
                } else {
                    let count = |name: &str, n: u64| {
                        let name = COUNT_NAMES.iter().find(|&&k| k.get(Lang::En) == name).map_or(name, |&k| k.get(lang));
                        fill(R::DidCount.get(lang), &[("name", &name), ("n", &n)])
                    };
                    counts.iter().map(|(name, n)| count(name.as_str(), *n)).collect::<Vec<_>>().join(R::ListSeparator.get(lang))
                };
                if *failed {
                    fill(R::DidFailed.get(lang), &[("counts", &counts)])
                } else if *more {
                    fill(R::DidMore.get(lang), &[("counts", &counts)])
                } else {
                    counts
                }
            }
        }
    }
}

/// The counts of the steps the report names (the others keep their English name).
const COUNT_NAMES: [ui::RetentionT; 10] = [
    ui::RetentionT::CountDeleted,
    ui::RetentionT::CountBatches,
    ui::RetentionT::CountPurged,
    ui::RetentionT::CountFailed,
    ui::RetentionT::CountDropped,
    ui::RetentionT::CountLockedLeft,
    ui::RetentionT::CountChecked,
    ui::RetentionT::CountReread,
    ui::RetentionT::CountRequestsDeleted,
    ui::RetentionT::CountStuckFailed,
];

/// What a visitor is told, from the live settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicPromises {
    pub retention_days: u32,
    /// Minutes a downloaded file stays (the delivery grace).
    pub delivery_grace_mins: u64,
    /// The longest a share link can live, in hours.
    pub max_share_hours: u32,
}

/// An age for people: "3 days", "5 hours", "12 minutes", "just now".
pub fn age_words(secs: i64) -> String {
    let plural = |n: i64, unit: &str| if n == 1 { format!("1 {unit}") } else { format!("{n} {unit}s") };
    match secs.max(0) {
        s if s >= 2 * 86_400 => plural(s / 86_400, "day"),
        s if s >= 2 * 3_600 => plural(s / 3_600, "hour"),
        s if s >= 60 => plural(s / 60, "minute"),
        _ => "under a minute".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_naturally() {
        assert_eq!(age_words(5), "under a minute");
        assert_eq!(age_words(60), "1 minute");
        assert_eq!(age_words(3 * 3600), "3 hours");
        assert_eq!(age_words(86_400), "24 hours");
        assert_eq!(age_words(200 * 86_400), "200 days");
    }
}
