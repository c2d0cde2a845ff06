"""Grading a Rift report against observed confusions: does HIGH mean an agent picks wrong?

An *observed confusion* is a task whose top-1 tool under discover is none of the tools the task
accepts (``relevant``, and any ``acceptable`` substitutes): the wrong tool and the task's relevant
tools. A confusion is *inside* a grade when the wrong tool shares a cluster of that grade with one
of the relevant tools. Recall = confusions inside a HIGH or MEDIUM cluster / confusions;
precision is read from the HIGH clusters that hold none. Pure functions over the report and the
confusions (the benchmark ``benchmarks/rift_tune.py`` runs discover to find them).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from cartograph.rift.report import RiftReport

ToolId = tuple[str, str]


@dataclass(frozen=True)
class Confusion:
    """One task's top-1 mistake: the tool discover ranked first, and the tools it should have."""

    wrong: ToolId
    relevant: frozenset[ToolId]


def confusions(
    tasks: Iterable[tuple[Sequence[ToolId], Sequence[ToolId]]], top1: Iterable[ToolId]
) -> list[Confusion]:
    """Confusions of ``tasks`` (``(relevant, acceptable)`` each) given discover's top-1s."""
    out = []
    for (relevant, acceptable), best in zip(tasks, top1, strict=True):
        ok = {*map(tuple, relevant), *map(tuple, acceptable)}
        if relevant and tuple(best) not in ok:
            out.append(Confusion(tuple(best), frozenset(map(tuple, relevant))))  # type: ignore[arg-type]
    return out


class ConfusionGrade(BaseModel):
    model_config = ConfigDict(frozen=True)

    confusions: int
    inside_high_medium: int
    inside_high: int
    inside_any: int
    high_clusters: int
    high_with_confusion: int

    @property
    def recall(self) -> float:
        """Share of the confusions inside a HIGH or MEDIUM cluster."""
        return self.inside_high_medium / self.confusions if self.confusions else 0.0

    @property
    def high_without_confusion(self) -> int:
        return self.high_clusters - self.high_with_confusion


def grade(report: RiftReport, observed: Sequence[Confusion]) -> ConfusionGrade:
    """Where ``observed`` confusions fall among ``report``'s clusters (module docstring)."""
    cluster_of: dict[ToolId, set[int]] = {}
    for k, c in enumerate(report.clusters):
        for member in c.members:
            cluster_of.setdefault((member[0], member[1]), set()).add(k)
    risk = [c.risk for c in report.clusters]
    inside_hm = inside_high = inside_any = 0
    high_hit: set[int] = set()
    for conf in observed:
        shared = cluster_of.get(conf.wrong, set()) & {
            k for r in conf.relevant for k in cluster_of.get(r, set())
        }
        inside_any += bool(shared)
        inside_hm += any(risk[k] in ("HIGH", "MEDIUM") for k in shared)
        inside_high += any(risk[k] == "HIGH" for k in shared)
        high_hit |= {k for k in shared if risk[k] == "HIGH"}
    return ConfusionGrade(
        confusions=len(observed),
        inside_high_medium=inside_hm,
        inside_high=inside_high,
        inside_any=inside_any,
        high_clusters=risk.count("HIGH"),
        high_with_confusion=len(high_hit),
    )
