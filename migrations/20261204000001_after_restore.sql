-- `ebb doctor --after-restore` (issue 35). A database restored from a backup does not know the
-- digests written to the store after the backup: they cover events lost with the restore. The
-- doctor records them here as superseded (their signatures and back-links still checked; their
-- month counts no longer compared with the database's chains), so the next digest follows the
-- last of them, and records the restore in the audit log. Expand only: old binaries ignore the
-- column and the kind.
alter table audit_digests add column superseded_at timestamptz;

insert into audit_kinds (kind) values ('audit.restore');
