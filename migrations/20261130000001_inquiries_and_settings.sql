-- Inquiries from the public contact form. They leave through the prune job once older than
-- settings.retention_days; the index on created_at keeps both the prune delete and the
-- newest-first admin list (keyset on (created_at, id)) cheap.
create table inquiries (
    id          uuid primary key default gen_random_uuid(),
    name        text not null check (char_length(name) between 1 and 100),
    email       text not null check (char_length(email) between 3 and 254),
    message     text not null check (char_length(message) between 1 and 5000),
    created_at  timestamptz not null default now()
);
create index inquiries_created_at_id_idx on inquiries (created_at, id);

-- Small key/value settings. Also holds the job claims (`last_cleanup_at`, epoch milliseconds as
-- text): a claim is one conditional upsert on this table, see app/src/maintenance/claim.rs.
create table settings (
    key         text primary key,
    value       text not null,
    updated_at  timestamptz not null default now()
);

-- Fixed-window counters for rate limits, in PostgreSQL so that every instance shares them.
-- `bucket` is a hash of the client (never the raw address) and the limit's name; rows whose
-- window has ended are deleted by prune.
create table rate_limit_counters (
    bucket        text not null,
    window_start  timestamptz not null,
    hits          integer not null,
    primary key (bucket, window_start)
);
create index rate_limit_counters_window_start_idx on rate_limit_counters (window_start);

-- One row per maintenance run that won its claim: what each step deleted, or why it failed.
-- The admin settings page reads the latest; prune keeps 90 days of them.
create table maintenance_runs (
    id           bigint generated always as identity primary key,
    job          text not null,
    trigger      text not null,
    started_at   timestamptz not null,
    finished_at  timestamptz not null,
    ok           boolean not null,
    steps        jsonb not null
);
create index maintenance_runs_job_started_idx on maintenance_runs (job, started_at desc);
