"""Token accounting over a real bootstrapped workspace of the example fleet and the real proxy."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp.types.methods import serialize_server_result

from cartograph.cli import main
from cartograph.errors import UsageError
from cartograph.evaluate.tokenizers import load_tokenizer
from cartograph.evaluate.tokens import example_tasks, latest_snapshot
from cartograph.proxy.memory import in_memory_client, measure_tokens
from cartograph.proxy.tools import TOOLS
from cartograph.storage import load_verified
from cartograph.workspace import Workspace

pytestmark = pytest.mark.fleet


@pytest.fixture(scope="module")
def home(
    tmp_path_factory: pytest.TempPathFactory, bootstrap_example_home: Callable[[Path], Path]
) -> Path:
    return bootstrap_example_home(tmp_path_factory.mktemp("tokens") / "home")


def test_tokenizers_load_offline_and_disagree_where_vocabularies_differ() -> None:
    o200k, cl100k, claude = (
        load_tokenizer(n) for n in ("o200k_base", "cl100k_base", "claude-legacy")
    )
    assert o200k.count("hello world") == 2
    assert cl100k.count("hello world") == 2
    text = "Получить текущее время в Токио, 東京の現在時刻"
    assert len({o200k.count(text), cl100k.count(text), claude.count(text)}) > 1
    assert "anthropic 0.38.0" in claude.source


def test_unknown_tokenizer_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown tokenizer"):
        load_tokenizer("gpt-9")


def test_direct_side_counts_every_upstream_tools_list_as_sent(home: Path) -> None:
    ws = Workspace(home)
    tok = load_tokenizer("o200k_base")
    tasks = example_tasks(load_verified(ws).cards, 3)
    (report,) = anyio.run(lambda: measure_tokens(ws, tasks, tok, (5,)))
    raw = json.loads(latest_snapshot(ws).read_text(encoding="utf-8"))["servers"]
    assert set(report.per_server) == set(raw)
    for name, server in raw.items():
        # written independently of the SDK models: compact JSON, unescaped unicode
        wire = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "result": {"tools": server["tools"]}},
            separators=(",", ":"),
            ensure_ascii=False,
        )
        assert report.per_server[name] == tok.count(wire), name
    assert report.tools == sum(len(s["tools"]) for s in raw.values()) == 58

    async def tools_listed() -> list[dict[str, object]]:
        async with in_memory_client(ws) as client:
            found = await client.list_tools()
        return [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in found.tools]

    tools = anyio.run(tools_listed)
    assert [t["name"] for t in tools] == [t.name for t in TOOLS]
    assert str(tools[0]["description"]).startswith(str(TOOLS[0].description))
    assert "58 tools on 8 servers" in str(tools[0]["description"])  # the catalog brief
    # the server's runner shapes a 2025-era result with the SDK's per-version surface
    # (field order and fields of that schema), so the wire is that, not the client's model
    sent = serialize_server_result("tools/list", "2025-11-25", {"tools": tools})
    assert set(sent) == {"tools"}  # no 2026 cache hints on a 2025 wire
    listed = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "result": sent},
        separators=(",", ":"),
        ensure_ascii=False,
    )
    assert report.proxy_list == tok.count(listed)


def test_discover_costs_grow_with_k_and_the_proxy_wins_on_the_example_fleet(home: Path) -> None:
    ws = Workspace(home)
    tok = load_tokenizer("cl100k_base")
    tasks = ["get the current time in Tokyo", "read a file from disk"]
    one, five = anyio.run(lambda: measure_tokens(ws, tasks, tok, (1, 5)))
    assert [r.returned for r in one.rows] == [1, 1]
    assert [r.returned for r in five.rows] == [5, 5]
    for small, big in zip(one.rows, five.rows, strict=True):
        assert small.discover_response < big.discover_response
        assert big.proxy < big.direct
        assert big.proxy_completed == 2 * (five.proxy_list + big.task_tokens) + (
            big.discover_call + big.discover_response
        )
    assert 0 < five.per_returned_tool < five.tokens_per_tool * 2
    assert 1 < five.break_even_tools < five.tools


def test_tokens_command_reports_which_tokenizer_counted(home: Path, tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("# sample\nget the current time in Tokyo\n\nlist the git branches\n")
    result = CliRunner().invoke(
        main,
        [
            "--home",
            str(home),
            "tokens",
            "--k",
            "3",
            "--tokenizer",
            "claude-legacy",
            "--tasks",
            str(tasks),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["tokenizer"] == "claude-legacy"
    assert [t["task"] for t in data["tasks"]] == [
        "get the current time in Tokyo",
        "list the git branches",
    ]
    assert data["k"] == 3 and data["break_even_tools"] > 0
    text = CliRunner().invoke(main, ["--home", str(home), "tokens", "--sample", "2"])
    assert text.exit_code == 0, text.output
    assert "o200k_base" in text.output and "break-even" in text.output


def test_tokens_without_a_snapshot_says_how_to_get_one(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["--home", str(tmp_path / "empty"), "tokens", "--tasks", __file__]
    )
    assert result.exit_code != 0
    assert "cartograph bootstrap" in result.output


def test_discover_leaves_out_the_ranking_keywords_of_usage() -> None:
    from cartograph.index.answer import agent_usage as _agent_usage

    usage = "Needs timezone (string). Read-only. Related: iana, name, america."
    assert _agent_usage(usage) == "Needs timezone (string). Read-only."
    assert _agent_usage("Related: first. Then more.") == "Related: first. Then more."
    assert _agent_usage("Plain usage.") == "Plain usage."


def test_discover_answers_keep_schema_required_and_example(home: Path) -> None:

    async def ask() -> dict[str, object]:
        async with in_memory_client(Workspace(home)) as client:
            with anyio.fail_after(120):
                result = await client.call_tool(
                    "discover", {"task": "get the current time in Tokyo", "k": 3}
                )
        return json.loads(result.content[0].text)  # type: ignore[union-attr]

    answer = anyio.run(ask)
    tools = {(t["server"], t["tool"]): t for t in answer["tools"]}  # type: ignore[union-attr]
    hit = tools[("time", "get_current_time")]
    assert hit["input_schema"]["required"] == ["timezone"]
    assert "description" in hit["input_schema"]["properties"]["timezone"]
    assert hit["examples"] and "Related:" not in hit["usage"]
