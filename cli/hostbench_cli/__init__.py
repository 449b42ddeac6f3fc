from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STATE = ROOT / ".hostbench"
