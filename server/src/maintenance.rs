//! Periodic claimed jobs: the in-process ticker, and the CLI's `maintenance run` and
//! `maintenance status`. Both read the one registry (`state.jobs`).

use std::time::Duration;

use app::jobs::{run_job, RunOutcome, Trigger};
use app::state::AppState;
use tokio_util::sync::CancellationToken;

/// Every `every`, starts each job that is not running here in its own tracked task, so a site
/// without traffic still cleans up and one slow job never delays the others. Several instances
/// tick; the claims and leases let one run each job.
pub async fn ticker(state: AppState, every: Duration, stop: CancellationToken) {
    let mut interval = tokio::time::interval(every);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = interval.tick() => {}
        }
        for job in state.jobs().jobs() {
            app::jobs::spawn_run(&state, job, Trigger::Ticker);
        }
    }
}

/// `ebb maintenance run [JOB…] [--force]`: the named jobs (all when none is named) now, in
/// registry order, each reported as it finishes. `Err` lists what failed.
pub async fn run_now(state: &AppState, names: &[String], force: bool, out: &mut impl std::io::Write) -> Result<(), String> {
    let known = state.jobs().names();
    if let Some(bad) = names.iter().find(|n| !known.contains(&n.as_str())) {
        return Err(format!("unknown job {bad:?}; the jobs are: {}", known.join(", ")));
    }
    let mut failed = Vec::new();
    for job in state.jobs().jobs().iter().filter(|j| names.is_empty() || names.iter().any(|n| n == j.name)) {
        match run_job(state, job, Trigger::Cli, force).await {
            Ok(RunOutcome::Ran(run)) => {
                let _ = writeln!(out, "{}: {}", job.name, app::jobs::outcome_label(run.outcome.into()));
                for s in &run.steps {
                    let counts: Vec<String> = s.counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
                    use app::jobs::StepStatus;
                    let done = format!(
                        "{}{}",
                        if counts.is_empty() { "nothing to do".into() } else { counts.join(", ") },
                        if s.more { " (more left for the next run)" } else { "" }
                    );
                    let detail = match s.status {
                        StepStatus::Failed => format!("FAILED: {}", s.error.as_deref().unwrap_or("see the server log")),
                        StepStatus::Skipped => "not reached: the run's time budget was spent; the next run goes on".into(),
                        // Says which failed check stopped the run; its error says who must act.
                        StepStatus::Stopped => s.error.clone().unwrap_or_else(|| "not run: an earlier check stopped the run".into()),
                        StepStatus::CutOff => format!("{done} — {}", s.error.as_deref().unwrap_or("cut off at the run's budget")),
                        StepStatus::Done | StepStatus::Running => done,
                    };
                    let _ = writeln!(out, "  {:<22} {detail}", s.step);
                }
                if run.outcome == app::jobs::Outcome::Failed {
                    failed.push(format!("{} had failing steps", job.name));
                }
            }
            Ok(RunOutcome::NotDue { next_possible_at }) => {
                let when = next_possible_at.map(|t| format!(" (next possible at {})", fmt(t))).unwrap_or_default();
                let _ = writeln!(out, "{}: not due: it ran less than {} ago{when}; use --force to run it anyway", job.name, human(job.interval));
            }
            Ok(RunOutcome::Busy) => {
                let _ = writeln!(out, "{}: running right now (on this or another instance); not started again", job.name);
            }
            Err(e) => failed.push(format!("{}: database error: {e}", job.name)),
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("; "))
    }
}

/// The run of each named job (all when none is named) could not start for `why`: each is
/// recorded as a failed run and alerted on (best effort: the database may be what failed).
pub async fn record_not_started(state: &AppState, names: &[String], why: &str) {
    for job in state.jobs().jobs().iter().filter(|j| names.is_empty() || names.iter().any(|n| n == j.name)) {
        if let Err(e) = app::jobs::record_not_started(state, job, Trigger::Cli, why).await {
            tracing::warn!(job = job.name, error = %e, "could not record a run that could not start");
        }
    }
}

/// `ebb maintenance status`: every job's last run and next possible start.
pub async fn status(state: &AppState, out: &mut impl std::io::Write) -> Result<(), String> {
    for job in state.jobs().jobs() {
        let view = app::jobs::view(&state.pool, job).await.map_err(|e| format!("database error: {e}"))?;
        let _ = writeln!(out, "{} — {} (at most once per {})", job.name, job.title, human(job.interval));
        match &view.last_run {
            None => {
                let _ = writeln!(out, "  last run: never");
            }
            Some(r) => {
                let _ = writeln!(out, "  last run: {} ({}), {}", fmt(r.started_at), app::jobs::trigger_label(&r.trigger), app::jobs::outcome_label(r.outcome));
                for s in &r.steps {
                    let counts: Vec<String> = s.counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
                    let _ = writeln!(out, "    {:<22} {:<8} {}", s.step, s.status, counts.join(", "));
                }
            }
        }
        let _ = writeln!(out, "  next possible start: {}", view.next_possible_at.map(fmt).unwrap_or_else(|| "now".into()));
    }
    Ok(())
}

/// `ebb retention report [--json]`: the retention report, read now. Fails (exit 1) when items
/// are past their promise by more than one interval of their job, so a cron or monitor can use it.
pub async fn retention_report(state: &AppState, json: bool, out: &mut impl std::io::Write) -> Result<(), String> {
    let report = app::retention::report::compute(state).await.map_err(|e| format!("retention report failed: {e}"))?;
    if json {
        let text = serde_json::to_string_pretty(&report).map_err(|e| format!("retention report: {e}"))?;
        let _ = writeln!(out, "{text}");
    } else {
        let _ = writeln!(out, "Retention report, read at {}", fmt(report.generated_at));
        let _ = writeln!(out, "{:<32} {:>9} {:>12} {:>6} {:>6}  removed by", "data", "items", "oldest", "past", "held");
        for k in &report.kinds {
            let oldest = k.oldest_at.map(|t| app::retention::age_words((report.generated_at - t).whole_seconds())).unwrap_or_else(|| "-".into());
            let job = match (&k.job, &k.last_run) {
                (Some(j), Some(r)) => format!("{j}, last ran {}: {}", fmt(r.started_at), r.did),
                (Some(j), None) => format!("{j}, never ran"),
                _ => "-".into(),
            };
            let count = if k.count_estimated { format!("~{}", k.count) } else { k.count.to_string() };
            let _ = writeln!(out, "{:<32} {:>9} {:>12} {:>6} {:>6}  {job}", k.label, count, oldest, k.past_promise, k.held);
            let _ = writeln!(out, "    promise: {}", k.promise);
        }
        let _ = writeln!(out, "legal holds in force: {}", report.holds);
    }
    if report.overdue() > 0 {
        return Err(format!("{} items are past their promise by more than one job interval (see the report)", report.overdue()));
    }
    Ok(())
}

fn fmt(t: time::OffsetDateTime) -> String {
    let f = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute]:[second] UTC");
    t.to_offset(time::UtcOffset::UTC).format(&f).unwrap_or_default()
}

fn human(d: Duration) -> String {
    match d.as_secs() {
        s if s % 3600 == 0 => format!("{} hour(s)", s / 3600),
        s if s % 60 == 0 => format!("{} minute(s)", s / 60),
        s => format!("{s} s"),
    }
}
