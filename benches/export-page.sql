-- One page of the inquiry export, as Ebb asks for it (inbox::db::export_page, no search), from a
-- random place in the table (`span`: the seconds the rows cover): pgbench runs it back to back on
-- one connection, as an export does.
\set s random(1, :span)
select id, created_at, name, email, message
from inquiries
where (created_at, id) > (now() - make_interval(secs => :s), '00000000-0000-0000-0000-000000000000'::uuid)
  and (null::text is null or name ilike null::text or email ilike null::text or message ilike null::text)
order by created_at, id
limit 200;
