"""Ingest as a property (docs/reliability.md, rules 5 and 6): whatever the network does to the runner's uploads,
the rows stored for an attempt end up equal to what the runner spooled, each exactly once.

A Hypothesis state machine drives the runner's real spool (`hostbench_runner.spool.Spool`, on disk) against the
real API and PostgreSQL. The network between them may drop a request, lose the answer to one that arrived,
duplicate a batch, hold a batch back and deliver it after later ones, reorder the samples inside a batch, and
the uploader may be killed (the spool is reopened from disk, forgetting whatever was only in memory). At the end
the uploader drains the spool over a network that works, and the stored rows must equal the spooled set."""
import random

from hostbench_runner.spool import Spool
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy import select

from app.jobs import dispatch
from app.jobs.models import Run, Sample

KERNEL_INFO = {"type": "start", "kernel": "cpu", "isa": "avx2", "clock_ghz": 3.0}
EXAMPLES = 200


def _sample(seq: int) -> dict:
    return {"seq": seq, "t": 1.7e9 + seq, "interval_s": 1.0, "threads": 1, "repeat": 1, "warmup": False,
            "value": 40.0 + (seq * 7919 % 1000) / 100, "unit": "GFLOP/s"}


def test_stored_rows_equal_the_spooled_set_whatever_the_network_does(client, session, runner, tmp_path):
    host_id, headers = runner
    counter = iter(range(10**6))

    class Ingest(RuleBasedStateMachine):
        @initialize()
        def begin(self) -> None:
            r = client.post("/api/jobs", json={"host_ids": [host_id], "experiment": "cpu",
                                               "params": {"threads": [1], "repeats": 1, "duration_s": 60,
                                                          "warmup_s": 0}})
            assert r.status_code == 201, r.text
            self.run_id = r.json()["runs"][0]["id"]
            dispatch.dispatch_host(session, host_id)
            claim = client.get("/api/runner/work?wait_s=0", headers=headers)
            assert claim.status_code == 200 and claim.json()["run_id"] == self.run_id, claim.text
            self.attempt = claim.json()["attempt"]
            assert client.post(f"/api/runner/runs/{self.run_id}/start",
                               json={"attempt": self.attempt, "kernel_info": KERNEL_INFO},
                               headers=headers).status_code == 200
            self.root = tmp_path / f"spool-{next(counter)}"
            self.spool = Spool.create(self.root, self.run_id, self.attempt, "cpu")
            self.next_seq = 0
            self.spooled: dict[int, dict] = {}
            self.held: list[list[dict]] = []  # batches the network holds back, delivered later
            self.rng = random.Random(self.run_id)  # noqa: S311 - test shuffling only

        # -- the runner ------------------------------------------------------------------------------------
        @rule(n=st.integers(1, 12))
        def measure(self, n: int) -> None:
            for _ in range(n):
                sample = _sample(self.next_seq)
                assert self.spool.append_sample(sample)
                self.spooled[self.next_seq] = sample
                self.next_seq += 1

        def _post(self, batch: list[dict]) -> dict:
            r = client.post(f"/api/runner/runs/{self.run_id}/samples",
                            json={"attempt": self.attempt, "samples": batch}, headers=headers)
            assert r.status_code == 200, r.text
            assert r.json()["conflicts"] == [], r.text  # a resent sample is the same sample
            return r.json()

        def _batch(self, size: int) -> list[dict]:
            return self.spool.pending_samples(size)

        @precondition(lambda self: self.spool.pending_count() > 0)
        @rule(size=st.integers(1, 20), shuffle=st.booleans())
        def upload(self, size: int, shuffle: bool) -> None:
            """The uploader's step: send the oldest pending samples, and on the answer record the ack."""
            batch = self._batch(size)
            sent = batch[:]
            if shuffle:
                self.rng.shuffle(sent)
            self._post(sent)
            self.spool.ack_samples(batch[-1]["seq"])

        # -- the network -----------------------------------------------------------------------------------
        @precondition(lambda self: self.spool.pending_count() > 0)
        @rule(size=st.integers(1, 20))
        def request_lost(self, size: int) -> None:
            """The request never arrived: nothing stored, nothing acknowledged; the uploader will resend."""
            self._batch(size)

        @precondition(lambda self: self.spool.pending_count() > 0)
        @rule(size=st.integers(1, 20))
        def answer_lost(self, size: int) -> None:
            """The batch arrived and was stored, but the answer was lost: no ack; the resend must store nothing
            twice."""
            self._post(self._batch(size))

        @precondition(lambda self: self.spool.pending_count() > 0)
        @rule(size=st.integers(1, 20))
        def held_back(self, size: int) -> None:
            """The network holds a copy of the batch and delivers it later, after newer batches."""
            self.held.append([dict(s) for s in self._batch(size)])

        @precondition(lambda self: len(self.held) > 0)
        @rule(which=st.integers(0, 10**6))
        def delayed_delivery(self, which: int) -> None:
            self._post(self.held.pop(which % len(self.held)))

        @precondition(lambda self: len(self.spooled) > 0)
        @rule(lo=st.integers(0, 10**6), n=st.integers(1, 20))
        def duplicate(self, lo: int, n: int) -> None:
            """An old batch, acknowledged long ago, arrives again."""
            start = lo % len(self.spooled)
            self._post([self.spooled[s] for s in range(start, min(len(self.spooled), start + n))])

        @rule()
        def uploader_killed(self) -> None:
            """The runner dies and starts again: the spool is reopened from disk (what was only in memory goes)."""
            self.spool = Spool.open(self.spool.path)

        # -- what must hold --------------------------------------------------------------------------------
        def _stored(self) -> list[int]:
            session.expire_all()
            return list(session.scalars(select(Sample.seq).where(Sample.run_id == self.run_id,
                                                                 Sample.attempt == self.attempt)))

        @invariant()
        def nothing_stored_that_was_not_spooled(self) -> None:
            if hasattr(self, "spooled"):
                stored = self._stored()
                assert len(stored) == len(set(stored))
                assert set(stored) <= set(self.spooled)

        def teardown(self) -> None:
            if not hasattr(self, "spool"):
                return
            try:
                while self.spool.pending_count():  # the network works again: the uploader drains the spool
                    self.upload(20, False)
                session.expire_all()
                rows = {s.seq: s for s in session.scalars(select(Sample).where(Sample.run_id == self.run_id))}
                assert set(rows) == set(self.spooled), ("missing", sorted(set(self.spooled) - set(rows)),
                                                         "extra", sorted(set(rows) - set(self.spooled)))
                assert all(rows[q].value == self.spooled[q]["value"] for q in rows)
            finally:  # the host is free for the next example whatever happened
                r = client.post(f"/api/runner/runs/{self.run_id}/finish", headers=headers,
                                json={"attempt": self.attempt, "status": "failed", "reason": "property test"})
                assert r.status_code == 200, r.text
            session.expire_all()
            assert session.get(Run, self.run_id).status == "failed"

    run_state_machine_as_test(Ingest, settings=settings(
        max_examples=EXAMPLES, stateful_step_count=12, deadline=None, derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]))
