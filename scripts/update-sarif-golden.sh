#!/usr/bin/env bash
# Regenerate the golden SARIF files, one per example folder (the folder's rule only) and one for
# the Helm example, that tests/test_sarif.py compares byte for byte. Run it after changing a
# policy, an example or the SARIF output, and review the diff: `bash scripts/update-sarif-golden.sh
# && git diff tests/golden`. scripts/regenerate.sh rewrites these and every other generated file.
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" scripts/regenerate.py sarif
