#!/bin/sh
# Runs once, when the primary's data directory is created (the postgres image's initdb hook):
# a role for the replica's streaming connection, allowed from the compose network.
set -eu
psql -v ON_ERROR_STOP=1 -v pw="$REPLICATION_PASSWORD" --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" <<'SQL'
create role replicator with replication login password :'pw';
SQL
echo "host replication replicator all scram-sha-256" >> "$PGDATA/pg_hba.conf"
