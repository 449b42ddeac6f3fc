"""Uploaded reference-tool output goes through the parsers the runner uses too (hostbench_common.reftools); bad
output is refused, never half-read."""
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[2] / "common" / "tests" / "fixtures" / "reftools"


def _post(client, tool, body: bytes):
    return client.post(f"/api/reference/parse?tool={tool}", content=body, headers={"content-type": "text/plain"})


def test_upload_fio_json_is_parsed_into_metrics_with_units(client):
    r = _post(client, "fio", (FIXTURES / "fio-3.33-seqread.json").read_bytes())
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["tool"], body["format"]) == ("fio", "json")
    bw = next(m for m in body["metrics"] if m["name"] == "bw")
    assert bw["unit"] == "MB/s" and abs(bw["value"] - 1355.893184) < 1e-6


def test_truncated_output_is_refused_with_the_reason(client):
    r = _post(client, "fio", (FIXTURES / "fio-3.33-seqread-truncated.json").read_bytes())
    assert r.status_code == 422
    assert r.json()["detail"].startswith("fio: ")


def test_unknown_tool_and_binary_content_are_refused(client):
    assert _post(client, "sysbench", b"x").status_code == 422
    r = _post(client, "ping", b"\xff\xfe\x00garbage")
    assert r.status_code == 422 and "not UTF-8" in r.json()["detail"]
