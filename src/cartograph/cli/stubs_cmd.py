"""`cartograph stubs OUT_DIR`: typed async Python stubs of every verified tool."""

from __future__ import annotations

from pathlib import Path

import click

from cartograph.cli.common import (
    AppContext,
    emit_json,
    handle_errors,
    json_option,
    pass_app,
    stderr,
    stdout,
)


@click.command()
@click.argument("out_dir", type=click.Path(file_okay=False, path_type=Path))
@json_option("Print what was written as JSON.")
@pass_app
@handle_errors
def stubs(app: AppContext, out_dir: Path, as_json: bool) -> None:
    """Write a Python package to OUT_DIR: one module per server, one async function per tool.

    Functions are typed from the signed input schemas, documented with the operator's signed
    summaries, and call through `cartograph serve` over stdio (the package's _runtime module).
    Only verified cards are used; files whose text did not change are left untouched.
    """
    from cartograph.storage import open_store
    from cartograph.stubgen import write_package

    ws = app.workspace
    loaded = open_store(ws).load_verified()
    for failure in loaded.failures:
        stderr.print(f"[yellow]card left out[/]: {failure.reason}", highlight=False)
    result = write_package(loaded.cards, out_dir.resolve(), home=str(ws.root))
    if as_json:
        emit_json(
            {
                "package": result.package,
                "path": str(out_dir.resolve()),
                "modules": result.modules,
                "written": result.written,
                "unchanged": result.unchanged,
                "removed": result.removed,
            }
        )
        return
    stdout.print(
        f"package {result.package} at {out_dir.resolve()}: {len(result.modules)} module(s); "
        f"{len(result.written)} file(s) written, {len(result.unchanged)} unchanged, "
        f"{len(result.removed)} removed",
        highlight=False,
    )
