-- The kinds of audit events in one table (issue 30), instead of a check constraint restated in
-- full by every migration that adds one. A new kind is one row inserted by its migration; the
-- Rust list (`common::audit_kind::AuditKind::ALL`) is checked against this table by a test.
create table audit_kinds (
    kind text primary key check (kind ~ '^[a-z_]+\.[a-z_]+$')
);
insert into audit_kinds (kind) values
    ('auth.signin'), ('auth.signin_refused'), ('auth.signout'), ('admin.create'),
    ('passkey.add'), ('passkey.rename'), ('passkey.remove'),
    ('invite.create'), ('invite.redeem'), ('session.revoke'),
    ('inquiry.delete'), ('inquiry.export'), ('settings.retention_days'),
    ('share.create'), ('share.download'), ('share.revoke'), ('share.purge'),
    ('maintenance.run'), ('upkeep.partition_create'), ('upkeep.partition_detach'), ('upkeep.check'),
    ('alert.raise'), ('alert.resolve'),
    ('archive.month'), ('archive.drop'), ('archive.failure'), ('archive.retrieval'),
    ('export.request'), ('export.download'),
    ('hold.place'), ('hold.lift'), ('retention.report'), ('audit.export');
alter table audit_events drop constraint audit_events_kind_check;
alter table audit_events add constraint audit_events_kind_fkey foreign key (kind) references audit_kinds (kind);
