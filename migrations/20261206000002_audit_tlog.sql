-- Issue 53: a transparency log — an RFC 6962 Merkle tree over the sealed events in seal order,
-- served as C2SP tlog-tiles with signed C2SP tlog-checkpoint notes (chain/tlog.rs). Events sealed
-- before this migration are not in it (their months' chains and digests cover them).

-- Entry i: the i-th event sealed since, as `<month> <seq> <event id> <hash hex>`.
create table audit_tlog_entries (
    index bigint primary key check (index >= 0),
    entry text not null check (length(entry) < 200)
);

-- The tree's hashes by "stored hash index" (as the Go and C2SP tlog code store them): tiles
-- are read from here.
create table audit_tlog_hashes (
    index bigint primary key check (index >= 0),
    hash  bytea not null check (length(hash) = 32)
);

-- The tree's size and root (one row, locked by each append: appends take turns).
create table audit_tlog_head (
    one  boolean primary key default true check (one),
    size bigint not null check (size >= 0),
    root bytea not null check (length(root) = 32)
);
insert into audit_tlog_head (size, root) values (0, sha256(''::bytea));

-- Signed checkpoints (C2SP signed notes), by size; `/audit/checkpoint` serves the newest.
create table audit_tlog_checkpoints (
    size       bigint primary key check (size >= 0),
    root       bytea not null check (length(root) = 32),
    note       text not null,
    created_at timestamptz not null default now()
);
