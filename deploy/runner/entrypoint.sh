#!/bin/sh
# The runner container's entrypoint. A runner that has no credential yet registers with
# HOSTBENCH_REGISTRATION_TOKEN, or, in the compose deployment, with the single-use token the migrate job left in
# the volume it shares with this container only.
set -eu
state="${HOSTBENCH_RUNNER_STATE:-/var/lib/hostbench-runner}"
bootstrap=/var/lib/hostbench-bootstrap/registration-token
if [ ! -f "$state/credential.json" ] && [ -z "${HOSTBENCH_REGISTRATION_TOKEN:-}" ] && [ -d "$(dirname "$bootstrap")" ]; then
    i=0
    while [ ! -s "$bootstrap" ] && [ $i -lt 180 ]; do   # the migrate job writes it once the schema is in place
        [ $i -eq 0 ] && echo "hostbench-runner: waiting for the registration token in $bootstrap"
        i=$((i + 1)); sleep 1
    done
    if [ -s "$bootstrap" ]; then
        HOSTBENCH_REGISTRATION_TOKEN=$(cat "$bootstrap")
        export HOSTBENCH_REGISTRATION_TOKEN
    fi
fi
exec python -m hostbench_runner "$@"
