#!/usr/bin/env python3
"""`make check`: every key of every result line is declared in its kernel's `--describe` "results"
(docs/kernel-protocol.md), with the type it is written in and within its declared range (minimum,
exclusiveMinimum, maximum); an object's members are declared in its "fields". check.py,
check_memory.py, check_net.py and check_gpu.py pass each run's lines through results_declared(),
so every run the checks make (tiny sizes, every op they cover) is compared with the declaration of
the binary that made it."""

import json
import subprocess

_describes = {}  # (exe, kernel) -> its "results", or None when --describe failed


def declaration(exe, kernel):
    key = (exe, kernel)
    if key not in _describes:
        p = subprocess.run([exe, kernel, "--describe"], capture_output=True, text=True, timeout=60)
        try:
            _describes[key] = json.loads(p.stdout)["results"] if p.returncode == 0 else None
        except (ValueError, KeyError, TypeError):
            _describes[key] = None
    return _describes[key]


def _type_ok(decl, value):
    if value is None:  # non-finite numbers and unknown texts are written null
        return True
    t = decl.get("type")
    if t == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if t == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if t == "boolean":
        return isinstance(value, bool)
    if t == "string":
        return isinstance(value, str)
    return False


def _in_range(decl, value):
    """A number within the declaration's minimum / exclusiveMinimum / maximum (null is always in)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return True
    return not (("minimum" in decl and value < decl["minimum"])
                or ("exclusiveMinimum" in decl and value <= decl["exclusiveMinimum"])
                or ("maximum" in decl and value > decl["maximum"]))


def faults(declared, line):
    """What in one result line its kernel did not declare: ["key (undeclared)", "key: str, declared
    number", "obj.member (undeclared)"]."""
    out = []
    for key, value in line.items():
        d = declared.get(key)
        if d is None:
            out.append(f"{key} (undeclared)")
        elif d.get("type") == "object":
            if not isinstance(value, dict):
                out.append(f"{key}: {type(value).__name__}, declared object")
                continue
            fields = d.get("fields") or {}
            for sub, x in value.items():
                if sub not in fields:
                    out.append(f"{key}.{sub} (undeclared)")
                elif not _type_ok(fields[sub], x):
                    out.append(f"{key}.{sub}: {type(x).__name__}, declared {fields[sub].get('type')}")
                elif not _in_range(fields[sub], x):
                    out.append(f"{key}.{sub}: {x!r}, outside its declared range")
        elif not _type_ok(d, value):
            out.append(f"{key}: {type(value).__name__}, declared {d.get('type')}")
        elif not _in_range(d, value):
            out.append(f"{key}: {value!r}, outside its declared range")
    return out


def results_declared(exe, kernel, lines, check, what=None):
    """One check per run that wrote result lines: each of their keys is declared."""
    results = [x for x in lines if isinstance(x, dict) and x.get("type") == "result"]
    if not results:
        return
    declared = declaration(exe, kernel)
    if not check(isinstance(declared, dict), f"{kernel} --describe ({exe}) declares its results"):
        return
    bad = sorted({f for r in results for f in faults(declared, r)})
    check(not bad, f"{what or kernel}: result keys declared in --describe \"results\"; not: {bad}")
