//! The kinds of data the prune job removes, as the retention report reads them (see
//! `kernel::retention`): inquiries, admin sessions, passkey challenges, invites, rate-limit
//! windows and the jobs' run records.

use common::retention::Promise;
use futures::future::BoxFuture;
use kernel::retention::{table_size, Figures, Kind, ReadCtx, ReadError, Reading};

use crate::prune::{self, CLAIM_INTERVAL, JOB};

/// Every kind prune removes.
pub fn kinds() -> Vec<Kind> {
    vec![
        Kind { kind: "inquiries", job: JOB, step: prune::STEP_INQUIRIES, read: inquiries },
        Kind { kind: "suspected_spam", job: JOB, step: prune::STEP_SPAM, read: suspected_spam },
        Kind { kind: "spent_proofs", job: JOB, step: prune::STEP_SPENT_PROOFS, read: spent_proofs },
        Kind { kind: "sessions", job: JOB, step: prune::STEP_SESSIONS, read: sessions },
        Kind { kind: "passkey_challenges", job: JOB, step: prune::STEP_CHALLENGES, read: challenges },
        Kind { kind: "invites", job: JOB, step: prune::STEP_INVITES, read: invites },
        Kind { kind: "rate_limit_windows", job: JOB, step: prune::STEP_RATE_LIMITS, read: rate_limit_windows },
        Kind { kind: "run_records", job: JOB, step: prune::STEP_RUNS, read: run_records },
    ]
}

/// Inquiries: the retention setting; held ones (own or sender's hold) apart. Each figure from an
/// index: the oldest by `created_at`, the past and overdue ones by a range of it (what is past
/// the promise, normally nothing), the held ones by the hold flag's and the hold addresses'
/// indexes. The total comes from the catalogue when the table is large.
fn inquiries<'a>(ctx: &'a ReadCtx<'a>) -> BoxFuture<'a, Result<Reading, ReadError>> {
    Box::pin(async move {
        let pool = &ctx.state.pool;
        let days = prune::retention_days(pool).await?;
        let cutoff = ctx.now - time::Duration::days(i64::from(days));
        let mut figures = sqlx::query_as!(
            Figures,
            r#"select 0::bigint as "count!",
                      (select min(created_at) from inquiries) as oldest_at,
                      (select count(*) from inquiries i where created_at < $1 and not held
                         and not exists (select 1 from legal_holds h where h.email = lower(i.email collate ucs_basic))) as "past!",
                      (select count(*) from inquiries i where created_at < $2 and not held
                         and not exists (select 1 from legal_holds h where h.email = lower(i.email collate ucs_basic))) as "overdue!",
                      (select count(*) from (select id from inquiries where held
                                             union select i.id from legal_holds h join inquiries i on lower(i.email collate ucs_basic) = h.email
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
        let days = prune::spam_retention_days(pool).await?;
        let cutoff = ctx.now - time::Duration::days(i64::from(days));
        let (count, oldest_at, past, overdue, held): (i64, Option<time::OffsetDateTime>, i64, i64, i64) = sqlx::query_as(
            "select count(*), min(created_at),
                    count(*) filter (where created_at < $1 and not held and not exists (select 1 from legal_holds h where h.email = lower(s.email collate ucs_basic))),
                    count(*) filter (where created_at < $2 and not held and not exists (select 1 from legal_holds h where h.email = lower(s.email collate ucs_basic))),
                    count(*) filter (where held or exists (select 1 from legal_holds h where h.email = lower(s.email collate ucs_basic)))
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

/// Admin sessions: idle expiry or absolute lifetime.
fn sessions<'a>(ctx: &'a ReadCtx<'a>) -> BoxFuture<'a, Result<Reading, ReadError>> {
    Box::pin(async move {
        let settings = ctx.state.domain::<prune::PruneSettings>();
        let absolute = time::Duration::seconds(settings.session_absolute.as_secs() as i64);
        let figures = sqlx::query_as!(
            Figures,
            r#"select count(*) as "count!", min(s.created_at) as oldest_at,
                      count(*) filter (where t.expiry_date < $1 or s.created_at < $2) as "past!",
                      count(*) filter (where t.expiry_date < $1::timestamptz - make_interval(secs => $3) or s.created_at < $2::timestamptz - make_interval(secs => $3)) as "overdue!",
                      0::bigint as "held!"
               from tower_sessions.session t left join admin_sessions s on s.session_id = t.id"#,
            ctx.now,
            ctx.now - absolute,
            ctx.every(JOB, CLAIM_INTERVAL).as_seconds_f64(),
        )
        .fetch_one(&ctx.state.pool)
        .await?;
        let promise = Promise::Sessions {
            idle_hours: (settings.session_idle.as_secs() / 3600) as i64,
            absolute_days: (settings.session_absolute.as_secs() / 86_400) as i64,
        };
        Ok(Reading { promise, figures, estimated: false })
    })
}

/// Passkey ceremonies (used ones are deleted at once; abandoned ones expire). Their creation
/// time is not kept: the oldest is shown by its expiry.
fn challenges<'a>(ctx: &'a ReadCtx<'a>) -> BoxFuture<'a, Result<Reading, ReadError>> {
    Box::pin(async move {
        let figures = sqlx::query_as!(
            Figures,
            r#"select count(*) as "count!", min(expires_at) as oldest_at,
                      count(*) filter (where expires_at < $1) as "past!",
                      count(*) filter (where expires_at < $1::timestamptz - make_interval(secs => $2)) as "overdue!",
                      0::bigint as "held!"
               from passkey_challenges"#,
            ctx.now,
            ctx.every(JOB, CLAIM_INTERVAL).as_seconds_f64(),
        )
        .fetch_one(&ctx.state.pool)
        .await?;
        Ok(Reading { promise: Promise::PasskeyChallenges, figures, estimated: false })
    })
}

/// Invites: unredeemed ones go when they expire; redeemed ones are the record of who joined.
fn invites<'a>(ctx: &'a ReadCtx<'a>) -> BoxFuture<'a, Result<Reading, ReadError>> {
    Box::pin(async move {
        let figures = sqlx::query_as!(
            Figures,
            r#"select count(*) as "count!", min(created_at) as oldest_at,
                      count(*) filter (where redeemed_at is null and expires_at < $1) as "past!",
                      count(*) filter (where redeemed_at is null and expires_at < $1::timestamptz - make_interval(secs => $2)) as "overdue!",
                      0::bigint as "held!"
               from admin_invites"#,
            ctx.now,
            ctx.every(JOB, CLAIM_INTERVAL).as_seconds_f64(),
        )
        .fetch_one(&ctx.state.pool)
        .await?;
        Ok(Reading { promise: Promise::Invites, figures, estimated: false })
    })
}

/// Rate-limit windows.
fn rate_limit_windows<'a>(ctx: &'a ReadCtx<'a>) -> BoxFuture<'a, Result<Reading, ReadError>> {
    Box::pin(async move {
        let keep = time::Duration::days(prune::RATE_LIMIT_KEEP_DAYS);
        let figures = sqlx::query_as!(
            Figures,
            r#"select count(*) as "count!", min(window_start) as oldest_at,
                      count(*) filter (where window_start < $1) as "past!",
                      count(*) filter (where window_start < $2) as "overdue!",
                      0::bigint as "held!"
               from rate_limit_counters"#,
            ctx.now - keep,
            ctx.now - keep - ctx.every(JOB, CLAIM_INTERVAL),
        )
        .fetch_one(&ctx.state.pool)
        .await?;
        Ok(Reading { promise: Promise::RateLimitWindows, figures, estimated: false })
    })
}

/// Run records of the lifecycle jobs.
fn run_records<'a>(ctx: &'a ReadCtx<'a>) -> BoxFuture<'a, Result<Reading, ReadError>> {
    Box::pin(async move {
        let pool = &ctx.state.pool;
        let keep = time::Duration::days(prune::RUN_KEEP_DAYS);
        let mut figures = sqlx::query_as!(
            Figures,
            r#"select 0::bigint as "count!",
                      (select min(started_at) from maintenance_runs) as oldest_at,
                      (select count(*) from maintenance_runs where started_at < $1) as "past!",
                      (select count(*) from maintenance_runs where started_at < $2) as "overdue!",
                      0::bigint as "held!""#,
            ctx.now - keep,
            ctx.now - keep - ctx.every(JOB, CLAIM_INTERVAL),
        )
        .fetch_one(pool)
        .await?;
        let (count, estimated) = table_size(pool, "maintenance_runs").await?;
        figures.count = count;
        Ok(Reading { promise: Promise::RunRecords { days: prune::RUN_KEEP_DAYS }, figures, estimated })
    })
}
