#!/bin/sh
# First start: a cluster in /var/lib/postgresql/data/<major> owned by the role hostbench (password from
# HOSTBENCH_DB_PASSWORD, scram-sha-256 for every connection), and the database hostbench. Then the server.
set -eu
major=$(ls /usr/lib/postgresql | sort -n | tail -1)
bin=/usr/lib/postgresql/$major/bin
base=/var/lib/postgresql/data
export PGDATA="$base/$major"
as_pg() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }

chown postgres:postgres "$base"
chmod 0700 "$base"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    for other in "$base"/*/PG_VERSION; do
        if [ -f "$other" ]; then
            echo "hostbench-postgres: $(dirname "$other") holds PostgreSQL $(cat "$other") data and this image runs $major:" >&2
            echo "upgrade it with pg_upgrade (or dump and restore) before starting this image" >&2
            exit 1
        fi
    done
    : "${HOSTBENCH_DB_PASSWORD:?set HOSTBENCH_DB_PASSWORD}"
    pwfile=$(mktemp)
    printf '%s\n' "$HOSTBENCH_DB_PASSWORD" > "$pwfile"
    chown postgres "$pwfile"
    as_pg "$bin/initdb" -D "$PGDATA" -U hostbench --pwfile="$pwfile" --auth=scram-sha-256 -E UTF8 \
        --locale=C.UTF-8 >/dev/null
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    sock=$(mktemp -d); chown postgres "$sock"
    as_pg "$bin/pg_ctl" -D "$PGDATA" -o "-c listen_addresses='' -k $sock" -w start >/dev/null
    PGPASSWORD="$HOSTBENCH_DB_PASSWORD" as_pg "$bin/psql" -h "$sock" -U hostbench -d postgres -q \
        -c 'CREATE DATABASE hostbench'
    as_pg "$bin/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
    rmdir "$sock" 2>/dev/null || true
    echo "hostbench-postgres: created the cluster $PGDATA (PostgreSQL $major)"
fi
# max_connections: each API process (api and control replicas) may hold 12 + 6, 12 + 6 and 16 connections
# (docs/scaling.md); the default 100 is two processes' worth. Raise it with the replicas (HOSTBENCH_PG_MAX_CONNECTIONS).
exec setpriv --reuid=postgres --regid=postgres --init-groups "$bin/postgres" -D "$PGDATA" \
    -c listen_addresses='*' -c unix_socket_directories=/tmp -c max_connections="${HOSTBENCH_PG_MAX_CONNECTIONS:-300}"
