"""The discover answer: one model, one renderer, the JSON field names agents read."""

from __future__ import annotations

import pytest
from cardkit import make_card
from pydantic import ValidationError

from cartograph.canonical import sha256_json, sha256_text
from cartograph.cards.model import Card, ToolEntry, ToolExample
from cartograph.index.answer import NO_MATCH, DiscoverAnswer, Hit, render_answer


def card_with_usage_and_examples() -> Card:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}
    entry = ToolEntry(
        name="post",
        summary="Post a message to a channel.",
        usage="Needs channel and text. Related: slack, chat, message.",
        examples=[
            ToolExample(task="say hi", arguments={"text": "hi"}),
            ToolExample(task="say hi again", arguments={"text": "hi"}),  # same arguments
            ToolExample(task="nothing", arguments={}),  # no arguments: tells nothing
            ToolExample(task="say bye", arguments={"text": "bye"}),
            ToolExample(task="say later", arguments={"text": "later"}),
        ],
        input_schema=schema,
        input_schema_hash=sha256_json(schema),
        description_hash=sha256_text("Post."),
        generator="test/1",
    )
    card = make_card("chat", 1)
    return card.model_copy(update={"tools": [entry]})


def test_the_answer_keeps_the_field_names_agents_read_and_leaves_out_empty_ones() -> None:
    cards = {"chat": card_with_usage_and_examples(), "clock": make_card("clock", 1)}
    answer = render_answer(cards, [Hit("chat", "post", 0.9), Hit("clock", "get_time_0", 0.5)])
    doc = answer.to_json()
    assert list(doc) == ["tools"]  # no note when tools were found
    post, clock = doc["tools"]
    assert list(post) == ["server", "tool", "summary", "usage", "input_schema", "examples"]
    assert post["usage"] == "Needs channel and text."  # the ranking keywords are not shown
    assert post["input_schema"] == {"type": "object"}  # "$schema" costs tokens, says nothing
    assert post["examples"] == [{"text": "hi"}, {"text": "bye"}]  # distinct, non-empty, two
    assert clock["examples"] == [{"timezone": "Asia/Tokyo"}]
    assert DiscoverAnswer.model_validate(doc) == answer


def test_hits_without_a_card_or_tool_are_left_out_and_an_empty_answer_says_what_to_do() -> None:
    cards = {"clock": make_card("clock", 1)}
    answer = render_answer(cards, [Hit("gone", "x", 1.0), Hit("clock", "no_such_tool", 0.8)])
    assert answer.to_json() == {"tools": [], "note": NO_MATCH}
    fallback = render_answer(cards, [], "ranked by keywords")
    assert fallback.note == f"ranked by keywords; {NO_MATCH}"


def test_a_misspelt_field_is_refused() -> None:
    with pytest.raises(ValidationError, match="tool"):
        DiscoverAnswer.model_validate({"tools": [{"server": "a", "tools": "b"}]})


def test_the_signed_output_schema_and_annotations_are_shown_when_the_card_has_them() -> None:
    out = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"}
    hints = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": "yes", "x": 1}
    base = make_card("weather", 2)
    rich = base.tools[0].model_copy(
        update={
            "title": "Get Weather",
            "annotations": hints,
            "output_schema": out,
            "output_schema_hash": sha256_json(out),
        }
    )
    card = base.model_copy(update={"tools": [rich, base.tools[1]]})
    doc = render_answer(
        {"weather": card}, [Hit("weather", "get_time_0", 0.9), Hit("weather", "get_time_1", 0.5)]
    ).to_json()
    shown, plain = doc["tools"]
    assert list(shown) == [
        "server",
        "tool",
        "summary",
        "usage",
        "input_schema",
        "output_schema",
        "annotations",
        "examples",
    ]
    assert shown["output_schema"] == {"type": "object"}
    # the title and the boolean hints MCP names; a hint that is not a boolean is left out
    assert shown["annotations"] == {
        "title": "Get Weather",
        "readOnlyHint": True,
        "destructiveHint": False,
    }
    assert "output_schema" not in plain and "annotations" not in plain
