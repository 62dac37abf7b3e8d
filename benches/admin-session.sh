#!/usr/bin/env bash
# `bash benches/admin-session.sh DATABASE_URL` → prints a `Cookie` header for a signed-in admin.
# The session is made directly in the tables the gate reads (benches have no authenticator):
# `data` is tower-sessions' MessagePack record [id, {}, expiry 2099-001], an empty session whose
# cookie id the gate looks up in admin_sessions.
set -euo pipefail
URL=$1
ID=YmVuY2hzZXNzaW9uMDAwMA
ADMIN=$(psql -tAq "$URL" -c "insert into admins (id, name, role) values (gen_random_uuid(), 'Bench', 'owner') returning id")
psql -q "$URL" -c "insert into tower_sessions.session (id, data, expiry_date) values ('$ID',
                    '\x93c41062656e636873657373696f6e303030308099cd08330100000000000000', now() + interval '1 hour');
                    insert into admin_sessions (session_id, admin_id, user_agent) values ('$ID', '$ADMIN', 'bench')"
echo "cookie: ebb_session=$ID"
