"""`./hostbench parse TOOL FILE` (reftools/cli.py): output shape, exit codes, format detection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hostbench_common.reftools import JSON_TOOLS, TOOLS, parse_text
from hostbench_common.reftools.cli import main

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "reftools"

ONE_PER_TOOL = {
    "stream": "stream-5.10-gcc-O2.txt",
    "hpl": "hpcc-1.5.0-np2-N1000-1500.txt",
    "hpcc": "hpcc-1.5.0-np2-N1000-1500.txt",
    "fio": "fio-3.33-seqread.json",
    "iozone": "iozone-3.489-auto.txt",
    "iperf3": "iperf3-3.12-tcp.json",
    "iperf2": "iperf2-2.1.8-udp.txt",
    "ping": "ping-iputils-20221126-loopback.txt",
    "sockperf": "sockperf-3.7-ping-pong-udp.txt",
}


def test_tool_list_is_the_contract():
    assert set(TOOLS) == {"stream", "hpl", "hpcc", "fio", "iozone", "iperf3", "iperf2", "ping", "sockperf"}
    assert set(ONE_PER_TOOL) == set(TOOLS)


@pytest.mark.parametrize("tool", sorted(ONE_PER_TOOL))
def test_every_tool_prints_the_contract_shape(tool, capsys):
    assert main([tool, str(FIXTURES / ONE_PER_TOOL[tool])]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    doc = json.loads(out)
    assert set(doc) == {"tool", "format", "metrics"} and doc["tool"] == tool
    assert doc["format"] in ("json", "text")
    assert doc["metrics"]
    for m in doc["metrics"]:
        assert isinstance(m["name"], str) and isinstance(m["unit"], str)
        assert isinstance(m["value"], (int, float)) and not isinstance(m["value"], bool)


@pytest.mark.parametrize(
    ("tool", "name", "fmt"),
    [
        ("fio", "fio-3.33-seqread.json", "json"),
        ("fio", "fio-3.33-randrw-jsonplus.json", "json"),
        ("fio", "fio-3.33-randrw.txt", "text"),
        ("iperf3", "iperf3-3.12-udp.json", "json"),
        ("iperf3", "iperf3-3.12-udp.txt", "text"),
        ("stream", "stream-5.10-gcc-O2.txt", "text"),
    ],
)
def test_format_is_detected_from_the_content_not_the_name(tool, name, fmt, tmp_path, capsys):
    blind = tmp_path / "output"  # no extension
    blind.write_bytes((FIXTURES / name).read_bytes())
    assert main([tool, str(blind)]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == fmt


def test_json_after_tool_warnings_and_crlf_are_read():
    text = (FIXTURES / "fio-3.33-seqread.json").read_text()
    warned = "fio: this platform does not support process shared mutexes, forcing use of threads\r\n" + \
        text.replace("\n", "\r\n")
    assert parse_text("fio", warned)["metrics"][0]["value"] == 1355.893184
    assert JSON_TOOLS == {"fio", "iperf3"}


def test_refusal_exit_1_message_on_stderr_nothing_on_stdout(capsys):
    assert main(["iperf3", str(FIXTURES / "iperf3-3.12-error-connect.json")]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("hostbench parse: iperf3: ") and "unable to connect to server" in err


def test_empty_file_exit_1(capsys):
    assert main(["ping", str(FIXTURES / "empty.txt")]) == 1
    assert "the file is empty" in capsys.readouterr().err


def test_wrong_tools_output_exit_1(capsys):
    assert main(["stream", str(FIXTURES / "iozone-3.489-auto.txt")]) == 1
    assert "it looks like iozone output" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["nosuchtool", "x"], "unknown tool 'nosuchtool'"),
        (["fio", "/nonexistent/hostbench/out.json"], "no such file"),
        (["fio"], "usage: ./hostbench parse TOOL FILE"),
        ([], "usage: ./hostbench parse TOOL FILE"),
    ],
)
def test_usage_errors_exit_2(args, match, capsys):
    assert main(args) == 2
    assert match in capsys.readouterr().err


def test_a_directory_is_a_usage_error(tmp_path, capsys):
    assert main(["fio", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_binary_garbage_is_refused(tmp_path, capsys):
    junk = tmp_path / "junk"
    junk.write_bytes(b"\x00\xff\xfe" * 100)
    assert main(["fio", str(junk)]) == 1
    assert "NUL bytes" in capsys.readouterr().err


def test_real_process_and_stdin(cli):
    done = cli("ping", str(FIXTURES / "ping-iputils-20221126-loopback.txt"))
    assert done.returncode == 0 and json.loads(done.stdout)["metrics"][1] == {
        "name": "rtt_min", "value": 0.03, "unit": "ms", "transmitted": 5, "received": 5, "format_variant": "iputils"}
    piped = cli("ping", "-", stdin=(FIXTURES / "ping-iputils-20221126-quiet.txt").read_text())
    assert piped.returncode == 0 and json.loads(piped.stdout)["tool"] == "ping"
    bad = cli("hpcc", str(FIXTURES / "hpcc-1.5.0-error-killed-midrun.txt"))
    assert bad.returncode == 1 and bad.stdout == "" and "did not finish" in bad.stderr
    usage = cli("bogus", "x")
    assert usage.returncode == 2


def test_every_negative_fixture_is_refused_by_every_parser():
    """Whatever tool it is given to, an error report, a truncated copy or an empty file yields no figure."""
    negatives = [p for p in FIXTURES.iterdir() if p.suffix in (".txt", ".json") and (
        "-error-" in p.name or "truncated" in p.name or "ocr" in p.name or p.name == "empty.txt"
        or "no-server-ack" in p.name)]
    assert len(negatives) >= 35
    accepted = []
    for path in negatives:
        text = path.read_text()
        for tool in TOOLS:
            if tool == "hpl" and path.name.startswith("hpcc-1.5.0-np2-N1000-1500-truncated"):
                continue  # cut inside the summary: its HPL section is complete and readable
            if tool == "stream" and path.name.startswith("hpcc-1.5.0-np2-"):
                continue  # the STREAM table of those hpcc runs is complete and validated
            try:
                parse_text(tool, text)
            except Exception as exc:  # noqa: BLE001 - only ParseError is acceptable
                assert type(exc).__name__ == "ParseError", f"{tool} {path.name}: {exc!r}"
            else:
                accepted.append((tool, path.name))
    assert accepted == []


def test_each_real_output_is_accepted_only_by_its_own_parsers():
    """A tool's output given to another tool's parser is refused; hpcc's file legitimately holds HPL and STREAM."""
    expected = {
        "hpcc-1.5.0-np2-N1000-1500.txt": {"hpcc", "hpl", "stream"},
        "hpcc-1.5.0-np2-hpl-residual-failed.txt": {"hpl", "stream"},  # hpcc refuses Success=0, hpl flags the row
        "seed-004-linpack-intel-mkl2018.txt": {"hpl"},
    }
    for path in sorted(FIXTURES.iterdir()):
        if path.suffix not in (".txt", ".json") or path.name.startswith("hpcc-") and path.name not in expected:
            continue
        if "-error-" in path.name or "truncated" in path.name or "ocr" in path.name or "no-server-ack" in path.name \
                or path.name == "empty.txt":
            continue
        own = expected.get(path.name) or {path.name.split("-")[0 if not path.name.startswith("seed-") else 2]}
        accepted = set()
        for tool in TOOLS:
            try:
                parse_text(tool, path.read_text())
                accepted.add(tool)
            except Exception as exc:  # noqa: BLE001
                assert type(exc).__name__ == "ParseError"
        assert accepted == own, path.name


def test_pathological_lines_are_refused_quickly():
    import time

    evil = "[  5]   0.00-2.00   sec  2.80 GBytes  12.0 Gbits/sec" + " " * 200_000 + "x\niperf Done.\n"
    start = time.monotonic()
    for tool in TOOLS:
        with pytest.raises(Exception, match=r"a line of \d+ characters") as info:
            parse_text(tool, "Connecting to host 127.0.0.1, port 5201\n" + evil)
        assert type(info.value).__name__ == "ParseError"
    assert time.monotonic() - start < 2.0
