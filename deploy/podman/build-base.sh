#!/usr/bin/env bash
# Build a Debian base image from Debian's own packages (no image registry needed) and import it into podman.
#
#   deploy/podman/build-base.sh SUITE IMAGE [PACKAGE...]
#
# SUITE: bookworm | trixie. IMAGE: e.g. localhost/debian:bookworm. PACKAGEs are added to debootstrap's
# minbase variant (ca-certificates is always added). Skipped when IMAGE exists already (podman image exists);
# HOSTBENCH_REBUILD_BASE=1 rebuilds it.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"

suite=${1:?usage: build-base.sh SUITE IMAGE [PACKAGE...]}
image=${2:?usage: build-base.sh SUITE IMAGE [PACKAGE...]}
shift 2
if [[ "${HOSTBENCH_REBUILD_BASE:-0}" != 1 ]] && podman image exists "$image"; then
    log "base image $image exists: kept (HOSTBENCH_REBUILD_BASE=1 rebuilds it)"
    exit 0
fi
command -v debootstrap >/dev/null || { echo "debootstrap is missing: apt-get install debootstrap" >&2; exit 1; }

include="ca-certificates"
for p in "$@"; do include="$include,$p"; done
work=$(mktemp -d "$HB_CACHE/rootfs.XXXXXX")
trap 'rm -rf "$work"' EXIT
root="$work/root"
start=$SECONDS
log "debootstrap $suite (minbase + $include) from $HB_MIRROR"
debootstrap --variant=minbase --include="$include" "$suite" "$root" "$HB_MIRROR" >"$work/debootstrap.log" 2>&1 || {
    tail -30 "$work/debootstrap.log" >&2; exit 1; }

# The sources a stock installation has: the release, its updates and its security archive.
security=http://deb.debian.org/debian-security
cat >"$root/etc/apt/sources.list" <<SRC
deb $HB_MIRROR $suite main
deb $HB_MIRROR $suite-updates main
deb $security $suite-security main
SRC
# As in Debian's official images: no apt caches or docs kept in layers.
printf 'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true"; };\nAPT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true"; };\nDir::Cache::pkgcache "";\nDir::Cache::srcpkgcache "";\n' \
    >"$root/etc/apt/apt.conf.d/docker-clean"
printf 'Acquire::Languages "none";\n' >"$root/etc/apt/apt.conf.d/docker-no-languages"

changes=(--change 'CMD ["bash"]' --change 'ENV LANG=C.UTF-8')
mapfile -t cas < <(hb_local_cas)
if ((${#cas[@]})); then
    # This host reaches PyPI and npm through a TLS proxy with its own CA: the image trusts it too, and pip and
    # node are pointed at the system bundle (node ships its own CA list otherwise).
    cp "${cas[@]}" "$root/usr/local/share/ca-certificates/"
    chroot "$root" update-ca-certificates >/dev/null
    bundle=/etc/ssl/certs/ca-certificates.crt
    changes+=(--change "ENV PIP_CERT=$bundle" --change "ENV NODE_EXTRA_CA_CERTS=$bundle"
              --change "ENV REQUESTS_CA_BUNDLE=$bundle" --change "ENV SSL_CERT_FILE=$bundle")
    log "added this host's CAs: ${cas[*]}"
fi
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/log/*.log
tar -C "$root" --numeric-owner -c . | podman import "${changes[@]}" - "$image" >/dev/null
log "imported $image ($(podman image inspect --format '{{.Size}}' "$image") bytes) in $((SECONDS - start)) s"
