"""One typed settings object for every backend process (API, worker, beat)."""
from functools import lru_cache

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="", extra="ignore")

    database_url: str = Field(description="SQLAlchemy URL, e.g. postgresql+psycopg://user@127.0.0.1:5432/hostbench")
    redis_url: str = Field(description="Redis URL for the Celery broker and live fan-out")

    hostbench_version: str = "0.1.0"
    # A runner that has not been heard from for this long is shown offline.
    runner_online_s: float = 20.0
    # Lease granted to a runner per renewal; the runner renews every ~5 s.
    lease_s: float = 30.0
    # A dispatched run no runner claimed within this long ends as failed.
    claim_timeout_s: float = 600.0
    # A queued run older than this is re-dispatched by the reconciler (Celery is the doorbell, not the ledger).
    redispatch_after_s: float = 5.0
    registration_token_ttl_s: float = 900.0
    # Extra wall time allowed on top of a run's own expected duration before the runner kills it.
    deadline_slack_s: float = 120.0
    max_active_jobs: int = 50
    max_sse_connections: int = 200
    frontend_dist: str | None = None
    allowed_origins: list[str] = []


@lru_cache
def get_settings() -> Settings:
    return Settings()  # type: ignore[call-arg]  # fails fast when DATABASE_URL / REDIS_URL are missing
