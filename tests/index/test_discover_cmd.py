"""`cartograph discover` and `cartograph index` end to end over a real signed workspace."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from indexkit import INDEX_KEY, write_workspace_cards

from cartograph.cli import main
from cartograph.workspace import Workspace


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    ws = Workspace(tmp_path_factory.mktemp("discover") / "home")
    write_workspace_cards(ws, INDEX_KEY)
    return ws.root


def run(home, *args):
    return CliRunner().invoke(main, ["--home", str(home), *args], catch_exceptions=False)


def test_discover_json_has_the_documented_shape(home):
    result = run(home, "discover", "post a message to the team Slack channel", "-k", "3", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"query", "method", "results"}
    assert data["query"] == "post a message to the team Slack channel"
    assert len(data["results"]) == 3
    first = data["results"][0]
    assert set(first) == {"server", "tool", "score", "summary", "input_schema", "example"}
    assert (first["server"], first["tool"]) == ("slack", "post_message")
    assert first["input_schema"]["properties"]["channel"]["type"] == "string"
    assert first["example"]["arguments"]
    scores = [r["score"] for r in data["results"]]
    assert scores == sorted(scores, reverse=True)


def test_discover_prints_a_table_and_honours_the_method(home):
    result = run(home, "discover", "read a file from disk", "--method", "bm25")
    assert result.exit_code == 0, result.output
    assert "read_file" in result.stdout and "bm25" in result.stdout


def test_discover_rejects_an_unknown_method(home):
    result = run(home, "discover", "x", "--method", "magic")
    assert result.exit_code == 2


def test_index_build_and_info_describe_the_index(home):
    built = run(home, "index", "build", "--json")
    assert built.exit_code == 0, built.output
    info = json.loads(built.stdout)
    assert info["tools"] == 14 and info["servers"] == 6
    shown = run(home, "index", "info", "--json")
    data = json.loads(shown.stdout)
    assert data["tools"] == 14 and data["embedder"]["dim"] == 384


def test_discover_without_cards_says_what_to_do(tmp_path):
    result = run(tmp_path / "empty", "discover", "anything")
    assert result.exit_code == 2  # no workspace there: a usage error, not a finding
    assert "cartograph bootstrap" in result.stderr
