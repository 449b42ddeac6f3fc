"""Run export: the result table, the reference tools beside its rows and every sample, as CSV or JSON. Units travel
with every figure."""
import json

from app.core.csvcell import Writer
from app.jobs.schemas import SAMPLE_FIELDS, RunPublic, SamplePublic

RESULT_COLUMNS = ["op", "block_bytes", "threads", "unit", "n", "mean", "stddev", "min", "max", "median",
                  "ci95_low", "ci95_high", "cv", "peak", "peak_unit", "peak_formula", "efficiency", "valid",
                  "invalid_reason", "verdict", "verdict_reasons"]
REFERENCE_COLUMNS = ["op", "block_bytes", "threads", "tool", "status", "metric", "value", "unit", "ratio", "reason",
                     "note", "argv"]
SAMPLE_COLUMNS = list(SAMPLE_FIELDS)


def run_export(run: RunPublic, samples: list[SamplePublic], fmt: str) -> tuple[str, str]:
    if fmt == "json":
        doc = {"run": run.model_dump(mode="json"), "samples": [s.model_dump() for s in samples]}
        return json.dumps(doc, indent=1), "application/json"
    w = Writer()  # every cell defused against spreadsheet formulas (app/core/csvcell.py)
    w.writerow(["# hostbench run", run.id, "host", run.host_name, "experiment", run.experiment, "status", run.status,
                "verdict", run.result.verdict if run.result else None])
    w.writerow(["# result"])
    extra_keys = sorted({k for row in (run.result.rows if run.result else []) for k in row.extra})
    w.writerow(RESULT_COLUMNS + extra_keys)
    for row in run.result.rows if run.result else []:
        peak = row.peak
        w.writerow([row.op, row.block_bytes, row.threads, row.unit, row.n, row.mean, row.stddev, row.min, row.max,
                    row.median, row.ci95_low, row.ci95_high, row.cv, peak.value if peak else None,
                    peak.unit if peak else None, peak.formula if peak else None, row.efficiency, row.valid,
                    row.invalid_reason, row.verdict, "; ".join(f.text for f in row.flags) or None]
                   + [row.extra.get(k) for k in extra_keys])
    # One line per reference tool beside a row: its figure (value, unit, ours / theirs), or why there is none.
    w.writerow(["# references"])
    w.writerow(REFERENCE_COLUMNS)
    for row in run.result.rows if run.result else []:
        for ref in row.references:
            w.writerow([row.op, row.block_bytes, row.threads, ref.tool, ref.status, ref.metric, ref.value, ref.unit,
                        ref.ratio, ref.reason, ref.note, " ".join(ref.argv) or None])
    w.writerow(["# samples"])
    w.writerow(SAMPLE_COLUMNS)
    for s in samples:
        w.writerow([getattr(s, c) for c in SAMPLE_COLUMNS])
    return w.getvalue(), "text/csv"
