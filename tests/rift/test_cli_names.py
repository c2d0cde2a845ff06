"""The rift command lists its methods and fail-on levels without importing the rift package
(NumPy, SciPy); these lists must stay the package's own."""

from __future__ import annotations

from cartograph.cli import rift_cmd
from cartograph.rift.analyze import METHODS
from cartograph.rift.report import FAIL_ON


def test_cli_methods_are_the_rift_packages():
    assert rift_cmd.METHODS == METHODS


def test_cli_fail_on_levels_are_the_reports():
    assert rift_cmd.FAIL_ON == FAIL_ON
