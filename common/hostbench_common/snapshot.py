"""Writes describe.py, the checked-in copy of `hbk <kernel> --describe` that the API reads (the API process has no
kernel binary to ask): python -m hostbench_common.snapshot [path/to/hbk]. backend/tests/test_kernel_rules.py fails
while the copy differs from the built kernel's."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
HBK = HERE.parents[1] / "runner" / "kernels" / "build" / "hbk"



def describe(hbk: Path, kernel: str) -> dict[str, Any]:
    """One kernel's description, less what depends on the build (compiler, flags)."""
    out = subprocess.run([str(hbk), kernel, "--describe"], capture_output=True, text=True, check=True, timeout=30)
    doc: dict[str, Any] = json.loads(out.stdout)
    doc.pop("build", None)
    return doc


def _json(value: Any, depth: int = 0, figures: bool = False) -> str:
    """JSON with one line per parameter and per rule (depth 4) and per result figure (figures: a kernel's
    "results"): short enough for review, one diff line per change."""
    if depth >= 4 or not isinstance(value, (dict, list)) or not value:
        return json.dumps(value, ensure_ascii=False)
    pad = " " * (depth + 1)
    if isinstance(value, dict):
        items = [f"{pad}{json.dumps(k, ensure_ascii=False)}: "
                 + (json.dumps(v, ensure_ascii=False) if figures
                    else _json(v, depth + 1, figures=depth == 1 and k == "results"))
                 for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * depth + "}"
    return "[\n" + ",\n".join(pad + _json(v, depth + 1) for v in value) + "\n" + " " * depth + "]"


def render(docs: dict[str, Any]) -> str:
    text = _json(docs)
    if json.loads(text) != docs:
        raise ValueError("the snapshot does not read back as written")
    if "'''" in text or text.endswith("\\"):
        raise ValueError("the description cannot be written as a raw string")
    return ('"""`hbk <kernel> --describe` of every kernel the experiments run, less "build": written by\n'
            "python -m hostbench_common.snapshot, kept equal to the built kernel's by\n"
            'backend/tests/test_kernel_rules.py.\n"""\nimport json\nfrom typing import Any\n\n'
            f"DESCRIBE: dict[str, Any] = json.loads(r'''{text}''')\n")


def main() -> None:
    hbk = Path(sys.argv[1]) if len(sys.argv) > 1 else HBK
    from .experiments import kernels_needed

    (HERE / "describe.py").write_text(render({k: describe(hbk, k) for k in kernels_needed()}))


if __name__ == "__main__":
    main()
