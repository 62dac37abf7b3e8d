-- Issue 29: a run is recorded as it goes, and alerts are raised whatever their details.
--
-- A run's row is written when it starts (`running`, no `finished_at`) and its steps' counts are
-- written while it runs, so a run killed half-way (SIGKILL, a lost host) still shows what it
-- deleted. The next run of the job — holding the job's lease, so the dead one is not still
-- going — closes such a row as `interrupted`.
alter table maintenance_runs alter column finished_at drop not null;
alter table maintenance_runs drop constraint maintenance_runs_outcome_check;
alter table maintenance_runs add constraint maintenance_runs_outcome_check
    check (outcome in ('ok', 'failed', 'cut_off', 'running', 'interrupted'));
alter table maintenance_runs add constraint maintenance_runs_finished_check
    check ((outcome = 'running') = (finished_at is null));
-- The dashboard and the next run look for a job's unfinished runs.
create index maintenance_runs_running_idx on maintenance_runs (job) where outcome = 'running';

-- An alert is a short, stable headline (the banner) and its details (every failing month, every
-- step's error), which have no small limit: an alert with many details must still be raised.
alter table alerts add column details text not null default '';

-- The audit log's own CSV export is recorded like every other export (`audit.export`).
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
    'hold.place', 'hold.lift', 'retention.report', 'audit.export'
));

-- When each archived object's bytes were last read back and matched. The daily archive run
-- checks every object's size and stored checksum (cheap), and re-reads the bytes of those not
-- read for EBB_ARCHIVE_REREAD_DAYS, within its budget. Verification read them back.
alter table audit_partition_archives add column content_checked_at timestamptz;
update audit_partition_archives set content_checked_at = verified_at where status = 'verified';

-- The hourly retention check reads only what is past each promise, through indexes: inquiries
-- under a hold on their sender's address, and run records by age (prune deletes by it too).
create index inquiries_email_lower_idx on inquiries (lower(email));
create index maintenance_runs_started_at_idx on maintenance_runs (started_at);

-- The notify job claims the inquiries it is about to mail (a short transaction), sends with no
-- transaction or lock open, then marks them notified: a slow SMTP server holds no rows. A claim
-- older than ten minutes was left by a process that died and is taken over.
alter table inquiries add column notify_claimed_at timestamptz;
