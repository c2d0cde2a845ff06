"""Prometheus metrics without a global registry: counters and histograms, and the text format.

Each proxy owns its instruments (:class:`Counter`, :class:`Histogram`), so two proxies in one
process (tests, replicas) never share a count. :func:`render` writes the Prometheus text
exposition format 0.0.4 (``# HELP``, ``# TYPE``, one sample a line, label values escaped) for
those instruments and for :class:`Family` values computed at scrape time (gauges read from the
gateway and the card catalog). ``keep`` filters samples by their labels, so a client restricted
by policy sees only the servers it may see. Thread-safe: discover ranks in worker threads.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["counter", "gauge", "histogram"]
Labels = tuple[tuple[str, str], ...]
Keep = Callable[[Mapping[str, str]], bool]
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Seconds: from a pooled call's few milliseconds to a slow upstream's ten seconds."""


def _labels(names: tuple[str, ...], values: Mapping[str, str]) -> Labels:
    if set(values) != set(names):
        raise ValueError(f"labels {sorted(values)} given, {sorted(names)} expected")
    return tuple((n, str(values[n])) for n in names)


@dataclass
class Counter:
    name: str
    help: str
    labelnames: tuple[str, ...] = ()
    _values: dict[Labels, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if not self.labelnames:
            self._values[()] = 0.0  # one series from the start: a scrape shows 0, not nothing

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        key = _labels(self.labelnames, labels)
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount

    def value(self, **labels: str) -> float:
        return self._values.get(_labels(self.labelnames, labels), 0.0)

    def lines(self, keep: Keep) -> list[str]:
        with self._lock:
            items = sorted(self._values.items())
        out = _head(self.name, "counter", self.help)
        out += [_sample(self.name, key, v) for key, v in items if keep(dict(key))]
        return out


@dataclass
class Histogram:
    name: str
    help: str
    labelnames: tuple[str, ...] = ()
    buckets: tuple[float, ...] = LATENCY_BUCKETS
    _series: dict[Labels, list[float]] = field(default_factory=dict)
    """Per label set: one count per bucket (not cumulative), then +Inf's count, then the sum."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def observe(self, value: float, **labels: str) -> None:
        key = _labels(self.labelnames, labels)
        slot = next((k for k, b in enumerate(self.buckets) if value <= b), len(self.buckets))
        with self._lock:
            series = self._series.setdefault(key, [0.0] * (len(self.buckets) + 2))
            series[slot] += 1
            series[-1] += value

    def count(self, **labels: str) -> int:
        series = self._series.get(_labels(self.labelnames, labels))
        return int(sum(series[:-1])) if series else 0

    def lines(self, keep: Keep) -> list[str]:
        with self._lock:
            items = sorted((k, list(v)) for k, v in self._series.items())
        out = _head(self.name, "histogram", self.help)
        for key, series in items:
            if not keep(dict(key)):
                continue
            running = 0.0
            for bound, n in zip((*self.buckets, math.inf), series[:-1], strict=True):
                running += n
                le = (
                    "+Inf" if math.isinf(bound) else repr(float(bound))
                )  # "1.0", as clients write it
                out.append(_sample(f"{self.name}_bucket", (*key, ("le", le)), running))
            out.append(_sample(f"{self.name}_sum", key, series[-1]))
            out.append(_sample(f"{self.name}_count", key, running))
        return out


@dataclass(frozen=True)
class Family:
    """Samples computed at scrape time (``samples``: labels -> value)."""

    name: str
    kind: Kind
    help: str
    samples: Sequence[tuple[dict[str, str], float]]

    def lines(self, keep: Keep) -> list[str]:
        out = _head(self.name, self.kind, self.help)
        for labels, value in self.samples:
            if keep(labels):
                out.append(_sample(self.name, tuple(sorted(labels.items())), value))
        return out


def render(items: Iterable[Counter | Histogram | Family], keep: Keep | None = None) -> str:
    """The exposition text of ``items`` (only the samples ``keep`` accepts)."""
    accept: Keep = keep or (lambda _: True)
    lines = [line for item in items for line in item.lines(accept)]
    return "\n".join(lines) + "\n"


def _head(name: str, kind: Kind, help_text: str) -> list[str]:
    escaped = help_text.replace("\\", "\\\\").replace("\n", "\\n")
    return [f"# HELP {name} {escaped}", f"# TYPE {name} {kind}"]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value)) if value != int(value) else f"{int(value)}"


def _sample(name: str, labels: Labels, value: float) -> str:
    body = ",".join(f'{k}="{_escape(v)}"' for k, v in labels)
    return f"{name}{{{body}}} {_number(value)}" if body else f"{name} {_number(value)}"
