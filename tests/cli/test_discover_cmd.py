"""`cartograph discover` and `cartograph index` end to end over a real signed workspace."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from indexkit import INDEX_KEY, write_workspace_cards

from cartograph.cli import main
from cartograph.index.answer import DiscoverAnswer, render_answer
from cartograph.index.reorder import REORDER_ENV, workspace_reorderer
from cartograph.storage import load_verified, open_index
from cartograph.workspace import Workspace


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    ws = Workspace(tmp_path_factory.mktemp("discover") / "home")
    write_workspace_cards(ws, INDEX_KEY)
    return ws.root


def run(home, *args):
    return CliRunner().invoke(main, ["--home", str(home), *args], catch_exceptions=False)


def test_discover_json_is_the_answer_the_proxy_gives(home, monkeypatch):
    monkeypatch.delenv(REORDER_ENV, raising=False)
    result = run(home, "discover", "post a message to the team Slack channel", "-k", "3", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"tools"}
    assert len(data["tools"]) == 3
    first = data["tools"][0]
    assert set(first) <= {"server", "tool", "summary", "usage", "input_schema", "examples"}
    assert {"server", "tool", "summary", "input_schema", "examples"} <= set(first)
    assert (first["server"], first["tool"]) == ("slack", "post_message")
    assert first["input_schema"]["properties"]["channel"]["type"] == "string"
    assert "$schema" not in first["input_schema"]
    assert first["examples"][0]
    ws = Workspace(home)
    cards = load_verified(ws).cards
    index = open_index(ws)
    index.reorderer = workspace_reorderer(ws.root, index, None)
    assert index.reorderer is not None  # on by default
    hits = index.search("post a message to the team Slack channel", k=3)
    assert data == render_answer(cards, hits).to_json()  # one renderer for CLI and proxy
    assert DiscoverAnswer.model_validate(data).tools[0].tool == "post_message"


def test_discover_prints_a_table_and_honours_the_method(home):
    result = run(home, "discover", "read a file from disk", "--method", "bm25")
    assert result.exit_code == 0, result.output
    assert "read_file" in result.stdout and "bm25" in result.stdout


def test_discover_rejects_an_unknown_method(home):
    result = run(home, "discover", "x", "--method", "magic")
    assert result.exit_code == 2


def test_index_build_and_info_describe_the_index(home, monkeypatch):
    monkeypatch.delenv(REORDER_ENV, raising=False)
    built = run(home, "index", "build", "--json")
    assert built.exit_code == 0, built.output
    info = json.loads(built.stdout)
    assert info["tools"] == 14 and info["servers"] == 6
    assert info["reorder"].startswith("cartograph/minilm-tools@")  # its vectors made now
    assert info["seconds"] >= info["build_seconds"]
    assert (home / "index-reorder" / "vectors.npy").is_file()
    shown = run(home, "index", "info", "--json")
    data = json.loads(shown.stdout)
    assert data["tools"] == 14 and data["embedder"]["dim"] == 384


def test_discover_without_cards_says_what_to_do(tmp_path):
    result = run(tmp_path / "empty", "discover", "anything")
    assert result.exit_code == 2  # no workspace there: a usage error, not a finding
    assert "cartograph bootstrap" in result.stderr


def test_rerank_flag_and_setting(home, monkeypatch):
    from cartograph.index.rerank import RERANK_DEPTH, RERANK_ENV

    monkeypatch.delenv(RERANK_ENV, raising=False)
    task = "post a message to the team Slack channel"
    plain = json.loads(run(home, "discover", task, "-k", "3", "--json").stdout)
    table = run(home, "discover", task, "-k", "3", "--rerank")
    assert table.exit_code == 0, table.output
    assert "hybrid + rerank" in table.stdout
    reranked = json.loads(run(home, "discover", task, "-k", "3", "--rerank", "--json").stdout)
    depth = {(h.server, h.tool) for h in open_index(Workspace(home)).search(task, RERANK_DEPTH)}
    assert {(t["server"], t["tool"]) for t in reranked["tools"]} <= depth
    config = Workspace(home).config_file
    saved = config.read_text() if config.is_file() else None
    try:
        config.write_text(json.dumps({"rerank": True}))
        assert "+ rerank" in run(home, "discover", task, "-k", "3").stdout
        off = json.loads(run(home, "discover", task, "-k", "3", "--no-rerank", "--json").stdout)
        assert off == plain
    finally:
        config.unlink() if saved is None else config.write_text(saved)


def test_explain_gives_each_channels_term_and_they_add_up_to_the_score(home):
    task = "post a message to the team Slack channel"
    result = run(home, "discover", task, "-k", "3", "--explain", "--json", "--no-reorder")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    hits = open_index(Workspace(home)).search(task, k=3)
    assert list(data["explain"]) == [f"{h.server}/{h.tool}" for h in hits]
    for hit in hits:
        terms = data["explain"][f"{hit.server}/{hit.tool}"]
        assert {"dense", "bm25", "rank", "coverage", "action"} <= set(terms)
        assert "trained" not in terms
        assert sum(terms.values()) == pytest.approx(hit.score, abs=0.01)
    assert data["explain"]["slack/post_message"]["action"] > 0  # "post a" asks to create
    table = run(home, "discover", task, "-k", "2", "--explain")
    assert "action +" in table.stdout and "dense +" in table.stdout


def test_explain_with_a_single_channel_method_says_there_is_nothing_to_split(home):
    result = run(home, "discover", "read a file", "--method", "bm25", "--explain", "--json")
    assert result.exit_code == 0, result.output
    assert "explain" not in json.loads(result.stdout)
    assert "no channels to show" in result.stderr


def test_reorder_is_on_by_default_and_orders_the_top_five_by_the_trained_score(home, monkeypatch):
    monkeypatch.delenv(REORDER_ENV, raising=False)
    task = "list the pull requests of our GitHub repository"
    table = run(home, "discover", task, "-k", "5")
    assert table.exit_code == 0, table.output
    assert "top 5 ordered by minilm-tools" in table.stdout
    assert "stage-1 score" in table.stdout  # the scores shown are not what ordered the rows
    data = json.loads(run(home, "discover", task, "-k", "5", "--explain", "--json").stdout)
    trained = [terms["trained"] for terms in data["explain"].values()]
    assert trained == sorted(trained, reverse=True)
    for terms in data["explain"].values():  # the channels still add up to stage one's score
        assert set(terms) >= {"dense", "bm25", "trained"}
    off = json.loads(run(home, "discover", task, "-k", "5", "--no-reorder", "--json").stdout)
    on = json.loads(run(home, "discover", task, "-k", "5", "--json").stdout)
    assert {t["tool"] for t in off["tools"]} == {t["tool"] for t in on["tools"]}
    plain = run(home, "discover", task, "--no-reorder").stdout
    assert "top 5 ordered" not in plain and "stage-1" not in plain
    monkeypatch.setenv(REORDER_ENV, "0")
    assert "top 5 ordered" not in run(home, "discover", task).stdout
    config = Workspace(home).config_file
    saved = config.read_text() if config.is_file() else None
    monkeypatch.delenv(REORDER_ENV)
    try:
        config.write_text(json.dumps({"reorder": False}))
        assert "top 5 ordered" not in run(home, "discover", task).stdout
        config.write_text(json.dumps({"reorder": "yes"}))
        bad = run(home, "discover", task)
        assert bad.exit_code != 0 and "reorder" in bad.stderr
    finally:
        config.unlink() if saved is None else config.write_text(saved)


def test_an_index_of_the_float_products_is_rebuilt_and_said_once(tmp_path):
    from cartograph.index.onnx_minilm import OnnxMiniLM

    ws = Workspace(tmp_path / "home")
    write_workspace_cards(ws, INDEX_KEY)
    open_index(ws, OnnxMiniLM(int8_products=False))  # as a home built before int8 products
    result = run(ws.root, "discover", "read a file", "-k", "2")
    assert result.exit_code == 0, result.output
    assert result.stderr.count("now minilm-int8 (sentence-transformers/all-MiniLM-L6-v2+int8)") == 1
    assert "rebuilding the index" in result.stderr and "index rebuilt" not in result.stderr
    again = run(ws.root, "discover", "read a file", "-k", "2")
    assert "rebuild" not in again.stderr  # rebuilt once
