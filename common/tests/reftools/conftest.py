"""Helpers of the reference-tool parser tests: fixture files live in tests/fixtures/reftools/ (see its README)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hostbench_common.reftools import ParseError, parse_text

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "reftools"


def read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.fixture
def load():
    """load(fixture name) -> its text, to derive an edited copy in a test."""
    return read


@pytest.fixture
def parse():
    """parse(tool, fixture name) -> the result dict."""

    def run(tool: str, name: str) -> dict[str, Any]:
        return parse_text(tool, read(name))

    return run


@pytest.fixture
def refuse():
    """refuse(tool, fixture name or text, match) -> the ParseError message; fails if the parser accepts."""

    def run(tool: str, name: str, match: str) -> str:
        text = read(name) if "\n" not in name and (FIXTURES / name).is_file() else name
        with pytest.raises(ParseError, match=match) as info:
            parse_text(tool, text)
        return str(info.value)

    return run


@pytest.fixture
def cli():
    """cli(*args) -> CompletedProcess of `python -m hostbench_common.reftools.cli ARGS` (a real process)."""

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "hostbench_common.reftools.cli", *args], input=stdin,
                              capture_output=True, text=True, timeout=60, check=False)

    return run


def _pick(result: dict[str, Any], name: str, **keys: Any) -> dict[str, Any]:
    found = [m for m in result["metrics"] if m["name"] == name
             and all((k not in m) if v is None else m.get(k) == v for k, v in keys.items())]
    assert len(found) == 1, f"{len(found)} metrics {name} {keys}: {found}"
    return found[0]


@pytest.fixture
def pick():
    """pick(result, name, **keys) -> the one metric called `name` whose extra keys match (None: key absent)."""
    return _pick
