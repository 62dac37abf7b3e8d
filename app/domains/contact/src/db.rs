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
/// The counters are upserted once per client and window with the batch's number of hits
/// (sorted by key, so two batches that share clients lock their rows in the same order). The
/// row lock serialises concurrent batches from every instance, and the upsert returns the
/// count after this batch's hits: the k-th of a client's n submissions in the batch is the
/// (count − n + k)-th hit of its window, accepted while that is within the limit. Accepted
/// inquiries are inserted in the same statement, so the limit stays exact and an accepted
/// inquiry is never lost between the count and the insert; a failure stores none of them.
///
/// The spam defence's part: each verified proof of work is spent here (`spam_proofs_spent`,
/// sorted by key; a proof spent before, by an earlier statement on any instance or earlier in
/// this batch, is a replay). Accepted submissions go to `inquiries`, or to `suspected_spam`
/// when their signals (and a replay) weigh enough; the day's figures (`contact_daily`, this
/// connection's shard) count every outcome and signal. Results come back in the order of
/// `batch`.
pub async fn submit_batch(conn: &mut sqlx::PgConnection, batch: &[Submission]) -> Result<Vec<Submitted>, sqlx::Error> {
    let buckets: Vec<&str> = batch.iter().map(|s| s.bucket.as_str()).collect();
    let windows: Vec<i64> = batch.iter().map(|s| s.window_secs).collect();
    let maxes: Vec<i32> = batch.iter().map(|s| s.max).collect();
    let names: Vec<&str> = batch.iter().map(|s| s.inquiry.name()).collect();
    let emails: Vec<&str> = batch.iter().map(|s| s.inquiry.email()).collect();
    let messages: Vec<&str> = batch.iter().map(|s| s.inquiry.message()).collect();
    let signals: Vec<String> = batch.iter().map(|s| s.signals.iter().map(|g| g.name()).collect::<Vec<_>>().join(",")).collect();
    let scores: Vec<i32> = batch.iter().map(|s| spam::score(&s.signals) as i32).collect();
    let proofs: Vec<Option<&str>> = batch.iter().map(|s| s.proof.as_ref().map(|p| p.challenge.as_str())).collect();
    let proof_expiries: Vec<Option<time::OffsetDateTime>> = batch.iter().map(|s| s.proof.as_ref().map(|p| p.expires_at)).collect();
    let replay_weight = Signal::ProofReplayed.weight() as i32;
    let rows = sqlx::query!(
        r#"with t as (select extract(epoch from clock_timestamp())::bigint as now_s),
           items as (
               select u.i, u.bucket, u.win, u.max_hits, u.name, u.email, u.message, u.signals, u.score, u.proof, u.proof_exp,
                      to_timestamp(t.now_s - mod(t.now_s, u.win)) as ws,
                      gen_random_uuid() as id
               from unnest($1::text[], $2::int8[], $3::int4[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int4[], $9::text[], $10::timestamptz[])
                    with ordinality as u(bucket, win, max_hits, name, email, message, signals, score, proof, proof_exp, i), t
           ),
           spent as (
               insert into spam_proofs_spent (challenge, expires_at)
               select distinct on (proof) proof, proof_exp from items where proof is not null order by proof, i
               on conflict do nothing
               returning challenge
           ),
           first_use as (
               select distinct on (items.proof) items.i from items join spent on spent.challenge = items.proof order by items.proof, items.i
           ),
           judged as (
               select items.*,
                      (items.proof is not null and not exists (select 1 from first_use f where f.i = items.i)) as replayed
               from items
           ),
           final as (
               select judged.*,
                      array_remove(string_to_array(signals, ',') || case when replayed then array['proof_replayed'] else array[]::text[] end, '') as all_signals,
                      score + case when replayed then $11::int4 else 0 end as total
               from judged
           ),
           ranked as (
               select final.*,
                      row_number() over (partition by bucket, ws order by i) as k,
                      count(*) over (partition by bucket, ws) as n
               from final
           ),
           hit as (
               insert into rate_limit_counters (bucket, window_start, hits)
               select bucket, ws, count(*)::int from items group by bucket, ws order by bucket, ws
               on conflict (bucket, window_start) do update set hits = rate_limit_counters.hits + excluded.hits
               returning bucket, window_start, hits
           ),
           accepted as (
               select ranked.*, ranked.total >= $12::int4 as suspect
               from ranked join hit on hit.bucket = ranked.bucket and hit.window_start = ranked.ws
               where hit.hits - ranked.n + ranked.k <= ranked.max_hits
           ),
           stored as (
               insert into inquiries (id, name, email, message, held)
               select id, name, email, message, exists (select 1 from legal_holds h where h.email = lower(accepted.email))
               from accepted where not suspect order by i
               returning id
           ),
           quarantined as (
               insert into suspected_spam (id, name, email, message, signals, score, held)
               select id, name, email, message, all_signals, total, exists (select 1 from legal_holds h where h.email = lower(accepted.email))
               from accepted where suspect order by i
               returning id
           ),
           outcomes as (
               select case when a.id is null then 'refused' when a.suspect then 'quarantined' else 'accepted' end as figure
               from final left join accepted a on a.i = final.i
               union all
               select 'signal:' || sig from final, unnest(final.all_signals) sig
           ),
           figures as (
               insert into contact_daily (day, figure, shard, n)
               select (clock_timestamp() at time zone 'UTC')::date, figure, (pg_backend_pid() % 16)::int2, count(*)
               from outcomes group by figure order by figure
               on conflict (day, figure, shard) do update set n = contact_daily.n + excluded.n
           )
           select f.id as "id!", (stored.id is not null) as "stored!", (quarantined.id is not null) as "quarantined!", f.replayed as "replayed!",
                  extract(epoch from f.ws)::bigint + f.win - extract(epoch from clock_timestamp())::bigint as "retry_after!"
           from final f left join stored on stored.id = f.id left join quarantined on quarantined.id = f.id
           order by f.i"#,
        &buckets as &[&str],
        &windows,
        &maxes,
        &names as &[&str],
        &emails as &[&str],
        &messages as &[&str],
        &signals,
        &scores,
        &proofs as &[Option<&str>],
        &proof_expiries as &[Option<time::OffsetDateTime>],
        replay_weight,
        spam::THRESHOLD as i32,
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
            let outcome = if row.stored {
                Submitted::Stored(row.id)
            } else if row.quarantined {
                Submitted::Quarantined(row.id)
            } else {
                metrics::counter!("ebb_rate_limit_refusals_total", "limit" => s.limit_name).increment(1);
                Submitted::Limited { retry_after_secs: row.retry_after.max(1) as u64 }
            };
            count_outcome(s, &outcome, row.replayed);
            outcome
        })
        .collect())
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
