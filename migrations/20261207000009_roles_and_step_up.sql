-- Issue 57: roles, and the step-up that sensitive actions need.
--
-- Every admin has a role: `owner` (everything; manages admins and the settings), `admin` (the
-- inbox, shares, file requests, data requests and legal holds) or `auditor` (reads the audit
-- trail, its archive and checkpoints, and the retention report; nothing personal beyond what the
-- audit log shows). The admins from before roles could do everything: they become owners. A row
-- written without a role (an instance still on the previous release, during an upgrade) gets
-- the least one.
alter table admins add column role text not null default 'owner'
    constraint admins_role_check check (role in ('owner', 'admin', 'auditor'));
alter table admins alter column role set default 'auditor';

-- An invite names the role its admin gets. Invites open before roles were made by admins who
-- could do everything and make `admin`s; one written without a role gets the least one.
alter table admin_invites add column role text not null default 'admin'
    constraint admin_invites_role_check check (role in ('owner', 'admin', 'auditor'));
alter table admin_invites alter column role set default 'auditor';

-- When this session last proved its admin present: a passkey assertion with user verification
-- (the sign-in, or a step-up since). Sensitive actions need one within the last few minutes; a
-- session from before this column must step up first.
alter table admin_sessions add column verified_at timestamptz;

insert into audit_kinds (kind) values ('admin.role'), ('auth.step_up');
