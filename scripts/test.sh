#!/usr/bin/env bash
# Set up (scripts/setup.sh) and run the whole test suite. Extra arguments go to pytest.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
bash scripts/setup.sh
bash scripts/setup-sdk1.sh  # the 2025-era SDK our test upstreams run on
bash scripts/setup-inspector.sh  # the MCP Inspector CLI, a third-party client for the era tests
bash scripts/setup-browser.sh  # chromium + chromedriver for the console's browser tests
exec .venv/bin/pytest "$@"
