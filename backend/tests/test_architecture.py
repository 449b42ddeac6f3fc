"""The backend's layers point down only, and no module imports itself back (docs/architecture.md, "Layers"), as
frontend/src/architecture.test.ts guards the dashboard's folders. Every module under backend/app is parsed: imports
at module level and inside functions alike (a function-level import hides a loop from Python, not from this test),
`from app.x import y` and `import app.x`."""
import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "app"

# Bottom to top. `core` knows no domain: it imports no other package of the app. A domain package imports `core`
# and the packages before it here, never one after it. Why this order: docs/architecture.md, "Layers".
LAYERS = ("core", "experiments", "audit", "users", "install", "hosts", "results", "jobs", "mesh", "live", "reference",
          "runner_api", "trends", "bands", "suites", "reports", "checks", "schedules", "worker")
# The composition: they put the app together and may import anything; nothing imports them.
TOP = ("main", "reconciler", "web", "readserve", "health", "cli")


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _exists(module: str, root: Path) -> bool:
    rel = Path(*module.split(".")[1:]) if "." in module else Path()
    return (root / rel).with_suffix(".py").is_file() or (root / rel / "__init__.py").is_file()


def imports(root: Path = APP) -> dict[str, list[tuple[str, int]]]:
    """module -> [(imported app module, line)], for every module under root (a package named like root)."""
    name = root.name
    found: dict[str, list[tuple[str, int]]] = {}
    for path in sorted(root.rglob("*.py")):
        module = _module_name(path, root)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        edges: list[tuple[str, int]] = []
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                edges += [(a.name, node.lineno) for a in node.names if a.name == name or a.name.startswith(name + ".")]
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative: from its own package (or one above)
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                    target = f"{base}.{node.module}" if node.module else base
                else:
                    target = node.module or ""
                if target != name and not target.startswith(name + "."):
                    continue
                # `from app.jobs import dispatch` imports the module app.jobs.dispatch; `from app.jobs.service
                # import finish_run` imports app.jobs.service
                subs = [f"{target}.{a.name}" for a in node.names if _exists(f"{target}.{a.name}", root)]
                edges += [(s, node.lineno) for s in subs] or [(target, node.lineno)]
        found[module] = edges
    return found


def area(module: str) -> str:
    """The package (core, jobs, ...) or top-level module (main, health, cli) a module belongs to; '' for the root."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def find_cycle(graph: dict[str, list[tuple[str, int]]]) -> list[str] | None:
    """One import cycle between modules, as the modules along it (first == last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n, _ in graph.get(m, []):
            if n == m:
                continue
            if state.get(n) == 1:
                loop = path[path.index(n):]
                first = loop.index(min(loop))  # told from its first module in name order, whichever way it was found
                loop = loop[first:] + loop[:first]
                return loop + loop[:1]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def upward(graph: dict[str, list[tuple[str, int]]]) -> list[str]:
    """Every import that points up, or sideways into the composition, or out of core into a domain."""
    out = []
    for module, edges in sorted(graph.items()):
        src = area(module)
        for target, line in edges:
            dst = area(target)
            if src in TOP or dst in ("", src):
                continue
            if dst in TOP:
                why = f"{dst} is the composition; nothing imports it"
            elif src == "core":
                why = "core imports no other package of the app"
            elif src in LAYERS and dst in LAYERS and LAYERS.index(dst) > LAYERS.index(src):
                why = f"{dst} is above {src}"
            else:
                continue
            out.append(f"{module} (line {line}) imports {target}: {why}")
    return out


def test_every_package_has_its_place():
    """A new package must be given its place in LAYERS (or TOP) before it can import or be imported."""
    areas = {area(m) for m in imports()} - {""}
    assert sorted(areas - set(LAYERS) - set(TOP)) == [], "add it to LAYERS (and docs/architecture.md)"
    assert sorted(set(LAYERS) - areas) == [], "LAYERS names a package that is not there"


def test_no_import_cycle_between_modules():
    cycle = find_cycle(imports())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_layers_point_down_only():
    assert upward(imports()) == []


def test_the_checks_see_what_they_guard(tmp_path):
    """The checks themselves, on a made-up app: a loop hidden in a function, an upward import, core importing a
    domain, a domain importing the composition; and the imports that are allowed pass."""
    app = tmp_path / "app"
    files = {
        "__init__.py": "",
        "main.py": "from app.worker import tasks\nimport app.jobs.service\n",
        "core/__init__.py": "",
        "core/db.py": "import os\n",
        "core/deps.py": "from app.core.db import get_session\nfrom app.hosts.service import authenticate\n",
        "hosts/__init__.py": "",
        "hosts/service.py": "from app.core import db\n",
        "jobs/__init__.py": "",
        "jobs/service.py": "from app.hosts import service\n\ndef f():\n    from app.worker.tasks import ring\n",
        "jobs/dispatch.py": "from .service import f\n",
        "jobs/cli_use.py": "def g():\n    import app.main\n",
        "worker/__init__.py": "",
        "worker/tasks.py": "from app.jobs import dispatch\n",
    }
    for rel, text in files.items():
        (app / rel).parent.mkdir(parents=True, exist_ok=True)
        (app / rel).write_text(text)
    graph = imports(app)
    assert graph["app.jobs.dispatch"] == [("app.jobs.service", 1)]
    assert find_cycle(graph) == ["app.jobs.dispatch", "app.jobs.service", "app.worker.tasks", "app.jobs.dispatch"]
    assert upward(graph) == [
        "app.core.deps (line 2) imports app.hosts.service: core imports no other package of the app",
        "app.jobs.cli_use (line 2) imports app.main: main is the composition; nothing imports it",
        "app.jobs.service (line 4) imports app.worker.tasks: worker is above jobs",
    ]
    (app / "jobs/service.py").write_text("from app.hosts import service\n")
    (app / "core/deps.py").write_text("from app.core.db import get_session\n")
    (app / "jobs/cli_use.py").write_text("")
    graph = imports(app)
    assert find_cycle(graph) is None
    assert upward(graph) == []


def test_main_only_builds_the_app():
    """app/main.py puts the app together and nothing else: the lifespan and reconcile loop are app.reconciler's, the
    pages besides the API app.web's, the OpenAPI document's access notes app.core.openapi's."""
    tree = ast.parse((APP / "main.py").read_text())
    defined = [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    assert defined == ["create_app"]
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Try)], "no import guard: every router is there"
