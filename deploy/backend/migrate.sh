#!/bin/sh
# The compose file's one-shot `migrate` service: the schema, the first admin, the bundled runner's token.
set -eu
alembic -c /app/migrations/alembic.ini upgrade head

# When nobody has an account yet: the first admin ('admin') and a one-time sign-in link (valid 24 h).
link=$(python -m app.cli bootstrap-admin)
if [ -n "$link" ]; then
    url="${HOSTBENCH_PUBLIC_URL:-http://localhost:8080}"
    echo "================================================================================"
    echo "hostbench: first admin created. Open this one-time link (24 h) and choose a password:"
    echo "    ${url%/}$link"
    echo "A new link later:  docker compose exec api hostbench sign-in-link admin"
    echo "================================================================================"
fi

# A registration token for the bundled runner (used only by a runner without a stored credential; single use,
# expires in an hour). The directory is a volume shared with the runner container only.
if [ -d /var/lib/hostbench-bootstrap ]; then
    umask 077
    python -m app.cli token --ttl-s 3600 > /var/lib/hostbench-bootstrap/registration-token.tmp
    mv /var/lib/hostbench-bootstrap/registration-token.tmp /var/lib/hostbench-bootstrap/registration-token
fi
echo "hostbench: database ready"
