"""How `up` starts the API: proxy headers believed only from HOSTBENCH_TRUSTED_PROXIES, the public URL, and the
runners' own API process on its own port beside the dashboard's."""
import os
import time
from pathlib import Path

from hostbench_stack.stack import Stack


def _children(monkeypatch, tmp_path, bind="127.0.0.1", **env):
    for k in ("HOSTBENCH_TRUSTED_PROXIES", "HOSTBENCH_PUBLIC_URL", "HOSTBENCH_RUNNER_PORT", "HOSTBENCH_API_WORKERS",
              "HOSTBENCH_CONTROL_WORKERS"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    seen: dict = {}
    stack = Stack(tmp_path, 8123, bind=bind, database_url="postgresql+psycopg://x@127.0.0.1:1/x",
                  redis_url="redis://127.0.0.1:1/0", control_port=8124)
    monkeypatch.setattr(stack, "_child", lambda name, argv, cwd, env=None, nice=0: seen.update({name: (argv, env, nice)}))
    stack.start_api()
    return seen


def _api(monkeypatch, tmp_path, bind="127.0.0.1", **env):
    return _children(monkeypatch, tmp_path, bind, **env)["api"][:2]


def _kinds(argv: list[str]) -> dict[str, tuple[int, int, int]]:
    """--kind NAME:PORT:WORKERS:NICE -> {NAME: (PORT, WORKERS, NICE)}"""
    kinds = [argv[i + 1].split(":") for i, a in enumerate(argv) if a == "--kind"]
    return {k[0]: (int(k[1]), int(k[2]), int(k[3])) for k in kinds}


def test_the_runners_have_their_own_api_processes_and_the_dashboard_yields_the_cpu(monkeypatch, tmp_path):
    """One supervisor (one import of the application) serves both kinds, each on its own port with its own worker
    count; the dashboard's workers at a lower CPU priority."""
    seen = _children(monkeypatch, tmp_path)
    assert set(seen) == {"api"}
    dash, dash_env, nice = seen["api"]
    assert nice == 0  # the supervisor itself (and so the one import) is not niced; the dashboard's workers are
    assert _kinds(dash) == {"dashboard": (8123, 1, 5), "control": (8124, 1, 0)}  # one each unless a setting says
    assert dash[dash.index("--http") + 1] == "app.core.server:HeaderDeadline"  # both kinds: a headers deadline
    seen = _children(monkeypatch, tmp_path, HOSTBENCH_API_WORKERS="2", HOSTBENCH_CONTROL_WORKERS="3")
    assert _kinds(seen["api"][0]) == {"dashboard": (8123, 2, 5), "control": (8124, 3, 0)}
    ctl_env = dash_env
    # "Add host" hands new runners the control port, on the same host as the public URL
    assert dash_env["HOSTBENCH_RUNNER_PORT"] == ctl_env["HOSTBENCH_RUNNER_PORT"] == "8124"
    # a public URL of a person's own, no proxy: the control port on that host
    _, env = _api(monkeypatch, tmp_path, HOSTBENCH_PUBLIC_URL="http://10.0.0.5:8123")
    assert env["HOSTBENCH_RUNNER_PORT"] == "8124"
    # a proxy in front (trusted proxies named): it sends the runners' paths to the control port itself
    _, env = _api(monkeypatch, tmp_path, HOSTBENCH_PUBLIC_URL="https://bench.example.org",
                  HOSTBENCH_TRUSTED_PROXIES="127.0.0.1")
    assert "HOSTBENCH_RUNNER_PORT" not in env


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


def test_a_child_with_a_lower_priority_gets_it_for_its_whole_scheduling_group(tmp_path):
    """nice alone does nothing across sessions under autogroup scheduling: the child's group is niced too."""
    from hostbench_stack.stack import Child

    c = Child("sleeper", ["sleep", "30"], tmp_path, {"PATH": "/usr/bin:/bin"}, tmp_path / "logs" / "s.log", nice=7)
    c.start()
    try:
        assert c.proc is not None
        want = min(19, os.nice(0) + 7)  # nice adds to the nice it inherits
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:  # until `nice` has set it and exec'd the command
            stat = Path(f"/proc/{c.proc.pid}/stat").read_text()
            if stat.split(" (", 1)[1].startswith("sleep)"):
                break
            time.sleep(0.01)
        assert int(stat.rsplit(")", 1)[1].split()[16]) == want  # the process's own nice (field 19)
        group = Path(f"/proc/{c.proc.pid}/autogroup")
        if group.exists():  # autogroup scheduling: the session's group carries the nice as well
            assert group.read_text().split()[-1] == "7", group.read_text()
    finally:
        c.proc.kill()
        c.proc.wait()
