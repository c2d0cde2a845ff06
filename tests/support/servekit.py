"""`cartograph serve` as a child process of a test: started on a workspace, read until it says
where it listens, stopped with SIGTERM; what it wrote on stderr comes back for checks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from proxykit import Env

CARTOGRAPH = str(Path(sys.executable).with_name("cartograph"))


def start_serve(env: Env, *args: str) -> tuple[subprocess.Popen[str], str, list[str]]:
    """``serve --config <env's config> ARGS``; returns it, its URL, and its stderr so far."""
    proc = subprocess.Popen(
        [CARTOGRAPH, "--home", str(env.ws.root), "serve", "--config", str(env.config()), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    head: list[str] = []
    for line in proc.stderr:  # ends at EOF if the server dies
        head.append(line)
        if "serving MCP at " in line:
            return proc, line.rsplit(" ", 1)[1].strip(), head
    proc.wait()
    raise AssertionError("serve did not start: " + "".join(head))


def stop_serve(proc: subprocess.Popen[str]) -> str:
    """SIGTERM, wait, and the rest of its stderr."""
    proc.terminate()
    proc.wait(timeout=30)
    assert proc.stderr is not None
    rest = proc.stderr.read()
    proc.stderr.close()
    return rest
