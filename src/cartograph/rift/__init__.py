"""Rift: find tools whose cards are too close to tell apart, and fail CI when they are.

Layer 1 (:mod:`.cluster`) groups tools by cosine distance, layer 2 (:mod:`.queries`,
:mod:`.margin`) scores how far each tool's own synthetic query ranks it ahead of its cluster
mates, layer 3 (:mod:`.diagnose`) says which wording is shared and what to make explicit.
:mod:`.substitutes` sets apart tools of different servers that do the same job,
:mod:`.grading` checks a report against observed confusions, :mod:`.baselines` holds the
paper's comparison methods, :mod:`.analyze` runs a method end to end, :mod:`.report` is the JSON
shape, :mod:`.html` draws the self-contained HTML page and :mod:`.workspace` connects all of it
to a workspace's verified cards and index.
"""

from __future__ import annotations

from cartograph.rift.analyze import METHODS, RiftConfig, RiftTool, analyze
from cartograph.rift.cluster import Cluster, agglomerative_clusters, threshold_groups
from cartograph.rift.diagnose import REGENERATE, diagnose, tokens
from cartograph.rift.flagged import flagged_tools
from cartograph.rift.margin import CohesionThresholds, MarginThresholds, Risk
from cartograph.rift.queries import synthetic_query
from cartograph.rift.report import ClusterReport, RiftReport, Summary

__all__ = [
    "METHODS",
    "REGENERATE",
    "Cluster",
    "ClusterReport",
    "CohesionThresholds",
    "MarginThresholds",
    "RiftConfig",
    "RiftReport",
    "RiftTool",
    "Risk",
    "Summary",
    "agglomerative_clusters",
    "analyze",
    "diagnose",
    "flagged_tools",
    "synthetic_query",
    "threshold_groups",
    "tokens",
]
