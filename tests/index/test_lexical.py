from __future__ import annotations

import numpy as np
import pytest

from cartograph.index.lexical import Lexical, jaccard_scores, token_set, tokenize


def test_identifiers_and_phrases_tokenize_alike():
    assert (
        tokenize("listPullRequests")
        == tokenize("list pull requests")
        == ["list", "pull", "request"]
    )
    assert tokenize("get_weather-forecast") == ["weather", "forecast"]
    assert tokenize("HTTPServer logs") == ["http", "server", "log"]


def test_cjk_characters_become_tokens():
    assert tokenize("搜索 news") == ["搜", "索", "new"]


def test_bm25_ranks_the_matching_document_first_and_survives_save(tmp_path):
    docs = ["send an email message", "list github pull requests", "weather forecast for a city"]
    lex = Lexical.build(docs)
    scores = lex.scores("email my team")
    assert int(np.argmax(scores)) == 0
    assert lex.scores("zzzz unknown").tolist() == [0.0, 0.0, 0.0]
    files = lex.save(tmp_path / "bm25")
    assert files and all(p.suffix in {".json", ".npy"} for p in files)
    again = Lexical.load(tmp_path / "bm25")
    assert np.array_equal(again.scores("pull requests"), lex.scores("pull requests"))


def test_coverage_is_the_share_of_the_querys_indexed_words_a_document_holds():
    lex = Lexical.build(["send an email message", "email inbox search", "weather forecast"])
    # "email" and "search" are indexed, "zebra" is not and does not count
    assert lex.coverage("search my email zebra").tolist() == pytest.approx([0.5, 1.0, 0.0])
    assert lex.coverage("email email").tolist() == pytest.approx([1.0, 1.0, 0.0])
    assert lex.coverage("zebra").tolist() == [0.0, 0.0, 0.0]


def test_jaccard_is_overlap_over_union():
    docs = [token_set("send email"), token_set("read email inbox"), token_set("")]
    scores = jaccard_scores("send an email", docs)
    assert scores.tolist() == [1.0, 0.25, 0.0]


FLEET_LIKE = [
    "read a file from the local disk and return its text",
    "write text to a file on the local disk, replacing it",
    "list the pull requests of a github repository",
    "create a pull request on github from a branch",
    "get the current time in a time zone such as Europe/Paris",
    "convert a time between two time zones",
    "search the web and return pages with their text",
    "",
]
QUERIES = ["read the file", "pull request github", "time time zone", "nothing matches qqq", "file"]


def test_scores_equal_bm25s_scoring_its_own_index():
    import bm25s

    ours = Lexical.build(FLEET_LIKE)
    theirs = bm25s.BM25()
    theirs.index([tokenize(t) or ["_empty_"] for t in FLEET_LIKE], show_progress=False)
    for query in QUERIES:
        known = [t for t in tokenize(query) if t in theirs.vocab_dict]
        expected = theirs.get_scores(known) if known else np.zeros(len(FLEET_LIKE))
        assert np.array_equal(ours.scores(query), np.asarray(expected, dtype=np.float32)), query


def test_an_index_bm25s_saved_loads_and_scores_alike(tmp_path):
    import bm25s

    theirs = bm25s.BM25()
    theirs.index([tokenize(t) or ["_empty_"] for t in FLEET_LIKE], show_progress=False)
    theirs.save(str(tmp_path), show_progress=False, allow_pickle=False)
    loaded = Lexical.load(tmp_path)
    assert loaded.num_docs == len(FLEET_LIKE)
    assert np.array_equal(
        loaded.scores("pull request"), Lexical.build(FLEET_LIKE).scores("pull request")
    )


def test_loading_does_not_import_bm25s_or_scipy(tmp_path):
    import subprocess
    import sys

    Lexical.build(FLEET_LIKE).save(tmp_path)
    probe = (
        "import sys; from pathlib import Path; from cartograph.index.lexical import Lexical; "
        f"Lexical.load(Path({str(tmp_path)!r})).scores('read file'); "
        "print(sorted(m for m in ('bm25s', 'scipy') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_damaged_index_names_the_directory_and_the_fix(tmp_path):
    import json

    import pytest

    from cartograph.errors import IndexError_

    Lexical.build(FLEET_LIKE).save(tmp_path)
    vocab = {f"t{i}": i for i in range(1000)}  # more tokens than the arrays have columns
    (tmp_path / "vocab.index.json").write_text(json.dumps(vocab))
    with pytest.raises(IndexError_, match="cartograph index build") as caught:
        Lexical.load(tmp_path)
    assert str(tmp_path) in str(caught.value)
    (tmp_path / "params.index.json").unlink()
    with pytest.raises(IndexError_, match="unreadable BM25 index"):
        Lexical.load(tmp_path)
