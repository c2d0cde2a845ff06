"""Fixtures for proxy tests: a signed workspace of our chaos upstream (see proxykit)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from proxykit import env, golden_home

__all__ = ["env", "golden_home"]
