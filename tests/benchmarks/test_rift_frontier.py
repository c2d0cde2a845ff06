"""The frontier benchmark's arithmetic (benchmarks/rift_frontier.py) on planted score matrices:
margins, rival ranks, reach buckets, the pair frontier and the edge-graph groups."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import rift_frontier as rf  # noqa: E402

# row a = tool a's own query; tools 0 and 1 are close (1's query ranks 0 first), 2 and 3 apart
SCORES = np.array(
    [
        [0.90, 0.85, 0.10, 0.20],
        [0.95, 0.80, 0.30, 0.10],
        [0.10, 0.20, 0.90, 0.40],
        [0.00, 0.10, 0.50, 0.90],
    ]
)


def test_margin_matrix_is_own_score_minus_rival_with_no_self_rival() -> None:
    m = rf.margin_matrix(SCORES)
    assert np.isinf(np.diag(m)).all()
    assert m[0, 1] == np.float64(0.90) - np.float64(0.85)
    assert m[1, 0] < 0  # tool 1's own query ranks tool 0 first


def test_rival_ranks_put_the_closest_rival_first_and_self_last() -> None:
    ranks = rf.rival_ranks(rf.margin_matrix(SCORES))
    assert ranks[0, 1] == 0 and ranks[2, 3] == 0
    assert (np.diag(ranks) == 3).all()


def test_reach_takes_the_best_direction_and_relevant_tool() -> None:
    ranks = rf.rival_ranks(rf.margin_matrix(SCORES))
    # 3 is 0's last rival, but 2's closest: the best relevant tool counts
    out = rf.reach(ranks, [(1, [0]), (3, [0, 2])])
    assert out["<=1"] == 2
    assert sum(out.values()) == 2


def test_pair_frontier_flags_the_closest_pairs_first() -> None:
    closeness = -np.minimum(rf.margin_matrix(SCORES), rf.margin_matrix(SCORES).T)
    np.fill_diagonal(closeness, -np.inf)
    rows = rf.pair_frontier(closeness, [(1, [0]), (3, [2])], shares=(0.5, 1.0))
    assert rows[0]["tools_flagged"] == 0.5 and rows[0]["recall"] == 0.5  # only 0~1
    assert rows[1]["tools_flagged"] == 1.0 and rows[1]["recall"] == 1.0


def test_group_row_counts_groups_high_share_and_recall() -> None:
    m = rf.margin_matrix(SCORES)
    ranks = rf.rival_ranks(m)
    tight = rf.group_row(m, ranks, [(1, [0]), (3, [2])], cutoff=0.1, cap=1)
    assert (tight["groups"], tight["high"], tight["share"]) == (1, 1, 0.5)
    assert tight["recall"] == 0.5 and tight["largest"] == 2
    loose = rf.group_row(m, ranks, [(1, [0]), (3, [2])], cutoff=0.6, cap=1)
    assert loose["groups"] == 2 and loose["high"] == 1 and loose["recall"] == 1.0
