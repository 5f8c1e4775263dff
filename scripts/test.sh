#!/usr/bin/env bash
# The README's test command: install the package with its test and lint dependencies into a
# virtual environment (a stock distribution Python refuses a global pip install), check the
# code with ruff and mypy, then run pytest on every core (pytest-xdist), without the tests
# marked slow. Arguments go to pytest after the defaults, and pytest's last -m wins:
#   bash scripts/test.sh -m slow     only the slow end-to-end tests (.ci/run runs both sets)
#   bash scripts/test.sh -m ""       every test
#   bash scripts/test.sh -n 0 tests/test_cli.py    one file, in one process
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${KUBEGAP_VENV:-.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
PY="$VENV/bin/python"
"$PY" -m pip install --quiet --disable-pip-version-check -e '.[test,dev]'
# Microsoft's SARIF multitool validates the SARIF output (tests/test_sarif.py); its node_modules
# folder is git-ignored. Without npm those tests are skipped, and say so.
if command -v npm >/dev/null 2>&1; then
  npm ci --silent --no-audit --no-fund --prefix tools/sarif-multitool
else
  echo "scripts/test.sh: npm not found: the SARIF multitool tests will be skipped" >&2
fi
"$VENV/bin/ruff" check kubegap_lint tests bench scripts
"$VENV/bin/mypy"
PATH="$PWD/$VENV/bin:$PATH" "$PY" -m pytest -q -n auto --dist worksteal -m "not slow" "$@"
