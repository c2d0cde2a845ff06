#!/usr/bin/env bash
# The main job, from a fresh clone: set up, federate the bundled example fleet of real MCP servers,
# sign its cards, and run an agent session against the proxy (discover, call, status over stdio).
# Then `.venv/bin/cartograph serve` (stdio) or `serve --transport http` serves it to your client.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
bash scripts/setup.sh
export CARTOGRAPH_HOME=${CARTOGRAPH_HOME:-$ROOT/.cartograph}
echo "==> bootstrapping examples/mcp.json into $CARTOGRAPH_HOME" >&2
.venv/bin/cartograph bootstrap --config examples/mcp.json
.venv/bin/cartograph cards verify
echo "==> an agent session against 'cartograph serve' (stdio)" >&2
.venv/bin/python examples/agent_session.py --home "$CARTOGRAPH_HOME"
cat >&2 <<EOT

Serve it to your MCP client:
  stdio:  $ROOT/.venv/bin/cartograph --home $CARTOGRAPH_HOME serve
  HTTP:   $ROOT/.venv/bin/cartograph --home $CARTOGRAPH_HOME serve --transport http --insecure-open --port 8765
Client configuration snippets: docs/clients.md
EOT
