"""`cartograph eval`: R@k, MRR and mean first-hit rank of ranking methods over a query set."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from cartograph.cli.common import (
    AppContext,
    emit_json,
    handle_errors,
    json_option,
    k_option,
    method_option,
    new_table,
    pass_app,
    stderr,
    stdout,
)
from cartograph.index.names import METHODS, Method

if TYPE_CHECKING:
    from cartograph.evaluate import EvalReport


@click.command("eval")
@click.option(
    "--queries",
    "queries_path",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help='JSONL: {"query", "server", "tool"} or {"query", "relevant": [[s, t], ...]}, '
    "optionally with 'acceptable' / 'relevant_equivalent'.",
)
@method_option(
    METHODS, "Method(s) to compare (repeatable). Default: all.", multiple=True, dest="methods"
)
@k_option("Cut-off listed in --verbose, and k for two-stage's server stage.")
@json_option("Print the figures as JSON.")
@click.option("--verbose", is_flag=True, help="List each miss with what ranked first instead.")
@click.option(
    "--reorder/--no-reorder",
    default=None,
    help="Score hybrid with discover's reorder stage (the trained encoder orders its top 5; "
    "default: as discover does, from $CARTOGRAPH_REORDER or the `reorder` setting, else on).",
)
@pass_app
@handle_errors
def eval_(
    app: AppContext,
    queries_path: Path,
    methods: tuple[Method, ...],
    k: int,
    as_json: bool,
    verbose: bool,
    reorder: bool | None,
) -> None:
    """Score ranking methods on a query set over the workspace's index, side by side.

    A query counts as a hit at k when any relevant or acceptable tool ranks in the top k.
    'random' is shown as its expected value. Hybrid is scored as discover ranks it: with the
    reorder stage unless it is off (the table's title says which).
    """
    from cartograph.evaluate import load_queries, run_eval
    from cartograph.index import open_index
    from cartograph.index.reorder import workspace_reorderer
    from cartograph.storage import open_store
    from cartograph.workspace import read_settings

    queries = load_queries(queries_path)
    ws = app.workspace
    index = open_index(ws, open_store(ws))
    index.reorderer = workspace_reorderer(ws.root, index, read_settings(ws).reorder, reorder)
    report = run_eval(index, queries, list(methods) or list(METHODS), k=k)
    if report.missing_labels:
        stderr.print(f"[yellow]{report.missing_labels} query(ies) name no tool in the index[/]")
    if as_json:
        emit_json(_as_json(report, verbose))
        return
    stage = index.reorderer
    ordered = f"; hybrid's top 5 ordered by {stage.embedder.name}" if stage else ""
    table = new_table(
        title=f"{len(queries)} queries over {len(index)} tools ({queries_path.name}{ordered})"
    )
    for col in ("method", "R@1", "R@3", "R@5", "MRR", "mean rank", "n"):
        table.add_column(col, justify="left" if col == "method" else "right")
    for name, res in report.methods.items():
        s = res.scores.as_json()
        table.add_row(
            name,
            *(f"{s[c]:.3f}" for c in ("R@1", "R@3", "R@5", "MRR")),
            "" if s["mean_rank"] is None else f"{s['mean_rank']:.1f}",
            str(s["n"]),
        )
    stdout.print(table)
    if verbose:
        _print_misses(report, k)


def _as_json(report: EvalReport, verbose: bool) -> dict[str, Any]:
    data = report.as_json()
    if verbose:
        data["misses"] = {
            m: [
                {"id": x.id, "query": x.query, "expected": x.expected, "rank": x.rank, "top": x.top}
                for x in r.misses
            ]
            for m, r in report.methods.items()
        }
    return data


def _print_misses(report: EvalReport, k: int) -> None:
    for name, res in report.methods.items():
        if not res.misses:
            continue
        stdout.print(f"\n[bold]{name}[/]: {len(res.misses)} miss(es) at k={k}")
        for miss in res.misses:
            want = ", ".join(f"{s}/{t}" for s, t in miss.expected[:4])
            got = ", ".join(f"{s}/{t}" for s, t in miss.top[:3])
            stdout.print(
                f"  [{miss.id}] {miss.query!r}\n    wanted {want}; rank "
                f"{miss.rank or '-'}; top: {got}",
                highlight=False,
            )
