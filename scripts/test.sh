#!/usr/bin/env bash
# Install RunLens with everything its tests need, then lint, type-check and run the whole suite.
# The real-model test needs llama-cpp-python, built from source once (about 10 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."

# llama-cpp-python is built portable (no -march=native): a native build may use instructions
# that the CPU reports but a virtual machine traps on (AMX, AVX-512), which kills the model
# server on its first request. pip's own wheel cache does not know build flags, so the wheel
# is kept in a cache of its own and built only when that cache lacks it.
llama_version="0.3.36"
wheels="${RUNLENS_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/runlens/wheels}/portable"
wheel=$(ls "$wheels"/llama_cpp_python-"$llama_version"-*.whl 2>/dev/null | head -n 1 || true)
if [ -z "$wheel" ]; then
  mkdir -p "$wheels"
  CMAKE_ARGS="-DGGML_NATIVE=OFF ${CMAKE_ARGS:-}" python -m pip wheel --quiet --no-cache-dir \
    --no-deps "llama-cpp-python==$llama_version" -w "$wheels"
  wheel=$(ls "$wheels"/llama_cpp_python-"$llama_version"-*.whl | head -n 1)
fi
python -m pip install --quiet --no-deps "$wheel"

python -m pip install --quiet -e ".[test,llm-server]"
python -m ruff check src tests benchmarks scripts
python -m ruff format --check src tests benchmarks scripts
python -m mypy
set +e
python -m pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure here" >&2
  exit 1
fi
exit "$status"
