from datetime import datetime
from typing import Any

# The run status, its groups and its moves are hostbench_common.runstatus's; re-exported here for the backend.
from hostbench_common.runstatus import ACTIVE as ACTIVE
from hostbench_common.runstatus import ON_HOST as ON_HOST
from hostbench_common.runstatus import TERMINAL as TERMINAL
from hostbench_common.runstatus import WITH_RESULT as WITH_RESULT
from hostbench_common.runstatus import RunStatus as RunStatus
from hostbench_common.runstatus import may_move as may_move
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    ColumnElement,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    false,
    literal_column,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.core.db import Base, JSONType, utcnow
from app.hosts.models import Host

# runs.status holds one of RunStatus's values (hostbench_common.runstatus, the one definition; migration 0022 added
# this constraint to existing databases, and backend/tests/test_run_status.py fails while the two differ)
STATUS_CHECK = "status IN (" + ", ".join(f"'{s.value}'" for s in RunStatus) + ")"

# The instance labels runs are filtered by (History's filters, the trends' scopes), as each run's snapshot of its
# host's labels holds them. One list: the runs list's filters and their indexes are made from it.
LABEL_KEYS = ("provider", "instance_type", "region")


# A run's measured summary's columns (Run.measured_*: count, min, max, sum), as the report's index includes them.
SUMMARY_COLUMNS = ("measured_n", "measured_lo", "measured_hi", "measured_total")


def snapshot_label_sql(key: str) -> str:
    """A run's label `key` as it was handed out, in SQL: its index's expression (ix_runs_label_<key>, migration
    0027). The key is a literal, not a parameter, so that a plan made for any value still matches the index."""
    if key not in LABEL_KEYS:
        raise ValueError(f"no run label {key!r}")
    return f"(labels_snapshot ->> '{key}')"


class SuiteRun(Base):
    """A suite started on some hosts (hostbench_common.suites): its jobs (Job.suite_run_id) are one unit."""

    __tablename__ = "suite_runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    suite: Mapped[str] = mapped_column(String(64))  # a built-in suite's id
    title: Mapped[str] = mapped_column(String(200))
    host_ids: Mapped[list[int]] = mapped_column(JSONType)
    # a host in the two-host items only: it serves, every host picked drives to it (hostbench_common.suites.plan)
    peer_host_id: Mapped[int | None] = mapped_column(default=None)
    skipped: Mapped[list[str]] = mapped_column(JSONType)  # the items left out on these hosts, and why
    # hosts of one machine, measured one after another ([{"hosts": [ids in turn order], "why": ...}], app.jobs.turns)
    turns: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONType, default=None)
    expected_duration_s: Mapped[float] = mapped_column(Float)
    created_by: Mapped[str | None] = mapped_column(String(64))
    cancelled_by: Mapped[str | None] = mapped_column(String(64))


class Job(Base):
    """What a person asked for: one experiment on one or more hosts (one Run per host)."""

    __tablename__ = "jobs"

    id: Mapped[int] = mapped_column(primary_key=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    experiment: Mapped[str] = mapped_column(String(32))
    params: Mapped[dict[str, Any]] = mapped_column(JSONType)
    created_by: Mapped[str | None] = mapped_column(String(64))
    # The suite run it belongs to (app.suites), if any: a suite's jobs are one unit for progress and cancel.
    suite_run_id: Mapped[int | None] = mapped_column(ForeignKey("suite_runs.id", ondelete="SET NULL"), index=True)
    runs: Mapped[list["Run"]] = relationship(back_populates="job", lazy="raise", order_by="Run.id")


class Run(Base):
    """One experiment on one host. PostgreSQL holds the truth about its state; Celery only rings."""

    __tablename__ = "runs"
    __table_args__ = (
        Index("ix_runs_host_status", "host_id", "status"),
        CheckConstraint(STATUS_CHECK, name="status"),
        # the results waiting for their background recompute (app.results.stored.recompute_stale)
        Index("ix_runs_result_stale", "id",
              postgresql_where=text("result IS NOT NULL AND (result_stale OR result_basis IS NULL)")),
        # History's label filters: the runs handed out under a label, newest first (a page is one backward range of
        # the label's index, however many runs have the label); runs not handed out yet by their host's labels
        *(Index(f"ix_runs_label_{key}", text(snapshot_label_sql(key)), "id") for key in LABEL_KEYS),
        Index("ix_runs_unlabelled", "host_id", postgresql_where=text("labels_snapshot IS NULL")),
        # a report over a period (app.jobs.samples.daily): the period's runs with a measured summary, under a label
        # (the label's range of created_at) or under none, the summary included so that the index alone answers (an
        # index-only scan). Under a label the snapshot is included too: PostgreSQL reads an expression's index alone
        # only when it holds the columns the expression reads (about 90 bytes a run more for each label key).
        *(Index(f"ix_runs_report_{key}", text(snapshot_label_sql(key)), "created_at",
                postgresql_include=[*SUMMARY_COLUMNS, "labels_snapshot"],
                postgresql_where=text("measured_n IS NOT NULL")) for key in LABEL_KEYS),
        Index("ix_runs_report", "created_at", postgresql_include=list(SUMMARY_COLUMNS),
              postgresql_where=text("measured_n IS NOT NULL")),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    job_id: Mapped[int] = mapped_column(ForeignKey("jobs.id", ondelete="CASCADE"), index=True)
    host_id: Mapped[int] = mapped_column(ForeignKey("hosts.id"), index=True)
    experiment: Mapped[str] = mapped_column(String(32), index=True)
    params: Mapped[dict[str, Any]] = mapped_column(JSONType)
    status: Mapped[str] = mapped_column(String(16), default=RunStatus.queued.value, index=True)
    status_reason: Mapped[str | None] = mapped_column(String(2000))
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    expected_duration_s: Mapped[float] = mapped_column(Float)
    created_at: Mapped[datetime] = mapped_column(default=utcnow, index=True)
    dispatched_at: Mapped[datetime | None]
    claimed_at: Mapped[datetime | None]
    started_at: Mapped[datetime | None]
    finished_at: Mapped[datetime | None]
    lease_expires_at: Mapped[datetime | None]
    cancel_requested: Mapped[bool] = mapped_column(Boolean, default=False)
    cancelled_by: Mapped[str | None] = mapped_column(String(64))
    last_seq: Mapped[int] = mapped_column(BigInteger, default=-1)
    # Whether the current attempt has delivered every sample it will send: its runner's finish, or, where the server
    # ended the run and no finish comes, the runner's `closed` once its spool is empty. A live stream sends `end`
    # only then (or CLOSE_WAIT_S after the end: app.live.router). False from each claim on.
    samples_closed: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    kernel_info: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    # The kernel's per-repeat `result` events, as sent with finish.
    raw_results: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONType)
    # Statistics, peaks and validity computed once at finish (app.results.stored), and again in the background only
    # when what it depends on changes; a read never computes it.
    result: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    # What the stored result was computed from: {"code": RESULT_CODE, "peaks": the host's peaks_version}.
    result_basis: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    # True from a change of the host's peaks until the background recompute has stored the new result.
    result_stale: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # The result's headline and verdict, apart, for the light run lists (no result rows read).
    headline: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    verdict: Mapped[str | None] = mapped_column(String(16))
    # Reference tools run by the runner after the kernel, with parameters matched to it (issue: reference tools).
    references: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONType)
    # The host inventory as it was when the run started.
    inventory_snapshot: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    # The host's instance labels (provider, instance_type, region) when the run was handed out: History filters
    # and comparisons by what the host was then, not by a label edited later.
    labels_snapshot: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    # The count, min, max and sum of its measured (not warm-up) samples, stored when it ends and again when a batch
    # comes after (app.jobs.samples.MEASURED_SUMMARY, from the minute rollup); NULL while it has not ended or has no
    # measured sample. What a report over a period reads (app.jobs.samples.daily), never the rollup.
    measured_n: Mapped[int | None] = mapped_column(BigInteger)
    measured_lo: Mapped[float | None] = mapped_column(Float)
    measured_hi: Mapped[float | None] = mapped_column(Float)
    measured_total: Mapped[float | None] = mapped_column(Float)
    # network_serve runs: the port the serving kernel bound, reported by its runner (POST .../listening).
    listen_port: Mapped[int | None] = mapped_column(Integer)
    # network_serve runs of jobs with reference tools: the ports of the reference servers its runner started
    # ({"iperf3": 5201}), reported with listen_port; handed to the driving run at claim.
    reference_ports: Mapped[dict[str, int] | None] = mapped_column(JSONType)
    # What the runner is doing now (its kernel, or reference tool i of n: app.jobs.schemas.RunPhase), as the last
    # lease renewal that carried one said.
    phase: Mapped[dict[str, Any] | None] = mapped_column(JSONType)

    job: Mapped[Job] = relationship(back_populates="runs", lazy="raise")
    host: Mapped[Host] = relationship(lazy="raise")


def snapshot_label(key: str) -> ColumnElement[str]:
    """A run's label `key` as it was handed out (snapshot_label_sql) in a query on runs: matched by its index."""
    snapshot_label_sql(key)  # a known key
    return Run.labels_snapshot.op("->>", return_type=Text)(literal_column(f"'{key}'"))


class SamplePhase(Base):
    """What stays the same for a stretch of a run's samples, stored once: one row per run, attempt, threads,
    repeat, warm-up flag, unit, op and block size (app.jobs.samples). A sample row names its phase."""

    __tablename__ = "sample_phases"
    __table_args__ = (
        # op and block_bytes may be NULL: the unique key compares them through coalesce (and op's NULL apart from
        # ''), so that two NULLs are one phase on any PostgreSQL 14+ (no NULLS NOT DISTINCT, which is 15+)
        Index("uq_sample_phases_key", "run_id", "attempt", "threads", "repeat", "warmup", "unit",
              text("(coalesce(op, ''))"), text("(op is null)"), text("(coalesce(block_bytes, -1))"), unique=True),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    attempt: Mapped[int] = mapped_column(Integer)
    threads: Mapped[int] = mapped_column(Integer)
    repeat: Mapped[int] = mapped_column(Integer)
    warmup: Mapped[bool] = mapped_column(Boolean)
    unit: Mapped[str] = mapped_column(String(16))
    op: Mapped[str | None] = mapped_column(String(32))
    block_bytes: Mapped[int | None] = mapped_column(BigInteger)


class Sample(Base):
    """One per-second measurement. Idempotent on (run_id, attempt, seq). Partitioned by month of run_at (the run's
    created_at, so that all of a run's samples lie in one partition and the unique key can hold across partitions:
    app.jobs.partitions); what is constant within a phase is in sample_phases. No index on id (the unique key
    serves every read); id still comes from one sequence, so it grows with the order samples were stored."""

    __tablename__ = "samples"
    __table_args__ = (
        UniqueConstraint("run_id", "attempt", "seq", "run_at"),
        {"postgresql_partition_by": "RANGE (run_at)"},
    )
    # no primary key in the database (a partitioned table's would have to carry run_at, and cost an index per
    # sample): the ORM identifies a row by the unique key
    __mapper_args__ = {"primary_key": ["run_id", "attempt", "seq"]}

    # 8-byte columns first, then 4-byte ones: no alignment padding inside a row
    run_at: Mapped[datetime] = mapped_column()
    id: Mapped[int] = mapped_column(BigInteger, server_default=text("nextval('samples_id_seq')"))
    seq: Mapped[int] = mapped_column(BigInteger)
    t: Mapped[float] = mapped_column(Float)
    interval_s: Mapped[float] = mapped_column(Float)
    value: Mapped[float] = mapped_column(Float)
    received_at: Mapped[datetime] = mapped_column(default=utcnow)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    attempt: Mapped[int] = mapped_column(Integer)
    # no foreign key (one check less per stored sample): a phase goes only with its run, and so do its samples
    phase_id: Mapped[int] = mapped_column(Integer)


class SampleMinute(Base):
    """The minute-level rollup of a run's samples (min, sum, max, count per run, phase and minute of its t), kept
    when retention drops the samples: long-range charts read it, never the per-second rows. Written in the same
    statement that stores a batch (app.runner_api.fast), from the rows that statement inserted, so that a resent
    batch counts once."""

    __tablename__ = "sample_minutes"

    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    phase_id: Mapped[int] = mapped_column(ForeignKey("sample_phases.id", ondelete="CASCADE"), primary_key=True)
    minute: Mapped[int] = mapped_column(Integer, primary_key=True)  # floor(t / 60)
    n: Mapped[int] = mapped_column(Integer)
    lo: Mapped[float] = mapped_column(Float)
    hi: Mapped[float] = mapped_column(Float)
    total: Mapped[float] = mapped_column(Float)


class HostHour(Base):
    """A host's hourly rollup of its runs' measured samples, per figure (experiment, unit and op; op '' when none):
    count, min, sum and max of the samples of runs created in that hour. What a host's trend over a year reads
    (app.jobs.samples.host_trend): one index range per host, at most 8,760 rows a figure a year, however many runs
    and samples the fleet stored. Written in the statement that stores a batch, from the rows it inserted (as
    sample_minutes), and kept when retention drops the samples."""

    __tablename__ = "host_hours"

    host_id: Mapped[int] = mapped_column(ForeignKey("hosts.id", ondelete="CASCADE"), primary_key=True)
    experiment: Mapped[str] = mapped_column(String(32), primary_key=True)
    unit: Mapped[str] = mapped_column(String(16), primary_key=True)
    op: Mapped[str] = mapped_column(String(32), primary_key=True)
    hour: Mapped[datetime] = mapped_column(primary_key=True)
    n: Mapped[int] = mapped_column(BigInteger)
    lo: Mapped[float] = mapped_column(Float)
    hi: Mapped[float] = mapped_column(Float)
    total: Mapped[float] = mapped_column(Float)


class ServerMark(Base):
    """A moment the server itself records, by name: "reconciled" is when the reconciler last ran to the end. A
    gap in it means nothing was watching leases (PostgreSQL, the worker or beat was down), so no runner could
    have renewed through it either (app.jobs.dispatch.reconcile). "beat" is when Celery beat's reconcile task
    last ran (app.worker.tasks). /api/health reports both."""

    __tablename__ = "server_marks"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    at: Mapped[datetime] = mapped_column()
