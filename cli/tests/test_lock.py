"""requirements.lock pins every Python dependency our pyproject files name (test extras too), with hashes; a
dependency added to a pyproject without `./hostbench lock` fails here. Our own packages are installed from the
checkout, never pinned."""
import re
import tomllib

from hostbench_stack import ROOT
from hostbench_stack.testing import PY_PACKAGES


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
    projects = {pkg: tomllib.loads((ROOT / pkg / "pyproject.toml").read_text())["project"] for pkg, _ in PY_PACKAGES}
    ours = {_name(project["name"]) for project in projects.values()}
    for pkg, project in projects.items():
        reqs = [*project.get("dependencies", []), *project.get("optional-dependencies", {}).get("test", [])]
        missing += [f"{pkg}: {r}" for r in reqs if _name(r) not in set(pins) | ours]
        assert not ours & set(pins), "our own packages are installed from the checkout: not in requirements.lock"
    assert not missing, f"not in requirements.lock (run ./hostbench lock): {missing}"
    text = (ROOT / "requirements.lock").read_text()
    assert text.count("==") <= text.count("--hash=sha256:")
