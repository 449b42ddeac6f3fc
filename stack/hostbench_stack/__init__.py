"""The local stack: embedded PostgreSQL and Redis, the whole system as child processes (`./hostbench up`, the tests,
CI), the build and install steps, `./hostbench test`, and every setting `./hostbench` reads."""
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout
STATE = ROOT / ".hostbench"
