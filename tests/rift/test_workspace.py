"""Rift over a real workspace: real cards, real embedder, real index; the CLI as a CI gate."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from cartograph.index import card_set_digest, embed_queries
from cartograph.rift import REGENERATE, RiftConfig, RiftReport, flagged_tools, synthetic_query
from cartograph.rift.margin import MarginThresholds
from cartograph.rift.queries import QueryOptions
from cartograph.rift.workspace import load_inputs, regenerate, run_rift
from cartograph.storage import load_verified, open_index, open_store
from cartograph.workspace import Workspace

from .conftest import cli, discover_scores

PAPER = RiftConfig(
    grouping="cosine",
    margin_score="cosine",
    substitutes=False,
    query_options=QueryOptions(style="schema"),
)
COSINE = RiftConfig(grouping="cosine")
SUMMARY_KEYS = {
    "clusters",
    "high",
    "medium",
    "low",
    "tools_in_clusters",
    "within_server",
    "cross_server",
}
CLUSTER_KEYS = {
    "members",
    "cohesion",
    "margin_min",
    "risk",
    "shared_tokens",
    "distinct_tokens",
    "diagnosis",
}


@pytest.mark.parametrize("grouping", ["confusion", "cosine"])
def test_deprecated_read_file_alias_is_high_risk_at_the_papers_constants(
    rift_home: Path, grouping: str
) -> None:
    ws = Workspace(rift_home)
    cfg = RiftConfig(grouping=grouping, margin_thresholds=MarginThresholds(0.10, 0.20))  # type: ignore[arg-type]
    report = run_rift(ws, open_store(ws), cfg)
    cluster = next(c for c in report.clusters if ("filesystem", "read_file") in c.members)
    assert ("filesystem", "read_text_file") in cluster.members
    assert cluster.risk == "HIGH"


def test_every_member_has_a_query_from_its_name_and_schema_never_its_summary(
    rift_home: Path, rift_report: RiftReport
) -> None:
    report = rift_report
    cards = load_verified(Workspace(rift_home)).cards
    assert report.clusters
    for cluster in report.clusters:
        assert cluster.queries is not None
        for (server, tool), label in zip(cluster.members, cluster.distinct_tokens, strict=True):
            entry = cards[server].tool(tool)
            assert entry is not None
            assert cluster.queries[label] == synthetic_query(tool, entry.input_schema)
            assert entry.summary not in cluster.queries[label]


def test_paper_margins_match_a_hand_computation_over_cosines(rift_home: Path) -> None:
    report = run_rift(Workspace(rift_home), open_store(Workspace(rift_home)), PAPER)
    index = open_index(Workspace(rift_home))
    for cluster in report.clusters[:5]:
        assert cluster.queries is not None and cluster.margins is not None
        rows = [index.tool_ids.index((s, t)) for s, t in cluster.members]
        labels = list(cluster.distinct_tokens)
        q = embed_queries(index.embedder, [cluster.queries[lab] for lab in labels])
        scores = q.astype(np.float64) @ index.tool_vectors[rows].T.astype(np.float64)
        margins = [m for m in cluster.margins.values() if m is not None]
        for k, lab in enumerate(labels):
            others = np.delete(scores[k], k)
            assert cluster.margins[lab] == pytest.approx(scores[k, k] - others.max(), abs=2e-3)
        assert cluster.margin_min == pytest.approx(min(margins), abs=1e-9)
        low = min(margins)
        want = "HIGH" if low < 0.10 else "MEDIUM" if low < 0.20 else "LOW"
        assert cluster.risk == want


def test_default_margins_are_discovers_own_scores_in_cosine_units(
    rift_home: Path, rift_report: RiftReport
) -> None:
    index = open_index(Workspace(rift_home))
    assert rift_report.config["margin_score"] == "discover"
    for cluster in rift_report.clusters[:5]:
        assert cluster.queries is not None and cluster.margins is not None
        rows = [index.tool_ids.index((s, t)) for s, t in cluster.members]
        labels = list(cluster.distinct_tokens)
        subs = {frozenset(p) for p in cluster.substitutes}
        for k, lab in enumerate(labels):
            query = cluster.queries[lab]
            qv = embed_queries(index.embedder, [query])[0]
            # what discover ranks by (hybrid, one step), per unit of dense weight, scaled by the
            # query's cosine spread, for the task with the action its tool's name says
            scores = discover_scores(index, query, qv) * float(
                (index.tool_vectors @ qv).std() / index.hybrid_params.w_dense
            )
            rivals = [
                scores[rows[j]]
                for j, other in enumerate(labels)
                if j != k and frozenset((lab, other)) not in subs
            ]
            want = scores[rows[k]] - max(rivals) if rivals else None
            got = cluster.margins[lab]
            assert (got is None) == (want is None)
            if want is not None:
                assert got == pytest.approx(want, abs=2e-3)


def test_cosine_clusters_respect_theta_and_cohesion_is_their_mean_cosine(
    rift_home: Path,
) -> None:
    inputs = load_inputs(Workspace(rift_home), open_store(Workspace(rift_home)))
    report = run_rift(Workspace(rift_home), open_store(Workspace(rift_home)), COSINE)
    pos = {(t.server, t.tool): i for i, t in enumerate(inputs.tools)}
    for cluster in report.clusters:
        rows = [pos[(s, t)] for s, t in cluster.members]
        sims = inputs.vectors[rows] @ inputs.vectors[rows].T
        k = len(rows)
        mean = (sims.sum() - np.trace(sims)) / (k * (k - 1))
        assert cluster.cohesion == pytest.approx(mean, abs=1e-3)
        # average linkage below the cut: the mean pairwise distance is within 1 - theta
        assert 1 - mean <= 0.35 + 1e-6


@pytest.mark.parametrize("grouping", ["confusion", "cosine"])
def test_no_margin_ablation_keeps_the_clusters_and_labels_none_high_or_medium(
    rift_home: Path, grouping: str
) -> None:
    ws = Workspace(rift_home)
    full = run_rift(ws, open_store(ws), RiftConfig(grouping=grouping))  # type: ignore[arg-type]
    ablation = run_rift(ws, open_store(ws), RiftConfig(grouping=grouping, use_margin=False))  # type: ignore[arg-type]
    assert sorted(map(str, (c.members for c in ablation.clusters))) == sorted(
        map(str, (c.members for c in full.clusters))
    )
    assert all(c.margin_min is None and c.queries is None for c in ablation.clusters)
    # the paper's Table 5: without margins there is no HIGH or MEDIUM label to report
    assert {c.risk for c in ablation.clusters} == {"LOW"}
    assert ablation.summary.high == ablation.summary.medium == 0
    assert not ablation.fails("medium")


def test_baselines_group_without_margins(rift_home: Path) -> None:
    ws = Workspace(rift_home)
    cosine = run_rift(ws, open_store(ws), RiftConfig(method="cosine"))
    jaccard = run_rift(ws, open_store(ws), RiftConfig(method="jaccard"))
    rift = run_rift(ws, open_store(ws), COSINE)
    # threshold components contain every average-linkage cluster
    comps = [set(map(tuple, c.members)) for c in cosine.clusters]
    for c in rift.clusters:
        assert any(set(map(tuple, c.members)) <= comp for comp in comps)
    assert all(c.margin_min is None for c in cosine.clusters + jaccard.clusters)
    assert all(c.jaccard is not None and c.jaccard > 0 for c in jaccard.clusters)


def test_cli_json_has_the_documented_shape_and_fails_on_high(rift_home: Path) -> None:
    # at the paper's HIGH constant the read_file alias cluster (margin about 0.03) is HIGH
    result = cli(rift_home, "rift", "--json", "--high", "0.1")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert set(data["summary"]) >= SUMMARY_KEYS
    assert data["summary"]["high"] >= 1
    for cluster in data["clusters"]:
        assert set(cluster) >= CLUSTER_KEYS
        assert all(isinstance(m, list) and len(m) == 2 for m in cluster["members"])
        assert set(cluster["distinct_tokens"]) == set(cluster["queries"])
        if cluster["diagnosis"] == REGENERATE:
            assert any(not v for v in cluster["distinct_tokens"].values())
    s = data["summary"]
    assert s["high"] + s["medium"] + s["low"] == s["clusters"] == len(data["clusters"])
    assert s["within_server"] + s["cross_server"] == s["clusters"]
    assert s["tools_in_clusters"] == sum(len(c["members"]) for c in data["clusters"])


def test_cli_exit_codes_follow_fail_on(rift_home: Path) -> None:
    assert cli(rift_home, "rift", "--fail-on", "never").exit_code == 0
    assert cli(rift_home, "rift", "--fail-on", "medium").exit_code == 1
    # a theta so strict that no cosine cluster forms passes even the strictest gate
    strict = ("rift", "--grouping", "cosine", "--theta", "0.999", "--fail-on", "medium")
    assert cli(rift_home, *strict).exit_code == 0
    assert cli(rift_home, "rift", "--grouping", "nope").exit_code == 2
    assert cli(rift_home, "rift", "--method", "nope").exit_code == 2
    assert cli(rift_home, "rift", "--theta", "1.5").exit_code == 2
    assert cli(rift_home, "rift", "--high", "0.3", "--medium", "0.2").exit_code == 2


def test_cli_table_names_the_grouping_it_used(rift_home: Path) -> None:
    table = " ".join(cli(rift_home, "rift", "--fail-on", "never").stdout.split())
    assert "Rift (confusion grouping):" in table
    table = " ".join(
        cli(rift_home, "rift", "--grouping", "cosine", "--fail-on", "never").stdout.split()
    )
    assert "Rift (cosine grouping):" in table


def test_a_workspace_without_cards_is_a_setup_error_not_a_finding(tmp_path: Path) -> None:
    result = cli(tmp_path / "empty", "rift", "--json")
    assert result.exit_code == 2
    assert "no card verifies" in " ".join(result.stderr.split())


def test_cli_baseline_and_ablation_flags_change_the_report(rift_home: Path) -> None:
    result = cli(rift_home, "rift", "--json", "--no-margin")
    assert result.exit_code == 0  # nothing is HIGH without margins
    data = json.loads(result.stdout)
    assert data["config"]["margin"] is False
    assert all(c["margin_min"] is None and c["risk"] == "LOW" for c in data["clusters"])
    data = json.loads(cli(rift_home, "rift", "--json", "--margin-score", "cosine").stdout)
    assert data["config"]["margin_score"] == "cosine"
    data = json.loads(cli(rift_home, "rift", "--json", "--method", "jaccard").stdout)
    assert data["config"]["method"] == "jaccard"
    data = json.loads(cli(rift_home, "rift", "--json", "--fail-on", "never").stdout)
    assert data["config"]["grouping"] == "confusion"
    assert (data["config"]["margin_high"], data["config"]["margin_medium"]) == (0.0, 0.2)
    argv = ("rift", "--json", "--grouping", "cosine", "--high", "0.05", "--fail-on", "never")
    data = json.loads(cli(rift_home, *argv).stdout)
    assert data["config"]["grouping"] == "cosine"
    assert (data["config"]["margin_high"], data["config"]["margin_medium"]) == (0.05, 0.2)


class _Checker(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.external: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href") and value:
                self.external.append(value)


def test_cli_html_is_one_self_contained_page_with_two_pictures(
    rift_home: Path, tmp_path: Path
) -> None:
    out = tmp_path / "rift.html"
    result = cli(rift_home, "rift", "--html", str(out), "--fail-on", "never")
    assert result.exit_code == 0
    text = out.read_text(encoding="utf-8")
    checker = _Checker()
    checker.feed(text)
    assert "script" not in checker.tags and "link" not in checker.tags
    assert checker.external == []
    assert checker.tags.count("svg") == 2
    assert "read_text_file" in text and "Per-tool margin" in text and "Cluster sizes" in text
    assert "grouping=confusion" in text  # the page says which layer 1 made its groups


def test_regenerate_rewrites_flagged_tools_with_contrast_and_resigns(
    rift_home_copy: Path,
) -> None:
    ws = Workspace(rift_home_copy)
    before_cards = load_verified(ws).cards
    paper_high = RiftConfig(margin_thresholds=MarginThresholds(0.10, 0.20))
    result = regenerate(ws, open_store(ws), paper_high)
    flagged = flagged_tools(result.before)
    assert flagged, "at HIGH < 0.10 this workspace has HIGH clusters (e.g. the git diff tools)"
    assert result.after is not None and not result.failed
    loaded = load_verified(ws)
    assert not loaded.failures  # every rewritten card is signed by the workspace key
    rewritten = {(s, t) for s, ts in result.rewritten.items() for t in ts}
    assert rewritten and rewritten <= set(flagged)
    for server, tool in rewritten:
        old = before_cards[server].tool(tool)
        new = loaded.cards[server].tool(tool)
        assert old is not None and new is not None
        assert new.summary.startswith(old.summary) and len(new.summary) > len(old.summary)
    # the index was rebuilt over the new cards
    assert open_index(ws).card_set_digest == card_set_digest(loaded.cards)
    assert result.to_json()["after"] is not None
