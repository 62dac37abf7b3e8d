-- pgbench: the contact form's own statement (app/src/contact/db.rs, `submit`): the client's
-- rate-limit hit and the insert in one round trip, each transaction a new client bucket as in
-- benches/contact.lua. Measures what PostgreSQL alone pays per accepted submission.
\set client random(1, 2000000000)
with t as (select extract(epoch from clock_timestamp())::bigint as now_s),
hit as (
    insert into rate_limit_counters (bucket, window_start, hits)
    select 'bench:' || :client, to_timestamp(now_s - mod(now_s, 600)), 1 from t
    on conflict (bucket, window_start) do update set hits = rate_limit_counters.hits + 1
    returning hits, extract(epoch from window_start)::bigint + 600 - extract(epoch from clock_timestamp())::bigint as retry_after
),
stored as (
    insert into inquiries (name, email, message, held)
    select 'Bench', 'bench@example.org', 'Hello from the benchmark.
Second line.', exists (select 1 from legal_holds where email = lower('bench@example.org')) from hit where hit.hits <= 5
    returning id
)
select (select id from stored) as id, hit.retry_after from hit;
