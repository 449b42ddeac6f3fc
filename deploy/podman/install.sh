#!/usr/bin/env bash
# Install what the podman scripts need, from Debian's (or Ubuntu's) packages, when it is missing: podman with runc
# (crun, podman's default, fails on some hosts: deploy/podman/containers.conf selects runc), netavark and
# aardvark-dns (compose networks with fixed addresses and service names), slirp4netns and uidmap (rootless),
# debootstrap (the base images), iptables (published ports). Idempotent and non-interactive: nothing is done
# when every package is installed already. podman-compose itself comes from PyPI (deploy/podman/compose.sh).
#
#   deploy/podman/install.sh [PACKAGE...]     (as root, or with passwordless sudo); PACKAGEs: more to make sure of
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

packages=(podman runc conmon netavark aardvark-dns slirp4netns uidmap debootstrap iptables fuse-overlayfs
          catatonit ca-certificates openssl "$@")
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
    exit 0
fi
if ! command -v apt-get >/dev/null; then
    echo "install.sh: no apt-get here; install these packages with the system's package manager: ${missing[*]}" >&2
    exit 1
fi
sudo=()
if [[ $(id -u) != 0 ]]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        sudo=(sudo -n)
    else
        echo "install.sh: missing ${missing[*]}; run this script as root (or: sudo apt-get install ${missing[*]})" >&2
        exit 1
    fi
fi
start=$SECONDS
log "apt-get install ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}" >/dev/null
log "installed ${missing[*]} in $((SECONDS - start)) s ($(podman --version))"
