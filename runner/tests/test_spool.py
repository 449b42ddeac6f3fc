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


def test_no_finish_marker_counts_as_done_once_samples_are_acked(tmp_path):
    sp = Spool.create(tmp_path, 3, 2, "cpu")
    sp.append_sample(s(0))
    sp.set_no_finish("lease refused")
    assert not sp.done()
    sp.ack_samples(0)
    assert sp.done()


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
