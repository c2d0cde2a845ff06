"""The dense text drops the generator's distinctness suffixes but keeps Rift's contrast."""

from __future__ import annotations

from cartograph.index.documents import _core_summary


def test_distinctness_suffixes_and_keyword_lists_leave_the_dense_text():
    base = "Calculate area triangle base height."
    assert _core_summary(f"{base} Tool: calculate triangle area f1 bf82.") == base
    assert _core_summary(f"{base} Tool: area. Name: calc_area_2.") == base
    assert _core_summary(f"{base} Entry 2.") == base
    assert _core_summary(f"{base} About: area, triangle.") == base


def test_contrast_added_for_rift_stays():
    text = "Read file. Tool: read x. Unlike write file: bytes, offset."
    assert _core_summary(text) == "Read file. Unlike write file: bytes, offset."
