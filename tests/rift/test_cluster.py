"""Layer 1: threshold graph, per-component average linkage, cohesion."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import pdist

from cartograph.errors import UsageError
from cartograph.rift.cluster import (
    agglomerative_clusters,
    cohesion,
    threshold_edges,
    threshold_groups,
)


def unit(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float64)
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def planted(seed: int, groups: int = 12, per: int = 6, noise: float = 0.35, d: int = 48):
    """Vectors scattered around random centres: some groups fuse, some split, some stay alone."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(groups, d))
    rows = [c + noise * rng.normal(size=(per, d)) * np.linalg.norm(c) / np.sqrt(d) for c in centres]
    singles = rng.normal(size=(20, d))
    return unit(np.vstack([*rows, singles]))


def global_clusters(vectors: np.ndarray, theta: float, method: str) -> set[frozenset[int]]:
    """The reference: one scipy linkage over every pairwise distance, cut at 1 - theta."""
    z = linkage(pdist(vectors.astype(np.float64), metric="cosine"), method=method)
    labels = fcluster(z, t=1 - theta, criterion="distance")
    out = set()
    for label in np.unique(labels):
        members = np.flatnonzero(labels == label)
        if members.size >= 2:
            out.add(frozenset(int(i) for i in members))
    return out


@pytest.mark.parametrize("method", ["average", "single", "complete"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_per_component_clustering_equals_one_global_linkage(method: str, seed: int) -> None:
    vectors = planted(seed)
    for theta in (0.5, 0.65, 0.8):
        ours = {
            frozenset(c.members)
            for c in agglomerative_clusters(vectors, theta, method=method, block=17)  # type: ignore[arg-type]
        }
        assert ours == global_clusters(vectors, theta, method)


def test_threshold_edges_match_brute_force_whatever_the_block() -> None:
    vectors = planted(7)
    sims = vectors.astype(np.float64) @ vectors.T.astype(np.float64)
    want = {
        (i, j)
        for i in range(len(vectors))
        for j in range(i + 1, len(vectors))
        if sims[i, j] >= 0.65
    }
    for block in (1, 5, 64, 4096):
        rows, cols = threshold_edges(vectors, 0.65, block=block)
        assert set(zip(rows.tolist(), cols.tolist(), strict=True)) == want


def test_two_far_apart_pairs_are_two_clusters_and_singletons_are_dropped() -> None:
    vectors = unit(
        np.array(
            [
                [1.0, 0.05, 0, 0],
                [1.0, -0.05, 0, 0],
                [0, 0, 1.0, 0.1],
                [0, 0, 1.0, -0.1],
                [0, 1.0, 0, 0],  # alone
            ]
        )
    )
    clusters = agglomerative_clusters(vectors, 0.65)
    assert sorted(c.members for c in clusters) == [(0, 1), (2, 3)]
    assert all(c.cohesion > 0.95 for c in clusters)


def test_average_linkage_splits_a_chain_that_threshold_groups_keep_whole() -> None:
    # a, b, c on an arc: a~b and b~c pass theta, a~c does not; 0.70 between neighbours
    angles = np.radians([0.0, 45.0, 90.0])
    vectors = unit(np.stack([np.cos(angles), np.sin(angles)], axis=1))
    chain = threshold_groups(vectors, 0.65)
    assert [c.members for c in chain] == [(0, 1, 2)]
    clusters = agglomerative_clusters(vectors, 0.65, method="average")
    assert len(clusters) == 1 and len(clusters[0].members) == 2


def test_cohesion_is_the_mean_pairwise_cosine() -> None:
    vectors = planted(4)
    members = (0, 1, 2, 5)
    sims = [float(vectors[i] @ vectors[j]) for i in members for j in members if i < j]
    assert cohesion(vectors, members) == pytest.approx(np.mean(sims), abs=1e-6)


@pytest.mark.parametrize("theta", [0.0, 1.0, -0.2, 1.5])
def test_theta_outside_the_open_unit_interval_is_a_usage_error(theta: float) -> None:
    with pytest.raises(UsageError):
        agglomerative_clusters(planted(1), theta)


def test_unknown_linkage_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        agglomerative_clusters(planted(1), 0.65, method="ward")  # type: ignore[arg-type]


def test_condensed_distances_match_scipy_pdist_whatever_the_block() -> None:
    from cartograph.rift.cluster import condensed_cosine_distances

    vectors = planted(5)
    want = pdist(vectors.astype(np.float64), metric="cosine")
    for block in (1, 3, 50, 1000):
        assert np.allclose(condensed_cosine_distances(vectors, block=block), want, atol=1e-9)
