"""The reorder probe (benchmarks/reorder.py): each variant's top 5 is what its rule says."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import reorder  # noqa: E402


def test_each_variant_takes_its_top_five_by_its_rule() -> None:
    stock = np.array([9.0, 8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 0.0] + [-1.0] * 12)
    trained = np.zeros(len(stock))
    trained[[4, 9, 21]] = [3.0, 5.0, 9.0]  # the trained model likes 21 best, then 9, then 4
    cos = np.zeros(len(stock))
    cos[3] = 1.0  # 3 wins the cosine mix: 6 + 8 beats 9
    got = {k: v.tolist() for k, v in reorder.orders(stock, trained, cos).items()}
    assert got["stock"] == [0, 1, 2, 3, 4]
    assert got["trained"][0] == 21
    assert got["top 5"] == [4, 0, 1, 2, 3]  # the same five tools, the trained order
    assert got["top 10"] == [9, 4, 0, 1, 2]  # 9 climbs in from the stock 10th place
    assert got["top 20"] == [9, 4, 0, 1, 2]  # 21 is past the stock top 20
    assert got["top 5 + cos"] == [3, 0, 1, 2, 4]


def test_without_shared_data_it_skips(monkeypatch, tmp_path, capsys) -> None:
    monkeypatch.setenv("CARTOGRAPH_SHARED", str(tmp_path / "absent"))
    assert reorder.main(["--parts", "tune"]) == 0
    assert "skipped" in capsys.readouterr().out
