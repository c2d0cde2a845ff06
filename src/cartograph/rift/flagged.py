"""Which tools ``rift --regenerate`` rewrites, read from a finished report: in every HIGH
cluster, the members an agent is likely to confuse, each with the mates to contrast it against.
"""

from __future__ import annotations

from cartograph.rift.report import RiftReport, member_labels


def flagged_tools(report: RiftReport) -> dict[tuple[str, str], list[str]]:
    """The tools ``--regenerate`` rewrites, each with the cluster mates to contrast it against.

    In every HIGH cluster: each member whose own margin is below the HIGH threshold (its query
    ranks a mate close to or above it), and each member diagnosed REGENERATE (no word of its
    own). Mates are ``server/tool`` names, on any server, without the tool's substitutes.
    """
    high = float(report.config.get("margin_high", 0.10))
    out: dict[tuple[str, str], list[str]] = {}
    for cluster in report.clusters:
        if cluster.risk != "HIGH":
            continue
        labels = member_labels(cluster.members)
        subs = {frozenset(p) for p in cluster.substitutes}
        for (server, tool), label in zip(cluster.members, labels, strict=True):
            margin = (cluster.margins or {}).get(label)
            low = margin is not None and margin < high
            if not (low or label in cluster.regenerate):
                continue
            mates = [
                f"{s}/{t}"
                for (s, t), other in zip(cluster.members, labels, strict=True)
                if other != label and frozenset((label, other)) not in subs
            ]
            out.setdefault((server, tool), []).extend(mates)
    return out
