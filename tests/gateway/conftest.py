"""Fixtures for gateway tests: the proxy test kit (tests/proxy/proxykit.py) is shared."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "proxy"))

from proxykit import env, golden_home

__all__ = ["env", "golden_home"]
