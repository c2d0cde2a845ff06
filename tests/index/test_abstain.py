"""Abstention: discover says when nothing plausibly fits, from the best cosine of its hits; and
keywords weigh in the lexical channel only."""

from __future__ import annotations

import pytest

from cartograph.errors import ConfigError
from cartograph.index.abstain import ENV, THRESHOLDS, best_cosine, judge, threshold_for
from cartograph.index.answer import Hit


def hits(*cosines: float | None) -> list[Hit]:
    return [Hit("s", f"t{i}", score=1.0 - i, cosine=c) for i, c in enumerate(cosines)]


def test_the_best_cosine_of_the_hits_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "0.4")
    assert best_cosine(hits(0.2, 0.35, None)) == 0.35
    note = judge(hits(0.2, 0.35), "any-model")
    assert note is not None and "0.35" in note and "0.40" in note and "weak" in note
    assert judge(hits(0.2, 0.41), "any-model") is None
    assert judge(hits(None, None), "any-model") is None  # lexical methods never abstain


def test_the_threshold_comes_from_the_model_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    assert threshold_for("a-model-nobody-calibrated") is None
    for model, value in THRESHOLDS.items():
        assert threshold_for(model) == value
    monkeypatch.setenv(ENV, "off")
    assert all(threshold_for(m) is None for m in [*THRESHOLDS, "x"])
    monkeypatch.setenv(ENV, "high")
    with pytest.raises(ConfigError, match=ENV):
        threshold_for("x")


def test_dense_hits_carry_their_cosine_and_lexical_ones_none(index) -> None:
    dense = index.search("list pull requests of a repository", k=3, method="hybrid")
    assert all(h.cosine is not None and -1.0 <= h.cosine <= 1.0 for h in dense)
    assert all(h.cosine is None for h in index.search("pull requests", k=3, method="bm25"))


def test_keywords_weigh_in_the_lexical_channel_only(index) -> None:
    task = "show what changed recently"
    plain = index.scores(task, "bm25")
    lifted = index.scores(task, "bm25", keywords=["pull", "requests"])
    pos = index.position("github", "list_pull_requests")
    assert pos is not None and lifted[pos] > plain[pos]
    flat = index.scores(task, "flat")
    assert (index.scores(task, "flat", keywords=["pull", "requests"]) == flat).all()
    top = index.search(task, k=1, method="hybrid", keywords=["pull requests"])[0]
    assert (top.server, top.tool) == ("github", "list_pull_requests")
