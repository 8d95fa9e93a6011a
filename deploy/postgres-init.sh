#!/bin/sh
# The roles and the database of the journal (docs/operations.md, "Roles and privileges").
# PostgreSQL's image runs this once, on an empty data directory, as the superuser:
#   jackpot_owner    owns the database and its tables; `jackpot migrate` logs in as it
#   jackpot_runtime  a group, no login: what the servers and the audit tools may do,
#                    granted by the migrations (read and append the journal, never change it)
#   jackpot_app      the servers' login, a member of jackpot_runtime
set -eu
psql -v ON_ERROR_STOP=1 --username "${POSTGRES_USER:-postgres}" --dbname postgres \
  -v owner_password="${JACKPOT_OWNER_PASSWORD:?set JACKPOT_OWNER_PASSWORD}" \
  -v app_password="${JACKPOT_APP_PASSWORD:?set JACKPOT_APP_PASSWORD}" <<'SQL'
CREATE ROLE jackpot_owner LOGIN PASSWORD :'owner_password';
CREATE ROLE jackpot_runtime NOLOGIN;
CREATE ROLE jackpot_app LOGIN PASSWORD :'app_password' IN ROLE jackpot_runtime;
CREATE DATABASE jackpot OWNER jackpot_owner;
REVOKE ALL ON DATABASE jackpot FROM PUBLIC;
GRANT CONNECT ON DATABASE jackpot TO jackpot_owner, jackpot_runtime;
SQL
