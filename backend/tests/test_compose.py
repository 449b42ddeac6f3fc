"""docker-compose.yml: checked statically (always), and brought up for real with podman (opt-in, slow).

The real test (HOSTBENCH_COMPOSE_TEST=1) builds a Debian base image with debootstrap (kept between runs), builds
every compose image from it (deploy/podman/build-images.sh), brings docker-compose.yml + deploy/compose.tls.yml up
with podman-compose, and then, only through nginx's published ports: waits for health, creates an admin and an API
token inside the api container (`hostbench user-add`, `hostbench api-token`: the backend CLI), creates a short CPU job and watches its samples arrive live over
the event stream while the compose runner runs it, checks that the runner is recorded with its own container
address (not nginx's, not one a client claims in X-Forwarded-For), sees requests reach both of two api replicas,
posts a 60 MB finish through nginx (no 413), runs docs/deploy.md's backup line, signs in over https (Secure
cookies) and over http (none), and tears everything down. It skips only when podman
cannot run containers here (podman, debootstrap and podman-compose are installed by the deploy/podman scripts when
missing). The timings of each step are printed at the end, also under pytest -q.
"""
import ipaddress
import json
import os
import re
import secrets
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from hostbench_common import resultfields

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
COMPOSE = ROOT / "docker-compose.yml"
NGINX_LOCATIONS = DEPLOY / "nginx" / "hostbench-locations.conf"


def _spec() -> dict:
    return yaml.safe_load(COMPOSE.read_text())


def _size_bytes(text: str) -> int:
    m = re.fullmatch(r"(\d+)([kKmMgG]?)", text)
    assert m, text
    return int(m.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2).lower()]


# --- static checks (no container engine) -----------------------------------------------------------------------
def test_compose_file_validates_against_the_compose_spec():
    exe = Path(sys.executable).with_name("check-jsonschema")
    for f in (COMPOSE, DEPLOY / "compose.tls.yml"):
        r = subprocess.run([str(exe), "--builtin-schema", "vendor.compose-spec", str(f)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr


def test_compose_runs_every_part_with_health_checks_behind_one_published_port():
    services = _spec()["services"]
    assert set(services) >= {"postgres", "redis", "migrate", "api", "control", "worker", "beat", "nginx", "runner"}
    for name in ("postgres", "redis", "api", "control", "worker", "nginx", "runner"):
        assert "healthcheck" in services[name], name
    published = {name: s["ports"] for name, s in services.items() if s.get("ports")}
    assert list(published) == ["nginx"] and len(published["nginx"]) == 1, published
    for name, s in services.items():  # everything is built here from Debian; nothing is pulled but the base
        assert "build" in s and s["build"]["args"]["BASE_IMAGE"].endswith(":-debian:bookworm-slim}"), name
        assert "network_mode" not in s, name
    assert "${HOSTBENCH_DB_PASSWORD:?" in COMPOSE.read_text()


def test_the_runners_calls_go_to_their_own_api_service():
    """docs/architecture.md, "Concurrency": nginx sends every path a runner calls (the runner's own client names
    them) to the control service, everything else under /api/ to api; both run the same application."""
    services = _spec()["services"]
    assert services["control"]["command"] == services["api"]["command"]
    conf = NGINX_LOCATIONS.read_text()
    assert "set $hostbench_control http://control:8000;" in conf
    routed = {m.group(1): m.group(2) for m in re.finditer(r"location (/api/[\w/]*) \{\s*proxy_pass (\$\w+);", conf)}
    runner_paths = set(re.findall(r'"(/api/runners?/)', (ROOT / "runner" / "hostbench_runner" / "api.py").read_text()))
    assert runner_paths == {"/api/runner/", "/api/runners/"}, runner_paths
    for path in runner_paths:
        assert routed.get(path) == "$hostbench_control", (path, routed)
    assert routed.get("/api/") == "$hostbench_api"


def test_nginx_keeps_slow_clients_away_from_the_api():
    """docs/security.md, "Request limits": headers within 10 s, bodies received whole by nginx with at most 10 s
    between reads, and a per-address connection limit on every location that reaches the API (issue 27)."""
    conf = NGINX_LOCATIONS.read_text()
    assert re.search(r"^client_header_timeout 10s;", conf, re.M)
    assert re.search(r"^client_body_timeout 10s;", conf, re.M)
    assert re.search(r"^proxy_request_buffering on;", conf, re.M)
    assert "limit_conn_zone $binary_remote_addr zone=hb_addr" in (DEPLOY / "nginx" / "nginx.conf").read_text()
    blocks = re.findall(r"location [^{]+\{([^}]*)\}", conf)
    proxied = [b for b in blocks if "proxy_pass" in b]
    assert len(proxied) == 4 and all(re.search(r"limit_conn hb_addr \d+;", b) for b in proxied), proxied


def test_api_trusts_forwarded_headers_from_nginx_only():
    services = _spec()["services"]
    for name in ("api", "control"):
        cmd = services[name]["command"]
        assert "--proxy-headers" in cmd
    cmd = services["api"]["command"]
    trusted = cmd[cmd.index("--forwarded-allow-ips") + 1]
    assert trusted == services["nginx"]["networks"]["hostbench"]["ipv4_address"]  # one address, nginx's
    default_ip = ipaddress.ip_address(re.search(r":-([0-9.]+)}", trusted).group(1))
    subnet = _spec()["networks"]["hostbench"]["ipam"]["config"][0]["subnet"]
    assert default_ip in ipaddress.ip_network(re.search(r":-([0-9./]+)}", subnet).group(1))
    conf = NGINX_LOCATIONS.read_text()
    # set from the connection, never appended to what the client sent
    assert re.search(r"proxy_set_header X-Forwarded-For \$remote_addr;", conf)
    assert re.search(r"proxy_set_header X-Forwarded-Proto \$scheme;", conf)
    assert "$proxy_add_x_forwarded_for" not in conf


def _nginx_body_limit() -> int:
    return _size_bytes(re.search(r"client_max_body_size (\w+);", NGINX_LOCATIONS.read_text()).group(1))


def test_nginx_body_limit_fits_the_largest_finish_and_streams_events_unbuffered():
    from app.core.bounds import BODY_LIMITS, MAX_BODY_BYTES
    from app.runner_api.schemas import RunFinish

    max_results = next(m.max_length for m in RunFinish.model_fields["results"].metadata if hasattr(m, "max_length"))
    # A disk result is the widest line a kernel prints (~520 bytes with its latency percentiles).
    widest = len(json.dumps(_disk_result(), separators=(",", ":")))
    largest = max_results * widest
    limit = _nginx_body_limit()
    assert limit >= 2 * largest, (limit, largest)
    # The API's own limits (app.core.bounds, one definition) decide, with their clear 413: nginx's is above them all.
    assert limit > max(MAX_BODY_BYTES, *(n for _, n in BODY_LIMITS)), (limit, BODY_LIMITS)
    conf = NGINX_LOCATIONS.read_text()
    events = re.search(r"location ~ \^/api/runs/\[0-9\]\+/events\$ \{(.*?)\}", conf, re.S)
    assert events and "proxy_buffering off;" in events.group(1)


def _disk_result(i: int = 0) -> dict:
    return {"v": 1, "type": "result", "threads": 64, "repeat": i % 100 + 1, "value": 123456.789012, "unit": "MB/s",
            "work": 123456789, "seconds": 3.000123, "verified": True, "oversubscribed": False,
            "cpu_share": 0.9987654321, "preemptions": 12345, "op": "rand_read", "block_bytes": 83886080,
            "iops": 1234567.891, "lat_avg_us": 1234.567891, "lat_p50_us": 1234.567, "lat_p99_us": 12345.678,
            "lat_p999_us": 123456.789, "lat_min_us": 0.641, "lat_max_us": 1234567.891, "lat_samples": 123456789,
            "reads": 123456789, "writes": 123456789, "reads_checked_fully": 12345678, "huge_page_buffers": False,
            "t": 1795537855.630215}


# --- the real deployment, with podman (opt-in) ------------------------------------------------------------------
PODMAN_ENV = {**os.environ, "CONTAINERS_CONF": str(DEPLOY / "podman" / "containers.conf")}
PROJECT = "hbcomposetest"
SUBNET, PROXY_IP = "172.31.248.0/24", "172.31.248.250"  # not the default's: a real deployment may be up
API_REPLICAS = 2  # the API scaled out behind nginx (HOSTBENCH_API_REPLICAS)


def _podman_unusable(log: Path) -> str | None:
    """Installs podman and the rest when missing (deploy/podman/install.sh: apt, as root); a reason when podman
    cannot be had or cannot work here."""
    with log.open("a") as f:
        r = subprocess.run([str(DEPLOY / "podman" / "install.sh")], env=PODMAN_ENV, stdout=f, stderr=subprocess.STDOUT,
                           timeout=900)
    if r.returncode != 0 or not shutil.which("podman"):
        return "podman could not be installed here: " + " | ".join(log.read_text().strip().splitlines()[-3:])
    r = subprocess.run(["podman", "info", "--format", "{{.Host.OCIRuntime.Name}}"], env=PODMAN_ENV,
                       capture_output=True, text=True)
    if r.returncode != 0:
        return f"podman cannot run here: {(r.stderr or r.stdout).strip()[-500:]}"
    return None


def _cannot_run_containers(image: str) -> str | None:
    r = subprocess.run(["podman", "run", "--rm", "--network", "none", image, "true"], env=PODMAN_ENV,
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        return f"podman cannot run a container here: {(r.stderr or r.stdout).strip()[-500:]}"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Http:
    def __init__(self, base: str, token: str | None = None, context: ssl.SSLContext | None = None):
        self.base, self.token, self.context = base, token, context

    def request(self, method: str, path: str, body: object = None, headers: dict | None = None,
                raw: bytes | None = None, timeout: float = 30) -> tuple[int, dict, bytes]:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        h = {"Accept": "application/json", **(headers or {})}
        if data is not None:
            h.setdefault("Content-Type", "application/json")
        if self.token:
            h.setdefault("Authorization", f"Bearer {self.token}")
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=h)
        try:
            with urllib.request.urlopen(req, timeout=timeout, context=self.context) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read()

    def json(self, method: str, path: str, body: object = None, expect: int = 200, **kw) -> dict:
        status, _, data = self.request(method, path, body, **kw)
        assert status == expect, f"{method} {path}: {status} {data[:500]!r}"
        return json.loads(data)


def _timed(label: str, timings: dict, fn, *args, **kw):
    t0 = time.monotonic()
    try:
        return fn(*args, **kw)
    finally:
        timings[label] = round(time.monotonic() - t0, 1)


def _run(cmd: list[str], log: Path, timeout: float, **kw) -> None:
    with log.open("a") as f:
        f.write(f"\n$ {' '.join(cmd)}\n")
        f.flush()
        r = subprocess.run(cmd, cwd=ROOT, stdout=f, stderr=subprocess.STDOUT, timeout=timeout, **kw)
    if r.returncode != 0:
        tail = "\n".join(log.read_text().splitlines()[-60:])
        raise AssertionError(f"{' '.join(cmd)} exited {r.returncode}; last lines of {log}:\n{tail}")


def _report(request, text: str) -> None:
    """Printed even under pytest -q (output capture suspended): the figures the compose test measured."""
    capman = request.config.pluginmanager.getplugin("capturemanager")
    with capman.global_and_fixture_disabled():
        print(text, flush=True)


@pytest.fixture(scope="module")
def compose_stack(request):
    if os.environ.get("HOSTBENCH_COMPOSE_TEST") != "1":
        pytest.skip("the compose deployment test builds images (minutes): opt in with HOSTBENCH_COMPOSE_TEST=1")
    timings: dict[str, float] = {}
    work = Path(tempfile.mkdtemp(prefix="hb-compose-"))
    log = work / "compose.log"
    why = _timed("install podman, runc, debootstrap, ... when missing (install.sh)", timings, _podman_unusable, log)
    if why:
        pytest.skip(why)
    tls_dir = work / "tls"
    tls_dir.mkdir()
    port, tls_port = _free_port(), _free_port()
    password = "pw-" + secrets.token_urlsafe(12) + "@:/%\"'"  # characters a URL must escape
    env = {**PODMAN_ENV, "HOSTBENCH_BASE_IMAGE": os.environ.get("HOSTBENCH_BASE_IMAGE", "localhost/debian:bookworm"),
           "HOSTBENCH_DB_PASSWORD": password, "HOSTBENCH_BIND": "127.0.0.1", "HOSTBENCH_PORT": str(port),
           "HOSTBENCH_TLS_BIND": "127.0.0.1", "HOSTBENCH_TLS_PORT": str(tls_port), "HOSTBENCH_TLS_DIR": str(tls_dir),
           "HOSTBENCH_PUBLIC_URL": f"https://localhost:{tls_port}", "HOSTBENCH_SUBNET": SUBNET,
           "HOSTBENCH_PROXY_IP": PROXY_IP, "HOSTBENCH_API_REPLICAS": str(API_REPLICAS)}
    compose = [str(DEPLOY / "podman" / "compose.sh"), "-p", PROJECT, "-f", str(COMPOSE),
               "-f", str(DEPLOY / "compose.tls.yml")]
    _run([str(DEPLOY / "tls" / "make-self-signed.sh"), "localhost", "127.0.0.1"], log, 60,
         env={**env, "HOSTBENCH_TLS_DIR": str(tls_dir)})
    with log.open("a") as f:
        subprocess.run([*compose, "down", "-v"], cwd=ROOT, env=env, stdout=f, stderr=subprocess.STDOUT, timeout=300)
    t0 = time.monotonic()
    base = env["HOSTBENCH_BASE_IMAGE"]
    if base.startswith("localhost/debian:"):
        base_cached = subprocess.run(["podman", "image", "exists", base], env=env).returncode == 0
        _timed("base image (debootstrap + podman import)" + (" [kept from an earlier run]" if base_cached else ""),
               timings, _run, [str(DEPLOY / "podman" / "build-base.sh"), base.split(":", 1)[1], base], log, 1800,
               env=env)
    why = _cannot_run_containers(base)
    if why:
        pytest.skip(why)
    _timed("compose images (build-images.sh: podman-compose build)", timings, _run,
           [str(DEPLOY / "podman" / "build-images.sh")], log, 3600, env=env)
    stack = {"env": env, "compose": compose, "log": log, "http": f"http://127.0.0.1:{port}",
             "https": f"https://localhost:{tls_port}", "tls_dir": tls_dir, "timings": timings,
             "password": password}
    try:
        _timed("compose up -d", timings, _run, [*compose, "up", "-d"], log, 600, env=env)
        _timed("up -> healthy through nginx", timings, _wait_healthy, stack["http"])
        yield stack
    except BaseException:
        _dump_logs(stack)
        raise
    finally:
        _timed("down -v", timings, subprocess.run, [*compose, "down", "-v"], cwd=ROOT, env=env,
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        left = subprocess.run(["podman", "ps", "-a", "-q", "--filter", f"label=io.podman.compose.project={PROJECT}"],
                              env=env, capture_output=True, text=True).stdout.split()
        timings["total"] = round(time.monotonic() - t0, 1)
        _report(request, "\ncompose test timings (s): " + json.dumps(timings, indent=1)
                + (f"\ncontainers left after down: {left}" if left else "\nno container left after down -v"))
        shutil.rmtree(work, ignore_errors=True)


def _wait_healthy(base: str, timeout: float = 300) -> dict:
    deadline, last = time.monotonic() + timeout, None
    while time.monotonic() < deadline:
        try:
            status, _, data = Http(base).request("GET", "/api/health", timeout=5)
            last = (status, data[:300])
            body = json.loads(data) if status == 200 else {}
            if body.get("status") == "ok" and body.get("runners_online", 0) >= 1:
                return body
        except (OSError, ValueError) as exc:
            last = repr(exc)
        time.sleep(2)
    raise AssertionError(f"no healthy API with an online runner through nginx in {timeout} s; last: {last}")


def _containers(stack: dict, service: str) -> list[str]:
    r = subprocess.run(["podman", "ps", "--filter", f"label=io.podman.compose.project={PROJECT}",
                        "--filter", f"label=com.docker.compose.service={service}", "--format", "{{.Names}}"],
                       env=stack["env"], capture_output=True, text=True, check=True)
    return sorted(r.stdout.split())


def _container(stack: dict, service: str) -> str:
    names = _containers(stack, service)
    assert names, f"no running container for {service}"
    return names[0]


def _exec(stack: dict, service: str, *cmd: str, stdin: str | None = None) -> str:
    r = subprocess.run(["podman", "exec", "-i", _container(stack, service), *cmd], input=stdin or "",
                       env=stack["env"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"{service}: {' '.join(cmd)}: {r.stderr[-1000:]}"
    return r.stdout


def _address(stack: dict, service: str) -> str:
    r = subprocess.run(["podman", "inspect", _container(stack, service), "--format",
                        "{{range .NetworkSettings.Networks}}{{.IPAddress}} {{end}}"],
                       env=stack["env"], capture_output=True, text=True, check=True)
    return r.stdout.split()[0]


def _dump_logs(stack: dict) -> None:
    for service in ("postgres", "redis", "migrate", "api", "worker", "beat", "nginx", "runner"):
        r = subprocess.run(["podman", "logs", "--tail", "40", f"{PROJECT}_{service}_1"], env=stack["env"],
                           capture_output=True, text=True)
        print(f"\n===== {service} =====\n{r.stdout}{r.stderr}")


@pytest.fixture(scope="module")
def admin_token(compose_stack) -> str:
    # The first admin's one-time link is in the migrate job's log; scripts use a user and an API token instead.
    r = subprocess.run(["podman", "logs", f"{PROJECT}_migrate_1"], env=compose_stack["env"], capture_output=True,
                       text=True)
    assert "/signin/link#hblink_" in r.stdout + r.stderr, r.stdout + r.stderr
    _exec(compose_stack, "api", "hostbench", "user-add", "ci-admin", "--role", "admin",
          stdin=compose_stack["password"][:40] + "\n")
    token = _exec(compose_stack, "api", "hostbench", "api-token", "ci-admin").strip()
    assert token.startswith("hbpat_"), token
    return token


def _runner_host(http: Http) -> dict:
    hosts = http.json("GET", "/api/hosts")["data"]
    found = [h for h in hosts if h["name"] == "compose-runner"]
    assert found, hosts
    return found[0]


def test_cpu_job_through_the_published_port_runs_on_the_compose_runner(compose_stack, admin_token):
    http = Http(compose_stack["http"], admin_token)
    host = _runner_host(http)
    runner_ip, nginx_ip = _address(compose_stack, "runner"), _address(compose_stack, "nginx")
    assert nginx_ip == PROXY_IP
    # recorded with its own address, seen through nginx's X-Forwarded-For
    assert host["address"] == runner_ip != nginx_ip, (host["address"], runner_ip, nginx_ip)

    t0 = time.monotonic()
    job = http.json("POST", "/api/jobs", {"host_ids": [host["id"]], "experiment": "cpu", "params": {
        "op": "fp64", "threads": [1], "repeats": 2, "duration_s": 2.0, "warmup_s": 0.0}}, expect=201)
    run_id = job["runs"][0]["id"]
    assert job["created_by"] == "ci-admin"

    # The live stream through nginx: samples arrive while the run is still running (not held in a buffer).
    live_samples, end = _read_events(compose_stack["http"], admin_token, run_id, timeout=120)
    assert live_samples, "no sample arrived over the event stream before the run ended"
    assert end is not None

    deadline = time.monotonic() + 120
    while True:
        runs = http.json("GET", f"/api/runs?job_id={job['id']}")["data"]
        if runs[0]["status"] in ("succeeded", "failed", "untrusted", "cancelled") or time.monotonic() > deadline:
            break
        time.sleep(1)
    run = runs[0]
    took = time.monotonic() - t0
    compose_stack["timings"][f"cpu job (2 x 2 s fp64), created -> {run['status']}"] = round(took, 1)
    compose_stack["timings"]["cpu job: samples seen live through nginx"] = len(live_samples)
    print(f"\ncpu job {job['id']}: run {run_id} {run['status']} in {took:.1f} s "
          f"({len(live_samples)} samples seen live); runner address {host['address']} (nginx {nginx_ip})")
    assert run["status"] == "succeeded", run
    samples = http.json("GET", f"/api/runs/{run_id}/samples")
    assert samples["count"] >= len(live_samples) and samples["data"], samples
    compose_stack["run_id"] = run_id


def _read_events(base: str, token: str, run_id: int, timeout: float) -> tuple[list[dict], dict | None]:
    """Samples received while the run's last `run` event said it was not finished, and the `end` event."""
    req = urllib.request.Request(f"{base}/api/runs/{run_id}/events",
                                 headers={"Authorization": f"Bearer {token}", "Accept": "text/event-stream"})
    live, status, end = [], None, None
    deadline = time.monotonic() + timeout
    with urllib.request.urlopen(req, timeout=timeout) as r:
        event, data = None, []
        for raw in r:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
            elif not line and event:
                body = json.loads("".join(data))
                if event == "run":
                    status = body["status"]
                elif event == "sample" and status in ("dispatched", "running", "queued"):
                    live.append(body)
                elif event == "end":
                    end = body
                    break
                event, data = None, []
            if time.monotonic() > deadline:
                break
    return live, end


def test_runner_address_cannot_be_claimed_by_a_client(compose_stack, admin_token):
    """A runner calling through the published port (as one on another host does) is recorded with the address
    nginx saw, whatever X-Forwarded-For it sends."""
    runner_token = _runner_token(compose_stack)
    r = Http(compose_stack["http"], runner_token)
    r.json("POST", "/api/runner/heartbeat", {}, headers={"X-Forwarded-For": "203.0.113.9",
                                                         "X-Real-IP": "203.0.113.9"})
    host = _runner_host(Http(compose_stack["http"], admin_token))
    print(f"\nrunner heartbeat from the host through the published port, claiming 203.0.113.9: recorded as "
          f"{host['address']}")
    assert host["address"] not in ("203.0.113.9", PROXY_IP, None), host["address"]
    assert ipaddress.ip_address(host["address"])


def test_requests_through_nginx_reach_every_api_replica(compose_stack, admin_token):
    """HOSTBENCH_API_REPLICAS=2: two api containers, and nginx (which resolves the name at request time) sends
    requests to both."""
    replicas = _containers(compose_stack, "api")
    assert len(replicas) == API_REPLICAS, replicas
    probe = secrets.token_hex(6)
    http = Http(compose_stack["http"], admin_token)
    for i in range(40):
        assert http.request("GET", f"/api/health?probe={probe}-{i}", timeout=10)[0] == 200
    served = {}
    for name in replicas:
        r = subprocess.run(["podman", "logs", name], env=compose_stack["env"], capture_output=True, text=True)
        served[name] = (r.stdout + r.stderr).count(f"/api/health?probe={probe}-")
    print(f"\n40 requests through nginx, per api replica: {served}")
    compose_stack["timings"]["requests per api replica (of 40)"] = served
    assert sum(served.values()) == 40 and all(served.values()), served


def _runner_token(stack: dict) -> str:
    if "runner_token" not in stack:
        cred = json.loads(_exec(stack, "runner", "cat", "/var/lib/hostbench-runner/credential.json"))
        assert cred["runner_token"].startswith("hbrun_"), sorted(cred)
        stack["runner_token"] = cred["runner_token"]
    return stack["runner_token"]


def test_a_large_finish_passes_nginx(compose_stack, admin_token):
    """A 60 MB finish (the most result lines a run may give, resultfields.MAX_RESULT_LINES, padded) reaches the API
    through nginx: the API
    answers it (the run is over: a resent finish is acknowledged and changes nothing), nginx does not refuse it
    with 413; above nginx's limit (client_max_body_size, above every limit of the API's) nginx does."""
    token = _runner_token(compose_stack)
    run_id = compose_stack.get("run_id")
    assert run_id, "the cpu job test did not leave a finished run"
    admin = Http(compose_stack["http"], admin_token)
    before = admin.json("GET", f"/api/runs/{run_id}")
    results = [_disk_result(i) for i in range(resultfields.MAX_RESULT_LINES)]
    for res in results:
        res.pop("v"), res.pop("type")
    body = json.dumps({"attempt": 1, "status": "succeeded", "results": results}).encode()
    body += b" " * max(0, 60_000_000 - len(body))
    t0 = time.monotonic()
    status, _, data = Http(compose_stack["http"], token).request(
        "POST", f"/api/runner/runs/{run_id}/finish", raw=body, timeout=300)
    took = time.monotonic() - t0
    compose_stack["timings"][f"{len(body) / 1e6:.0f} MB finish through nginx -> {status}"] = round(took, 1)
    print(f"\n{len(body) / 1e6:.1f} MB finish through nginx: {status} in {took:.1f} s: {data[:200]!r}")
    assert status != 413 and status < 500, (status, data[:500])
    assert status == 200 and json.loads(data) == {"ok": True}, data[:500]  # the API's answer, not nginx's page
    after = admin.json("GET", f"/api/runs/{run_id}")
    assert (after["status"], after["result"]) == (before["status"], before["result"])  # idempotent: nothing changed
    # One byte above nginx's limit: nginx answers 413 from the Content-Length alone, before any body is sent.
    host, port = compose_stack["http"].removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(f"POST /api/runner/runs/{run_id}/finish HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}"
                  f"\r\nContent-Type: application/json\r\nContent-Length: {_nginx_body_limit() + 1}\r\n\r\n".encode())
        head = b""
        while b"\r\n" not in head:
            chunk = s.recv(4096)
            if not chunk:
                break
            head += chunk
    assert head.split(b"\r\n", 1)[0].split(b" ")[1:2] == [b"413"], head[:300]


def test_the_documented_backup_dumps_the_database(compose_stack):
    """docs/deploy.md's pg_dump line, run as written (inside the postgres container), dumps the runs."""
    r = subprocess.run(["podman", "exec", _container(compose_stack, "postgres"), "sh", "-c",
                        'PGPASSWORD="$HOSTBENCH_DB_PASSWORD" pg_dump -h /tmp -U hostbench -Fc hostbench'],
                       env=compose_stack["env"], capture_output=True, timeout=300)
    assert r.returncode == 0 and r.stdout.startswith(b"PGDMP"), r.stderr[-500:]
    listing = subprocess.run(["podman", "exec", "-i", _container(compose_stack, "postgres"), "pg_restore", "-l"],
                             input=r.stdout, env=compose_stack["env"], capture_output=True, timeout=120)
    assert b"TABLE DATA public runs" in listing.stdout, listing.stdout[-1000:] + listing.stderr[-500:]
    assert 'pg_dump -h /tmp -U hostbench -Fc hostbench' in (ROOT / "docs" / "deploy.md").read_text()


def test_sign_in_over_https_sets_secure_cookies(compose_stack, admin_token):
    ctx = ssl.create_default_context(cafile=str(compose_stack["tls_dir"] / "fullchain.pem"))
    https = Http(compose_stack["https"], context=ctx)
    status, headers, data = https.request("GET", "/", headers={"Accept": "text/html"})
    assert status == 200 and b"<script" in data, data[:300]  # the dashboard, over https
    creds = {"name": "ci-admin", "password": compose_stack["password"][:40]}
    cookies = _login(https, creds)
    assert cookies and all("secure" in c.lower() for c in cookies), cookies
    plain = _login(Http(compose_stack["http"]), creds)
    assert plain and not any("secure" in c.lower() for c in plain), plain


def _login(http: Http, creds: dict) -> list[str]:
    req = urllib.request.Request(http.base + "/api/auth/login", data=json.dumps(creds).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30, context=http.context) as r:
        assert r.status == 200
        return r.headers.get_all("Set-Cookie") or []


def test_every_image_file_is_built_by_something():
    """A Dockerfile nothing names (compose, a script, a doc, a test) is a stale one: it stops working unnoticed, as
    backend/Dockerfile, runner/Dockerfile and frontend/Dockerfile did (issue 33)."""
    here = Path(__file__).relative_to(ROOT).as_posix()  # this test names the ones removed
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    images = [p for p in tracked if Path(p).name in ("Dockerfile", "Containerfile")
              or p.endswith((".Dockerfile", ".Containerfile"))]
    texts = {p: (ROOT / p).read_text(errors="replace") for p in tracked
             if p.endswith((".yml", ".yaml", ".py", ".md", ".sh", ".in", ".toml")) or p == "hostbench"}
    unnamed = [img for img in images if not any(img in t or (img.startswith("runner/") and
                                                             img.removeprefix("runner/") in t)
                                                for p, t in texts.items() if p not in (img, here))]
    assert images and unnamed == [], f"nothing builds or names {unnamed}: remove them or build them"
