"""The substitute rule and the confusion grading, as pure functions."""

from __future__ import annotations

import numpy as np

from cartograph.rift.grading import Confusion, confusions, grade
from cartograph.rift.report import ClusterReport, RiftReport, Summary
from cartograph.rift.substitutes import (
    SubstituteRule,
    is_substitute,
    name_words,
    overlap,
    substitute_pairs,
)

RANGE = {"type": "object", "properties": {"filepath": {}, "sheet_name": {}, "range": {}}}
RANGE_GO = {"type": "object", "properties": {"fileAbsolutePath": {}, "sheetName": {}, "range": {}}}
OTHER = {"type": "object", "properties": {"query": {}, "limit": {}}}


def test_same_job_on_two_servers_is_a_substitute() -> None:
    a = ("excel", "format_range", RANGE)
    b = ("excel-go", "excel_format_range", RANGE_GO)
    assert name_words("excel-go", "excel_format_range") == {"format", "range"}
    assert is_substitute(a, b, 0.8)
    assert not is_substitute(a, ("excel-go", "read_sheet", RANGE_GO), 0.8)  # other name words
    assert is_substitute(a, ("excel-go", "read_sheet", RANGE_GO), 0.8, SubstituteRule(0.0))


def test_same_server_other_arguments_or_far_cards_are_not_substitutes() -> None:
    a = ("excel", "format_range", RANGE)
    assert not is_substitute(a, ("excel", "format_range_2", RANGE), 0.9)  # one server
    assert not is_substitute(a, ("sheets", "format_range", OTHER), 0.9)  # other arguments
    assert not is_substitute(a, ("excel-go", "excel_format_range", RANGE_GO), 0.5)  # far cards


def test_one_tool_name_on_two_servers_of_one_family_is_a_substitute() -> None:
    adds = {"type": "object", "properties": {"repo_path": {}, "files": {}}}
    other = {"type": "object", "properties": {"path": {}, "paths": {}, "update": {}}}
    a = ("git", "git_add", adds)
    # other argument names and far cards: only the name and the servers' family tie them
    assert is_substitute(a, ("git-cyanheads", "git_add", other), 0.3)
    assert is_substitute(("gitlab", "push_files", None), ("gitlab-zereight", "push_files", {}), 0.5)
    assert not is_substitute(a, ("github", "git_add", other), 0.3)  # no shared server word
    assert not is_substitute(a, ("git-cyanheads", "git_commit", other), 0.3)  # another name
    off = SubstituteRule(same_name_family=False)
    assert not is_substitute(a, ("git-cyanheads", "git_add", other), 0.3, off)


def test_overlap_treats_two_empty_schemas_as_agreeing() -> None:
    assert overlap(frozenset(), frozenset()) == 1.0
    assert overlap(frozenset({"a"}), frozenset()) == 0.0
    assert overlap(frozenset({"a", "b"}), frozenset({"a", "b", "c", "d"})) == 1.0


def test_substitute_pairs_come_in_both_orders_and_only_across_servers() -> None:
    ids = [
        ("excel", "format_range", RANGE),
        ("excel-go", "excel_format_range", RANGE_GO),
        ("excel", "read_range", RANGE),
    ]
    v = np.array([[1.0, 0.0], [0.9, 0.436], [0.95, 0.312]], dtype=np.float32)
    assert substitute_pairs((0, 1, 2), ids, v) == {(0, 1), (1, 0), (2, 1), (1, 2)}  # 'range'


def _report(*clusters: tuple[list[tuple[str, str]], str]) -> RiftReport:
    reports = [
        ClusterReport(
            members=m,
            cohesion=0.8,
            margin_min=0.0,
            risk=r,
            shared_tokens=[],
            distinct_tokens={},
            diagnosis="",
        )
        for m, r in clusters
    ]
    return RiftReport(summary=Summary.of(reports), clusters=reports)


def test_confusions_skip_right_and_acceptable_top1s() -> None:
    tasks = [([("a", "x")], []), ([("a", "x")], [("b", "x")]), ([("a", "x")], [])]
    got = confusions(tasks, [("a", "x"), ("b", "x"), ("a", "y")])
    assert got == [Confusion(("a", "y"), frozenset({("a", "x")}))]


def test_grade_counts_confusions_inside_high_or_medium_clusters() -> None:
    report = _report(
        ([("a", "x"), ("a", "y")], "HIGH"),
        ([("a", "p"), ("a", "q")], "LOW"),
        ([("a", "m"), ("a", "n")], "HIGH"),
    )
    observed = [
        Confusion(("a", "y"), frozenset({("a", "x")})),  # inside the first HIGH cluster
        Confusion(("a", "q"), frozenset({("a", "p")})),  # inside a LOW cluster only
        Confusion(("b", "z"), frozenset({("a", "x")})),  # in no cluster
    ]
    g = grade(report, observed)
    assert (g.confusions, g.inside_high_medium, g.inside_any) == (3, 1, 2)
    assert g.recall == 1 / 3
    assert (g.high_clusters, g.high_with_confusion, g.high_without_confusion) == (2, 1, 1)
