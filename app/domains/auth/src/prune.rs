//! Auth's retention: passkey challenges, sessions and invites, deleted on time by its prune steps
//! (the loop is `kernel::prune`), and read by the retention report ([`kinds`]).

use common::retention::Promise;
use futures::future::BoxFuture;
use kernel::jobs::Step;
use kernel::prune::{step, Doomed, PruneCtx, PruneSettings, StepReport, CLAIM_INTERVAL, JOB};
use kernel::retention::{Figures, Kind, ReadCtx, ReadError, Reading};
use sqlx::PgPool;

/// Step names, declared once.
pub const STEP_CHALLENGES: &str = "passkey_challenges";
pub const STEP_SESSIONS: &str = "sessions";
pub const STEP_INVITES: &str = "admin_invites";

/// Auth's prune steps, in order.
pub fn steps() -> Vec<Step> {
    vec![
        step(STEP_CHALLENGES, "abandoned passkey challenges", |pool, ctx| async move { delete_expired_challenges(&pool, ctx).await }),
        step(STEP_SESSIONS, "expired sessions", |pool, ctx| async move { delete_expired_sessions(&pool, ctx).await }),
        step(STEP_INVITES, "expired invites", |pool, ctx| async move { delete_expired_invites(&pool, ctx).await }),
    ]
}

/// Auth's kinds of data, for the retention report.
pub fn kinds() -> Vec<Kind> {
    vec![
        Kind { kind: "sessions", job: JOB, step: STEP_SESSIONS, read: sessions },
        Kind { kind: "passkey_challenges", job: JOB, step: STEP_CHALLENGES, read: challenges },
        Kind { kind: "invites", job: JOB, step: STEP_INVITES, read: invites },
    ]
}

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

/// Admin sessions: idle expiry or absolute lifetime.
fn sessions<'a>(ctx: &'a ReadCtx<'a>) -> BoxFuture<'a, Result<Reading, ReadError>> {
    Box::pin(async move {
        let settings = ctx.state.domain::<PruneSettings>();
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
