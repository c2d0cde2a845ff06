"""docs/cli.md is generated from `--help` and must match the commands as they are."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "gen_cli_docs.py"


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_cli_docs", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_is_up_to_date():
    gen = load_generator()
    assert gen.DOC.read_text(encoding="utf-8") == gen.render(), (
        "docs/cli.md is stale: run .venv/bin/python scripts/gen_cli_docs.py"
    )


def test_cli_reference_covers_every_command():
    gen = load_generator()
    text = gen.DOC.read_text(encoding="utf-8")
    for path in gen.command_paths(gen.cli_main):
        assert f"## `cartograph {' '.join(path)}`" in text
