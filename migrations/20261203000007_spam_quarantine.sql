-- Spam defence (issue 34): suspected spam is kept apart from the inbox (quarantine), proofs of
-- work are single use across instances, and the contact form's outcomes are counted per day.

-- Submissions the spam signals flagged: never emailed, not in the inbox or its figures, pruned
-- after their own retention (`spam_retention_days`, 14 by default) unless on legal hold.
-- "Not spam" moves a row to `inquiries` (one statement: it is counted once).
create table suspected_spam (
    id         uuid primary key,
    name       text not null,
    email      text not null,
    message    text not null,
    created_at timestamptz not null default now(),
    -- The names of the signals that fired (common::spam::Signal) and their total weight.
    signals    text[] not null,
    score      int not null,
    held       boolean not null default false
);
create index suspected_spam_created_idx on suspected_spam (created_at, id);
create index suspected_spam_email_idx on suspected_spam (lower(email));

-- Proofs of work already used, by their challenge (hex SHA-256), until the challenge expires:
-- a second use on any instance conflicts here. Pruned once expired.
create table spam_proofs_spent (
    challenge  text primary key,
    expires_at timestamptz not null
);
create index spam_proofs_spent_expires_idx on spam_proofs_spent (expires_at);

-- The contact form's figures per (UTC) day: `accepted`, `quarantined`, `refused` (rate limit),
-- `released` ("Not spam"), and `signal:<name>` for every signal that fired. Each writer adds to
-- its own shard (no hot row between concurrent batches); readers sum the shards.
create table contact_daily (
    day    date not null,
    figure text not null,
    shard  smallint not null,
    n      bigint not null,
    primary key (day, figure, shard)
);

insert into audit_kinds (kind) values ('inquiry.release'), ('spam.delete'), ('settings.spam_retention_days');
