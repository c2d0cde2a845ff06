"""Write docs/cli.md from the `--help` of every command, so the reference cannot drift.

    .venv/bin/python scripts/gen_cli_docs.py          # rewrite docs/cli.md
    .venv/bin/python scripts/gen_cli_docs.py --check  # exit 1 when docs/cli.md is out of date

tests/package/test_cli_docs.py runs the check.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import click
from click.testing import CliRunner

from cartograph.cli import main as cli_main

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
HEADER = """# CLI reference

Generated from `--help` by `scripts/gen_cli_docs.py`; a test fails when it is out of date.
Exit codes: 0 ok, 1 findings (verification failures, Rift at or above `--fail-on`), 2 usage or
configuration error.
"""


def command_paths(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths: list[tuple[str, ...]] = []
    ctx = click.Context(group)
    for name in sorted(group.list_commands(ctx)):
        cmd = group.get_command(ctx, name)
        assert cmd is not None, name
        paths.append((*prefix, name))
        if isinstance(cmd, click.Group):
            paths.extend(command_paths(cmd, (*prefix, name)))
    return paths


def render() -> str:
    runner = CliRunner()
    parts = [HEADER]
    for path in [(), *command_paths(cli_main)]:
        result = runner.invoke(
            cli_main, [*path, "--help"], terminal_width=100, prog_name="cartograph"
        )
        if result.exit_code != 0:
            raise SystemExit(f"`cartograph {' '.join(path)} --help` failed: {result.output}")
        title = " ".join(("cartograph", *path))
        parts.append(f"\n## `{title}`\n\n```text\n{result.output.rstrip()}\n```\n")
    return "".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/cli.md is stale")
    args = parser.parse_args()
    text = render()
    if args.check:
        if not DOC.is_file() or DOC.read_text(encoding="utf-8") != text:
            print(f"{DOC} is out of date: run scripts/gen_cli_docs.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote {DOC}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
