"""Layers 2 and 3 as pure functions: queries, margins, risk grading, tokens, diagnosis."""

from __future__ import annotations

import numpy as np
import pytest

from cartograph.rift.baselines import jaccard_edges, jaccard_groups, mean_pairwise_jaccard
from cartograph.rift.diagnose import REGENERATE, diagnose, jaccard, tokens
from cartograph.rift.margin import (
    CohesionThresholds,
    MarginThresholds,
    Risk,
    cosine_margins,
    row_margin,
    score_margins,
)
from cartograph.rift.queries import QueryOptions, synthetic_query, task_query, words

ISSUE_SCHEMA = {
    "type": "object",
    "properties": {
        "owner": {"type": "string", "description": "Repository owner. Required."},
        "repo": {"type": "string"},
        "issueNumber": {"type": "integer"},
        "state": {"type": "string", "enum": ["open", "closed"]},
    },
    "required": ["owner", "repo", "issueNumber"],
}


SCHEMA_STYLE = QueryOptions(style="schema")


def test_task_query_reads_like_a_request_with_example_values() -> None:
    q = synthetic_query("getIssueComments", ISSUE_SCHEMA)
    assert q == "get issue comments for owner octocat, repo example-project and issue number 1"
    times = {
        "type": "object",
        "properties": {
            "source_timezone": {"type": "string"},
            "time": {"type": "string", "description": "Time in 24-hour format (HH:MM)"},
            "target_timezone": {"type": "string"},
        },
        "required": ["source_timezone", "time", "target_timezone"],
    }
    assert synthetic_query("convert_time", times) == (
        "convert time for source timezone Europe/Paris, time 14:30 and target timezone Asia/Tokyo"
    )


def test_task_query_drops_placeholder_values_and_names_optional_arguments() -> None:
    schema = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
    assert task_query("get_thing", schema) == "get thing for id"  # "example-id" says nothing
    optional = {"type": "object", "properties": {"namespace": {"type": "string"}}}
    assert task_query("pods_list", optional) == "pods list with namespace"


def test_queries_never_read_the_tool_description() -> None:
    described = {**ISSUE_SCHEMA, "description": "Fetches the comments of an issue"}
    for opts in (QueryOptions(), SCHEMA_STYLE):
        assert "Fetches" not in synthetic_query("get_issue", described, opts)


def test_schema_query_is_built_from_name_and_arguments_required_first() -> None:
    q = synthetic_query("getIssueComments", ISSUE_SCHEMA, SCHEMA_STYLE)
    assert q == "get issue comments by owner, repo, issue number optionally state"


def test_query_with_glosses_reads_argument_descriptions_and_enums() -> None:
    opts = QueryOptions(style="schema", max_glosses=1)
    q = synthetic_query("get_issue", ISSUE_SCHEMA, opts)
    assert q.endswith("; owner: Repository owner")  # arguments without a description add none
    q2 = synthetic_query("get_issue", ISSUE_SCHEMA, QueryOptions(style="schema", max_glosses=2))
    assert q2.endswith("; owner: Repository owner; state: open, closed")


def test_query_without_schema_is_the_name_in_words() -> None:
    assert synthetic_query("list-all_OneNote-sections", None) == "list all one note sections"
    assert words("HTTPServerURL") == ["http", "server", "url"]


def test_margin_is_own_score_minus_best_cluster_mate() -> None:
    vectors = np.eye(3, dtype=np.float32)
    # query 0 scores tool 0 at 0.6 and tool 1 at 0.8: tool 1 wins by 0.2
    queries = np.array([[0.6, 0.8, 0.0], [0.0, 1.0, 0.0]], dtype=np.float32)
    got = cosine_margins(queries, vectors, (0, 1))
    assert got[0].margin == pytest.approx(-0.2, abs=1e-6) and got[0].rival == 1
    assert got[1].margin == pytest.approx(1.0, abs=1e-6) and got[1].rival == 0


def test_catalog_scope_lets_a_tool_outside_the_cluster_be_the_rival() -> None:
    vectors = np.eye(3, dtype=np.float32)
    queries = np.array([[0.7, 0.1, 0.7], [0.1, 0.9, 0.0]], dtype=np.float32)
    in_cluster = cosine_margins(queries, vectors, (0, 1))
    in_catalog = cosine_margins(queries, vectors, (0, 1), "catalog")
    assert in_cluster[0].margin == pytest.approx(0.6, abs=1e-6)
    assert in_catalog[0].margin == pytest.approx(0.0, abs=1e-6) and in_catalog[0].rival == 2


def test_a_substitute_is_not_a_rival_and_a_tool_with_only_substitutes_has_none() -> None:
    # rows: scores of tools 0, 1, 2 for the queries of members 0, 1 and 2
    scores = np.array([[0.5, 0.9, 0.4], [0.2, 0.8, 0.1], [0.1, 0.2, 0.9]])
    plain = score_margins(scores, (0, 1, 2))
    assert plain[0].margin == pytest.approx(-0.4) and plain[0].rival == 1
    apart = score_margins(scores, (0, 1, 2), exclude={(0, 1), (1, 0)})
    assert apart[0].margin == pytest.approx(0.1) and apart[0].rival == 2
    alone = row_margin(scores[0, :2], 0, (0, 1), exclude={(0, 1), (1, 0)})
    assert alone.rival == -1 and alone.margin == float("inf")


@pytest.mark.parametrize(
    ("margin", "risk"),
    [
        (-0.3, Risk.HIGH),
        (0.0999, Risk.HIGH),
        (0.10, Risk.MEDIUM),
        (0.1999, Risk.MEDIUM),
        (0.2, Risk.LOW),
    ],
)
def test_risk_follows_the_paper_thresholds(margin: float, risk: Risk) -> None:
    assert MarginThresholds().grade(margin) is risk


def test_cohesion_grading_for_the_no_margin_ablation() -> None:
    grade = CohesionThresholds(high=0.9, medium=0.8).grade
    assert (grade(0.95), grade(0.85), grade(0.7)) == (Risk.HIGH, Risk.MEDIUM, Risk.LOW)


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


def test_jaccard_edges_match_brute_force() -> None:
    rng = np.random.default_rng(0)
    vocab = [f"w{i}" for i in range(30)]
    sets = [frozenset(rng.choice(vocab, size=rng.integers(2, 8), replace=False)) for _ in range(80)]
    want = {
        (i, j): jaccard(sets[i], sets[j])
        for i in range(80)
        for j in range(i + 1, 80)
        if jaccard(sets[i], sets[j]) > 0.25
    }
    rows, cols, vals = jaccard_edges(sets, 0.25, block=7)
    got = {(int(i), int(j)): float(v) for i, j, v in zip(rows, cols, vals, strict=True)}
    assert got.keys() == want.keys()
    for key, value in want.items():
        assert got[key] == pytest.approx(value, abs=1e-6)


def test_jaccard_groups_are_components_with_their_mean_jaccard() -> None:
    sets = [frozenset("ab"), frozenset("abc"), frozenset("xyz"), frozenset("xy"), frozenset("q")]
    groups = jaccard_groups(sets, 0.25)
    assert sorted(m for m, _ in groups) == [(0, 1), (2, 3)]
    assert dict(groups)[(0, 1)] == pytest.approx(mean_pairwise_jaccard([sets[0], sets[1]]))


def test_mean_pairwise_jaccard_matches_brute_force_whatever_the_block() -> None:
    rng = np.random.default_rng(1)
    vocab = [f"w{i}" for i in range(25)]
    sets = [frozenset(rng.choice(vocab, size=rng.integers(1, 6), replace=False)) for _ in range(40)]
    pairs = [jaccard(a, b) for i, a in enumerate(sets) for j, b in enumerate(sets) if i != j]
    for block in (1, 7, 100):
        assert mean_pairwise_jaccard(sets, block=block) == pytest.approx(np.mean(pairs), abs=1e-6)


def test_discover_margins_without_discovers_ranking_is_a_usage_error() -> None:
    from cartograph.errors import UsageError
    from cartograph.rift import RiftConfig, RiftTool, analyze

    tools = [RiftTool("s", "a", "A."), RiftTool("s", "b", "B.")]
    vectors = np.array([[1.0, 0.0], [0.99, 0.141]], dtype=np.float32)

    def embed(texts: list[str]) -> np.ndarray:
        return np.tile(vectors[:1], (len(texts), 1))

    with pytest.raises(UsageError, match="discover"):
        analyze(tools, vectors, embed, RiftConfig())
    report = analyze(tools, vectors, embed, RiftConfig(margin_score="cosine"))
    assert report.summary.clusters == 1 and report.clusters[0].margins is not None
