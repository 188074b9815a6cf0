#!/usr/bin/env bash
# Install RunLens with everything its tests need, then lint, type-check and run the whole suite.
# The real-model test builds llama-cpp-python from source the first time (about 10 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."

python -m pip install --quiet -e ".[test,llm-server]"
python -m ruff check src tests benchmarks
python -m ruff format --check src tests benchmarks
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
