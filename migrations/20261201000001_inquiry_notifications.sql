-- Email notifications about new inquiries (issue 15): which inquiries the admins were told of.
-- Constant default: no table rewrite. The notify job reads recent un-notified rows through
-- inquiries_created_at_id_idx (it looks back one day at most).
alter table inquiries add column notified boolean not null default false;
