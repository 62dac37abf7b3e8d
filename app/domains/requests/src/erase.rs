//! The erasure of a request's data, on the lifecycle engine's rules: the `requests` job (claimed
//! once a minute over all instances, one lease) erases the `erasing` requests' items in bounded
//! batches, each batch one transaction that deletes and adds its count to the request's row — so
//! a run killed at any point leaves an exact count and the next run goes on where it stopped.
//! A request is closed only when a new search over every kind finds nothing erasable, by one
//! conditional UPDATE (`erasing` → `done`): however many runs race, it closes once, with one
//! event. The same job raises the deadline alerts; prune's step here removes the addresses of
//! requests closed longer than their retention period.

use std::time::Duration;

use common::alerts::{AlertKind, AlertMessage};
use kernel::audit::{Actor, AuditKind};
use kernel::jobs::{Budget, Job, Step, StepCtx, StepError, StepReport};
use kernel::personal::Address;
use kernel::state::AppState;

use super::{personal, RequestKind, RequestSettings};

pub const JOB: &str = "requests";
const CLAIM_KEY: &str = "requests_claim_at";
pub const STEP_ERASE: &str = "erase";
pub const STEP_DEADLINES: &str = "deadlines";
/// Prune's step that removes the addresses of long-closed requests.
pub const STEP_FORGET: &str = "forget_requests";
/// Items per erased batch (one transaction).
pub const BATCH: i64 = 500;

/// The job: erasures in progress and the deadlines, once a minute.
pub fn job() -> Job {
    Job::new(JOB, "Data requests", "Erases what erasure requests cover, in batches, and warns before a request's deadline.", CLAIM_KEY, Duration::from_secs(60))
        .budget(Budget { rows_per_step: 1_000_000, time: Duration::from_secs(60) })
        .traffic_budget(Budget { rows_per_step: 5_000, time: Duration::from_secs(5) })
        .step(Step::new(STEP_ERASE, erase_step).labelled("items erased").past_budget())
        .step(Step::new(STEP_DEADLINES, deadlines_step).labelled("requests near their deadline"))
}

/// The requests being erased.
async fn erasing(pool: &sqlx::PgPool) -> Result<Vec<(i64, String, String)>, sqlx::Error> {
    sqlx::query_as("select id, email, email_hash from data_requests where status = 'erasing' and email is not null order by id limit 20").fetch_all(pool).await
}

async fn erase_step(ctx: StepCtx) -> Result<StepReport, StepError> {
    let mut erased = 0u64;
    let mut closed = 0u64;
    let mut more = false;
    for (id, email, hash) in erasing(&ctx.state.pool).await? {
        let who = Address { email, hash };
        let (n, done) = erase_request(&ctx, id, &who).await?;
        erased += n;
        if done {
            closed += 1;
        } else {
            more = true;
        }
    }
    let mut report = StepReport::rows("erased", erased).with("requests_closed", closed);
    report.more = more;
    Ok(report)
}

/// Erases one request's items until none is left or the run's time is up; then closes it if a
/// new search finds nothing erasable. (items erased by this call, closed)
pub async fn erase_request(ctx: &StepCtx, id: i64, who: &Address) -> Result<(u64, bool), StepError> {
    let state = &ctx.state;
    let mut erased = 0;
    for source in personal::sources(state).iter() {
        loop {
            if erased > 0 && (ctx.out_of_time() || erased >= ctx.rows) {
                return Ok((erased, false));
            }
            let mut tx = state.pool.begin().await?;
            let ids = source.erase(&mut tx, who, id, BATCH).await?;
            let n = ids.len() as u64;
            if n > 0 {
                // Journaled before the commit: a database restored from an older backup gets
                // these rows erased again (`ebb doctor --after-restore`).
                let deletion = kernel::storage::journal::Deletion::Erasure { request: id, source: source.kind().into(), hash: who.hash.clone(), ids };
                kernel::storage::journal::record(&mut *tx, &*state.blobs, deletion)
                    .await
                    .map_err(|e| StepError::new(format!("cannot write the deletion journal ({e}); nothing erased")))?;
                sqlx::query(
                    "update data_requests set erased = jsonb_set(erased, array[$2], to_jsonb(coalesce((erased ->> $2)::bigint, 0) + $3))
                     where id = $1",
                )
                .bind(id)
                .bind(source.kind())
                .bind(n as i64)
                .execute(&mut *tx)
                .await?;
                // Counted with the batch it counts: a run killed after the commit says so.
                kernel::jobs::count(&mut tx, "erased", n).await?;
            }
            tx.commit().await?;
            fail::fail_point!("requests-after-batch", |_| Err(StepError::new("failpoint requests-after-batch")));
            erased += n;
            if n > 0 {
                state.live.touch(common::live::Topic::Job, Some(JOB.into()));
            }
            if n < BATCH as u64 {
                break;
            }
        }
    }
    let done = close_if_clean(state, id, who).await?;
    Ok((erased, done))
}

/// Closes the request when a new search finds nothing erasable: one conditional UPDATE, and the
/// event with what was erased and what stayed only if this call closed it.
async fn close_if_clean(state: &AppState, id: i64, who: &Address) -> Result<bool, StepError> {
    let found = personal::find_all(state, who, id).await?;
    if found.iter().any(|f| f.erasable() > 0) {
        return Ok(false);
    }
    let kept: serde_json::Map<String, serde_json::Value> = found.iter().filter(|f| f.kept > 0).map(|f| (f.kind.clone(), f.kept.into())).collect();
    let mut tx = state.pool.begin().await?;
    let erased: Option<serde_json::Value> = sqlx::query_scalar(
        "update data_requests set status = 'done', closed_at = now(), closed_by = erase_started_by, kept = $2
         where id = $1 and status = 'erasing' returning erased",
    )
    .bind(id)
    .bind(serde_json::Value::Object(kept.clone()))
    .fetch_optional(&mut *tx)
    .await?;
    let Some(erased) = erased else {
        // Closed by another run meanwhile: nothing more to record.
        return Ok(true);
    };
    let more = format!("erased {}; kept {}", counts_text(&erased), counts_text(&serde_json::Value::Object(kept)));
    let detail = super::db::detail(RequestKind::Erasure, &who.hash, &more);
    kernel::audit::record(&mut tx, &Actor::system(), AuditKind::RequestErased, Some(("data_request", &id.to_string())), Some(&detail)).await?;
    tx.commit().await?;
    kernel::alerts::resolve(&state.pool, AlertKind::DataRequestDue, &id.to_string()).await?;
    tracing::info!(request.id = id, "data request erased and closed");
    Ok(true)
}

/// `{"inquiries": 2}` as `inquiries 2` (`none` when empty).
pub fn counts_text(counts: &serde_json::Value) -> String {
    let parts: Vec<String> = counts.as_object().into_iter().flatten().map(|(k, v)| format!("{k} {}", v.as_i64().unwrap_or(0))).collect();
    if parts.is_empty() {
        "none".into()
    } else {
        parts.join(", ")
    }
}

/// Raises an alert for each open request within the warning period of its deadline (or past
/// it), once a day per request (its days left change daily), and resolves the alerts of the
/// requests that were closed.
async fn deadlines_step(ctx: StepCtx) -> Result<StepReport, StepError> {
    let pool = &ctx.state.pool;
    let warn = ctx.state.domain::<RequestSettings>().warn_days;
    let near: Vec<(i64, time::Date, i64)> = sqlx::query_as(
        "select id, due_on, (due_on - current_date)::bigint from data_requests where status <> 'done' and due_on - current_date <= $1 order by due_on, id",
    )
    .bind(warn as i32)
    .fetch_all(pool)
    .await?;
    let open: Vec<(String, Option<serde_json::Value>)> = sqlx::query_as("select subject, params from alerts where kind = $1 and resolved_at is null")
        .bind(AlertKind::DataRequestDue.as_str())
        .fetch_all(pool)
        .await?;
    let mut raised = 0;
    for (id, due, days_left) in &near {
        let message = AlertMessage::RequestDue { id: *id, due: due.to_string(), days_left: *days_left };
        let current = serde_json::to_value(&message).ok();
        if open.iter().any(|(subject, params)| *subject == id.to_string() && *params == current) {
            continue;
        }
        kernel::alerts::raise(pool, AlertKind::DataRequestDue, &id.to_string(), &message).await?;
        raised += 1;
    }
    for (subject, _) in &open {
        if !near.iter().any(|(id, ..)| id.to_string() == *subject) {
            kernel::alerts::resolve(pool, AlertKind::DataRequestDue, subject).await?;
        }
    }
    // Only what changed is counted: a request near its deadline is not news every minute (a run
    // with counts is an audit event and a log line).
    Ok(StepReport::rows("raised", raised))
}

/// Prune's step: the address (and the note, which may repeat it) of requests closed longer than
/// the retention period are removed; the row keeps the keyed hash, kind, dates and counts.
pub fn forget_step() -> Step {
    Step::new(STEP_FORGET, |ctx: StepCtx| async move {
        let keep = ctx.state.domain::<RequestSettings>().keep_days;
        let n = sqlx::query(
            "update data_requests set email = null, note = '', forgotten_at = now()
             where id in (select id from data_requests where status = 'done' and email is not null
                          and closed_at < $1 - make_interval(days => $2) order by closed_at limit $3)",
        )
        .bind(ctx.now)
        .bind(keep as i32)
        .bind(ctx.rows.min(i64::MAX as u64) as i64)
        .execute(&ctx.state.pool)
        .await?
        .rows_affected();
        Ok(StepReport::rows("forgotten", n))
    })
    .labelled("addresses of closed data requests")
}

/// Starts a run of the job now (after an admin pressed Erase), in the background: the claim is
/// taken regardless of its age; the lease still keeps it to one run at a time.
pub fn run_now(state: &AppState) {
    let Some(job) = state.jobs().get(JOB).cloned() else {
        return;
    };
    let state2 = state.clone();
    state.background.spawn_with_timeout(JOB, job.budget.time + job.step_grace * 2, async move {
        kernel::jobs::run_job(&state2, &job, kernel::jobs::Trigger::Admin, true).await.map(|_| ()).map_err(|e| e.to_string())
    });
}
