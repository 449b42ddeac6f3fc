"""Redis: the Celery broker and the live fan-out bus. Channel names live here and nowhere else."""
import json
from functools import lru_cache
from typing import Any

import redis
import redis.asyncio as aioredis

from app.core.config import get_settings


def run_channel(run_id: int) -> str:
    return f"hb:run:{run_id}"


def host_work_channel(host_id: int) -> str:
    return f"hb:host:{host_id}:work"


@lru_cache
def get_redis() -> redis.Redis:
    return redis.Redis.from_url(get_settings().redis_url, socket_timeout=5, socket_connect_timeout=5)


def get_async_redis() -> aioredis.Redis:
    return aioredis.Redis.from_url(get_settings().redis_url, socket_connect_timeout=5)


def publish(channel: str, message: dict[str, Any]) -> None:
    """Best effort: PostgreSQL is the truth, a lost publish only delays a browser until its next poll."""
    try:
        get_redis().publish(channel, json.dumps(message, default=str))
    except redis.RedisError:
        pass
