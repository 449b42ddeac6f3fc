#!/bin/sh
# hostbench runner installer. The hostbench server serves this script at /api/install/runner.sh and everything
# it installs at /api/install/hostbench-runner.tar.gz: nothing comes from the internet. It needs sh, python3
# (>= 3.9), gcc (or $CC), make, and curl, wget or python3 to download.
#
#   curl -fsSL http://SERVER:8000/api/install/runner.sh | sh -s -- --server http://SERVER:8000 --token hbreg_...
#
# Options:
#   --server URL     the hostbench server (required)
#   --token TOKEN    registration token from "Add host" (needed unless DIR/state already holds a credential)
#   --name NAME      runner name shown in the dashboard (default: the host name)
#   --label k=v      label given at registration, repeatable (provider, instance_type, region, ...)
#   --dir DIR        install directory (default: /opt/hostbench-runner as root, else
#                    ${XDG_DATA_HOME:-~/.local/share}/hostbench-runner)
#   --no-service     do not install a systemd unit
#   --start          start the runner in the background (pid file DIR/runner.pid, log DIR/runner.log)
#
# Layout: DIR/src (the sources and the kernel build), DIR/lib (the Python package, run with PYTHONPATH: the
# runner needs the standard library only, so no pip and no venv), DIR/bin/hostbench-runner (a wrapper with the
# server, the state directory and the kernel path in it), DIR/state (credential and spool: kept on upgrade).
# Running the command again upgrades in place: the new version is built and checked beside the old one, then
# src, lib and bin are replaced, and the service (or the --start process) is restarted.

set -eu

PROG=hostbench-install
UNIT=hostbench-runner.service
# Where systemd is seen running and where the unit goes (the two variables exist for the installer's tests).
SYSTEMD_RUN=${HOSTBENCH_INSTALL_SYSTEMD_RUN:-/run/systemd/system}
UNIT_DIR=${HOSTBENCH_INSTALL_UNIT_DIR:-/etc/systemd/system}

die() { echo "$PROG: error: $*" >&2; exit 1; }
say() { echo "$PROG: $*"; }

now() {
    t=$(date +%s.%N 2>/dev/null || true)
    case "$t" in *N*|"") date +%s ;; *) echo "$t" ;; esac
}
T_ALL=$(now)
T_STEP=$T_ALL
STEP=
step() { STEP=$1; T_STEP=$(now); }
done_step() {
    awk -v a="$T_STEP" -v b="$(now)" -v s="$STEP" -v p="$PROG" 'BEGIN { printf "%s: [%6.2f s] %s\n", p, b - a, s }'
}

# 'it'"'"'s' for it's: a value that can go into the generated wrapper and unit as one sh word.
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\"'\"'/g")"; }

usage() {
    cat <<'USAGE_EOF'
usage: sh install.sh --server URL [--token TOKEN] [--name NAME] [--label k=v]... [--disk-target NAME=PATH]...
                     [--dir DIR] [--no-service] [--start]
  --server URL   the hostbench server (required)
  --token TOKEN  registration token from the dashboard's Add host (not needed when DIR/state has a credential)
  --name NAME    runner name shown in the dashboard (default: the host name)
  --label k=v    label given at registration, repeatable
  --disk-target NAME=PATH
                 a directory disk jobs may use, by NAME (checked by the runner at each start), repeatable
  --dir DIR      install directory (default: /opt/hostbench-runner as root, else ~/.local/share/hostbench-runner)
  --no-service   do not install a systemd unit
  --start        start the runner in the background (DIR/runner.pid, DIR/runner.log)
USAGE_EOF
}

fetch() {  # URL FILE
    if command -v curl >/dev/null 2>&1; then
        curl -fsS --retry 2 -o "$2" "$1" </dev/null
    elif command -v wget >/dev/null 2>&1; then
        wget -q -O "$2" "$1" </dev/null
    else
        "$PY" -c 'import shutil, sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=120) as r, open(sys.argv[2], "wb") as f:
    shutil.copyfileobj(r, f)' "$1" "$2" </dev/null
    fi
}

unpack() {  # TARBALL DIR
    if command -v tar >/dev/null 2>&1 && command -v gzip >/dev/null 2>&1; then
        tar -xzf "$1" -C "$2" </dev/null
    else
        "$PY" -c 'import sys, tarfile
with tarfile.open(sys.argv[1]) as t:
    for m in t.getmembers():
        if m.name.startswith(("/", "..")) or "/../" in m.name or not (m.isfile() or m.isdir()):
            sys.exit("unsafe entry in the tarball: " + m.name)
    t.extractall(sys.argv[2])' "$1" "$2" </dev/null
    fi
}

kernels_sum() {  # DIR: a checksum of a kernels source tree (every file but build/), the compiler and the machine
    ( cd "$1" && find . -path ./build -prune -o -type f -print | LC_ALL=C sort | while IFS= read -r f; do
          cksum "$f"; done
      "$CC" --version 2>/dev/null | head -n 1; uname -m ) | cksum
}

running_pid() {  # the pid in DIR/runner.pid if that process is alive
    [ -f "$DIR/runner.pid" ] || return 1
    pid=$(cat "$DIR/runner.pid" 2>/dev/null || true)
    case "$pid" in ''|*[!0-9]*) return 1 ;; esac
    kill -0 "$pid" 2>/dev/null || return 1
    echo "$pid"
}

stop_background() {
    pid=$(running_pid) || return 0
    say "stopping the runner started by an earlier --start (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 150 ]; do sleep 0.1; i=$((i + 1)); done
    kill -0 "$pid" 2>/dev/null && { kill -KILL "$pid" 2>/dev/null || true; }
    rm -f "$DIR/runner.pid"
}

main() {
    SERVER= TOKEN= NAME= DIR= SERVICE=1 START=0 LABEL_ARGS= DISK_ARGS=
    while [ $# -gt 0 ]; do
        case "$1" in
            --server|--token|--name|--label|--disk-target|--dir)
                [ $# -ge 2 ] || die "$1 needs a value"
                case "$1" in
                    --server) SERVER=$2 ;;
                    --token) TOKEN=$2 ;;
                    --name) NAME=$2 ;;
                    --dir) DIR=$2 ;;
                    --label)
                        case "$2" in *=*) ;; *) die "--label wants key=value, got '$2'" ;; esac
                        LABEL_ARGS="$LABEL_ARGS --label $(q "$2")" ;;
                    --disk-target)
                        case "$2" in ?*=/*) ;; *) die "--disk-target wants NAME=/absolute/path, got '$2'" ;; esac
                        DISK_ARGS="$DISK_ARGS --disk-target $(q "$2")" ;;
                esac
                shift 2 ;;
            --server=*) SERVER=${1#*=}; shift ;;
            --token=*) TOKEN=${1#*=}; shift ;;
            --name=*) NAME=${1#*=}; shift ;;
            --dir=*) DIR=${1#*=}; shift ;;
            --label=*) LABEL_ARGS="$LABEL_ARGS --label $(q "${1#*=}")"; shift ;;
            --disk-target=*)
                case "${1#*=}" in ?*=/*) ;; *) die "--disk-target wants NAME=/absolute/path, got '${1#*=}'" ;; esac
                DISK_ARGS="$DISK_ARGS --disk-target $(q "${1#*=}")"; shift ;;
            --no-service) SERVICE=0; shift ;;
            --start) START=1; shift ;;
            -h|--help) usage; exit 0 ;;
            *) die "unknown option '$1' (see --help)" ;;
        esac
    done

    [ -n "$SERVER" ] || die "--server URL is required"
    case "$SERVER" in http://?*|https://?*) ;; *) die "--server must be an http(s) URL, got '$SERVER'" ;; esac
    SERVER=${SERVER%/}
    if [ -z "$DIR" ]; then
        if [ "$(id -u)" = 0 ]; then DIR=/opt/hostbench-runner
        else DIR=${XDG_DATA_HOME:-$HOME/.local/share}/hostbench-runner; fi
    fi
    case "$DIR" in /*) ;; *) DIR=$(pwd)/$DIR ;; esac
    STATE=$DIR/state

    step "check the tools (sh, python3 >= 3.9, gcc, make)"
    PY=${PYTHON:-$(command -v python3 || true)}
    [ -n "$PY" ] || die "python3 is missing: install Python 3.9 or later (e.g. apt install python3, dnf install python3)"
    PY=$(command -v "$PY") || die "python3 '$PY' not found"
    "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 9))' </dev/null \
        || die "$PY is Python $("$PY" -c 'import platform; print(platform.python_version())'); the runner needs 3.9 or later"
    command -v make >/dev/null 2>&1 || die "make is missing: install make and gcc (e.g. apt install make gcc, dnf install make gcc)"
    CC=${CC:-cc}
    command -v "$CC" >/dev/null 2>&1 || CC=gcc
    command -v "$CC" >/dev/null 2>&1 || die "no C compiler (cc or gcc): install gcc (e.g. apt install gcc, dnf install gcc)"
    if [ ! -f "$STATE/credential.json" ] && [ -z "$TOKEN" ]; then
        die "not registered yet and no --token: copy the command from the dashboard's Add host"
    fi
    done_step

    mkdir -p "$DIR" "$STATE" || die "cannot create $DIR"
    chmod 700 "$STATE"
    [ -w "$DIR" ] || die "$DIR is not writable (run as root, or pass --dir)"
    NEW=$DIR/.new
    rm -rf "$NEW"
    mkdir -p "$NEW/src" "$NEW/lib" "$NEW/bin"

    step "download the runner from $SERVER"
    fetch "$SERVER/api/install/hostbench-runner.tar.gz" "$NEW/runner.tar.gz" \
        || die "cannot download $SERVER/api/install/hostbench-runner.tar.gz (is the server reachable from here?)"
    done_step

    step "unpack"
    unpack "$NEW/runner.tar.gz" "$NEW/src" || die "cannot unpack the runner tarball"
    [ -f "$NEW/src/hostbench_runner/__init__.py" ] && [ -f "$NEW/src/hostbench_common/experiments.py" ] \
        && [ -f "$NEW/src/kernels/Makefile" ] \
        || die "the tarball has no hostbench_runner/, hostbench_common/ or kernels/Makefile"
    rm -f "$NEW/runner.tar.gz"
    done_step

    # An upgrade whose kernel sources, compiler and machine are those of the installed build reuses that build (the
    # kernel's --check below still runs); anything else is built afresh.
    SUM=$(kernels_sum "$NEW/src/kernels")
    if [ -x "$DIR/src/kernels/build/hbk" ] && [ "$(cat "$DIR/src/kernels/build/.source-sum" 2>/dev/null)" = "$SUM" ]; then
        step "build the kernels (sources unchanged since the installed build: reused)"
        cp -Rp "$DIR/src/kernels/build" "$NEW/src/kernels/build" || die "cannot copy $DIR/src/kernels/build"
        echo "reused the build in $DIR/src/kernels/build (same sources, compiler and machine)" >"$NEW/build.log"
    else
        step "build the kernels (make)"
        JOBS=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
        if ! make -C "$NEW/src/kernels" -j"$JOBS" CC="$CC" >"$NEW/build.log" 2>&1 </dev/null; then
            tail -n 25 "$NEW/build.log" >&2
            die "building the kernels failed (log: $NEW/build.log)"
        fi
        echo "$SUM" >"$NEW/src/kernels/build/.source-sum"
    fi
    done_step

    step "lay out lib/ and bin/, check the kernel"
    cp -R "$NEW/src/hostbench_runner" "$NEW/lib/hostbench_runner"
    cp -R "$NEW/src/hostbench_common" "$NEW/lib/hostbench_common"
    mkdir -p "$NEW/lib/hostbench_runner/_bin"
    cp "$NEW/src/kernels/build/hbk" "$NEW/lib/hostbench_runner/_bin/hbk"
    chmod 755 "$NEW/lib/hostbench_runner/_bin/hbk"
    KBIN=$DIR/lib/hostbench_runner/_bin/hbk
    {
        echo '#!/bin/sh'
        echo '# Generated by the hostbench installer; run the install command again to upgrade.'
        echo "HOSTBENCH_SERVER=$(q "$SERVER")"
        echo "HOSTBENCH_RUNNER_STATE=$(q "$STATE")"
        echo "HOSTBENCH_KERNEL_BIN=$(q "$KBIN")"
        echo "PYTHONPATH=$(q "$DIR/lib")"
        echo 'export HOSTBENCH_SERVER HOSTBENCH_RUNNER_STATE HOSTBENCH_KERNEL_BIN PYTHONPATH'
        printf 'exec %s -s -m hostbench_runner' "$(q "$PY")"
        if [ -n "$NAME" ]; then printf ' --name %s' "$(q "$NAME")"; fi
        printf '%s%s "$@"\n' "$LABEL_ARGS" "$DISK_ARGS"
    } >"$NEW/bin/hostbench-runner"
    chmod 755 "$NEW/bin/hostbench-runner"
    if ! PYTHONPATH="$NEW/lib" "$PY" -s -m hostbench_runner --check \
            --kernel-bin "$NEW/lib/hostbench_runner/_bin/hbk" >"$NEW/check.log" 2>&1 </dev/null; then
        cat "$NEW/check.log" >&2
        die "the new runner failed its --check; the installed one (if any) is left as it was"
    fi
    VERSION=$(PYTHONPATH="$NEW/lib" "$PY" -s -m hostbench_runner --version </dev/null)
    done_step

    step "install into $DIR (replace src, lib, bin; keep state)"
    WAS_ACTIVE=0
    if [ -f "$UNIT_DIR/$UNIT" ] && command -v systemctl >/dev/null 2>&1 \
            && systemctl is-active --quiet "$UNIT" 2>/dev/null \
            && grep -q "$DIR/bin/hostbench-runner" "$UNIT_DIR/$UNIT"; then
        WAS_ACTIVE=1
        systemctl stop "$UNIT" </dev/null || true
    fi
    WAS_STARTED=0
    if running_pid >/dev/null; then WAS_STARTED=1; stop_background; fi
    for part in src lib bin; do
        rm -rf "$DIR/$part.old"
        if [ -e "$DIR/$part" ]; then mv "$DIR/$part" "$DIR/$part.old"; fi
        mv "$NEW/$part" "$DIR/$part"
    done
    mv "$NEW/build.log" "$DIR/src/build.log" 2>/dev/null || true
    rm -rf "$DIR/src.old" "$DIR/lib.old" "$DIR/bin.old" "$NEW"
    say "installed $VERSION in $DIR"
    done_step

    step "register with $SERVER"
    if [ -f "$STATE/credential.json" ]; then
        say "already registered (credential in $STATE): registration skipped, checking the server accepts it"
    fi
    rc=0
    HOSTBENCH_REGISTRATION_TOKEN=$TOKEN "$DIR/bin/hostbench-runner" --register-only \
        >"$DIR/register.log" 2>&1 </dev/null || rc=$?
    case $rc in
        0) ;;
        3) tail -n 5 "$DIR/register.log" >&2
           die "the server refused the token or the stored credential (used, expired or revoked): get a new command from Add host; to register again, delete $STATE/credential.json" ;;
        *) tail -n 10 "$DIR/register.log" >&2
           die "registration failed (exit $rc; log: $DIR/register.log)" ;;
    esac
    done_step

    SYSTEMD=0
    if [ -d "$SYSTEMD_RUN" ] && command -v systemctl >/dev/null 2>&1; then SYSTEMD=1; fi
    if [ "$SERVICE" = 1 ] && [ "$SYSTEMD" = 1 ] && [ "$(id -u)" = 0 ]; then
        step "systemd unit $UNIT"
        cat >"$UNIT_DIR/$UNIT" <<UNIT_EOF
# Written by the hostbench installer ($VERSION); run the install command again to upgrade.
[Unit]
Description=hostbench runner ($SERVER)
Wants=network-online.target
After=network-online.target

[Service]
ExecStart=$DIR/bin/hostbench-runner
Restart=on-failure
RestartSec=5
# 2: bad settings, 3: credential refused (revoked): restarting does not help.
RestartPreventExitStatus=2 3
# SIGTERM to the runner only: it stops its kernel and reports the run; then SIGKILL to whatever is left.
KillMode=mixed
TimeoutStopSec=30

[Install]
WantedBy=multi-user.target
UNIT_EOF
        systemctl daemon-reload </dev/null
        systemctl enable "$UNIT" </dev/null >/dev/null 2>&1
        systemctl restart "$UNIT" </dev/null
        say "systemd: wrote $UNIT_DIR/$UNIT, enabled it and (re)started it"
        say "  status: systemctl status $UNIT; logs: journalctl -u $UNIT -f"
        done_step
    elif [ "$START" = 0 ]; then
        if [ "$SERVICE" = 1 ]; then
            if [ "$SYSTEMD" = 0 ]; then say "no systemd here: no service installed"
            else say "not root: no systemd service installed"; fi
        fi
        if [ "$WAS_ACTIVE" = 1 ]; then
            say "the $UNIT service was stopped for the upgrade; start it: systemctl start $UNIT"
        fi
        say "start the runner with: $DIR/bin/hostbench-runner"
        say "  or in the background: nohup $DIR/bin/hostbench-runner >>$DIR/runner.log 2>&1 &"
        if [ "$WAS_STARTED" = 1 ]; then
            say "(the runner started by an earlier --start was stopped for the upgrade)"
        fi
    fi

    if [ "$START" = 1 ]; then
        step "start in the background"
        stop_background
        if command -v setsid >/dev/null 2>&1; then
            setsid "$DIR/bin/hostbench-runner" >>"$DIR/runner.log" 2>&1 </dev/null &
        else
            nohup "$DIR/bin/hostbench-runner" >>"$DIR/runner.log" 2>&1 </dev/null &
        fi
        echo $! >"$DIR/runner.pid"
        sleep 1
        running_pid >/dev/null || { tail -n 20 "$DIR/runner.log" >&2; die "the runner exited at once (log: $DIR/runner.log)"; }
        say "runner started: pid $(cat "$DIR/runner.pid") (pid file $DIR/runner.pid, log $DIR/runner.log)"
        say "  stop it: kill \$(cat $DIR/runner.pid)"
        done_step
    fi
    STEP="total"; T_STEP=$T_ALL; done_step
}

main "$@"
