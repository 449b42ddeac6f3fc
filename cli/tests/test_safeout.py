"""No runner- or server-set text reaches the operator's terminal as control characters (hostbench_cli/safeout.py):
a host name holding ESC [2J (clear screen), a bidi override or a zero-width space is printed as visible escapes."""
import io
import sys

from hostbench_cli.remote import runs_table
from hostbench_cli.safeout import SafeText, escape, install

EVIL = "web\x1b[2J\x1b]0;pwned\x07\u202egnp.exe\u200b\r\x9b31m"


def _run(name: str) -> dict:
    return {"id": 7, "host_name": name, "experiment": "cpu", "params": {}, "status": "succeeded", "result": None,
            "finished_at": None}


def test_escape_shows_every_control_and_invisible_character():
    shown = escape(EVIL)
    assert shown == "web\\x1b[2J\\x1b]0;pwned\\x07\\u202egnp.exe\\u200b\\x0d\\x9b31m"
    assert escape("two\tcolumns\nand lines, ünïcödé, 日本") == "two\tcolumns\nand lines, ünïcödé, 日本"


def test_runs_table_and_every_print_are_escaped(monkeypatch):
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    install()
    assert isinstance(sys.stdout, SafeText) and isinstance(sys.stderr, SafeText)
    print(runs_table([_run(EVIL)]))
    print(f"run 7 failed: {EVIL}", file=sys.stderr)
    for text in (out.getvalue(), err.getvalue()):
        assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text and "\x9b" not in text
        assert "\\x1b[2J" in text
    lines = out.getvalue().splitlines()
    assert lines[1].index("cpu") == lines[0].index("EXPERIMENT")  # escaped before the widths: columns align
