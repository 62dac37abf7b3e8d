-- The verified archive of the audit log (seed 004, part 2): the ledger of archived months, the
-- log of archive retrievals, and export requests.
set timezone = 'UTC';

-- One row per month ever written to the archive, overwritten by each retry of that month (the
-- object key is the same, so a retry overwrites the object too). A table in `audit_pending` is
-- dropped only when its month's row says `verified`, in the same transaction that sets
-- `dropped_at`; the rows stay for good (they are what proves the archive).
create table audit_partition_archives (
    period       date primary key check (extract(day from period) = 1),
    object_key   text not null,
    -- The pending table the month was written from (informational; decisions use bounds).
    table_name   text not null,
    -- written: uploaded, not yet verified; verified: both checks passed; failed: see `failure`.
    status       text not null check (status in ('written', 'verified', 'failed')),
    rows_written bigint,
    table_rows   bigint,
    bytes        bigint,
    crc32c       bigint check (crc32c between 0 and 4294967295),
    attempts     integer not null default 1,
    archived_at  timestamptz not null default now(),
    verified_at  timestamptz,
    failure      text,
    dropped_at   timestamptz,
    constraint audit_archive_verified_complete check (
        status <> 'verified' or (verified_at is not null and rows_written is not null and bytes is not null and crc32c is not null and rows_written = table_rows)
    ),
    constraint audit_archive_dropped_verified check (dropped_at is null or status = 'verified')
);

-- Every read link given out for an archived month: who, which month, why, when.
create table audit_archive_retrievals (
    id          bigserial primary key,
    period      date not null references audit_partition_archives (period),
    admin_id    uuid,
    admin_name  text,
    reason      text not null check (char_length(reason) between 10 and 256),
    issued_at   timestamptz not null default now(),
    expires_at  timestamptz not null
);
create index audit_archive_retrievals_issued_idx on audit_archive_retrievals (issued_at desc);

-- CSV exports of a range of audit events, written by a background job to `exports/`.
create table audit_export_requests (
    id           uuid primary key,
    admin_id     uuid,
    admin_name   text,
    range_from   timestamptz not null,
    range_to     timestamptz not null check (range_to > range_from),
    status       text not null default 'pending' check (status in ('pending', 'running', 'done', 'failed')),
    requested_at timestamptz not null default now(),
    started_at   timestamptz,
    finished_at  timestamptz,
    object_key   text,
    rows_written bigint,
    bytes        bigint,
    failure      text,
    constraint audit_export_done_complete check (status <> 'done' or (object_key is not null and rows_written is not null and bytes is not null and started_at is not null))
);
create index audit_export_requests_pending_idx on audit_export_requests (requested_at) where status in ('pending', 'running');
create index audit_export_requests_requested_idx on audit_export_requests (requested_at desc);

alter table audit_events drop constraint audit_events_kind_check;
alter table audit_events add constraint audit_events_kind_check check (kind in (
    'auth.signin', 'auth.signin_refused', 'auth.signout', 'admin.create',
    'passkey.add', 'passkey.rename', 'passkey.remove',
    'invite.create', 'invite.redeem', 'session.revoke',
    'inquiry.delete', 'inquiry.export', 'settings.retention_days',
    'share.create', 'share.download', 'share.revoke', 'share.purge',
    'maintenance.run', 'upkeep.partition_create', 'upkeep.partition_detach', 'upkeep.check',
    'alert.raise', 'alert.resolve',
    'archive.month', 'archive.drop', 'archive.failure', 'archive.retrieval',
    'export.request', 'export.download'
));
