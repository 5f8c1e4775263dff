#!/usr/bin/env bash
# The README's test command: install the package with its test dependencies, then run pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'
# Microsoft's SARIF multitool validates the SARIF output (tests/test_sarif.py); its node_modules
# folder is git-ignored. Without npm those tests are skipped, and say so.
if command -v npm >/dev/null 2>&1; then
  npm ci --silent --no-audit --no-fund --prefix tools/sarif-multitool
else
  echo "scripts/test.sh: npm not found: the SARIF multitool tests will be skipped" >&2
fi
python3 -m pytest -q "$@"
