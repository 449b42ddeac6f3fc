"""The way back declared once (issue 33 item 1): the result fields' bounds come from the kernels' declaration
(`hbk <kernel> --describe`, the describe snapshot: each figure's range beside it, hb_result.range) through
hostbench_common.resultfields, and no layer on the way back writes a bound of its own for a field the declaration
covers, neither as a model's constraint nor as a comparison in the runner's check; ResultRow extends stats.Summary instead of
retyping its fields; what the server judges in a kernel's results beyond what every run gets is what the kernel
names (--describe "checks"), never chosen by the kernel's name. No database but the last test's: these read the
code and the OpenAPI document."""
import ast
from pathlib import Path

import pytest
from hostbench_common import resultfields
from hostbench_common.describe import DESCRIBE
from hostbench_runner import protocol

from app.core.bounds import MAX_BYTES
from app.jobs.models import Run, Sample
from app.main import app
from app.results import checks
from app.results.schemas import ResultRow
from app.results.service import compute_result
from app.results.stats import Summary
from tests.test_bounds import _assert_422_names, _count, _json_raw, _running, _sample

APP = Path(__file__).resolve().parents[1] / "app"
PROTOCOL = Path(protocol.__file__)
# The layers a result passes through on its way back: the runner's upload models, the stored result's models and
# the trend queries that name a result's row.
WAY_BACK = [APP / "runner_api" / "schemas.py", APP / "results" / "schemas.py", APP / "trends" / "schemas.py"]
BOUND_WORDS = {"ge", "gt", "le", "lt"}
LENGTH_WORDS = {"max_length"}


def _literal(node: ast.expr) -> bool:
    """A bound written out (4096, 2**12, -1), not read from somewhere (resultfields.THREADS[1])."""
    return not any(isinstance(n, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) for n in ast.walk(node))


def _redeclared(path: Path) -> list[str]:
    """`field: ... = Field(ge=4096)` or `field: Annotated[..., Field(le=4096)]` in a class body, a literal bound
    for a field whose bounds the kernels declare (resultfields.BOUNDS), or a literal max_length for a list whose
    length is declared there (resultfields.LENGTHS: results)."""
    found = []
    for cls in ast.walk(ast.parse(path.read_text())):
        if not isinstance(cls, ast.ClassDef):
            continue
        for stmt in cls.body:
            if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                continue
            name = stmt.target.id
            words = BOUND_WORDS if name in resultfields.BOUNDS else LENGTH_WORDS if name in resultfields.LENGTHS \
                else set()
            for node in ast.walk(ast.Module(body=[stmt], type_ignores=[])):
                if isinstance(node, ast.Call) and any(k.arg in words and _literal(k.value) for k in node.keywords):
                    found.append(f"{path.name}:{stmt.lineno} {cls.name}.{name}")
    return found


def _compared(path: Path) -> list[str]:
    """`event["cpu_share"] > 1`, `line.get("tries", 1) < 1`: a declared figure compared with a number written out,
    a range of the layer's own."""
    def figure(node: ast.expr) -> str | None:
        key = node.slice if isinstance(node, ast.Subscript) else node.args[0] if isinstance(node, ast.Call) and \
            isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args else None
        name = key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
        return name if name in resultfields.BOUNDS else None

    def number(node: ast.expr) -> bool:
        return _literal(node) and any(isinstance(n, ast.Constant) and isinstance(n.value, int | float)
                                      for n in ast.walk(node))

    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            names = [figure(p) for p in parts]
            if any(names) and any(number(p) for p in parts):
                found.append((node.lineno, f"{path.name}:{node.lineno} {next(n for n in names if n)}"))
    return [text for _, text in sorted(found)]


@pytest.mark.parametrize("path", WAY_BACK, ids=lambda p: p.parent.name)
def test_no_layer_redeclares_a_declared_result_bound(path):
    assert _redeclared(path) == [], "read the bound from hostbench_common.resultfields (the kernels' declaration)"


@pytest.mark.parametrize("path", [PROTOCOL, *WAY_BACK], ids=lambda p: p.name)
def test_no_layer_checks_a_declared_figure_against_a_number_of_its_own(path):
    assert _compared(path) == [], "check the figure with resultfields.out_of_bounds (the kernels' declaration)"


def test_the_scan_finds_a_figure_checked_against_a_literal(tmp_path):
    old = tmp_path / "protocol.py"
    old.write_text('if kind == "result" and not 0 <= event["cpu_share"] <= 1:\n    raise ProtocolError("x")\n'
                   'if event.get("tries", 1) < 1:\n    pass\nif event["port"] > 65535:\n    pass\n'
                   'if event["threads"] > resultfields.THREADS[1]:\n    pass\n')
    assert _compared(old) == ["protocol.py:1 cpu_share", "protocol.py:3 tries"]


def test_the_scan_finds_a_redeclared_bound(tmp_path):
    """The scan above catches the old form (threads: JsonInt = Field(ge=0, le=4096))."""
    old = tmp_path / "schemas.py"
    old.write_text("class ResultIn(BaseModel):\n    threads: JsonInt = Field(ge=0, le=4096)\n"
                   "    repeat: Annotated[int, Field(ge=0, le=10000)]\n    seq: JsonInt = Field(ge=0)\n"
                   "class SampleIn(BaseModel):\n    threads: Annotated[int, Field(ge=resultfields.THREADS[0])]\n"
                   "class RunFinish(BaseModel):\n    results: list[ResultIn] = Field(max_length=100000)\n"
                   "    references: list[ReferenceIn] = Field(max_length=100)\n"
                   "class TraceSummary(BaseModel):\n    cpu_share: float | None = Field(None, ge=0, le=1)\n"
                   "    loss_pct: Annotated[float, Field(le=100)]\n")
    assert _redeclared(old) == ["schemas.py:2 ResultIn.threads", "schemas.py:3 ResultIn.repeat",
                                "schemas.py:8 RunFinish.results", "schemas.py:11 TraceSummary.cpu_share",
                                "schemas.py:12 TraceSummary.loss_pct"]


def _param_span(names: tuple[str, ...]) -> tuple[int, int]:
    spans = [(p.get("items", p)["minimum"], p.get("items", p)["maximum"])
             for d in DESCRIBE.values() for n, p in d["parameters"]["properties"].items() if n in names]
    return min(s[0] for s in spans), max(s[1] for s in spans)


def test_openapi_bounds_are_the_declarations():
    """What the API tells runners it accepts is what the kernels declare: a result's threads within the thread
    parameter's items (1..256, not the 0..4096 the upload model once allowed), its repeat within max_repeats."""
    schemas = app.openapi()["components"]["schemas"]
    threads = _param_span(("threads", "streams"))
    repeat_max = _param_span(("repeats", "max_repeats"))[1]
    for model, repeat_min in (("ResultIn", 1), ("SampleIn", 0)):
        props = schemas[model]["properties"]
        assert (props["threads"]["minimum"], props["threads"]["maximum"]) == threads, model
        assert (props["repeat"]["minimum"], props["repeat"]["maximum"]) == (repeat_min, repeat_max), model
    assert threads == resultfields.THREADS == (1, 256)
    # how many result lines a run may give: one cap, the runner's check of the stream and the API's finish alike
    assert schemas["RunFinish"]["properties"]["results"]["maxItems"] == resultfields.MAX_RESULT_LINES
    assert protocol.MAX_RESULTS == resultfields.MAX_RESULT_LINES


def _declared(kernel: str, key: str) -> dict:
    """A figure's range as the kernel's `--describe` writes it (the snapshot), read here without resultfields."""
    head, _, member = key.partition(".")
    field = DESCRIBE[kernel]["results"][head]
    field = field["fields"][member] if member else field
    return {k: field[k] for k in ("minimum", "exclusiveMinimum", "maximum") if k in field}


@pytest.mark.parametrize("kernel, key, declared", [
    ("cpu", "cpu_share", {"minimum": 0, "maximum": 1}), ("net", "wait_share", {"minimum": 0, "maximum": 1}),
    ("cpu", "tries", {"minimum": 1}), ("cpu", "preemptions", {"minimum": 0}),
    ("cpu", "clock_after_ghz", {"exclusiveMinimum": 0}), ("net", "loss_pct", {"minimum": 0, "maximum": 100}),
    ("net", "latency_us.p99", {"minimum": 0}), ("disk", "lat_p99_us", {"minimum": 0}),
    ("cpu", "work_target", {"minimum": 1, "maximum": 10**15}), ("cpu", "value", {}),
])
def test_the_kernels_declare_each_figure_s_range(kernel, key, declared):
    """The ranges are facts of what the figure is, written beside it in the C table: a share 0..1, a count >= 0,
    a clock > 0; the measured value itself has none."""
    assert _declared(kernel, key) == declared


def test_the_upload_model_shows_every_declared_range():
    """Every figure with a range in any kernel's declaration is a typed field of ResultIn with that range (the
    loosest over the kernels that declare it), a member of an object in the object's model: OpenAPI shows them."""
    schemas = app.openapi()["components"]["schemas"]
    props = schemas["ResultIn"]["properties"]
    bounded = {f"{k}.{m}" if m else k: v for kernel in DESCRIBE for k, f in DESCRIBE[kernel]["results"].items()
               for m, v in [("", f), *f.get("fields", {}).items()] if {"minimum", "exclusiveMinimum"} & set(v)}
    assert len(bounded) > 60  # every declared figure but the measured value
    for key in bounded:
        head, _, member = key.partition(".")
        schema = props[head]
        if member:
            ref = next(s["$ref"] for s in schema["anyOf"] if "$ref" in s)
            schema = schemas[ref.rsplit("/", 1)[1]]["properties"][member]
        number = next(s for s in schema.get("anyOf", [schema]) if s.get("type") in ("number", "integer"))
        given = {k: number[k] for k in ("minimum", "exclusiveMinimum", "maximum") if k in number}
        want = resultfields.BOUNDS[key]
        cap = {"maximum": MAX_BYTES} if key == "block_bytes" else {}  # a block size: the API's cap of a bigint
        assert given == {k: v for k, v in (("minimum", want.minimum), ("exclusiveMinimum", want.exclusive_minimum),
                                           ("maximum", want.maximum)) if v is not None} | cap, key
    assert props["cpu_share"]["anyOf"][0] | {} == {"type": "number", "minimum": 0, "maximum": 1}


def test_result_fields_typed_as_declared():
    """The upload model's typed fields have the JSON type the kernels declare for them."""
    props = app.openapi()["components"]["schemas"]["ResultIn"]["properties"]
    for name in ("threads", "repeat", "value", "unit", "verified"):
        declared = resultfields.TYPES[name]
        given = props[name].get("type") or {s.get("type") for s in props[name].get("anyOf", [])}
        assert given == declared or declared in given, (name, given, declared)


def test_result_row_extends_the_summary():
    """ResultRow does not retype stats.Summary's ten fields: it inherits them (one definition)."""
    assert issubclass(ResultRow, Summary)
    assert len(Summary.model_fields) == 10
    for name in Summary.model_fields:
        assert ResultRow.model_fields[name].annotation == Summary.model_fields[name].annotation
    tree = ast.parse((APP / "results" / "schemas.py").read_text())
    row = next(n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == "ResultRow")
    retyped = [s.target.id for s in row.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
               and s.target.id in Summary.model_fields]
    assert retyped == []


def _names_a_kernel(node: ast.AST) -> bool:
    """`kind.kernel == "disk"`, `kernel in ("memory", "net")`, `"cpu" == run.kernel`: a comparison with a run's
    kernel, which picks by the kernel's name. (The table's `peak` kinds, "cpu" or "disk", are declared: not this.)"""
    if not isinstance(node, ast.Compare):
        return False
    return any(isinstance(n, ast.Attribute) and n.attr == "kernel" or isinstance(n, ast.Name)
               and (n.id == "kernel" or n.id.endswith("_kernel"))
               for part in (node.left, *node.comparators) for n in ast.walk(part))


def _kernel_conditionals(root: Path) -> list[str]:
    return [f"{path.name}:{node.lineno}" for path in sorted(root.rglob("*.py"))
            for node in ast.walk(ast.parse(path.read_text())) if _names_a_kernel(node)]


def test_result_features_are_never_chosen_by_the_kernel_s_name():
    assert _kernel_conditionals(APP / "results") == [], "name the judgement in the kernel's checks (harness.h)"


def test_the_scan_finds_a_kernel_conditional(tmp_path):
    (tmp_path / "service.py").write_text('if kind.kernel == "disk":\n    pass\nok = "storage" in checks\n'
                                         'x = kernel in ("memory", "net")\ny = kind.peak == "cpu"\n'
                                         'z = "net" == run_kernel\n')
    assert _kernel_conditionals(tmp_path) == ["service.py:1", "service.py:4", "service.py:6"]


def test_every_check_a_kernel_names_is_one_the_server_knows():
    named = {c for d in DESCRIBE.values() for c in d.get("checks", [])}
    assert named <= set(checks.CHECKS), "a check the server does not judge: add it to app.results.checks.CHECKS"
    assert set(checks.CHECKS) <= named, "a check no kernel names: nothing applies it"


def test_a_judgement_follows_the_kernel_s_declaration(monkeypatch):
    """A kernel gets a judgement by naming it, and loses it by not: memory without "cache_levels" has no caches
    beside its rows, cpu naming "cache_levels" gets them."""
    raw = [{"op": "read", "threads": 1, "repeat": 1, "value": 90000.0, "unit": "MB/s", "verified": True,
            "block_bytes": 64, "level": "L1", "working_set_bytes": 65536}]
    inventory = {"cpu": {"l1d_bytes": 32768, "l2_bytes": 1048576}}
    cpu = [{"op": "fp64", "threads": 1, "repeat": 1, "value": 1.0, "unit": "GFLOP/s", "verified": True}]
    assert compute_result("memory", {"op": "read"}, raw, {}, inventory).caches == {"L1d": 32768, "L2": 1048576}
    assert compute_result("cpu", {"op": "fp64"}, cpu, {}, inventory).caches is None
    monkeypatch.setitem(DESCRIBE["memory"], "checks", [])
    monkeypatch.setitem(DESCRIBE["cpu"], "checks", ["strong_scaling", "cache_levels"])
    checks.declared_checks.cache_clear()
    try:
        assert compute_result("memory", {"op": "read"}, raw, {}, inventory).caches is None
        assert compute_result("cpu", {"op": "fp64"}, cpu, {}, inventory).caches == {"L1d": 32768, "L2": 1048576}
    finally:
        monkeypatch.undo()
        checks.declared_checks.cache_clear()


def test_a_sample_beyond_the_declared_threads_is_a_422(client, session, runner):
    """threads 300 (the kernels declare at most 256; the upload model once took up to 4096) is a 422 naming the
    field, and nothing is stored; 256 is taken."""
    host_id, headers = runner
    run_id = _running(client, session, host_id, headers)
    bad = _sample(0).replace('"threads": 1', '"threads": 300')
    r = _json_raw(client, "POST", f"/api/runner/runs/{run_id}/samples", f'{{"attempt": 1, "samples": [{bad}]}}',
                  headers)
    _assert_422_names(r, "body", "samples", 0, "threads")
    assert _count(session, Sample) == 0
    good = _sample(0).replace('"threads": 1', '"threads": 256')
    r = _json_raw(client, "POST", f"/api/runner/runs/{run_id}/samples", f'{{"attempt": 1, "samples": [{good}]}}',
                  headers)
    assert r.status_code == 200, r.text
    assert _count(session, Sample) == 1


def _finish(client, run_id, headers, **figures):
    line = {"threads": 1, "repeat": 1, "value": 50.0, "unit": "GFLOP/s", "verified": True, "work": 10,
            "seconds": 1.0, **figures}
    return client.post(f"/api/runner/runs/{run_id}/finish", headers=headers,
                       json={"attempt": 1, "status": "succeeded", "results": [line]})


def test_a_figure_outside_its_declared_range_is_a_422(client, session, runner):
    """cpu_share 1.5 (a share: 0..1), a negative percentile, tries 0 are refused naming the field, and the run
    stays running; a line within the ranges is taken, and its stored form has no null for the figures it did not
    send."""
    host_id, headers = runner
    run_id = _running(client, session, host_id, headers)
    for figures, loc in (({"cpu_share": 1.5}, ("cpu_share",)), ({"tries": 0}, ("tries",)),
                         ({"latency_us": {"avg": 3.0, "p50": -1.0}}, ("latency_us", "p50"))):
        detail = _assert_422_names(_finish(client, run_id, headers, **figures), "body", "results", 0, *loc)
        assert len(detail) == 1, detail
    session.expire_all()
    assert session.get(Run, run_id).status == "running"
    r = _finish(client, run_id, headers, cpu_share=1.0, wait_share=0.0, clock_after_ghz=None)
    assert r.status_code == 200, r.text
    session.expire_all()
    raw = session.get(Run, run_id).raw_results
    assert raw[0]["cpu_share"] == 1.0 and raw[0]["clock_after_ghz"] is None and "tries" not in raw[0]
    assert raw[0]["op"] is None  # the fields every line has stay as before
