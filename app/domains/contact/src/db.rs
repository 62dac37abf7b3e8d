//! Inquiry queries.

use uuid::Uuid;

use super::ValidInquiry;

/// What one submission did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Submitted {
    Stored(Uuid),
    Limited { retry_after_secs: u64 },
}

/// One submission waiting to be written: the client's counter and the inquiry.
#[derive(Debug, Clone)]
pub struct Submission {
    /// The limit's name, for the refusals metric.
    pub limit_name: &'static str,
    /// The client's counter key ([`kernel::ratelimit::bucket`]).
    pub bucket: String,
    pub window_secs: i64,
    pub max: i32,
    pub inquiry: ValidInquiry,
}

impl Submission {
    pub fn new(limit: &kernel::ratelimit::Limit, client: &str, inquiry: ValidInquiry) -> Self {
        Submission {
            limit_name: limit.name,
            bucket: kernel::ratelimit::bucket(limit, client),
            window_secs: limit.window.as_secs().max(1) as i64,
            max: limit.max.min(i32::MAX as u32) as i32,
            inquiry,
        }
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
/// Results come back in the order of `batch`.
pub async fn submit_batch(conn: &mut sqlx::PgConnection, batch: &[Submission]) -> Result<Vec<Submitted>, sqlx::Error> {
    let buckets: Vec<&str> = batch.iter().map(|s| s.bucket.as_str()).collect();
    let windows: Vec<i64> = batch.iter().map(|s| s.window_secs).collect();
    let maxes: Vec<i32> = batch.iter().map(|s| s.max).collect();
    let names: Vec<&str> = batch.iter().map(|s| s.inquiry.name()).collect();
    let emails: Vec<&str> = batch.iter().map(|s| s.inquiry.email()).collect();
    let messages: Vec<&str> = batch.iter().map(|s| s.inquiry.message()).collect();
    let rows = sqlx::query!(
        r#"with t as (select extract(epoch from clock_timestamp())::bigint as now_s),
           items as (
               select u.i, u.bucket, u.win, u.max_hits, u.name, u.email, u.message,
                      to_timestamp(t.now_s - mod(t.now_s, u.win)) as ws,
                      gen_random_uuid() as id
               from unnest($1::text[], $2::int8[], $3::int4[], $4::text[], $5::text[], $6::text[])
                    with ordinality as u(bucket, win, max_hits, name, email, message, i), t
           ),
           ranked as (
               select items.*,
                      row_number() over (partition by bucket, ws order by i) as k,
                      count(*) over (partition by bucket, ws) as n
               from items
           ),
           hit as (
               insert into rate_limit_counters (bucket, window_start, hits)
               select bucket, ws, count(*)::int from items group by bucket, ws order by bucket, ws
               on conflict (bucket, window_start) do update set hits = rate_limit_counters.hits + excluded.hits
               returning bucket, window_start, hits
           ),
           accepted as (
               select ranked.* from ranked join hit on hit.bucket = ranked.bucket and hit.window_start = ranked.ws
               where hit.hits - ranked.n + ranked.k <= ranked.max_hits
           ),
           stored as (
               insert into inquiries (id, name, email, message, held)
               select id, name, email, message, exists (select 1 from legal_holds h where h.email = lower(accepted.email))
               from accepted order by i
               returning id
           )
           select items.id as "id!", (stored.id is not null) as "stored!",
                  extract(epoch from items.ws)::bigint + items.win - extract(epoch from clock_timestamp())::bigint as "retry_after!"
           from items left join stored on stored.id = items.id
           order by items.i"#,
        &buckets as &[&str],
        &windows,
        &maxes,
        &names as &[&str],
        &emails as &[&str],
        &messages as &[&str],
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
            if row.stored {
                Submitted::Stored(row.id)
            } else {
                metrics::counter!("ebb_rate_limit_refusals_total", "limit" => s.limit_name).increment(1);
                Submitted::Limited { retry_after_secs: row.retry_after.max(1) as u64 }
            }
        })
        .collect())
}
