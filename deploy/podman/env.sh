# Sourced by the podman scripts: the private podman configuration, and the apt options of this host.
HB_PODMAN_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
HB_ROOT="$(cd "$HB_PODMAN_DIR/../.." && pwd)"
export CONTAINERS_CONF="${CONTAINERS_CONF:-$HB_PODMAN_DIR/containers.conf}"
HB_CACHE="${HOSTBENCH_PODMAN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hostbench-podman}"
HB_MIRROR="${HOSTBENCH_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
mkdir -p "$HB_CACHE"

log() { printf '%s %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# Trust anchors this host adds to Debian's (an intercepting proxy's CA, a company CA): copied into locally built
# root file systems, so that pip and npm inside the images reach their registries as they do on this host.
hb_local_cas() {
    find /usr/local/share/ca-certificates -name '*.crt' -type f 2>/dev/null | sort
}
