"""`cartograph rift`: confusable-cluster detection over the workspace's cards, as a CI gate.

Exit 1 when a cluster at or above ``--fail-on`` exists (default high), 0 otherwise, 2 on usage
or configuration errors (including a workspace with no verified card to analyse).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from cartograph.cli.common import (
    AppContext,
    emit_json,
    handle_errors,
    json_option,
    method_option,
    new_table,
    pass_app,
    stderr,
    stdout,
)
from cartograph.errors import ConfigError, IndexError_, UsageError

if TYPE_CHECKING:
    from cartograph.rift.analyze import Grouping, Method, RiftConfig
    from cartograph.rift.cluster import Linkage
    from cartograph.rift.margin import MarginScope
    from cartograph.rift.report import FailOn, RiftReport
    from cartograph.rift.workspace import RegenerateResult

_STYLE = {"HIGH": "bold red", "MEDIUM": "yellow", "LOW": "green"}
# The rift package loads NumPy and SciPy, so its names are repeated here for --help;
# tests/cli/test_rift_cmd.py checks them against cartograph.rift.analyze and .report.
METHODS = ("rift", "cosine", "jaccard")
FAIL_ON = ("high", "medium", "never")
MARGIN_SCORES = ("discover", "cosine")
QUERY_STYLES = ("task", "schema")
GROUPINGS = ("confusion", "cosine")


@click.command()
@json_option("Print the report as JSON.")
@click.option(
    "--html",
    "html_file",
    type=click.Path(dir_okay=False, writable=True),
    help="Also write a self-contained HTML report to FILE.",
)
@click.option(
    "--fail-on",
    type=click.Choice(FAIL_ON),
    default="high",
    show_default=True,
    help="Exit 1 when a cluster at or above this risk exists.",
)
@click.option(
    "--grouping",
    type=click.Choice(GROUPINGS),
    default="confusion",
    show_default=True,
    help="Layer 1: group the tools whose own synthetic queries discover ranks within the MEDIUM "
    "margin of each other, over the whole catalog (confusion), or the paper's average-linkage "
    "clusters of card vectors at --theta (cosine).",
)
@click.option(
    "--theta",
    type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
    default=0.65,
    show_default=True,
    help="Cosine similarity threshold of --grouping cosine: clusters are cut at distance "
    "1 - theta.",
)
@click.option(
    "--no-margin",
    is_flag=True,
    help="Ablation (the paper's Table 5): keep the clusters, skip margin analysis; no cluster "
    "is labelled HIGH or MEDIUM.",
)
@click.option(
    "--margin-score",
    type=click.Choice(MARGIN_SCORES),
    default="discover",
    show_default=True,
    help="Score the margins with discover's own ranking (in cosine units) or the paper's cosine.",
)
@click.option(
    "--query-style",
    type=click.Choice(QUERY_STYLES),
    default="task",
    show_default=True,
    help="Synthetic queries as user tasks with example argument values, or name + argument names.",
)
@click.option(
    "--no-substitutes",
    is_flag=True,
    help="Treat tools of other servers that do the same job as rivals too.",
)
@method_option(
    METHODS,
    "rift (clusters + margins), or a baseline: cosine (threshold groups), "
    "jaccard (card-token Jaccard > 0.25).",
    default="rift",
)
@click.option(
    "--linkage",
    type=click.Choice(["average", "single", "complete"]),
    default="average",
    show_default=True,
    help="Agglomerative linkage for the rift method.",
)
@click.option(
    "--margin-scope",
    type=click.Choice(["cluster", "catalog"]),
    default="cluster",
    show_default=True,
    help="Rivals for the margin: the tool's cluster mates, or every indexed tool.",
)
@click.option(
    "--high",
    "margin_high",
    type=float,
    default=None,
    help="HIGH when the smallest margin is below this [default: 0.0 for --grouping confusion "
    "(the tool's own query ranks a rival first), 0.10 for cosine].",
)
@click.option(
    "--medium",
    "margin_medium",
    type=float,
    default=None,
    help="MEDIUM when the smallest margin is below this; for --grouping confusion also the "
    "margin under which two tools are joined [default: 0.20].",
)
@click.option(
    "--regenerate",
    is_flag=True,
    help="Rewrite the flagged tools of HIGH clusters with contrast against their cluster mates "
    "(on any server), re-sign, rebuild the index and show the risk before and after.",
)
@click.option(
    "--accepted",
    "accepted_file",
    type=click.Path(dir_okay=False),
    help="Reviewed pairs (written by --write-accepted): the gate fails only on confusable "
    "pairs this file does not hold at the same risk or higher.",
)
@click.option(
    "--write-accepted",
    "write_accepted_file",
    type=click.Path(dir_okay=False, writable=True),
    help="Write every current HIGH and MEDIUM pair to FILE as accepted (reasons already in it, "
    "or in --accepted, are kept) and gate against it.",
)
@click.option(
    "--limit",
    type=int,
    default=40,
    show_default=True,
    help="Clusters shown in the table (JSON and HTML hold all).",
)
@pass_app
@handle_errors
def rift(
    app: AppContext,
    as_json: bool,
    html_file: str | None,
    fail_on: FailOn,
    grouping: Grouping,
    theta: float,
    no_margin: bool,
    method: Method,
    linkage: Linkage,
    margin_scope: MarginScope,
    margin_high: float | None,
    margin_medium: float | None,
    margin_score: str,
    query_style: str,
    no_substitutes: bool,
    regenerate: bool,
    accepted_file: str | None,
    write_accepted_file: str | None,
    limit: int,
) -> None:
    """Find tools whose signed cards are too close to tell apart."""
    from cartograph.rift.workspace import regenerate as do_regenerate
    from cartograph.rift.workspace import run_rift
    from cartograph.storage import open_store

    config = _config(
        method,
        grouping,
        theta,
        linkage,
        not no_margin,
        margin_scope,
        (margin_high, margin_medium),
        margin_score,
        query_style,
        not no_substitutes,
    )
    _check_options(config, regenerate)
    ws = app.workspace
    try:
        store = open_store(ws)
        result = do_regenerate(ws, store, config) if regenerate else None
        report = (result.after or result.before) if result else run_rift(ws, store, config)
    except IndexError_ as exc:
        # nothing to analyse (no verified card) is a setup problem, not a finding: exit 2
        raise ConfigError(str(exc)) from exc
    report = _gate_against_accepted(report, accepted_file, write_accepted_file)
    if as_json:
        extra = {"regenerate": result.to_json()} if result else {}
        emit_json({**report.to_json(), **extra})
    else:
        _print_table(report, limit)
        if result:
            _print_regenerate(result)
    if html_file:
        _write_html(report, html_file)
    if report.fails(fail_on):
        raise SystemExit(1)


def _write_html(report: RiftReport, html_file: str) -> None:
    from cartograph.rift.html import render_html

    Path(html_file).write_text(render_html(report), encoding="utf-8")
    stderr.print(f"HTML report written to {html_file}", highlight=False)


def _check_options(config: RiftConfig, regenerate: bool) -> None:
    th = config.thresholds
    if th.high > th.medium:
        raise UsageError(f"--high ({th.high}) must not exceed --medium ({th.medium})")
    if regenerate and config.method != "rift":
        raise UsageError("--regenerate works with --method rift only")


def _gate_against_accepted(
    report: RiftReport, accepted_file: str | None, write_file: str | None
) -> RiftReport:
    """The report with ``--accepted`` applied, after writing ``--write-accepted`` if asked."""
    from cartograph.rift.accepted import apply_accepted, load_accepted, write_accepted

    accepted = load_accepted(Path(accepted_file)) if accepted_file else None
    if write_file:
        target = Path(write_file)
        previous = accepted or (load_accepted(target) if target.exists() else None)
        accepted = write_accepted(target, report, previous)
        kept = sum(1 for a in accepted.pairs.values() if a.reason)
        stderr.print(
            f"wrote {len(accepted.pairs)} accepted pairs to {write_file} ({kept} with a reason); "
            "write down why each is acceptable, and commit the file",
            highlight=False,
        )
    return apply_accepted(report, accepted) if accepted else report


def _config(
    method: Method,
    grouping: Grouping,
    theta: float,
    linkage: Linkage,
    use_margin: bool,
    margin_scope: MarginScope,
    thresholds: tuple[float | None, float | None],
    margin_score: str,
    query_style: str,
    substitutes: bool,
) -> RiftConfig:
    """The analysis settings the options ask for (``thresholds``: HIGH and MEDIUM margins,
    None for the grouping's default)."""
    from cartograph.rift.analyze import DEFAULT_THRESHOLDS, RiftConfig
    from cartograph.rift.margin import MarginThresholds
    from cartograph.rift.queries import QueryOptions

    base = DEFAULT_THRESHOLDS[grouping]
    high, medium = thresholds
    return RiftConfig(
        method=method,
        grouping=grouping,
        theta=theta,
        linkage=linkage,
        use_margin=use_margin,
        margin_scope=margin_scope,
        margin_thresholds=MarginThresholds(
            high=base.high if high is None else high,
            medium=base.medium if medium is None else medium,
        ),
        margin_score=margin_score,  # type: ignore[arg-type]
        substitutes=substitutes,
        query_options=QueryOptions(style=query_style),  # type: ignore[arg-type]
    )


def _print_table(report: RiftReport, limit: int) -> None:
    s = report.summary
    table = new_table(
        title=f"Rift ({_grouping(report)}): {s.clusters} clusters ({s.high} HIGH, "
        f"{s.medium} MEDIUM, {s.low} LOW), "
        f"{s.tools_in_clusters} of {report.tools_total} tools; {s.within_server} within one "
        f"server, {s.cross_server} across servers",
        title_justify="left",
    )
    for col in ("#", "risk", "size", "cohesion", "margin", "members", "diagnosis"):
        table.add_column(col, overflow="fold")
    for k, c in enumerate(report.clusters[:limit], 1):
        members = ", ".join(f"{srv}/{tool}" for srv, tool in c.members[:6])
        if len(c.members) > 6:
            members += f", +{len(c.members) - 6} more"
        table.add_row(
            str(k),
            _risk_cell(c.risk, c.gate_risk),
            str(len(c.members)),
            f"{c.cohesion:.3f}",
            "" if c.margin_min is None else f"{c.margin_min:+.3f}",
            members,
            c.diagnosis,
        )
    stdout.print(table)
    _print_accepted(report)
    if len(report.clusters) > limit:
        stdout.print(f"... {len(report.clusters) - limit} more clusters (see --json or --html)")
    _print_queries(report)
    _print_substitutes(report, limit)


def _grouping(report: RiftReport) -> str:
    cfg = report.config
    if cfg.get("method", "rift") != "rift":
        return f"{cfg.get('method')} baseline"
    return f"{cfg.get('grouping', 'cosine')} grouping"


def _risk_cell(risk: str, gate_risk: str) -> str:
    cell = f"[{_STYLE[risk]}]{risk}[/]"
    return cell if gate_risk == risk else f"{cell} (accepted; open: {gate_risk})"


def _print_accepted(report: RiftReport) -> None:
    info, s = report.accepted, report.summary
    if not info:
        return
    stdout.print(
        f"accepted file {info['file']}: {info['covered']} of {info['covered'] + info['open']} "
        f"confusable pairs reviewed; open: {s.open_high} HIGH, {s.open_medium} MEDIUM clusters",
        highlight=False,
    )
    if info["stale"]:
        stdout.print(
            f"  {len(info['stale'])} accepted pairs are no longer confusable "
            "(--write-accepted drops them)",
            highlight=False,
        )


def _print_queries(report: RiftReport, count: int = 3) -> None:
    """The synthetic queries of the first clusters: what Rift asked on each tool's behalf."""
    shown = [c for c in report.clusters if c.queries][:count]
    if shown:
        stdout.print("synthetic queries (from name and argument schema only):")
    for c in shown:
        for label, query in (c.queries or {}).items():
            margin = (c.margins or {}).get(label)
            m = "no rival" if margin is None else f"margin {margin:+.3f}"
            stdout.print(f"  {label}: {query!r} ({m})", highlight=False)


def _print_substitutes(report: RiftReport, limit: int) -> None:
    pairs = [p for c in report.clusters for p in c.substitutes]
    if not pairs:
        return
    stdout.print(
        f"substitutes (other servers' tools that do the same job; not confusions): {len(pairs)}"
    )
    for a, b in pairs[:limit]:
        stdout.print(f"  {a} ~ {b}", highlight=False)


def _print_regenerate(result: RegenerateResult) -> None:
    b = result.before.summary
    stdout.print(f"before: {b.clusters} clusters, {b.high} HIGH, {b.medium} MEDIUM, {b.low} LOW")
    if result.after is None:
        stdout.print("no tool was flagged; nothing rewritten")
        return
    a = result.after.summary
    stdout.print(f"after:  {a.clusters} clusters, {a.high} HIGH, {a.medium} MEDIUM, {a.low} LOW")
    for server, tools in sorted(result.rewritten.items()):
        stdout.print(f"rewritten {server}: {', '.join(tools)}")
    for server, tools in sorted(result.unchanged.items()):
        stdout.print(f"[yellow]unchanged[/] {server}: {', '.join(tools)}")
    for server, why in sorted(result.failed.items()):
        stderr.print(f"[red]failed[/] {server}: {why}", highlight=False)
