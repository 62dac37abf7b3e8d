-- File requests, resumable one-time downloads, delivery receipts and download limits (issue 33).

-- A file request: a one-time upload link ("send me a file"). Only the token's hash is stored.
-- The landing page never consumes it; a completed upload does, with one conditional UPDATE
-- (open → used, while unexpired), in the transaction that writes the received file's share row.
create table file_requests (
    id            bigint generated always as identity primary key,
    token_hash    bytea not null unique,
    note          text check (char_length(note) <= 500),
    max_bytes     bigint not null check (max_bytes > 0),
    status        text not null default 'open' check (status in ('open', 'used')),
    expires_at    timestamptz not null,
    used_at       timestamptz,
    created_by    uuid references admins (id) on delete set null,
    created_at    timestamptz not null default now(),
    constraint file_requests_used check ((status = 'used') = (used_at is not null))
);
-- The GC forgets requests that ended (used or expired) a while ago.
create index file_requests_ended_idx on file_requests (greatest(expires_at, coalesce(used_at, expires_at)));

-- A received file is a share without a public link (token_hash null) until the admin makes a
-- share of it; it follows the shares' lifecycle (GC, holds, reconciliation, report).
alter table shares alter column token_hash drop not null;
alter table shares add column origin text not null default 'upload' check (origin in ('upload', 'request'));
alter table shares add column file_request_id bigint references file_requests (id) on delete set null;
-- The exact download limit: `downloads` counts won claims; the claim is one conditional UPDATE
-- (`downloads < max_downloads`), and the share is consumed when the last one is won.
alter table shares add column max_downloads integer not null default 1 check (max_downloads between 1 and 20);
alter table shares add column downloads integer not null default 0 check (downloads between 0 and max_downloads);
-- The newest won claim: its receipt (resume) works for the delivery grace after it, so the GC
-- waits that long after it even when the link expires meanwhile.
alter table shares add column last_download_at timestamptz;
-- When the admins were emailed about a received file (EBB_NOTIFY_FILES; null: not yet).
alter table shares add column notified_at timestamptz;
create unique index shares_file_request_idx on shares (file_request_id) where file_request_id is not null;

-- One row per won download claim: the receipt that lets that client resume, and what the
-- server's own stream sent. `bytes_sent` is the contiguous prefix delivered (a resume that starts
-- inside it extends it); `completed_at` is set when it reaches the file's size.
create table share_deliveries (
    id            bigint generated always as identity primary key,
    share_id      bigint not null references shares (id) on delete cascade,
    receipt_hash  bytea not null unique,
    client_hash   text not null,
    started_at    timestamptz not null default now(),
    bytes_sent    bigint not null default 0 check (bytes_sent >= 0),
    resumes       integer not null default 0 check (resumes >= 0),
    last_at       timestamptz not null default now(),
    completed_at  timestamptz,
    notified_at   timestamptz
);
create index share_deliveries_share_idx on share_deliveries (share_id, id);

insert into audit_kinds (kind) values
    ('file_request.create'), ('file_request.revoke'), ('file_request.receive'),
    ('share.fetch'), ('share.publish'), ('share.resume');
