//! What the retention report (a view in the composition root) reads from each domain: every kind
//! of data Ebb keeps is one implementation of [`KindOfData`] in the domain that owns it — its
//! promise in force, what is past it, its oldest item, what is on hold, and the job and step
//! that remove it. A new kind of data is one more implementation, listed by the composition root.

use std::time::Duration;

use common::retention::Promise;
use futures::future::BoxFuture;
use sqlx::PgPool;
use time::OffsetDateTime;

use crate::state::AppState;
use crate::storage::BlobError;

/// What was counted for one kind (one query, or the store's listing).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Figures {
    pub count: i64,
    pub oldest_at: Option<OffsetDateTime>,
    /// Items past their promise now (not counting held ones).
    pub past: i64,
    /// Of those, items past it by more than one interval of their job.
    pub overdue: i64,
    /// Items kept past their promise on purpose (legal hold).
    pub held: i64,
}

/// One kind's reading: the promise in force and the figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    pub promise: Promise,
    pub figures: Figures,
    /// The count is the planner's estimate (a large table is not counted row by row).
    pub estimated: bool,
}

/// Why a kind could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    #[error("storage: {0}")]
    Storage(#[from] BlobError),
}

impl From<ReadError> for crate::jobs::StepError {
    fn from(e: ReadError) -> Self {
        crate::jobs::StepError::new(e.to_string())
    }
}

/// What every kind reads with: the state and one database clock reading for all.
pub struct ReadCtx<'a> {
    pub state: &'a AppState,
    pub now: OffsetDateTime,
}

impl ReadCtx<'_> {
    /// The claim interval of the job `name` in the registry (`default` when it is not there,
    /// as in a test's own registry).
    pub fn every(&self, name: &str, default: Duration) -> time::Duration {
        let every = self.state.jobs().get(name).map_or(default, |j| j.interval);
        time::Duration::seconds(i64::try_from(every.as_secs()).unwrap_or(i64::MAX))
    }
}

/// One kind of data Ebb keeps, as the domain that owns it reports it.
pub trait KindOfData: Send + Sync {
    /// The stable identifier (`inquiries`, `share_files`…): programs read it, and
    /// `common::retention::kind_label` names it for people.
    fn kind(&self) -> &'static str;
    /// The job and its step that remove these items.
    fn removed_by(&self) -> (&'static str, &'static str);
    /// The promise in force and the figures, now.
    fn read<'a>(&'a self, ctx: &'a ReadCtx<'a>) -> BoxFuture<'a, Result<Reading, ReadError>>;
}

/// Tables up to this many rows (by the planner's estimate) are counted exactly; larger ones are
/// given the estimate, so the hourly check costs what is past the promise, not the table's size.
const EXACT_COUNT_MAX: f32 = 100_000.0;

/// Rows in `table` (a fixed name of ours, or a partitioned table: the sum of its partitions),
/// and whether that is the catalogue's estimate (a large, analysed table) rather than a count.
pub async fn table_size(pool: &PgPool, table: &'static str) -> Result<(i64, bool), sqlx::Error> {
    let estimate: Option<f32> = sqlx::query_scalar!(
        r#"select case when bool_or(c.reltuples < 0) then null else sum(c.reltuples)::real end
           from pg_class c
           where c.oid = $1::text::regclass and c.relkind = 'r'
              or c.oid in (select inhrelid from pg_inherits where inhparent = $1::text::regclass)"#,
        table
    )
    .fetch_one(pool)
    .await?;
    match estimate {
        Some(n) if n > EXACT_COUNT_MAX => Ok((n as i64, true)),
        _ => {
            let n: i64 = sqlx::query_scalar(&format!("select count(*) from {table}")).fetch_one(pool).await?;
            Ok((n, false))
        }
    }
}

/// How a kind reads its figures (an `async` block boxed: `Box::pin(async move { … })`).
pub type ReadFn = for<'a> fn(&'a ReadCtx<'a>) -> BoxFuture<'a, Result<Reading, ReadError>>;

/// A [`KindOfData`] made of its names and one reading function: what most domains need.
pub struct Kind {
    pub kind: &'static str,
    pub job: &'static str,
    pub step: &'static str,
    pub read: ReadFn,
}

impl KindOfData for Kind {
    fn kind(&self) -> &'static str {
        self.kind
    }
    fn removed_by(&self) -> (&'static str, &'static str) {
        (self.job, self.step)
    }
    fn read<'a>(&'a self, ctx: &'a ReadCtx<'a>) -> BoxFuture<'a, Result<Reading, ReadError>> {
        (self.read)(ctx)
    }
}

/// The retention setting's dry run: how many items a prune at `now` with `days` of retention
/// would delete. The settings page (maintenance) asks it; the domain owning the items (contact,
/// for inquiries) answers, put into the state by the composition root.
#[derive(Clone, Copy)]
pub struct DryRun(pub for<'a> fn(&'a PgPool, OffsetDateTime, u32) -> BoxFuture<'a, Result<i64, sqlx::Error>>);

impl crate::state::Part for DryRun {
    type Slot = crate::state::slot::PruneDryRun;
}
