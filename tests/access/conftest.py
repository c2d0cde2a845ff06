"""Fixtures for access-control tests (see accesskit)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from accesskit import env, golden_home, served

__all__ = ["env", "golden_home", "served"]
