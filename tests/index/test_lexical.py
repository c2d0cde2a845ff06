from __future__ import annotations

import numpy as np

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


def test_jaccard_is_overlap_over_union():
    docs = [token_set("send email"), token_set("read email inbox"), token_set("")]
    scores = jaccard_scores("send an email", docs)
    assert scores.tolist() == [1.0, 0.25, 0.0]
