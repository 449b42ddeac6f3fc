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


def chromium() -> str:
    """Debian's chromium for the browser tests, installed by apt when missing."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    if os.geteuid() != 0:
        raise RuntimeError("chromium is missing: install Debian's `chromium` package (sudo apt-get install chromium)")
    say("installing Debian's chromium (apt-get)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium", "fonts-dejavu-core"],
                   check=True, env=env, stdout=subprocess.DEVNULL)
    path = shutil.which("chromium")
    if not path:
        raise RuntimeError("apt-get installed chromium but it is not on PATH")
    return path
