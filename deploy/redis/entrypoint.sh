#!/bin/sh
# The password goes into a 0600 configuration file, not the command line (which `ps` shows).
set -eu
: "${HOSTBENCH_DB_PASSWORD:?set HOSTBENCH_DB_PASSWORD}"
chown redis:redis /data
conf=$(mktemp /tmp/redis.XXXXXX)
pw=$(printf '%s' "$HOSTBENCH_DB_PASSWORD" | sed 's/\\/\\\\/g; s/"/\\"/g')
cat > "$conf" <<CONF
bind * -::*
port 6379
protected-mode yes
requirepass "$pw"
rename-command CONFIG ""
dir /data
appendonly yes
maxmemory-policy noeviction
CONF
chown redis:redis "$conf"
chmod 0600 "$conf"
exec setpriv --reuid=redis --regid=redis --init-groups redis-server "$conf"
