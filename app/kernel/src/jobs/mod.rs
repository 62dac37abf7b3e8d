//! The lifecycle engine: one registry of claimed, best-effort, idempotent and bounded jobs
//! (design.md, "The one rule of lifecycle work"). The ticker, the CLI, the after-response layer,
//! the dashboard, the metrics and the run records all read the registry, so adding a job means
//! adding one entry (and its code) in the composition root (`app::jobs`). Domains define their
//! jobs (steps and budgets); here are the registry, one run of a job, and the triggers.

pub mod claim;

pub use common::jobs::*;

impl AppState {
    /// Every lifecycle job: the registry the composition root put into the state's parts
    /// (in a slot, so that the state's type does not depend on the engine's).
    pub fn jobs(&self) -> &Registry {
        self.domain::<Registry>()
    }

    /// Replaces the registry (tests run their own jobs).
    pub fn set_jobs(&mut self, jobs: Arc<Registry>) {
        self.parts.jobs = crate::state::Held::shared(jobs);
    }
}

impl crate::state::Part for Registry {
    type Slot = crate::state::slot::Jobs;
}

/// The prune job's name: several domains nudge it after their requests (new data may be due).
pub const PRUNE: &str = "prune";

use std::sync::{
    atomic::{AtomicBool, AtomicU64, Ordering},
    Arc, OnceLock,
};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use serde::Serialize;
use time::OffsetDateTime;

use crate::alerts::{self, AlertKind, AlertMessage};
use crate::state::AppState;

/// What asked for a run (recorded with it; traffic triggers get the job's small budget).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// After a contact form submission.
    Contact,
    /// After a sign-in attempt.
    Signin,
    /// When an admin opened the inbox.
    AdminInbox,
    /// After a share page, a download or the admin's share list.
    Shares,
    /// After any response, when this process's due check said the job may be due.
    Traffic,
    /// An admin pressed "Run now".
    Admin,
    /// The in-process ticker.
    Ticker,
    /// `ebb maintenance run`.
    Cli,
}

impl Trigger {
    /// The stable name stored in `maintenance_runs.trigger` and used as a metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Contact => "contact",
            Trigger::Signin => "signin",
            Trigger::AdminInbox => "admin_inbox",
            Trigger::Shares => "shares",
            Trigger::Traffic => "traffic",
            Trigger::Admin => "admin",
            Trigger::Ticker => "ticker",
            Trigger::Cli => "cli",
        }
    }

    /// Runs started by visitors' requests do a small amount of work in the background.
    pub fn is_traffic(self) -> bool {
        matches!(self, Trigger::Contact | Trigger::Signin | Trigger::AdminInbox | Trigger::Shares | Trigger::Traffic)
    }
}

/// How long a step may overrun the run's time budget before it is cut off.
pub const STEP_GRACE: Duration = Duration::from_secs(60);

/// How much one run may do: rows per step, and time for the whole run. A step stops at its row
/// bound with `more`; steps not started when the time is up are recorded as skipped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub rows_per_step: u64,
    pub time: Duration,
}

/// What a step did: named counts for the record, the rows it handled (against the budget), and
/// whether it stopped at its bound with work left.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StepReport {
    pub counts: Vec<(&'static str, u64)>,
    pub rows: u64,
    pub more: bool,
}

impl StepReport {
    /// A report of `rows` handled rows under the count name `name`.
    pub fn rows(name: &'static str, rows: u64) -> Self {
        StepReport { counts: vec![(name, rows)], rows, more: false }
    }

    /// Adds a named count (not counted against the budget).
    pub fn with(mut self, name: &'static str, n: u64) -> Self {
        self.counts.push((name, n));
        self
    }

    /// The count named `name` (0 when absent).
    pub fn get(&self, name: &str) -> u64 {
        self.counts.iter().find(|(n, _)| *n == name).map(|(_, v)| *v).unwrap_or(0)
    }
}

/// A step's failure; its text is kept server-side (log, run record, and the job's alert when it
/// has one).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct StepError {
    pub message: String,
    /// The rest of the run must not go on (its later steps are recorded as stopped): a check
    /// that the later steps rely on failed.
    pub stop: bool,
    /// Retrying will not help: a person must act (restore an object, fix partitions). The alert
    /// says so instead of "the next run retries".
    pub needs_person: bool,
}

impl StepError {
    /// A failed step; the run's other steps still run.
    pub fn new(message: impl Into<String>) -> Self {
        StepError { message: message.into(), stop: false, needs_person: false }
    }

    /// A failed check that stops the run: the later steps are not run.
    pub fn stop(message: impl Into<String>) -> Self {
        StepError { message: message.into(), stop: true, needs_person: false }
    }

    /// Marks the failure as one a person must resolve.
    pub fn for_a_person(mut self) -> Self {
        self.needs_person = true;
        self
    }
}

type Tally = Arc<std::sync::Mutex<Vec<(&'static str, u64)>>>;

tokio::task_local! {
    /// The counts of the step running in this task, as it goes ([`tally`]).
    static PROGRESS: Tally;
    /// The run and step running in this task ([`current_step`]).
    static CURRENT: (i64, &'static str);
}

/// The run id and step name of the step running in this task: a batch statement adds its counts
/// to `maintenance_run_counts` under them in the same statement (`kernel::prune::Doomed`), so a
/// killed run's record equals what it did. `None` outside a step (tests calling a step directly).
pub fn current_step() -> Option<(i64, &'static str)> {
    CURRENT.try_with(|c| *c).ok()
}

/// Adds `n` to the running step's count `name` as work is done (e.g. after each committed
/// batch). The engine writes these counts to the run's record while the step runs, and keeps
/// them when the step is cut off at the run's budget: work done is never lost from the record.
/// Outside a step (tests calling a step function directly) it does nothing.
pub fn tally(name: &'static str, n: u64) {
    let _ = PROGRESS.try_with(|p| add_count(&mut p.lock().unwrap_or_else(|e| e.into_inner()), name, n));
}

/// Adds `n` to the running step's count `name` in the caller's transaction, so the count commits
/// with the work it counts: a run killed right after has a record that includes it (the close of
/// an interrupted run reads these, as prune's batches write them in their own statement). Also
/// [`tally`]s it for the run's progress. Outside a step it does nothing.
pub async fn count(conn: &mut sqlx::PgConnection, name: &'static str, n: u64) -> Result<(), sqlx::Error> {
    tally(name, n);
    let Some((run, step)) = current_step().filter(|_| n > 0) else { return Ok(()) };
    sqlx::query(
        "insert into maintenance_run_counts (run_id, step, name, n) values ($1, $2, $3, $4)
         on conflict (run_id, step, name) do update set n = maintenance_run_counts.n + excluded.n",
    )
    .bind(run)
    .bind(step)
    .bind(name)
    .bind(i64::try_from(n).unwrap_or(i64::MAX))
    .execute(conn)
    .await?;
    Ok(())
}

fn add_count(counts: &mut Vec<(&'static str, u64)>, name: &'static str, n: u64) {
    match counts.iter_mut().find(|(k, _)| *k == name) {
        Some((_, v)) => *v += n,
        None => counts.push((name, n)),
    }
}

impl From<sqlx::Error> for StepError {
    fn from(e: sqlx::Error) -> Self {
        StepError::new(format!("database: {e}"))
    }
}

impl From<crate::storage::BlobError> for StepError {
    fn from(e: crate::storage::BlobError) -> Self {
        StepError::new(format!("storage: {e}"))
    }
}

/// What a step sees: the application, the run's database time, and its bounds.
#[derive(Clone)]
pub struct StepCtx {
    pub state: AppState,
    /// The database clock at the start of the run (cut-offs are computed from it).
    pub now: OffsetDateTime,
    pub trigger: Trigger,
    /// Rows this step may handle.
    pub rows: u64,
    deadline: Instant,
}

impl StepCtx {
    /// True once the run's time budget is spent: a step stops between batches and says `more`.
    pub fn out_of_time(&self) -> bool {
        Instant::now() >= self.deadline
    }

    /// When the run's time budget ends (steps that loop check it between batches).
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// A context for calling a step directly (tests, and code that reuses a step's logic).
    pub fn new(state: AppState, now: OffsetDateTime, trigger: Trigger, budget: Budget) -> Self {
        StepCtx { state, now, trigger, rows: budget.rows_per_step, deadline: Instant::now() + budget.time }
    }
}

type StepFn = dyn Fn(StepCtx) -> BoxFuture<'static, Result<StepReport, StepError>> + Send + Sync;

/// One named step of a job. Step names are declared once, by the domain that owns the step.
#[derive(Clone)]
pub struct Step {
    pub name: &'static str,
    /// What the step removes, for people (the dashboard); defaults to the name.
    pub label: &'static str,
    /// Started even when the run's time budget is spent (the step bounds itself and moves at
    /// least one item, so a backlog of any size makes progress every run).
    pub past_budget: bool,
    run: Arc<StepFn>,
}

impl Step {
    pub fn new<F, Fut>(name: &'static str, f: F) -> Self
    where
        F: Fn(StepCtx) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<StepReport, StepError>> + Send + 'static,
    {
        Step { name, label: name, past_budget: false, run: Arc::new(move |ctx| Box::pin(f(ctx))) }
    }

    /// Starts this step even when the run's time budget is spent ([`Step::past_budget`]).
    pub fn past_budget(mut self) -> Self {
        self.past_budget = true;
        self
    }

    /// Sets the label shown to people.
    pub fn labelled(mut self, label: &'static str) -> Self {
        self.label = label;
        self
    }
}

/// One lifecycle job: everything the ticker, the CLI, the dashboard and the metrics need.
#[derive(Clone)]
pub struct Job {
    /// Stable name (CLI argument, metric label, `maintenance_runs.job`).
    pub name: &'static str,
    /// Shown on the dashboard.
    pub title: &'static str,
    pub description: &'static str,
    /// The `settings` row holding the claim.
    pub claim_key: &'static str,
    /// At most one run per interval, across all instances.
    pub interval: Duration,
    /// Bounds of runs by the ticker, the CLI and admins.
    pub budget: Budget,
    /// Bounds of runs started by visitors' traffic (small: they run after a response).
    pub traffic_budget: Budget,
    pub steps: Vec<Step>,
    /// Raised (once per failed run, listing every failed step) when a run fails; resolved by a
    /// run that does not. Jobs without one alert after two failed runs in a row.
    pub alert: Option<AlertKind>,
    /// Raised while runs end cut off with work left (a backlog); resolved by a run that finishes.
    pub behind_alert: Option<AlertKind>,
    /// Runs the ticker started that succeeded are not written to the audit log (the audit seal:
    /// each such event would be one more to seal, and the log would never rest).
    pub quiet: bool,
    /// How long a step may overrun the run's budget before it is cut off (and the run recorded
    /// as failed). The background task that runs it has two of these beyond the budget, so the
    /// record is always written before that outer timeout drops the run.
    pub step_grace: Duration,
    runtime: Arc<Runtime>,
}

/// This process's view of a job: when it may next be due (no database access to ask), and
/// whether a run is in progress here.
#[derive(Default)]
struct Runtime {
    /// Milliseconds since [`process_start`] before which asking the claim is futile.
    next_due_ms: AtomicU64,
    running: AtomicBool,
}

fn process_start() -> Instant {
    static START: OnceLock<Instant> = OnceLock::new();
    *START.get_or_init(Instant::now)
}

fn process_ms() -> u64 {
    process_start().elapsed().as_millis() as u64
}

impl Job {
    pub fn new(name: &'static str, title: &'static str, description: &'static str, claim_key: &'static str, interval: Duration) -> Self {
        let budget = Budget { rows_per_step: 100_000, time: Duration::from_secs(30) };
        Job {
            name,
            title,
            description,
            claim_key,
            interval,
            budget,
            traffic_budget: budget,
            steps: Vec::new(),
            alert: None,
            behind_alert: None,
            quiet: false,
            step_grace: STEP_GRACE,
            runtime: Default::default(),
        }
    }

    /// Sets [`Job::step_grace`] (tests shorten it).
    pub fn step_grace(mut self, grace: Duration) -> Self {
        self.step_grace = grace;
        self
    }

    /// Every failed run raises `kind` at once (critical jobs: the archive).
    pub fn alert_on_failure(mut self, kind: AlertKind) -> Self {
        self.alert = Some(kind);
        self
    }

    /// Runs cut off with work left raise `kind`; a run that finishes everything resolves it.
    pub fn alert_when_behind(mut self, kind: AlertKind) -> Self {
        self.behind_alert = Some(kind);
        self
    }

    /// See [`Job::quiet`].
    pub fn quiet(mut self) -> Self {
        self.quiet = true;
        self
    }

    pub fn budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }

    pub fn traffic_budget(mut self, budget: Budget) -> Self {
        self.traffic_budget = budget;
        self
    }

    pub fn step(mut self, step: Step) -> Self {
        self.steps.push(step);
        self
    }

    /// True when this process's hint says the claim may be won now (never touches the database).
    pub fn maybe_due(&self) -> bool {
        process_ms() >= self.runtime.next_due_ms.load(Ordering::Relaxed)
    }

    /// Do not ask the claim again for `wait`.
    pub fn wait(&self, wait: Duration) {
        self.runtime.next_due_ms.store(process_ms() + wait.as_millis() as u64, Ordering::Relaxed);
    }

    /// Forget the hint: the next due check asks the claim.
    pub fn reset_hint(&self) {
        self.runtime.next_due_ms.store(0, Ordering::Relaxed);
    }
}

/// Every job, in order. Cheap to clone (jobs share their runtime state).
#[derive(Clone, Default)]
pub struct Registry {
    jobs: Vec<Job>,
}

impl Registry {
    pub fn new(jobs: Vec<Job>) -> Self {
        let mut names: Vec<&str> = jobs.iter().map(|j| j.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), jobs.len(), "job names must be unique");
        Registry { jobs }
    }

    pub fn jobs(&self) -> &[Job] {
        &self.jobs
    }

    pub fn get(&self, name: &str) -> Option<&Job> {
        self.jobs.iter().find(|j| j.name == name)
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.jobs.iter().map(|j| j.name).collect()
    }

    /// Replaces a job's steps (tests sabotage or slow a step this way).
    pub fn set_steps(&mut self, name: &str, steps: Vec<Step>) {
        if let Some(job) = self.jobs.iter_mut().find(|j| j.name == name) {
            job.steps = steps;
        }
    }

    /// Changes a job's budgets and interval (tests).
    pub fn configure(&mut self, name: &str, f: impl FnOnce(&mut Job)) {
        if let Some(job) = self.jobs.iter_mut().find(|j| j.name == name) {
            f(job);
        }
    }
}

/// One step's outcome in a run (stored as JSON in `maintenance_runs.steps`).
#[derive(Debug, Clone, Serialize)]
pub struct StepRecord {
    pub step: &'static str,
    pub status: StepStatus,
    pub counts: Vec<(&'static str, u64)>,
    pub more: bool,
    /// Kept server-side: the run record and the log, never the browser.
    pub error: Option<String>,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Ok,
    /// At least one step failed; the others still ran.
    Failed,
    /// The time or row budget ended the run before all its work was done; the next run goes on.
    CutOff,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Failed => "failed",
            Outcome::CutOff => "cut_off",
        }
    }
}

impl From<Outcome> for RunState {
    fn from(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Ok => RunState::Ok,
            Outcome::Failed => RunState::Failed,
            Outcome::CutOff => RunState::CutOff,
        }
    }
}

/// How often a run writes its progress to its record and proves it still holds its lease.
pub const HEARTBEAT: Duration = Duration::from_secs(5);

/// What one run did.
#[derive(Debug, Clone)]
pub struct RunRecord {
    pub job: &'static str,
    pub trigger: Trigger,
    pub started_at: OffsetDateTime,
    pub outcome: Outcome,
    pub steps: Vec<StepRecord>,
}

impl RunRecord {
    pub fn step(&self, name: &str) -> Option<&StepRecord> {
        self.steps.iter().find(|s| s.step == name)
    }
}

/// The answer to asking for a run.
#[derive(Debug, Clone)]
pub enum RunOutcome {
    /// The claim is held: a run happened less than an interval ago.
    NotDue { next_possible_at: Option<OffsetDateTime> },
    /// A run is in progress (here, or on another instance holding the lease).
    Busy,
    /// This caller ran the job.
    Ran(RunRecord),
}

/// Clears the local running flag however the run ends (also when its future is dropped).
struct Running<'a>(&'a AtomicBool);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// Runs `job` if its lease and claim are won (the claim is taken regardless of its age when
/// `force`), records the run, updates metrics and alerts. `Err` only when the engine itself could
/// not reach the database; a failing step is recorded in the run, not returned as an error.
pub async fn run_job(state: &AppState, job: &Job, trigger: Trigger, force: bool) -> Result<RunOutcome, sqlx::Error> {
    run_job_as(state, job, trigger, force, crate::audit::Actor::system()).await
}

/// [`run_job`], its audit event recorded with `actor` (the admin who pressed "Run now"): one
/// event per run, in the transaction that closes its record.
pub async fn run_job_as(state: &AppState, job: &Job, trigger: Trigger, force: bool, actor: crate::audit::Actor) -> Result<RunOutcome, sqlx::Error> {
    // A run already going in this process: traffic and the ticker give up at once (the next
    // tick comes); the CLI and an admin's "Run now" (a background task of its own) wait for it
    // (up to one budget) and then ask the claim themselves, so a person gets an answer about
    // their own request.
    let patience = if matches!(trigger, Trigger::Cli | Trigger::Admin) { job.budget.time } else { Duration::ZERO };
    let waiting = Instant::now();
    while job.runtime.running.compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire).is_err() {
        if waiting.elapsed() >= patience {
            return Ok(RunOutcome::Busy);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let _running = Running(&job.runtime.running);
    let Some(lease) = claim::try_lease(&state.pool, job.name).await? else {
        job.wait(job.interval.min(Duration::from_secs(60)));
        return Ok(RunOutcome::Busy);
    };
    let mut lease = lease;
    let outcome = run_leased(state, job, trigger, force, &mut lease, &actor).await;
    lease.release().await;
    outcome
}

async fn run_leased(
    state: &AppState,
    job: &Job,
    trigger: Trigger,
    force: bool,
    lease: &mut claim::Lease,
    actor: &crate::audit::Actor,
) -> Result<RunOutcome, sqlx::Error> {
    let started_at = if force {
        claim::force_claim(&state.pool, job.claim_key).await?
    } else {
        match claim::try_claim(&state.pool, job.claim_key, job.interval).await? {
            Some(at) => at,
            None => {
                let next = claim::next_claim(&state.pool, job.claim_key, job.interval).await?;
                let wait = next.map(|(_, wait)| wait).unwrap_or(Duration::ZERO);
                job.wait(wait.max(Duration::from_secs(1)));
                tracing::debug!(job = job.name, "not due");
                return Ok(RunOutcome::NotDue { next_possible_at: next.map(|(at, _)| at) });
            }
        }
    };
    job.wait(job.interval);
    // Holding the lease: a record still `running` is of a run that died (SIGKILL, a lost host).
    close_interrupted(state, job).await?;
    let budget = if trigger.is_traffic() { job.traffic_budget } else { job.budget };
    let clock = Instant::now();
    let ctx = StepCtx::new(state.clone(), started_at, trigger, budget);
    let run_id = open_run(state, job, trigger, started_at).await?;
    let (steps, needs_person) = run_steps(state, job, &ctx, budget, run_id, lease).await;
    let outcome = outcome_of(&steps);
    let rows: Vec<(&str, &str, u64)> = steps.iter().flat_map(|s| s.counts.iter().filter(|(_, n)| *n > 0).map(|(c, n)| (s.step, *c, *n))).collect();
    close_run(state, job, trigger, actor, run_id, outcome, &steps, &rows).await?;
    state.live.touch(common::live::Topic::Job, Some(job.name.to_string()));
    let seconds = clock.elapsed().as_secs_f64();
    metrics::counter!("ebb_job_runs_total", "job" => job.name, "trigger" => trigger.as_str(), "outcome" => outcome.as_str()).increment(1);
    metrics::histogram!("ebb_job_duration_seconds", "job" => job.name).record(seconds);
    // A quiet run (nothing to do) is not news: the share GC runs every minute.
    if rows.is_empty() && outcome == Outcome::Ok {
        tracing::debug!(job = job.name, trigger = trigger.as_str(), seconds, "job ran; nothing to do");
    } else {
        tracing::info!(job = job.name, trigger = trigger.as_str(), outcome = outcome.as_str(), seconds, counts = ?rows, "job run recorded");
    }
    match job.alert {
        Some(kind) => raise_or_resolve(state, job, kind, outcome, &steps, needs_person).await?,
        None => check_failing_twice(state, job, outcome).await?,
    }
    if let Some(kind) = job.behind_alert {
        behind_or_caught_up(state, job, kind, outcome, &steps).await?;
    }
    Ok(RunOutcome::Ran(RunRecord { job: job.name, trigger, started_at, outcome, steps }))
}

/// Writes the run's record as `running` before any step starts, so a run that dies is found
/// (and closed as interrupted) by the next one.
async fn open_run(state: &AppState, job: &Job, trigger: Trigger, started_at: OffsetDateTime) -> Result<i64, sqlx::Error> {
    let run_id = sqlx::query_scalar!(
        r#"insert into maintenance_runs (job, trigger, started_at, finished_at, ok, steps, outcome)
           values ($1, $2, $3, null, true, '[]', 'running') returning id"#,
        job.name,
        trigger.as_str(),
        started_at,
    )
    .fetch_one(&state.pool)
    .await?;
    // Dashboards show the run from its start, and its progress as it goes.
    state.live.touch(common::live::Topic::Job, Some(job.name.to_string()));
    Ok(run_id)
}

/// Runs the job's steps in order, each recorded: after a step that stops the run the rest are
/// `stopped`; once the lease is lost, or the time budget is spent, the rest are `skipped` (save
/// the `past_budget` ones while the lease is held). Also says whether a failure needs a person.
async fn run_steps(state: &AppState, job: &Job, ctx: &StepCtx, budget: Budget, run_id: i64, lease: &mut claim::Lease) -> (Vec<StepRecord>, bool) {
    let mut steps: Vec<StepRecord> = Vec::with_capacity(job.steps.len());
    let mut stopped_by: Option<&'static str> = None;
    let mut lease_lost = false;
    let mut needs_person = false;
    for step in &job.steps {
        if let Some(by) = stopped_by {
            steps.push(StepRecord {
                step: step.name,
                status: StepStatus::Stopped,
                counts: Vec::new(),
                more: true,
                error: Some(format!("not run: step {by} stopped the run")),
            });
            continue;
        }
        if lease_lost || (ctx.out_of_time() && !step.past_budget) {
            steps.push(StepRecord { step: step.name, status: StepStatus::Skipped, counts: Vec::new(), more: true, error: None });
            continue;
        }
        let tally: Tally = Default::default();
        let record = run_step(state, job, step, ctx, budget, run_id, &steps, &tally, lease, &mut lease_lost).await;
        if let Some(e) = &record.1 {
            if e.stop {
                stopped_by = Some(step.name);
            }
            needs_person |= e.needs_person;
        }
        steps.push(record.0);
    }
    (steps, needs_person)
}

fn outcome_of(steps: &[StepRecord]) -> Outcome {
    if steps.iter().any(|s| s.status == StepStatus::Failed) {
        Outcome::Failed
    } else if steps.iter().any(|s| s.more || s.status != StepStatus::Done) {
        // Stopped by the time budget or by the row budget with work left.
        Outcome::CutOff
    } else {
        Outcome::Ok
    }
}

/// Finishes the run's record and writes its audit event in one transaction, so a run is never
/// closed without its event (nor the event written for a run still open).
#[allow(clippy::too_many_arguments)]
async fn close_run(
    state: &AppState,
    job: &Job,
    trigger: Trigger,
    actor: &crate::audit::Actor,
    run_id: i64,
    outcome: Outcome,
    steps: &[StepRecord],
    rows: &[(&str, &str, u64)],
) -> Result<(), sqlx::Error> {
    let errors: Vec<String> =
        steps.iter().filter(|s| s.status == StepStatus::Failed).filter_map(|s| s.error.as_ref().map(|e| format!("{}: {e}", s.step))).collect();
    let mut tx = state.pool.begin().await?;
    // Closed once: a holder that froze while another instance took over and closed this run as
    // `interrupted` records nothing more (a second close would count its rows twice).
    let closed = sqlx::query!(
        r#"update maintenance_runs set finished_at = clock_timestamp(), ok = $2, steps = $3, outcome = $4, error = $5
            where id = $1 and outcome = 'running'"#,
        run_id,
        outcome != Outcome::Failed,
        serde_json::to_value(steps).unwrap_or_default(),
        outcome.as_str(),
        (!errors.is_empty()).then(|| errors.join("; ")),
    )
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if closed == 0 {
        tracing::warn!(
            job = job.name,
            run.id = run_id,
            "this run was closed by another instance meanwhile (it lost its lease); nothing more is recorded for it"
        );
        return Ok(());
    }
    // The audit log keeps runs that did something, failed, or were asked for (a quiet share GC
    // run every minute is not news).
    if (!rows.is_empty() && !job.quiet) || outcome != Outcome::Ok || matches!(trigger, Trigger::Cli | Trigger::Admin) {
        let counts: Vec<String> = rows.iter().map(|(step, c, n)| format!("{step}.{c}={n}")).collect();
        let detail = format!("{} ({}){}{}", outcome.as_str(), trigger.as_str(), if counts.is_empty() { "" } else { ": " }, counts.join(", "));
        crate::audit::record(&mut tx, actor, crate::audit::AuditKind::MaintenanceRun, Some(("job", job.name)), Some(&detail)).await?;
    }
    tx.commit().await
}

/// Runs one step: its counts written to the run's record every [`HEARTBEAT`] while it runs (the
/// lease proven at the same time), cut off — counts kept — when it overruns the run's budget by
/// the job's grace, or when the lease is lost (the job may be running elsewhere now).
#[allow(clippy::too_many_arguments)]
async fn run_step(
    state: &AppState,
    job: &Job,
    step: &Step,
    ctx: &StepCtx,
    budget: Budget,
    run_id: i64,
    done: &[StepRecord],
    tally: &Tally,
    lease: &mut claim::Lease,
    lease_lost: &mut bool,
) -> (StepRecord, Option<StepError>) {
    let counts_so_far = || tally.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let fut = CURRENT.scope((run_id, step.name), PROGRESS.scope(tally.clone(), (step.run)(ctx.clone())));
    tokio::pin!(fut);
    let cut_at = tokio::time::Instant::from_std(ctx.deadline() + job.step_grace);
    let mut beat = tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let result = loop {
        tokio::select! {
            r = &mut fut => break Some(r),
            _ = tokio::time::sleep_until(cut_at) => break None,
            _ = beat.tick() => {
                if let Err(e) = lease.beat().await {
                    tracing::warn!(job = job.name, step = step.name, error = %e, "job lease lost (its connection ended): the run stops here");
                    *lease_lost = true;
                    break None;
                }
                let mut snapshot: Vec<StepRecord> = done.to_vec();
                snapshot.push(StepRecord { step: step.name, status: StepStatus::Running, counts: counts_so_far(), more: true, error: None });
                match save_progress(&state.pool, run_id, &snapshot).await {
                    Ok(()) => state.live.touch(common::live::Topic::Job, Some(job.name.to_string())),
                    Err(e) => tracing::warn!(job = job.name, error = %e, "could not write a run's progress; the run goes on"),
                }
            }
        }
    };
    match result {
        Some(Ok(mut report)) => {
            tracing::debug!(job = job.name, step = step.name, rows = report.rows, more = report.more, counts = ?report.counts, "job step done");
            // Counts tallied as the step went and not in its report are kept too.
            for (name, n) in counts_so_far() {
                if !report.counts.iter().any(|(k, _)| *k == name) {
                    report.counts.push((name, n));
                }
            }
            for (name, n) in &report.counts {
                metrics::counter!("ebb_job_step_rows_total", "job" => job.name, "step" => step.name, "count" => *name).increment(*n);
            }
            (StepRecord { step: step.name, status: StepStatus::Done, counts: report.counts, more: report.more, error: None }, None)
        }
        Some(Err(e)) => {
            tracing::warn!(job = job.name, step = step.name, error = %e, stops_run = e.stop, "job step failed");
            metrics::counter!("ebb_job_step_failures_total", "job" => job.name, "step" => step.name).increment(1);
            (StepRecord { step: step.name, status: StepStatus::Failed, counts: counts_so_far(), more: true, error: Some(e.message.clone()) }, Some(e))
        }
        None => {
            let why = if *lease_lost {
                "stopped: the job's lease was lost (another instance may run it now)".to_string()
            } else {
                format!("cut off at the run's time budget ({} s); the next run goes on", budget.time.as_secs())
            };
            tracing::warn!(job = job.name, step = step.name, "job step {why}");
            let counts = counts_so_far();
            for (name, n) in &counts {
                metrics::counter!("ebb_job_step_rows_total", "job" => job.name, "step" => step.name, "count" => *name).increment(*n);
            }
            (StepRecord { step: step.name, status: StepStatus::CutOff, counts, more: true, error: Some(why) }, None)
        }
    }
}

async fn save_progress(pool: &sqlx::PgPool, run_id: i64, steps: &[StepRecord]) -> Result<(), sqlx::Error> {
    sqlx::query!("update maintenance_runs set steps = $2 where id = $1 and outcome = 'running'", run_id, serde_json::to_value(steps).unwrap_or_default())
        .execute(pool)
        .await?;
    Ok(())
}

/// Closes the records of `job`'s runs that never finished (the process died, or lost its lease):
/// `interrupted`, with the counts they had written, and an audit event saying what they did.
/// Called with the lease held, so no such run is still going.
async fn close_interrupted(state: &AppState, job: &Job) -> Result<(), sqlx::Error> {
    let mut tx = state.pool.begin().await?;
    let closed = sqlx::query!(
        "update maintenance_runs set outcome = 'interrupted', ok = false, finished_at = clock_timestamp(),
             error = 'the run ended without finishing (the process stopped or lost its lease); its counts are what it had recorded'
         where job = $1 and outcome = 'running' returning id, trigger, steps",
        job.name
    )
    .fetch_all(&mut *tx)
    .await?;
    for run in &closed {
        // What its batches saved as they committed (exact) over what the heartbeat last wrote.
        let saved: Vec<(String, String, i64)> =
            sqlx::query_as("select step, name, n from maintenance_run_counts where run_id = $1 order by step, name").bind(run.id).fetch_all(&mut *tx).await?;
        let steps = with_saved_counts(run.steps.clone(), &saved);
        sqlx::query("update maintenance_runs set steps = $2 where id = $1").bind(run.id).bind(&steps).execute(&mut *tx).await?;
        let counts: Vec<String> = steps
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|s| {
                let step = s["step"].as_str().unwrap_or_default().to_owned();
                s["counts"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(move |p| Some(format!("{step}.{}={}", p[0].as_str()?, p[1].as_u64().filter(|n| *n > 0)?)))
                    .collect::<Vec<_>>()
            })
            .collect();
        let detail = format!("interrupted ({}){}{}", run.trigger, if counts.is_empty() { "" } else { ": " }, counts.join(", "));
        crate::audit::record(&mut tx, &crate::audit::Actor::system(), crate::audit::AuditKind::MaintenanceRun, Some(("job", job.name)), Some(&detail)).await?;
        tracing::warn!(job = job.name, run = run.id, "a run of this job ended without finishing; its record is closed as interrupted");
    }
    tx.commit().await
}

/// A run record's steps (JSON) with the counts its batches saved: each saved count replaces a
/// smaller one the heartbeat wrote; a step the heartbeat never wrote is added as running.
fn with_saved_counts(mut steps: serde_json::Value, saved: &[(String, String, i64)]) -> serde_json::Value {
    use serde_json::{json, Value};
    if !steps.is_array() {
        steps = json!([]);
    }
    let list = steps.as_array_mut().expect("an array");
    for (step, name, n) in saved {
        let at = match list.iter().position(|s| s["step"] == step.as_str()) {
            Some(at) => at,
            None => {
                list.push(json!({ "step": step, "status": "running", "counts": [], "more": true, "error": null }));
                list.len() - 1
            }
        };
        if !list[at]["counts"].is_array() {
            list[at]["counts"] = json!([]);
        }
        let counts = list[at]["counts"].as_array_mut().expect("an array");
        match counts.iter_mut().find(|c| c[0] == name.as_str()) {
            Some(c) => c[1] = Value::from(c[1].as_i64().unwrap_or(0).max(*n)),
            None => counts.push(json!([name, n])),
        }
    }
    steps
}

/// A critical job's alert: raised by a failed run — a short headline naming the failed steps and
/// who must act, every step's error in its details — and resolved by a run that did not fail.
async fn raise_or_resolve(state: &AppState, job: &Job, kind: AlertKind, outcome: Outcome, steps: &[StepRecord], needs_person: bool) -> Result<(), sqlx::Error> {
    match outcome {
        Outcome::Ok => return alerts::resolve(&state.pool, kind, job.name).await,
        // Cut off: some steps did not run, so the run proves nothing either way.
        Outcome::CutOff => return Ok(()),
        Outcome::Failed => {}
    }
    let failed: Vec<String> = steps.iter().filter(|s| s.status == StepStatus::Failed).map(|s| s.step.to_string()).collect();
    let (job_name, title) = (job.name.to_string(), job.title.to_string());
    let message = if needs_person {
        AlertMessage::JobNeedsPerson { job: job_name, title, steps: failed }
    } else {
        AlertMessage::JobFailed { job: job_name, title, steps: failed }
    };
    let details: Vec<String> = steps
        .iter()
        .filter(|s| s.status != StepStatus::Done)
        .map(|s| format!("{} ({}): {}", s.step, s.status.as_str(), s.error.as_deref().unwrap_or("not reached: the run's time budget was spent")))
        .collect();
    alerts::raise_detailed(&state.pool, kind, job.name, &message, &details.join("\n")).await
}

/// A job with a backlog alert: a run cut off with work left raises it (it names what is left);
/// a run that finished everything resolves it. A failed run changes nothing here.
async fn behind_or_caught_up(state: &AppState, job: &Job, kind: AlertKind, outcome: Outcome, steps: &[StepRecord]) -> Result<(), sqlx::Error> {
    match outcome {
        Outcome::Ok => alerts::resolve(&state.pool, kind, job.name).await,
        Outcome::Failed => Ok(()),
        Outcome::CutOff => {
            let left: Vec<String> = steps.iter().filter(|s| s.more || s.status != StepStatus::Done).map(|s| s.step.to_string()).collect();
            let message = AlertMessage::JobBehind { job: job.name.into(), title: job.title.into(), steps: left };
            let details: Vec<String> = steps
                .iter()
                .map(|s| {
                    let counts: Vec<String> = s.counts.iter().map(|(k, v)| format!("{k} {v}")).collect();
                    format!("{} ({}){}: {}", s.step, s.status.as_str(), if s.more { ", more left" } else { "" }, counts.join(", "))
                })
                .collect();
            alerts::raise_detailed(&state.pool, kind, job.name, &message, &details.join("\n")).await
        }
    }
}

/// Records a run of `job` that could not start (`ebb maintenance run` while the storage check
/// fails, say) and alerts at once: an operator driving jobs from their own scheduler hears of it
/// on the dashboard, not only in a cron mail. Every step is recorded as stopped with `why`.
pub async fn record_not_started(state: &AppState, job: &Job, trigger: Trigger, why: &str) -> Result<(), sqlx::Error> {
    let steps: Vec<StepRecord> = job
        .steps
        .iter()
        .map(|s| StepRecord { step: s.name, status: StepStatus::Stopped, counts: Vec::new(), more: true, error: Some(format!("not run: {why}")) })
        .collect();
    let mut tx = state.pool.begin().await?;
    sqlx::query!(
        r#"insert into maintenance_runs (job, trigger, started_at, finished_at, ok, steps, outcome, error)
           values ($1, $2, clock_timestamp(), clock_timestamp(), false, $3, 'failed', $4)"#,
        job.name,
        trigger.as_str(),
        serde_json::to_value(&steps).unwrap_or_default(),
        format!("could not start: {why}"),
    )
    .execute(&mut *tx)
    .await?;
    crate::audit::record(
        &mut tx,
        &crate::audit::Actor::system(),
        crate::audit::AuditKind::MaintenanceRun,
        Some(("job", job.name)),
        Some(&format!("failed ({}): could not start", trigger.as_str())),
    )
    .await?;
    tx.commit().await?;
    metrics::counter!("ebb_job_runs_total", "job" => job.name, "trigger" => trigger.as_str(), "outcome" => Outcome::Failed.as_str()).increment(1);
    let message = AlertMessage::JobNeedsPerson { job: job.name.into(), title: job.title.into(), steps: vec!["start".into()] };
    alerts::raise_detailed(&state.pool, job.alert.unwrap_or(AlertKind::JobFailing), job.name, &message, why).await
}

/// A job failing twice in a row raises an alert; a run that does not fail resolves it.
async fn check_failing_twice(state: &AppState, job: &Job, outcome: Outcome) -> Result<(), sqlx::Error> {
    if outcome != Outcome::Failed {
        return alerts::resolve(&state.pool, AlertKind::JobFailing, job.name).await;
    }
    let last_two = sqlx::query_scalar!("select outcome from maintenance_runs where job = $1 order by started_at desc, id desc limit 2", job.name)
        .fetch_all(&state.pool)
        .await?;
    if last_two.len() == 2 && last_two.iter().all(|o| o == "failed") {
        alerts::raise(&state.pool, AlertKind::JobFailing, job.name, &AlertMessage::JobFailing { job: job.name.into(), title: job.title.into() }).await?;
    }
    Ok(())
}

/// Best-effort, after a response: runs `job` in a tracked background task if this process's hint
/// says it may be due (no database access otherwise). Never affects the response.
pub fn nudge(state: &AppState, job: &Job, trigger: Trigger) {
    if !job.maybe_due() {
        return;
    }
    // Pessimistic until the run answers: concurrent requests do not all start a claim attempt.
    job.wait(Duration::from_secs(60));
    spawn_run(state, job, trigger);
}

/// Starts a run of `job` in a tracked background task (the after-response check and the ticker).
/// A failed run is recorded with its steps; here it also counts as a failed task.
pub fn spawn_run(state: &AppState, job: &Job, trigger: Trigger) {
    let (state2, job2) = (state.clone(), job.clone());
    // A job whose run may take longer than an ordinary best-effort task gets its budget and a
    // minute more (steps stop between batches at the budget; the timeout is the backstop).
    let budget = if trigger.is_traffic() { job.traffic_budget.time } else { job.budget.time };
    state.background.spawn_with_timeout(job.name, budget + job.step_grace * 2, async move {
        match run_job(&state2, &job2, trigger, false).await {
            Ok(RunOutcome::Ran(run)) if run.outcome == Outcome::Failed => Err(format!("{}: steps failed", job2.name)),
            Ok(_) => Ok(()),
            Err(e) => Err(format!("{}: {e}", job2.name)),
        }
    });
}

/// Nudges the job named `name` (the existing traffic triggers: contact, sign-in, inbox, shares).
pub fn nudge_named(state: &AppState, name: &str, trigger: Trigger) {
    if let Some(job) = state.jobs().get(name) {
        nudge(state, job, trigger);
    }
}

/// After any response: nudges every job that may be due (the design card's "after each response";
/// free when nothing is due).
pub fn nudge_all(state: &AppState) {
    for job in state.jobs().jobs() {
        nudge(state, job, Trigger::Traffic);
    }
}

/// A recorded run, read back for the dashboard.
pub async fn last_run(pool: &sqlx::PgPool, job: &str) -> Result<Option<RunView>, sqlx::Error> {
    let row = sqlx::query!(
        r#"select started_at, coalesce(finished_at, clock_timestamp()) as "finished_at!", trigger, outcome, steps from maintenance_runs
           where job = $1 order by started_at desc, id desc limit 1"#,
        job
    )
    .fetch_optional(pool)
    .await?;
    // "Running" while nobody holds the job's lease: its process is gone (the next run closes the
    // record as interrupted); shown as such now, not as running.
    let outcome = match row.as_ref().map(|r| RunState::parse(&r.outcome).unwrap_or(RunState::Failed)) {
        Some(RunState::Running) if !claim::lease_held(pool, job).await? => Some(RunState::Interrupted),
        other => other,
    };
    Ok(row.map(|r| RunView {
        started_at: r.started_at,
        finished_at: r.finished_at,
        trigger: r.trigger,
        // The column's check constraint allows only the known outcomes.
        outcome: outcome.unwrap_or(RunState::Failed),
        steps: r
            .steps
            .as_array()
            .map(|steps| {
                steps
                    .iter()
                    .map(|s| StepView {
                        step: s["step"].as_str().unwrap_or_default().to_owned(),
                        label: s["step"].as_str().unwrap_or_default().to_owned(),
                        status: s["status"].as_str().and_then(StepStatus::parse).unwrap_or(if s["error"].is_string() {
                            StepStatus::Failed
                        } else {
                            StepStatus::Done
                        }),
                        counts: match &s["counts"] {
                            serde_json::Value::Array(pairs) => pairs.iter().filter_map(|p| Some((p[0].as_str()?.to_owned(), p[1].as_u64()?))).collect(),
                            // Runs recorded before the engine: `{"step": …, "deleted": n}`.
                            _ => s["deleted"].as_u64().map(|n| vec![("deleted".to_owned(), n)]).unwrap_or_default(),
                        },
                        more: s["more"].as_bool().unwrap_or(false),
                    })
                    .collect()
            })
            .unwrap_or_default(),
    }))
}

/// A job at a glance, for the dashboard and `ebb maintenance status`.
pub async fn view(pool: &sqlx::PgPool, job: &Job) -> Result<JobView, sqlx::Error> {
    let mut last_run = last_run(pool, job.name).await?;
    if let Some(run) = last_run.as_mut() {
        for s in &mut run.steps {
            s.label = job.steps.iter().find(|st| st.name == s.step).map(|st| st.label.to_owned()).unwrap_or_else(|| s.step.clone());
        }
    }
    Ok(JobView {
        name: job.name.to_owned(),
        title: job.title.to_owned(),
        description: job.description.to_owned(),
        interval_secs: job.interval.as_secs(),
        last_run,
        next_possible_at: claim::next_possible_at(pool, job.claim_key, job.interval).await?,
    })
}
