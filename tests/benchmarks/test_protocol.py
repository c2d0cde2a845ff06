"""The evaluation protocol (benchmarks/protocol.py): seeded splits and the training leak filter."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
sys.path.insert(0, str(REPO / "benchmarks"))

import protocol  # noqa: E402


def _blocked(docs: list[dict], queries: list[str]) -> protocol.Blocked:
    return protocol.Blocked(
        tool_names=frozenset(protocol.norm_name(d["tool"]) for d in docs),
        server_names=frozenset(protocol.norm_name(d["server"]) for d in docs),
        descriptions=tuple(protocol.word_set(d["description"]) for d in docs),
        queries=tuple(protocol.word_set(q) for q in queries),
    )


TEST_DOC = {
    "server": "Weather Station",
    "tool": "get_forecast",
    "description": "Return the hourly weather forecast for a city for the next five days.",
}


def test_a_renamed_copy_of_a_test_tool_is_dropped_by_its_text() -> None:
    copy = {**TEST_DOC, "server": "mirror", "tool": "hourly_outlook"}
    other = {"server": "mirror", "tool": "send_mail", "description": "Send an e-mail message."}
    out = protocol.leak_filter([copy, other], [], _blocked([TEST_DOC], []))
    assert [t["tool"] for t in out.tools] == ["send_mail"]
    assert out.dropped_by_text == 1


def test_a_test_tool_name_is_dropped_even_with_new_text() -> None:
    same_name = {"server": "x", "tool": "getForecast", "description": "Totally different words."}
    same_server = {"server": "weather-station", "tool": "ping", "description": "Check liveness."}
    out = protocol.leak_filter([same_name, same_server], [], _blocked([TEST_DOC], []))
    assert out.tools == []
    assert out.dropped_by_name == 2


def test_a_near_copy_of_a_test_query_and_queries_needing_dropped_tools_are_dropped() -> None:
    keep = {"server": "m", "tool": "send_mail", "description": "Send an e-mail message."}
    leak = {**TEST_DOC, "server": "m", "tool": "outlook"}
    queries = [
        {
            "query": "what's the weather forecast in Lisbon tomorrow?",
            "relevant": [["m", "send_mail"]],
        },
        {"query": "mail my boss the report", "relevant": [["m", "send_mail"]]},
        {"query": "forecast then mail it", "relevant": [["m", "send_mail"], ["m", "outlook"]]},
    ]
    blocked = _blocked([TEST_DOC], ["What's the weather forecast in Lisbon tomorrow"])
    out = protocol.leak_filter([keep, leak], queries, blocked)
    assert [q["query"] for q in out.queries] == ["mail my boss the report"]


def test_splits_are_seeded_and_by_plugin() -> None:
    rows = [{"query": f"q{i}", "relevant": [[f"p{i % 40}", f"p{i % 40}"]]} for i in range(400)]
    rows.append({"query": "both", "relevant": [["p0", "p0"], ["p1", "p1"], ["p2", "p2"]]})
    test = protocol.split_rows("metatool", rows, "test")
    tune = protocol.split_rows("metatool", rows, "tune")
    assert test == protocol.split_rows("metatool", list(reversed(rows)), "test")[::-1]
    test_plugins = {p for r in test for p, _ in r["relevant"]}
    tune_plugins = {p for r in tune for p, _ in r["relevant"]}
    assert test_plugins and tune_plugins and not test_plugins & tune_plugins
    assert 10 <= len(test_plugins) <= 30


def test_bfcl_same_name_variants_fall_in_one_part() -> None:
    tools = [{"server": "bfcl", "tool": f"math.factorial~{h}"} for h in ("a1", "b2", "c3")]
    parts = {protocol.part_of("bfcl", protocol.norm_name(t["tool"])) for t in tools}
    assert len(parts) == 1


needs_corpus = pytest.mark.skipif(
    not (SHARED / "corpus" / "train").is_dir(), reason="no shared corpus beside the checkout"
)


@needs_corpus
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_training_data_holds_no_test_document_or_query() -> None:
    """The real filter on the real sources most likely to overlap, checked independently: names
    exactly, text by a plain-Python Jaccard over a sample, queries against the test queries."""
    blocked = protocol.blocked_set(SHARED, REPO)
    wanted = {"restbench", "stabletoolbench", "bfcl-tune", "toolalpaca"}
    kept_tools: list[dict] = []
    kept_queries: list[dict] = []
    for source, tools, queries in protocol.training_sources(SHARED):
        if source in wanted:
            out = protocol.leak_filter(tools, queries, blocked)
            kept_tools += out.tools
            kept_queries += out.queries
    assert len(kept_tools) > 2000 and len(kept_queries) > 1500
    for t in kept_tools:
        assert protocol.norm_name(t["tool"]) not in blocked.tool_names
    rng = random.Random(0)
    for t in rng.sample(kept_tools, 100):
        words = protocol.word_set(t.get("description") or "")
        for d in blocked.descriptions:
            assert len(words & d) / max(len(words | d), 1) < protocol.NEAR_DUP, t
    blocked_q = set(blocked.queries)
    for q in rng.sample(kept_queries, 150):
        words = protocol.word_set(q["query"])
        assert words not in blocked_q
        for b in blocked.queries:
            assert len(words & b) / max(len(words | b), 1) < protocol.QUERY_NEAR_DUP


@needs_corpus
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_registry_pairs_hold_no_livemcpbench_or_fleet_tool() -> None:
    """Training pairs from the union's distractor registries: LiveMCPBench's tools (the union's
    labelled answers) and their copies, the fleet catalog and the union's tasks stay out."""
    blocked = protocol.blocked_set(SHARED, REPO, distractors=False)
    live = protocol.read_jsonl(SHARED / "corpus" / "livemcpbench" / "tools.jsonl")
    fleet = protocol.fleet_tools(SHARED / "fleet" / "catalog.json")
    assert {protocol.norm_name(t["tool"]) for t in live + fleet} <= blocked.tool_names
    union_tasks = protocol.read_jsonl(SHARED / "corpus" / "union" / "queries.jsonl")
    assert {protocol.word_set(q["query"]) for q in union_tasks} <= set(blocked.queries)
    kept = []
    for _source, tools in protocol.registry_sources(SHARED):
        kept += protocol.leak_filter(tools, [], blocked).tools
    assert len(kept) > 5000
    live_servers = {protocol.norm_name(t["server"]) for t in live}
    for t in kept:
        assert protocol.norm_name(t["tool"]) not in blocked.tool_names
        assert protocol.norm_name(t["server"]) not in live_servers
    live_words = [protocol.word_set(t["description"] or "") for t in live]
    for t in random.Random(1).sample(kept, 200):
        words = protocol.word_set(t.get("description") or "")
        for d in live_words:
            if len(d) > 2:
                assert len(words & d) / max(len(words | d), 1) < protocol.NEAR_DUP, t


def test_the_fleet_heldout_set_splits_by_server_into_two_disjoint_parts() -> None:
    rows = protocol.read_jsonl(REPO / "benchmarks" / "queries" / protocol.HELDOUT)
    tune, test = protocol.heldout_rows(rows, "tune"), protocol.heldout_rows(rows, "test")
    assert len(tune) >= 40 and len(test) >= 40
    assert len(tune) + len(test) == len(rows)  # one relevant tool each: no task straddles
    tune_servers = {s for r in tune for s, _ in r["relevant"]}
    test_servers = {s for r in test for s, _ in r["relevant"]}
    assert tune_servers and test_servers and tune_servers.isdisjoint(test_servers)
    assert protocol.heldout_rows(rows, "tune") == tune  # seeded, not re-drawn


@pytest.mark.skipif(
    not (SHARED / "fleet" / "catalog.json").is_file(), reason="no shared fleet beside the checkout"
)
def test_every_fleet_heldout_label_names_a_catalog_tool() -> None:
    tools = protocol.fleet_tools(SHARED / "fleet" / "catalog.json")
    have = {(t["server"], t["tool"]) for t in tools}
    for r in protocol.read_jsonl(REPO / "benchmarks" / "queries" / protocol.HELDOUT):
        assert r["query"].strip(), r["id"]
        for pair in [*r["relevant"], *r.get("acceptable", [])]:
            assert tuple(pair) in have, (r["id"], pair)


@pytest.mark.skipif(
    not (SHARED / "fleet" / "catalog.json").is_file(), reason="no shared fleet beside the checkout"
)
def test_the_second_heldout_set_keeps_to_tune_servers_and_new_tools() -> None:
    """Written for choosing only: its servers are those of fleet-heldout-tune (so the held-out
    test part's servers stay unseen), its tools none that the dev or first held-out set asks."""
    queries = REPO / "benchmarks" / "queries"
    rows = protocol.read_jsonl(queries / protocol.HELDOUT2)
    assert len(rows) >= 60
    have = {
        (t["server"], t["tool"]) for t in protocol.fleet_tools(SHARED / "fleet" / "catalog.json")
    }
    asked_before = {
        tuple(pair)
        for name in ("fleet_dev.jsonl", protocol.HELDOUT)
        for r in protocol.read_jsonl(queries / name)
        for pair in r.get("relevant") or []
    }
    for r in rows:
        assert r["query"].strip() and len(r["relevant"]) == 1, r["id"]
        ((server, tool),) = r["relevant"]
        assert protocol.part_of("fleet-heldout", server) == "tune", r["id"]
        assert (server, tool) not in asked_before, r["id"]
        for pair in [*r["relevant"], *r.get("acceptable", [])]:
            assert tuple(pair) in have, (r["id"], pair)
    assert len({r["id"] for r in rows}) == len(rows)
