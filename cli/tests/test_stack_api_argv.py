"""How `up` starts the API: proxy headers believed only from HOSTBENCH_TRUSTED_PROXIES, and the public URL."""
from hostbench_cli.stack import Stack


def _api(monkeypatch, tmp_path, bind="127.0.0.1", **env):
    for k in ("HOSTBENCH_TRUSTED_PROXIES", "HOSTBENCH_PUBLIC_URL"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    seen = {}
    stack = Stack(tmp_path, 8123, bind=bind, database_url="postgresql+psycopg://x@127.0.0.1:1/x",
                  redis_url="redis://127.0.0.1:1/0")
    monkeypatch.setattr(stack, "_child", lambda name, argv, cwd, env=None: seen.update(argv=argv, env=env))
    stack.start_api()
    return seen["argv"], seen["env"]


def test_proxy_headers_are_ignored_unless_proxies_are_named(monkeypatch, tmp_path):
    argv, env = _api(monkeypatch, tmp_path)
    assert "--no-proxy-headers" in argv and "--proxy-headers" not in argv
    assert env["HOSTBENCH_PUBLIC_URL"] == "http://127.0.0.1:8123"
    argv, _ = _api(monkeypatch, tmp_path, HOSTBENCH_TRUSTED_PROXIES="10.0.0.2")
    assert argv[argv.index("--proxy-headers"):][:3] == ["--proxy-headers", "--forwarded-allow-ips", "10.0.0.2"]


def test_public_url_from_the_environment_or_the_request_when_bound_to_all(monkeypatch, tmp_path):
    _, env = _api(monkeypatch, tmp_path, HOSTBENCH_PUBLIC_URL="https://bench.example.org")
    assert env["HOSTBENCH_PUBLIC_URL"] == "https://bench.example.org"
    _, env = _api(monkeypatch, tmp_path, bind="0.0.0.0")
    assert "HOSTBENCH_PUBLIC_URL" not in env  # the API answers with the Host a request came to
