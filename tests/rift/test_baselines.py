"""The Jaccard baselines match brute force."""

from __future__ import annotations

import numpy as np
import pytest

from cartograph.rift.baselines import jaccard_edges, jaccard_groups, mean_pairwise_jaccard
from cartograph.rift.diagnose import jaccard


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
