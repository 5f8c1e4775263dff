#!/usr/bin/env bash
# Regenerate the golden SARIF files, one per example folder (the folder's rule only) and one for
# the Helm example, that
# tests/test_sarif.py compares byte for byte. Run it after changing a policy, an example or the
# SARIF output, and review the diff: `bash scripts/update-sarif-golden.sh && git diff tests/golden`.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p tests/golden/sarif
rm -f tests/golden/sarif/*.sarif
for dir in examples/KG[0-9][0-9][0-9]-*/; do
  name=$(basename "$dir")
  status=0
  PYTHONPATH=. python3 -m kubegap_lint lint --format sarif --select "${name%%-*}" --sarif-root . \
    --output "tests/golden/sarif/$name.sarif" "examples/$name" || status=$?
  if [ "$status" -gt 1 ]; then
    echo "update-sarif-golden: kubegap-lint failed on examples/$name (exit $status)" >&2
    exit "$status"
  fi
done
# The Helm example: findings on rendered output, mapped back to the chart's templates.
status=0
PYTHONPATH=. python3 -m kubegap_lint lint --format sarif --select KG201,KG303,KG501 --sarif-root . \
  --output tests/golden/sarif/helm-gpu-train.sarif examples/helm/rendered.yaml || status=$?
if [ "$status" -gt 1 ]; then
  echo "update-sarif-golden: kubegap-lint failed on examples/helm/rendered.yaml (exit $status)" >&2
  exit "$status"
fi
ls tests/golden/sarif
