"""Bytes on disk per sample before and after the sample table's change (migration 0021, samples by time): one
database at revision 0016 (a row per sample, its constants on every row) gets N samples of R runs, shaped as
`./hostbench size` makes them (two phases a run); its sample table's size (heap + indexes) is measured, then the
same database is migrated to the head and measured again (the partitions' heap + index, the phases, the minute
rollup). Prints one JSON line (docs/scaling.md, "A year of a fleet's data").

    .venv/bin/python stack/tools/sample_bytes.py [--runs 20000] [--samples-per-run 100]"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg

from hostbench_stack import ROOT
from hostbench_stack.services import EmbeddedPostgres


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=20_000)
    p.add_argument("--samples-per-run", type=int, default=100)
    a = p.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="hb-bytes-"))
    pg = EmbeddedPostgres(tmp / "pg", tmp / "pg.log", durable=False)
    pg.start()
    try:
        url = pg.url("postgres")
        env = dict(os.environ, DATABASE_URL=url, REDIS_URL="redis://127.0.0.1:9/0")

        def alembic(rev: str) -> None:
            subprocess.run([sys.executable, "-m", "alembic", "-c", str(ROOT / "migrations" / "alembic.ini"), "upgrade",
                            rev], cwd=ROOT / "backend", env=env, check=True, capture_output=True)

        alembic("0016")
        with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as c:
            c.execute("insert into hosts (name, hostname, runner_version, token_hash, registered_at, inventory, "
                      "labels) values ('h', 'h', '0', 'x', now(), '{}', '{}')")
            c.execute("insert into jobs (created_at, experiment, params) values (now(), 'memory', '{}')")
            c.execute("insert into runs (job_id, host_id, experiment, params, status, attempt, expected_duration_s, "
                      "created_at, cancel_requested, last_seq) select 1, 1, 'memory', '{}', 'succeeded', 1, 100, "
                      "now() - (i || ' minutes')::interval, false, 99 from generate_series(1, %s) i", (a.runs,))
            c.execute("insert into samples (run_id, attempt, seq, t, interval_s, threads, \"repeat\", warmup, value, "
                      "unit, op, block_bytes, received_at) select r, 1, s, s + 0.5, 1.0, 4, 0, s < 5, "
                      "20 + random() * 10, 'GB/s', 'read', 1048576, now() from generate_series(1, %s) r, "
                      "generate_series(0, %s - 1) s", (a.runs, a.samples_per_run))
            c.execute("vacuum analyze samples")
            n = a.runs * a.samples_per_run
            before = c.execute("select pg_relation_size('samples'), pg_total_relation_size('samples')").fetchone()
            alembic("head")
            c.execute("vacuum analyze")
            after = c.execute("select sum(pg_relation_size(inhrelid)), sum(pg_total_relation_size(inhrelid)) "
                              "from pg_inherits where inhparent = 'samples'::regclass").fetchone()
            extra = c.execute("select pg_total_relation_size('sample_phases'), "
                              "pg_total_relation_size('sample_minutes')").fetchone()
        assert before is not None and after is not None and extra is not None
        print(json.dumps({"samples": n, "runs": a.runs,
                          "before_table_bytes_per_sample": round(before[0] / n, 1),
                          "before_table_and_index_bytes_per_sample": round(before[1] / n, 1),
                          "after_table_bytes_per_sample": round(int(after[0]) / n, 1),
                          "after_table_and_index_bytes_per_sample": round(int(after[1]) / n, 1),
                          "after_phases_bytes_per_sample": round(extra[0] / n, 2),
                          "after_rollup_bytes_per_sample": round(extra[1] / n, 2)}))
    finally:
        pg.stop()


if __name__ == "__main__":
    main()
