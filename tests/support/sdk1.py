"""The 2025-era SDK's interpreter (.sdk1-venv, scripts/setup-sdk1.sh): it runs our own test
upstreams, written against SDK 1.x, and the SDK 1.x client the era tests connect with."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SDK1_PYTHON = REPO / ".sdk1-venv" / "bin" / "python"


def sdk1_python() -> str:
    """The path of .sdk1-venv's python; the test is skipped, saying how to fix it, if absent."""
    if not SDK1_PYTHON.exists():
        pytest.skip("the 2025-era SDK is not installed: run bash scripts/setup-sdk1.sh")
    return str(SDK1_PYTHON)
