import json
import os
import stat

import pytest

from hostbench_runner.spool import Spool, check_run_key


def s(seq):
    return {"seq": seq, "t": 100.0 + seq, "interval_s": 1.0, "threads": 1, "repeat": 1,
            "warmup": False, "value": 1.5, "unit": "GFLOP/s"}


def test_append_is_durable_and_pending_until_acked(tmp_path):
    sp = Spool.create(tmp_path, 12, 1, "cpu")
    for i in range(5):
        assert sp.append_sample(s(i))
    lines = (sp.path / "samples.jsonl").read_text().splitlines()
    assert [json.loads(x)["seq"] for x in lines] == [0, 1, 2, 3, 4]
    assert [x["seq"] for x in sp.pending_samples(3)] == [0, 1, 2]
    sp.ack_samples(2)
    assert [x["seq"] for x in sp.pending_samples(100)] == [3, 4]
    assert json.loads((sp.path / "state.json").read_text())["acked_seq"] == 2
    assert stat.S_IMODE(os.stat(sp.path).st_mode) == 0o700


def test_restart_recovers_only_unacked_samples(tmp_path):
    sp = Spool.create(tmp_path, 12, 1, "cpu")
    for i in range(4):
        sp.append_sample(s(i))
    sp.ack_samples(1)
    again = Spool.open(sp.path)
    assert (again.run_id, again.attempt, again.experiment) == (12, 1, "cpu")
    assert [x["seq"] for x in again.pending_samples(100)] == [2, 3]
    assert not again.has_finish()


def test_crash_between_append_and_ack_resends(tmp_path):
    sp = Spool.create(tmp_path, 12, 1, "cpu")
    sp.append_sample(s(0))
    sp.append_sample(s(1))
    batch = sp.pending_samples(100)  # sent, then the runner died before ack_samples
    assert [x["seq"] for x in batch] == [0, 1]
    again = Spool.open(sp.path)
    assert [x["seq"] for x in again.pending_samples(100)] == [0, 1]


def test_torn_last_line_is_skipped(tmp_path):
    sp = Spool.create(tmp_path, 12, 1, "cpu")
    sp.append_sample(s(0))
    with open(sp.path / "samples.jsonl", "ab") as fh:
        fh.write(b'{"seq": 1, "t": 10')  # power cut mid-append
    again = Spool.open(sp.path)
    assert [x["seq"] for x in again.pending_samples(100)] == [0]


def test_appends_and_acks_are_idempotent(tmp_path):
    sp = Spool.create(tmp_path, 12, 1, "cpu")
    sp.append_sample(s(0))
    sp.append_sample(s(0))
    sp.append_sample(s(1))
    assert sp.pending_count() == 2
    sp.ack_samples(1)
    sp.ack_samples(0)  # an older ack never moves the pointer back
    assert sp.acked_seq == 1 and sp.pending_count() == 0
    # the same (run, attempt) handed out again reopens the spool instead of clobbering it
    same = Spool.create(tmp_path, 12, 1, "cpu")
    assert same.acked_seq == 1


def test_done_and_delete(tmp_path):
    sp = Spool.create(tmp_path, 3, 2, "cpu")
    sp.set_start({"type": "start"})
    sp.append_sample(s(0))
    sp.append_result({"type": "result", "repeat": 1})
    sp.set_finish({"attempt": 2, "status": "succeeded", "reason": None, "results": sp.results, "end": None})
    assert not sp.done()
    sp.ack_start()
    sp.ack_samples(0)
    assert not sp.done()
    sp.ack_finish()
    assert sp.done()
    sp.delete()
    assert not sp.path.exists()
    assert sp.append_sample(s(1)) is False


def test_finish_record_survives_restart(tmp_path):
    sp = Spool.create(tmp_path, 3, 2, "cpu")
    sp.append_result({"type": "result", "repeat": 1, "value": 3.0})
    sp.set_finish({"attempt": 2, "status": "untrusted", "reason": "x", "results": sp.results, "end": None})
    again = Spool.open(sp.path)
    assert again.finish_body["status"] == "untrusted"
    assert again.results == [{"type": "result", "repeat": 1, "value": 3.0}]
    assert again.finish_pending()


def test_no_finish_marker_is_done_once_samples_and_the_closed_are_acked(tmp_path):
    sp = Spool.create(tmp_path, 3, 2, "cpu")
    sp.append_sample(s(0))
    sp.set_no_finish("lease refused")
    assert not sp.done()
    sp.ack_samples(0)
    assert sp.finish_pending() and sp.finish_skipped() and not sp.done()  # the server is told `closed` first
    sp.ack_finish()
    assert sp.done() and Spool.open(sp.path).done()


def test_rejection_is_persisted(tmp_path):
    sp = Spool.create(tmp_path, 3, 2, "cpu")
    sp.mark_rejected("server rejected samples 0..9: HTTP 422")
    assert Spool.open(sp.path).rejected.startswith("server rejected samples")


def test_list_dirs_ignores_foreign_entries(tmp_path):
    Spool.create(tmp_path, 1, 1, "cpu")
    Spool.create(tmp_path, "abc-1", 2, None)
    (tmp_path / "junk").mkdir()
    (tmp_path / "run-1-attempt-1.txt").write_text("x")
    assert [p.name for p in Spool.list_dirs(tmp_path)] == ["run-1-attempt-1", "run-abc-1-attempt-2"]


@pytest.mark.parametrize("run_id, attempt", [("../../etc", 1), ("a/b", 1), (-1, 1), (True, 1), (1, -1), (1, "1"), (1.5, 1)])
def test_run_keys_that_could_escape_the_spool_are_refused(tmp_path, run_id, attempt):
    with pytest.raises(ValueError):
        check_run_key(run_id, attempt)
    with pytest.raises(ValueError):
        Spool.create(tmp_path, run_id, attempt, "cpu")


# --- a full disk (docs/reliability.md, rule 5); the end-to-end trial is `./hostbench chaos --scenario spool-full` ---

@pytest.fixture
def file_size_limit():
    """Set RLIMIT_FSIZE for this process: a write past it fails with EFBIG, a real write error from the kernel
    (SIGXFSZ ignored, as the runner would see it on a full disk as ENOSPC)."""
    import resource
    import signal

    old_limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    def limit(nbytes):
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, old_limit[1]))

    yield limit
    resource.setrlimit(resource.RLIMIT_FSIZE, old_limit)
    signal.signal(signal.SIGXFSZ, old_handler)


def test_a_sample_that_cannot_be_written_is_not_kept_and_leaves_no_torn_line(tmp_path, file_size_limit):
    sp = Spool.create(tmp_path, 12, 1, "cpu")
    for i in range(3):
        sp.append_sample(s(i))
    size = (sp.path / "samples.jsonl").stat().st_size
    file_size_limit(size + 40)  # room for part of one more line, not all of it
    with pytest.raises(OSError):
        sp.append_sample(s(3))
    file_size_limit(2**40)
    assert (sp.path / "samples.jsonl").stat().st_size == size  # the partial line was cut off
    assert [x["seq"] for x in sp.pending_samples(100)] == [0, 1, 2]
    assert [x["seq"] for x in Spool.open(sp.path).pending_samples(100)] == [0, 1, 2]


def test_a_spool_file_system_nearly_full_counts_as_full(tmp_path, monkeypatch):
    from hostbench_runner import spool as spool_mod

    sp = Spool.create(tmp_path, 12, 1, "cpu")
    sp.append_sample(s(0))
    monkeypatch.setattr(spool_mod, "RESERVE_BYTES", 2**62)  # more than any disk has free
    with pytest.raises(OSError) as err:
        sp.append_sample(s(1))
    assert "No space left" in str(err.value) and "reserve" in str(err.value)
    assert sp.write_error is not None and [x["seq"] for x in sp.pending_samples(100)] == [0]


def test_the_finish_and_acks_are_kept_in_memory_when_the_disk_refuses(tmp_path, file_size_limit):
    sp = Spool.create(tmp_path, 12, 1, "cpu")
    sp.append_sample(s(0))
    file_size_limit(0)  # no file may grow at all now
    sp.ack_samples(0)  # state.json cannot be replaced: the ack stays in memory, no error
    assert sp.acked_seq == 0 and sp.pending_count() == 0
    body = {"attempt": 1, "status": "failed", "reason": "cannot write the spool: [Errno 28] No space left on device"}
    sp.set_finish(body)  # not on disk, but it must go out: the server hears why the run ended
    file_size_limit(2**40)
    assert sp.finish_body == body and sp.finish_pending()
    assert not (sp.path / "finish.json").exists()
    assert sp.write_error is not None


def test_a_spool_that_cannot_be_created_is_volatile_and_refuses_samples(tmp_path):
    root = tmp_path / "spool"
    root.write_text("a file where the spool directory should be")  # mkdir fails: NotADirectory/FileExists
    sp = Spool.create_or_volatile(root, 12, 1, "cpu")
    assert sp.volatile and sp.write_error.startswith("cannot write the spool")
    with pytest.raises(OSError):
        sp.append_sample(s(0))
    sp.set_finish({"attempt": 1, "status": "failed", "reason": sp.write_error})
    assert sp.finish_pending()
