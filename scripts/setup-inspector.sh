#!/usr/bin/env bash
# The MCP Inspector CLI (tests/support/inspector/package-lock.json) in .inspector/, idempotently:
# the era tests drive `serve` with it as a third-party client. Skipped, saying so, without npm.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
if ! command -v npm >/dev/null; then
  echo "==> npm not found: the MCP Inspector tests will skip" >&2
  exit 0
fi
stamp=.inspector/.cartograph-lock
want=$(sha256sum tests/support/inspector/package-lock.json | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "==> .inspector is up to date" >&2
  exit 0
fi
echo "==> installing the MCP Inspector CLI (tests/support/inspector) into .inspector" >&2
mkdir -p .inspector
cp tests/support/inspector/package.json tests/support/inspector/package-lock.json .inspector/
(cd .inspector && npm ci --omit=dev --no-audit --no-fund --loglevel=error >&2)
echo "$want" > "$stamp"
