"""`cartograph eval` over a real signed workspace and query files of both shapes."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from indexkit import INDEX_KEY, write_workspace_cards

from cartograph.cli import main
from cartograph.workspace import Workspace

QUERIES = [
    {"query": "send an email to the finance team", "server": "gmail", "tool": "send_email"},
    {
        "query": "what's the weather going to be like in Denver",
        "relevant": [["weather", "get_forecast"]],
    },
    {
        "query": "show me what is in /var/log",
        "relevant": [["filesystem", "list_directory"]],
        "acceptable": [["filesystem", "read_file"]],
    },
    {
        "query": "find the code that parses dates",
        "relevant": [["github", "search_code"]],
        "relevant_equivalent": [["postgres", "query"]],
    },
]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("eval")
    ws = Workspace(root / "home")
    write_workspace_cards(ws, INDEX_KEY)
    qfile = root / "q.jsonl"
    qfile.write_text("".join(json.dumps(q) + "\n" for q in QUERIES))
    return ws.root, qfile


def run(home, *args):
    return CliRunner().invoke(main, ["--home", str(home), *args], catch_exceptions=False)


def test_eval_json_gives_every_method_side_by_side(setup):
    home, qfile = setup
    result = run(home, "eval", "--queries", str(qfile), "--json")
    assert result.exit_code == 0, result.output
    methods = json.loads(result.stdout)["methods"]
    assert set(methods) == {"hybrid", "two-stage", "flat", "bm25", "jaccard", "random"}
    for figures in methods.values():
        assert set(figures) == {"R@1", "R@3", "R@5", "MRR", "mean_rank", "n"}
        assert figures["n"] == 4
        assert 0 <= figures["R@1"] <= figures["R@3"] <= figures["R@5"] <= 1
    assert methods["hybrid"]["R@5"] == 1.0
    assert methods["random"]["R@1"] < 0.2


def test_eval_table_and_verbose_misses(setup):
    home, qfile = setup
    result = run(
        home,
        "eval",
        "--queries",
        str(qfile),
        "--method",
        "jaccard",
        "--method",
        "hybrid",
        "-k",
        "1",
        "--verbose",
    )
    assert result.exit_code == 0, result.output
    assert "jaccard" in result.stdout and "R@5" in result.stdout
    assert "two-stage" not in result.stdout


def test_a_malformed_query_file_is_a_usage_error(setup, tmp_path):
    home, _ = setup
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "x"}\n')
    result = run(home, "eval", "--queries", str(bad))
    assert result.exit_code == 2
    assert "relevant" in result.stderr


def test_eval_scores_hybrid_as_discover_ranks_it(setup, monkeypatch):
    from cartograph.index.reorder import REORDER_ENV, workspace_reorderer
    from cartograph.storage import open_index

    monkeypatch.delenv(REORDER_ENV, raising=False)
    home, qfile = setup
    index = open_index(Workspace(home))
    expected = {}
    for name, stage in (("off", None), ("on", workspace_reorderer(home, index, None))):
        index.reorderer = stage
        firsts = 0
        for q in QUERIES:
            labels = {(q["server"], q["tool"])} if "server" in q else set()
            for key in ("relevant", "acceptable", "relevant_equivalent"):
                labels |= {tuple(pair) for pair in q.get(key, [])}
            top = index.search(q["query"], k=1)[0]
            firsts += (top.server, top.tool) in labels
        expected[name] = firsts / len(QUERIES)
    for flag, name in (("--reorder", "on"), ("--no-reorder", "off")):
        result = run(home, "eval", "--queries", str(qfile), "--method", "hybrid", flag, "--json")
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["methods"]["hybrid"]["R@1"] == expected[name]
    table = run(home, "eval", "--queries", str(qfile), "--method", "hybrid").stdout
    assert "top 5 ordered by minilm-tools" in table.replace("\n", " ")
