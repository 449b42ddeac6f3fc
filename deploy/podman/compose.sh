#!/usr/bin/env bash
# podman-compose with this directory's containers.conf (runc, cgroupfs, ulimits), pinned to a version that
# honours the Compose file's networks (ipam subnet, ipv4_address) and dependency conditions: Debian 12's
# podman-compose 1.0.3 ignores ipam and fixed addresses, so it is installed from PyPI into a private venv.
# podman itself (and runc, netavark, ...) is installed from the system's packages when missing (install.sh).
#
#   deploy/podman/compose.sh [podman-compose arguments...]     e.g.  compose.sh up -d ; compose.sh down -v
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
"$HB_PODMAN_DIR/install.sh"
PODMAN_COMPOSE_VERSION=1.6.0
venv="$HB_CACHE/podman-compose-$PODMAN_COMPOSE_VERSION"
if [[ ! -f "$venv/.installed" ]]; then   # the marker is written last: an interrupted install starts again
    log "installing podman-compose $PODMAN_COMPOSE_VERSION (PyPI) into $venv"
    rm -rf "$venv"
    # Debian ships venv (and pip) apart from python3
    "${PYTHON:-python3}" -c 'import ensurepip, venv' 2>/dev/null || "$HB_PODMAN_DIR/install.sh" python3-venv
    "${PYTHON:-python3}" -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input "podman-compose==$PODMAN_COMPOSE_VERSION"
    touch "$venv/.installed"
fi
cd "$HB_ROOT"
exec "$venv/bin/podman-compose" "$@"
