-- Alerts keep what they say as data (issue 30): the kind of message and the values it names,
-- written in each reader's language when shown. `message` keeps the English headline (the
-- server log's words). Alerts raised before have no params: their English message is shown,
-- as it was (the documented fallback); they are refreshed with params when raised again.
alter table alerts add column params jsonb;
