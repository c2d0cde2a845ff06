"""`--help` loads click and the command line's own modules, never the library behind them.

Checked on the real entry path (``python -X importtime -m cartograph ... --help`` in a fresh
process), so a module-level import of NumPy, MCP, rich or a library package in any command
module fails here. No timing: what is imported is what costs.
"""

from __future__ import annotations

import inspect
import subprocess
import sys

import click
import pytest

from cartograph.cli import COMMANDS, main

HEAVY = (
    "numpy",
    "scipy",
    "onnxruntime",
    "tokenizers",
    "bm25s",
    "mcp",
    "httpx",
    "httpx_sse",
    "anyio",
    "rich",
    "pydantic",
    "jsonschema",
    "cryptography",
    "nacl",
    "cartograph.rift",
    "cartograph.config",
    "cartograph.upstream",
    "cartograph.cards",
    "cartograph.trust",
    "cartograph.index.tool_index",
    "cartograph.proxy.core",
    "cartograph.access",
    "cartograph.generate.attest",
)


def imported_by(*argv: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "cartograph", *argv],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Usage:" in done.stdout
    return {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


def heavy_in(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_top_level_help_imports_only_click_and_the_cli():
    modules = imported_by("--help")
    assert "click" in modules and "cartograph.cli" in modules
    assert heavy_in(modules) == []
    assert not any(m.startswith("cartograph.cli.") and m.endswith("_cmd") for m in modules)


@pytest.mark.parametrize("command", [*sorted(COMMANDS), "cards list", "keys trust", "index build"])
def test_command_help_imports_no_library_module(command):
    assert heavy_in(imported_by(*command.split(), "--help")) == []


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_registered_summary_is_the_commands_first_paragraph(name):
    command = main.get_command(click.Context(main), name)
    assert command is not None and command.help
    first = inspect.cleandoc(command.help).split("\n\n")[0].replace("\n", " ")
    assert COMMANDS[name].summary == first
