-- Admins sign in with passkeys only. An admin is created by redeeming a one-time invite.
create table admins (
    id          uuid primary key,
    name        text not null check (char_length(name) between 1 and 100),
    created_at  timestamptz not null default now()
);

-- One row per passkey. `passkey` is webauthn-rs' serialised credential (public key, counter,
-- backup state); it is updated after every sign-in.
create table passkeys (
    id             uuid primary key default gen_random_uuid(),
    admin_id       uuid not null references admins (id) on delete cascade,
    credential_id  bytea not null unique,
    passkey        jsonb not null,
    name           text not null check (char_length(name) between 1 and 100),
    created_at     timestamptz not null default now(),
    last_used_at   timestamptz
);
create index passkeys_admin_id_idx on passkeys (admin_id);

-- One-time invite links. Only the SHA-256 of the 256-bit token is stored. Redeeming is one
-- conditional update (`where redeemed_at is null and expires_at > now()`), so an invite makes at
-- most one admin even under concurrent requests. Prune deletes expired, unredeemed invites.
create table admin_invites (
    id           uuid primary key default gen_random_uuid(),
    token_hash   bytea not null unique,
    name         text,
    created_by   uuid references admins (id) on delete set null,
    created_at   timestamptz not null default now(),
    expires_at   timestamptz not null,
    redeemed_at  timestamptz,
    redeemed_by  uuid references admins (id) on delete set null
);
create index admin_invites_expires_at_idx on admin_invites (expires_at) where redeemed_at is null;

-- WebAuthn ceremony state. A challenge is deleted when it is used (before the response), so it
-- cannot be replayed; abandoned ones expire after 5 minutes and are deleted by prune. Sign-in is
-- rate-limited, so the table stays small; the index serves prune.
create table passkey_challenges (
    id          uuid primary key,
    kind        text not null check (kind in ('signin', 'register')),
    state       jsonb not null,
    admin_id    uuid references admins (id) on delete cascade,
    invite_id   uuid references admin_invites (id) on delete cascade,
    expires_at  timestamptz not null
);
create index passkey_challenges_expires_at_idx on passkey_challenges (expires_at);

-- tower-sessions' PostgreSQL store table (the layout tower-sessions-sqlx-store expects), created
-- here so that migrations own the schema. Prune deletes expired rows.
create schema if not exists tower_sessions;
create table tower_sessions.session (
    id           text primary key not null,
    data         bytea not null,
    expiry_date  timestamptz not null
);
create index session_expiry_date_idx on tower_sessions.session (expiry_date);

-- What Ebb needs to show and revoke sessions: whose, which browser, when. Deleting the store row
-- deletes this one.
create table admin_sessions (
    session_id    text primary key references tower_sessions.session (id) on delete cascade,
    admin_id      uuid not null references admins (id) on delete cascade,
    handle        uuid not null unique default gen_random_uuid(),
    user_agent    text not null,
    created_at    timestamptz not null default now(),
    last_seen_at  timestamptz not null default now()
);
create index admin_sessions_admin_id_idx on admin_sessions (admin_id);

-- Admin actions (who, what, when), written in the same transaction as the change. The audit log
-- issue turns this into partitioned audit events; until then this is the record.
create table admin_actions (
    id           bigint generated always as identity primary key,
    admin_id     uuid references admins (id) on delete set null,
    action       text not null,
    subject      text,
    occurred_at  timestamptz not null default now()
);
create index admin_actions_occurred_at_idx on admin_actions (occurred_at);
