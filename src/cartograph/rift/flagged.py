"""Which tools ``rift --regenerate`` rewrites, read from a finished report: in every HIGH
cluster, the members an agent is likely to confuse, each with the mates to contrast it against,
and the rivals that beat them.
"""

from __future__ import annotations

from cartograph.rift.report import ClusterReport, RiftReport, member_labels


def flagged_tools(report: RiftReport) -> dict[tuple[str, str], list[str]]:
    """The tools ``--regenerate`` rewrites, each with the tools to contrast it against.

    In every HIGH cluster: each member whose own margin is below the HIGH threshold (its query
    ranks a mate close to or above it), with all its mates, and each member diagnosed
    REGENERATE (no word of its own). The mate that beat a low-margin member (its ``rival``)
    is rewritten too, contrasted with that member: a card whose words all belong to its rival
    as well (``get_lineage`` against ``get_lineage_dev``) has nothing of its own to add, and
    what tells the two apart is the rival's extra word, said in the rival's card (fleet: HIGH
    78 -> 59 after the rewrite, against 78 -> 67 rewriting the low members alone;
    docs/rift.md). Names are ``server/tool``, on any server, without substitutes.
    """
    high = float(report.config.get("margin_high", 0.10))
    out: dict[tuple[str, str], list[str]] = {}
    for cluster in report.clusters:
        if cluster.risk == "HIGH":
            _flag_cluster(cluster, high, out)
    return {tool: list(dict.fromkeys(mates)) for tool, mates in out.items()}


def _flag_cluster(
    cluster: ClusterReport, high: float, out: dict[tuple[str, str], list[str]]
) -> None:
    labels = member_labels(cluster.members)
    by_label = dict(zip(labels, cluster.members, strict=True))
    subs = {frozenset(p) for p in cluster.substitutes}
    for label, (server, tool) in by_label.items():
        margin = (cluster.margins or {}).get(label)
        low = margin is not None and margin < high
        if not (low or label in cluster.regenerate):
            continue
        mates = [
            f"{s}/{t}"
            for other, (s, t) in by_label.items()
            if other != label and frozenset((label, other)) not in subs
        ]
        out.setdefault((server, tool), []).extend(mates)
        rival = (cluster.rivals or {}).get(label) if low else None
        if rival in by_label and frozenset((label, rival)) not in subs:
            rival_server, rival_tool = by_label[rival]
            out.setdefault((rival_server, rival_tool), []).append(f"{server}/{tool}")
