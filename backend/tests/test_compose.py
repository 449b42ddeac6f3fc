"""docker-compose.yml must validate against the Compose specification (no Docker engine needed)."""
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def test_compose_file_validates_against_the_compose_spec():
    exe = Path(sys.executable).with_name("check-jsonschema")
    r = subprocess.run([str(exe), "--builtin-schema", "vendor.compose-spec", str(ROOT / "docker-compose.yml")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_compose_runs_every_part_with_health_checks():
    spec = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = spec["services"]
    for name in ("postgres", "redis", "api", "worker", "runner", "frontend"):
        assert "healthcheck" in services[name], name
    assert "noeviction" in services["redis"]["command"]
