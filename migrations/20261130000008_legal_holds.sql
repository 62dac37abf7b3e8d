-- Legal holds (issue 16): an admin stops the retention clock for chosen items, with a reason.
-- A hold names exactly one target: an inquiry, every inquiry from one email address (those that
-- exist and those that arrive later), or an active share. Lifting a hold deletes its row (the
-- audit log keeps the story); at most one hold per target.
create table legal_holds (
    id          bigint generated always as identity primary key,
    -- No cascade: a held inquiry cannot be deleted by any path (the delete fails instead).
    inquiry_id  uuid references inquiries (id),
    email       text check (email = lower(email) and char_length(email) between 3 and 254),
    share_id    bigint references shares (id),
    reason      text not null check (char_length(reason) between 10 and 256),
    placed_by   uuid references admins (id) on delete set null,
    placed_at   timestamptz not null default now(),
    constraint legal_holds_one_target check (num_nonnulls(inquiry_id, email, share_id) = 1)
);
create unique index legal_holds_inquiry_idx on legal_holds (inquiry_id) where inquiry_id is not null;
create unique index legal_holds_email_idx on legal_holds (email) where email is not null;
create unique index legal_holds_share_idx on legal_holds (share_id) where share_id is not null;

-- The flag prune and the share GC read. A hold sets it with an UPDATE of the row, so a prune or
-- GC statement that started before the hold committed re-checks the row under its lock (READ
-- COMMITTED re-evaluates the WHERE of an updated row) and skips it.
alter table inquiries add column held boolean not null default false;
alter table shares add column held boolean not null default false;
-- Held rows are few: the hourly flag check and the lists read them through these.
create index inquiries_held_idx on inquiries (id) where held;
create index shares_held_idx on shares (id) where held;

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
    'export.request', 'export.download',
    'hold.place', 'hold.lift', 'retention.report'
));
