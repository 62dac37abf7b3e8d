-- The audit log (seed 004, part 1): who did what, when, from where — kept queryable for 24
-- months. Range-partitioned by month on `occurred_at` (UTC month bounds), with a default partition
-- that should stay empty. Columns are plain values: an archived month must make sense on its own
-- (no foreign keys, the admin's name as it was). Upkeep (a weekly job) creates partitions ahead and
-- detaches months older than 25 months into schema `audit_pending`; it never deletes.
set timezone = 'UTC';

create table audit_events (
    id           bigserial,
    occurred_at  timestamptz not null default now(),
    kind         text not null,
    admin_id     uuid,
    admin_name   text,
    subject_type text,
    subject_id   text,
    detail       text,
    client_hash  text,
    primary key (id, occurred_at),
    constraint audit_events_kind_check check (kind in (
        'auth.signin', 'auth.signin_refused', 'auth.signout', 'admin.create',
        'passkey.add', 'passkey.rename', 'passkey.remove',
        'invite.create', 'invite.redeem', 'session.revoke',
        'inquiry.delete', 'inquiry.export', 'settings.retention_days',
        'share.create', 'share.download', 'share.revoke', 'share.purge',
        'maintenance.run', 'upkeep.partition_create', 'upkeep.partition_detach', 'upkeep.check',
        'alert.raise', 'alert.resolve',
        'archive.month', 'archive.retrieval', 'export.request'
    )),
    constraint audit_events_detail_length check (length(detail) <= 2000)
) partition by range (occurred_at);

create table audit_events_default partition of audit_events default;
-- Keyset pages: newest first, overall and per filter.
create index audit_events_time_idx on audit_events (occurred_at desc, id desc);
create index audit_events_kind_idx on audit_events (kind, occurred_at desc, id desc);
create index audit_events_admin_idx on audit_events (admin_id, occurred_at desc, id desc);
-- Kind and admin together: without it, a pair with few or no events scans all of the admin's.
create index audit_events_admin_kind_idx on audit_events (admin_id, kind, occurred_at desc, id desc);
create index audit_events_subject_idx on audit_events (subject_id, occurred_at desc, id desc);

create schema audit_pending;

-- Partitions from the month of the oldest admin action (or this month) to 3 months ahead, then
-- the earlier admin-action records move in (nothing is lost: same ids' times, actions, subjects).
do $$
declare
    first_month date := date_trunc('month', coalesce((select min(occurred_at) from admin_actions), now()) at time zone 'UTC');
    last_month date := date_trunc('month', now() at time zone 'UTC') + interval '3 months';
    m date;
begin
    m := first_month;
    while m <= last_month loop
        execute format(
            'create table %I partition of audit_events for values from (%L) to (%L)',
            'audit_events_' || to_char(m, 'YYYY_MM'),
            (m::timestamp at time zone 'UTC'),
            ((m + interval '1 month')::timestamp at time zone 'UTC')
        );
        m := m + interval '1 month';
    end loop;
end $$;

insert into audit_events (occurred_at, kind, admin_id, admin_name, subject_type, subject_id)
select a.occurred_at,
       case a.action when 'settings.retention_days' then 'settings.retention_days' else a.action end,
       a.admin_id, ad.name,
       case split_part(a.action, '.', 1)
           when 'share' then 'share' when 'inquiry' then 'inquiry' when 'passkey' then 'passkey'
           when 'invite' then 'invite' when 'session' then 'session' when 'alert' then 'alert'
           when 'maintenance' then 'job' when 'admin' then 'invite' else null end,
       a.subject
from admin_actions a left join admins ad on ad.id = a.admin_id
order by a.id;

drop table admin_actions;
