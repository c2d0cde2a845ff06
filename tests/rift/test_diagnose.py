"""Layer 3's token diagnosis: distinct words, regeneration advice, argument suggestions."""

from __future__ import annotations

from cartograph.rift.diagnose import REGENERATE, diagnose, tokens


def test_tokens_drop_stop_words_case_and_single_letters() -> None:
    assert tokens("Get the Issue for a repo, via the MCP tool: x 42") == {
        "get",
        "issue",
        "repo",
        "42",
    }


def test_identical_summaries_need_regeneration() -> None:
    d = diagnose(
        ["read_file", "read_text_file"],
        ["Read a file from disk.", "Read the file from the disk."],
        [{}, {}],
    )
    assert d.diagnosis == REGENERATE
    assert d.regenerate == ("read_file", "read_text_file")
    assert d.shared == ("disk", "file", "read")
    assert d.distinct == {"read_file": (), "read_text_file": ()}


def test_one_member_without_distinct_words_is_enough_to_regenerate() -> None:
    d = diagnose(["a", "b"], ["List issues.", "List issues in a milestone."], [{}, {}])
    assert d.diagnosis == REGENERATE and d.regenerate == ("a",)
    assert d.distinct["b"] == ("milestone",)


def test_suggestion_names_the_argument_only_one_member_takes() -> None:
    d = diagnose(
        ["list_issues", "get_issue"],
        ["List issues of a repository.", "Fetch one issue by number."],
        [{"properties": {"owner": {}, "repo": {}}}, {"properties": {"owner": {}, "number": {}}}],
    )
    assert d.diagnosis.startswith("Make explicit")
    assert "list_issues: say it takes repo" in d.diagnosis
    assert "get_issue: say it takes number" in d.diagnosis
    assert d.shared == ("issue",) or d.shared == ()
