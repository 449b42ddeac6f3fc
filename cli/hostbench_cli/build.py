"""Install and build steps the project needs, run by the project itself (never by hand)."""
import os
import shutil
import subprocess
from pathlib import Path

from hostbench_cli import ROOT

KERNELS = ROOT / "runner" / "kernels"
FRONTEND = ROOT / "frontend"


def say(msg: str) -> None:
    print(f"[hostbench] {msg}", flush=True)


def _newest(paths: list[Path]) -> float:
    return max((p.stat().st_mtime for d in paths if d.exists()
                for p in ([d] if d.is_file() else d.rglob("*")) if p.is_file()), default=0.0)


def kernels() -> Path:
    say("building the C kernels (make)")
    subprocess.run(["make", "-s", "-C", str(KERNELS)], check=True)
    return KERNELS / "build" / "hbk"


def npm_install() -> None:
    lock = FRONTEND / "package-lock.json"
    stamp = FRONTEND / "node_modules" / ".hostbench-installed"
    if stamp.exists() and stamp.stat().st_mtime >= lock.stat().st_mtime:
        return
    say("installing frontend packages (npm ci)")
    env = dict(os.environ, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1", npm_config_fund="false", npm_config_audit="false")
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=FRONTEND, check=True, env=env)
    stamp.touch()


def frontend() -> Path:
    npm_install()
    dist = FRONTEND / "dist"
    sources = [FRONTEND / "src", FRONTEND / "index.html", FRONTEND / "package-lock.json", FRONTEND / "vite.config.ts"]
    if not (dist / "index.html").exists() or _newest(sources) > (dist / "index.html").stat().st_mtime:
        say("building the dashboard (npm run build)")
        subprocess.run(["npm", "run", "build", "--silent"], cwd=FRONTEND, check=True)
    return dist


def apt_install(packages: list[str], why: str) -> None:
    """Debian packages by apt-get (argv, no shell); only as root, else a clear error naming them."""
    if os.geteuid() != 0:
        raise RuntimeError(f"{why}: install Debian's {' '.join(packages)} (sudo apt-get install {' '.join(packages)})")
    say(f"installing {' '.join(packages)} (apt-get): {why}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages],
                   check=True, env=env, stdout=subprocess.DEVNULL)


def chromium() -> str:
    """Debian's chromium for the browser tests, installed by apt when missing."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    apt_install(["chromium", "fonts-dejavu-core"], "the browser tests need chromium")
    path = shutil.which("chromium")
    if not path:
        raise RuntimeError("apt-get installed chromium but it is not on PATH")
    return path


# The command each test-time tool provides -> its Debian package. The tests run the real tools: `ip` makes
# the network namespaces of the two-host tests, the others are reference tools run beside our kernels.
TEST_TOOLS = {"ip": "iproute2", "iperf3": "iperf3", "sockperf": "sockperf", "ping": "iputils-ping"}


def test_tools() -> None:
    """Installs the test-time tools that are missing (as root, with apt); a non-root run is told which
    are missing, and the tests that need them skip with that reason."""
    missing = sorted({pkg for cmd, pkg in TEST_TOOLS.items() if shutil.which(cmd) is None})
    if not missing:
        return
    try:
        apt_install(missing, "the network and reference-tool tests run these for real")
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        say(f"not installed ({exc}); the tests that need them will skip and say why")
