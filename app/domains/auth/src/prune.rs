//! Auth's retention: passkey challenges, sessions and invites, deleted on time by its prune steps
//! (the loop is `kernel::prune`), and read by the retention report ([`kinds`]).

use common::retention::Promise;
use futures::future::BoxFuture;
use kernel::jobs::Step;
use kernel::prune::{step, Aged, Doomed, Promised, PruneCtx, PruneSettings, StepReport, CLAIM_INTERVAL, JOB};
use kernel::retention::{KindOfData, ReadCtx, ReadError};
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

/// Auth's kinds of data, for the retention report: what each prune statement would delete now
/// is what is past the promise.
pub fn kinds() -> Vec<Box<dyn KindOfData>> {
    let aged = |kind, step, doomed, oldest, promise| {
        Box::new(Aged { kind, job: JOB, step, every: CLAIM_INTERVAL, doomed, oldest, held: None, promise }) as Box<dyn KindOfData>
    };
    vec![
        // Sessions end at their idle expiry (`$1`: now) or their absolute lifetime (`$2`).
        aged("sessions", STEP_SESSIONS, &EXPIRED_SESSIONS, "select min(created_at) from admin_sessions", Promised::Read(sessions_promise)),
        // Used ceremonies are deleted at once; their creation time is not kept: the oldest is
        // shown by its expiry.
        aged(
            "passkey_challenges",
            STEP_CHALLENGES,
            &EXPIRED_CHALLENGES,
            "select min(expires_at) from passkey_challenges",
            Promised::Fixed(Promise::PasskeyChallenges, &[time::Duration::ZERO]),
        ),
        // Unredeemed invites go when they expire; redeemed ones are the record of who joined.
        aged(
            "invites",
            STEP_INVITES,
            &EXPIRED_INVITES,
            "select min(created_at) from admin_invites",
            Promised::Fixed(Promise::Invites, &[time::Duration::ZERO]),
        ),
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

/// The sessions' promise (idle expiry and absolute lifetime, from the settings) and the ages of
/// [`EXPIRED_SESSIONS`]' cutoffs.
fn sessions_promise<'a>(ctx: &'a ReadCtx<'a>) -> BoxFuture<'a, Result<(Promise, Vec<time::Duration>), ReadError>> {
    Box::pin(async move {
        let settings = ctx.state.domain::<PruneSettings>();
        let promise = Promise::Sessions {
            idle_hours: (settings.session_idle.as_secs() / 3600) as i64,
            absolute_days: (settings.session_absolute.as_secs() / 86_400) as i64,
        };
        Ok((promise, vec![time::Duration::ZERO, time::Duration::seconds(settings.session_absolute.as_secs() as i64)]))
    })
}
