#!/usr/bin/env bash
# Set up (scripts/setup.sh) and run the whole test suite. Extra arguments go to pytest.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
bash scripts/setup.sh
exec .venv/bin/pytest "$@"
