//! The prune job (seed 000): claimed at most once an hour, then the steps the domains declare,
//! each deleting its own expired rows in bounded, paced batches. A domain owns its tables and
//! their deletes (`contact::prune`, `auth::prune`, `shares::prune`…); this module is the loop they
//! run in — the batch statement ([`Doomed`]), the pacing ([`in_batches`]), the run's bounds — and
//! the kernel's own tables' steps (rate-limit windows, run records, resolved alerts, old
//! deletion-journal entries). The composition root lists the domains' steps once
//! (`app::jobs::registry`).

use std::time::Duration;

use serde::Serialize;
use sqlx::PgPool;
use time::OffsetDateTime;

use crate::jobs::{self, Budget, Job, Step, StepCtx};
use crate::retention::{table_size, Figures, KindOfData, ReadCtx, ReadError, Reading};
use common::retention::Promise;
use futures::future::BoxFuture;

/// The job's name (CLI argument, metric label, run records).
pub const JOB: &str = jobs::PRUNE;
/// The settings key holding the prune claim.
pub const CLAIM_KEY: &str = "last_cleanup_at";
/// At most one prune run per hour, across all instances.
pub const CLAIM_INTERVAL: Duration = Duration::from_secs(3600);

/// The kernel's own step names.
pub const STEP_RATE_LIMITS: &str = "rate_limit_counters";
pub const STEP_RUNS: &str = "maintenance_runs";
pub const STEP_ENDED: &str = "ended_records";

/// Resolved alerts are kept this many days after they ended (as are purged shares' rows).
pub const ENDED_KEEP_DAYS: i64 = 90;
/// Rate-limit windows are deleted this many days after they start (no limit's window is longer).
pub const RATE_LIMIT_KEEP_DAYS: i64 = 1;
/// Run records are kept this many days.
pub const RUN_KEEP_DAYS: i64 = 90;

/// What prune needs at run time (put into `AppState` by the composition root).
#[derive(Debug, Clone, Copy)]
pub struct PruneSettings {
    /// Rows deleted per statement (each batch is its own short transaction).
    pub batch_size: i64,
    /// Sessions signed in longer ago than this are ended, however active.
    pub session_absolute: Duration,
    /// Sessions unused this long have ended (tower-sessions' expiry; the promise states it).
    pub session_idle: Duration,
}

impl crate::state::Part for PruneSettings {
    type Slot = crate::state::slot::Prune;
}

/// What a step sees: the run's clock (the database's) and its bounds.
#[derive(Debug, Clone, Copy)]
pub struct PruneCtx {
    pub now: OffsetDateTime,
    pub batch_size: i64,
    pub max_batches: u32,
    /// Sessions signed in longer ago than this are ended, however active.
    pub session_absolute: Duration,
    /// The run's time budget: no batch starts after it (`None`: bounded by batches only).
    pub deadline: Option<std::time::Instant>,
}

/// What a step did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct StepReport {
    pub deleted: u64,
    /// Statements issued that deleted rows; each is its own short transaction.
    pub batches: u32,
    /// True when the step stopped at `max_batches` with rows left for the next run.
    pub more: bool,
}

impl From<StepReport> for jobs::StepReport {
    fn from(r: StepReport) -> Self {
        jobs::StepReport { counts: vec![("deleted", r.deleted), ("batches", r.batches as u64)], rows: r.deleted, more: r.more }
    }
}

/// The bounds of one step from the engine's context: the row budget becomes whole batches.
pub fn prune_ctx(ctx: &StepCtx) -> PruneCtx {
    let settings = *ctx.state.domain::<PruneSettings>();
    let batch_size = settings.batch_size.max(1);
    let max_batches = u32::try_from(ctx.rows.div_ceil(batch_size as u64)).unwrap_or(u32::MAX).max(1);
    PruneCtx { now: ctx.now, batch_size, max_batches, session_absolute: settings.session_absolute, deadline: Some(ctx.deadline()) }
}

/// A step of the prune job from a function deleting in bounded batches (see [`Doomed`]).
pub fn step<F, Fut>(name: &'static str, label: &'static str, f: F) -> Step
where
    F: Fn(PgPool, PruneCtx) -> Fut + Send + Sync + Copy + 'static,
    Fut: std::future::Future<Output = Result<StepReport, sqlx::Error>> + Send + 'static,
{
    Step::new(name, move |ctx: StepCtx| async move { Ok(f(ctx.state.pool.clone(), prune_ctx(&ctx)).await?.into()) }).labelled(label)
}

/// The prune job: the domains' steps (in the order given), then the kernel's own.
pub fn job(domain_steps: Vec<Step>) -> Job {
    let job = Job::new(
        JOB,
        "Prune",
        "Deletes inquiries older than the retention period, suspected spam older than its own retention, used proofs of work, ended rate-limit windows, old run records, abandoned passkey challenges, expired sessions and expired invites; after 90 days resolved alerts and the rows of purged shares, after 400 days deletion-journal entries.",
        CLAIM_KEY,
        CLAIM_INTERVAL,
    )
    .budget(Budget { rows_per_step: 200_000, time: Duration::from_secs(45) })
    .traffic_budget(Budget { rows_per_step: 200_000, time: Duration::from_secs(45) });
    domain_steps
        .into_iter()
        .fold(job, Job::step)
        .step(step(STEP_RATE_LIMITS, "ended rate-limit windows", |pool, ctx| async move { delete_old_rate_limit_counters(&pool, ctx).await }))
        .step(step(STEP_RUNS, "old run records", |pool, ctx| async move { delete_old_maintenance_runs(&pool, ctx).await }))
        .step(
            Step::new(STEP_ENDED, |ctx: StepCtx| async move { delete_ended_records(&ctx).await }).labelled("resolved alerts and old deletion-journal entries"),
        )
}

/// Deletes resolved alerts after [`ENDED_KEEP_DAYS`], and deletion-journal entries after
/// [`crate::storage::journal::KEEP_DAYS`].
pub async fn delete_ended_records(ctx: &StepCtx) -> Result<jobs::StepReport, jobs::StepError> {
    let (pool, bounds) = (&ctx.state.pool, prune_ctx(ctx));
    let alerts = OLD_ALERTS.delete(pool, bounds, &[ctx.now - time::Duration::days(ENDED_KEEP_DAYS)]).await?;
    let journal_cutoff = ctx.now - time::Duration::days(crate::storage::journal::KEEP_DAYS);
    let limit = usize::try_from(bounds.batch_size).unwrap_or(1000).clamp(1, 1000);
    let (journal, journal_more) = crate::storage::journal::forget_before(&*ctx.state.blobs, journal_cutoff, limit).await?;
    Ok(jobs::StepReport {
        counts: vec![("alerts", alerts.deleted), ("journal_entries", journal)],
        rows: alerts.deleted + journal,
        more: alerts.more || journal_more,
    })
}

/// Runs `delete_batch` (which must delete at most `ctx.batch_size` rows and return the count)
/// until it deletes fewer than a full batch or `ctx.max_batches` is reached.
pub async fn in_batches<F, Fut>(ctx: PruneCtx, mut delete_batch: F) -> Result<StepReport, sqlx::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<u64, sqlx::Error>>,
{
    let mut report = StepReport::default();
    // Requests counted since the batch before began (its batch and its rest).
    let mut requests = crate::load::Window::start();
    loop {
        let out_of_time = ctx.deadline.is_some_and(|d| std::time::Instant::now() >= d);
        if report.batches >= ctx.max_batches || out_of_time {
            report.more = true;
            return Ok(report);
        }
        let started = std::time::Instant::now();
        let deleted = delete_batch().await?;
        if deleted > 0 {
            report.batches += 1;
            report.deleted += deleted;
            // Recorded as it goes: a run cut off or killed after this batch still counts it.
            jobs::tally("deleted", deleted);
            jobs::tally("batches", 1);
            // Crash tests stop here: a batch is committed, the rest not yet deleted.
            fail::fail_point!("prune-after-batch");
        }
        if (deleted as i64) < ctx.batch_size {
            return Ok(report);
        }
        let pause = started.elapsed() * rest_factor(requests.busy());
        requests = crate::load::Window::start();
        // The rest never runs past the run's budget: one slow batch (a lock wait, an I/O stall)
        // must not turn into a pause the engine cuts off.
        match ctx.deadline {
            Some(deadline) => tokio::time::sleep_until(tokio::time::Instant::from_std((std::time::Instant::now() + pause).min(deadline))).await,
            None => tokio::time::sleep(pause).await,
        }
    }
}

/// Paced: after each batch prune rests this many times as long as the batch took. With the
/// server quiet, three: a large backlog takes at most a quarter of one database backend. While
/// requests come at [`crate::load::BUSY_PER_SECOND`] or more, nineteen: a twentieth, so
/// visitors' requests keep their latency (`make bench`'s lifecycle figures); a run then deletes
/// fewer rows within its time budget and leaves the rest to the next (its record says `more`).
pub fn rest_factor(busy: bool) -> u32 {
    if busy {
        19
    } else {
        3
    }
}

/// What one step deletes: the rows of `table` that `select` picks (by `keys`), a batch per
/// statement. `select` reads the step's cutoffs (`$1`, `$2`…) and ends where the batch's limit
/// goes; `lock` follows the limit. One statement shape for every step.
pub struct Doomed {
    pub table: &'static str,
    pub keys: &'static [&'static str],
    pub select: &'static str,
    pub lock: &'static str,
}

impl Doomed {
    /// Deletes in batches (see [`in_batches`]) the rows picked with `cutoffs`.
    pub async fn delete(&self, pool: &PgPool, ctx: PruneCtx, cutoffs: &[OffsetDateTime]) -> Result<StepReport, sqlx::Error> {
        let Doomed { table, keys, select, lock } = self;
        let same: Vec<String> = keys.iter().map(|k| format!("t.{k} = doomed.{k}")).collect();
        let (limit, run, step) = (cutoffs.len() + 1, cutoffs.len() + 2, cutoffs.len() + 3);
        // The batch adds what it deleted to its run's counts in the same statement: a run killed
        // between two batches has a record that equals what it deleted.
        let sql = format!(
            "with doomed as ({select} limit ${limit}{lock}),
                  gone as (delete from {table} t using doomed where {} returning 1),
                  n as (select count(*) as n from gone),
                  counted as (insert into maintenance_run_counts (run_id, step, name, n)
                              select ${run}, ${step}, c.name, case c.name when 'deleted' then n.n else 1 end
                              from n, (values ('deleted'), ('batches')) c(name)
                              where n.n > 0 and ${run}::bigint is not null
                              on conflict (run_id, step, name) do update set n = maintenance_run_counts.n + excluded.n)
             select n from n",
            same.join(" and ")
        );
        let (run_id, step_name) = crate::jobs::current_step().unzip();
        in_batches(ctx, || async {
            let query = cutoffs.iter().fold(sqlx::query_scalar::<_, i64>(&sql), |q, cutoff| q.bind(cutoff));
            let deleted = query.bind(ctx.batch_size).bind(run_id).bind(step_name).fetch_one(pool).await?;
            Ok(u64::try_from(deleted).unwrap_or(0))
        })
        .await
    }
}

/// Rate-limit counters whose window ended (no limit has a window longer than a day); a
/// counter's key is its bucket and window.
const OLD_RATE_LIMIT_COUNTERS: Doomed = Doomed {
    table: "rate_limit_counters",
    keys: &["bucket", "window_start"],
    select: "select bucket, window_start from rate_limit_counters where window_start < $1",
    lock: "",
};
/// Run records older than [`RUN_KEEP_DAYS`].
const OLD_RUNS: Doomed = Doomed { table: "maintenance_runs", keys: &["id"], select: "select id from maintenance_runs where started_at < $1", lock: "" };
/// Alerts resolved before `$1`.
const OLD_ALERTS: Doomed = Doomed { table: "alerts", keys: &["id"], select: "select id from alerts where resolved_at < $1", lock: "" };

/// Deletes rate-limit counters whose window ended.
pub async fn delete_old_rate_limit_counters(pool: &PgPool, ctx: PruneCtx) -> Result<StepReport, sqlx::Error> {
    OLD_RATE_LIMIT_COUNTERS.delete(pool, ctx, &[ctx.now - time::Duration::days(RATE_LIMIT_KEEP_DAYS)]).await
}

/// Keeps 90 days of maintenance run records.
pub async fn delete_old_maintenance_runs(pool: &PgPool, ctx: PruneCtx) -> Result<StepReport, sqlx::Error> {
    OLD_RUNS.delete(pool, ctx, &[ctx.now - time::Duration::days(RUN_KEEP_DAYS)]).await
}

/// The cutoff ages of [`OLD_RATE_LIMIT_COUNTERS`] and [`OLD_RUNS`].
const RATE_LIMIT_KEEP: &[time::Duration] = &[time::Duration::days(RATE_LIMIT_KEEP_DAYS)];
const RUN_KEEP: &[time::Duration] = &[time::Duration::days(RUN_KEEP_DAYS)];

/// The kernel's kinds of data that prune removes, for the retention report.
pub fn kinds() -> Vec<Box<dyn KindOfData>> {
    vec![
        Box::new(Aged {
            kind: "rate_limit_windows",
            job: JOB,
            step: STEP_RATE_LIMITS,
            every: CLAIM_INTERVAL,
            doomed: &OLD_RATE_LIMIT_COUNTERS,
            oldest: "select min(window_start) from rate_limit_counters",
            held: None,
            promise: Promised::Fixed(Promise::RateLimitWindows, RATE_LIMIT_KEEP),
        }),
        Box::new(Aged {
            kind: "run_records",
            job: JOB,
            step: STEP_RUNS,
            every: CLAIM_INTERVAL,
            doomed: &OLD_RUNS,
            oldest: "select min(started_at) from maintenance_runs",
            held: None,
            promise: Promised::Fixed(Promise::RunRecords { days: RUN_KEEP_DAYS }, RUN_KEEP),
        }),
    ]
}

/// A kind of data whose items past their promise are exactly the rows its prune statement
/// ([`Doomed`]) would delete now: one description for the delete and the retention report.
/// The report counts the statement's `select` with the cutoffs of now (past the promise) and of
/// one interval of the job ago (overdue); the total is [`table_size`] of its table.
pub struct Aged {
    pub kind: &'static str,
    pub job: &'static str,
    pub step: &'static str,
    /// The job's interval when the registry has no job by that name (a test's own registry).
    pub every: Duration,
    pub doomed: &'static Doomed,
    /// A query for one value: when the oldest item was made (or the time it is known by).
    pub oldest: &'static str,
    /// A query for one value: the items kept past their promise on purpose (legal hold).
    pub held: Option<&'static str>,
    pub promise: Promised,
}

/// Reads a promise set at run time and its cutoffs' ages.
pub type ReadPromise = for<'a> fn(&'a ReadCtx<'a>) -> BoxFuture<'a, Result<(Promise, Vec<time::Duration>), ReadError>>;

/// The promise in force for an [`Aged`] kind and how old each of its statement's cutoffs is
/// (`$1`, `$2`… are now minus these).
pub enum Promised {
    /// Fixed in the code.
    Fixed(Promise, &'static [time::Duration]),
    /// Read at run time (a setting).
    Read(ReadPromise),
}

impl KindOfData for Aged {
    fn kind(&self) -> &'static str {
        self.kind
    }
    fn removed_by(&self) -> (&'static str, &'static str) {
        (self.job, self.step)
    }
    fn read<'a>(&'a self, ctx: &'a ReadCtx<'a>) -> BoxFuture<'a, Result<Reading, ReadError>> {
        Box::pin(async move {
            let (promise, ages) = match &self.promise {
                Promised::Fixed(promise, ages) => (*promise, ages.to_vec()),
                Promised::Read(read) => read(ctx).await?,
            };
            let every = ctx.every(self.job, self.every);
            // The overdue count reads the same statement with its cutoffs numbered after the
            // past count's: `$1` becomes `$(1 + n)`.
            let n = ages.len();
            let overdue = (1..=n).rev().fold(self.doomed.select.to_string(), |sql, k| sql.replace(&format!("${k}"), &format!("${}", k + n)));
            let sql = format!(
                "select ({}), (select count(*) from ({}) p), (select count(*) from ({overdue}) o), ({})",
                self.oldest,
                self.doomed.select,
                self.held.unwrap_or("select 0::bigint")
            );
            let cutoffs = ages.iter().map(|age| ctx.now - *age).chain(ages.iter().map(|age| ctx.now - *age - every));
            let query = cutoffs.fold(sqlx::query_as::<_, (Option<OffsetDateTime>, i64, i64, i64)>(&sql), |q, cutoff| q.bind(cutoff));
            let pool = &ctx.state.pool;
            let (oldest_at, past, overdue, held) = query.fetch_one(pool).await?;
            let (count, estimated) = table_size(pool, self.doomed.table).await?;
            Ok(Reading { promise, figures: Figures { count, oldest_at, past, overdue, held }, estimated })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// The batches a paced step gets through in 400 ms when each batch takes 4 ms, with or
    /// without requests starting all the while (ten a millisecond).
    async fn batches_in_400ms(requests: bool) -> u32 {
        let load = requests.then(|| {
            tokio::spawn(async {
                loop {
                    (0..10).for_each(|_| crate::load::request_started());
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            })
        });
        let ctx = PruneCtx {
            now: OffsetDateTime::now_utc(),
            batch_size: 10,
            max_batches: u32::MAX,
            session_absolute: Duration::from_secs(60),
            deadline: Some(Instant::now() + Duration::from_millis(400)),
        };
        let report = in_batches(ctx, || async {
            tokio::time::sleep(Duration::from_millis(4)).await;
            Ok(10)
        })
        .await
        .expect("no database here");
        if let Some(load) = load {
            load.abort();
        }
        assert!(report.more, "the budget, not the rows, ended the step");
        report.batches
    }

    #[tokio::test]
    async fn prune_rests_longer_while_requests_keep_coming() {
        let quiet = batches_in_400ms(false).await;
        let busy = batches_in_400ms(true).await;
        // Quiet: a batch and three times as long at rest, 16 ms, about 25 batches. Busy: a batch
        // and nineteen times as long, 80 ms, about 5.
        assert!(busy * 2 < quiet, "{quiet} batches with no requests, {busy} with requests coming");
        assert!(quiet >= 10, "quiet, the rest is three times the batch: {quiet} batches");
    }
}
