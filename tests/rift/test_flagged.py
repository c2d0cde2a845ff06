"""flagged_tools: which tools ``rift --regenerate`` rewrites, and against what."""

from __future__ import annotations

from tests.rift.conftest import cluster_report

from cartograph.rift import RiftReport, flagged_tools
from cartograph.rift.report import ClusterReport, Summary


def _report(*clusters: ClusterReport) -> RiftReport:
    return RiftReport(
        summary=Summary.of(list(clusters)),
        clusters=list(clusters),
        config={"margin_high": 0.0},
    )


def test_the_low_member_and_the_rival_that_beat_it_are_both_rewritten() -> None:
    names = ("get_lineage", "get_lineage_dev", "get_model")
    cluster = cluster_report(
        [("s", n) for n in names],
        {"get_lineage": -0.2, "get_lineage_dev": 0.3, "get_model": 0.15},
        {"get_lineage": "get_lineage_dev", "get_lineage_dev": "get_lineage", "get_model": None},
        "HIGH",
    )
    flagged = flagged_tools(_report(cluster))
    assert flagged[("s", "get_lineage")] == ["s/get_lineage_dev", "s/get_model"]
    # the rival's margin is fine, yet it is contrasted with the tool it beat
    assert flagged[("s", "get_lineage_dev")] == ["s/get_lineage"]
    assert ("s", "get_model") not in flagged


def test_only_high_clusters_flag_and_mates_are_not_repeated() -> None:
    medium = cluster_report(
        [("m", "a"), ("m", "b")], {"a": 0.05, "b": 0.1}, {"a": "b", "b": "a"}, "MEDIUM"
    )
    both_low = cluster_report(
        [("s", "x"), ("s", "y")], {"x": -0.1, "y": -0.05}, {"x": "y", "y": "x"}, "HIGH"
    )
    flagged = flagged_tools(_report(medium, both_low))
    assert set(flagged) == {("s", "x"), ("s", "y")}
    assert flagged[("s", "x")] == ["s/y"] and flagged[("s", "y")] == ["s/x"]


def test_a_substitute_is_never_a_rival_to_rewrite_against() -> None:
    cluster = cluster_report(
        [("git", "git_add"), ("git-cyanheads", "git_add"), ("git", "git_commit")],
        {"git/git_add": None, "git-cyanheads/git_add": -0.2, "git/git_commit": 0.4},
        {"git-cyanheads/git_add": "git/git_add"},
        "HIGH",
        substitutes=[["git/git_add", "git-cyanheads/git_add"]],
    )
    flagged = flagged_tools(_report(cluster))
    assert flagged == {("git-cyanheads", "git_add"): ["git/git_commit"]}
