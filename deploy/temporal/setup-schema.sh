#!/bin/sh
# Temporal's schema job: creates the two PostgreSQL databases of a Temporal server (history and visibility) and
# brings each to the schema of this server version, with Temporal's own SQL tool. docker-compose.yml runs it in
# temporalio/admin-tools before the server starts; the tests' production-shaped server runs the same script
# (test/helpers/production-temporal.ts). Every step leaves what is already there as it is (an existing database, a
# schema already current), so it runs on every `docker compose up`.
#
# The connection comes from the SQL tool's own variables: SQL_HOST, SQL_PORT, SQL_USER, SQL_PASSWORD.
# TEMPORAL_SCHEMA_DIR: the tool's PostgreSQL 12+ schema folder (admin-tools has it at /etc/temporal/schema).
set -eu
: "${SQL_HOST:?set SQL_HOST}" "${SQL_USER:?set SQL_USER}" "${SQL_PASSWORD:?set SQL_PASSWORD}"
export SQL_PLUGIN=postgres12
schema_dir="${TEMPORAL_SCHEMA_DIR:-/etc/temporal/schema/postgresql/v12}"

for pair in "${TEMPORAL_DB:-temporal}:temporal" "${TEMPORAL_VISIBILITY_DB:-temporal_visibility}:visibility"; do
  db="${pair%%:*}"
  schema="${pair#*:}"
  temporal-sql-tool --db "$db" create
  temporal-sql-tool --db "$db" setup-schema -v 0.0
  temporal-sql-tool --db "$db" update-schema -d "$schema_dir/$schema/versioned"
  echo "setup-schema: $db is at the $schema schema of $schema_dir"
done
