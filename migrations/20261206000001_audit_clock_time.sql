-- Issue 53: an event is dated when it is inserted (`clock_timestamp()`), not when its transaction
-- began (`now()`). Sealing refuses an event dated long before events sealed ahead of it (an
-- insertion into the past); a transaction that ran for an hour before recording its event was
-- dated at its start and read as such an insertion. Expand only: old binaries insert the same way.
alter table audit_events alter column occurred_at set default clock_timestamp();
