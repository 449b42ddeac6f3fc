"""The way back declared once (issue 33 item 1): the result fields' bounds come from the kernels' declaration
(`hbk <kernel> --describe`, the describe snapshot) through hostbench_common.resultfields, and no layer on the way
back writes a bound of its own for a field the declaration covers; ResultRow extends stats.Summary instead of
retyping its fields; what the server judges in a kernel's results beyond what every run gets is what the kernel
names (--describe "checks"), never chosen by the kernel's name. No database but the last test's: these read the
code and the OpenAPI document."""
import ast
from pathlib import Path

import pytest
from hostbench_common import resultfields
from hostbench_common.describe import DESCRIBE
from hostbench_runner import protocol

from app.jobs.models import Sample
from app.main import app
from app.results import checks
from app.results.schemas import ResultRow
from app.results.service import compute_result
from app.results.stats import Summary
from tests.test_bounds import _assert_422_names, _count, _json_raw, _running, _sample

APP = Path(__file__).resolve().parents[1] / "app"
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


@pytest.mark.parametrize("path", WAY_BACK, ids=lambda p: p.parent.name)
def test_no_layer_redeclares_a_declared_result_bound(path):
    assert _redeclared(path) == [], "read the bound from hostbench_common.resultfields (the kernels' declaration)"


def test_the_scan_finds_a_redeclared_bound(tmp_path):
    """The scan above catches the old form (threads: JsonInt = Field(ge=0, le=4096))."""
    old = tmp_path / "schemas.py"
    old.write_text("class ResultIn(BaseModel):\n    threads: JsonInt = Field(ge=0, le=4096)\n"
                   "    repeat: Annotated[int, Field(ge=0, le=10000)]\n    seq: JsonInt = Field(ge=0)\n"
                   "class SampleIn(BaseModel):\n    threads: Annotated[int, Field(ge=resultfields.THREADS[0])]\n"
                   "class RunFinish(BaseModel):\n    results: list[ResultIn] = Field(max_length=100000)\n"
                   "    references: list[ReferenceIn] = Field(max_length=100)\n")
    assert _redeclared(old) == ["schemas.py:2 ResultIn.threads", "schemas.py:3 ResultIn.repeat",
                                "schemas.py:8 RunFinish.results"]


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
