#!/usr/bin/env bash
# scripts/fresh-db.sh NAME: drops and creates database NAME next to $DATABASE_URL's and prints its URL.
set -euo pipefail
NAME=${1:?usage: fresh-db.sh NAME}
: "${DATABASE_URL:?}"
psql -q "$DATABASE_URL" -c "drop database if exists $NAME with (force)" -c "create database $NAME"
echo "$DATABASE_URL" | sed -E "s#^(postgres(ql)?://[^/]*)/[^?]*#\1/$NAME#"
