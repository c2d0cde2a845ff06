"""Accepted files: reviewed confusable pairs stop failing the gate; new or worse ones still do.

The pure rules run on hand-built reports; the CLI round trip (write, edit, gate, keep reasons,
refuse a broken file) runs on the real five-server workspace of ``conftest.py``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.rift.conftest import cli, cluster_report

from cartograph.errors import ConfigError
from cartograph.rift.accepted import (
    FORMAT_KEY,
    accepted_json,
    apply_accepted,
    parse_accepted,
    report_pairs,
)
from cartograph.rift.report import ClusterReport, RiftReport, Summary

CONFIG = {"method": "rift", "margin_high": 0.1, "margin_medium": 0.2}


def _report() -> RiftReport:
    family = cluster_report(
        [("gh", "list_issues"), ("gh", "get_issue"), ("gh", "search_issues")],
        {"list_issues": -0.05, "get_issue": 0.3, "search_issues": 0.15},
        {"list_issues": "get_issue", "get_issue": "list_issues", "search_issues": "list_issues"},
        "HIGH",
    )
    twins = cluster_report(
        [("a", "read"), ("b", "read")],
        {"a/read": 0.12, "b/read": 0.4},
        {"a/read": "b/read", "b/read": "a/read"},
        "MEDIUM",
    )
    clusters = [family, twins]
    return RiftReport(summary=Summary.of(clusters), clusters=clusters, config=CONFIG)


def _accepted(*rows: tuple[str, str, str], reason: str = "") -> dict:
    pairs = [{"tools": [a, b], "risk": r, "reason": reason} for a, b, r in rows]
    return {FORMAT_KEY: 1, "pairs": pairs}


def test_pairs_are_each_member_and_its_rival_graded_by_its_own_margin() -> None:
    pairs = {p: r.value for p, r in report_pairs(_report()).items()}
    assert pairs == {
        ("gh/get_issue", "gh/list_issues"): "HIGH",
        ("gh/list_issues", "gh/search_issues"): "MEDIUM",
        ("a/read", "b/read"): "MEDIUM",
    }


def test_an_accepted_high_pair_leaves_only_the_unreviewed_medium_pair_open() -> None:
    report = _report()
    assert report.fails("high")
    accepted = parse_accepted(_accepted(("gh/list_issues", "gh/get_issue", "HIGH")), "a.json")
    gated = apply_accepted(report, accepted)
    assert [c.open_risk for c in gated.clusters] == ["MEDIUM", "MEDIUM"]
    assert [c.risk for c in gated.clusters] == ["HIGH", "MEDIUM"]  # the finding stays visible
    assert not gated.fails("high") and gated.fails("medium")
    assert (gated.summary.open_high, gated.summary.open_medium) == (0, 2)
    assert gated.accepted == {"file": "a.json", "pairs": 1, "covered": 1, "open": 2, "stale": []}


def test_a_pair_accepted_at_medium_is_open_again_when_it_turns_high() -> None:
    accepted = parse_accepted(_accepted(("gh/get_issue", "gh/list_issues", "MEDIUM")), "a.json")
    gated = apply_accepted(_report(), accepted)
    assert gated.clusters[0].open_risk == "HIGH" and gated.fails("high")


def test_every_pair_accepted_passes_the_strictest_gate_and_stale_pairs_are_listed() -> None:
    report = _report()
    data = accepted_json(report)
    data["pairs"].append({"tools": ["x/old", "x/gone"], "risk": "HIGH", "reason": "fixed"})
    gated = apply_accepted(report, parse_accepted(data, "a.json"))
    assert not gated.fails("medium")
    assert gated.accepted is not None and gated.accepted["stale"] == [["x/gone", "x/old"]]


def test_rewriting_keeps_reasons_and_drops_pairs_that_are_no_longer_risky() -> None:
    previous = parse_accepted(
        {
            FORMAT_KEY: 1,
            "pairs": [
                {"tools": ["gh/list_issues", "gh/get_issue"], "risk": "HIGH", "reason": "ok"},
                {"tools": ["x/old", "x/gone"], "risk": "HIGH", "reason": "fixed"},
            ],
        },
        "a.json",
    )
    rows = accepted_json(_report(), previous)["pairs"]
    assert {tuple(r["tools"]): r["reason"] for r in rows} == {
        ("a/read", "b/read"): "",
        ("gh/get_issue", "gh/list_issues"): "ok",
        ("gh/list_issues", "gh/search_issues"): "",
    }


def test_clusters_without_margins_accept_all_their_pairs_at_the_clusters_risk() -> None:
    cluster = ClusterReport(
        members=[("s", "a"), ("s", "b"), ("s", "c")],
        cohesion=0.9,
        margin_min=None,
        risk="HIGH",
        shared_tokens=[],
        distinct_tokens={},
        diagnosis="",
    )
    report = RiftReport(summary=Summary.of([cluster]), clusters=[cluster], config={})
    assert len(report_pairs(report)) == 3
    gated = apply_accepted(report, parse_accepted(accepted_json(report), "a.json"))
    assert gated.clusters[0].open_risk == "LOW"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"pairs": []}, "not a Rift accepted file"),
        ({FORMAT_KEY: 1, "pairs": {}}, "'pairs' must be a list"),
        ({FORMAT_KEY: 1, "pairs": ["x"]}, "pairs[0] must be an object"),
        (_accepted(("a/x", "a/x", "HIGH")), "pairs[0].tools must be two different"),
        (_accepted(("a/x", "nope", "HIGH")), "pairs[0].tools"),
        (_accepted(("a/x", "a/y", "LOW")), "pairs[0].risk must be 'HIGH' or 'MEDIUM'"),
    ],
)
def test_a_broken_accepted_file_names_the_file_and_the_entry(data: object, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_accepted(data, "rift-accepted.json")
    assert str(err.value).startswith("rift-accepted.json") and message in str(err.value)


def test_cli_write_then_gate_then_a_removed_pair_fails_again(
    rift_home: Path, tmp_path: Path
) -> None:
    # at the paper's HIGH constant the read_file alias cluster (margin about 0.03) is HIGH
    high = ("--high", "0.1")
    assert cli(rift_home, "rift", *high).exit_code == 1
    target = tmp_path / "rift-accepted.json"
    written = cli(rift_home, "rift", *high, "--json", "--write-accepted", str(target))
    assert written.exit_code == 0, written.stderr
    assert "accepted pairs" in written.stderr
    data = json.loads(target.read_text(encoding="utf-8"))
    report = json.loads(written.stdout)
    assert report["summary"]["high"] >= 1 and report["summary"]["open_high"] == 0
    assert len(data["pairs"]) == report["accepted"]["covered"] >= 1
    page = tmp_path / "rift.html"
    args = ("--accepted", str(target), "--fail-on", "medium", "--html", str(page))
    assert cli(rift_home, "rift", *high, *args).exit_code == 0
    assert "accepted; open: LOW" in page.read_text(encoding="utf-8")

    pair = next(row for row in data["pairs"] if row["risk"] == "HIGH")
    data["pairs"].remove(pair)
    for row in data["pairs"]:
        row["reason"] = "reviewed: the cards say which"
    target.write_text(json.dumps(data), encoding="utf-8")
    gated = cli(rift_home, "rift", *high, "--json", "--accepted", str(target))
    assert gated.exit_code == 1
    opened = [c for c in json.loads(gated.stdout)["clusters"] if c["open_risk"] == "HIGH"]
    assert opened and all(pair["tools"][0] in {f"{s}/{t}" for s, t in c["members"]} for c in opened)

    again = cli(rift_home, "rift", *high, "--write-accepted", str(target))
    assert again.exit_code == 0
    rows = json.loads(target.read_text(encoding="utf-8"))["pairs"]
    reasons = {tuple(r["tools"]): r["reason"] for r in rows}
    assert reasons[tuple(pair["tools"])] == ""  # the re-added pair awaits its review
    assert sum(1 for r in reasons.values() if r) == len(data["pairs"])


def test_cli_a_broken_or_missing_accepted_file_is_a_setup_error(
    rift_home: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    result = cli(rift_home, "rift", "--accepted", str(broken))
    assert result.exit_code == 2 and "broken.json" in result.stderr
    missing = cli(rift_home, "rift", "--accepted", str(tmp_path / "nope.json"))
    assert missing.exit_code == 2 and "--write-accepted" in " ".join(missing.stderr.split())
