"""HPL text output (netlib HPL, the HPL section of hpcc, MKL's MP LINPACK) and Intel's Optimized
LINPACK Benchmark (xlinpack_xeon64 / runme_xeon64, the "Performance Summary (GFlops)" table).

Metric `gflops`: one row per HPL test (extra keys n, nb, p, q, time, residual, residual_check) or per
Intel problem size (n, lda, align, trials, average, time of the best trial), plus a headline row with
`best: true` holding the highest GFLOPS among rows that passed their residual check.

A row whose residual check FAILED is *flagged*, not dropped and not refused: it keeps its figure with
`valid: false` and `invalid_reason`, and it never becomes the headline. That is how the product
treats a result whose verification failed (stored, shown invalid, with the reason); refusing the
whole file would also throw away the rows that did pass. A file in which no row passed is refused:
it has no valid headline figure.

Refused as well: no result rows; no "End of Tests." / "End of tests" line (truncated); HPL's own
"Finished N tests" tally disagreeing with the rows we read; an Intel summary row whose Average or
Maximal does not follow from its trial rows (a garbled or edited table); a malformed table line.
"""

from __future__ import annotations

import re

from ._common import Metric, ParseError, metric, not_this_tool, to_float, to_int, zip_strict

# --- HPL -------------------------------------------------------------------------------------------

_HPL_ROW = re.compile(r"^(W[RC]\w+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s*$")
_HPL_RESID = re.compile(r"^\|\|Ax-b\|\|_oo/\(eps\*.*=\s*(\S+)\s+\.+\s+(PASSED|FAILED)\s*$")
_HPL_THRESHOLD = re.compile(r"Computational tests pass if scaled residuals are less than\s+(\S+)")
_HPL_FINISHED = re.compile(
    r"Finished\s+(\d+)\s+tests with the following results:\s*\n"
    r"\s*(\d+)\s+tests completed and passed residual checks,\s*\n"
    r"\s*(\d+)\s+tests completed and failed residual checks,\s*\n"
    r"\s*(\d+)\s+tests skipped because of illegal input values\.",
)

# --- Intel Optimized LINPACK ------------------------------------------------------------------------

_INTEL_HEAD = re.compile(r"^\s*Size\s+LDA\s+Align\.\s+Time\(s\)\s+GFlops\s+Residual\s+Residual\(norm\)\s+Check\s*$")
_INTEL_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(pass|fail)\s*$")
_INTEL_SUM_TITLE = re.compile(r"^\s*Performance Summary \(GFlops\)\s*$")
_INTEL_SUM_HEAD = re.compile(r"^\s*Size\s+LDA\s+Align\.\s+Average\s+Maximal\s*$")
_INTEL_SUM_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s*$")


def parse(text: str) -> tuple[str, list[Metric]]:
    lines = text.split("\n")
    has_hpl = any(_HPL_ROW.match(line) for line in lines) or "HPLinpack" in text
    has_intel = "Performance Summary (GFlops)" in text or any(_INTEL_HEAD.match(line) for line in lines)
    if has_hpl and has_intel:
        raise ParseError("the file holds both HPL and Intel LINPACK output; give one run per file")
    if has_intel:
        return "text", _parse_intel(lines)
    if has_hpl:
        return "text", _parse_hpl(text, lines)
    raise not_this_tool("hpl", text, "no HPL result row ('WR.. N NB P Q Time Gflops') and no Intel LINPACK "
                        "'Performance Summary (GFlops)' table")


def _parse_hpl(text: str, lines: list[str]) -> list[Metric]:
    threshold_m = _HPL_THRESHOLD.search(text)
    threshold = threshold_m.group(1) if threshold_m else None
    rows: list[Metric] = []
    last_row_line = -1
    for i, line in enumerate(lines):
        m = _HPL_ROW.match(line)
        if m is None:
            continue
        last_row_line = i
        tv = m.group(1)
        n, nb, p, q = (to_int(m.group(k), "HPL " + key) for k, key in zip_strict(range(2, 6), ("N", "NB", "P", "Q")))
        time_s = to_float(m.group(6), "HPL time")
        gflops = to_float(m.group(7), "HPL Gflops")
        if gflops <= 0 or time_s < 0:
            raise ParseError(f"HPL row N={n}: a non-positive figure ({line.strip()!r})")
        residual: float | None = None
        check: str | None = None
        for follow in lines[i + 1 : i + 6]:
            if _HPL_ROW.match(follow):
                break
            r = _HPL_RESID.match(follow.strip())
            if r:
                residual = to_float(r.group(1), "HPL residual")
                check = r.group(2)
                break
        extra: dict[str, object] = {"n": n, "nb": nb, "p": p, "q": q, "time": time_s, "time_unit": "s",
                                    "tv": tv, "residual": residual, "residual_check": check}
        if check == "PASSED":
            extra["valid"] = True
        else:
            extra["valid"] = False
            if check == "FAILED":
                bound = f" (scaled residual {residual}; threshold as printed: {threshold})" if threshold else ""
                extra["invalid_reason"] = "HPL residual check FAILED" + bound
            else:
                extra["invalid_reason"] = "no residual check printed for this row"
        rows.append(metric("gflops", gflops, "GFLOPS", **extra))
    if not rows:
        raise ParseError("HPL output without any result row (the run stopped before its first test finished?)")
    tail = "\n".join(lines[last_row_line:])
    if "End of Tests." not in tail:
        raise ParseError("no 'End of Tests.' after the last HPL result: the output is truncated")
    fin = _HPL_FINISHED.search(tail)
    if fin is None:
        raise ParseError("no 'Finished N tests with the following results' tally after the HPL results "
                         "(truncated or garbled output)")
    passed, failed = to_int(fin.group(2), "passed"), to_int(fin.group(3), "failed")
    n_passed = sum(1 for r in rows if r.get("residual_check") == "PASSED")
    n_failed = sum(1 for r in rows if r.get("residual_check") == "FAILED")
    if (passed, failed) != (n_passed, n_failed):
        raise ParseError(f"HPL says {passed} tests passed and {failed} failed, but the file shows {n_passed} "
                         f"PASSED and {n_failed} FAILED rows (garbled or spliced output)")
    return _with_best(rows, ("n", "nb", "p", "q", "time", "time_unit", "tv"))


def _parse_intel(lines: list[str]) -> list[Metric]:
    head = [i for i, line in enumerate(lines) if _INTEL_HEAD.match(line)]
    title = [i for i, line in enumerate(lines) if _INTEL_SUM_TITLE.match(line)]
    if len(head) != 1:
        raise ParseError("Intel LINPACK output without exactly one 'Size LDA Align. Time(s) GFlops Residual "
                         "Residual(norm) Check' header line (garbled or truncated output)")
    if len(title) != 1 or title[0] < head[0]:
        raise ParseError("Intel LINPACK output without its 'Performance Summary (GFlops)' after the trials "
                         "(truncated output?)")
    trials: list[tuple[int, int, int, float, float, str]] = []
    for i in range(head[0] + 1, title[0]):
        line = lines[i]
        if not line.strip():
            continue
        m = _INTEL_ROW.match(line)
        if m is None:
            raise ParseError(f"malformed Intel LINPACK trial line {i + 1}: {line.strip()[:80]!r}")
        size, lda, align = (to_int(m.group(k), "Intel LINPACK") for k in (1, 2, 3))
        time_s = to_float(m.group(4), "Intel LINPACK time")
        gflops = to_float(m.group(5), "Intel LINPACK GFlops")
        to_float(m.group(6), "Intel LINPACK residual")
        to_float(m.group(7), "Intel LINPACK residual(norm)")
        if gflops <= 0:
            raise ParseError(f"Intel LINPACK trial line {i + 1}: non-positive GFlops")
        trials.append((size, lda, align, time_s, gflops, m.group(8)))
    if not trials:
        raise ParseError("Intel LINPACK output without any trial row")

    sum_head = [i for i in range(title[0] + 1, len(lines)) if _INTEL_SUM_HEAD.match(lines[i])]
    if not sum_head:
        raise ParseError("Intel LINPACK summary without its 'Size LDA Align. Average Maximal' header (garbled?)")
    summary: list[tuple[int, int, int, float, float]] = []
    end_seen = False
    verdict: str | None = None
    for i in range(sum_head[0] + 1, len(lines)):
        line = lines[i].strip()
        if not line:
            continue
        v = re.match(r"^Residual checks (PASSED|FAILED)$", line)
        if v:
            verdict = v.group(1)
            continue
        if line == "End of tests":
            end_seen = True
            break
        m = _INTEL_SUM_ROW.match(line)
        if m is None or verdict is not None:
            raise ParseError(f"malformed Intel LINPACK summary line {i + 1}: {line[:80]!r}")
        summary.append((to_int(m.group(1), "size"), to_int(m.group(2), "lda"), to_int(m.group(3), "align"),
                        to_float(m.group(4), "average"), to_float(m.group(5), "maximal")))
    if not end_seen or verdict is None:
        raise ParseError("Intel LINPACK output without 'Residual checks ...' and 'End of tests' (truncated)")

    # group the trials the way the summary does: consecutive rows of one (size, lda, align)
    groups: list[list[tuple[int, int, int, float, float, str]]] = []
    for t in trials:
        if groups and groups[-1][0][:3] == t[:3]:
            groups[-1].append(t)
        else:
            groups.append([t])
    if len(groups) != len(summary):
        raise ParseError(f"Intel LINPACK: {len(groups)} problem sizes in the trials but {len(summary)} in the "
                         f"summary (garbled output)")
    rows: list[Metric] = []
    for group, (size, lda, align, average, maximal) in zip_strict(groups, summary):
        if group[0][:3] != (size, lda, align):
            raise ParseError(f"Intel LINPACK summary row {size}/{lda}/{align} does not match the trials "
                             f"{group[0][0]}/{group[0][1]}/{group[0][2]}")
        values = [t[4] for t in group]
        if abs(max(values) - maximal) > 1.5e-4 or abs(sum(values) / len(values) - average) > 2e-4:
            raise ParseError(f"Intel LINPACK size {size}: the summary (average {average}, maximal {maximal}) does "
                             f"not follow from the trials {values} (garbled or edited output)")
        passed = [t for t in group if t[5] == "pass"]
        extra: dict[str, object] = {"n": size, "lda": lda, "align": align, "trials": len(group),
                                    "average": average, "time_unit": "s"}
        if passed:
            best = max(passed, key=lambda t: t[4])
            extra.update(time=best[3], residual_check="pass", valid=True)
            value = best[4]
            if len(passed) < len(group):
                extra["failed_trials"] = len(group) - len(passed)
        else:
            best = max(group, key=lambda t: t[4])
            extra.update(time=best[3], residual_check="fail", valid=False,
                         invalid_reason="every trial of this size failed Intel LINPACK's residual check")
            value = best[4]
        rows.append(metric("gflops", value, "GFLOPS", variant="intel-linpack", **extra))
    if verdict == "PASSED" and any(r.get("residual_check") == "fail" or r.get("failed_trials") for r in rows):
        raise ParseError("Intel LINPACK says 'Residual checks PASSED' but a trial row says fail (garbled output)")
    return _with_best(rows, ("n", "lda", "align", "time", "time_unit", "variant"))


def _with_best(rows: list[Metric], keys: tuple[str, ...]) -> list[Metric]:
    valid = [r for r in rows if r.get("valid")]
    if not valid:
        reasons = "; ".join(sorted({str(r.get("invalid_reason")) for r in rows}))
        raise ParseError(f"no result passed its residual check ({reasons}): no valid GFLOPS figure")
    best = max(valid, key=lambda r: r["value"])
    head = metric("gflops", best["value"], "GFLOPS", best=True, **{k: best[k] for k in keys if k in best})
    return [head, *rows]
