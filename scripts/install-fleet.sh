#!/usr/bin/env bash
# Install the example fleet of examples/mcp.json into .fleet/ at the repository root.
#
#   scripts/install-fleet.sh            # idempotent: skips what is installed with the right lock
#   FLEET_DIR=/tmp/f scripts/install-fleet.sh
#
# What it builds (nothing goes into the project venv):
#   .fleet/npm/              one npm prefix: filesystem, memory, everything, sequential-thinking
#                            (examples/fleet/npm/package.json + package-lock.json, `npm ci`)
#   .fleet/py/<server>/      one venv per Python server: fetch, git, sqlite, time
#                            (examples/fleet/py/<server>.txt, `uv pip sync`)
#   .fleet/data/             what the servers work on: fs/ (filesystem's allowed directory),
#                            repo/ (a git repository), test.db (sqlite), memory.jsonl
#   .fleet/home/<server>/    a private $HOME per server (the config points HOME there)
# Each part records the sha256 of its lock file in .lock-sha256 once it installed cleanly; a part
# whose recorded hash matches is skipped. Needs: node + npm, python3.11 (or PY311=...), uv (the
# project venv's, else one on PATH). Concurrent runs serialise on .fleet/.install.lock.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FLEET=${FLEET_DIR:-$REPO/.fleet}
LOCKS=$REPO/examples/fleet
PY311=${PY311:-$(command -v python3.11 || command -v python3)}
UV=${UV:-}
if [ -z "$UV" ]; then
  if [ -x "$REPO/.venv/bin/uv" ]; then UV=$REPO/.venv/bin/uv; else UV=$(command -v uv || true); fi
fi
[ -n "$UV" ] || { echo "install-fleet: uv not found (set UV=/path/to/uv)" >&2; exit 2; }
command -v npm >/dev/null || { echo "install-fleet: npm not found on PATH" >&2; exit 2; }

mkdir -p "$FLEET"/{npm,py,data,home,logs}
exec 9>"$FLEET/.install.lock"
flock 9

T0=$(date +%s.%N)
sha() { sha256sum "$1" | cut -d' ' -f1; }
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }

install_npm() {
  local dir=$FLEET/npm want have s
  want=$(sha "$LOCKS/npm/package-lock.json")
  have=$(cat "$dir/.lock-sha256" 2>/dev/null || true)
  if [ "$want" = "$have" ] && [ -d "$dir/node_modules" ]; then
    echo "npm: up to date"; return 0
  fi
  s=$(date +%s.%N)
  rm -f "$dir/.lock-sha256"
  cp "$LOCKS/npm/package.json" "$LOCKS/npm/package-lock.json" "$dir/"
  if ! npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >"$FLEET/logs/npm.log" 2>&1; then
    echo "npm: FAILED, see $FLEET/logs/npm.log" >&2; return 1
  fi
  echo "$want" >"$dir/.lock-sha256"
  echo "npm: installed in $(elapsed "$s")s"
}

install_py() {
  local slug=$1 dir=$FLEET/py/$1 lock=$LOCKS/py/$1.txt want have s
  want=$(sha "$lock")
  have=$(cat "$dir/.lock-sha256" 2>/dev/null || true)
  if [ "$want" = "$have" ] && [ -x "$dir/bin/python" ]; then
    echo "py $slug: up to date"; return 0
  fi
  s=$(date +%s.%N)
  rm -rf "$dir"
  if ! { "$UV" venv -q --python "$PY311" "$dir" &&
         "$UV" pip sync -q --python "$dir/bin/python" "$lock"; } >"$FLEET/logs/py-$slug.log" 2>&1; then
    echo "py $slug: FAILED, see $FLEET/logs/py-$slug.log" >&2; return 1
  fi
  echo "$want" >"$dir/.lock-sha256"
  echo "py $slug: installed in $(elapsed "$s")s"
}

prepare_data() {
  local d=$FLEET/data
  mkdir -p "$d/fs"
  [ -f "$d/fs/hello.txt" ] || echo "hello from the cartograph example fleet" >"$d/fs/hello.txt"
  [ -f "$d/fs/README.md" ] || printf '# Example files\n\nWhat the filesystem server serves.\n' >"$d/fs/README.md"
  if [ ! -d "$d/repo/.git" ]; then
    rm -rf "$d/repo"; mkdir -p "$d/repo"
    (cd "$d/repo" && git init -q && echo "# demo repository" >README.md && git add README.md &&
     git -c user.email=fleet@example.invalid -c user.name=fleet commit -qm "initial commit")
  fi
  "$PY311" - "$d/test.db" <<'EOF'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
con.execute("create table if not exists notes(id integer primary key, body text)")
if con.execute("select count(*) from notes").fetchone()[0] == 0:
    con.execute("insert into notes(body) values ('first note')")
con.commit()
EOF
  touch "$d/memory.jsonl"
  local name
  for name in filesystem memory everything sequential-thinking fetch git sqlite time; do
    mkdir -p "$FLEET/home/$name"
  done
}

pids=()
install_npm & pids+=($!)
for lock in "$LOCKS"/py/*.txt; do
  install_py "$(basename "$lock" .txt)" & pids+=($!)
done
rc=0
for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
prepare_data
echo "fleet in $FLEET ready in $(elapsed "$T0")s (rc=$rc)"
exit $rc
