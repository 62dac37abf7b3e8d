-- The lifecycle engine (issue 9): every run of every job is recorded, whatever triggered it, with
-- its outcome: `ok`, `failed` (a step failed; the others still ran) or `cut_off` (the run's time or
-- row budget ended before every step finished; the rest is picked up by the next run). The error
-- text stays here, on the server: the dashboard only says that a step failed.
alter table maintenance_runs
    add column outcome text not null default 'ok'
        constraint maintenance_runs_outcome_check check (outcome in ('ok', 'failed', 'cut_off')),
    add column error text;
update maintenance_runs set outcome = case when ok then 'ok' else 'failed' end;

-- The access-time share GC had its own claim; the engine has one claim per job. A stale value
-- left here (possibly far in the future) must not linger as if it still meant something.
delete from settings where key = 'share_gc_access_at';

-- Alerts: raised only through the one alert helper (an ERROR log line with `alert.kind`, a
-- counter and a row here), shown as a banner on every admin page until resolved — automatically
-- when the condition clears, or by an admin. At most one open alert per (kind, subject): raising
-- it again counts and refreshes it.
create table alerts (
    id              bigint generated always as identity primary key,
    kind            text not null check (kind ~ '^[a-z_]+(\.[a-z_]+)*$'),
    subject         text not null default '',
    message         text not null check (char_length(message) <= 1000),
    raised_at       timestamptz not null default now(),
    last_raised_at  timestamptz not null default now(),
    times           integer not null default 1,
    resolved_at     timestamptz,
    -- 'auto' when the condition cleared, else the admin's id.
    resolved_by     text
);
create unique index alerts_open_idx on alerts (kind, subject) where resolved_at is null;
create index alerts_resolved_at_idx on alerts (resolved_at) where resolved_at is not null;
