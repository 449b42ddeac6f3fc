#!/usr/bin/env bash
# "A runner on any host in one command", proved on stock Debian: for each SUITE, a podman container made from a
# bare debootstrap root file system (minbase), given only what a server system has or gets from its own apt
# (python3, gcc, make, libc6-dev, curl), runs the very command the dashboard's "Add host" shows, and the host
# must then show up online on the server with its runner's version.
#
#   deploy/podman/runner-on-debian.sh URL [SUITE...]        default: bookworm trixie
#
# URL: a running hostbench server that this host reaches on loopback (the container shares the host's network),
# e.g. `./hostbench up` of this checkout: http://127.0.0.1:8000. The registration token (single use, one per
# suite) and an admin's API token for the check come from `./hostbench token` and `./hostbench api-token admin`,
# which find the checkout's embedded database by themselves. A table per suite, then one JSON line; exit 0 only
# when every suite's runner came online. The container is removed afterwards (HOSTBENCH_FRESH_KEEP=1 keeps it);
# the host it registered is left on the server (delete it on the Hosts page).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/env.sh"
"$here/install.sh"

url=${1:?usage: runner-on-debian.sh URL [SUITE...]}
shift
suites=("$@")
((${#suites[@]})) || suites=(bookworm trixie)
hb="$HB_ROOT/hostbench"
admin_token=$("$hb" api-token admin)

online() {  # the host NAME's "online runner_version" as the API reports it, or nothing
    curl -fsS -H "Authorization: Bearer $admin_token" "$url/api/hosts" | python3 -c '
import json, sys
name = sys.argv[1]
for h in json.load(sys.stdin)["data"]:
    if h["name"] == name:
        print(h["online"], h["runner_version"] or "-", h["address"] or "-")' "$1"
}

json_items=()
overall=0
for suite in "${suites[@]}"; do
    image="localhost/debian:$suite"
    name="hb-debian-$suite-$$"
    container="hostbench-runner-$suite-$$"
    t0=$SECONDS
    "$here/build-base.sh" "$suite" "$image"
    token=$("$hb" token)
    log "$suite: apt-get install python3 gcc make libc6-dev curl, then the Add-host command ($url)"
    t_install=$SECONDS
    ok=false
    if podman run --name "$container" --network host -d "$image" sleep infinity >/dev/null &&
        podman exec "$container" sh -c 'DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3 gcc make \
            libc6-dev curl >/dev/null' &&
        apt_s=$((SECONDS - t_install)) &&
        t_cmd=$SECONDS &&
        podman exec "$container" sh -c "curl -fsSL '$url/api/install/runner.sh' | sh -s -- --server '$url' \
            --token '$token' --name '$name' --label os=debian-$suite --no-service --start"; then
        cmd_s=$((SECONDS - t_cmd))
        py=$(podman exec "$container" python3 -c 'import platform; print(platform.python_version())')
        for _ in $(seq 60); do
            state=$(online "$name" || true)
            [[ "$state" == True* ]] && { ok=true; break; }
            sleep 1
        done
        online_s=$((SECONDS - t_cmd))
    fi
    if $ok; then
        log "$suite: online ($state), Python $py; apt ${apt_s} s, install command ${cmd_s} s, online ${online_s} s after it began"
        printf '%-10s %-8s %-8s %8s %12s %10s\n' suite ok python apt_s command_s online_s
        printf '%-10s %-8s %-8s %8s %12s %10s\n' "$suite" yes "$py" "$apt_s" "$cmd_s" "$online_s"
        json_items+=("{\"suite\":\"$suite\",\"ok\":true,\"python\":\"$py\",\"apt_s\":$apt_s,\"command_s\":$cmd_s,\"online_s\":$online_s}")
    else
        overall=1
        log "$suite: FAILED; the runner's log:"
        podman exec "$container" sh -c 'tail -20 /opt/hostbench-runner/runner.log' >&2 || true
        json_items+=("{\"suite\":\"$suite\",\"ok\":false}")
    fi
    [[ "${HOSTBENCH_FRESH_KEEP:-0}" == 1 ]] || podman rm -f "$container" >/dev/null 2>&1 || true
    log "$suite: $((SECONDS - t0)) s in all"
done
(IFS=,; echo "{\"runner_on_debian\":[${json_items[*]}],\"ok\":$([[ $overall == 0 ]] && echo true || echo false)}")
exit $overall
