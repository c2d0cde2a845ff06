"""scripts/reranker_lists.py: the reranker's training lists, mined from discover's stage one."""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO / "scripts"))

from reranker_lists import source_lists  # noqa: E402

from cartograph.index.embedders import load_embedder  # noqa: E402
from cartograph.index.tool_index import ToolIndex  # noqa: E402
from registry_pairs import bootstrap_cards  # noqa: E402

TOOLS = [
    ("notes", "create_note", "Create a new note with a title and body."),
    ("notes", "delete_note", "Delete a note by its id."),
    ("notes", "list_notes", "List every note in a notebook."),
    ("notes", "search_notes", "Search notes by text."),
    ("weather", "get_forecast", "Get the weather forecast for a city."),
    ("weather", "get_alerts", "Get active weather alerts for a region."),
    ("mail", "send_email", "Send an email message to recipients."),
    ("mail", "list_inbox", "List messages in the inbox."),
    ("backup-notes", "create_note", "Create a note in the backup notebook."),
    ("calendar", "create_event", "Create a calendar event."),
]
QUERIES = [
    {"query": "write down a new note about the meeting", "relevant": [["notes", "create_note"]]},
    {"query": "will it rain in Paris tomorrow", "relevant": [["weather", "get_forecast"]]},
    {"query": "email the report to Bob", "relevant": [["mail", "send_email"]]},
]


def _args(**over) -> argparse.Namespace:
    base = {"hard": 3, "wide": 2, "depth": 8, "per_tool": 8}
    return argparse.Namespace(**{**base, **over})


def _tools() -> list[dict]:
    return [{"server": s, "tool": t, "description": d} for s, t, d in TOOLS]


def test_lists_hold_stage_ones_head_and_never_a_relevant_or_same_named_tool() -> None:
    embedder = load_embedder("minilm-int8")
    rows, stats = source_lists("toy", _tools(), QUERIES, _args(), random.Random(0), embedder)
    assert stats["lists"] == len(rows) == 3
    index = ToolIndex.build(bootstrap_cards(_tools()), embedder)
    text = {index.documents[i].dense: key for i, key in enumerate(index.tool_ids)}
    for row in rows:
        query = next(q for q in QUERIES if q["query"] == row["query"])
        relevant = tuple(query["relevant"][0])
        assert text[row["positive"]] == relevant
        negatives = [text[n] for n in row["negatives"]]
        assert len(negatives) == 5 and len(set(negatives)) == 5
        assert relevant not in negatives
        assert all(tool != relevant[1] for _server, tool in negatives)  # no same-named copy
        order = np.argsort(-index.scores(row["query"], "hybrid"), kind="stable").tolist()
        fine = [
            index.tool_ids[j]
            for j in order[:8]
            if index.tool_ids[j] != relevant and index.tool_ids[j][1] != relevant[1]
        ]
        assert negatives[:3] == fine[:3]  # the hard ones: stage one's head, in order
        assert set(negatives[3:]) <= set(fine[3:])  # the wide ones: from below them
        assert row["positive_rank"] == order.index(index.tool_ids.index(relevant))


def test_a_tool_gets_at_most_per_tool_lists() -> None:
    queries = [
        {"query": f"add a note number {i}", "relevant": [["notes", "create_note"]]}
        for i in range(5)
    ]
    rows, _ = source_lists(
        "toy", _tools(), queries, _args(per_tool=2), random.Random(0), load_embedder("minilm-int8")
    )
    assert len(rows) == 2
