//! Inquiry queries.

use uuid::Uuid;

use super::ValidInquiry;

/// What one submission did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Submitted {
    Stored(Uuid),
    Limited { retry_after_secs: u64 },
}

/// Counts the client's hit against `limit` and, when it is within the limit, stores the inquiry:
/// one statement, so one round trip. The counter row's upsert serialises concurrent hits of a
/// client across instances, and the insert happens in the same statement, so the limit stays
/// exact and an accepted inquiry is never lost between the two.
pub async fn submit(pool: &sqlx::PgPool, limit: &crate::ratelimit::Limit, client: &str, inquiry: &ValidInquiry) -> Result<Submitted, sqlx::Error> {
    let window = limit.window.as_secs().max(1) as i64;
    let row = sqlx::query!(
        r#"with t as (select extract(epoch from clock_timestamp())::bigint as now_s),
           hit as (
               insert into rate_limit_counters (bucket, window_start, hits)
               select $1, to_timestamp(now_s - mod(now_s, $2)), 1 from t
               on conflict (bucket, window_start) do update set hits = rate_limit_counters.hits + 1
               returning hits, extract(epoch from window_start)::bigint + $2 - extract(epoch from clock_timestamp())::bigint as retry_after
           ),
           stored as (
               insert into inquiries (name, email, message, held)
               select $4, $5, $6, exists (select 1 from legal_holds where email = lower($5)) from hit where hit.hits <= $3
               returning id
           )
           select (select id from stored) as id, hit.retry_after as "retry_after!" from hit"#,
        crate::ratelimit::bucket(limit, client),
        window,
        limit.max as i32,
        inquiry.name(),
        inquiry.email(),
        inquiry.message(),
    )
    .fetch_one(pool)
    .await?;
    Ok(match row.id {
        Some(id) => Submitted::Stored(id),
        None => {
            metrics::counter!("ebb_rate_limit_refusals_total", "limit" => limit.name).increment(1);
            Submitted::Limited { retry_after_secs: row.retry_after.max(1) as u64 }
        }
    })
}
