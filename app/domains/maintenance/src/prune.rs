//! The prune job (seed 000): claimed at most once an hour, then a list of steps, each deleting
//! expired rows in bounded batches. Later features add their steps to [`job`].

use std::time::Duration;

use serde::Serialize;
use sqlx::PgPool;
use time::OffsetDateTime;

use super::retention_days_or_default;
use kernel::jobs::{self, Budget, Job, Step, StepCtx};

/// The job's name (CLI argument, metric label, run records).
pub const JOB: &str = kernel::jobs::PRUNE;
/// The settings key holding the prune claim.
pub const CLAIM_KEY: &str = "last_cleanup_at";
/// At most one prune run per hour, across all instances.
pub const CLAIM_INTERVAL: Duration = Duration::from_secs(3600);

/// Step names, declared once.
pub const STEP_INQUIRIES: &str = "inquiries";
pub const STEP_RATE_LIMITS: &str = "rate_limit_counters";
pub const STEP_RUNS: &str = "maintenance_runs";
pub const STEP_CHALLENGES: &str = "passkey_challenges";
pub const STEP_SESSIONS: &str = "sessions";
pub const STEP_INVITES: &str = "admin_invites";
pub const STEP_SPAM: &str = "suspected_spam";
pub const STEP_SPENT_PROOFS: &str = "spam_proofs_spent";
pub const STEP_ENDED: &str = "ended_records";

/// Resolved alerts and the rows of purged shares (their files long gone, their names forgotten)
/// are kept this many days after they ended.
pub const ENDED_KEEP_DAYS: i64 = 90;

/// The contact form's daily figures are kept this many days.
pub const FIGURES_KEEP_DAYS: i64 = 400;

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
fn prune_ctx(ctx: &StepCtx) -> PruneCtx {
    let settings = *ctx.state.domain::<PruneSettings>();
    let batch_size = settings.batch_size.max(1);
    let max_batches = u32::try_from(ctx.rows.div_ceil(batch_size as u64)).unwrap_or(u32::MAX).max(1);
    PruneCtx { now: ctx.now, batch_size, max_batches, session_absolute: settings.session_absolute, deadline: Some(ctx.deadline()) }
}

fn step<F, Fut>(name: &'static str, label: &'static str, f: F) -> Step
where
    F: Fn(PgPool, PruneCtx) -> Fut + Send + Sync + Copy + 'static,
    Fut: std::future::Future<Output = Result<StepReport, sqlx::Error>> + Send + 'static,
{
    Step::new(name, move |ctx: StepCtx| async move { Ok(f(ctx.state.pool.clone(), prune_ctx(&ctx)).await?.into()) }).labelled(label)
}

/// The prune job (seed 000): claimed at most once an hour, each step deleting expired rows in
/// bounded batches. Later features add their steps here.
pub fn job() -> Job {
    Job::new(
        JOB,
        "Prune",
        "Deletes inquiries older than the retention period, suspected spam older than its own retention, used proofs of work, ended rate-limit windows, old run records, abandoned passkey challenges, expired sessions and expired invites; after 90 days resolved alerts and the rows of purged shares, after 400 days deletion-journal entries.",
        CLAIM_KEY,
        CLAIM_INTERVAL,
    )
    .budget(Budget { rows_per_step: 200_000, time: Duration::from_secs(45) })
    .traffic_budget(Budget { rows_per_step: 200_000, time: Duration::from_secs(45) })
    .step(step(STEP_INQUIRIES, "old inquiries", |pool, ctx| async move { delete_old_inquiries(&pool, ctx).await }))
    .step(step(STEP_SPAM, "old suspected spam", |pool, ctx| async move { delete_old_spam(&pool, ctx).await }))
    .step(step(STEP_SPENT_PROOFS, "used proofs of work and old contact figures", |pool, ctx| async move { delete_spent_proofs(&pool, ctx).await }))
    .step(step(STEP_RATE_LIMITS, "ended rate-limit windows", |pool, ctx| async move { delete_old_rate_limit_counters(&pool, ctx).await }))
    .step(step(STEP_RUNS, "old run records", |pool, ctx| async move { delete_old_maintenance_runs(&pool, ctx).await }))
    .step(step(STEP_CHALLENGES, "abandoned passkey challenges", |pool, ctx| async move { delete_expired_challenges(&pool, ctx).await }))
    .step(step(STEP_SESSIONS, "expired sessions", |pool, ctx| async move { delete_expired_sessions(&pool, ctx).await }))
    .step(step(STEP_INVITES, "expired invites", |pool, ctx| async move { delete_expired_invites(&pool, ctx).await }))
    .step(Step::new(STEP_ENDED, |ctx: StepCtx| async move { delete_ended_records(&ctx).await }).labelled("resolved alerts, purged shares and old deletion-journal entries"))
}

/// Deletes resolved alerts and purged shares' rows after [`ENDED_KEEP_DAYS`], and deletion-journal
/// entries after [`kernel::storage::journal::KEEP_DAYS`].
pub async fn delete_ended_records(ctx: &StepCtx) -> Result<jobs::StepReport, jobs::StepError> {
    let (pool, bounds) = (&ctx.state.pool, prune_ctx(ctx));
    let cutoff = ctx.now - time::Duration::days(ENDED_KEEP_DAYS);
    let alerts = OLD_ALERTS.delete(pool, bounds, &[cutoff]).await?;
    let shares = OLD_PURGED_SHARES.delete(pool, bounds, &[cutoff]).await?;
    let journal_cutoff = ctx.now - time::Duration::days(kernel::storage::journal::KEEP_DAYS);
    let limit = usize::try_from(bounds.batch_size).unwrap_or(1000).clamp(1, 1000);
    let (journal, journal_more) = kernel::storage::journal::forget_before(&*ctx.state.blobs, journal_cutoff, limit).await?;
    Ok(jobs::StepReport {
        counts: vec![("alerts", alerts.deleted), ("shares", shares.deleted), ("journal_entries", journal)],
        rows: alerts.deleted + shares.deleted + journal,
        more: alerts.more || shares.more || journal_more,
    })
}

/// Reads the retention period from `settings` (1–3,650 days; 180 when missing or invalid).
pub async fn retention_days(pool: &PgPool) -> Result<u32, sqlx::Error> {
    let stored = sqlx::query_scalar!("select value from settings where key = 'retention_days'").fetch_optional(pool).await?;
    Ok(retention_days_or_default(stored.as_deref()))
}

/// How many inquiries a prune at `now` with `days` of retention would delete (the dry run).
pub async fn count_older_than(pool: &PgPool, now: OffsetDateTime, days: u32) -> Result<i64, sqlx::Error> {
    let cutoff = now - time::Duration::days(days as i64);
    sqlx::query_scalar!(
        r#"select count(*) as "n!" from inquiries i where created_at < $1 and not held
             and not exists (select 1 from legal_holds h where h.email = lower(i.email collate ucs_basic))"#,
        cutoff
    )
    .fetch_one(pool)
    .await
}

/// Stores a (validated) retention period.
pub async fn set_retention_days(conn: &mut sqlx::PgConnection, days: u32) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "insert into settings (key, value, updated_at) values ('retention_days', $1, now())
         on conflict (key) do update set value = excluded.value, updated_at = excluded.updated_at",
        days.to_string(),
    )
    .execute(conn)
    .await?;
    Ok(())
}

/// Runs `delete_batch` (which must delete at most `ctx.batch_size` rows and return the count)
/// until it deletes fewer than a full batch or `ctx.max_batches` is reached.
async fn in_batches<F, Fut>(ctx: PruneCtx, mut delete_batch: F) -> Result<StepReport, sqlx::Error>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<u64, sqlx::Error>>,
{
    let mut report = StepReport::default();
    // Requests counted since the batch before began (its batch and its rest).
    let mut requests = kernel::load::Window::start();
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
        requests = kernel::load::Window::start();
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
/// requests come at [`kernel::load::BUSY_PER_SECOND`] or more, nineteen: a twentieth, so
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
struct Doomed {
    table: &'static str,
    keys: &'static [&'static str],
    select: &'static str,
    lock: &'static str,
}

impl Doomed {
    /// Deletes in batches (see [`in_batches`]) the rows picked with `cutoffs`.
    async fn delete(&self, pool: &PgPool, ctx: PruneCtx, cutoffs: &[OffsetDateTime]) -> Result<StepReport, sqlx::Error> {
        let Doomed { table, keys, select, lock } = self;
        let same: Vec<String> = keys.iter().map(|k| format!("t.{k} = doomed.{k}")).collect();
        let limit = cutoffs.len() + 1;
        let sql = format!("with doomed as ({select} limit ${limit}{lock}) delete from {table} t using doomed where {}", same.join(" and "));
        in_batches(ctx, || async {
            let query = cutoffs.iter().fold(sqlx::query(&sql), |q, cutoff| q.bind(cutoff));
            Ok(query.bind(ctx.batch_size).execute(pool).await?.rows_affected())
        })
        .await
    }
}

/// Inquiries older than the retention period, oldest first. Held inquiries stay (legal hold):
/// their flag is read under the row lock, and a hold on the sender's address placed before the
/// statement is checked too. SKIP LOCKED: an admin deleting the same rows at the same moment
/// never blocks prune.
const OLD_INQUIRIES: Doomed = Doomed {
    table: "inquiries",
    keys: &["id"],
    select: "select id from inquiries i where created_at < $1 and not held
               and not exists (select 1 from legal_holds h where h.email = lower(i.email collate ucs_basic))
             order by created_at",
    lock: " for update skip locked",
};
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
/// Abandoned passkey ceremonies (used ones are deleted at once).
const EXPIRED_CHALLENGES: Doomed =
    Doomed { table: "passkey_challenges", keys: &["id"], select: "select id from passkey_challenges where expires_at < $1", lock: "" };
/// Sessions past their idle expiry (`$1`) or their absolute lifetime (`$2`); our session rows go
/// with them (`on delete cascade`).
const EXPIRED_SESSIONS: Doomed = Doomed {
    table: "tower_sessions.session",
    keys: &["id"],
    select: "select t.id from tower_sessions.session t left join admin_sessions s on s.session_id = t.id
             where t.expiry_date < $1 or s.created_at < $2",
    lock: "",
};
/// Invites that expired unredeemed (redeemed ones stay as the record of who joined how).
const EXPIRED_INVITES: Doomed =
    Doomed { table: "admin_invites", keys: &["id"], select: "select id from admin_invites where redeemed_at is null and expires_at < $1", lock: "" };

/// Alerts resolved before `$1`.
const OLD_ALERTS: Doomed = Doomed { table: "alerts", keys: &["id"], select: "select id from alerts where resolved_at < $1", lock: "" };
/// Shares purged before `$1` (their files deleted, names and notes already forgotten); a share a
/// legal hold names stays (the hold's record points to it).
const OLD_PURGED_SHARES: Doomed = Doomed {
    table: "shares",
    keys: &["id"],
    select: "select id from shares s where status = 'purged' and purged_at < $1
               and not exists (select 1 from legal_holds h where h.share_id = s.id)
             order by purged_at",
    lock: " for update skip locked",
};

/// Suspected spam older than its own retention (`spam_retention_days`), except on legal hold.
const OLD_SPAM: Doomed = Doomed {
    table: "suspected_spam",
    keys: &["id"],
    select: "select id from suspected_spam s where created_at < $1 and not held
               and not exists (select 1 from legal_holds h where h.email = lower(s.email collate ucs_basic))
             order by created_at",
    lock: " for update skip locked",
};
/// Proofs of work whose challenge expired (a replay of them is refused as expired anyway).
const SPENT_PROOFS: Doomed =
    Doomed { table: "spam_proofs_spent", keys: &["challenge"], select: "select challenge from spam_proofs_spent where expires_at < $1", lock: "" };
/// The contact form's figures older than [`FIGURES_KEEP_DAYS`].
const OLD_FIGURES: Doomed = Doomed {
    table: "contact_daily",
    keys: &["day", "figure", "shard"],
    select: "select day, figure, shard from contact_daily where day < ($1 at time zone 'UTC')::date",
    lock: "",
};

/// Reads suspected spam's retention from `settings` (1–365 days; 14 when missing or invalid).
pub async fn spam_retention_days(pool: &PgPool) -> Result<u32, sqlx::Error> {
    let stored: Option<String> = sqlx::query_scalar("select value from settings where key = $1").bind(common::spam::RETENTION_KEY).fetch_optional(pool).await?;
    Ok(common::spam::retention_days_or_default(stored.as_deref()))
}

/// Deletes suspected spam older than its retention (see [`OLD_SPAM`]).
pub async fn delete_old_spam(pool: &PgPool, ctx: PruneCtx) -> Result<StepReport, sqlx::Error> {
    let cutoff = ctx.now - time::Duration::days(i64::from(spam_retention_days(pool).await?));
    OLD_SPAM.delete(pool, ctx, &[cutoff]).await
}

/// Deletes used proofs of work once their challenge expired, and old daily figures.
pub async fn delete_spent_proofs(pool: &PgPool, ctx: PruneCtx) -> Result<StepReport, sqlx::Error> {
    let proofs = SPENT_PROOFS.delete(pool, ctx, &[ctx.now]).await?;
    let figures = OLD_FIGURES.delete(pool, ctx, &[ctx.now - time::Duration::days(FIGURES_KEEP_DAYS)]).await?;
    Ok(StepReport { deleted: proofs.deleted + figures.deleted, batches: proofs.batches + figures.batches, more: proofs.more || figures.more })
}

/// Deletes inquiries older than the retention period (see [`OLD_INQUIRIES`]).
pub async fn delete_old_inquiries(pool: &PgPool, ctx: PruneCtx) -> Result<StepReport, sqlx::Error> {
    let cutoff = ctx.now - time::Duration::days(i64::from(retention_days(pool).await?));
    OLD_INQUIRIES.delete(pool, ctx, &[cutoff]).await
}

/// Deletes rate-limit counters whose window ended.
pub async fn delete_old_rate_limit_counters(pool: &PgPool, ctx: PruneCtx) -> Result<StepReport, sqlx::Error> {
    let cutoff = ctx.now - time::Duration::days(RATE_LIMIT_KEEP_DAYS);
    OLD_RATE_LIMIT_COUNTERS.delete(pool, ctx, &[cutoff]).await
}

/// Keeps 90 days of maintenance run records.
pub async fn delete_old_maintenance_runs(pool: &PgPool, ctx: PruneCtx) -> Result<StepReport, sqlx::Error> {
    let cutoff = ctx.now - time::Duration::days(RUN_KEEP_DAYS);
    OLD_RUNS.delete(pool, ctx, &[cutoff]).await
}

/// Deletes abandoned passkey ceremonies.
pub async fn delete_expired_challenges(pool: &PgPool, ctx: PruneCtx) -> Result<StepReport, sqlx::Error> {
    EXPIRED_CHALLENGES.delete(pool, ctx, &[ctx.now]).await
}

/// Deletes sessions past their idle expiry or their absolute lifetime.
pub async fn delete_expired_sessions(pool: &PgPool, ctx: PruneCtx) -> Result<StepReport, sqlx::Error> {
    EXPIRED_SESSIONS.delete(pool, ctx, &[ctx.now, ctx.now - ctx.session_absolute]).await
}

/// Deletes invites that expired unredeemed.
pub async fn delete_expired_invites(pool: &PgPool, ctx: PruneCtx) -> Result<StepReport, sqlx::Error> {
    EXPIRED_INVITES.delete(pool, ctx, &[ctx.now]).await
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
                    (0..10).for_each(|_| kernel::load::request_started());
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
