"""What viewing the console loads into the serving process: the pages an operator opens all day
load nothing heavy; only Rift brings its clustering (SciPy) along. Read from /proc/PID/maps of
a real `serve --transport http` (Linux)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from consolekit import Console, login, serve_console

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/PID/maps")


def scipy_loaded(console: Console) -> bool:
    maps = Path(f"/proc/{console.pid}/maps").read_text(encoding="utf-8", errors="replace")
    return "/scipy/" in maps


def test_only_the_rift_page_loads_scipy_into_the_serving_process(
    golden_home: Path, tmp_path: Path
) -> None:
    with serve_console(golden_home, tmp_path) as console:
        ops = login(console, console.keys["ops"])
        pages = (
            "/console",
            "/console/servers/evil",  # publisher text: read from the recorded snapshot
            "/console/servers/chaos/tools/echo",
            "/console/discover?task=echo+a+message",
            "/console/audit",
            "/console/quarantine",
            "/console/jobs",
        )
        for path in pages:
            assert ops.get(path).status_code == 200, path
        assert not scipy_loaded(console), "a page other than Rift loaded SciPy"
        assert "peek" in ops.get("/console/servers/evil").text
        assert ops.get("/console/rift").status_code == 200
        assert scipy_loaded(console)  # the check can see it
