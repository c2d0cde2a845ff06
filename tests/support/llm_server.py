"""A real local model server for tests: llama-cpp-python's OpenAI-compatible server running
SmolLM2-135M-Instruct, both from ``.llm-venv/`` (installed by ``scripts/setup-llm.sh``).

:func:`llm_install` finds the interpreter and the ``.gguf`` (None when the venv is absent);
:func:`running_llm_server` starts the server on a free loopback port as a child process in its
own process group, waits (bounded) until ``/v1/models`` answers, and always reaps it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
LLM_VENV = REPO / ".llm-venv"
MODEL_ALIAS = "smollm2-135m"
START_TIMEOUT = 180.0


@dataclass(frozen=True)
class LLMInstall:
    python: Path
    gguf: Path


@dataclass(frozen=True)
class LLMServer:
    base_url: str
    model: str
    pid: int
    log: Path


def llm_install(venv: Path = LLM_VENV) -> LLMInstall | None:
    """The venv's interpreter and model file, or None when either is missing."""
    python = venv / "bin" / "python"
    if not python.exists():
        return None
    ggufs = sorted(p for p in (venv / "lib").rglob("*.gguf") if p.stat().st_size > 1_000_000)
    if not ggufs:
        return None
    probe = subprocess.run(
        [str(python), "-c", "import llama_cpp.server"],
        capture_output=True,
        timeout=120,
        check=False,
    )
    return LLMInstall(python, ggufs[0]) if probe.returncode == 0 else None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def running_llm_server(
    install: LLMInstall, log: Path, *, n_ctx: int = 2048, n_threads: int = 1
) -> Iterator[LLMServer]:
    """The model server, up and answering, for the duration of the ``with`` block."""
    port = free_port()
    cmd = [
        str(install.python),
        "-m",
        "llama_cpp.server",
        "--model",
        str(install.gguf),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        "--n_threads",
        str(n_threads),
        "--verbose",
        "False",
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_ready(proc, base_url, log)
        yield LLMServer(base_url, MODEL_ALIAS, proc.pid, log)
    finally:
        _stop(proc)


def _wait_ready(proc: subprocess.Popen[bytes], base_url: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited with {proc.returncode}:\n{_tail(log)}")
        try:
            if httpx.get(f"{base_url}/models", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    raise RuntimeError(f"llama_cpp.server not ready after {START_TIMEOUT:.0f}s:\n{_tail(log)}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)


def _tail(log: Path, n: int = 3000) -> str:
    try:
        return log.read_text(encoding="utf-8", errors="replace")[-n:]
    except OSError:
        return "(no log)"
