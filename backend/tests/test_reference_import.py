"""Reference outputs imported into a host's history (`./hostbench parse TOOL FILE --import`): parsed by the server,
stored marked imported with where they came from and who brought them; operators import, viewers read."""
from pathlib import Path

from tests.conftest import make_user

FIXTURES = Path(__file__).resolve().parents[2] / "common" / "tests" / "fixtures" / "reftools"


def _import(client, host_id, tool, body: bytes, headers=None, file_name="seqread.json"):
    return client.post("/api/reference/imports", params={"host_id": host_id, "tool": tool, "file_name": file_name},
                       content=body, headers={"content-type": "text/plain", **(headers or {})})


def test_operator_imports_a_row_viewer_reads_it(anon_client, session, runner):
    host_id, _ = runner
    operator, viewer = make_user(session, "op", "operator"), make_user(session, "vi", "viewer")
    body = (FIXTURES / "fio-3.33-seqread.json").read_bytes()
    r = _import(anon_client, host_id, "fio", body, operator)
    assert r.status_code == 201, r.text
    row = r.json()
    assert (row["host_id"], row["host_name"], row["tool"], row["format"]) == (host_id, "test-host", "fio", "json")
    assert (row["imported"], row["imported_by"], row["file_name"]) == (True, "op", "seqread.json")
    bw = next(m for m in row["metrics"] if m["name"] == "bw")
    assert bw["unit"] == "MB/s" and abs(bw["value"] - 1355.893184) < 1e-6

    assert _import(anon_client, host_id, "fio", body, viewer).status_code == 403
    assert _import(anon_client, host_id, "fio", body).status_code == 401
    listed = anon_client.get(f"/api/reference/imports?host_id={host_id}", headers=viewer).json()
    assert listed["count"] == 1 and listed["data"][0]["id"] == row["id"]
    assert anon_client.get("/api/reference/imports?host_id=999", headers=viewer).json()["count"] == 0
    assert anon_client.get("/api/reference/imports").status_code == 401
    audit = anon_client.get("/api/audit", headers=make_user(session, "ad", "admin"))
    if audit.status_code == 200:  # the audit log names the import
        assert any(e.get("action") == "reference.import" for e in audit.json().get("data", []))


def test_bad_output_or_unknown_host_stores_nothing(client, runner):
    host_id, _ = runner
    r = _import(client, host_id, "fio", (FIXTURES / "fio-3.33-seqread-truncated.json").read_bytes())
    assert r.status_code == 422 and r.json()["detail"].startswith("fio: ")
    assert _import(client, 4242, "fio", (FIXTURES / "fio-3.33-seqread.json").read_bytes()).status_code == 404
    assert _import(client, host_id, "fio", b"{}", file_name="../etc/passwd").status_code == 422
    assert client.get("/api/reference/imports").json()["count"] == 0
