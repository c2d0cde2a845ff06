"""Abstention: when nothing behind the proxy plausibly fits a task, discover says so.

The ranking always has a first tool; an agent given five tools for "book a table for two at
eight" picks one of them. Discover abstains when the best dense cosine among the tools it
returns is below a threshold calibrated for the embedding model: it still answers with the
nearest tools (the agent may know better), each marked ``weak``, and a note that names the
best cosine and the threshold.

The thresholds are chosen by ``benchmarks/abstain.py`` on the tune part of tasks that no tool
of the fleet catalog can do (``benchmarks/queries/impossible.jsonl``) against the fleet dev set
and the tune parts of the public sets; its test parts report false abstentions and false
answers (docs/benchmarks.md). A model without a calibrated threshold never abstains.
``$CARTOGRAPH_ABSTAIN`` sets a threshold (a cosine) or turns abstention off (``off``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from cartograph.errors import ConfigError
from cartograph.index.answer import Hit
from cartograph.index.names import calibration_id

ENV = "CARTOGRAPH_ABSTAIN"

THRESHOLDS: dict[str, float] = {
    # benchmarks/abstain.py, 2026-12-07, k = 5, int8 weight products (0.2249 on float ones,
    # which share it; 0.208 before the action channel): the highest cosine at which no real
    # tune set loses more than 2 % of its tasks (MetaTool's tune part binds)
    "sentence-transformers/all-MiniLM-L6-v2": 0.2268,
    # the same rule for the trained encoder (selectable), 2026-12-07, with the fitted fusion it
    # now shares, int8 weight products (0.252 on float ones; 0.291 with its hand-set weights of
    # 2026-12-03): real test tasks abstained 0.1-2.1 %, impossible test tasks 22.0 %
    "cartograph/minilm-tools@c3a19581ca9e": 0.2550,
}
"""Calibrated best-cosine thresholds by embedding model id (benchmarks/abstain.py)."""


def threshold_for(model: str | None) -> float | None:
    """The cosine below which discover abstains for ``model``; None: it never does."""
    raw = os.environ.get(ENV, "").strip()
    if raw.lower() == "off":
        return None
    if raw:
        try:
            return float(raw)
        except ValueError:
            raise ConfigError(
                f"${ENV} must be a cosine such as 0.3, or off; got {raw!r}", field=ENV
            ) from None
    return THRESHOLDS.get(calibration_id(model))


def best_cosine(hits: Iterable[Hit]) -> float | None:
    found = [h.cosine for h in hits if h.cosine is not None]
    return max(found) if found else None


def judge(hits: Iterable[Hit], model: str | None) -> str | None:
    """The abstention note when nothing in ``hits`` plausibly fits a task, else None."""
    threshold = threshold_for(model)
    best = best_cosine(hits)
    if threshold is None or best is None or best >= threshold:
        return None
    return abstention_note(best, threshold)


def abstention_note(best: float, threshold: float) -> str:
    return (
        f"nothing here plausibly fits this task (best match {best:.2f}, below {threshold:.2f}): "
        "the tools below are only the nearest, marked weak; rephrase the task, or check "
        "status for what this proxy federates"
    )
