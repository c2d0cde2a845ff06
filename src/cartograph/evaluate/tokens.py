"""Token accounting: what an MCP client receives with every upstream exposed, against the proxy.

Both sides are measured as the client receives them on the wire: JSON-RPC messages serialised
the way the MCP SDK's transports write them (``model_dump_json(by_alias=True,
exclude_none=True)``).

- *Direct*: one ``tools/list`` response per upstream, with the tools as recorded in the latest
  snapshot in ``<home>/snapshots/``.
- *Proxy*: the real proxy's ``tools/list`` response and, per task, its real ``discover``
  response, read through an SDK client session that the caller hands in
  (:func:`cartograph.proxy.memory.in_memory_client`: a real proxy behind the real MCP server,
  in memory); this module knows the client side only.

The completed-task view adds what the proxy costs in an extra turn: the discover call, its
response, and the context (tools/list + task) sent again. Break-even is the catalog size in
tools below which exposing everything is cheaper than that.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, types
from mcp.types.methods import serialize_server_result

from cartograph.cards.model import Card
from cartograph.errors import GatewayError, SnapshotError, UsageError
from cartograph.evaluate.tokenizers import Tokenizer
from cartograph.upstream.snapshot import Snapshot, load_snapshot
from cartograph.workspace import Workspace


def wire(message: types.JSONRPCRequest | types.JSONRPCResponse) -> str:
    """A JSON-RPC message as the SDK's transports write it."""
    return message.model_dump_json(by_alias=True, exclude_none=True)


WIRE_ERA = "2025-11-25"
"""The protocol version the counts model: the era today's clients negotiate (a 2026 result also
carries ``ttlMs``/``cacheScope``/``resultType``, which a 2025 wire drops)."""


def response(
    result: dict[str, Any] | types.Result, request_id: int = 1, method: str | None = None
) -> str:
    """The wire form of a JSON-RPC response carrying ``result``; with ``method``, shaped as
    :data:`WIRE_ERA`'s schema sends it (fields that era lacks dropped, as the SDK does)."""
    if isinstance(result, types.Result):
        result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    if method is not None:
        result = serialize_server_result(method, WIRE_ERA, result)
    return wire(types.JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result))


def discover_request(task: str, k: int, request_id: int = 2) -> str:
    """The wire form of the ``tools/call`` request an agent sends to discover."""
    params = {"name": "discover", "arguments": {"task": task, "k": k}}
    return wire(
        types.JSONRPCRequest(jsonrpc="2.0", id=request_id, method="tools/call", params=params)
    )


def latest_snapshot(ws: Workspace) -> Path:
    """The newest snapshot file in ``<home>/snapshots/`` (names sort by UTC time)."""
    files = sorted(p for p in ws.snapshots_dir.glob("*.json") if p.is_file())
    if not files:
        raise SnapshotError(f"no snapshot in {ws.snapshots_dir}: run `cartograph bootstrap` first")
    return max(files, key=lambda p: (p.stat().st_mtime, p.name))


def example_tasks(cards: Mapping[str, Card], sample: int | None = None) -> list[str]:
    """The cards' own example tasks (first per tool, sorted), thinned evenly to ``sample``."""
    tasks: list[str] = []
    for server in sorted(cards):
        for entry in sorted(cards[server].tools, key=lambda e: e.name):
            for example in entry.examples[:1]:
                if example.task.strip() and example.task not in tasks:
                    tasks.append(example.task)
    if sample is not None and 0 < sample < len(tasks):
        step = len(tasks) / sample
        tasks = [tasks[int(i * step)] for i in range(sample)]
    return tasks


def read_tasks(path: Path) -> list[str]:
    """One task a line (blank lines and ``#`` comments skipped)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read tasks: {exc}") from exc
    tasks = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not tasks:
        raise UsageError(f"{path}: no tasks in it (one task a line)")
    return tasks


@dataclass(frozen=True)
class TaskRow:
    """One task: the tokens each side costs before the agent can call a tool."""

    task: str
    task_tokens: int
    direct: int  # every upstream tools/list
    proxy: int  # proxy tools/list + discover response
    discover_call: int
    discover_response: int
    returned: int  # tools in the discover response
    direct_completed: int  # one turn: every tools/list + task
    proxy_completed: int  # two turns: (list + task) + (list + task + call + response)

    @property
    def saving(self) -> float:
        return 1.0 - self.proxy / self.direct if self.direct else 0.0


@dataclass(frozen=True)
class TokenReport:
    """Token accounting for one workspace, one k and one tokenizer."""

    tokenizer: str
    tokenizer_source: str
    k: int
    snapshot: str
    servers: int
    tools: int
    direct_list: int
    per_server: dict[str, int]
    proxy_list: int
    per_returned_tool: float
    rows: list[TaskRow]

    @property
    def tokens_per_tool(self) -> float:
        return self.direct_list / self.tools if self.tools else 0.0

    def mean(self, attr: str) -> float:
        return statistics.fmean(getattr(r, attr) for r in self.rows) if self.rows else 0.0

    @property
    def break_even_tools(self) -> float:
        """Tools below which one turn with everything exposed costs less than the proxy's two."""
        if not self.rows or not self.tools:
            return 0.0
        return (self.mean("proxy_completed") - self.mean("task_tokens")) / self.tokens_per_tool

    def to_json(self) -> dict[str, Any]:
        return {
            "tokenizer": self.tokenizer,
            "tokenizer_source": self.tokenizer_source,
            "k": self.k,
            "snapshot": self.snapshot,
            "servers": self.servers,
            "tools": self.tools,
            "direct_tools_list": self.direct_list,
            "direct_per_server": self.per_server,
            "tokens_per_tool": round(self.tokens_per_tool, 1),
            "proxy_tools_list": self.proxy_list,
            "discover_tokens_per_returned_tool": round(self.per_returned_tool, 1),
            "mean": {
                a: round(self.mean(a), 1)
                for a in ("direct", "proxy", "discover_response", "proxy_completed")
            },
            "mean_saving": round(statistics.fmean(r.saving for r in self.rows), 4)
            if self.rows
            else None,
            "break_even_tools": round(self.break_even_tools, 1),
            "tasks": [asdict(r) | {"saving": round(r.saving, 4)} for r in self.rows],
        }


def direct_tokens(snapshot: Snapshot, tok: Tokenizer) -> dict[str, int]:
    """Per upstream: tokens of its tools/list response with the tools as recorded."""
    return {
        name: tok.count(response({"tools": server.tools}))
        for name, server in sorted(snapshot.servers.items())
        if server.error is None
    }


@dataclass(frozen=True)
class DirectSide:
    """What a client receives with every upstream exposed: each server's tools/list response."""

    snapshot: Path
    per_server: dict[str, int]
    tools: int

    @property
    def total(self) -> int:
        return sum(self.per_server.values())


def direct_side(
    ws: Workspace, tasks: Sequence[str], tok: Tokenizer, snapshot_path: Path | None = None
) -> DirectSide:
    """The direct side from ``ws``'s latest snapshot (or ``snapshot_path``); refuses no tasks."""
    if not tasks:
        raise UsageError("no tasks to measure: the cards have no example tasks; pass --tasks")
    path = snapshot_path or latest_snapshot(ws)
    snapshot = load_snapshot(path)
    per_server = direct_tokens(snapshot, tok)
    tools = sum(len(s.tools) for n, s in snapshot.servers.items() if n in per_server)
    return DirectSide(path, per_server, tools)


async def measure(
    client: ClientSession,
    side: DirectSide,
    tasks: Sequence[str],
    tok: Tokenizer,
    ks: Sequence[int] = (5,),
) -> list[TokenReport]:
    """One :class:`TokenReport` per k over ``tasks``: ``side`` against the proxy that ``client``
    is a session of (the caller connects it: :func:`cartograph.proxy.memory.measure_tokens`
    does, on a real proxy in memory)."""
    direct = side.total
    with anyio.fail_after(60):
        listed = await client.list_tools()
    proxy_list = tok.count(response(listed, method="tools/list"))
    reports = []
    for k in ks:
        rows, per_tool = [], []
        for task in tasks:
            row, tool_cost = await _task_row(client, task, k, tok, direct, proxy_list)
            rows.append(row)
            if tool_cost is not None:
                per_tool.append(tool_cost)
        reports.append(
            TokenReport(
                tokenizer=tok.name,
                tokenizer_source=tok.source,
                k=k,
                snapshot=str(side.snapshot),
                servers=len(side.per_server),
                tools=side.tools,
                direct_list=direct,
                per_server=side.per_server,
                proxy_list=proxy_list,
                per_returned_tool=statistics.fmean(per_tool) if per_tool else 0.0,
                rows=rows,
            )
        )
    return reports


async def _task_row(
    client: ClientSession, task: str, k: int, tok: Tokenizer, direct: int, proxy_list: int
) -> tuple[TaskRow, float | None]:
    """One task's row, and what each returned tool cost in its discover answer (None: none)."""
    with anyio.fail_after(120):
        result = await client.call_tool("discover", {"task": task, "k": k})
    if result.is_error:
        raise GatewayError(f"discover failed for {task!r}: {_text(result)}")
    returned = _returned(result)
    d = tok.count(response(result, request_id=2, method="tools/call"))
    tool_cost = None
    if returned:
        tool_cost = (
            d - tok.count(response(_empty_like(result), request_id=2, method="tools/call"))
        ) / returned
    t = tok.count(task)
    c = tok.count(discover_request(task, k))
    row = TaskRow(
        task=task,
        task_tokens=t,
        direct=direct,
        proxy=proxy_list + d,
        discover_call=c,
        discover_response=d,
        returned=returned,
        direct_completed=direct + t,
        proxy_completed=2 * (proxy_list + t) + c + d,
    )
    return row, tool_cost


def _text(result: types.CallToolResult) -> str:
    return "".join(b.text for b in result.content if isinstance(b, types.TextContent))


def _returned(result: types.CallToolResult) -> int:
    import json

    data = json.loads(_text(result))
    return len(data.get("tools", []))


def _empty_like(result: types.CallToolResult) -> types.CallToolResult:
    """The same response with no tools: what the envelope alone costs."""
    import json

    data = json.loads(_text(result))
    data["tools"] = []
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])
