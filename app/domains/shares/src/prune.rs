//! The rows of purged shares (their files long gone, their names and notes forgotten): deleted by
//! prune [`ENDED_KEEP_DAYS`] after the purge, unless a legal hold names the share.

use kernel::jobs::Step;
use kernel::prune::{step, Doomed, PruneCtx, StepReport};
use sqlx::PgPool;

/// The step's name.
pub const STEP_PURGED: &str = "purged_shares";
/// Purged shares' rows are kept this many days after the purge.
pub const ENDED_KEEP_DAYS: i64 = kernel::prune::ENDED_KEEP_DAYS;

/// Shares' prune steps.
pub fn steps() -> Vec<Step> {
    vec![step(STEP_PURGED, "rows of purged shares", |pool, ctx| async move { delete_purged_shares(&pool, ctx).await })]
}

/// Shares purged before `$1` (their files deleted, names and notes already forgotten); a share a
/// legal hold names stays (the hold's record points to it).
const OLD_PURGED_SHARES: Doomed = Doomed {
    table: "shares",
    keys: &["id"],
    select: "select id from shares s where status = 'purged' and purged_at < $1
               and not exists (select 1 from holds_in_force h where h.share_id = s.id)
             order by purged_at",
    lock: " for update skip locked",
};

/// Deletes the rows of shares purged more than [`ENDED_KEEP_DAYS`] ago.
pub async fn delete_purged_shares(pool: &PgPool, ctx: PruneCtx) -> Result<StepReport, sqlx::Error> {
    OLD_PURGED_SHARES.delete(pool, ctx, &[ctx.now - time::Duration::days(ENDED_KEEP_DAYS)]).await
}
