-- One-time file shares (seed 002): a state machine active → consumed → purged that only moves
-- forward, each transition one conditional UPDATE. One stored file per share (`blob_key` UNIQUE):
-- the GC deletes a share's file, so two shares must never point at the same one.
create table shares (
    id                     bigint generated always as identity primary key,
    token_hash             bytea not null unique,
    blob_key               text not null unique,
    file_name              text not null check (char_length(file_name) between 1 and 255),
    size_bytes             bigint not null check (size_bytes >= 0),
    content_type           text not null,
    note                   text check (char_length(note) <= 500),
    created_by             uuid references admins (id) on delete set null,
    status                 text not null default 'active'
                           constraint shares_status_check check (status in ('active', 'consumed', 'purged')),
    expires_at             timestamptz not null,
    consumed_at            timestamptz,
    purged_at              timestamptz,
    purge_attempts         integer not null default 0,
    next_purge_attempt_at  timestamptz,
    created_at             timestamptz not null default now()
);

-- The GC's search: purged rows (most of the table, in time) drop out of the index, so finding
-- "nothing to do" stays cheap however many shares have ever existed.
create index shares_purgeable_idx on shares (next_purge_attempt_at nulls first, id) where status <> 'purged';
