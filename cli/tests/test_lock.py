"""requirements.lock pins every Python dependency the three pyproject files name (test extras too), with
hashes; a dependency added to a pyproject without `./hostbench lock` fails here."""
import re
import tomllib

from hostbench_cli import ROOT


def _name(req: str) -> str:
    return re.split(r"[\s\[<>=!~;]", req.strip(), maxsplit=1)[0].lower().replace("_", "-").replace(".", "-")


def _locked() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)", line)
        if m:
            pins[_name(m.group(1))] = m.group(2)
    return pins


def test_every_dependency_is_pinned_with_hashes():
    pins = _locked()
    missing = []
    for pkg in ("backend", "runner", "cli"):
        project = tomllib.loads((ROOT / pkg / "pyproject.toml").read_text())["project"]
        reqs = [*project.get("dependencies", []), *project.get("optional-dependencies", {}).get("test", [])]
        missing += [f"{pkg}: {r}" for r in reqs if _name(r) not in pins]
    assert not missing, f"not in requirements.lock (run ./hostbench lock): {missing}"
    text = (ROOT / "requirements.lock").read_text()
    assert text.count("==") <= text.count("--hash=sha256:")
