import random
import threading

import httpx
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


def client_answering(status, body=None, headers=None):
    seen = []

    def handler(request):
        seen.append(request)
        return httpx.Response(status, json=body, headers=headers)

    return ApiClient("http://test", token="tok", transport=httpx.MockTransport(handler)), seen


def test_bearer_token_is_sent():
    api, seen = client_answering(200, {"server_time": 1})
    api.heartbeat({"run": None})
    assert seen[0].headers["authorization"] == "Bearer tok"
    assert seen[0].url.path == "/api/runner/heartbeat"


@pytest.mark.parametrize(
    "status, error",
    [(401, Unauthorized), (409, Stale), (422, Rejected), (404, Rejected), (500, Retryable), (429, Retryable)],
)
def test_errors_map_to_the_hierarchy(status, error):
    api, _ = client_answering(status, {"detail": "nope"})
    with pytest.raises(error):
        api.samples(1, {"attempt": 1, "samples": []})


def test_retry_after_is_read():
    api, _ = client_answering(429, {"detail": "slow down"}, headers={"Retry-After": "2"})
    with pytest.raises(Retryable) as info:
        api.finish(1, {})
    assert info.value.retry_after == 2.0


def test_network_error_is_retryable():
    def handler(request):
        raise httpx.ConnectError("refused")

    api = ApiClient("http://test", transport=httpx.MockTransport(handler))
    with pytest.raises(Retryable):
        api.get_work(0)


def test_204_means_no_work():
    api, seen = client_answering(204)
    assert api.get_work(20) is None
    assert seen[0].url.params["wait_s"] == "20"


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
