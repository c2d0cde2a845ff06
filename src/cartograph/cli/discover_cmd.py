"""`cartograph discover`: rank the workspace's signed tools for a task in plain words."""

from __future__ import annotations

import json
from collections.abc import Sequence
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
from cartograph.errors import ConfigError
from cartograph.index.names import DEFAULT_METHOD, METHODS, Method

if TYPE_CHECKING:
    from cartograph.index import Hit, ToolIndex
    from cartograph.index.answer import DiscoverAnswer


@click.command()
@click.argument("task")
@k_option("How many tools to return.")
@method_option(METHODS, "Ranking method.", default=DEFAULT_METHOD)
@click.option(
    "--keyword",
    "-w",
    "keywords",
    multiple=True,
    help="A product name or identifier that must weigh in (lexical channel); repeatable.",
)
@click.option(
    "--rerank/--no-rerank",
    default=None,
    help="Rerank stage one's top 20 with the cross-encoder (default: $CARTOGRAPH_RERANK, else "
    "the workspace's `rerank` setting, else off).",
)
@click.option(
    "--reorder/--no-reorder",
    default=None,
    help="Put hybrid's top 5 in the trained encoder's order (default: $CARTOGRAPH_REORDER, "
    "else the workspace's `reorder` setting, else on; --rerank takes its place).",
)
@click.option(
    "--explain",
    is_flag=True,
    help="Show each channel's term of the hybrid score for the tools shown (dense, BM25, rank, "
    "coverage, action) and, when the reorder is on, the trained model's score that ordered the "
    'top 5 ("trained", not a term); with --json, as an "explain" object keyed "server/tool".',
)
@json_option("Print the answer as JSON.")
@pass_app
@handle_errors
def discover(
    app: AppContext,
    task: str,
    k: int,
    method: Method,
    keywords: tuple[str, ...],
    rerank: bool | None,
    reorder: bool | None,
    explain: bool,
    as_json: bool,
) -> None:
    """Rank the tools of the verified cards for TASK; show summaries, arguments and an example
    (--json: the whole input schemas).

    The index in <home>/index/ is loaded when it matches the verified cards and rebuilt
    (with the reason logged) when it is missing, stale or altered. --json prints what the
    proxy's discover tool answers: {"tools": [{server, tool, summary, usage, input_schema,
    examples}], "note"}. --explain shows what each channel of the hybrid score gave each tool
    shown (stage one's terms, and the trained encoder's hybrid score that ordered the top 5 as
    "trained"; a reranked order is the reranker's).
    """
    from cartograph.index import open_index_with_status
    from cartograph.index.abstain import judge
    from cartograph.index.answer import render_answer
    from cartograph.index.reorder import workspace_reorderer
    from cartograph.index.rerank import workspace_reranker
    from cartograph.storage import open_store
    from cartograph.workspace import read_settings

    ws = app.workspace
    if ws.store is None and not ws.root.is_dir():
        raise ConfigError(
            f"no workspace at {ws.root}: pass --home DIR (or set $CARTOGRAPH_HOME), or create "
            "one with `cartograph bootstrap --config mcp.json`"
        )
    index, status = open_index_with_status(ws, open_store(ws))  # a stale index: logged there
    index.reranker = workspace_reranker(ws, rerank)
    index.reorderer = workspace_reorderer(ws.root, index, read_settings(ws).reorder, reorder)
    hits = index.search(task, k=k, method=method, keywords=keywords)
    note = judge(hits, index.embedder.model)  # abstained: the tools are the nearest, not fits
    answer = render_answer(status.cards, hits, note, weak=note is not None)
    terms = channel_terms(index, task, keywords, hits) if explain and method == "hybrid" else {}
    if explain and not terms:
        stderr.print(f"--explain reads the hybrid score; {method} has no channels to show")
    if as_json:
        out = answer.to_json()
        if terms:
            out["explain"] = {f"{s}/{t}": parts for (s, t), parts in terms.items()}
        emit_json(out)
        return
    ranked = ranked_label(index, method)
    title = f"{task!r} ({ranked}, {len(index)} tools)"
    scores = {(h.server, h.tool): h.score for h in hits}
    label = "stage-1 score" if reordered(index, method) else "score"
    print_answer(title, answer, scores, terms, label)
    if answer.note:
        stderr.print(answer.note, highlight=False)


TRAINED = "trained"
"""The key of the trained model's score in --explain (the reorder's; not a term of the score)."""


def reordered(index: ToolIndex, method: Method) -> bool:
    """Whether the reorder stage put ``method``'s top 5 in the trained model's order."""
    return index.reranker is None and index.reorderer is not None and method == "hybrid"


def ranked_label(index: ToolIndex, method: Method) -> str:
    """How the answer was ranked, for the table's title."""
    if index.reranker is not None:
        return f"{method} + rerank"
    if reordered(index, method) and index.reorderer is not None:
        return f"{method}, top 5 ordered by {index.reorderer.embedder.name}"
    return method


def print_answer(
    title: str,
    answer: DiscoverAnswer,
    scores: dict[tuple[str, str], float],
    terms: dict[tuple[str, str], dict[str, float]],
    score_label: str = "score",
) -> None:
    """The answer as a table: tool, score (and each channel's term when ``terms`` has them),
    summary, arguments with the card's first example. ``score_label`` heads the score column
    ("stage-1 score" where the reorder put the top rows in another order than these scores)."""
    table = new_table(title=title, show_lines=True)
    table.add_column("#", justify="right")
    table.add_column("tool (server)", overflow="fold", min_width=14, ratio=2)
    table.add_column(score_label, justify="right")
    table.add_column("summary", overflow="fold", ratio=3)
    table.add_column("arguments (* required)", overflow="fold", ratio=2)
    for i, t in enumerate(answer.tools, 1):
        arguments = schema_brief(t.input_schema)
        if t.examples:
            arguments += "\ne.g. " + json.dumps(t.examples[0], ensure_ascii=False)[:120]
        score = f"{scores[(t.server, t.tool)]:.3f}"
        parts = dict(terms.get((t.server, t.tool)) or {})
        trained = parts.pop(TRAINED, None)
        if parts:
            score += "\n" + "\n".join(f"{name} {value:+.2f}" for name, value in parts.items())
        if trained is not None:
            score += f"\n(trained {trained:.2f})"
        table.add_row(str(i), f"{t.tool}\n({t.server})", score, t.summary, arguments)
    stdout.print(table)


def channel_terms(
    index: ToolIndex, task: str, keywords: Sequence[str], hits: Sequence[Hit]
) -> dict[tuple[str, str], dict[str, float]]:
    """Each hybrid channel's term for the tools of ``hits``, as discover computed them (the
    other methods have one channel each, which the score already is); with the reorder stage,
    also the trained model's hybrid score that ordered the top 5 (:data:`TRAINED`, not a term
    of the score)."""
    from cartograph.index.methods import hybrid_parts

    words = " ".join([task, *keywords]) if keywords else None
    evidence = index.evidence(task, lexical_text=words)
    parts = hybrid_parts(evidence, index.hybrid_params)
    if index.reorderer is not None and index.reranker is None:
        parts[TRAINED] = index.reorderer.scores(task, evidence)
    out = {}
    for h in hits:
        k = index.position(h.server, h.tool)
        if k is not None:
            out[(h.server, h.tool)] = {name: round(float(v[k]), 3) for name, v in parts.items()}
    return out


def schema_brief(schema: dict[str, Any], most: int = 8) -> str:
    """``name*: type, ...`` for a tool's input schema: what a reader needs at a glance."""
    props = schema.get("properties")
    if not isinstance(props, dict) or not props:
        return "(none)"
    required = set(schema.get("required") or [])
    parts = []
    for name, spec in list(props.items())[:most]:
        kind = spec.get("type", "any") if isinstance(spec, dict) else "any"
        kind = "|".join(map(str, kind)) if isinstance(kind, list) else str(kind)
        parts.append(f"{name}{'*' if name in required else ''}: {kind}")
    more = len(props) - most
    return ", ".join(parts) + (f", +{more} more" if more > 0 else "")
