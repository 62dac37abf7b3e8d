//! The report's figures: every kind of data, read by the domain that owns it (its
//! `kernel::retention::KindOfData`) at one database clock reading, with the job registry's
//! intervals and run records. The prune job runs [`step`] each hour: items past their promise by
//! more than one interval of their job raise an alert (and the alert is resolved once they are
//! gone).

use std::collections::HashMap;

use common::i18n::{Lang, Text as _};
use common::retention::kind_label;
use kernel::alerts::{self, AlertKind, AlertMessage};
use kernel::jobs::{Job, RunView, StepCtx, StepError, StepReport, StepStatus};
use kernel::retention::{KindOfData, ReadCtx, ReadError, Reading};
use kernel::state::AppState;
use sqlx::PgPool;

use super::{Did, KindReport, LastRun, PublicPromises, RetentionReport};

/// The prune step's name.
pub const STEP: &str = "retention_check";

/// Every kind of data Ebb keeps: one implementation each, in the domain that owns it. A new
/// kind of data is one more implementation in its domain's list.
pub fn kinds() -> Vec<Box<dyn KindOfData>> {
    let boxed = |k: kernel::retention::Kind| Box::new(k) as Box<dyn KindOfData>;
    let mut kinds = contact::prune::kinds();
    kinds.extend(auth::prune::kinds());
    kinds.extend(kernel::prune::kinds());
    kinds.extend(shares::retention::kinds().into_iter().map(boxed));
    kinds.extend(audit::retention::kinds().into_iter().map(boxed));
    kinds.extend(contact::notify::retention_kinds().into_iter().map(boxed));
    kinds.extend(requests::retention::kinds().into_iter().map(boxed));
    kinds
}

/// What `step` did in `run`.
fn step_did(run: &RunView, step: &str) -> Did {
    match run.steps.iter().find(|s| s.step == step) {
        Some(s) if matches!(s.status, StepStatus::Done | StepStatus::Failed | StepStatus::CutOff | StepStatus::Running) => {
            Did::Ran { counts: s.counts.iter().map(|(k, v)| (k.replace('_', " "), *v)).collect(), failed: s.status == StepStatus::Failed, more: s.more }
        }
        Some(s) if s.status == StepStatus::Stopped => Did::Stopped,
        Some(_) => Did::Skipped,
        None => Did::NotReached,
    }
}

/// One kind's line of the report. Its label and promise are in English (the JSON, the CLI and
/// alerts keep them stable), and as data for the admin page to write in its language.
fn kind_report(kind: &dyn KindOfData, reading: Reading, job: Option<&Job>, run: Option<&RunView>) -> KindReport {
    let (f, (_, step)) = (reading.figures, kind.removed_by());
    KindReport {
        kind: kind.kind().into(),
        label: kind_label(kind.kind()).map_or(kind.kind(), |k| k.get(Lang::En)).into(),
        promise: reading.promise.text(Lang::En),
        terms: Some(reading.promise),
        count: f.count,
        count_estimated: reading.estimated,
        oldest_at: f.oldest_at,
        past_promise: f.past,
        overdue: f.overdue,
        held: f.held,
        job: job.map(|j| j.name.to_string()),
        job_title: job.map(|j| j.title.to_string()),
        job_interval_secs: job.map(|j| j.interval.as_secs()),
        last_run: job.and(run).map(|run| {
            let did = step_did(run, step);
            LastRun { started_at: run.started_at, outcome: run.outcome.as_str().into(), trigger: run.trigger.clone(), did: did.text(Lang::En), step: Some(did) }
        }),
    }
}

/// What the visitor's page states.
pub async fn public_promises(state: &AppState) -> Result<PublicPromises, sqlx::Error> {
    let shares = state.domain::<shares::ShareSettings>();
    Ok(PublicPromises {
        retention_days: contact::prune::retention_days(&state.pool).await?,
        delivery_grace_mins: shares.gc.delivery_grace.as_secs().div_ceil(60),
        max_share_hours: shares.max_expiry_hours,
    })
}

/// Reads the whole report now: each kind by its owner, then each removing job's last run (read
/// once per job: prune removes six kinds).
pub async fn compute(state: &AppState) -> Result<RetentionReport, ReadError> {
    let now = kernel::jobs::claim::db_now(&state.pool).await?;
    let ctx = ReadCtx { state, now };
    let kinds = kinds();
    let mut readings = Vec::with_capacity(kinds.len());
    let mut runs: HashMap<&str, Option<RunView>> = HashMap::new();
    for kind in &kinds {
        readings.push(kind.read(&ctx).await?);
        let (job, _) = kind.removed_by();
        if !runs.contains_key(job) {
            runs.insert(job, kernel::jobs::last_run(&state.pool, job).await?);
        }
    }
    let kinds = kinds
        .iter()
        .zip(readings)
        .map(|(kind, reading)| {
            let (job, _) = kind.removed_by();
            kind_report(kind.as_ref(), reading, state.jobs().get(job), runs.get(job).and_then(Option::as_ref))
        })
        .collect();
    let holds = holds::db::count(&state.pool).await?;
    Ok(RetentionReport { generated_at: now, kinds, holds })
}

/// Raises one alert per kind with items past their promise by more than one interval of their
/// job, and resolves the alerts of kinds that are back on time.
pub async fn raise_alerts(pool: &PgPool, report: &RetentionReport) -> Result<(), sqlx::Error> {
    for k in &report.kinds {
        if k.overdue > 0 {
            alerts::raise(
                pool,
                AlertKind::RetentionOverdue,
                &k.kind,
                &AlertMessage::Overdue {
                    kind: k.kind.clone(),
                    label: k.label.clone(),
                    n: k.overdue,
                    job: k.job.clone(),
                    job_title: k.job_title.clone(),
                    promise: k.terms,
                },
            )
            .await?;
        } else {
            alerts::resolve(pool, AlertKind::RetentionOverdue, &k.kind).await?;
        }
    }
    Ok(())
}

/// The prune job's last step: clears hold flags no hold backs, then checks every promise.
pub fn step() -> kernel::jobs::Step {
    kernel::jobs::Step::new(STEP, |ctx: StepCtx| async move {
        let fixed = holds::db::clear_stale_flags(&ctx.state.pool, ctx.state.domain()).await?;
        let report = compute(&ctx.state).await?;
        raise_alerts(&ctx.state.pool, &report).await?;
        Ok::<_, StepError>(StepReport {
            counts: vec![("past_promise", report.past_promise() as u64), ("overdue", report.overdue() as u64), ("hold_flags_cleared", fixed)],
            rows: 0,
            more: false,
        })
    })
    .labelled("every kind of data checked against its promise")
}
