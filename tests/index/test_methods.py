from __future__ import annotations

import numpy as np
import pytest

from cartograph.index.methods import Evidence, hybrid_scores, stage_one_width, two_stage_scores


@pytest.mark.parametrize(
    ("k", "m", "n", "expected"),
    [
        (5, 22, 374, 2),  # the paper: n_avg 17 -> floor(10/17)+1 = 1 -> at least 2
        (5, 10, 20, 6),  # n_avg 2 -> floor(10/2)+1 = 6
        (5, 3, 6, 3),  # capped at m
        (1, 1, 4, 1),  # a single server
        (5, 0, 0, 0),
    ],
)
def test_stage_one_width_follows_the_paper(k, m, n, expected):
    assert stage_one_width(k, m, n) == expected


def _evidence(tool_cos, centroid_cos, tool_server, bm25=None, server_cos=None):
    tool_cos = np.asarray(tool_cos, dtype=np.float32)
    return Evidence(
        tool_cos=tool_cos,
        centroid_cos=np.asarray(centroid_cos, dtype=np.float32),
        server_cos=np.asarray(server_cos if server_cos is not None else centroid_cos, np.float32),
        bm25=np.asarray(bm25 if bm25 is not None else np.zeros_like(tool_cos), np.float32),
        tool_server=np.asarray(tool_server),
        n_servers=len(centroid_cos),
    )


def test_two_stage_ranks_tools_of_the_chosen_servers_first():
    # 3 servers x 4 tools; the best single tool (index 11) sits on the weakest server.
    tool_cos = [0.5, 0.4, 0.3, 0.2, 0.45, 0.35, 0.1, 0.1, 0.0, 0.0, 0.0, 0.9]
    ev = _evidence(tool_cos, [0.8, 0.7, 0.1], [0] * 4 + [1] * 4 + [2] * 4)
    scores = two_stage_scores(ev, k=2)  # s = max(2, floor(4/4)+1) = 2
    order = np.argsort(-scores, kind="stable")
    assert order[:8].tolist() == [0, 4, 1, 5, 2, 3, 6, 7]
    assert order[8] == 11  # the rest follow in flat cosine order


def test_hybrid_lets_lexical_evidence_lift_a_tool():
    tool_cos = [0.50, 0.49, 0.10, 0.05]
    ev_dense = _evidence(tool_cos, [0.5, 0.1], [0, 0, 1, 1])
    ev_lex = _evidence(tool_cos, [0.5, 0.1], [0, 0, 1, 1], bm25=[0.0, 3.0, 0.0, 0.0])
    assert int(np.argmax(hybrid_scores(ev_dense))) == 0
    assert int(np.argmax(hybrid_scores(ev_lex))) == 1
