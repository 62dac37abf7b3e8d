-- contract: replaces the address checks of legal_holds and data_requests by wider ones (a row that
-- an older binary writes, lower-cased in full, has no ASCII capital either, so it passes), and
-- replaces two indexes by ones on the new rule; an older binary's queries still run (unindexed).
-- Issue 54: promises that hold at the edge. Expand only: old binaries ignore the new columns.

-- A revoked share ends its deliveries' resumes too (a receipt resumes nothing after a revoke),
-- and the GC deletes its file without waiting for the delivery grace.
alter table shares add column revoked_at timestamptz;

-- One upload in flight per file request: the upload holds a lease (a random id and its end,
-- renewed while the body streams); a second upload meanwhile is refused at once.
alter table file_requests add column upload_lease text;
alter table file_requests add column upload_lease_until timestamptz;

-- One rule for addresses, on both sides: ASCII letters lower-cased, nothing else. Rust's
-- `to_ascii_lowercase` and PostgreSQL's `lower(… collate ucs_basic)` agree on every address,
-- whatever the database's locale; plain `lower()` under a UTF-8 locale turns `İ` into `i` where
-- Rust's full lower-casing gives `i̇`, so a data request for `İNCİ@Example.ORG` found nothing.
create index inquiries_email_ascii_idx on inquiries (lower(email collate ucs_basic), created_at, id);
drop index inquiries_email_time_idx;
create index suspected_spam_email_ascii_idx on suspected_spam (lower(email collate ucs_basic));
drop index suspected_spam_email_idx;
-- Holds and data requests keep the address as compared; rows written under the old rule are
-- lower-case already (and only ASCII letters matter now).
alter table legal_holds drop constraint legal_holds_email_check;
alter table legal_holds add constraint legal_holds_email_check check (email = lower(email collate ucs_basic) and char_length(email) between 3 and 254);
alter table data_requests drop constraint data_requests_email_check;
alter table data_requests add constraint data_requests_email_check check (email = lower(email collate ucs_basic) and char_length(email) between 3 and 254);
