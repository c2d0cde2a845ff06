"""The operator's sentence (generate/bootstrap/prose.py) and the no-verbatim rewriter
(generate/bootstrap/rewrite.py) on the shapes real descriptions take."""

from __future__ import annotations

import pytest

from cartograph.generate.bootstrap.prose import purpose_of
from cartograph.generate.bootstrap.rewrite import break_runs, first_clause
from cartograph.generate.bootstrap.runs import publisher_grams
from cartograph.generate.text import longest_shared_run


@pytest.mark.parametrize(
    ("description", "sentence"),
    [
        ("Retrieves a list of billing groups.", "Retrieve a list of billing groups."),
        (
            "Searches for code and returns matching files.",
            "Search for code and return matching files.",
        ),
        ("This tool allows you to create a new record.", "Create a new record."),
        ("Use this tool to get the weather.", "Get the weather."),
        ("A tool for listing open pull requests.", "List open pull requests."),
        ("Returns statistics of a database", "Get statistics of a database."),
        ("Provides information about a city.", "Get information about a city."),
        ("Get current time in a timezone", "Get the current time in a timezone."),
        ("**PURPOSE:** Discover pricing filters.", "Discover pricing filters."),
        ("🎯 Get your profile details.", "Get the profile details."),
        ("dbt run executes compiled models.", "Execute compiled models."),
        ("Manually initiate the OAuth flow.", "Initiate the OAuth flow."),
        ("Search the docs for relevant\ninformation.", "Search the docs for relevant information."),
    ],
)
def test_a_description_becomes_an_imperative_sentence(description: str, sentence: str) -> None:
    assert purpose_of(description, frozenset({"dbt", "run"})).sentence == sentence


def test_a_name_that_is_the_whole_order_is_not_taken_for_its_subject() -> None:
    names = frozenset({"linear", "subscribe", "to", "issue"})
    # "updates" is the object here, not the verb of a subject "Subscribe to issue"
    assert purpose_of("Subscribe to issue updates", names).sentence == "Subscribe to issue updates."
    # "stores" is the plural of a name word here, not a verb after the subject "List key-value"
    apify = frozenset({"get", "key", "value", "store", "list"})
    owned = purpose_of("List key-value stores owned by the authenticated user.", apify).sentence
    assert owned.startswith("List key-value stores") or owned.startswith("Show key-value stores")
    groups = frozenset({"list", "contact", "groups", "google", "workspace"})
    labels = "List contact groups (labels) for the user."
    assert purpose_of(labels, groups).sentence == labels
    views = frozenset({"linear", "get", "favorite", "views"})
    assert purpose_of("Get favorite Linear views.", views).sentence == "Get favorite Linear views."
    cron = frozenset({"cloudflare", "cron", "list"})
    listed = "List CRON triggers for a Worker."
    assert purpose_of(listed, cron).sentence == listed  # an order, not a subject "List CRON"
    heading = "get_lineage_dev\n\nRetrieves the lineage of a dbt resource."
    dbt = frozenset({"get", "lineage", "dev", "dbt"})
    assert purpose_of(heading, dbt).sentence == "Retrieve the lineage of a dbt resource."
    for text in ("", "!", "Subscribe. ?"):  # a sentence of punctuation alone does not break it
        assert purpose_of(text, names).verb in (None, "subscribe")


def test_notes_returns_and_caller_rules_are_not_the_purpose() -> None:
    purpose = purpose_of(
        "Create relations between entities. Relations should be in active voice. "
        "Returns the created relations."
    )
    assert purpose.sentence == "Create relations between entities."
    assert purpose.extra == ""
    notes = purpose_of("Note: needs a token. Lists all boards.")
    assert notes.sentence == "List all boards."


def test_a_short_sentence_may_take_the_next_one_and_deprecation_is_kept() -> None:
    purpose = purpose_of("Read a file. Handles text encodings and reports errors.")
    assert purpose.extra == "It handles text encodings and reports errors."
    old = purpose_of("Read a file as text. DEPRECATED: use read_text_file instead.")
    assert old.deprecated and old.extra == ""
    assert not purpose_of("Lists fields, including deprecated ones.").deprecated


def test_a_heading_without_a_verb_is_joined_to_what_follows() -> None:
    purpose = purpose_of("Key Vault operations\nCommands for managing Azure Key Vault resources.")
    assert purpose.verb is None
    assert purpose.sentence.startswith("Key Vault operations: commands for managing")


def test_break_runs_edits_words_not_meaning() -> None:
    text = "Create multiple new relations between entities in the knowledge graph"
    grams = publisher_grams([text])
    out = break_runs(text + ".", grams, 8)
    assert out is not None and longest_shared_run(text, out) < 8
    assert "relations between entities" in out and "knowledge graph" in out
    fronted = break_runs(
        "Search for papers on arXiv with advanced filtering and sorting.",
        publisher_grams(["Search for papers on arXiv with advanced filtering and sorting"]),
        8,
    )
    assert fronted == "With advanced filtering and sorting, search for papers on arXiv."


def test_break_runs_never_leaves_out_content_words_unless_lenient() -> None:
    text = "Local health risk guidance COVID Flu RSV cases"
    grams = publisher_grams([text])
    assert break_runs(text + ".", grams, 8) is None
    lenient = break_runs(text + ".", grams, 8, lenient=True)
    assert lenient is not None and longest_shared_run(text, lenient) < 8


def test_names_and_capitalised_words_are_not_swapped() -> None:
    text = "Get detailed pricing information from the AWS Price List API with filters"
    out = break_runs(text + ".", publisher_grams([text]), 8)
    assert out is not None and "Price List API" in out


def test_first_clause() -> None:
    assert first_clause("Interact with PDF files, provide page references.") == (
        "Interact with PDF files."
    )
    assert first_clause("Hover an element.") == ""


@pytest.mark.parametrize(
    ("description", "sentence"),
    [
        # an opening verb the verb list lacks is not stacked under the name's verb
        (
            "Demonstrates a long running operation with progress updates.",
            "Demonstrate a long running operation with progress updates.",
        ),
        # a relative clause keeps its own verbs' agreement
        (
            "Simulates an operation that gathers, analyzes, and synthesizes information.",
            "Simulate an operation that gathers, analyzes, and synthesizes information.",
        ),
        # a placeholder taken out leaves no end hanging ("given as <revision>:<path>")
        (
            "Shows the contents of a commit, or of a file or directory given as <revision>:<path>",
            "Show the contents of a commit.",
        ),
        # but a list's comma is not an end to cut back to
        (
            "Gets the boards, docs and folders in a workspace and which folder they are in",
            "Get the boards, docs and folders in a workspace and which folder they are in.",
        ),
        (
            "The docs command is responsible for generating the documentation website.",
            "Generate the documentation website.",
        ),
    ],
)
def test_openings_and_endings_read_as_sentences(description: str, sentence: str) -> None:
    assert purpose_of(description).sentence == sentence


def test_a_passive_second_sentence_is_not_made_an_order() -> None:
    """ "Each file's content is returned ..." once became "Be returned with its path"."""
    purpose = purpose_of(
        "Read the contents of multiple files simultaneously. Each file's content is returned "
        "with its path as a reference."
    )
    assert purpose.sentence == "Read the contents of multiple files simultaneously."
    assert not purpose.extra.startswith("Be ")


def test_fronting_a_phrase_takes_along_its_bound_word() -> None:
    publisher = "Returns structured content along with an output schema for client data validation"
    grams = publisher_grams([publisher])
    out = break_runs(
        "Get structured content along with an output schema for client data validation.", grams, 8
    )
    assert out is not None and not out.rstrip(".").endswith("along")
    assert longest_shared_run(publisher, out) < 8


def test_a_last_resort_ends_at_an_asides_comma_rather_than_dropping_a_small_word() -> None:
    publisher = "Returns all environment variables, helpful for debugging MCP server configuration"
    grams = publisher_grams([publisher])
    text = "Get all environment variables, helpful for debugging MCP server configuration."
    out = break_runs(text, grams, 8, lenient=True)
    assert out == "Get all the environment variables."
    listed = "Fetch boards by name, project key, or board type in the current Jira site."
    kept = break_runs(
        listed, publisher_grams([listed.replace("Fetch", "Fetches")]), 8, lenient=True
    )
    assert kept is not None and "type" in kept  # a list's comma is not cut at


def test_what_a_tool_suits_reads_as_description_in_the_operators_voice() -> None:
    tail = "This tool is perfect for understanding file characteristics without reading it."
    assert purpose_of(f"Retrieve metadata about a file. {tail}").extra == (
        "It helps with understanding file characteristics without reading it."
    )
    assert purpose_of("Lists files. Ideal for large folders.").extra == "It suits large folders."
    useful = purpose_of("Runs SQL. Useful for debugging data in your dbt project.").extra
    assert useful == "It helps with debugging data in the dbt project."


@pytest.mark.parametrize(
    ("description", "sentence"),
    [
        (
            "Fetches a URL from the internet and optionally extracts its contents as markdown.",
            "Fetch a URL from the internet and optionally extract its contents as markdown.",
        ),
        (
            "Generate images using EverArt Models and returns a clickable link to the image.",
            "Generate images using EverArt Models and return a clickable link to the image.",
        ),
        (
            "Lists issues and comments for a repository.",
            "List issues and comments for a repository.",
        ),
        ("Creates users, groups and roles.", "Create users, groups and roles."),
        ("Generate a report and comments.", "Generate a report and comments."),
    ],
)
def test_verbs_joined_to_the_order_agree_with_it_and_listed_nouns_stay(
    description: str, sentence: str
) -> None:
    assert purpose_of(description, frozenset()).sentence == sentence


def test_a_plural_subject_of_a_second_sentence_is_not_made_it() -> None:
    purpose = purpose_of(
        "Perform a search with the provided query DSL. Highlights are always enabled.",
        frozenset(),
    )
    assert purpose.extra == "Highlights are always enabled."


def test_based_and_like_are_swapped_only_where_the_swap_reads() -> None:
    based = "Render a JavaScript based diagram of the flow in your project quickly"
    out = break_runs(based + ".", publisher_grams([based]), 8)
    assert out is not None and "depending" not in out
    like = "Get logs from Kubernetes resources like pods, deployments, or jobs"
    assert "such as pods" in (break_runs(like + ".", publisher_grams([like]), 8) or "")
    named = "Replace text in the cells of a sheet, like Excel's Replace All"
    assert "such as" not in (break_runs(named + ".", publisher_grams([named]), 8) or "")


@pytest.mark.parametrize(
    ("word", "base"),
    [
        ("Rebases", "Rebase"),
        ("Pushes", "Push"),
        ("Copies", "Copy"),
        ("Finalizes", "Finalize"),
        ("Buzzes", "Buzz"),
        ("files", "file"),
        ("status", "status"),
        ("access", "access"),
    ],
)
def test_drop_s_takes_off_only_what_an_inflection_added(word, base):
    from cartograph.generate.bootstrap.phrasing import drop_s

    assert drop_s(word) == base


def test_an_order_in_an_unknown_verb_ending_in_izes_keeps_its_e():
    from cartograph.generate.bootstrap.generator import generate_card
    from cartograph.upstream.snapshot import ServerSnapshot

    tool = {"name": "finalize_invoice", "description": "Finalizes an invoice.", "inputSchema": {}}
    card = generate_card(
        ServerSnapshot(name="billing", tools=[tool]), created_at="2026-01-01T00:00:00Z"
    ).card
    assert card.tools[0].summary == "Finalize an invoice."  # was "Finaliz an invoice."
