"""One settings object per program: ./hostbench's (hostbench_stack.settings), the server's (backend/app/core/config.py), the
runner's (runner/hostbench_runner/config.py). Nothing else reads a variable, and the README's table is theirs."""
import re
from pathlib import Path

import pytest

from hostbench_stack import settings
from hostbench_stack.testing import PY_PACKAGES

ROOT = Path(__file__).resolve().parents[2]
SETTINGS_MODULES = {"backend/app/core/config.py", "runner/hostbench_runner/config.py", "stack/hostbench_stack/settings.py"}
# What is left, and why: the load harness hands its child a token in the child's own environment (harness/.../load/).
# The common package's reference tools look a tool up on PATH, as the shell would (a lookup, not a setting).
LEFT = {"harness/hostbench_harness/load/burster.py", "common/hostbench_common/reftools/engine.py",
        "common/hostbench_common/reftools/serve.py"}
READ = re.compile(r"os\.environ(\.get\(|\[)|os\.getenv\(|\bin os\.environ\b(?!\.)")


def test_the_readme_table_is_the_settings():
    text = (ROOT / "README.md").read_text()
    assert settings.readme_with_table(text) == text, "run: .venv/bin/python -m hostbench_stack.settings --write"


def test_no_module_reads_a_variable_outside_the_settings():
    found = []
    for folder, package in PY_PACKAGES:
        for path in sorted((ROOT / folder / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in SETTINGS_MODULES | LEFT:
                continue
            found += [f"{rel}:{n}: {line.strip()}" for n, line in enumerate(path.read_text().splitlines(), 1)
                      if READ.search(line)]
    assert found == [], "read it through the settings object:\n" + "\n".join(found)


def test_values_are_typed_and_a_bad_one_is_named():
    s = settings.load({"HOSTBENCH_PORT": "8170", "HOSTBENCH_E2E_ONLY": "hosts verdicts", "HOSTBENCH_PUBLIC_URL":
                       "https://bench.example.org/"})
    assert (s.port, s.runner_port, s.e2e_only, s.public_url) == (8170, None, ("hosts", "verdicts"),
                                                                 "https://bench.example.org")
    assert settings.load({}).start_stall_s == 300.0
    for name, value in (("HOSTBENCH_PORT", "eighty"), ("HOSTBENCH_RUNNER_PORT", "70000"),
                        ("HOSTBENCH_API_WORKERS", "0"), ("HOSTBENCH_START_STALL_S", "-1")):
        with pytest.raises(settings.SettingError, match=name):
            settings.load({name: value})


def test_each_variable_is_declared_once_in_the_cli():
    names = [settings.env_name(f) for f in settings.Settings.__dataclass_fields__]
    assert len(names) == len(set(names))
