"""The runner runs on Python 3.9 (Debian 11, RHEL 9) with the standard library only: vermin, run on the package,
the common package it ships (common/hostbench_common, copied into its wheel by setup.py) and setup.py, finds
nothing that needs a later Python; the runner imports nothing outside the standard library but the common package,
and the common package nothing outside the standard library at all. (vermin is in the [test] extra: a missing
vermin fails here, it is never a skip.)"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

RUNNER = Path(__file__).resolve().parents[1]
COMMON = RUNNER.parent / "common"
VERMIN = "import sys; from vermin import main; sys.exit(main())"


def vermin(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", VERMIN, "-t=3.9-", "--no-tips", "--violations",
                           "--eval-annotations", *map(str, paths)], capture_output=True, text=True, timeout=300)


def test_vermin_finds_nothing_that_needs_more_than_python_3_9():
    out = vermin(RUNNER / "hostbench_runner", COMMON / "hostbench_common", RUNNER / "setup.py")
    assert "No module named" not in out.stderr, "vermin is missing: pip install -e 'runner[test]'"
    assert out.returncode == 0 and "Target versions not met" not in out.stdout, out.stdout + out.stderr


def test_vermin_does_report_a_violation(tmp_path):
    """The check above is not vacuous: code that needs 3.10 or 3.11 is reported."""
    (tmp_path / "new.py").write_text("import subprocess\n"
                                     "pairs = list(zip([1], [2], strict=True))\n"
                                     "subprocess.Popen(['true'], process_group=0)\n")
    out = vermin(tmp_path / "new.py")
    assert out.returncode != 0 and "zip(strict)" in out.stdout and "process_group" in out.stdout, out.stdout


def imports_outside_the_standard_library(package: Path, allowed: set[str]) -> dict[str, list[str]]:
    """{top-level module: [files importing it]} of the absolute imports in `package` outside the standard library
    and `allowed`."""
    stdlib = set(sys.stdlib_module_names)
    outside: dict[str, list[str]] = {}
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top not in stdlib and top not in allowed:
                    outside.setdefault(top, []).append(str(path.relative_to(package.parent)))
    return outside


def test_the_package_imports_the_standard_library_and_the_common_package_only():
    outside = imports_outside_the_standard_library(RUNNER / "hostbench_runner", {"hostbench_runner", "hostbench_common"})
    assert outside == {}, f"imports outside the standard library: {outside}"


def test_the_common_package_imports_the_standard_library_only():
    """Not even the runner: the backend and the CLI import it too, and the runner's wheel carries a copy."""
    common = COMMON / "hostbench_common"
    assert (common / "reftools" / "__init__.py").is_file(), common
    outside = imports_outside_the_standard_library(common, {"hostbench_common"})
    assert outside == {}, f"imports outside the standard library: {outside}"


def test_the_import_check_is_not_vacuous(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "a.py").write_text("import json\nfrom . import b\nfrom hostbench_runner.kernel import KernelProcess\n"
                              "import requests.adapters\n")
    assert imports_outside_the_standard_library(pkg, {"hostbench_common"}) == {
        "hostbench_runner": ["pkg/a.py"], "requests": ["pkg/a.py"]}
