"""The C files use each other one way only (src/harness_internal.h, src/kernels/<name>_internal.h).

A part X.c declares what it gives its siblings in its own header X.h; the shared `*_internal.h` holds
types and constants only. Two graphs must have no cycle inside one circle (the harness's files; one
kernel's files) and no pair of files depending on each other both ways anywhere:

- the include graph, from the sources: A.c -> X.c when A.c (or a header it includes) includes X.h,
  except the public headers named after their circle (harness.h, kernels/disk.h: what the kernels
  and the C tests call, defined across the circle's files);
- the symbol graph, from the built objects (nm): A.o -> X.o when A.o uses a symbol X.o defines.

The registry (src/registry.c) lists the kernels and the kernels call the harness (hb_fail), so a
loop through the registry spans circles; it is not a pair and is allowed.

    python3 tests/check_layers.py [build]      # also part of `make check` (check.py)
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "src")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def circle(part):
    """The files a cycle may not span: the harness's, or one kernel's (disk, disk_io, ...)."""
    name = os.path.basename(part)
    if part.startswith("kernels/"):
        return "kernels/" + name.split("_")[0]
    return "harness" if name.startswith("harness") else part


def parts(src=SRC):
    """Every .c under src/ and src/kernels/, as 'harness_group', 'kernels/disk_io'."""
    out = []
    for sub in ("", "kernels"):
        for f in sorted(os.listdir(os.path.join(src, sub))):
            if f.endswith(".c"):
                out.append(os.path.join(sub, f[:-2]) if sub else f[:-2])
    return out


def include_graph(src=SRC):
    """part -> the other parts whose own header it reaches through its includes."""
    all_parts = set(parts(src))
    graph = {}
    for p in all_parts:
        seen, todo, deps = set(), [os.path.normpath(os.path.join(src, p + ".c"))], set()
        while todo:
            f = todo.pop()
            if f in seen or not os.path.exists(f):
                continue
            seen.add(f)
            with open(f, encoding="utf-8") as fh:
                for inc in INCLUDE.findall(fh.read()):
                    path = os.path.normpath(os.path.join(os.path.dirname(f), inc))
                    todo.append(path)
                    rel = os.path.relpath(path, os.path.normpath(src))[:-2]
                    if path.endswith(".h") and rel in all_parts and rel != p and rel != circle(rel):
                        deps.add(rel)
        graph[p] = deps
    return graph


def symbol_graph(build):
    """part -> {other part: symbols it uses from there}, from `nm` of build/obj."""
    objdir = os.path.join(build, "obj")
    defined, undefined = {}, {}
    for p in parts():
        obj = os.path.join(objdir, p + ".o")
        if not os.path.exists(obj):
            continue
        out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
        undefined[p] = set()
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in "TDBRVWC":
                defined.setdefault(f[2], p)
            elif len(f) == 2 and f[0] == "U":
                undefined[p].add(f[1])
    graph = {}
    for p, syms in undefined.items():
        graph[p] = {}
        for s in sorted(syms):
            q = defined.get(s)
            if q and q != p:
                graph[p].setdefault(q, []).append(s)
    return graph


def problems(graph, what):
    """Pairs both ways anywhere, and cycles inside one circle, as messages."""
    out = []
    for a in sorted(graph):
        for b in sorted(graph[a]):
            if a < b and a in graph.get(b, ()):
                out.append(f"{what}: {a} and {b} depend on each other both ways")
    for c in sorted({circle(p) for p in graph}):
        out += [f"{what}: a loop inside {c}: {' -> '.join(loop)}"
                for loop in loops(graph, {p for p in graph if circle(p) == c}) if len(loop) > 3]  # pairs: above
    return out


def loops(graph, nodes):
    """The loops a depth-first walk of graph, inside nodes, closes (each as [a, b, ..., a])."""
    state, stack, found = {}, [], []

    def visit(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if m in nodes and state.get(m) == 1:
                found.append(stack[stack.index(m):] + [m])
            elif m in nodes and m not in state:
                visit(m)
        stack.pop()
        state[n] = 2

    for n in sorted(nodes):
        if n not in state:
            visit(n)
    return found


def run(build, check):
    found = problems(include_graph(), "includes")
    check(not found, "the C files include each other's headers one way only: " + "; ".join(found))
    if os.path.isdir(os.path.join(build, "obj")):
        found = problems(symbol_graph(build), "symbols")
        check(not found, "the C objects use each other's symbols one way only: " + "; ".join(found))
    # The check sees a pair: two parts including each other's header are reported.
    sample = {"kernels/a": {"kernels/a_b"}, "kernels/a_b": {"kernels/a"}}
    check(problems(sample, "includes") == ["includes: kernels/a and kernels/a_b depend on each other both ways"],
          f"check_layers reports a pair: {problems(sample, 'includes')}")
    loop = {"harness": {"harness_x"}, "harness_x": {"harness_y"}, "harness_y": {"harness"}}
    check(len(problems(loop, "includes")) == 1, f"check_layers reports a loop: {problems(loop, 'includes')}")


if __name__ == "__main__":
    failed = []
    run(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "build"),
        lambda ok, msg: None if ok else failed.append(msg))
    for m in failed:
        print("FAILED:", m)
    print("check_layers:", "ok" if not failed else f"{len(failed)} failed")
    sys.exit(1 if failed else 0)
