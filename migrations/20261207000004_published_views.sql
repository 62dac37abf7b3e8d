-- Issue 56: a domain reads another domain's rows only through what the owner publishes. These
-- views are the owners' published reads (docs/developer.md, "Table owners"): auth publishes its
-- admins' display names (shares, requests, holds, audit and the audit writer show who did what),
-- holds publishes the holds in force (prune, the share GC, the inbox and the retention report keep
-- what a hold names). Plain views: the planner inlines them, so every index of the tables serves
-- as before. Other domains' code only reads them (scripts/check-tables.py refuses a write).
create view admin_names as select id, name from admins;
create view holds_in_force as select id, inquiry_id, email, share_id, reason, placed_at from legal_holds;
