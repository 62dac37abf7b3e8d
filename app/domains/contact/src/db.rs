//! Inquiry queries.

use uuid::Uuid;

use common::spam::{self, Signal};

use super::spam::Proof;
use super::ValidInquiry;

/// What one submission did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Submitted {
    /// In the inbox.
    Stored(Uuid),
    /// Kept as suspected spam (its signals, or a proof of work used before).
    Quarantined(Uuid),
    Limited {
        retry_after_secs: u64,
    },
}

/// One submission waiting to be written: the client's counter, the inquiry and what the spam
/// defence found before the statement (the replay check is the statement's).
#[derive(Debug, Clone)]
pub struct Submission {
    /// The limit's name, for the refusals metric.
    pub limit_name: &'static str,
    /// The client's counter key ([`kernel::ratelimit::bucket`]).
    pub bucket: String,
    pub window_secs: i64,
    pub max: i32,
    pub inquiry: ValidInquiry,
    /// The signals that fired (honeypot, proof, stamp, content).
    pub signals: Vec<Signal>,
    /// The proof of work, when it verified: spent by the statement, or a replay.
    pub proof: Option<Proof>,
}

impl Submission {
    pub fn new(limit: &kernel::ratelimit::Limit, client: &str, inquiry: ValidInquiry) -> Self {
        Submission {
            limit_name: limit.name,
            bucket: kernel::ratelimit::bucket(limit, client),
            window_secs: limit.window.as_secs().max(1) as i64,
            max: limit.max.min(i32::MAX as u32) as i32,
            inquiry,
            signals: Vec::new(),
            proof: None,
        }
    }

    /// With the spam defence's findings.
    pub fn judged(mut self, signals: Vec<Signal>, proof: Option<Proof>) -> Self {
        self.signals = signals;
        self.proof = proof;
        self
    }
}

/// Counts one client's hit against `limit` and, when it is within the limit, stores the inquiry
/// (a batch of one, see [`submit_batch`]).
pub async fn submit(pool: &sqlx::PgPool, limit: &kernel::ratelimit::Limit, client: &str, inquiry: &ValidInquiry) -> Result<Submitted, sqlx::Error> {
    let mut conn = pool.acquire().await?;
    let mut out = submit_batch(&mut conn, &[Submission::new(limit, client, inquiry.clone())]).await?;
    Ok(out.pop().expect("one result per submission"))
}

/// Counts every submission's hit and stores those within their client's limit: one statement
/// for the whole batch, so one round trip and one commit however many it holds.
///
/// The counters are upserted once per client with the batch's number of hits (sorted by key, so
/// two batches that share clients lock their rows in the same order). The row lock serialises
/// concurrent batches from every instance, and the upsert returns the count after this batch's
/// hits: the k-th of a client's n submissions in the batch is the (count − n + k)-th hit of its
/// window, accepted while that is within the limit. Accepted inquiries are inserted in the same
/// statement, so the limit stays exact and an accepted inquiry is never lost between the count
/// and the insert; a failure stores none of them.
///
/// The spam defence's part: each verified proof of work is spent here (`spam_proofs_spent`,
/// sorted by key; a proof spent before, by an earlier statement on any instance or earlier in
/// this batch, is a replay). Accepted submissions go to `inquiries`, or to `suspected_spam`
/// when their signals (and a replay) weigh enough; the day's figures (`contact_daily`, this
/// connection's shard) count every outcome and signal. Results come back in the order of
/// `batch`.
///
/// What can be known before the statement is worked out here rather than by the database, which
/// writes one batch at a time (group commit): each submission's rank among its client's, the
/// proofs that repeat within the batch, and the signals' counts. The statement is left with the
/// counters, the inserts and the verdicts, which need the rows. A batch whose limits have
/// different windows (the setting changed while it filled) is written as one statement per
/// window, in one transaction.
pub async fn submit_batch(conn: &mut sqlx::PgConnection, batch: &[Submission]) -> Result<Vec<Submitted>, sqlx::Error> {
    if batch.iter().all(|s| s.window_secs == batch[0].window_secs) {
        return submit_window(conn, batch).await;
    }
    use sqlx::Connection as _;
    let mut tx = conn.begin().await?;
    let mut out = Vec::with_capacity(batch.len());
    let mut rest = batch;
    while let Some(first) = rest.first() {
        let run = rest.iter().take_while(|s| s.window_secs == first.window_secs).count();
        out.extend(submit_window(&mut tx, &rest[..run]).await?);
        rest = &rest[run..];
    }
    tx.commit().await?;
    Ok(out)
}

/// [`submit_batch`] for submissions whose limits share one window.
async fn submit_window(conn: &mut sqlx::PgConnection, batch: &[Submission]) -> Result<Vec<Submitted>, sqlx::Error> {
    let Some(first) = batch.first() else { return Ok(Vec::new()) };
    let plan = Plan::of(batch);
    let names: Vec<&str> = batch.iter().map(|s| s.inquiry.name()).collect();
    let emails: Vec<&str> = batch.iter().map(|s| s.inquiry.email()).collect();
    let messages: Vec<&str> = batch.iter().map(|s| s.inquiry.message()).collect();
    let maxes: Vec<i32> = batch.iter().map(|s| s.max).collect();
    let signals: Vec<String> = batch.iter().map(|s| s.signals.iter().map(|g| g.name()).collect::<Vec<_>>().join(",")).collect();
    let scores: Vec<i32> = batch.iter().map(|s| spam::score(&s.signals) as i32).collect();
    let proofs: Vec<Option<&str>> = batch.iter().map(|s| s.proof.as_ref().map(|p| p.challenge.as_str())).collect();
    let proof_expiries: Vec<Option<time::OffsetDateTime>> = batch.iter().map(|s| s.proof.as_ref().map(|p| p.expires_at)).collect();
    let buckets: Vec<&str> = batch.iter().map(|s| s.bucket.as_str()).collect();
    let rows = sqlx::query!(
        r#"with t as (select extract(epoch from clock_timestamp())::bigint as now_s),
           items as (
               select u.*, to_timestamp(t.now_s - mod(t.now_s, $1::int8)) as ws, t.now_s, gen_random_uuid() as id
               from unnest($2::text[], $3::int4[], $4::int4[], $5::int4[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int4[], $11::text[], $12::timestamptz[], $13::bool[])
                    with ordinality as u(bucket, k, n, max_hits, name, email, message, signals, score, proof, proof_exp, repeated, i), t
           ),
           hit as (
               insert into rate_limit_counters (bucket, window_start, hits)
               select bucket, ws, n from items where k = n order by bucket
               on conflict (bucket, window_start) do update set hits = rate_limit_counters.hits + excluded.hits
               returning bucket, hits
           ),
           spent as (
               insert into spam_proofs_spent (challenge, expires_at)
               select proof, proof_exp from items where proof is not null and not repeated order by proof
               on conflict do nothing
               returning challenge
           ),
           judged as (
               select items.*, hit.hits - items.n + items.k <= items.max_hits as ok,
                      items.proof is not null and (items.repeated or spent.challenge is null) as replayed
               from items join hit using (bucket) left join spent on spent.challenge = items.proof
           ),
           verdict as (
               select judged.*, score + case when replayed then $14::int4 else 0 end as total,
                      ok and score + case when replayed then $14::int4 else 0 end >= $15::int4 as suspect
               from judged
           ),
           stored as (
               insert into inquiries (id, name, email, message, held)
               select id, name, email, message, exists (select 1 from holds_in_force h where h.email = lower(verdict.email collate ucs_basic))
               from verdict where ok and not suspect order by i
           ),
           quarantined as (
               insert into suspected_spam (id, name, email, message, signals, score, held)
               select id, name, email, message,
                      array_remove(string_to_array(signals, ','), '') || case when replayed then array['proof_replayed'] else array[]::text[] end,
                      total, exists (select 1 from holds_in_force h where h.email = lower(verdict.email collate ucs_basic))
               from verdict where suspect order by i
           ),
           figures as (
               insert into contact_daily (day, figure, shard, n)
               select (clock_timestamp() at time zone 'UTC')::date, figure, (pg_backend_pid() % 16)::int2, sum(c)
               from (select case when not ok then 'refused' when suspect then 'quarantined' else 'accepted' end, 1 from verdict
                     union all select 'signal:proof_replayed', 1 from verdict where replayed
                     union all select 'signal:' || name, c from unnest($16::text[], $17::int8[]) as x(name, c)) as o(figure, c)
               group by figure order by figure
               on conflict (day, figure, shard) do update set n = contact_daily.n + excluded.n
           )
           select id as "id!", ok as "ok!", suspect as "suspect!", replayed as "replayed!",
                  extract(epoch from ws)::bigint + $1::int8 - now_s as "retry_after!"
           from verdict order by i"#,
        first.window_secs,
        &buckets as &[&str],
        &plan.rank,
        &plan.of_client,
        &maxes,
        &names as &[&str],
        &emails as &[&str],
        &messages as &[&str],
        &signals,
        &scores,
        &proofs as &[Option<&str>],
        &proof_expiries as &[Option<time::OffsetDateTime>],
        &plan.repeated,
        Signal::ProofReplayed.weight() as i32,
        spam::THRESHOLD as i32,
        &plan.signal_names as &[&str],
        &plan.signal_counts,
    )
    .fetch_all(&mut *conn)
    .await?;
    if rows.len() != batch.len() {
        return Err(sqlx::Error::Protocol(format!("the submission statement answered {} rows for {} submissions", rows.len(), batch.len())));
    }
    Ok(rows
        .into_iter()
        .zip(batch)
        .map(|(row, s)| {
            let outcome = match (row.ok, row.suspect) {
                (true, false) => Submitted::Stored(row.id),
                (true, true) => Submitted::Quarantined(row.id),
                (false, _) => {
                    metrics::counter!("ebb_rate_limit_refusals_total", "limit" => s.limit_name).increment(1);
                    Submitted::Limited { retry_after_secs: row.retry_after.max(1) as u64 }
                }
            };
            count_outcome(s, &outcome, row.replayed);
            outcome
        })
        .collect())
}

/// What a batch's statement is told beside the submissions themselves.
#[derive(Debug, PartialEq)]
struct Plan {
    /// Each submission's place (1-based) among its client's in the batch…
    rank: Vec<i32>,
    /// …and how many its client has in the batch.
    of_client: Vec<i32>,
    /// The proof of work was already in an earlier submission of the batch: a replay, whatever
    /// the database says about the first.
    repeated: Vec<bool>,
    /// How often each signal fired across the batch (the day's figures).
    signal_names: Vec<&'static str>,
    signal_counts: Vec<i64>,
}

impl Plan {
    fn of(batch: &[Submission]) -> Self {
        use std::collections::{BTreeMap, HashMap, HashSet};
        let mut seen: HashMap<&str, i32> = HashMap::with_capacity(batch.len());
        let rank: Vec<i32> = batch
            .iter()
            .map(|s| {
                let n = seen.entry(s.bucket.as_str()).or_default();
                *n += 1;
                *n
            })
            .collect();
        let of_client = batch.iter().map(|s| seen[s.bucket.as_str()]).collect();
        let mut proofs = HashSet::new();
        let repeated = batch.iter().map(|s| s.proof.as_ref().is_some_and(|p| !proofs.insert(p.challenge.as_str()))).collect();
        let mut signals: BTreeMap<&'static str, i64> = BTreeMap::new();
        for signal in batch.iter().flat_map(|s| &s.signals) {
            *signals.entry(signal.name()).or_default() += 1;
        }
        let (signal_names, signal_counts) = signals.into_iter().unzip();
        Plan { rank, of_client, repeated, signal_names, signal_counts }
    }
}

/// The Prometheus side of the day's figures: submissions by outcome, and the signals that fired
/// (a replay is found by the statement, so it is counted from the outcome).
fn count_outcome(s: &Submission, outcome: &Submitted, replayed: bool) {
    let name = match outcome {
        Submitted::Stored(_) => "accepted",
        Submitted::Quarantined(_) => "quarantined",
        Submitted::Limited { .. } => "refused",
    };
    metrics::counter!("ebb_contact_submissions_total", "outcome" => name).increment(1);
    for signal in &s.signals {
        metrics::counter!("ebb_contact_spam_signals_total", "signal" => signal.name()).increment(1);
    }
    if replayed {
        metrics::counter!("ebb_contact_spam_signals_total", "signal" => Signal::ProofReplayed.name()).increment(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_inquiry, ContactForm};

    fn submission(client: &str, signals: Vec<Signal>, proof: Option<&str>) -> Submission {
        let limit = kernel::ratelimit::Limit { name: "contact", max: 5, window: std::time::Duration::from_secs(600) };
        let inquiry = parse_inquiry(&ContactForm { name: "Ann".into(), email: "ann@example.org".into(), message: "Hello".into() }).unwrap();
        let proof = proof.map(|c| Proof { challenge: c.into(), expires_at: time::OffsetDateTime::UNIX_EPOCH });
        Submission::new(&limit, client, inquiry).judged(signals, proof)
    }

    #[test]
    fn a_batch_plan_ranks_each_clients_submissions_marks_repeated_proofs_and_counts_signals() {
        let batch = [
            submission("a", vec![Signal::Honeypot], Some("p1")),
            submission("b", vec![], Some("p2")),
            submission("a", vec![Signal::Links, Signal::Honeypot], Some("p1")),
            submission("c", vec![], None),
            submission("a", vec![], Some("p2")),
        ];
        let plan = Plan::of(&batch);
        assert_eq!(plan.rank, [1, 1, 2, 1, 3]);
        assert_eq!(plan.of_client, [3, 1, 3, 1, 3]);
        assert_eq!(plan.repeated, [false, false, true, false, true], "only a proof's first use in the batch may be its first use at all");
        assert_eq!(plan.signal_names, [Signal::Honeypot.name(), Signal::Links.name()]);
        assert_eq!(plan.signal_counts, [2, 1]);
    }
}
