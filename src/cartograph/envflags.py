"""On/off switches read from the environment (``CARTOGRAPH_RERANK=1``, ``CARTOGRAPH_OTEL=0``).

One spelling for every switch: ``1``, ``true``, ``yes``, ``on`` turn it on; ``0``, ``false``,
``no``, ``off`` turn it off (any case, surrounding spaces ignored); unset or empty leaves the
choice to the caller.
"""

from __future__ import annotations

import logging
import os

ON = frozenset({"1", "true", "yes", "on"})
OFF = frozenset({"0", "false", "no", "off"})


def env_flag(name: str, logger: logging.Logger | None = None) -> bool | None:
    """``$name`` as on (True), off (False) or not set (None). A value that is neither is
    treated as not set, and reported through ``logger`` when one is given."""
    raw = os.environ.get(name, "").strip().lower()
    if raw in ON:
        return True
    if raw in OFF:
        return False
    if raw and logger is not None:
        logger.warning("$%s=%r is not 1 or 0; ignored", name, raw)
    return None
