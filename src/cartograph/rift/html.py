"""The Rift report as one self-contained HTML page: inline CSS and hand-drawn inline SVG.

No script, no external stylesheet, font or image: the file opens the same offline, in CI
artefacts and in mail. Two pictures (histogram of per-tool margins with the HIGH/MEDIUM
thresholds marked, histogram of cluster sizes) and a table of every cluster with its members,
queries, margins, shared and distinct tokens and diagnosis, then the substitute pairs apart.
:func:`render_html` is pure.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from html import escape

from cartograph.rift.report import ClusterReport, RiftReport

_COLORS = {"HIGH": "#c0392b", "MEDIUM": "#d68910", "LOW": "#1e8449"}

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;
background:#fafafa}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.sub{color:#666;margin-bottom:16px}
.cards{display:flex;gap:12px;flex-wrap:wrap;margin:12px 0}
.stat{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px 14px;min-width:90px}
.stat b{display:block;font-size:20px}
.figs{display:flex;gap:20px;flex-wrap:wrap}
figure{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px;margin:0}
figcaption{font-size:12px;color:#555;text-align:center}
table{border-collapse:collapse;width:100%;background:#fff}
table{table-layout:fixed}
th,td{border:1px solid #ddd;padding:5px 7px;vertical-align:top;text-align:left;
overflow-wrap:break-word}
th{background:#f0f0f0;position:sticky;top:0}
.risk{font-weight:bold;color:#fff;border-radius:4px;padding:1px 6px;font-size:12px}
.mem{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
.q{color:#555;font-size:12px}
.tok{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px;color:#444}
.neg{color:#c0392b;font-weight:bold}
"""


@dataclass(frozen=True)
class _Frame:
    """Where a chart's plot area sits in its SVG, and the value range of its x axis."""

    width: int
    height: int
    lo: float
    hi: float
    left: int = 44
    right: int = 12
    top: int = 34
    bottom: int = 40

    @property
    def pw(self) -> float:
        return self.width - self.left - self.right

    @property
    def ph(self) -> float:
        return self.height - self.top - self.bottom

    def x_of(self, v: float) -> float:
        return self.left + (v - self.lo) / (self.hi - self.lo) * self.pw


def _bin_counts(values: list[float], bins: list[float]) -> list[int]:
    counts = [0] * (len(bins) - 1)
    for v in values:
        for k in range(len(bins) - 1):
            last = k == len(bins) - 2
            if bins[k] <= v < bins[k + 1] or (last and v == bins[-1]):
                counts[k] += 1
                break
    return counts


def _axes(f: _Frame, title: str, peak: int) -> list[str]:
    """Title, both axes and the y grid with its labels."""
    base = f.top + f.ph
    parts = [
        f'<text x="{f.width / 2}" y="15" text-anchor="middle" font-size="13">'
        f"{escape(title)}</text>",
        f'<line x1="{f.left}" y1="{base}" x2="{f.left + f.pw}" y2="{base}" stroke="#333"/>',
        f'<line x1="{f.left}" y1="{f.top}" x2="{f.left}" y2="{base}" stroke="#333"/>',
    ]
    for tick in range(5):
        y = base - f.ph * tick / 4
        parts.append(
            f'<text x="{f.left - 5}" y="{y + 4:.1f}" text-anchor="end" font-size="10">'
            f"{peak * tick / 4:.0f}</text>"
        )
        parts.append(
            f'<line x1="{f.left}" y1="{y:.1f}" x2="{f.left + f.pw}" y2="{y:.1f}" stroke="#eee"/>'
        )
    return parts


def _bars(f: _Frame, bins: list[float], counts: list[int], cuts: list[float]) -> list[str]:
    """One bar per bin, coloured by the HIGH / MEDIUM / LOW zone when ``cuts`` are given."""
    peak = max(counts) or 1
    zone_colors = [_COLORS["HIGH"], _COLORS["MEDIUM"], _COLORS["LOW"]]
    parts = []
    for k, count in enumerate(counts):
        x0, x1 = f.x_of(bins[k]), f.x_of(bins[k + 1])
        h = f.ph * count / peak
        fill = zone_colors[min(sum(1 for c in cuts if bins[k] >= c), 2)] if cuts else "#4a78a8"
        parts.append(
            f'<rect x="{x0 + 1:.1f}" y="{f.top + f.ph - h:.1f}" width="{max(x1 - x0 - 2, 1):.1f}" '
            f'height="{h:.1f}" fill="{fill}" fill-opacity="0.8"><title>[{bins[k]:g}, '
            f"{bins[k + 1]:g}): {count}</title></rect>"
        )
    return parts


def _x_axis(f: _Frame, ticks: list[float], x_label: str) -> list[str]:
    parts = [
        f'<text x="{f.x_of(t):.1f}" y="{f.top + f.ph + 14}" text-anchor="middle" '
        f'font-size="10">{t:g}</text>'
        for t in ticks
    ]
    parts.append(
        f'<text x="{f.left + f.pw / 2}" y="{f.height - 6}" text-anchor="middle" font-size="11">'
        f"{escape(x_label)}</text>"
    )
    return parts


def _marks(f: _Frame, marks: list[tuple[float, str]]) -> list[str]:
    """Dashed vertical lines at the thresholds, labelled on alternating sides."""
    parts = []
    for k, (value, label) in enumerate(marks):
        if not f.lo <= value <= f.hi:
            continue
        x = f.x_of(value)
        # first label left of its line, the next right of it, so neighbours never overlap
        anchor, dx = ("end", -3) if k % 2 == 0 else ("start", 3)
        parts.append(
            f'<line x1="{x:.1f}" y1="{f.top - 6}" x2="{x:.1f}" y2="{f.top + f.ph}" '
            'stroke="#333" stroke-dasharray="4 3"/>'
        )
        parts.append(
            f'<text x="{x + dx:.1f}" y="{f.top - 8}" font-size="10" text-anchor="{anchor}">'
            f"{escape(label)} {value:g}</text>"
        )
    return parts


def _histogram(
    values: list[float],
    *,
    bins: list[float],
    title: str,
    x_label: str,
    marks: list[tuple[float, str]] | None = None,
    ticks: list[float] | None = None,
    width: int = 460,
    height: int = 230,
) -> str:
    """An SVG bar chart of ``values`` counted into ``bins`` (edges, ascending)."""
    counts = _bin_counts(values, bins)
    frame = _Frame(width, height, bins[0], bins[-1])
    if ticks is None:
        ticks = bins[:: max(1, (len(bins) - 1) // 8)]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'role="img" aria-label="{escape(title)}">',
        *_axes(frame, title, max(counts) or 1),
        *_bars(frame, bins, counts, sorted(v for v, _ in marks or [])),
        *_x_axis(frame, ticks, x_label),
        *_marks(frame, marks or []),
        "</svg>",
    ]
    return "".join(parts)


def _margin_bins(values: list[float]) -> list[float]:
    lo = min([-0.3, *values])
    hi = max([0.5, *values])
    start = int(lo * 20 - 1) / 20
    stop = int(hi * 20 + 1) / 20
    n = max(1, round((stop - start) / 0.05))
    return [round(start + 0.05 * k, 4) for k in range(n + 1)]


def _size_bins(sizes: list[int]) -> list[float]:
    top = max([2, *sizes])
    return [float(s) - 0.5 for s in range(2, top + 2)]


def _size_ticks(sizes: list[int]) -> list[float]:
    top = max([2, *sizes])
    step = max(1, (top - 1) // 8)
    return [float(s) for s in range(2, top + 1, step)]


def _cluster_row(k: int, c: ClusterReport) -> str:
    labels = list(c.distinct_tokens)
    members = []
    for (server, tool), label in zip(c.members, labels, strict=True):
        margin = c.margins.get(label) if c.margins else None
        query = c.queries.get(label) if c.queries else None
        rival = c.rivals.get(label) if c.rivals else None
        m = ""
        if margin is not None:
            cls = ' class="neg"' if margin < 0 else ""
            m = f" <span{cls}>margin {margin:+.3f}</span>"
            if rival:
                m += f" vs {escape(rival)}"
        q = f'<div class="q">query: {escape(query)}</div>' if query else ""
        tokens = c.distinct_tokens.get(label, [])
        distinct = escape(", ".join(tokens)) if tokens else "<em>none</em>"
        members.append(
            f'<div class="mem">{escape(server)} / <b>{escape(tool)}</b>{m}</div>{q}'
            f'<div class="tok">distinct: {distinct}</div>'
        )
    margin_min = "n/a" if c.margin_min is None else f"{c.margin_min:+.3f}"
    color = _COLORS.get(c.risk, "#555")
    accepted = "" if c.gate_risk == c.risk else f"<div>accepted; open: {c.gate_risk}</div>"
    return (
        f"<tr><td>{k}</td>"
        f'<td><span class="risk" style="background:{color}">{c.risk}</span>{accepted}</td>'
        f"<td>{len(c.members)}</td><td>{c.cohesion:.3f}</td><td>{margin_min}</td>"
        f"<td>{''.join(members)}</td>"
        f'<td class="tok">{escape(", ".join(c.shared_tokens)) or "<em>none</em>"}</td>'
        f"<td>{escape(c.diagnosis)}</td></tr>"
    )


def figures(report: RiftReport) -> str:
    """The two inline SVG histograms (margins by zone, cluster sizes) of ``report``."""
    margins = [v for c in report.clusters if c.margins for v in c.margins.values() if v is not None]
    sizes = [len(c.members) for c in report.clusters]
    figs = []
    if margins:
        marks = [
            (float(value), label)
            for key, label in (("margin_high", "HIGH below"), ("margin_medium", "MEDIUM below"))
            if isinstance(value := report.config.get(key), float | int)
        ]
        score = "discover score" if report.config.get("margin_score") == "discover" else "cos"
        figs.append(
            _histogram(
                margins,
                bins=_margin_bins(margins),
                title=f"Per-tool margin ({len(margins)} tools in clusters)",
                x_label=f"margin = {score}(q, own card) - {score}(q, closest rival)",
                marks=marks,
            )
        )
    if sizes:
        figs.append(
            _histogram(
                [float(x) for x in sizes],
                bins=_size_bins(sizes),
                ticks=_size_ticks(sizes),
                title=f"Cluster sizes ({len(sizes)} clusters; largest {max(Counter(sizes))})",
                x_label="tools in the cluster",
            )
        )
    return "".join(f"<figure>{f}</figure>" for f in figs) or "<p>No clusters.</p>"


def _stats(report: RiftReport) -> str:
    s = report.summary
    stats = [
        ("clusters", s.clusters),
        ("HIGH", s.high),
        ("MEDIUM", s.medium),
        ("LOW", s.low),
        ("tools in clusters", f"{s.tools_in_clusters} / {report.tools_total}"),
        ("within one server", s.within_server),
        ("across servers", s.cross_server),
        ("substitute pairs", s.substitute_pairs),
    ]
    if s.open_high is not None:
        stats += [("HIGH open (not accepted)", s.open_high), ("MEDIUM open", s.open_medium)]
    cells = "".join(f'<div class="stat"><b>{escape(str(v))}</b>{escape(k)}</div>' for k, v in stats)
    return f'<div class="cards">{cells}</div>'


def _substitutes(report: RiftReport) -> str:
    """Substitute pairs, apart from the confusions: either tool does the job."""
    rows = [
        f'<tr><td class="mem">{escape(a)}</td><td class="mem">{escape(b)}</td>'
        f"<td>{escape(' + '.join(f'{s}/{t}' for s, t in c.members[:4]))}</td></tr>"
        for c in report.clusters
        for a, b in c.substitutes
    ]
    if not rows:
        return ""
    return (
        "<h2>Substitutes (not counted as confusions)</h2>"
        "<p>Tools on different servers that do the same job: similar arguments and close cards. "
        "Picking either is not a mistake, so they are not each other's rivals.</p>"
        "<table><thead><tr><th>tool</th><th>substitute</th><th>cluster</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )


_TABLE_HEAD = (
    '<colgroup><col style="width:3%"><col style="width:6%"><col style="width:4%">'
    '<col style="width:6%"><col style="width:6%"><col style="width:41%">'
    '<col style="width:11%"><col style="width:23%"></colgroup>'
    "<thead><tr><th>#</th><th>risk</th><th>size</th>"
    "<th>cohesion</th><th>min margin</th><th>members (query, margin, distinct tokens)</th>"
    "<th>shared tokens</th><th>diagnosis</th></tr></thead>"
)


def render_html(report: RiftReport, *, title: str = "Rift report") -> str:
    """The whole page as one string."""
    cfg = ", ".join(f"{k}={v}" for k, v in report.config.items())
    rows = "".join(_cluster_row(k, c) for k, c in enumerate(report.clusters, 1))
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>"
        f'<h1>{escape(title)}</h1><div class="sub">{escape(cfg)}</div>'
        f"{_stats(report)}"
        f'<h2>Pictures</h2><div class="figs">{figures(report)}</div>'
        f"<h2>Clusters</h2><table>{_TABLE_HEAD}<tbody>{rows}</tbody></table>"
        f"{_substitutes(report)}</body></html>\n"
    )
