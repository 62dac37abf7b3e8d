//! Group commit for contact submissions: the submissions that arrive while a statement runs are
//! written together by the next one ([`db::submit_batch`]), so under load the database pays
//! one round trip and one commit for many submissions instead of one each.
//!
//! A submission is answered only after the statement that holds it has committed (or failed):
//! batching never acknowledges anything that is not stored, and a process killed mid-batch
//! loses only unanswered submissions, all or none of a batch. The rate limit stays exact across
//! instances (see [`db::submit_batch`]).

use std::sync::{
    atomic::{AtomicU64, Ordering},
    Arc, OnceLock,
};

use std::time::{Duration, Instant};

use sqlx::{PgConnection, PgPool};
use tokio::sync::{mpsc, oneshot, Mutex};

use super::db::{self, Submission, Submitted};

/// Most submissions in one statement.
pub const MAX_BATCH: usize = 64;
/// Submissions that may wait for a writer before callers wait to enqueue (back-pressure).
const QUEUE: usize = 1024;

/// Why a submission was not written. Shared: one failed statement fails its whole batch.
pub type WriteError = Arc<sqlx::Error>;

struct Job {
    submission: Submission,
    reply: oneshot::Sender<Result<Submitted, WriteError>>,
}

/// The contact form's writers: a queue and the threads that each take what is waiting and write
/// it in one statement. Started on first use; they end when the pool is closed or the writer
/// dropped.
pub struct Writer {
    pool: PgPool,
    /// How many statements may run at once ([`Writer::new`]).
    writers: usize,
    queue: OnceLock<mpsc::Sender<Job>>,
    statements: Arc<AtomicU64>,
}

impl kernel::state::Part for Writer {
    type Slot = kernel::state::slot::ContactWriter;
}

impl Writer {
    /// One writer: while its statement runs, the next batch fills. Measured (`make bench`,
    /// contact at 32 connections, 2 cores, when the writers were tasks on the request runtime
    /// with the pool's connections; see [`run`] for what the writer's own thread added): one
    /// writer 10,500–10,900 submissions/s, two
    /// 8,200–8,600, three 6,900, four 6,300. The statement's cost is mostly per statement, so
    /// fewer, larger batches do more with the same CPU; a second writer only halves the batches.
    /// Neither does a second writer that starts only once a batch's worth waits while the first
    /// runs (`BENCH_ONLY=contact benches/run.sh`, alternated, same build): one writer 8,377 /
    /// 8,945 / 9,376 / 8,708 per second; two at a threshold of 12 waiting 7,399 / 7,697, of 24
    /// 5,997 / 6,013, of 32 7,155 / 5,848.
    pub fn new(pool: PgPool) -> Self {
        Self::with_writers(pool, 1)
    }

    /// `writers` statements at once (at least one): what several instances do together, which
    /// the tests use to show that concurrent statements keep every guarantee.
    pub fn with_writers(pool: PgPool, writers: usize) -> Self {
        Writer { pool, writers: writers.max(1), queue: OnceLock::new(), statements: Arc::default() }
    }

    fn queue(&self) -> &mpsc::Sender<Job> {
        self.queue.get_or_init(|| {
            let (tx, rx) = mpsc::channel(QUEUE);
            let rx = Arc::new(Mutex::new(rx));
            for n in 0..self.writers {
                let (pool, rx, statements) = (self.pool.clone(), rx.clone(), self.statements.clone());
                std::thread::Builder::new()
                    .name(format!("contact-writer-{n}"))
                    .spawn(move || {
                        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("the writer's runtime");
                        rt.block_on(run(pool, rx, statements));
                    })
                    .expect("the writer's thread");
            }
            tx
        })
    }

    /// How many batch statements the writers have sent so far.
    pub fn statements(&self) -> u64 {
        self.statements.load(Ordering::Relaxed)
    }

    /// Counts the submission's hit and stores it when it is within its client's limit, together
    /// with whatever else is waiting. Returns once its statement has committed.
    pub async fn submit(&self, submission: Submission) -> Result<Submitted, WriteError> {
        let (reply, answer) = oneshot::channel();
        let gone = || Arc::new(sqlx::Error::WorkerCrashed);
        self.queue().send(Job { submission, reply }).await.map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }
}

/// Moves what is waiting into `jobs`, up to a full batch.
fn drain(rx: &mut mpsc::Receiver<Job>, jobs: &mut Vec<Job>) {
    while jobs.len() < MAX_BATCH {
        match rx.try_recv() {
            Ok(job) => jobs.push(job),
            Err(_) => break,
        }
    }
}

/// A writer's own connection is checked (a ping) before use once it has been idle this long;
/// under load it never is.
const CHECK_AFTER: Duration = Duration::from_secs(1);
/// How a writer's own connection shows in `pg_stat_activity`.
pub const APPLICATION_NAME: &str = "ebb-contact-writer";
/// Longest wait for the writer's own connection to open (or answer its check), as the pool's
/// acquire timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Longest a batch's statement may run on the server.
const STATEMENT_TIMEOUT: &str = "10s";
/// A writer closes its own connection after this long without a submission.
const IDLE_CLOSE: Duration = Duration::from_secs(60);

/// One writer, on its own thread and runtime: waits for a submission, takes everything else
/// waiting with it, writes them in one statement and answers each.
///
/// It has its own connection, opened on its own runtime, rather than one of the pool's: the
/// statement's answer then wakes this thread at once, instead of waiting for one of the request
/// workers to poll the pool's sockets between requests. The writer is the one serial step of a
/// submission, so that wait was paid by every submission in the batch (measured with
/// `BENCH_ONLY=contact benches/run.sh`: 14,400–14,900 submissions/s on the pool's connection,
/// 16,100–17,300/s on its own). The connection is outside the pool's size
/// (`EBB_DB_MAX_CONNECTIONS`), named [`APPLICATION_NAME`], checked with a ping when it was idle, closed after
/// [`IDLE_CLOSE`] without submissions, and closed when the pool is (as a test's is when it
/// ends), after what is queued is written.
async fn run(pool: PgPool, rx: Arc<Mutex<mpsc::Receiver<Job>>>, statements: Arc<AtomicU64>) {
    use sqlx::Connection as _;
    // Bounded like the pool's: a database that does not answer fails the submissions waiting
    // (503, nothing lost: the visitor is told to send again) instead of holding them.
    let options = (*pool.connect_options()).clone().application_name(APPLICATION_NAME).options([("statement_timeout", STATEMENT_TIMEOUT)]);
    let mut conn: Option<PgConnection> = None;
    let mut used = Instant::now();
    let mut jobs: Vec<Job> = Vec::with_capacity(MAX_BATCH);
    loop {
        if conn.is_some() {
            // Another writer is collecting: do not wait for it here.
            if let Ok(mut rx) = rx.try_lock() {
                drain(&mut rx, &mut jobs);
            }
        }
        if jobs.is_empty() {
            let mut rx = rx.lock().await;
            let idle = tokio::time::sleep_until((used + IDLE_CLOSE).into());
            tokio::select! {
                biased;
                job = rx.recv() => match job {
                    Some(job) => jobs.push(job),
                    None => break,
                },
                _ = pool.close_event() => break,
                _ = idle, if conn.is_some() => {
                    if let Some(c) = conn.take() {
                        let _ = c.close().await;
                    }
                    continue;
                }
            }
            drain(&mut rx, &mut jobs);
        }
        if used.elapsed() >= CHECK_AFTER {
            if let Some(mut c) = conn.take() {
                if matches!(tokio::time::timeout(CONNECT_TIMEOUT, c.ping()).await, Ok(Ok(()))) {
                    conn = Some(c);
                }
            }
        }
        let c = match conn.as_mut() {
            Some(c) => c,
            None => match tokio::time::timeout(CONNECT_TIMEOUT, PgConnection::connect_with(&options)).await.unwrap_or(Err(sqlx::Error::PoolTimedOut)) {
                Ok(c) => conn.insert(c),
                Err(e) => {
                    let e = Arc::new(e);
                    for job in jobs.drain(..) {
                        let _ = job.reply.send(Err(e.clone()));
                    }
                    continue;
                }
            },
        };
        used = Instant::now();
        if !write(c, &mut jobs, &statements).await {
            conn = None;
        }
    }
    if let Some(c) = conn {
        let _ = c.close().await;
    }
}

/// Writes `jobs` in one statement on `c` and answers each. Returns whether the connection can
/// be used again.
async fn write(c: &mut PgConnection, jobs: &mut Vec<Job>, statements: &AtomicU64) -> bool {
    let (submissions, replies): (Vec<Submission>, Vec<_>) = jobs.drain(..).map(|j| (j.submission, j.reply)).unzip();
    metrics::histogram!("ebb_contact_batch_size").record(submissions.len() as f64);
    statements.fetch_add(1, Ordering::Relaxed);
    let started = Instant::now();
    let outcome = db::submit_batch(c, &submissions).await;
    metrics::histogram!("ebb_contact_statement_seconds").record(started.elapsed().as_secs_f64());
    match outcome {
        Ok(results) => {
            for (reply, result) in replies.into_iter().zip(results) {
                let _ = reply.send(Ok(result));
            }
            true
        }
        // The database refused the statement, so none of it was stored: write each alone,
        // so that a submission the database cannot take fails only itself.
        Err(sqlx::Error::Database(e)) if submissions.len() > 1 => {
            tracing::warn!(error = %e, batch = submissions.len(), "a batch of contact submissions was refused; writing them one by one");
            let mut broken = false;
            for (reply, s) in replies.into_iter().zip(submissions) {
                let result = db::submit_batch(c, std::slice::from_ref(&s)).await.map(|mut r| r.remove(0)).map_err(Arc::new);
                broken |= matches!(&result, Err(e) if !matches!(**e, sqlx::Error::Database(_)));
                let _ = reply.send(result);
            }
            !broken
        }
        // The connection may be broken, or the outcome unknown: answer the failure, never
        // write again what may have been stored, and start over with a fresh connection.
        Err(e) => {
            let e = Arc::new(e);
            for reply in replies {
                let _ = reply.send(Err(e.clone()));
            }
            false
        }
    }
}
