from __future__ import annotations

import math

import numpy as np
import pytest

from cartograph.evaluate.metrics import (
    expected_random,
    first_hit_rank,
    summarise,
    summarise_random,
)


def test_first_hit_rank_takes_the_best_placed_hit_and_breaks_ties_by_position():
    scores = np.array([0.9, 0.5, 0.7, 0.7, 0.1])
    assert first_hit_rank(scores, [4, 3]) == 3  # 0.9, 0.7 (index 2), then index 3
    assert first_hit_rank(scores, [2, 3]) == 2
    assert first_hit_rank(scores, [0]) == 1
    assert first_hit_rank(scores, []) is None


def test_summarise_counts_hits_at_k_mrr_and_mean_rank():
    s = summarise([1, 2, 4, None])
    assert s.recall == {1: 0.25, 3: 0.5, 5: 0.75}
    assert s.mrr == pytest.approx((1 + 0.5 + 0.25) / 4)
    assert s.mean_rank == pytest.approx(7 / 3)
    assert s.n == 4
    assert s.as_json() == {
        "R@1": 0.25,
        "R@3": 0.5,
        "R@5": 0.75,
        "MRR": 0.4375,
        "mean_rank": 2.33,
        "n": 4,
    }


def test_expected_random_closed_form_for_one_hit():
    recall, rr, mean_rank = expected_random(5, 1)
    assert recall[1] == pytest.approx(0.2) and recall[3] == pytest.approx(0.6)
    assert recall[5] == pytest.approx(1.0)
    assert rr == pytest.approx(sum(1 / i for i in range(1, 6)) / 5)
    assert mean_rank == pytest.approx(3.0)


def test_expected_random_matches_simulation_with_several_hits():
    n, r = 30, 3
    rng = np.random.default_rng(1)
    ranks = [int(np.min(rng.permutation(n)[:r])) + 1 for _ in range(20000)]
    recall, rr, mean_rank = expected_random(n, r)
    assert recall[5] == pytest.approx(np.mean([x <= 5 for x in ranks]), abs=0.02)
    assert rr == pytest.approx(np.mean([1 / x for x in ranks]), abs=0.01)
    assert mean_rank == pytest.approx(np.mean(ranks), abs=0.15)


def test_random_summary_averages_queries_and_counts_missing_labels_as_misses():
    s = summarise_random([(10, 1), (10, 0)])
    assert s.recall[1] == pytest.approx(0.05)
    assert s.mean_rank == pytest.approx(5.5)
    assert not math.isnan(s.mrr)
