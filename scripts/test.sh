#!/usr/bin/env bash
# The README's test command: install the package with its test dependencies, then run pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --quiet --disable-pip-version-check -e '.[test]'
python3 -m pytest -q "$@"
