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

use sqlx::{pool::PoolConnection, PgPool, Postgres};
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

/// The contact form's writers: a queue and the tasks that each take what is waiting and write
/// it in one statement. Started on first use, on the runtime of that first submission.
pub struct Writer {
    pool: PgPool,
    /// How many statements may run at once ([`Writer::new`]).
    writers: usize,
    queue: OnceLock<mpsc::Sender<Job>>,
    statements: Arc<AtomicU64>,
}

impl Writer {
    /// One writer: while its statement runs, the next batch fills. Measured (`make bench`,
    /// contact at 32 connections, 2 cores): one writer 10,500–10,900 submissions/s, two
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
            for _ in 0..self.writers {
                tokio::spawn(run(self.pool.clone(), rx.clone(), self.statements.clone()));
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

/// One writer: waits for a submission, takes everything else waiting with it, writes them in
/// one statement and answers each. It keeps its connection only while submissions keep coming
/// (no second round trip for the pool's check under load) and gives it back when the queue is
/// empty.
async fn run(pool: PgPool, rx: Arc<Mutex<mpsc::Receiver<Job>>>, statements: Arc<AtomicU64>) {
    let mut conn: Option<PoolConnection<Postgres>> = None;
    let mut jobs: Vec<Job> = Vec::with_capacity(MAX_BATCH);
    loop {
        if conn.is_some() {
            // Another writer is collecting: do not hold a connection while waiting for it.
            if let Ok(mut rx) = rx.try_lock() {
                drain(&mut rx, &mut jobs);
            }
            if jobs.is_empty() {
                conn = None;
            }
        }
        if jobs.is_empty() {
            let mut rx = rx.lock().await;
            match rx.recv().await {
                Some(job) => jobs.push(job),
                None => return,
            }
            drain(&mut rx, &mut jobs);
        }
        let c = match conn.as_mut() {
            Some(c) => c,
            None => match pool.acquire().await {
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
        let (submissions, replies): (Vec<Submission>, Vec<_>) = jobs.drain(..).map(|j| (j.submission, j.reply)).unzip();
        metrics::histogram!("ebb_contact_batch_size").record(submissions.len() as f64);
        statements.fetch_add(1, Ordering::Relaxed);
        let started = std::time::Instant::now();
        let outcome = db::submit_batch(c, &submissions).await;
        metrics::histogram!("ebb_contact_statement_seconds").record(started.elapsed().as_secs_f64());
        match outcome {
            Ok(results) => {
                for (reply, result) in replies.into_iter().zip(results) {
                    let _ = reply.send(Ok(result));
                }
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
                if broken {
                    conn = None;
                }
            }
            // The connection may be broken, or the outcome unknown: answer the failure, never
            // write again what may have been stored, and start over with a fresh connection.
            Err(e) => {
                conn = None;
                let e = Arc::new(e);
                for reply in replies {
                    let _ = reply.send(Err(e.clone()));
                }
            }
        }
    }
}
