-- Data requests (issue 32): a person asks what Ebb keeps about them, for a copy, or for erasure.
-- A request keeps the address (lower-cased, as holds and searches compare it) only while it is
-- needed: prune sets it to null a retention period after the request is closed. The keyed hash
-- stays, so the audit events of the request (which carry only the hash) can still be matched.
create table data_requests (
    id                bigint generated always as identity primary key,
    kind              text not null check (kind in ('access', 'copy', 'erasure')),
    email             text check (email = lower(email) and char_length(email) between 3 and 254),
    email_hash        text not null check (email_hash ~ '^[0-9a-f]{32}$'),
    received_on       date not null,
    due_on            date not null check (due_on >= received_on),
    note              text not null default '' check (char_length(note) <= 1000),
    -- open → (erasure: erasing →) done. Erasing is claimed by one conditional UPDATE.
    status            text not null default 'open' check (status in ('open', 'erasing', 'done')),
    recorded_by       uuid references admins (id) on delete set null,
    recorded_at       timestamptz not null default now(),
    erase_started_at  timestamptz,
    erase_started_by  uuid references admins (id) on delete set null,
    -- Items erased so far, per kind of data ({"inquiries": 2, …}); written in the transaction
    -- of each erased batch, so a killed run's count is exact.
    erased            jsonb not null default '{}',
    -- What stayed (held items) when the request was closed, per kind.
    kept              jsonb not null default '{}',
    closed_at         timestamptz,
    closed_by         uuid references admins (id) on delete set null,
    forgotten_at      timestamptz,
    constraint data_requests_closed check ((status = 'done') = (closed_at is not null)),
    constraint data_requests_forgotten check ((email is null) = (forgotten_at is not null)),
    constraint data_requests_forget_closed check (forgotten_at is null or closed_at is not null)
);
create index data_requests_open_idx on data_requests (due_on, id) where status <> 'done';
create index data_requests_closed_idx on data_requests (closed_at) where status = 'done' and email is not null;
create index data_requests_email_idx on data_requests (email) where email is not null;
create index data_requests_recorded_idx on data_requests (recorded_at desc, id desc);

-- The notification emails sent (issue 15's digests), one row each: when, to how many, in which
-- form, and which senders' inquiries were in it — as keyed hashes of their addresses, never the
-- addresses, so a data request can find the digests that carried a person's inquiries.
create table notify_digests (
    id              bigint generated always as identity primary key,
    sent_at         timestamptz not null default now(),
    content         text not null check (content in ('count', 'full')),
    recipients      integer not null check (recipients >= 0),
    inquiries       integer not null check (inquiries >= 0),
    address_hashes  text[] not null default '{}'
);
create index notify_digests_sent_idx on notify_digests (sent_at);
create index notify_digests_hashes_idx on notify_digests using gin (address_hashes);

insert into audit_kinds (kind) values
    ('request.record'), ('request.find'), ('request.export'), ('request.erase_preview'),
    ('request.erase'), ('request.erased'), ('request.close');

-- A person's inquiries in received order (find, copy and erase of a data request page through
-- them by `(created_at, id)`); replaces the index on `lower(email)` alone, which the holds and
-- the inbox's search by address use as well.
create index inquiries_email_time_idx on inquiries (lower(email), created_at, id);
drop index inquiries_email_lower_idx;
