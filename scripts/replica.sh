#!/usr/bin/env bash
# A PostgreSQL streaming replica of the local primary, for running the fleet and its tests on one
# machine (docs/architecture.md: readers read from a replica). Debian layout, PostgreSQL 15+.
# Needs root: it runs PostgreSQL's tools as the postgres user and may edit the primary's pg_hba.conf.
#
#   scripts/replica.sh start [PORT] [DIR]   create and start a hot standby on PORT (default 5433)
#   scripts/replica.sh promote [PORT] [DIR] promote it to a primary (pg_ctl promote, waits until it is)
#   scripts/replica.sh stop  [PORT] [DIR]   stop it, drop its replication slot, remove DIR
#
# PRIMARY_HOST and PRIMARY_PORT (default 127.0.0.1:5432) name the primary it streams from;
# LISTEN_ADDRESS (default 127.0.0.1) and ALLOW_CIDR (default 127.0.0.1/32) where it listens and whom
# it lets in (the network drills run it on a host of its own: bench/lib/drill).
#
# The primary must accept replication connections from 127.0.0.1; `start` adds that pg_hba.conf
# line (trust, loopback only) and reloads the primary if it is missing.
set -euo pipefail

cmd=${1:-}
port=${2:-5433}
dir=${3:-/tmp/wire-replica-$port}
primary_host=${PRIMARY_HOST:-127.0.0.1}
primary_port=${PRIMARY_PORT:-5432}
listen=${LISTEN_ADDRESS:-127.0.0.1}
allow=${ALLOW_CIDR:-127.0.0.1/32}
slot="wire_replica_$port"
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
as_pg() { runuser -u postgres -- "$@"; }
psql_primary() { psql -h "$primary_host" -p "$primary_port" -U postgres -d postgres -Atq "$@"; }

allow_replication() {
  local hba
  hba=$(psql_primary -c 'show hba_file')
  if ! grep -qE '^\s*host\s+replication\s+all\s+127\.0\.0\.1/32' "$hba"; then
    echo "host replication all 127.0.0.1/32 trust # added by wire scripts/replica.sh" >>"$hba"
    psql_primary -c 'select pg_reload_conf()' >/dev/null
  fi
}

stop_replica() {
  if [ -f "$dir/data/postmaster.pid" ]; then as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true; fi
  psql_primary -c "select pg_drop_replication_slot(slot_name) from pg_replication_slots where slot_name = '$slot' and not active" >/dev/null 2>&1 || true
  rm -rf "$dir"
}

port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

if [ "$(id -u)" -ne 0 ]; then
  echo "$0: must run as root (it runs pg_basebackup and pg_ctl as the postgres user); try: sudo $0 $*" >&2
  exit 1
fi

case "$cmd" in
  start)
    allow_replication
    stop_replica # a leftover from an earlier run is replaced, never reused
    if port_in_use "$port"; then
      echo "$0: port $port is already in use on 127.0.0.1; pick another: $0 start <PORT>" >&2
      exit 1
    fi
    mkdir -p "$dir" && chown postgres: "$dir"
    as_pg "$bin/pg_basebackup" -h "$primary_host" -p "$primary_port" -U postgres -D "$dir/data" -R -X stream -C -S "$slot" --checkpoint=fast
    max_conn=$(psql_primary -c 'show max_connections')
    cat >"$dir/data/postgresql.conf" <<CONF
port = $port
listen_addresses = '$listen'
unix_socket_directories = '$dir'
hot_standby = on
max_connections = $max_conn
hot_standby_feedback = on
CONF
    printf 'local all all trust\nhost all all 127.0.0.1/32 trust\n' >"$dir/data/pg_hba.conf"
    if [ "$allow" != 127.0.0.1/32 ]; then printf 'host all all %s trust\n' "$allow" >>"$dir/data/pg_hba.conf"; fi
    chown postgres: "$dir/data/postgresql.conf" "$dir/data/pg_hba.conf"
    as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/replica.log" -w start >/dev/null
    echo "replica on 127.0.0.1:$port (data $dir/data, slot $slot)"
    ;;
  promote)
    as_pg "$bin/pg_ctl" -D "$dir/data" -w promote >/dev/null
    echo "replica on port $port promoted"
    ;;
  stop)
    stop_replica
    echo "replica on port $port removed"
    ;;
  *)
    echo "usage: $0 start|promote|stop [PORT] [DIR]" >&2
    exit 2
    ;;
esac
