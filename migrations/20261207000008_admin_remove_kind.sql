-- Issue 55/57: `ebb admin remove` (the operator's break-glass removal of an admin) is an audit
-- event of its own.
insert into audit_kinds (kind) values ('admin.remove');
