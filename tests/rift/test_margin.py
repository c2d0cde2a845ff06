"""Margins and risk grading as pure functions: own score minus the best rival, the paper's
thresholds, the no-margin ablation."""

from __future__ import annotations

import numpy as np
import pytest

from cartograph.rift.margin import (
    CohesionThresholds,
    MarginThresholds,
    Risk,
    cosine_margins,
    row_margin,
    score_margins,
)


def test_margin_is_own_score_minus_best_cluster_mate() -> None:
    vectors = np.eye(3, dtype=np.float32)
    # query 0 scores tool 0 at 0.6 and tool 1 at 0.8: tool 1 wins by 0.2
    queries = np.array([[0.6, 0.8, 0.0], [0.0, 1.0, 0.0]], dtype=np.float32)
    got = cosine_margins(queries, vectors, (0, 1))
    assert got[0].margin == pytest.approx(-0.2, abs=1e-6) and got[0].rival == 1
    assert got[1].margin == pytest.approx(1.0, abs=1e-6) and got[1].rival == 0


def test_catalog_scope_lets_a_tool_outside_the_cluster_be_the_rival() -> None:
    vectors = np.eye(3, dtype=np.float32)
    queries = np.array([[0.7, 0.1, 0.7], [0.1, 0.9, 0.0]], dtype=np.float32)
    in_cluster = cosine_margins(queries, vectors, (0, 1))
    in_catalog = cosine_margins(queries, vectors, (0, 1), "catalog")
    assert in_cluster[0].margin == pytest.approx(0.6, abs=1e-6)
    assert in_catalog[0].margin == pytest.approx(0.0, abs=1e-6) and in_catalog[0].rival == 2


def test_a_substitute_is_not_a_rival_and_a_tool_with_only_substitutes_has_none() -> None:
    # rows: scores of tools 0, 1, 2 for the queries of members 0, 1 and 2
    scores = np.array([[0.5, 0.9, 0.4], [0.2, 0.8, 0.1], [0.1, 0.2, 0.9]])
    plain = score_margins(scores, (0, 1, 2))
    assert plain[0].margin == pytest.approx(-0.4) and plain[0].rival == 1
    apart = score_margins(scores, (0, 1, 2), exclude={(0, 1), (1, 0)})
    assert apart[0].margin == pytest.approx(0.1) and apart[0].rival == 2
    alone = row_margin(scores[0, :2], 0, (0, 1), exclude={(0, 1), (1, 0)})
    assert alone.rival == -1 and alone.margin == float("inf")


@pytest.mark.parametrize(
    ("margin", "risk"),
    [
        (-0.3, Risk.HIGH),
        (0.0999, Risk.HIGH),
        (0.10, Risk.MEDIUM),
        (0.1999, Risk.MEDIUM),
        (0.2, Risk.LOW),
    ],
)
def test_risk_follows_the_paper_thresholds(margin: float, risk: Risk) -> None:
    assert MarginThresholds().grade(margin) is risk


def test_cohesion_grading_for_the_no_margin_ablation() -> None:
    grade = CohesionThresholds(high=0.9, medium=0.8).grade
    assert (grade(0.95), grade(0.85), grade(0.7)) == (Risk.HIGH, Risk.MEDIUM, Risk.LOW)


def test_discover_margins_without_discovers_ranking_is_a_usage_error() -> None:
    from cartograph.errors import UsageError
    from cartograph.rift import RiftConfig, RiftTool, analyze

    tools = [RiftTool("s", "a", "A."), RiftTool("s", "b", "B.")]
    vectors = np.array([[1.0, 0.0], [0.99, 0.141]], dtype=np.float32)

    def embed(texts: list[str]) -> np.ndarray:
        return np.tile(vectors[:1], (len(texts), 1))

    with pytest.raises(UsageError, match="discover"):
        analyze(tools, vectors, embed, RiftConfig())
    report = analyze(tools, vectors, embed, RiftConfig(margin_score="cosine"))
    assert report.summary.clusters == 1 and report.clusters[0].margins is not None
