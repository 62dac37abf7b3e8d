//! Group commit for contact submissions: the submissions that arrive while a statement runs are
//! written together by the next one ([`db::submit_batch`]), so under load the database pays
//! one round trip and one commit for many submissions instead of one each.
//!
//! A submission is answered only after the statement that holds it has committed (or failed):
//! batching never acknowledges anything that is not stored, and a process killed mid-batch
//! loses only unanswered submissions, all or none of a batch. The rate limit stays exact across
//! instances (see [`db::submit_batch`]).

use std::{
    sync::{
        atomic::{AtomicU64, AtomicUsize, Ordering},
        Arc, OnceLock,
    },
    time::Duration,
};

use sqlx::{pool::PoolConnection, PgPool, Postgres};
use tokio::sync::{mpsc, oneshot, Mutex, MutexGuard, Notify};

use super::db::{self, Submission, Submitted};

/// Most submissions in one statement.
pub const MAX_BATCH: usize = 64;
/// Submissions that may wait for a writer before callers wait to enqueue (back-pressure).
const QUEUE: usize = 1024;
/// While a statement runs, the next one starts early only once this many submissions wait;
/// otherwise it waits for the running one to finish and takes everything that came meanwhile.
pub const DEEP: usize = 12;
/// A writer waiting its turn keeps its connection this long, then gives it back to the pool.
const KEEP_CONNECTION: Duration = Duration::from_millis(50);

/// Why a submission was not written. Shared: one failed statement fails its whole batch.
pub type WriteError = Arc<sqlx::Error>;

struct Job {
    submission: Submission,
    reply: oneshot::Sender<Result<Submitted, WriteError>>,
}

/// What the writers share: the queue (whoever holds it is the one collecting the next batch),
/// the statements running, and a signal when one ends.
#[derive(Default)]
struct Shared {
    running: AtomicUsize,
    ended: Notify,
    statements: AtomicU64,
    peak: AtomicUsize,
}

/// A running statement; dropping it (however the statement ends) lets the collector know.
struct Running<'a>(&'a Shared);

impl<'a> Running<'a> {
    fn start(shared: &'a Shared) -> Self {
        let now = shared.running.fetch_add(1, Ordering::AcqRel) + 1;
        shared.peak.fetch_max(now, Ordering::Relaxed);
        shared.statements.fetch_add(1, Ordering::Relaxed);
        Running(shared)
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::AcqRel);
        self.0.ended.notify_waiters();
    }
}

/// The contact form's writers: a queue and the tasks that each take what is waiting and write
/// it in one statement. Started on first use, on the runtime of that first submission.
pub struct Writer {
    pool: PgPool,
    /// How many statements may run at once ([`Writer::new`]).
    writers: usize,
    queue: OnceLock<mpsc::Sender<Job>>,
    shared: Arc<Shared>,
}

impl Writer {
    /// Two writers, the second only for a deep queue: while one statement runs, the next batch
    /// fills, and it is sent when that statement ends, or at once when [`DEEP`] submissions
    /// wait. The statement's cost is mostly per statement, so fewer, larger batches do more with
    /// the same CPU: measured (`make bench`, contact at 32 connections, 2 cores), two writers
    /// that each took whatever waited made batches half the size and did 8,200–8,600
    /// submissions/s against one writer's 10,500–10,900; the deep-queue rule keeps the batches
    /// and fills the time the server waited for the database.
    pub fn new(pool: PgPool) -> Self {
        Self::with_writers(pool, 2)
    }

    /// At most `writers` statements at once (at least one). The tests also use several to show
    /// that concurrent statements, as several instances send, keep every guarantee.
    pub fn with_writers(pool: PgPool, writers: usize) -> Self {
        Writer { pool, writers: writers.max(1), queue: OnceLock::new(), shared: Arc::default() }
    }

    fn queue(&self) -> &mpsc::Sender<Job> {
        self.queue.get_or_init(|| {
            let (tx, rx) = mpsc::channel(QUEUE);
            let rx = Arc::new(Mutex::new(rx));
            for _ in 0..self.writers {
                tokio::spawn(run(self.pool.clone(), rx.clone(), self.shared.clone()));
            }
            tx
        })
    }

    /// How many batch statements the writers have sent so far.
    pub fn statements(&self) -> u64 {
        self.shared.statements.load(Ordering::Relaxed)
    }

    /// The most statements that ran at once so far.
    pub fn peak_at_once(&self) -> usize {
        self.shared.peak.load(Ordering::Relaxed)
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

/// Waits while another statement runs, taking what arrives, until that statement ends or
/// [`DEEP`] submissions wait (or a batch is full).
async fn wait_turn(shared: &Shared, rx: &mut mpsc::Receiver<Job>, jobs: &mut Vec<Job>) {
    while jobs.len() < DEEP.min(MAX_BATCH) {
        let ended = shared.ended.notified();
        tokio::pin!(ended);
        ended.as_mut().enable();
        if shared.running.load(Ordering::Acquire) == 0 {
            return;
        }
        tokio::select! {
            _ = &mut ended => {}
            job = rx.recv() => match job {
                Some(job) => {
                    jobs.push(job);
                    drain(rx, jobs);
                }
                None => return,
            },
        }
    }
}

/// Takes the queue: at once when it is free, else waiting for it, keeping `conn` only briefly
/// (a writer between two statements under load keeps it; an idle one gives it back).
async fn take_queue<'a>(rx: &'a Mutex<mpsc::Receiver<Job>>, conn: &mut Option<PoolConnection<Postgres>>) -> MutexGuard<'a, mpsc::Receiver<Job>> {
    if let Ok(guard) = rx.try_lock() {
        return guard;
    }
    if conn.is_some() {
        if let Ok(guard) = tokio::time::timeout(KEEP_CONNECTION, rx.lock()).await {
            return guard;
        }
        *conn = None;
    }
    rx.lock().await
}

/// One writer: takes the queue, waits for a submission and takes everything else waiting with
/// it, waits its turn ([`wait_turn`]), writes them in one statement and answers each. It keeps
/// its connection while submissions keep coming (no second round trip for the pool's check
/// under load) and gives it back when the queue is empty.
async fn run(pool: PgPool, rx: Arc<Mutex<mpsc::Receiver<Job>>>, shared: Arc<Shared>) {
    let mut conn: Option<PoolConnection<Postgres>> = None;
    let mut jobs: Vec<Job> = Vec::with_capacity(MAX_BATCH);
    loop {
        let mut queue = take_queue(&rx, &mut conn).await;
        drain(&mut queue, &mut jobs);
        if jobs.is_empty() {
            conn = None;
            match queue.recv().await {
                Some(job) => jobs.push(job),
                None => return,
            }
            drain(&mut queue, &mut jobs);
        }
        wait_turn(&shared, &mut queue, &mut jobs).await;
        let _running = Running::start(&shared);
        drop(queue);
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
        match db::submit_batch(c, &submissions).await {
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
