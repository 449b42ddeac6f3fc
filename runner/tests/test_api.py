import json
import random
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import pytest

from hostbench_runner.api import ApiClient, Backoff, Disposition, call_with_retry, classify
from hostbench_runner.errors import Rejected, Retryable, Stale, Unauthorized


@pytest.mark.parametrize(
    "status, expected",
    [
        (200, Disposition.OK), (201, Disposition.OK), (204, Disposition.OK),
        (None, Disposition.RETRY), (500, Disposition.RETRY), (502, Disposition.RETRY),
        (503, Disposition.RETRY), (429, Disposition.RETRY),
        (401, Disposition.UNAUTHORIZED), (409, Disposition.STALE),
        (400, Disposition.REJECT), (403, Disposition.REJECT), (404, Disposition.REJECT),
        (408, Disposition.REJECT), (413, Disposition.REJECT), (422, Disposition.REJECT),
    ],
)
def test_classify(status, expected):
    assert classify(status) is expected


def test_backoff_is_capped_and_jittered():
    b = Backoff(base=0.5, cap=10.0, rng=random.Random(1))
    delays = [b.next_delay() for _ in range(12)]
    assert all(0 < d <= 10.0 for d in delays)
    assert delays[0] <= 0.5 and max(delays) > 5.0
    assert len({round(d, 6) for d in delays[-4:]}) > 1  # jitter: not all equal at the cap
    b.reset()
    assert b.next_delay() <= 0.5
    assert Backoff(base=0.5, cap=10.0).next_delay(retry_after=3.0) >= 3.0
    assert Backoff(base=0.5, cap=10.0).next_delay(retry_after=60.0) <= 10.0


class Scripted:
    """A real HTTP/1.1 server on loopback answering every request with (status, body, headers) from `answer`;
    it records (method, path, query, headers, body, client port) of each request."""

    def __init__(self, answer):
        self.answer = answer
        self.seen = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive

            def log_message(self, *args):
                pass

            def _handle(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                url = urlparse(self.path)
                outer.seen.append({"method": self.command, "path": url.path, "query": parse_qs(url.query),
                                   "headers": dict(self.headers.items()), "body": body,
                                   "port": self.client_address[1]})
                status, payload, headers = outer.answer(self)
                data = b"" if payload is None else json.dumps(payload).encode()
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _handle

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def scripted():
    servers = []

    def make(answer):
        srv = Scripted(answer)
        servers.append(srv)
        return srv

    yield make
    for srv in servers:
        srv.close()


@pytest.fixture
def client_answering(scripted):
    clients = []

    def make(status, body=None, headers=None):
        srv = scripted(lambda handler: (status, body, headers))
        api = ApiClient(srv.url, token="tok")
        clients.append(api)
        return api, srv.seen

    yield make
    for api in clients:
        api.close()


def test_bearer_token_is_sent(client_answering):
    api, seen = client_answering(200, {"server_time": 1})
    api.heartbeat({"run": None})
    assert seen[0]["headers"]["Authorization"] == "Bearer tok"
    assert seen[0]["headers"]["User-Agent"].startswith("hostbench-runner/")
    assert seen[0]["path"] == "/api/runner/heartbeat" and seen[0]["method"] == "POST"
    assert json.loads(seen[0]["body"]) == {"run": None}
    assert seen[0]["headers"]["Content-Type"] == "application/json"


@pytest.mark.parametrize(
    "status, error",
    [(401, Unauthorized), (409, Stale), (422, Rejected), (404, Rejected), (500, Retryable), (429, Retryable)],
)
def test_errors_map_to_the_hierarchy(client_answering, status, error):
    api, _ = client_answering(status, {"detail": "nope"})
    with pytest.raises(error) as info:
        api.samples(1, {"attempt": 1, "samples": []})
    assert "nope" in str(info.value)


def test_retry_after_is_read(client_answering):
    api, _ = client_answering(429, {"detail": "slow down"}, headers={"Retry-After": "2"})
    with pytest.raises(Retryable) as info:
        api.finish(1, {})
    assert info.value.retry_after == 2.0


def test_network_error_is_retryable():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    api = ApiClient(f"http://127.0.0.1:{port}")
    with pytest.raises(Retryable):
        api.get_work(0)


def test_204_means_no_work(client_answering):
    api, seen = client_answering(204)
    assert api.get_work(20) is None
    assert seen[0]["query"]["wait_s"] == ["20"]


def test_answer_that_is_not_json_is_retryable(scripted):
    class Raw(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "5")
            self.end_headers()
            self.wfile.write(b"hello")

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Raw)
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        with pytest.raises(Retryable, match="not JSON"):
            ApiClient(f"http://127.0.0.1:{httpd.server_address[1]}").get_work(0)
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_keep_alive_one_connection_for_many_requests(client_answering):
    api, seen = client_answering(200, {"ok": True})
    for _ in range(5):
        api.lease(1, 1)
    assert len(seen) == 5 and len({r["port"] for r in seen}) == 1


def test_threads_share_the_client(client_answering):
    api, seen = client_answering(200, {"ok": True})
    errors = []

    def work():
        try:
            for _ in range(20):
                assert api.heartbeat({"run": None}) == {"ok": True}
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert errors == [] and len(seen) == 80
    assert len({r["port"] for r in seen}) <= 4  # connections are reused, at most one per thread


def test_a_connection_the_server_closed_is_replaced(scripted):
    closing = []

    def answer(handler):
        if closing:
            handler.close_connection = True  # the server drops the keep-alive connection after answering
        return 200, {"n": len(closing)}, {"Connection": "keep-alive"}

    srv = scripted(answer)
    api = ApiClient(srv.url)
    try:
        api.heartbeat({})
        closing.append(1)
        api.heartbeat({})  # answered, then the server closes it while it idles in the pool
        time.sleep(0.1)
        assert api.heartbeat({}) == {"n": 1}  # no error: a new connection
        assert len(srv.seen) == 3
    finally:
        api.close()


def test_read_timeout_is_retryable_and_per_request(scripted):
    def slow(handler):
        time.sleep(float(parse_qs(urlparse(handler.path).query).get("wait_s", ["0"])[0]) / 10)
        return 204, None, None

    srv = scripted(slow)
    api = ApiClient(srv.url, timeout_s=0.2)
    try:
        started = time.monotonic()
        with pytest.raises(Retryable, match="timeout"):
            api.request("GET", "/x", params={"wait_s": 5})
        assert time.monotonic() - started < 2
        # the long poll's own timeout is longer than the default: a 0.5 s answer arrives
        assert api.request("GET", "/x", params={"wait_s": 5}, timeout_s=2) is None
    finally:
        api.close()


def test_base_url_path_prefix_and_bad_urls(client_answering, scripted):
    srv = scripted(lambda handler: (200, {}, None))
    api = ApiClient(srv.url + "/hostbench/")
    try:
        api.heartbeat({})
        assert srv.seen[0]["path"] == "/hostbench/api/runner/heartbeat"
    finally:
        api.close()
    for bad in ("ftp://x", "http://", "localhost:8000"):
        with pytest.raises(ValueError):
            ApiClient(bad)


def test_call_with_retry_retries_only_retryable():
    calls = []

    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise Retryable("503")
        return "ok"

    stop = threading.Event()
    assert call_with_retry(flaky, Backoff(0.001, 0.01), stop, "test") == "ok"
    assert len(calls) == 3

    calls.clear()

    def rejected():
        calls.append(1)
        raise Rejected(422, "bad")

    with pytest.raises(Rejected):
        call_with_retry(rejected, Backoff(0.001, 0.01), stop, "test")
    assert len(calls) == 1


def test_call_with_retry_stops_when_asked():
    stop = threading.Event()
    stop.set()

    def down():
        raise Retryable("down")

    with pytest.raises(Retryable):
        call_with_retry(down, Backoff(0.001, 0.01), stop, "test")
