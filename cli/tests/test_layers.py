"""Our Python packages import downward only, and only what their pyproject.toml declares (docs/architecture.md,
"Packages"): a package's code imports its `dependencies`; its tests may also import its `test` extra. The declared
graph has no cycle. The backend's tests reach the stack through the declared `hostbench-stack`, never the command
line (`hostbench_cli`). In ./hostbench's own packages an import of ours sits at the top of its module, where a
reader sees it: not hidden in a function body (a type-only one under `if TYPE_CHECKING:` excepted)."""
import ast
import re
import tomllib
from pathlib import Path

from hostbench_stack.testing import PY_PACKAGES, TOOL_PACKAGES

ROOT = Path(__file__).resolve().parents[2]
# The one package whose code imports one of ours without declaring it, and why: the runner installs on hosts with
# no index to reach (Python 3.9, the standard library only), so its wheel carries a copy of hostbench_common
# (runner/setup.py) instead of naming it.
CARRIED = {("hostbench_runner", "hostbench_common")}
# Imports of ours that may stay inside a function in ./hostbench's packages, and why.
LATE = {"app": "the backend reads its settings when its modules are first imported: after the environment is set"}


def _project(folder: str) -> dict:
    return tomllib.loads((ROOT / folder / "pyproject.toml").read_text())


def _dist(req: str) -> str:
    return re.split(r"[\s\[<>=!~;]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def packages() -> dict[str, dict]:
    """import name -> {folder, dist, deps (import names), test (import names)}, for each of our packages."""
    info = {}
    for folder, name in PY_PACKAGES:
        project = _project(folder)["project"]
        info[name] = {"folder": folder, "dist": project["name"],
                      "deps": [_dist(r) for r in project.get("dependencies", [])],
                      "test": [_dist(r) for r in project.get("optional-dependencies", {}).get("test", [])]}
    by_dist = {v["dist"]: k for k, v in info.items()}
    for v in info.values():
        v["deps"] = {by_dist[d] for d in v["deps"] if d in by_dist}
        v["test"] = {by_dist[d] for d in v["test"] if d in by_dist}
    return info


def imports_of(path: Path, ours: set[str]) -> list[tuple[str, int, bool]]:
    """(our package imported, line, inside a function) for every import in a file; `if TYPE_CHECKING:` ones left out."""
    tree = ast.parse(path.read_text(), str(path))
    type_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
                 for n in ast.walk(node)}
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.Import | ast.ImportFrom) and id(child) not in type_only:
                names = [a.name for a in child.names] if isinstance(child, ast.Import) else \
                    [child.module or ""] if not child.level else []
                for name in names:
                    top = name.split(".")[0]
                    if top in ours:
                        found.append((top, child.lineno, in_function))
            visit(child, inside)

    visit(tree, False)
    return found


def undeclared(root: Path = ROOT, info: dict[str, dict] | None = None) -> list[str]:
    info = packages() if info is None else info
    out = []
    for name, pkg in info.items():
        for where, allowed in ((root / pkg["folder"] / name, pkg["deps"] | {name}),
                               (root / pkg["folder"] / "tests", pkg["deps"] | pkg["test"] | {name})):
            for path in sorted(where.rglob("*.py")):
                for target, line, _ in imports_of(path, set(info)):
                    if target not in allowed and (name, target) not in CARRIED:
                        out.append(f"{path.relative_to(root)}:{line} imports {target}, which "
                                   f"{pkg['folder']}/pyproject.toml does not declare")
    return out


def cycle(info: dict[str, dict]) -> list[str] | None:
    """A cycle in the declared dependencies (test extras left out), as the packages along it, or None."""
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m], _ = 1, path.append(m)
        for n in sorted(info[m]["deps"]):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state and (found := visit(n)):
                return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(info):
        if m not in state and (found := visit(m)):
            return found
    return None


def hidden(root: Path = ROOT, info: dict[str, dict] | None = None, tools: tuple[str, ...] = TOOL_PACKAGES) -> list[str]:
    info = packages() if info is None else info
    out = []
    for name, pkg in info.items():
        if pkg["folder"] not in tools:
            continue
        for path in sorted((root / pkg["folder"] / name).rglob("*.py")):
            out += [f"{path.relative_to(root)}:{line} imports {target} inside a function"
                    for target, line, inside in imports_of(path, set(info)) if inside and target not in LATE]
    return out


def test_every_import_of_ours_is_declared():
    assert undeclared() == []


def test_the_declared_packages_point_down_only():
    assert cycle(packages()) is None


def test_the_backend_tests_never_import_the_command_line():
    info = packages()
    assert "hostbench_cli" not in info["app"]["deps"] | info["app"]["test"]


def test_imports_of_ours_sit_at_the_top_of_the_tool_modules():
    assert hidden() == []


def test_the_bootstrap_installs_every_package():
    """./hostbench installs (editable) exactly the packages the suites lint and test, lower ones first."""
    line = re.search(r"^PACKAGES=\((.*)\)$", (ROOT / "hostbench").read_text(), re.M)
    assert line, "./hostbench lost its PACKAGES=(...) line"
    folders = line.group(1).split()
    assert sorted(folders) == sorted(folder for folder, _ in PY_PACKAGES)
    info = packages()
    by_folder = {v["folder"]: k for k, v in info.items()}
    for i, folder in enumerate(folders):
        below = {by_folder[f] for f in folders[:i]}
        assert info[by_folder[folder]]["deps"] <= below, f"{folder} is installed before a package it needs"


def test_the_checks_see_what_they_guard(tmp_path):
    """On made-up packages: an undeclared import, one hidden in a function (and a type-only one, which is not), a
    test importing its package's test extra, a cycle."""
    files = {"low/low/a.py": "import os\nfrom top import x\n",
             "low/tests/test_a.py": "from low import a\n",
             "top/top/b.py": "from typing import TYPE_CHECKING\nfrom low import a\n\nif TYPE_CHECKING:\n"
                             "    from low.a import A\n\ndef f():\n    from low import a\n",
             "top/tests/test_b.py": "from low import a\nfrom top import b\nfrom extra import c\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    info = {"low": {"folder": "low", "deps": set(), "test": set()},
            "top": {"folder": "top", "deps": {"low"}, "test": {"extra"}},
            "extra": {"folder": "extra", "deps": set(), "test": set()}}
    assert undeclared(tmp_path, info) == ["low/low/a.py:2 imports top, which low/pyproject.toml does not declare"]
    assert hidden(tmp_path, info, tools=("top",)) == ["top/top/b.py:8 imports low inside a function"]
    assert cycle(info) is None
    info["low"]["deps"] = {"top"}
    assert cycle(info) == ["low", "top", "low"]
