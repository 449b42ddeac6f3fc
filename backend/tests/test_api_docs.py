"""/docs and /redoc load their scripts from this server (the dashboard's build), never from a CDN."""
import re


def test_api_pages_reference_no_cdn(anon_client):
    for path, asset in (("/docs", "/api-docs/swagger-ui-bundle.js"), ("/redoc", "/api-docs/redoc.standalone.js")):
        r = anon_client.get(path)
        assert r.status_code == 200 and asset in r.text, (path, r.text[:300])
        external = re.findall(r'(?:src|href)\s*=\s*["\'](https?://[^"\']+)', r.text)
        assert external == [], (path, external)
        assert "default-src 'self'" in r.headers["content-security-policy"]  # nor what the bundles fetch themselves
