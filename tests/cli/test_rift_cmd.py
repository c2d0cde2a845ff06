"""The rift command lists its methods and fail-on levels without importing the rift package
(NumPy, SciPy); these lists must stay the package's own."""

from __future__ import annotations

from cartograph.cli import rift_cmd
from cartograph.rift.analyze import GROUPINGS, MARGIN_SCORES, METHODS
from cartograph.rift.queries import QUERY_STYLES
from cartograph.rift.report import FAIL_ON


def test_cli_methods_are_the_rift_packages():
    assert rift_cmd.METHODS == METHODS


def test_cli_fail_on_levels_are_the_reports():
    assert rift_cmd.FAIL_ON == FAIL_ON


def test_cli_margin_scores_and_query_styles_are_the_rift_packages():
    assert rift_cmd.MARGIN_SCORES == MARGIN_SCORES
    assert rift_cmd.QUERY_STYLES == QUERY_STYLES


def test_cli_groupings_are_the_rift_packages():
    assert rift_cmd.GROUPINGS == GROUPINGS
