"""The daemon's run logic with fake kernels (valid, garbage, crash, hang, ...) against the fake server."""

from __future__ import annotations

import re
import threading
import time

import pytest
from runner_fakes import CPU_PARAMS, assignment, daemon_for, kernel_calls, pids_alive, run_once

from hostbench_runner.daemon import Daemon, State
from hostbench_runner.keepalive import LeaseKeeper, advised_interval, lease_timing
from hostbench_runner.spool import Spool
from hostbench_runner.startup import RESTARTED_REASON


def test_valid_stream_succeeds_and_everything_is_uploaded(server, settings_for, fake_kernel):
    kbin = fake_kernel("ok")
    settings = settings_for(server.url, kbin)
    _, finish = run_once(server, settings, assignment(run_id=5))

    assert finish["status"] == "succeeded" and finish["reason"] is None and finish["attempt"] == 1
    assert finish["end"]["status"] == "ok" and len(finish["results"]) == 1
    assert server.starts[0][0] == "5" and server.starts[0][1]["kernel_info"]["type"] == "start"
    assert server.seqs(5, 1) == [0, 1, 2, 3, 4]
    sample = server.samples[("5", 1)][0]
    assert set(sample) == {"seq", "t", "interval_s", "threads", "repeat", "warmup", "value", "unit", "op"}
    # start is sent before any sample, finish after the last
    paths = [p for _, p, _ in server.requests if "/runs/" in p and not p.endswith("/lease")]
    assert paths[0].endswith("/start") and paths[-1].endswith("/finish")

    call = kernel_calls(kbin)[0]
    assert call["argv"] == ["cpu", "--op", "fp64", "--isa", "auto", "--threads", "1,2", "--repeats", "1",
                            "--duration_s", "1", "--warmup_s", "0"]
    assert call["env_token"] is None  # the registration token never reaches a kernel
    assert call["cwd"].startswith(str(settings.work_dir))
    assert list(settings.spool_dir.iterdir()) == []  # all acknowledged: spool deleted
    assert list(settings.work_dir.iterdir()) == []


def test_cpu_trace_maps_to_one_thread_count(server, settings_for, fake_kernel):
    kbin = fake_kernel("ok")
    run_once(server, settings_for(server.url, kbin),
             assignment(experiment="cpu_trace", params={"op": "int32", "threads": 4, "duration_s": 600}))
    assert kernel_calls(kbin)[0]["argv"] == ["cpu", "--op", "int32", "--isa", "auto", "--threads", "4", "--repeats", "1",
                                             "--duration_s", "600", "--warmup_s", "0"]


@pytest.mark.parametrize(
    "mode, status, reason_parts",
    [
        ("garbage", "failed", ["kernel protocol error", "line 3: not JSON", "Segmentation fault? no"]),
        ("bad_version", "failed", ["unsupported protocol version 2"]),
        ("share_above_one", "failed", ["kernel protocol error", "line 3: result.cpu_share 1.5 outside the kernels' "
                                       "declared 0..1"]),
        ("crash", "failed", ["kernel failed (killed by SIGSEGV)", "stderr: fake kernel: about to crash"]),
        ("exit1", "failed", ["kernel failed (exit code 1)", "internal failure"]),
        ("no_end", "failed", ["without an end event (exit code 0)"]),
        ("bad_param", "failed", ["kernel error bad_param: threads: 999 is above the maximum 256 (exit code 2)"]),
        ("untrusted", "untrusted", ["checksum mismatch in thread 0"]),
    ],
)
def test_bad_kernels_finish_with_a_clear_reason(server, settings_for, fake_kernel, mode, status, reason_parts):
    kbin = fake_kernel(mode)
    _, finish = run_once(server, settings_for(server.url, kbin), assignment(deadline_s=600))
    assert finish["status"] == status
    for part in reason_parts:
        assert part in finish["reason"]
    assert "deadline" not in finish["reason"]  # ended by the kernel's own failure, not by the deadline
    assert pids_alive([c["pid"] for c in kernel_calls(kbin)]) == []


def test_crashed_kernel_keeps_the_samples_it_measured(server, settings_for, fake_kernel):
    run_once(server, settings_for(server.url, fake_kernel("crash")), assignment(run_id=9))
    assert server.seqs(9, 1) == [0]


def test_hanging_kernel_is_killed_at_the_deadline(server, settings_for, fake_kernel):
    kbin = fake_kernel("hang")  # ignores SIGTERM: the runner must escalate to SIGKILL
    started = time.monotonic()
    _, finish = run_once(server, settings_for(server.url, kbin), assignment(deadline_s=1))
    elapsed = time.monotonic() - started
    assert finish["status"] == "failed" and finish["reason"] == "deadline exceeded (1 s)"
    assert 1.0 <= elapsed < 15.0  # the hanging kernel never ends by itself
    assert pids_alive([c["pid"] for c in kernel_calls(kbin)]) == []


@pytest.mark.parametrize(
    "params, message",
    [
        ({**CPU_PARAMS, "threads": "4; rm -rf /"}, "invalid params: threads: expected array"),
        ({**CPU_PARAMS, "threads": [1, 512]}, "invalid params: threads[1]: 512 is above the maximum 256"),
        ({**CPU_PARAMS, "evil": 1}, "invalid params: evil: unknown parameter"),
        ({**CPU_PARAMS, "repeats": "3"}, "invalid params: repeats: expected integer"),
        (None, None),
    ],
)
def test_runner_refuses_bad_params_without_starting_the_kernel(server, settings_for, fake_kernel, params, message):
    kbin = fake_kernel("ok")
    assign = assignment(params=params)
    if params is None:
        assign["params"] = "op=fp64"
        message = "invalid params: params: expected object"
    _, finish = run_once(server, settings_for(server.url, kbin), assign)
    assert finish["status"] == "failed" and finish["reason"].startswith(message)
    assert finish["results"] == [] and finish["end"] is None
    assert not any(c["argv"][-1] != "--describe" for c in kernel_calls(kbin))
    assert server.starts == []


def test_unknown_experiment_and_bad_deadline_are_refused(server, settings_for, fake_kernel):
    settings = settings_for(server.url, fake_kernel("ok"))
    _, finish = run_once(server, settings, assignment(experiment="rm -rf /"))
    assert finish["reason"].startswith("invalid params: unknown experiment 'rm -rf /'")
    _, finish = run_once(server, settings, assignment(run_id=2, deadline_s=-1))
    assert finish["reason"] == "invalid params: deadline_s must be a positive number, got -1"


def test_missing_kernel_binary_fails_the_run(server, settings_for, tmp_path):
    _, finish = run_once(server, settings_for(server.url, tmp_path / "nope"), assignment())
    assert finish["status"] == "failed"
    assert finish["reason"].startswith("kernel unavailable: kernel binary") and "not found" in finish["reason"]


def test_assignment_without_run_key_is_ignored(server, settings_for, fake_kernel):
    _, finish = run_once(server, settings_for(server.url, fake_kernel("ok")), {"run_id": "../x", "attempt": 1})
    assert finish is None and kernel_calls(fake_kernel("ok")) == []


def test_lease_409_stops_the_kernel_without_finish(server, settings_for, fake_kernel):
    server.lease_status, server.lease_status_after_samples = 409, True
    kbin = fake_kernel("slow")
    started = time.monotonic()
    d, finish = run_once(server, settings_for(server.url, kbin), assignment(run_id=3))
    assert time.monotonic() - started < 15  # the slow kernel would run 60 s
    assert finish is None  # the server already decided
    assert server.leases and server.seqs(3, 1)  # samples measured before the stop were uploaded
    # ...and then, once, that no more will come: the run's live streams may send `end` (app.live.router)
    assert server.closes == [("3", {"attempt": 1})]
    paths = [path for _, path, _ in server.requests]
    assert max(i for i, p in enumerate(paths) if p.endswith("/samples")) < paths.index("/api/runner/runs/3/closed")
    assert pids_alive([c["pid"] for c in kernel_calls(kbin)]) == []
    assert list(d.s.spool_dir.iterdir()) == []


def test_lease_that_cannot_be_renewed_stops_the_kernel(server, settings_for, fake_kernel):
    server.lease_status = 503  # the rest of the API still works
    _, finish = run_once(server, settings_for(server.url, fake_kernel("slow")), assignment(run_id=4))
    assert finish["status"] == "failed"
    # lost once the lease went unrenewed for lease_lost_after_s (1 s here); how much longer it took to notice
    # depends on the renewal ticks and the machine's load (2 s beside the browser suite), not on the rule
    m = re.fullmatch(r"lease lost: server unreachable for (\d+) s", finish["reason"])
    assert m and 1 <= int(m[1]) <= 5, finish["reason"]


def test_stale_samples_drop_the_spool_and_stop_the_kernel(server, settings_for, fake_kernel):
    server.samples_statuses = [409]
    kbin = fake_kernel("slow")
    d, finish = run_once(server, settings_for(server.url, kbin), assignment(run_id=6))
    assert finish is None and server.seqs(6, 1) == []
    assert list(d.s.spool_dir.iterdir()) == []
    assert pids_alive([c["pid"] for c in kernel_calls(kbin)]) == []


def test_server_errors_are_retried_until_every_sample_lands(server, settings_for, fake_kernel):
    server.samples_statuses = [503, 500, 429]
    _, finish = run_once(server, settings_for(server.url, fake_kernel("ok")), assignment(run_id=8))
    assert finish["status"] == "succeeded"
    assert server.seqs(8, 1) == [0, 1, 2, 3, 4]
    assert server.sample_posts >= 4


def test_rejected_samples_fail_the_run_locally(server, settings_for, fake_kernel):
    server.samples_statuses = [422]
    _, finish = run_once(server, settings_for(server.url, fake_kernel("slow")), assignment(run_id=10))
    assert finish["status"] == "failed"
    assert finish["reason"].startswith("server rejected samples 0..") and "HTTP 422" in finish["reason"]


def test_finish_is_retried_after_server_errors(server, settings_for, fake_kernel):
    server.finish_statuses = [502, 503]
    _, finish = run_once(server, settings_for(server.url, fake_kernel("ok")), assignment(run_id=11))
    assert finish["status"] == "succeeded" and len(server.finishes) == 1


def test_leftover_spool_is_uploaded_then_finished_failed(server, settings_for, fake_kernel):
    settings = settings_for(server.url, fake_kernel("ok"))
    spool = Spool.create(settings.spool_dir, 21, 2, "cpu")
    spool.set_start({"v": 1, "type": "start", "kernel": "cpu"})
    for seq in range(3):
        spool.append_sample({"seq": seq, "t": 1.0 + seq, "interval_s": 1.0, "threads": 1, "repeat": 1,
                             "warmup": False, "value": 2.0, "unit": "GFLOP/s"})
    spool.ack_start()
    spool.ack_samples(0)  # the runner died here: 1 and 2 were spooled but never acknowledged
    with daemon_for(settings) as d:
        d.recover_spools()
        assert d.uploader.wait_idle(5)
    assert server.seqs(21, 2) == [1, 2]
    assert server.starts == []  # already acknowledged before the crash
    run_id, finish = server.finishes[0]
    assert run_id == "21" and finish == {"attempt": 2, "status": "failed", "reason": RESTARTED_REASON,
                                         "results": [], "end": None}
    assert list(settings.spool_dir.iterdir()) == []


def test_leftover_spool_with_finish_sends_that_finish(server, settings_for, fake_kernel):
    settings = settings_for(server.url, fake_kernel("ok"))
    spool = Spool.create(settings.spool_dir, 22, 1, "cpu")
    spool.set_finish({"attempt": 1, "status": "succeeded", "reason": None, "results": [], "end": {"status": "ok"}})
    with daemon_for(settings) as d:
        d.recover_spools()
        assert d.uploader.wait_idle(5)
    assert server.finishes[0][1]["status"] == "succeeded"


def test_uploads_wait_while_the_server_is_down(server, settings_for, fake_kernel):
    server.down = True
    settings = settings_for(server.url, fake_kernel("ok"))
    with daemon_for(settings) as d:
        d.execute(assignment(run_id=30))
        time.sleep(0.3)
        assert server.seqs(30, 1) == [] and len(list(settings.spool_dir.iterdir())) == 1
        server.down = False
        assert d.uploader.wait_idle(5)
    assert server.seqs(30, 1) == [0, 1, 2, 3, 4] and server.finishes[0][1]["status"] == "succeeded"


def test_shutdown_flag_stops_a_running_kernel(server, settings_for, fake_kernel):
    kbin = fake_kernel("slow")
    settings = settings_for(server.url, kbin)
    with daemon_for(settings) as d:
        d._begin(assignment(run_id=40))
        deadline = time.monotonic() + 5
        while not server.seqs(40, 1) and time.monotonic() < deadline:
            d.step()
        d.shutdown.set()
        while d.state is not State.IDLE:
            d.step()
        assert d.uploader.wait_idle(5)
    finish = server.finishes[0][1]
    assert finish["status"] == "failed" and finish["reason"] == "runner stopped"
    assert pids_alive([c["pid"] for c in kernel_calls(kbin)]) == []


def test_prepare_removes_leftover_work_files(server, settings_for, fake_kernel):
    settings = settings_for(server.url, fake_kernel("ok"))
    junk = settings.work_dir / "run-1-attempt-1"
    junk.mkdir(parents=True)
    (junk / "disk-kernel.dat").write_bytes(b"x" * 10)
    (settings.work_dir / "stray").write_text("x")
    d = Daemon(settings)
    d.clean_work_dir()
    assert list(settings.work_dir.iterdir()) == []
    d.close()


def test_full_disk_fails_the_run_instead_of_measuring_unkept_samples(server, settings_for, fake_kernel, monkeypatch):
    kbin = fake_kernel("slow")
    settings = settings_for(server.url, kbin)

    def no_space(self, sample):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Spool, "append_sample", no_space)
    _, finish = run_once(server, settings, assignment(run_id=80))
    assert finish["status"] == "failed"
    assert finish["reason"].startswith("cannot write the spool: [Errno 28] No space left on device")
    assert pids_alive([c["pid"] for c in kernel_calls(kbin)]) == []


def test_an_unexpected_error_kills_the_kernel_and_fails_the_run(server, settings_for, fake_kernel):
    kbin = fake_kernel("slow")
    with daemon_for(settings_for(server.url, kbin)) as d:
        d._begin(assignment(run_id=81))
        assert d.state is State.RUNNING
        d.step()
        d._recover(RuntimeError("bug"))
        assert d.state is State.IDLE and d.run is None
        assert d.uploader.wait_idle(5)
    assert server.finishes[0][1]["reason"] == "runner error: RuntimeError: bug"
    assert pids_alive([c["pid"] for c in kernel_calls(kbin)]) == []


def test_the_loop_claims_runs_heartbeats_the_current_run_and_stops_on_the_flag(server, settings_for, fake_kernel):
    import threading

    settings = settings_for(server.url, fake_kernel("slow"))
    server.down = True  # the first polls fail: the loop backs off and tries again
    d = Daemon(settings)
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(d.main()))
    server.work.put(assignment(run_id=90))
    thread.start()
    try:
        assert server.wait_for(lambda: any(p == "/api/runner/work" for _, p, _ in server.requests))
        server.down = False
        assert server.wait_for(lambda: any(h.get("run") == {"run_id": 90, "attempt": 1} for h in server.heartbeats))
        assert server.wait_for(lambda: len(server.samples.get(("90", 1), {})) >= 2)
    finally:
        d.shutdown.set()
        thread.join(10)
    assert result == [0]
    assert server.finishes[0][1]["reason"] == "runner stopped"


@pytest.mark.parametrize(("ack", "period"), [
    ({"server_time": 1.0, "heartbeat_s": 10}, 10.0),   # idle: the server asks for fewer
    ({"server_time": 1.0, "heartbeat_s": 5.0}, 5.0),
    ({"server_time": 1.0}, 7.0),                       # an older server says nothing: the runner's own
    ({"heartbeat_s": 0.01}, 7.0),                      # out of 1..60 s: ignored
    ({"heartbeat_s": 3600}, 7.0),
    ({"heartbeat_s": True}, 7.0),
    ({"heartbeat_s": "10"}, 7.0),
    (None, 7.0),
])
def test_the_heartbeat_period_is_the_servers_advice_within_bounds(ack, period):
    assert advised_interval(ack, 7.0) == period


@pytest.mark.parametrize(("lease_s", "renew", "fence"), [
    (30, 5.0, 25.0),     # the production lease: renew every 5 s, stop the kernel 5 s before the server may expire it
    (10, 10 / 3, 10 - 10 / 3),  # the chaos profile
    (3, 1.0, 2.0),       # the short profile: still two renewals before the fence
    (None, 5.0, 30.0),   # an assignment without lease_s: the runner's own settings
    (True, 5.0, 30.0),
])
def test_the_runner_stops_before_the_server_may_expire_its_lease(lease_s, renew, fence):
    r, f = lease_timing(lease_s, 5.0, 30.0)
    assert r == pytest.approx(renew) and f == pytest.approx(fence)
    if isinstance(lease_s, int) and not isinstance(lease_s, bool):
        assert f < lease_s and f >= 2 * r


def test_a_lease_holds_through_a_database_outage_up_to_the_grace_but_not_through_silence():
    k = LeaseKeeper(None, 1, 1, renew_s=1.0, lost_after_s=4.0, revoked=threading.Event(), db_grace_s=60.0)
    # a whole-number clock: with the real monotonic value (452.013...) t0 + 61 - (t0 + 1) came out 59.99999 s
    t0 = k.last_ok = 1000.0
    assert k.lost_because(t0 + 3.9) == ""
    assert "unreachable" in k.lost_because(t0 + 4.0)  # silence: the fence
    # the server answers "database unavailable" every second: the run goes on past the fence ...
    k.db_down_since = t0 + 1
    k.last_db_down = t0 + 30
    assert k.lost_because(t0 + 30.5) == ""
    # ... until the server stops answering too (then the fence counts from its last answer) ...
    assert "unreachable" in k.lost_because(t0 + 34.0)
    # ... or the outage outlasts the grace
    k.last_db_down = t0 + 61
    assert "database unavailable for 60 s" in k.lost_because(t0 + 61)
    # without a grace the database answer does not count at all (the runner's setting 0)
    k0 = LeaseKeeper(None, 1, 1, renew_s=1.0, lost_after_s=4.0, revoked=threading.Event(), db_grace_s=0.0)
    k0.last_ok = 1000.0
    assert k0.db_down_since is None and "unreachable" in k0.lost_because(1004.0)


def test_the_lease_is_held_until_the_server_has_the_finish(server, settings_for, fake_kernel):
    """The chaos run's postgres-stop trials (13 of 100) found it: the kernel ended just after the database came
    back, the finish waited behind a backlog still in its upload backoff, and the lease, no longer renewed once the
    finish was only spooled, ran out: the server failed a run that had succeeded ("runner went silent"). The lease
    keeper now renews until the finish is delivered, then stops."""
    server.samples_statuses = [503] * 12  # the backlog cannot be stored for a while after the kernel ended
    settings = settings_for(server.url, fake_kernel("ok"), backoff_base_s=0.1, backoff_cap_s=0.1)
    with daemon_for(settings) as d:
        d.execute(assignment(run_id=31))  # returns once the finish is spooled
        spooled_at = len(server.leases)
        time.sleep(0.8)  # samples still refused: four lease periods
        assert server.finishes == []
        assert len(server.leases) >= spooled_at + 2, (spooled_at, len(server.leases))  # still renewed
        assert d.uploader.wait_idle(10)
        time.sleep(0.5)
        done_at = len(server.leases)
        time.sleep(0.6)
        assert len(server.leases) == done_at  # the keeper stopped with the finish delivered
    assert server.finishes[0][1]["status"] == "succeeded" and server.seqs(31, 1) == [0, 1, 2, 3, 4]


def test_the_start_event_carries_the_cpu_quota_of_the_kernels_cgroup(server, settings_for, fake_kernel, monkeypatch):
    """The server judges a kernel's CPU share against its host's own quota (docs/methodology/verdicts.md)."""
    from hostbench_runner import daemon

    asked: list[object] = []
    monkeypatch.setattr(daemon, "cpu_quota", lambda pid: asked.append(pid) or 0.5)
    run_once(server, settings_for(server.url, fake_kernel("ok")), assignment(run_id=6))
    info = server.starts[0][1]["kernel_info"]
    assert info["type"] == "start" and info["cpu_quota"] == 0.5 and len(asked) == 1
    monkeypatch.setattr(daemon, "cpu_quota", lambda pid: None)  # no quota: nothing added
    run_once(server, settings_for(server.url, fake_kernel("ok")), assignment(run_id=7))
    assert "cpu_quota" not in server.starts[1][1]["kernel_info"]


def test_a_renewal_refused_because_the_run_just_finished_is_not_a_warning(caplog):
    """A renewal in flight as the finish lands gets 409 (the run is over): that is the finish's own answer, not
    "lease refused", which the runner's log said after every run that ended so. A 409 while the run is on is."""
    from hostbench_runner.errors import Stale

    class Api:
        def __init__(self, keeper_stops: bool):
            self.keeper_stops, self.keeper = keeper_stops, None

        def lease(self, *args, **kwargs):
            if self.keeper_stops:
                self.keeper.stop()  # the finish was delivered meanwhile
            raise Stale("409: run is not running")

    for stops in (True, False):
        api = Api(stops)
        k = LeaseKeeper(api, 3, 1, renew_s=0.01, lost_after_s=4.0, revoked=threading.Event())
        api.keeper = k
        caplog.clear()
        with caplog.at_level("WARNING", logger="hostbench.daemon"):
            k.start()
            k._thread.join(5)
        refused = [r for r in caplog.records if "lease refused" in r.getMessage()]
        assert (refused == []) if stops else (len(refused) == 1 and k.stale.is_set())
