"""One typed settings object for every backend process (API, worker, beat)."""
from functools import lru_cache
from typing import Any

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


def readme(shown: str) -> dict[str, Any]:
    """A setting listed in the README's settings table, with its default as shown there (hostbench_stack.settings)."""
    return {"readme": True, "shown": shown}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="", extra="ignore")

    database_url: str = Field(description="SQLAlchemy URL, e.g. postgresql+psycopg://user@127.0.0.1:5432/hostbench")
    redis_url: str = Field(description="Redis URL for the Celery broker and live fan-out")

    hostbench_version: str = "0.1.0"
    # A runner that has not been heard from for this long is shown offline.
    runner_online_s: float = 20.0
    # the heartbeat period the server asks of a runner with a run on, and of an idle one (below runner_online_s)
    runner_heartbeat_busy_s: float = Field(default=5.0, ge=1, le=60)
    runner_heartbeat_idle_s: float = Field(default=10.0, ge=1, le=60)
    # Lease granted to a runner per renewal; the runner renews every ~5 s.
    lease_s: float = 30.0
    # How often Celery beat runs the reconciler. A gap of more than twice this since its last complete pass (the
    # database, the worker or beat was down) gives every running lease a fresh term before any is expired.
    reconcile_s: float = Field(default=5.0, ge=0.5, le=60)
    # Every API process also runs the reconciler every reconcile_s (one pass at a time over all of them), so it
    # does not depend on beat alone. False only where a test drives reconcile() by hand.
    api_reconcile: bool = True
    # A dispatched run no runner claimed within this long ends as failed.
    claim_timeout_s: float = 600.0
    # A queued run older than this is re-dispatched by the reconciler (Celery is the doorbell, not the ledger);
    # unset: one reconcile period, so a doorbell lost with a killed worker costs at most two periods (chaos
    # worker-kill at a 2-s period and a fixed 5 s here: 11 of 20 jobs waited 7.1-8.7 s, over period + restart + 3 s).
    redispatch_after_s: float | None = None

    @property
    def redispatch_after(self) -> float:
        return self.redispatch_after_s if self.redispatch_after_s is not None else self.reconcile_s
    registration_token_ttl_s: float = 900.0
    # Whether this server may drain a host's Slurm node (app.hosts.slurm: scontrol, audited); off by default.
    hostbench_slurm_drain: bool = False
    # Extra wall time allowed on top of a run's own expected duration before the runner kills it.
    deadline_slack_s: float = 120.0
    # Unfinished runs (queued, dispatched or running) on the whole server, and per person: a job over either
    # gets 429 with Retry-After. Checked under one PostgreSQL advisory lock, so a burst cannot race past them.
    # Sized for a fleet (a thousand runners, a few hundred running) and for a suite, whose runs wait their turn
    # per host (the full-system report is 46 runs on two hosts); what the caps stop is a runaway script.
    max_active_jobs: int = 2000
    max_active_runs_per_user: int = 200
    # A job whose runs would take longer than this (the experiment's expected duration, reference tools
    # included) is refused with 422: a shared lab's host is not held for days by one request.
    max_job_duration_s: float = 12 * 3600.0
    # Samples of runs that finished more than this many days ago go (Celery beat: whole monthly partitions, and
    # the default partition's rows in batches of sample_retention_batch; app.worker.retention); the run, its
    # computed result and its minute rollup stay. 0 keeps samples forever.
    sample_retention_days: float = 365.0
    sample_retention_batch: int = 5000
    # Live streams open on the whole service, counted in Redis across API processes, and per person.
    max_sse_connections: int = 1000
    hostbench_sse_per_user: int = Field(default=20, ge=1)
    # The database pools of each API process (app.core.db): the dashboard's, the runners', and how long a request
    # waits for a connection before 503 + Retry-After (docs/scaling.md).
    hostbench_db_pool_size: int = Field(default=12, ge=1)
    hostbench_db_runner_pool_size: int = Field(default=12, ge=1)
    hostbench_db_pool_timeout_s: float = Field(default=2.0, gt=0)
    # Admission (app.core.admission, docs/architecture.md "Concurrency"): how long each class of request may wait
    # for a slot, the dashboard's slots, when the dashboard is shed (event-loop lag, requests inside or waiting)
    # and the dashboard's deadline.
    hostbench_runner_wait_s: float = Field(default=3.0, gt=0)
    hostbench_poll_wait_s: float = Field(default=8.0, gt=0)
    hostbench_dashboard_slots: int = Field(default=6, ge=1)
    hostbench_dashboard_wait_s: float = Field(default=1.0, gt=0)
    hostbench_stream_wait_s: float = Field(default=3.0, gt=0)
    hostbench_dashboard_shed_lag_s: float = Field(default=0.25, gt=0)
    hostbench_dashboard_shed_min: int = Field(default=8, ge=1)
    hostbench_dashboard_deadline_s: float = Field(default=4.0, gt=0)
    # How long a dashboard read's answer is served again from its bytes while nothing was written (app.core.readcache;
    # 0: never).
    hostbench_read_cache_s: float = Field(default=1.0, ge=0, le=60)
    # Each answer says where its time went in the process (Server-Timing: the read cache's wait, admission's, the
    # handler's; app.readserve), for `./hostbench load`. Off by default: it tells a caller how busy the server is.
    hostbench_server_timing: bool = False
    frontend_dist: str | None = None
    # The URL people and runners use to reach this server (install commands and sign-in links are built from
    # it; its host is allowed). Without it, they are built from the request's own Host, which the allowed-hosts
    # check has vetted.
    hostbench_public_url: str | None = None
    # Where runners send their control traffic, when not to the public URL (docs/architecture.md, "Concurrency"):
    # HOSTBENCH_RUNNER_URL names it whole; HOSTBENCH_RUNNER_PORT keeps the public URL's host with another port
    # (./hostbench up: the runners' control process). Neither: the public URL, where a proxy sends /api/runner/
    # to the control processes (the compose deployment).
    hostbench_runner_url: str | None = None
    hostbench_runner_port: int | None = Field(default=None, ge=1, le=65535)
    # Comma-separated host names accepted in the Host header besides IP literals, localhost and the public
    # URL's host (docs/security.md).
    hostbench_allowed_hosts: str = ""
    # Comma-separated origins (scheme://host[:port]) besides this server's own that may make state-changing
    # requests and open live streams: for a dashboard served from another origin during development.
    hostbench_allowed_origins: str = ""
    # Where the runner's sources are, for the installer the server hands out (default: the checkout's runner/).
    runner_source_dir: str | None = None
    session_ttl_s: float = 7 * 86400.0
    session_idle_s: float = 12 * 3600.0
    sign_in_link_ttl_s: float = 86400.0
    # Sign-in attempts per (client address, account name) in login_window_s before 429 (a success gives its back).
    login_max_failures: int = 10
    # ... and per client address whatever the name (a stranger trying many names): app/users/ratelimit.py.
    login_max_failures_per_address: int = 50
    login_window_s: int = 900
    # Trends (app.trends): how often Celery beat looks at newly finished runs for thresholds crossed and changes.
    trends_evaluate_s: float = Field(default=10.0, ge=1, le=3600)
    # Schedules (app.schedules): how often Celery beat looks for due schedules; a schedule fires at most this late.
    schedules_fire_s: float = Field(default=5.0, ge=1, le=300, json_schema_extra=readme("5"), description=(
        "how often Celery beat fires the due schedules (a schedule fires at most this late; "
        "[docs/architecture.md](docs/architecture.md#schedules))"))
    # Webhook targets (comma-separated host names or IP literals): when set, only these; unset, any host whose every
    # address is public. Link-local and cloud metadata addresses are refused either way (app.trends.notify).
    hostbench_webhook_allowed_hosts: str = Field(
        default="", json_schema_extra=readme("any host whose every address is public"), description=(
        "where trend notifications may be POSTed (comma-separated names or IPs; set, only these); link-local and "
        "cloud metadata addresses are refused either way ([docs/methodology/trends.md](docs/methodology/trends.md))"))
    webhook_timeout_s: float = Field(default=5.0, gt=0, le=30)
    webhook_retries: int = Field(default=4, ge=0, le=10)
    # E-mail for trend events, only when an SMTP server is given; else e-mail is skipped and the event says why.
    hostbench_smtp_host: str | None = Field(default=None, json_schema_extra=readme("unset"), description=(
        "the SMTP server for trend events' e-mail; unset, e-mail is skipped and each event says so"))
    hostbench_smtp_port: int = Field(default=587, json_schema_extra=readme("587"), description="its port")
    hostbench_smtp_user: str | None = Field(default=None, json_schema_extra=readme("unset"),
                                            description="its user name")
    hostbench_smtp_password: str | None = Field(default=None, json_schema_extra=readme("unset"),
                                                description="its password")
    hostbench_smtp_from: str = Field(default="hostbench@localhost", json_schema_extra=readme("hostbench@localhost"),
                                     description="the sender of those e-mails")
    hostbench_smtp_starttls: bool = Field(default=True, json_schema_extra=readme("true"),
                                          description="STARTTLS before signing in")

    @property
    def allowed_hosts(self) -> set[str]:
        return {h.strip().lower() for h in self.hostbench_allowed_hosts.split(",") if h.strip()}

    @property
    def webhook_allowed_hosts(self) -> set[str]:
        return {h.strip().lower() for h in self.hostbench_webhook_allowed_hosts.split(",") if h.strip()}

    @property
    def allowed_origins(self) -> set[str]:
        return {o.strip().rstrip("/") for o in self.hostbench_allowed_origins.split(",") if o.strip()}


@lru_cache
def get_settings() -> Settings:
    return Settings()  # type: ignore[call-arg]  # fails fast when DATABASE_URL / REDIS_URL are missing
