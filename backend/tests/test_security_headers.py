"""Security headers (app/core/headers.py) on the API, the dashboard's files and the downloaded report; the report's
own policy allows its inline stylesheet by hash, so it keeps working offline; nginx sends the dashboard's policy."""
import base64
import hashlib
import re
from pathlib import Path

from fastapi.testclient import TestClient

from app.core.config import get_settings
from app.core.headers import API_CSP, DASHBOARD_CSP
from tests.test_report import _finished

ROOT = Path(__file__).resolve().parents[2]


def _framing_and_sniffing_refused(headers) -> None:
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in headers["content-security-policy"]


def test_every_api_answer_carries_the_headers(client, anon_client):
    for r in (anon_client.get("/api/health"), anon_client.get("/api/hosts"), client.get("/api/hosts"),
              client.get("/api/no-such-route"), anon_client.get("/docs")):
        _framing_and_sniffing_refused(r.headers)
    assert anon_client.get("/api/hosts").headers["content-security-policy"] == API_CSP


def test_the_dashboard_runs_only_its_own_scripts(tmp_path, monkeypatch):
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text((ROOT / "frontend" / "index.html").read_text())
    (tmp_path / "theme.js").write_text((ROOT / "frontend" / "public" / "theme.js").read_text())
    monkeypatch.setenv("FRONTEND_DIST", str(tmp_path))
    get_settings.cache_clear()
    from app.main import create_app

    with TestClient(create_app()) as c:
        for path in ("/", "/runs/1", "/theme.js"):
            r = c.get(path)
            assert r.status_code == 200, path
            _framing_and_sniffing_refused(r.headers)
            assert r.headers["content-security-policy"] == DASHBOARD_CSP
    get_settings.cache_clear()
    assert "'unsafe-inline'" not in DASHBOARD_CSP.split("script-src")[1].split(";")[0]
    page = (ROOT / "frontend" / "index.html").read_text()
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", page), "an inline script: the policy would block it"


def test_nginx_sends_the_same_policy_for_the_dashboards_files():
    conf = (ROOT / "deploy" / "nginx" / "hostbench-locations.conf").read_text()
    policies = re.findall(r'add_header Content-Security-Policy "([^"]*)" always;', conf)
    assert policies and all(p == DASHBOARD_CSP for p in policies), policies
    assert conf.count("add_header X-Frame-Options DENY always;") == len(policies)


def test_the_downloaded_report_allows_exactly_its_inline_style(client, session, runner):
    host_id, headers = runner
    run_id = _finished(client, session, host_id, headers, 1, [(50.0, 1.0), (52.0, 1.0)])
    r = client.get(f"/api/report/html?runs={run_id}")
    assert r.status_code == 200
    _framing_and_sniffing_refused(r.headers)
    meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', r.text)
    assert meta, "the downloaded file carries its own policy"
    policy = meta.group(1)
    assert r.headers["content-security-policy"].startswith(policy)
    styles = re.findall(r"<style>(.*?)</style>", r.text, re.S)
    assert len(styles) == 1
    digest = base64.b64encode(hashlib.sha256(styles[0].encode()).digest()).decode()
    assert f"style-src 'sha256-{digest}'" in policy
    assert "script-src" not in policy and "default-src 'none'" in policy  # no script runs; nothing is fetched
    assert not re.search(r"<script(?![^>]*application/json)", r.text)
    assert " style=" not in r.text  # an inline style attribute would be blocked by the hash-only policy
