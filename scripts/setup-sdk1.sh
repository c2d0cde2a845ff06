#!/usr/bin/env bash
# The 2025-era MCP SDK (mcp 1.30.0, tests/sdk1.lock) in .sdk1-venv, idempotently. Tests use it
# for a 2025-era client (SDK 1.x ClientSession) and to run our own test upstreams, which are
# written against SDK 1.x; the project itself runs on SDK 2 (.venv). Needs .venv (setup.sh).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}
stamp=.sdk1-venv/.cartograph-lock
want=$(sha256sum tests/sdk1.lock | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "==> .sdk1-venv is up to date" >&2
  exit 0
fi
echo "==> installing the 2025-era SDK (tests/sdk1.lock) into .sdk1-venv" >&2
[ -x .sdk1-venv/bin/python ] || "$PYTHON" -m venv .sdk1-venv
.venv/bin/uv pip install -q --python .sdk1-venv/bin/python -r tests/sdk1.lock
echo "$want" > "$stamp"
