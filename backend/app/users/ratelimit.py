"""Failed sign-ins counted per client address and per account name, in Redis so that every API process
shares the count; without Redis, in this process (a degraded but still bounded guard)."""
import hashlib
import time

import redis

from app.core.broker import get_redis
from app.core.config import get_settings
from app.core.errors import TooMany

_local: dict[str, tuple[int, float]] = {}


def _keys(address: str, name: str) -> list[str]:
    digest = hashlib.sha256(name.lower().encode()).hexdigest()[:32]  # no raw user input in key names
    return [f"hb:login:ip:{address}", f"hb:login:name:{digest}"]


def check(address: str, name: str) -> None:
    """Raise 429 with the wait when either counter is at the limit."""
    s = get_settings()
    for key in _keys(address, name):
        try:
            r = get_redis()
            count = int(r.get(key) or 0)
            ttl = int(r.ttl(key))
        except redis.RedisError:
            count, until = _local.get(key, (0, 0.0))
            if until < time.monotonic():
                count = 0
            ttl = int(until - time.monotonic())
        if count >= s.login_max_failures:
            raise TooMany(f"too many failed sign-ins; try again in {max(ttl, 1)} s", retry_after_s=max(ttl, 1))


def failed(address: str, name: str) -> None:
    s = get_settings()
    for key in _keys(address, name):
        try:
            r = get_redis()
            if r.incr(key) == 1:  # the window starts at the first failure
                r.expire(key, s.login_window_s)
        except redis.RedisError:
            count, until = _local.get(key, (0, 0.0))
            if until < time.monotonic():
                count, until = 0, time.monotonic() + s.login_window_s
            _local[key] = (count + 1, until)


def succeeded(address: str, name: str) -> None:
    key = _keys(address, name)[1]  # the account's counter restarts; the address's does not
    try:
        get_redis().delete(key)
    except redis.RedisError:
        _local.pop(key, None)
