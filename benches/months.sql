-- The audit log's monthly partitions for the 26 months before this one (upkeep keeps 24 + 1
-- attached, and 3 ahead): what the audit and retention benches load their events into.
do $$
declare m date := date_trunc('month', now() at time zone 'UTC') - interval '26 months';
begin
  while m < date_trunc('month', now() at time zone 'UTC') loop
    if to_regclass('audit_events_' || to_char(m, 'YYYY_MM')) is null then
      execute format('create table %I partition of audit_events for values from (%L) to (%L)',
        'audit_events_' || to_char(m, 'YYYY_MM'), m::timestamp at time zone 'UTC', (m + interval '1 month')::timestamp at time zone 'UTC');
    end if;
    m := m + interval '1 month';
  end loop;
end $$;
