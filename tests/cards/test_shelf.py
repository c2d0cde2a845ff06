"""The card shelf: compact in memory, and what it gives back equals what was shelved."""

from __future__ import annotations

import threading

from cardkit import FIXED_KEY, make_card
from indexkit import INDEX_KEY, signed_cards

from cartograph.cards.seal import card_version_digest, sign_card, verify_card
from cartograph.cards.shelf import CardShelf
from cartograph.trust.store import TrustStore


def test_every_card_comes_back_equal_and_still_verifies():
    cards = signed_cards(INDEX_KEY)
    shelf = CardShelf(cards)
    assert sorted(shelf) == sorted(cards) and len(shelf) == len(cards)
    for name, card in cards.items():
        back = shelf[name]
        assert back == card
        assert card_version_digest(back) == card_version_digest(card)
        assert shelf.tool_names(name) == tuple(t.name for t in card.tools)
    assert shelf.tool_count() == sum(len(c.tools) for c in cards.values())


def test_one_tool_is_read_without_the_rest():
    cards = signed_cards(INDEX_KEY)
    shelf = CardShelf(cards, cards_kept=1, tools_kept=2)
    for name, card in cards.items():
        for entry in card.tools:
            assert shelf.tool(name, entry.name) == entry
    first = next(iter(cards))
    assert shelf.tool(first, "no-such-tool") is None
    assert shelf.tool("no-such-server", "x") is None
    assert shelf.tool_names("no-such-server") == ()
    head = shelf.head(first)
    assert head is not None and head.tools == [] and head.identity == cards[first].identity
    assert shelf.head("no-such-server") is None


def test_a_repeated_tool_name_finds_the_first_entry_as_the_card_does():
    card = make_card("clock", n_tools=3)
    tools = [card.tools[0], card.tools[1].model_copy(update={"name": card.tools[0].name})]
    twice = sign_card(card.model_copy(update={"tools": tools}), FIXED_KEY)
    shelf = CardShelf({"clock": twice})
    assert shelf.tool("clock", tools[0].name) == twice.tool(tools[0].name) == tools[0]
    assert shelf["clock"] == twice


def test_only_holds_just_the_named_entries_in_the_order_asked():
    cards = signed_cards(INDEX_KEY)
    shelf = CardShelf(cards)
    name, card = max(cards.items(), key=lambda kv: len(kv[1].tools))
    wanted = [card.tools[-1].name, card.tools[0].name]
    shown = shelf.only([(name, wanted[0]), ("gone", "x"), (name, wanted[1]), (name, "nope")])
    assert list(shown) == [name]
    assert [t.name for t in shown[name].tools] == wanted
    assert shown[name].identity == card.identity


def test_readers_on_many_threads_get_equal_cards():
    cards = signed_cards(INDEX_KEY)
    shelf = CardShelf(cards, cards_kept=1, tools_kept=3)
    wrong: list[str] = []

    def read() -> None:
        for _ in range(5):
            for name, card in cards.items():
                if shelf[name] != card or shelf.tool(name, card.tools[0].name) != card.tools[0]:
                    wrong.append(name)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []


def test_every_shelved_card_still_verifies_against_its_key():
    cards = signed_cards(INDEX_KEY)
    shelf = CardShelf(cards)
    trust = TrustStore({INDEX_KEY.key_id: INDEX_KEY.public_key})
    for name in cards:
        verify_card(shelf[name], trust)  # raises if one byte of the signed content changed


def test_compact_loading_gives_the_same_cards_and_the_same_failures(tmp_path):
    import json

    from cardkit import write_card

    from cartograph.storage import open_store
    from cartograph.workspace import Workspace

    ws = Workspace(tmp_path)
    trust = TrustStore()
    trust.add(FIXED_KEY.public_key)
    for name in ("alpha", "beta", "evil", "broken"):
        write_card(ws, sign_card(make_card(name), FIXED_KEY))
    evil = ws.card_path("evil")
    data = json.loads(evil.read_text())
    data["tools"][0]["summary"] = "Sends your files elsewhere."
    evil.write_text(json.dumps(data))
    ws.card_path("broken").write_text("{not json")

    store = open_store(ws)
    full, compact = store.load_verified(trust), store.load_verified(trust, compact=True)
    assert isinstance(compact.cards, CardShelf) and not isinstance(full.cards, CardShelf)
    assert sorted(compact.cards) == sorted(full.cards) == ["alpha", "beta"]
    assert all(compact.cards[n] == full.cards[n] for n in full.cards)
    assert [(f.server, f.kind) for f in compact.failures] == [
        (f.server, f.kind) for f in full.failures
    ]
    assert {f.kind for f in compact.failures} >= {"malformed"} and len(compact.failures) == 2
