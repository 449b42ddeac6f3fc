#!/usr/bin/env bash
# Build every image of docker-compose.yml with podman, from a Debian base image made here with debootstrap
# (no image registry needed): the base is built once and kept (podman image exists), the compose images are
# rebuilt with podman's layer cache. Installs podman, debootstrap and podman-compose first when missing.
#
#   deploy/podman/build-images.sh            base image localhost/debian:bookworm, then `compose build`
#   HOSTBENCH_BASE_IMAGE=... build-images.sh use another base (it must exist or be pullable)
#
# One image at a time (--parallel 1): the api, worker, beat and migrate services share one image, which
# podman-compose would otherwise build four times at once; the three later builds are layer-cache hits.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/env.sh"
"$here/install.sh"
export HOSTBENCH_BASE_IMAGE="${HOSTBENCH_BASE_IMAGE:-localhost/debian:bookworm}"
# compose interpolates the password even for a build; any value will do here
export HOSTBENCH_DB_PASSWORD="${HOSTBENCH_DB_PASSWORD:-build-only}"

t0=$SECONDS
if [[ "$HOSTBENCH_BASE_IMAGE" == localhost/debian:* ]]; then
    "$here/build-base.sh" "${HOSTBENCH_BASE_IMAGE#localhost/debian:}" "$HOSTBENCH_BASE_IMAGE"
fi
t1=$SECONDS
log "base image: $((t1 - t0)) s"
"$here/compose.sh" --parallel 1 build "$@"
log "compose images: $((SECONDS - t1)) s"
