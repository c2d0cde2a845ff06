"""The dense text drops the generator's distinctness suffixes but keeps Rift's contrast."""

from __future__ import annotations

from cartograph.index.documents import _core_summary


def test_distinctness_suffixes_and_keyword_lists_leave_the_dense_text():
    base = "Calculate area triangle base height."
    assert _core_summary(f"{base} Tool: calculate triangle area f1 bf82.") == base
    assert _core_summary(f"{base} Tool: area. Name: calc_area_2.") == base
    assert _core_summary(f"{base} Entry 2.") == base
    assert _core_summary(f"{base} About: area, triangle.") == base


def test_contrast_added_for_rift_stays():
    text = "Read file. Tool: read x. Unlike write file: bytes, offset."
    assert _core_summary(text) == "Read file. Unlike write file: bytes, offset."


def _card(tags: dict[str, list[str]]):
    """A bootstrap card of five mail tools, with the tags given per tool."""
    from cartograph.generate.bootstrap.generator import generate_card
    from cartograph.upstream.snapshot import ServerSnapshot

    tools = [
        {"name": name, "description": f"{name.replace('_', ' ')}.", "inputSchema": {}}
        for name in tags
    ]
    server = ServerSnapshot(name="ms365", tools=tools, transport="stdio", endpoint="x")
    card = generate_card(server, created_at="2026-11-30T00:00:00Z").card
    entries = [e.model_copy(update={"tags": tags[e.name]}) for e in card.tools]
    return card.model_copy(update={"tools": entries})


def test_the_dense_text_names_the_objects_most_siblings_do_not_share():
    from cartograph.index.documents import card_documents, shared_tags, tool_document

    card = _card(
        {
            "list_items": ["microsoft 365", "mail", "inbox"],
            "get_item": ["microsoft 365", "mail", "attachment"],
            "remove_item": ["microsoft 365", "mail"],
            "move_item": ["microsoft 365", "mail", "folder"],
            "find_slots": ["microsoft 365", "calendar", "meeting room"],
        }
    )
    assert card.tools[0].keywords[0] == "microsoft 365"  # the product's display name first
    assert shared_tags(card) == {"microsoft 365", "mail"}  # on more than half of the tools
    docs = {d.tool: d for d in card_documents({"ms365": card})}
    assert docs["list_items"].dense.endswith("(inbox)")
    assert docs["find_slots"].dense.endswith("(calendar, meeting room)")
    assert docs["remove_item"].dense.endswith("[ms365]")  # nothing of its own to add
    for entry in card.tools:
        doc = docs[entry.name]
        assert "microsoft 365" not in doc.dense and " mail" not in doc.dense
        assert all(tag in doc.lexical for tag in entry.tags)
        assert doc == tool_document(card, entry)  # the shared set is only computed once
    few = _card({"list_items": ["microsoft 365", "mail"], "get_item": ["microsoft 365", "mail"]})
    assert shared_tags(few) == frozenset()  # too few siblings to say what they share
    assert card_documents({"ms365": few})[0].dense.endswith("(mail)")
