#!/usr/bin/env bash
# A PostgreSQL cluster of its own (initdb) that may act as a primary for streaming standbys, for
# failover drills on one machine (docs/operations.md "Failover"). Debian layout, PostgreSQL 15+.
# Needs root: it runs PostgreSQL's tools as the postgres user.
#
#   scripts/cluster.sh start   PORT [DIR] [sync]  create and start a primary on PORT; `sync` makes every
#                                                commit wait for one standby (synchronous_standby_names = '*')
#   scripts/cluster.sh kill    PORT [DIR]         stop it as a crash would (pg_ctl stop -m immediate)
#   scripts/cluster.sh restart PORT [DIR]         restart it (pg_ctl restart -m fast: every session ends)
#   scripts/cluster.sh stop    PORT [DIR]         stop it (if running) and remove DIR
#
# Connect as user postgres, database postgres, trust on 127.0.0.1 only; LISTEN_ADDRESS (default
# 127.0.0.1) and ALLOW_CIDR (default 127.0.0.1/32) open it to another address and network (the
# network drills run it on a host of its own: bench/lib/drill).
set -euo pipefail

cmd=${1:-}
port=${2:-}
dir=${3:-/tmp/wire-cluster-$port}
mode=${4:-async}
listen=${LISTEN_ADDRESS:-127.0.0.1}
allow=${ALLOW_CIDR:-127.0.0.1/32}
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
as_pg() { runuser -u postgres -- "$@"; }
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

if [ "$(id -u)" -ne 0 ]; then
  echo "$0: must run as root (it runs initdb and pg_ctl as the postgres user); try: sudo $0 $*" >&2
  exit 1
fi
if [ -z "$port" ]; then
  echo "usage: $0 start|kill|restart|stop PORT [DIR] [sync]" >&2
  exit 2
fi

case "$cmd" in
  start)
    if [ -f "$dir/data/postmaster.pid" ]; then as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true; fi
    rm -rf "$dir" # a leftover from an earlier run is replaced, never reused
    if port_in_use "$port"; then
      echo "$0: port $port is already in use on 127.0.0.1; pick another" >&2
      exit 1
    fi
    mkdir -p "$dir" && chown postgres: "$dir"
    as_pg "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >/dev/null
    sync_names="''"
    if [ "$mode" = sync ]; then sync_names="'*'"; fi
    cat >>"$dir/data/postgresql.conf" <<CONF
port = $port
listen_addresses = '$listen'
unix_socket_directories = '$dir'
wal_level = replica
max_wal_senders = 10
max_replication_slots = 10
wal_keep_size = '256MB'
hot_standby = on
hot_standby_feedback = on
synchronous_standby_names = $sync_names
synchronous_commit = on
shared_buffers = '64MB'
max_connections = 200
fsync = on
CONF
    printf 'local all all trust\nhost all all 127.0.0.1/32 trust\nhost replication all 127.0.0.1/32 trust\n' >"$dir/data/pg_hba.conf"
    if [ "$allow" != 127.0.0.1/32 ]; then printf 'host all all %s trust\nhost replication all %s trust\n' "$allow" "$allow" >>"$dir/data/pg_hba.conf"; fi
    as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w start >/dev/null
    echo "primary on 127.0.0.1:$port (data $dir/data, $mode)"
    ;;
  kill)
    as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null
    echo "primary on port $port killed"
    ;;
  restart)
    as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -m fast -w restart >/dev/null
    echo "primary on port $port restarted"
    ;;
  stop)
    if [ -f "$dir/data/postmaster.pid" ]; then as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true; fi
    rm -rf "$dir"
    echo "cluster on port $port removed"
    ;;
  *)
    echo "usage: $0 start|kill|restart|stop PORT [DIR] [sync]" >&2
    exit 2
    ;;
esac
