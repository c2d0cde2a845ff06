"""Every command runs NumPy's BLAS on one thread unless $OPENBLAS_NUM_THREADS says otherwise
(its idle thread spins on the other core and slows the reranker's workers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

PROBE = """
import json, os, sys
from click.testing import CliRunner
from cartograph.cli import main
result = CliRunner().invoke(main, ["--home", sys.argv[1], "keys", "--help"])
assert result.exit_code == 0, result.output
import numpy
from threadpoolctl import threadpool_info
blas = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
print(json.dumps({"env": os.environ.get("OPENBLAS_NUM_THREADS"), "blas": blas}))
"""


def _probe(tmp_path, **env: str) -> dict:
    clean = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path)],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_command_imports_numpy_with_one_blas_thread(tmp_path):
    got = _probe(tmp_path)
    assert got["env"] == "1"
    assert got["blas"] and set(got["blas"]) == {1}


def test_the_users_own_setting_is_kept(tmp_path):
    got = _probe(tmp_path, OPENBLAS_NUM_THREADS="2")
    assert got["env"] == "2"
    assert got["blas"] and max(got["blas"]) <= 2
