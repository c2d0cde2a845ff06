"""The fusion fit (benchmarks/fusion_fit.py): its features are the product's own terms, and the
pairwise fit finds the weights that separate planted relevant tools."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import fusion_fit as ff  # noqa: E402
from cartograph.index.methods import Evidence, HybridParams, hybrid_scores  # noqa: E402


def _evidence(seed: int) -> Evidence:
    rng = np.random.default_rng(seed)
    n = 80
    return Evidence(
        tool_cos=rng.uniform(0.0, 0.9, n).astype(np.float32),
        centroid_cos=rng.uniform(0, 1, 8).astype(np.float32),
        server_cos=rng.uniform(0, 1, 8).astype(np.float32),
        bm25=np.where(rng.random(n) < 0.3, rng.uniform(0.5, 12.0, n), 0.0).astype(np.float32),
        tool_server=np.repeat(np.arange(8), 10),
        n_servers=8,
        coverage=rng.random(n).astype(np.float32),
    )


def test_features_times_the_shipped_weights_are_the_shipped_scores() -> None:
    for seed in range(3):
        ev = _evidence(seed)
        weights = np.array(list(asdict(HybridParams()).values()))
        assert np.allclose(ff.feature_columns(ev) @ weights, hybrid_scores(ev), atol=1e-6)
        hand = HybridParams.hand_set(4.5, 0.5, 0.15)
        weights = np.array(list(asdict(hand).values()))
        assert np.allclose(ff.feature_columns(ev) @ weights, hybrid_scores(ev, hand), atol=1e-6)


def _planted(seed: int, n_queries: int = 60) -> list[ff.Query]:
    """Queries whose relevant tool has the highest feature 1 but a middling feature 0."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_queries):
        x = rng.normal(size=(20, 2))
        relevant = np.zeros(20, dtype=bool)
        best = int(np.argmax(x[:, 1]))
        relevant[best] = True
        out.append(ff.Query(x, relevant, x[:, 0], x[:, 0]))
    return out


def test_the_pairwise_fit_finds_the_feature_that_separates_relevant_tools() -> None:
    train = [_planted(1), _planted(2)]
    beta = ff.fit(train, [0, 1], c=1.0)
    assert beta[1] > 1.0 and abs(beta[0]) < 0.5 * beta[1]
    held = _planted(3)
    fitted = ff.recall(held, ff.scored(held, [0, 1], beta), k=1)
    by_feature_0 = ff.recall(held, [q.shipped for q in held], k=1)
    assert fitted > 0.9 > by_feature_0


def test_a_stronger_penalty_shrinks_the_weights() -> None:
    train = [_planted(4)]
    loose, tight = ff.fit(train, [0, 1], c=10.0), ff.fit(train, [0, 1], c=0.01)
    assert np.linalg.norm(tight) < np.linalg.norm(loose)
