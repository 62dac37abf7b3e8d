-- A tamper-evident audit trail (issue 31): every event is sealed into its month's hash chain by
-- the `audit_seal` job; signed digests of the chains go to the blob store (`audit-digests/`).
--
-- Chain order: (tx, id), where `tx` is the inserting transaction's id. The sealer hashes only
-- events whose transaction id is below its snapshot's xmin (no transaction that could still
-- commit an event before them is in flight), so the order is total and never changes once sealed.
set timezone = 'UTC';

-- Sealing updates two columns no index covers; with room left on each page the update stays on
-- the page (HOT) and touches no index. Upkeep creates new partitions with the same setting.
do $$
declare r record;
begin
    for r in select i.inhrelid::regclass::text as name from pg_inherits i where i.inhparent = 'audit_events'::regclass loop
        execute format('alter table %s set (fillfactor = 50)', r.name);
    end loop;
end $$;

-- Every existing event gets this migration's transaction id: they are sealed first, by id.
alter table audit_events add column tx bigint not null default (pg_current_xact_id()::text::bigint);
alter table audit_events add column seq bigint;
alter table audit_events add column hash bytea;
alter table audit_events add constraint audit_events_sealed_check
    check ((seq is null) = (hash is null) and (seq is null or seq > 0) and (hash is null or length(hash) = 32));
create index audit_events_chain_idx on audit_events (tx, id, occurred_at);

-- Months waiting in audit_pending (detached before the chain existed) get the columns too, so the
-- archive reads every month the same way; their events stay unsealed (archived as before v1).
do $$
declare r record;
begin
    for r in select c.relname::text as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
             where n.nspname = 'audit_pending' and c.relkind = 'r' loop
        execute format('alter table audit_pending.%I add column tx bigint not null default 0, add column seq bigint, add column hash bytea', r.name);
    end loop;
end $$;

-- Each month's chain: how many events are sealed, the last hash, and how far the last digest saw.
create table audit_chains (
    period       date primary key check (extract(day from period) = 1),
    seq          bigint not null check (seq >= 0),
    head         bytea not null check (length(head) = 32),
    first_id     bigint,
    last_id      bigint,
    digested_seq bigint not null default 0 check (digested_seq <= seq),
    sealed_at    timestamptz not null default now()
);

-- Where sealing stopped: the last sealed event's (tx, id), and the latest `occurred_at` sealed so
-- far (an event dated long before it is not sealed: it was inserted into the past). One row.
create table audit_seal_cursor (
    one       boolean primary key default true check (one),
    tx        bigint not null,
    id        bigint not null,
    max_at    timestamptz,
    sealed_at timestamptz
);
insert into audit_seal_cursor (one, tx, id) values (true, -1, -1);

-- Public keys that signed digests (the private key is kept outside the audit tables). A rotated
-- key is retired, never deleted: old digests stay verifiable.
create table audit_signing_keys (
    key_id     text primary key check (key_id ~ '^[0-9a-f]{16}$'),
    public_key bytea not null unique check (length(public_key) = 32),
    created_at timestamptz not null default now(),
    retired_at timestamptz
);

-- The digests written to `audit-digests/`, numbered without gaps; each names the previous one's
-- SHA-256. The objects are the proof; these rows are for the page and the next digest.
create table audit_digests (
    number     bigint primary key check (number > 0),
    object_key text not null unique,
    sha256     bytea not null check (length(sha256) = 32),
    key_id     text not null references audit_signing_keys (key_id),
    reason     text not null,
    events     bigint not null,
    created_at timestamptz not null
);

-- An archived month's object: its SHA-256 and its chain's length and head (written into the
-- digest that records the archive).
alter table audit_partition_archives add column sha256 bytea, add column chain_count bigint, add column chain_head bytea,
    add column digest_number bigint;

insert into audit_kinds (kind) values ('audit.verify'), ('audit.key_rotate');
