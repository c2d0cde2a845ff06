"""The purpose digest: what the publisher says a tool is for, in the operator's words."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cartograph.generate.bootstrap.digest import MAX_WORDS, purpose_digest
from cartograph.generate.bootstrap.generator import generate_card
from cartograph.generate.bootstrap.tool import MAX_SHARED_RUN, publisher_grams
from cartograph.generate.text import longest_shared_run
from cartograph.upstream.snapshot import ServerSnapshot


def digest(text: str, **kw) -> str:
    return purpose_digest(text, publisher_grams([text]), run=MAX_SHARED_RUN, **kw)


def test_keeps_the_purpose_words_in_order_and_drops_the_rest():
    got = digest("Quickly create resumes and receive feedback on your resume.")
    assert got == "create resumes receive feedback resume"


def test_keeps_direction_and_negation():
    got = digest("Extract the transcript of a YouTube video from its URL. Don't use for live.")
    assert got == "Extract transcript YouTube video from URL, not for live"


def test_marketing_and_self_reference_are_dropped():
    got = digest("The best, most powerful tool that allows you to seamlessly convert PDF to Word.")
    assert "best" not in got and "powerful" not in got and "allows" not in got
    assert got.endswith("convert PDF to Word")


def test_a_shouting_clause_aimed_at_the_model_is_skipped():
    got = digest("Write or append to a file. CHUNKING IS STANDARD PRACTICE: keep chunks small.")
    assert "CHUNKING" not in got
    assert got.startswith("Write append to file")


def test_later_sentences_only_fill_a_short_digest():
    first = (
        "Search the public web for pages, news articles, images and videos about any topic, "
        "person, place or product you name."
    )
    got = digest(first + " Results are cached for an hour and sorted by date by default.")
    assert "cached" not in got
    short = digest("Get weather. Returns temperature and wind for a city.")
    assert "temperature" in short


def test_is_capped_and_empty_without_content():
    long = " ".join(f"word{i}" for i in range(100))
    assert len(digest(long).split()) <= MAX_WORDS
    assert digest("") == ""
    assert digest("It is the one that you may use.") == ""


_VOCAB = ["read", "the", "file", "from", "disk", "and", "send", "its", "text", "to", "a", "url"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_VOCAB), min_size=0, max_size=60))
def test_never_shares_a_run_of_the_no_verbatim_length(words):
    text = " ".join(words)
    assert longest_shared_run(text, digest(text)) < MAX_SHARED_RUN


def test_bootstrap_summaries_carry_the_digest():
    server = ServerSnapshot(
        name="resumes",
        tools=[
            {
                "name": "create_resume",
                "description": "Quickly create resumes and receive feedback on your resume.",
                "inputSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
            },
            {
                "name": "list_directory",
                "description": "List the entries of a directory.",
                "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
            },
        ],
    )
    card = generate_card(server, created_at="2026-01-01T00:00:00Z").card
    assert card.tools[0].summary == "Create resumes receive feedback resume."
    assert "folder" in card.tools[1].tags  # users say folder for directory
