"""`./hostbench bench AREA` ends with its JSON line on any machine, also where stdout and stderr share one stream:
an area this host cannot run at all (here gpu, with every CUDA device hidden) still prints its report, the reason
in `skipped`, and exits 3."""
import json
import os
import subprocess
import sys

from hostbench_stack import ROOT


def test_an_area_the_host_cannot_run_still_ends_with_its_json_line():
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    p = subprocess.run([sys.executable, "-m", "hostbench_cli", "bench", "gpu", "--pairs", "3"], cwd=ROOT, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    last = p.stdout.strip().splitlines()[-1]
    doc = json.loads(last)
    assert p.returncode == 3 and doc["area"] == "gpu" and doc["pairs"] == []
    assert doc["skipped"] and doc["skipped"][0].startswith("gpu: ")
