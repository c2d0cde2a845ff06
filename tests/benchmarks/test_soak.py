"""The soak (benchmarks/soak.py), short: clients over HTTP while the upstream is killed on a
timer and oversized inputs are mixed in; no leak, no lost audit entry, bounded RSS growth."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SOAK = Path(__file__).resolve().parents[2] / "benchmarks" / "soak.py"
SHORT = ("--clients", "8", "--seconds", "24", "--kill-every", "4")


@pytest.mark.slow
def test_a_short_soak_leaks_nothing_and_loses_no_audit_entry(tmp_path: Path) -> None:
    out = tmp_path / "soak.json"
    done = subprocess.run(
        [sys.executable, str(SOAK), *SHORT, "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(out.read_text("utf-8"))
    assert result["kills"] >= 4 and result["crashes_seen"] >= 4
    assert result["upstream_owned"] == result["upstream_alive"] == 1
    assert result["leftover_after_exit"] == 0
    assert result["audited"] == result["answered"] > 100
    assert result["kinds"]["ok"] > result["answered"] / 2
    assert result["exit_s"] < 5
