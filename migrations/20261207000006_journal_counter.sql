-- Issue 55: a restore is detected, not assumed. Every deletion-journal entry is numbered from this
-- sequence before it is written to the store. A sequence is never rolled back with a transaction,
-- so a live database is never behind its own journal; a restore of a dump puts it back to where
-- it was at the backup, while the store keeps the entries numbered past it. `ebb serve` refuses a
-- database behind the journal until `ebb doctor --after-restore` has redone the entries (and
-- moved the sequence up to them).
create sequence deletion_journal_seq;
