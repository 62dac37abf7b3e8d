-- Issue 55: a restore is detected, not assumed. Every deletion-journal entry takes the next number
-- from this counter, committed before the entry is written to the store; a restore rolls the
-- counter back with the rest of the database, while the store keeps the entries numbered past it.
-- `ebb serve` refuses a database whose counter is behind the journal until
-- `ebb doctor --after-restore` has redone the entries (and moved the counter up to them).
create table deletion_journal_counter (
    only_row boolean primary key default true check (only_row),
    n        bigint not null default 0 check (n >= 0)
);
insert into deletion_journal_counter (only_row, n) values (true, 0);
