//! Contact's retention: its kinds of data (inquiries, suspected spam, used proofs of work and the
//! form's daily figures), the prune steps that delete them on time, and the retention report's
//! reading of each. The prune loop is the kernel's (`kernel::prune`); the composition root puts
//! [`steps`] into it and [`kinds`] into the report.

use common::retention::Promise;
use futures::future::BoxFuture;
use kernel::jobs::Step;
use kernel::prune::{step, Doomed, PruneCtx, StepReport, CLAIM_INTERVAL, JOB};
use kernel::retention::{table_size, Figures, Kind, ReadCtx, ReadError, Reading};
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

/// Contact's kinds of data, for the retention report.
pub fn kinds() -> Vec<Kind> {
    vec![
        Kind { kind: "inquiries", job: JOB, step: STEP_INQUIRIES, read: inquiries },
        Kind { kind: "suspected_spam", job: JOB, step: STEP_SPAM, read: suspected_spam },
        Kind { kind: "spent_proofs", job: JOB, step: STEP_SPENT_PROOFS, read: spent_proofs },
    ]
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

/// Inquiries older than the retention period, oldest first. Held inquiries stay (legal hold):
/// their flag is read under the row lock, and a hold on the sender's address placed before the
/// statement is checked too. SKIP LOCKED: an admin deleting the same rows at the same moment
/// never blocks prune.
const OLD_INQUIRIES: Doomed = Doomed {
    table: "inquiries",
    keys: &["id"],
    select: "select id from inquiries i where created_at < $1 and not held
               and not exists (select 1 from holds_in_force h where h.email = lower(i.email collate ucs_basic))
             order by created_at",
    lock: " for update skip locked",
};
/// Suspected spam older than its own retention (`spam_retention_days`), except on legal hold.
const OLD_SPAM: Doomed = Doomed {
    table: "suspected_spam",
    keys: &["id"],
    select: "select id from suspected_spam s where created_at < $1 and not held
               and not exists (select 1 from holds_in_force h where h.email = lower(s.email collate ucs_basic))
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

/// Inquiries: the retention setting; held ones (own or sender's hold) apart. Each figure from an
/// index: the oldest by `created_at`, the past and overdue ones by a range of it (what is past
/// the promise, normally nothing), the held ones by the hold flag's and the hold addresses'
/// indexes. The total comes from the catalogue when the table is large.
fn inquiries<'a>(ctx: &'a ReadCtx<'a>) -> BoxFuture<'a, Result<Reading, ReadError>> {
    Box::pin(async move {
        let pool = &ctx.state.pool;
        let days = retention_days(pool).await?;
        let cutoff = ctx.now - time::Duration::days(i64::from(days));
        let mut figures = sqlx::query_as!(
            Figures,
            r#"select 0::bigint as "count!",
                      (select min(created_at) from inquiries) as oldest_at,
                      (select count(*) from inquiries i where created_at < $1 and not held
                         and not exists (select 1 from holds_in_force h where h.email = lower(i.email collate ucs_basic))) as "past!",
                      (select count(*) from inquiries i where created_at < $2 and not held
                         and not exists (select 1 from holds_in_force h where h.email = lower(i.email collate ucs_basic))) as "overdue!",
                      (select count(*) from (select id from inquiries where held
                                             union select i.id from holds_in_force h join inquiries i on lower(i.email collate ucs_basic) = h.email
                                             where h.email is not null) k) as "held!""#,
            cutoff,
            cutoff - ctx.every(JOB, CLAIM_INTERVAL),
        )
        .fetch_one(pool)
        .await?;
        let (count, estimated) = table_size(pool, "inquiries").await?;
        figures.count = count;
        Ok(Reading { promise: Promise::Inquiries { days: i64::from(days) }, figures, estimated })
    })
}

/// Suspected spam: its own retention setting; held ones apart.
fn suspected_spam<'a>(ctx: &'a ReadCtx<'a>) -> BoxFuture<'a, Result<Reading, ReadError>> {
    Box::pin(async move {
        let pool = &ctx.state.pool;
        let days = spam_retention_days(pool).await?;
        let cutoff = ctx.now - time::Duration::days(i64::from(days));
        let (count, oldest_at, past, overdue, held): (i64, Option<time::OffsetDateTime>, i64, i64, i64) = sqlx::query_as(
            "select count(*), min(created_at),
                    count(*) filter (where created_at < $1 and not held and not exists (select 1 from holds_in_force h where h.email = lower(s.email collate ucs_basic))),
                    count(*) filter (where created_at < $2 and not held and not exists (select 1 from holds_in_force h where h.email = lower(s.email collate ucs_basic))),
                    count(*) filter (where held or exists (select 1 from holds_in_force h where h.email = lower(s.email collate ucs_basic)))
             from suspected_spam s",
        )
        .bind(cutoff)
        .bind(cutoff - ctx.every(JOB, CLAIM_INTERVAL))
        .fetch_one(pool)
        .await?;
        let figures = Figures { count, oldest_at, past, overdue, held };
        Ok(Reading { promise: Promise::SuspectedSpam { days: i64::from(days) }, figures, estimated: false })
    })
}

/// Used proofs of work: until their challenge expires.
fn spent_proofs<'a>(ctx: &'a ReadCtx<'a>) -> BoxFuture<'a, Result<Reading, ReadError>> {
    Box::pin(async move {
        let (count, oldest_at, past, overdue): (i64, Option<time::OffsetDateTime>, i64, i64) = sqlx::query_as(
            "select count(*), min(expires_at), count(*) filter (where expires_at < $1),
                    count(*) filter (where expires_at < $1::timestamptz - make_interval(secs => $2))
             from spam_proofs_spent",
        )
        .bind(ctx.now)
        .bind(ctx.every(JOB, CLAIM_INTERVAL).as_seconds_f64())
        .fetch_one(&ctx.state.pool)
        .await?;
        Ok(Reading { promise: Promise::SpentProofs, figures: Figures { count, oldest_at, past, overdue, held: 0 }, estimated: false })
    })
}
