#!/usr/bin/env bash
# Rewrite every generated file that a test compares byte for byte (docs/rules.md,
# docs/workload-view.md, tests/golden/sarif/): run it after adding or changing a rule, an
# example, the workload view's types or an output format, then review `git diff`.
# The work is done by scripts/regenerate.py, with the Python on PATH (your virtual environment).
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" scripts/regenerate.py "$@"
