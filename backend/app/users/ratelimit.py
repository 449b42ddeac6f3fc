"""Sign-in attempts counted per (client address, account name) and per client address, in Redis so that every API
process shares the count; without Redis, in this process (a degraded but still bounded guard).

A stranger's wrong guesses lock out only the stranger: an account is never locked as such, so its owner signs in
from their own address however many guesses come from elsewhere. Each attempt is reserved before the password is
checked, with one atomic Redis script over both counters, so N concurrent guesses can never get more than the
limit checked; a successful sign-in gives its reservation back. Past the limit a key stays blocked for the window,
and each further block of the same key within a day lasts twice as long (back-off, at most a day). One-time sign-in
links are counted the same way under their own scope, per address only: a link token cannot be guessed, so a
stranger's bad tokens never block anyone else's link."""
import hashlib
import threading
import time

import redis

from app.core.broker import get_redis
from app.core.config import get_settings
from app.core.errors import TooMany

BACKOFF_MEMORY_S = 86400  # how long a key's earlier blocks make the next one longer; also the longest block

# KEYS: counter per (address, name), counter per address, their strike counters. ARGV: pair limit, address limit,
# window, back-off memory. Returns {0, 0} when the attempt is reserved, else {1, seconds until the block ends}.
_RESERVE = """
local limits = {tonumber(ARGV[1]), tonumber(ARGV[2])}
local window, memory = tonumber(ARGV[3]), tonumber(ARGV[4])
for i = 1, 2 do
  local n = tonumber(redis.call('GET', KEYS[i]) or '0')
  if n >= limits[i] then
    return {1, math.max(redis.call('TTL', KEYS[i]), 1)}
  end
end
for i = 1, 2 do
  local n = redis.call('INCR', KEYS[i])
  if n == 1 then redis.call('EXPIRE', KEYS[i], window) end
  if n >= limits[i] then
    local strikes = redis.call('INCR', KEYS[i + 2])
    redis.call('EXPIRE', KEYS[i + 2], memory)
    redis.call('EXPIRE', KEYS[i], math.min(window * 2 ^ (strikes - 1), memory))
  end
end
return {0, 0}
"""
# KEYS: the two counters. Gives one reserved attempt back (a sign-in that succeeded, or was never judged).
_RELEASE = """
for i = 1, 2 do
  local n = tonumber(redis.call('GET', KEYS[i]) or '0')
  if n > 0 then redis.call('DECR', KEYS[i]) end
end
return 0
"""

_lock = threading.Lock()
_local: dict[str, tuple[int, float]] = {}  # key -> (count, monotonic end); strikes are kept here too


def _digest(text: str) -> str:
    return hashlib.sha256(text.lower().encode()).hexdigest()[:32]  # no raw user input in key names


def _keys(scope: str, address: str, name: str) -> list[str]:
    pair = f"hb:{scope}:pair:{_digest(address + chr(0) + name)}"
    addr = f"hb:{scope}:ip:{_digest(address)}"
    return [pair, addr, pair + ":strikes", addr + ":strikes"]


def reserve(scope: str, address: str, name: str) -> None:
    """Count one attempt before it is judged; raise 429 with the wait when either counter is at its limit."""
    s = get_settings()
    keys = _keys(scope, address, name)
    pair_limit, addr_limit = s.login_max_failures, s.login_max_failures_per_address
    try:
        blocked, wait = get_redis().eval(_RESERVE, 4, *keys, pair_limit, addr_limit, s.login_window_s,
                                         BACKOFF_MEMORY_S)
    except redis.RedisError:
        blocked, wait = _reserve_locally(keys, (pair_limit, addr_limit), s.login_window_s)
    if blocked:
        raise TooMany(f"too many failed sign-ins; try again in {int(wait)} s", retry_after_s=int(wait))


def release(scope: str, address: str, name: str) -> None:
    """Give the attempt back: the sign-in succeeded (or failed for a reason that was no guess)."""
    keys = _keys(scope, address, name)[:2]
    try:
        get_redis().eval(_RELEASE, 2, *keys)
    except redis.RedisError:
        with _lock:
            for key in keys:
                count, until = _local.get(key, (0, 0.0))
                if count > 0:
                    _local[key] = (count - 1, until)


def _reserve_locally(keys: list[str], limits: tuple[int, int], window: int) -> tuple[int, int]:
    now = time.monotonic()
    with _lock:
        counts = []
        for key in keys:
            count, until = _local.get(key, (0, 0.0))
            counts.append((0, 0.0) if until < now else (count, until))
        for i in range(2):
            if counts[i][0] >= limits[i]:
                return 1, max(int(counts[i][1] - now), 1)
        for i in range(2):
            count, until = counts[i]
            count, until = count + 1, until if count else now + window
            if count >= limits[i]:
                strikes = counts[i + 2][0] + 1
                _local[keys[i + 2]] = (strikes, now + BACKOFF_MEMORY_S)
                until = now + min(window * 2 ** (strikes - 1), BACKOFF_MEMORY_S)
            _local[keys[i]] = (count, until)
    return 0, 0
