//! Contact's retention: its kinds of data (inquiries, suspected spam, used proofs of work and the
//! form's daily figures), the prune steps that delete them on time, and the retention report's
//! reading of each. The prune loop is the kernel's (`kernel::prune`); the composition root puts
//! [`steps`] into it and [`kinds`] into the report.

use common::retention::Promise;
use kernel::jobs::Step;
use kernel::prune::{step, Aged, Doomed, Promised, PruneCtx, StepReport, CLAIM_INTERVAL, JOB};
use kernel::retention::{KindOfData, ReadError};
use sqlx::PgPool;
use time::OffsetDateTime;

/// Step names, declared once.
pub const STEP_INQUIRIES: &str = "inquiries";
pub const STEP_SPAM: &str = "suspected_spam";
pub const STEP_SPENT_PROOFS: &str = "spam_proofs_spent";

/// The contact form's daily figures are kept this many days.
pub const FIGURES_KEEP_DAYS: i64 = 400;

/// Contact's prune steps, in order.
pub fn steps() -> Vec<Step> {
    vec![
        step(STEP_INQUIRIES, "old inquiries", |pool, ctx| async move { delete_old_inquiries(&pool, ctx).await }),
        step(STEP_SPAM, "old suspected spam", |pool, ctx| async move { delete_old_spam(&pool, ctx).await }),
        step(STEP_SPENT_PROOFS, "used proofs of work and old contact figures", |pool, ctx| async move { delete_spent_proofs(&pool, ctx).await }),
    ]
}

/// Contact's kinds of data, for the retention report: what each prune statement would delete now
/// is what is past the promise; held items (their own flag or a hold on the sender's address)
/// are counted apart. Each figure comes from an index; a large table's total is the catalogue's.
pub fn kinds() -> Vec<Box<dyn KindOfData>> {
    vec![
        Box::new(Aged {
            kind: "inquiries",
            job: JOB,
            step: STEP_INQUIRIES,
            every: CLAIM_INTERVAL,
            doomed: &OLD_INQUIRIES,
            oldest: "select min(created_at) from inquiries",
            held: Some(
                "select count(*) from (select id from inquiries where held
                                       union select i.id from holds_in_force h join inquiries i on lower(i.email collate ucs_basic) = h.email
                                       where h.email is not null) k",
            ),
            promise: Promised::Read(|ctx| Box::pin(async move { promise_of(retention_days(&ctx.state.pool).await?, |days| Promise::Inquiries { days }) })),
        }),
        Box::new(Aged {
            kind: "suspected_spam",
            job: JOB,
            step: STEP_SPAM,
            every: CLAIM_INTERVAL,
            doomed: &OLD_SPAM,
            oldest: "select min(created_at) from suspected_spam",
            held: Some(
                "select count(*) from suspected_spam s
                 where held or exists (select 1 from holds_in_force h where h.email = lower(s.email collate ucs_basic))",
            ),
            promise: Promised::Read(|ctx| {
                Box::pin(async move { promise_of(spam_retention_days(&ctx.state.pool).await?, |days| Promise::SuspectedSpam { days }) })
            }),
        }),
        // Until their challenge expires.
        Box::new(Aged {
            kind: "spent_proofs",
            job: JOB,
            step: STEP_SPENT_PROOFS,
            every: CLAIM_INTERVAL,
            doomed: &SPENT_PROOFS,
            oldest: "select min(expires_at) from spam_proofs_spent",
            held: None,
            promise: Promised::Fixed(Promise::SpentProofs, &[time::Duration::ZERO]),
        }),
    ]
}

/// A retention setting of `days` as its promise and its statement's one cutoff age.
fn promise_of(days: u32, promise: fn(i64) -> Promise) -> Result<(Promise, Vec<time::Duration>), ReadError> {
    Ok((promise(i64::from(days)), vec![time::Duration::days(i64::from(days))]))
}

/// Reads the inquiries' retention period from `settings` (1–3,650 days; 180 when missing or invalid).
pub async fn retention_days(pool: &PgPool) -> Result<u32, sqlx::Error> {
    let stored = kernel::settings::read(pool, common::retention::RETENTION_KEY).await?;
    Ok(common::retention::retention_days_or_default(stored.as_deref()))
}

/// How many inquiries a prune at `now` with `days` of retention would delete (the dry run the
/// settings page shows before saving).
pub async fn count_older_than(pool: &PgPool, now: OffsetDateTime, days: u32) -> Result<i64, sqlx::Error> {
    let cutoff = now - time::Duration::days(days as i64);
    sqlx::query_scalar!(
        r#"select count(*) as "n!" from inquiries i where created_at < $1 and not held
             and not exists (select 1 from holds_in_force h where h.email = lower(i.email collate ucs_basic))"#,
        cutoff
    )
    .fetch_one(pool)
    .await
}

/// The settings page's dry run, as the kernel's hook (`kernel::retention::DryRun`).
pub fn dry_run() -> kernel::retention::DryRun {
    kernel::retention::DryRun(|pool, now, days| Box::pin(count_older_than(pool, now, days)))
}

/// Rows of `$table` (inquiries or suspected spam) older than their retention period (`$1`),
/// oldest first. Held rows stay (legal hold): their flag is read under the row lock, and a hold
/// on the sender's address placed before the statement is checked too. SKIP LOCKED: an admin
/// deleting the same rows at the same moment never blocks prune.
macro_rules! old_rows {
    ($table:literal) => {
        Doomed {
            table: $table,
            keys: &["id"],
            select: concat!(
                "select id from ",
                $table,
                " t where created_at < $1 and not held
                   and not exists (select 1 from holds_in_force h where h.email = lower(t.email collate ucs_basic))
                 order by created_at"
            ),
            lock: " for update skip locked",
        }
    };
}

/// Inquiries older than the retention period (`retention_days`).
const OLD_INQUIRIES: Doomed = old_rows!("inquiries");
/// Suspected spam older than its own retention (`spam_retention_days`).
const OLD_SPAM: Doomed = old_rows!("suspected_spam");
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
    let stored = kernel::settings::read(pool, common::spam::RETENTION_KEY).await?;
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
