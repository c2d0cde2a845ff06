"""Query sets for eval: JSONL, one task a line, with the tools that answer it.

Accepted shapes (one per line)::

    {"query": "...", "server": "S", "tool": "T"}
    {"query": "...", "relevant": [["S", "T"], ...]}

either optionally with ``acceptable`` or ``relevant_equivalent``: more ``[server, tool]`` pairs
that count as a hit too. ``id`` is optional.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cartograph.errors import UsageError

logger = logging.getLogger(__name__)

Pair = tuple[str, str]


@dataclass(frozen=True)
class EvalQuery:
    """One task and the tools that count as a hit for it."""

    id: str
    query: str
    relevant: tuple[Pair, ...]
    acceptable: tuple[Pair, ...] = ()

    @property
    def hits(self) -> tuple[Pair, ...]:
        return self.relevant + tuple(p for p in self.acceptable if p not in self.relevant)


def _pairs(value: Any, where: str, field: str) -> tuple[Pair, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise UsageError(f"{where}: field {field!r} must be a list of [server, tool] pairs")
    out: list[Pair] = []
    for item in value:
        if (
            not isinstance(item, list | tuple)
            or len(item) != 2
            or not all(isinstance(x, str) and x for x in item)
        ):
            raise UsageError(f"{where}: field {field!r} has {item!r}; expected [server, tool]")
        out.append((item[0], item[1]))
    return tuple(out)


def parse_query(row: Any, where: str, default_id: str) -> EvalQuery:
    if not isinstance(row, dict):
        raise UsageError(f"{where}: expected a JSON object")
    query = row.get("query")
    if not isinstance(query, str) or not query.strip():
        raise UsageError(f"{where}: field 'query' must be a non-empty string")
    if "relevant" in row:
        relevant = _pairs(row["relevant"], where, "relevant")
    elif isinstance(row.get("server"), str) and isinstance(row.get("tool"), str):
        relevant = ((row["server"], row["tool"]),)
    else:
        raise UsageError(f"{where}: give either 'relevant' or both 'server' and 'tool'")
    if not relevant:
        raise UsageError(f"{where}: 'relevant' is empty; name at least one [server, tool]")
    acceptable = _pairs(row.get("acceptable"), where, "acceptable") + _pairs(
        row.get("relevant_equivalent"), where, "relevant_equivalent"
    )
    return EvalQuery(str(row.get("id") or default_id), query.strip(), relevant, acceptable)


def load_queries(path: str | Path, *, lenient: bool = True) -> list[EvalQuery]:
    """Read a JSONL query file. With ``lenient=False`` the acceptable lists are ignored."""
    path = Path(path)
    if not path.is_file():
        raise UsageError(f"{path}: no such query file")
    out: list[EvalQuery] = []
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            where = f"{path}:{lineno}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise UsageError(f"{where}: not valid JSON: {exc.msg}") from exc
            if isinstance(row, dict) and row.get("relevant") == []:
                logger.warning("%s: no relevant tool is labelled; query skipped", where)
                continue
            q = parse_query(row, where, default_id=str(lineno))
            out.append(q if lenient else EvalQuery(q.id, q.query, q.relevant))
    if not out:
        raise UsageError(f"{path}: no queries in the file")
    return out
